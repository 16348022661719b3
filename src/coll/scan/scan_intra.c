/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Scan and Exscan.
 *  - recursive_doubling: step k exchanges the partial reduction of the
 *    2^k-block the rank belongs to with rank ^ 2^k; the lower partner's
 *    partial is folded into the result of the higher one. Partials always
 *    cover contiguous rank ranges combined lower op higher, so
 *    non-commutative ops are exact. Cost: log2 p (alpha + n beta + 2 n gamma).
 *  - linear: the prefix travels from rank 0 to p-1. Cost: (p-1) (alpha + n beta).
 */
#include "coll/coll_internal.h"

static int rd(weft_sched_t *s, const weft_coll_args_t *a, int exclusive)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    count = a->count;
    const void  *mine  = weft_coll_mydata(a);
    void        *p = weft_sched_tmp(s, count, a->dt), *t = weft_sched_tmp(s, count, a->dt);
    int          have = !exclusive; /* rbuf holds a valid partial result */

    if (p == NULL || t == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_sched_copy(s, mine, count, a->dt, p, count, a->dt));
    if (!exclusive && a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, count, a->dt, a->rbuf, count, a->dt));
    }
    for (int mask = 1; mask < n; mask <<= 1) {
        int partner = rank ^ mask;
        if (partner >= n) {
            continue;
        }
        WEFT_TRY(rc, weft_sched_send(s, p, count, a->dt, partner, comm));
        WEFT_TRY(rc, weft_sched_recv(s, t, count, a->dt, partner, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
        if (partner < rank) {
            if (have) {
                WEFT_TRY(rc, weft_sched_reduce(s, t, a->rbuf, count, a->dt, a->op));
            } else {
                WEFT_TRY(rc, weft_sched_copy(s, t, count, a->dt, a->rbuf, count, a->dt));
                have = 1;
            }
            WEFT_TRY(rc, weft_sched_reduce(s, t, p, count, a->dt, a->op));
        } else {
            void *x = p;
            WEFT_TRY(rc, weft_sched_reduce(s, p, t, count, a->dt, a->op));
            p = t;
            t = x;
        }
    }
    return rc;
}

static int linear(weft_sched_t *s, const weft_coll_args_t *a, int exclusive)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    count = a->count;
    const void  *mine  = weft_coll_mydata(a);

    if (!exclusive) {
        if (a->sbuf != MPI_IN_PLACE) {
            WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, count, a->dt, a->rbuf, count, a->dt));
        }
        if (rank > 0) {
            void *t = weft_sched_tmp(s, count, a->dt);
            if (t == NULL) {
                return MPI_ERR_NO_MEM;
            }
            WEFT_TRY(rc, weft_sched_recv(s, t, count, a->dt, rank - 1, comm));
            WEFT_TRY(rc, weft_sched_fence(s));
            WEFT_TRY(rc, weft_sched_reduce(s, t, a->rbuf, count, a->dt, a->op));
        }
        if (rank < n - 1) {
            WEFT_TRY(rc, weft_sched_send(s, a->rbuf, count, a->dt, rank + 1, comm));
        }
        return rc;
    }
    if (rank == 0) {
        return n > 1 ? weft_sched_send(s, mine, count, a->dt, 1, comm) : MPI_SUCCESS;
    }
    void *t = weft_sched_tmp(s, count, a->dt);
    void *u = weft_sched_tmp(s, count, a->dt);
    if (t == NULL || u == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_sched_recv(s, t, count, a->dt, rank - 1, comm));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (rank < n - 1) {
        WEFT_TRY(rc, weft_sched_copy(s, mine, count, a->dt, u, count, a->dt));
        WEFT_TRY(rc, weft_sched_reduce(s, t, u, count, a->dt, a->op));
    }
    WEFT_TRY(rc, weft_sched_copy(s, t, count, a->dt, a->rbuf, count, a->dt));
    if (rank < n - 1) {
        WEFT_TRY(rc, weft_sched_send(s, u, count, a->dt, rank + 1, comm));
    }
    return rc;
}

int weft_coll_scan_intra_recursive_doubling(weft_sched_t *s, const weft_coll_args_t *a)
{
    return a->count ? rd(s, a, 0) : MPI_SUCCESS;
}

int weft_coll_scan_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return a->count ? linear(s, a, 0) : MPI_SUCCESS;
}

int weft_coll_exscan_intra_recursive_doubling(weft_sched_t *s, const weft_coll_args_t *a)
{
    return a->count ? rd(s, a, 1) : MPI_SUCCESS;
}

int weft_coll_exscan_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return a->count ? linear(s, a, 1) : MPI_SUCCESS;
}
