/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ring allgather and allgatherv: step i sends block rank-i to the right
 * neighbour and receives block rank-i-1 from the left. Any p, in place.
 * Cost: (p-1) (alpha + n/p beta): bandwidth optimal, best for large blocks.
 */
#include "coll/coll_internal.h"

static int ring(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    int          right = (rank + 1) % n, left = (rank - 1 + n) % n;

#define CNT(_i) (counts ? counts[_i] : a->rcount)
#define DSP(_i) (displs ? displs[_i] : (MPI_Aint)(_i) * a->rcount)
    /* Step 0 sends my block from sbuf, and the copy into rbuf follows the
     * posted transfers: a peer reading lines we just wrote is much slower
     * (see allgather_intra_recursive_doubling.c). */
    for (int i = 0; i < n - 1; i++) {
        int sb = (rank - i + n) % n, rb = (rank - i - 1 + n) % n;
        if (CNT(rb) > 0) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, DSP(rb), a->rdt), CNT(rb),
                                         a->rdt, left, comm));
        }
        if (i == 0 && a->sbuf != MPI_IN_PLACE) {
            if (a->scount * a->sdt->size > 0) {
                WEFT_TRY(rc, weft_sched_send(s, a->sbuf, a->scount, a->sdt, right, comm));
            }
            WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt,
                                         weft_coll_elem(a->rbuf, DSP(rank), a->rdt), CNT(rank),
                                         a->rdt));
        } else if (CNT(sb) > 0) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(a->rbuf, DSP(sb), a->rdt), CNT(sb),
                                         a->rdt, right, comm));
        }
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    if (n == 1 && a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt,
                                     weft_coll_elem(a->rbuf, DSP(rank), a->rdt), CNT(rank), a->rdt));
    }
#undef CNT
#undef DSP
    return rc;
}

int weft_coll_allgather_intra_ring(weft_sched_t *s, const weft_coll_args_t *a)
{
    if (a->rcount * a->rdt->size == 0) {
        return MPI_SUCCESS;
    }
    return ring(s, a, NULL, NULL);
}

int weft_coll_allgatherv_intra_ring(weft_sched_t *s, const weft_coll_args_t *a)
{
    return ring(s, a, a->rcounts, a->rdispls);
}

/* Linear allgatherv: every block to every rank at once. */
int weft_coll_allgatherv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    void        *mine = weft_coll_elem(a->rbuf, a->rdispls[rank], a->rdt);

    if (a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt, mine, a->rcounts[rank], a->rdt));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    for (int i = 1; i < n; i++) {
        int src = (rank - i + n) % n, dst = (rank + i) % n;
        if (a->rcounts[src] > 0) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, a->rdispls[src], a->rdt),
                                         a->rcounts[src], a->rdt, src, comm));
        }
        if (a->rcounts[rank] > 0) {
            WEFT_TRY(rc, weft_sched_send(s, mine, a->rcounts[rank], a->rdt, dst, comm));
        }
    }
    return rc;
}
