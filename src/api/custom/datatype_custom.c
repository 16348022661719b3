/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Aint_add / MPI_Aint_diff return MPI_Aint, so they are written by hand.
 * Address arithmetic on the values MPI_Get_address returns (absolute
 * addresses on this platform); usable before MPI_Init.
 */
#include <stdint.h>
#include "api/api.h"

WEFT_API MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
WEFT_API_ALIAS(MPI_Aint_add)

WEFT_API MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
WEFT_API_ALIAS(MPI_Aint_diff)
