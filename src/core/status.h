/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The private part of MPI_Status (types.md section 3 leaves MPI_internal[5]
 * to the implementation):
 *   MPI_internal[0], [1]  received byte count, 64-bit (low word in [0])
 *   MPI_internal[2]       cancelled flag
 * MPI_Get_count / MPI_Get_elements / MPI_Status_set_elements read and write
 * these; pt2pt fills them when a receive completes.
 */
#ifndef WEFT_CORE_STATUS_H
#define WEFT_CORE_STATUS_H

#include <stdint.h>
#include <mpi.h>

static inline void weft_status_set_bytes(MPI_Status *status, MPI_Count bytes)
{
    uint64_t v = (uint64_t)bytes;
    status->MPI_internal[0] = (int)(uint32_t)(v & 0xffffffffu);
    status->MPI_internal[1] = (int)(uint32_t)(v >> 32);
}

static inline MPI_Count weft_status_get_bytes(const MPI_Status *status)
{
    uint64_t lo = (uint32_t)status->MPI_internal[0];
    uint64_t hi = (uint32_t)status->MPI_internal[1];
    return (MPI_Count)(lo | (hi << 32));
}

static inline void weft_status_set_cancelled(MPI_Status *status, int flag)
{
    status->MPI_internal[2] = flag ? 1 : 0;
}

static inline int weft_status_get_cancelled(const MPI_Status *status)
{
    return status->MPI_internal[2];
}

#endif
