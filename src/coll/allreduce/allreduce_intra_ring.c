/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ring allreduce (commutative ops): p-1 reduce-scatter steps passing n/p
 * blocks to the right neighbour, then p-1 allgather steps. Any p.
 * Cost: 2 (p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma: bandwidth
 * optimal, best for large messages.
 */
#include "coll/coll_internal.h"

int weft_coll_allreduce_intra_ring(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    int          right = (rank + 1) % n, left = (rank - 1 + n) % n;
    MPI_Count    count = a->count, off, cnt, maxcnt;
    void        *w = a->rbuf, *t;

    if (count == 0) {
        return MPI_SUCCESS;
    }
    /* The first step sends from sbuf and copies into rbuf after posting
     * (a peer reading lines we have just written is ~3x slower). */
    int copy_pending = a->sbuf != MPI_IN_PLACE;
    if (n == 1) {
        if (copy_pending) {
            WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, count, a->dt, w, count, a->dt));
        }
        return rc;
    }
    weft_coll_block(count, n, 0, &off, &maxcnt);
    t = weft_sched_tmp(s, maxcnt, a->dt);
    if (t == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n - 1; i++) {
        int       sb = (rank - i + n) % n, rb = (rank - i - 1 + n) % n;
        MPI_Count soff, scnt;
        weft_coll_block(count, n, sb, &soff, &scnt);
        weft_coll_block(count, n, rb, &off, &cnt);
        if (cnt > 0) {
            WEFT_TRY(rc, weft_sched_recv(s, t, cnt, a->dt, left, comm));
        }
        if (scnt > 0) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(copy_pending ? a->sbuf : w, soff, a->dt),
                                         scnt, a->dt, right, comm));
        }
        if (copy_pending) {
            WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, count, a->dt, w, count, a->dt));
            copy_pending = 0;
        }
        WEFT_TRY(rc, weft_sched_fence(s));
        WEFT_TRY(rc, weft_sched_reduce(s, t, weft_coll_elem(w, off, a->dt), cnt, a->dt, a->op));
    }
    for (int i = 0; i < n - 1; i++) {
        int       sb = (rank + 1 - i + n) % n, rb = (rank - i + n) % n;
        MPI_Count soff, scnt;
        weft_coll_block(count, n, sb, &soff, &scnt);
        weft_coll_block(count, n, rb, &off, &cnt);
        if (scnt > 0) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(w, soff, a->dt), scnt, a->dt, right, comm));
        }
        if (cnt > 0) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(w, off, a->dt), cnt, a->dt, left, comm));
        }
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    return rc;
}
