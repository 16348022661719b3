/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Allreduce as a binomial reduce to rank 0 followed by a binomial
 * broadcast. Any op. Cost: 2 log2 p (alpha + n beta) + log2 p n gamma.
 * Mostly a reference and a fallback.
 */
#include "coll/coll_internal.h"

int weft_coll_allreduce_intra_reduce_bcast(weft_sched_t *s, const weft_coll_args_t *a)
{
    int rc = MPI_SUCCESS;
    if (a->count == 0) {
        return MPI_SUCCESS;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, a->comm, weft_coll_mydata(a), a->rbuf, a->count,
                                               a->dt, a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    weft_coll_args_t b = *a;
    b.coll             = WEFT_COLL_BCAST;
    b.root             = 0;
    WEFT_TRY(rc, weft_coll_bcast_intra_binomial(s, &b));
    return rc;
}
