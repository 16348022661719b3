/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Binomial-tree reduce. Commutative ops: tree over ranks relative to the
 * root. Non-commutative ops: tree rooted at rank 0 over the real ranks, so
 * every partial result covers a contiguous range of ranks and is combined
 * as (lower range) op (higher range); rank 0 then forwards to the root.
 * Cost: ceil(log2 p) (alpha + n beta + n gamma). Best for small messages.
 */
#include "coll/coll_internal.h"

int weft_coll_reduce_binomial_raw(weft_sched_t *s, weft_comm_t *comm, const void *mine,
                                  void *result, MPI_Count count, weft_datatype_t *dt,
                                  weft_op_t *op, int root)
{
    int         n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    int         commute = weft_op_is_commutative(op);
    int         troot   = commute ? root : 0;
    int         rel     = (rank - troot + n) % n;
    int         holder  = rank == troot;
    const void *cur     = mine; /* current partial result */
    void       *w = NULL, *t = NULL;

    for (int mask = 1; mask < n; mask <<= 1) {
        if (rel & mask) {
            WEFT_TRY(rc, weft_sched_send(s, cur, count, dt, (rel - mask + troot) % n, comm));
            break;
        }
        int src = rel | mask, from;
        if (src >= n) {
            continue;
        }
        from = (src + troot) % n;
        if (w == NULL) {
            w = holder && troot == root && result != NULL ? result : weft_sched_tmp(s, count, dt);
            if (w == NULL) {
                return MPI_ERR_NO_MEM;
            }
            if (w != mine) {
                /* first child straight into the accumulator, then
                 * w = mine op child (mine covers the lower ranks): no copy
                 * of mine, and the reduction reads it while still clean */
                WEFT_TRY(rc, weft_sched_recv(s, w, count, dt, from, comm));
                WEFT_TRY(rc, weft_sched_fence(s));
                WEFT_TRY(rc, weft_sched_reduce(s, mine, w, count, dt, op));
                cur = w;
                continue;
            }
        }
        if (t == NULL) {
            t = weft_sched_tmp(s, count, dt);
            if (t == NULL) {
                return MPI_ERR_NO_MEM;
            }
        }
        WEFT_TRY(rc, weft_sched_recv(s, t, count, dt, from, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
        if (commute) {
            WEFT_TRY(rc, weft_sched_reduce(s, t, w, count, dt, op));
        } else {
            void *x = w;
            WEFT_TRY(rc, weft_sched_reduce(s, w, t, count, dt, op));
            w = t;
            t = x;
        }
        cur = w;
    }
    if (holder && troot == root) {
        if (cur != result) {
            WEFT_TRY(rc, weft_sched_copy(s, cur, count, dt, result, count, dt));
        }
    } else if (troot != root) {
        WEFT_TRY(rc, weft_sched_fence(s));
        if (holder) {
            WEFT_TRY(rc, weft_sched_send(s, cur, count, dt, root, comm));
        } else if (rank == root) {
            WEFT_TRY(rc, weft_sched_recv(s, result, count, dt, troot, comm));
        }
    }
    return rc;
}

int weft_coll_reduce_intra_binomial(weft_sched_t *s, const weft_coll_args_t *a)
{
    if (a->count == 0) {
        return MPI_SUCCESS;
    }
    return weft_coll_reduce_binomial_raw(s, a->comm, weft_coll_mydata(a),
                                         a->comm->rank == a->root ? a->rbuf : NULL, a->count,
                                         a->dt, a->op, a->root);
}
