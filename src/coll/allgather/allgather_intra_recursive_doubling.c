/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Recursive-doubling allgather (power-of-two sizes): step k exchanges the
 * 2^k blocks gathered so far with rank ^ 2^k. Cost: log2 p alpha +
 * (p-1)/p n beta. Best for small and medium blocks.
 */
#include "coll/coll_internal.h"

int weft_coll_allgather_intra_recursive_doubling(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    rc_ = a->rcount;

    if (a->rcount * a->rdt->size == 0) {
        return MPI_SUCCESS;
    }
    if (a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt,
                                     weft_coll_elem(a->rbuf, rank * rc_, a->rdt), rc_, a->rdt));
    }
    for (int mask = 1; mask < n; mask <<= 1) {
        int partner = rank ^ mask;
        int mine = rank & ~(mask - 1), theirs = partner & ~(mask - 1);
        WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(a->rbuf, mine * rc_, a->rdt), mask * rc_,
                                     a->rdt, partner, comm));
        WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, theirs * rc_, a->rdt), mask * rc_,
                                     a->rdt, partner, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    return rc;
}
