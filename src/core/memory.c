/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Alloc_mem / MPI_Free_mem. Ordinary page-aligned memory for now: the
 * standard allows it, and single-copy CMA already makes any memory fast for
 * intra-node transfers. (Shared-memory windows will allocate their own.)
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/errors.h"
#include "core/info.h"

int weft_alloc_mem_impl(MPI_Aint size, weft_info_t *info, void *baseptr)
{
    void *p = NULL;

    (void)info; /* no hints are acted on yet */
    if (posix_memalign(&p, 4096, size > 0 ? (size_t)size : 1) != 0) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate %lld bytes", (long long)size);
    }
    memcpy(baseptr, &p, sizeof(p)); /* baseptr is a void ** passed as void * */
    return MPI_SUCCESS;
}

int weft_free_mem_impl(void *base)
{
    free(base);
    return MPI_SUCCESS;
}
