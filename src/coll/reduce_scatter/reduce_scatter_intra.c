/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Reduce_scatter and Reduce_scatter_block.
 *  - reduce_scatterv: binomial reduce of the whole vector to rank 0, then a
 *    linear scatterv. Any op (rank order kept by the reduce).
 *    Cost: log2 p (alpha + n beta + n gamma) + (p-1) alpha + n beta.
 *  - pairwise (commutative ops): step i sends the block owned by rank+i
 *    straight from the input and reduces the block received from rank-i.
 *    Cost: (p-1) (alpha + n/p (beta + gamma)); best for large vectors.
 * The block form runs the same builders with every count equal.
 */
#include "coll/coll_internal.h"

static int rs_scatterv(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    total = 0;
    MPI_Aint    *displs = weft_sched_alloc(s, (size_t)n * sizeof(MPI_Aint));

    if (displs == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        displs[i] = (MPI_Aint)total;
        total += counts[i];
    }
    if (total == 0) {
        return MPI_SUCCESS;
    }
    void *full = rank == 0 ? weft_sched_tmp(s, total, a->dt) : NULL;
    if (rank == 0 && full == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, comm, weft_coll_mydata(a), full, total, a->dt,
                                               a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (rank == 0) {
        for (int i = 1; i < n; i++) {
            if (counts[i] > 0) {
                WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(full, displs[i], a->dt), counts[i],
                                             a->dt, i, comm));
            }
        }
        WEFT_TRY(rc, weft_sched_copy(s, full, counts[0], a->dt, a->rbuf, counts[0], a->dt));
    } else if (counts[rank] > 0) {
        WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, counts[rank], a->dt, 0, comm));
    }
    return rc;
}

static int rs_pairwise(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Aint    *displs = weft_sched_alloc(s, (size_t)n * sizeof(MPI_Aint));
    MPI_Count    total = 0, mine = counts[rank];
    const void  *in = weft_coll_mydata(a);

    if (displs == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        displs[i] = (MPI_Aint)total;
        total += counts[i];
    }
    if (total == 0) {
        return MPI_SUCCESS;
    }
    void *acc = weft_sched_tmp(s, mine, a->dt), *t = weft_sched_tmp(s, mine, a->dt);
    if (acc == NULL || t == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_sched_copy(s, weft_coll_elem(in, displs[rank], a->dt), mine, a->dt, acc, mine,
                                 a->dt));
    for (int i = 1; i < n; i++) {
        int dst = (rank + i) % n, src = (rank - i + n) % n;
        if (counts[dst] > 0) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(in, displs[dst], a->dt), counts[dst],
                                         a->dt, dst, comm));
        }
        if (mine > 0) {
            WEFT_TRY(rc, weft_sched_recv(s, t, mine, a->dt, src, comm));
        }
        WEFT_TRY(rc, weft_sched_fence(s));
        WEFT_TRY(rc, weft_sched_reduce(s, t, acc, mine, a->dt, a->op));
    }
    WEFT_TRY(rc, weft_sched_copy(s, acc, mine, a->dt, a->rbuf, mine, a->dt));
    return rc;
}

static const MPI_Count *block_counts(weft_sched_t *s, const weft_coll_args_t *a)
{
    MPI_Count *c = weft_sched_alloc(s, (size_t)a->comm->size * sizeof(MPI_Count));
    if (c != NULL) {
        for (int i = 0; i < a->comm->size; i++) {
            c[i] = a->rcount;
        }
    }
    return c;
}

int weft_coll_reduce_scatter_intra_reduce_scatterv(weft_sched_t *s, const weft_coll_args_t *a)
{
    return rs_scatterv(s, a, a->rcounts);
}

int weft_coll_reduce_scatter_intra_pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    return rs_pairwise(s, a, a->rcounts);
}

int weft_coll_reduce_scatter_block_intra_reduce_scatterv(weft_sched_t *s,
                                                         const weft_coll_args_t *a)
{
    const MPI_Count *c = block_counts(s, a);
    return c ? rs_scatterv(s, a, c) : MPI_ERR_NO_MEM;
}

int weft_coll_reduce_scatter_block_intra_pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    const MPI_Count *c = block_counts(s, a);
    return c ? rs_pairwise(s, a, c) : MPI_ERR_NO_MEM;
}
