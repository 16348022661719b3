/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Recursive-doubling allreduce. Non-power-of-two sizes fold the first
 * 2*rem ranks pairwise (even gives to odd, gets the result back at the
 * end). Step k exchanges the full vector with newrank ^ 2^k. Every partial
 * covers a contiguous range of ranks, combined lower op higher, so
 * non-commutative ops are exact. Cost: log2 p (alpha + n beta + n gamma).
 * Best for small messages.
 */
#include "coll/coll_internal.h"

int weft_coll_allreduce_intra_recursive_doubling(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    int          pof2 = weft_coll_pof2_floor(n), rem = n - pof2;
    int          newrank = weft_coll_newrank(rank, rem);
    int          commute = weft_op_is_commutative(a->op);
    MPI_Count    count   = a->count;
    void        *cur = a->rbuf, *other;

    if (count == 0) {
        return MPI_SUCCESS;
    }
    /* My contribution is copied into rbuf only after the first exchange is
     * posted, and that exchange sends from sbuf: the peer then reads clean
     * lines (reading lines we have just written is ~3x slower) and the
     * copy overlaps the transfer. */
    int copy_pending = a->sbuf != MPI_IN_PLACE;
#define COPY_IN()                                                                              \
    do {                                                                                       \
        if (copy_pending) {                                                                    \
            WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, count, a->dt, a->rbuf, count, a->dt));    \
            copy_pending = 0;                                                                  \
        }                                                                                      \
    } while (0)
    if (n == 1) {
        COPY_IN();
        return rc;
    }
    other = weft_sched_tmp(s, count, a->dt);
    if (other == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (rank < 2 * rem) {
        if ((rank & 1) == 0) { /* gets the whole result back into rbuf at the end */
            WEFT_TRY(rc, weft_sched_send(s, copy_pending ? a->sbuf : cur, count, a->dt, rank + 1,
                                         comm));
            copy_pending = 0;
        } else {
            WEFT_TRY(rc, weft_sched_recv(s, other, count, a->dt, rank - 1, comm));
            COPY_IN();
        }
        WEFT_TRY(rc, weft_sched_fence(s));
        if (rank & 1) {
            WEFT_TRY(rc, weft_sched_reduce(s, other, cur, count, a->dt, a->op));
        }
    }
    if (newrank >= 0) {
        for (int mask = 1; mask < pof2; mask <<= 1) {
            int partner = weft_coll_oldrank(newrank ^ mask, rem);
            WEFT_TRY(rc, weft_sched_recv(s, other, count, a->dt, partner, comm));
            WEFT_TRY(rc, weft_sched_send(s, copy_pending ? a->sbuf : cur, count, a->dt, partner,
                                         comm));
            COPY_IN();
            WEFT_TRY(rc, weft_sched_fence(s));
            if (commute || partner < rank) {
                WEFT_TRY(rc, weft_sched_reduce(s, other, cur, count, a->dt, a->op));
            } else {
                void *x = cur;
                WEFT_TRY(rc, weft_sched_reduce(s, cur, other, count, a->dt, a->op));
                cur   = other;
                other = x;
            }
        }
#undef COPY_IN
        if (cur != a->rbuf) {
            WEFT_TRY(rc, weft_sched_copy(s, cur, count, a->dt, a->rbuf, count, a->dt));
        }
    }
    if (rank < 2 * rem) {
        WEFT_TRY(rc, weft_sched_fence(s));
        if (rank & 1) {
            WEFT_TRY(rc, weft_sched_send(s, a->rbuf, count, a->dt, rank - 1, comm));
        } else {
            WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, count, a->dt, rank + 1, comm));
        }
    }
    return rc;
}
