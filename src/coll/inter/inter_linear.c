/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intercommunicator collectives. Ranks of comm are remote ranks; local
 * phases run on comm->local_comm (an intracommunicator over the local group
 * with its own context). Rooted operations follow the standard: the root
 * passes MPI_ROOT, the rest of its group MPI_PROC_NULL, the other group the
 * root's rank. The all-to-all forms post every remote transfer at once.
 */
#include "coll/coll_internal.h"

int weft_coll_barrier_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t     *comm = a->comm, *local = comm->local_comm;
    weft_coll_args_t l    = *a;
    int              rc   = weft_sched_use(s, local);

    l.comm = local;
    WEFT_TRY(rc, weft_coll_barrier_intra_dissemination(s, &l));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (local->rank == 0) {
        WEFT_TRY(rc, weft_sched_send(s, NULL, 0, weft_coll_byte, 0, comm));
        WEFT_TRY(rc, weft_sched_recv(s, NULL, 0, weft_coll_byte, 0, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    WEFT_TRY(rc, weft_coll_barrier_intra_dissemination(s, &l));
    return rc;
}

int weft_coll_bcast_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm, *local = comm->local_comm;
    int          rc   = weft_sched_use(s, local);

    if (a->root == MPI_ROOT) {
        return weft_sched_send(s, a->rbuf, a->count, a->dt, 0, comm);
    }
    if (a->root == MPI_PROC_NULL) {
        return rc;
    }
    if (local->rank == 0) {
        WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, a->count, a->dt, a->root, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    weft_coll_args_t l = *a;
    l.comm             = local;
    l.root             = 0;
    WEFT_TRY(rc, weft_coll_bcast_intra_binomial(s, &l));
    return rc;
}

static int gather_inter(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                        const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    if (a->root == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    if (a->root != MPI_ROOT) {
        return weft_sched_send(s, a->sbuf, a->scount, a->sdt, a->root, comm);
    }
    for (int i = 0; i < comm->peer_size; i++) {
        MPI_Count c = counts ? counts[i] : a->rcount;
        MPI_Aint  d = displs ? displs[i] : (MPI_Aint)i * a->rcount;
        WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, d, a->rdt), c, a->rdt, i, comm));
    }
    return rc;
}

int weft_coll_gather_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return gather_inter(s, a, NULL, NULL);
}

int weft_coll_gatherv_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return gather_inter(s, a, a->rcounts, a->rdispls);
}

static int scatter_inter(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                         const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    if (a->root == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    if (a->root != MPI_ROOT) {
        return weft_sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root, comm);
    }
    for (int i = 0; i < comm->peer_size; i++) {
        MPI_Count c = counts ? counts[i] : a->scount;
        MPI_Aint  d = displs ? displs[i] : (MPI_Aint)i * a->scount;
        WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(a->sbuf, d, a->sdt), c, a->sdt, i, comm));
    }
    return rc;
}

int weft_coll_scatter_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return scatter_inter(s, a, NULL, NULL);
}

int weft_coll_scatterv_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return scatter_inter(s, a, a->scounts, a->sdispls);
}

static int allgather_inter(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                           const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    for (int i = 0; i < comm->peer_size; i++) {
        MPI_Count c = counts ? counts[i] : a->rcount;
        MPI_Aint  d = displs ? displs[i] : (MPI_Aint)i * a->rcount;
        WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, d, a->rdt), c, a->rdt, i, comm));
    }
    for (int i = 0; i < comm->peer_size; i++) {
        WEFT_TRY(rc, weft_sched_send(s, a->sbuf, a->scount, a->sdt, i, comm));
    }
    return rc;
}

int weft_coll_allgather_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return allgather_inter(s, a, NULL, NULL);
}

int weft_coll_allgatherv_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return allgather_inter(s, a, a->rcounts, a->rdispls);
}

static int alltoall_inter(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    for (int i = 0; i < comm->peer_size; i++) {
        void            *p;
        MPI_Count        c;
        weft_datatype_t *t = a->rdt;
        if (a->rdts) {
            p = (char *)a->rbuf + a->rdispls[i], c = a->rcounts[i], t = a->rdts[i];
        } else if (a->rcounts) {
            p = weft_coll_elem(a->rbuf, a->rdispls[i], t), c = a->rcounts[i];
        } else {
            p = weft_coll_elem(a->rbuf, (MPI_Count)i * a->rcount, t), c = a->rcount;
        }
        WEFT_TRY(rc, weft_sched_recv(s, p, c, t, i, comm));
    }
    for (int i = 0; i < comm->peer_size; i++) {
        const void      *p;
        MPI_Count        c;
        weft_datatype_t *t = a->sdt;
        if (a->sdts) {
            p = (const char *)a->sbuf + a->sdispls[i], c = a->scounts[i], t = a->sdts[i];
        } else if (a->scounts) {
            p = weft_coll_elem(a->sbuf, a->sdispls[i], t), c = a->scounts[i];
        } else {
            p = weft_coll_elem(a->sbuf, (MPI_Count)i * a->scount, t), c = a->scount;
        }
        WEFT_TRY(rc, weft_sched_send(s, p, c, t, i, comm));
    }
    return rc;
}

int weft_coll_alltoall_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return alltoall_inter(s, a);
}

int weft_coll_alltoallv_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return alltoall_inter(s, a);
}

int weft_coll_alltoallw_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return alltoall_inter(s, a);
}

int weft_coll_reduce_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm, *local = comm->local_comm;
    int          rc   = weft_sched_use(s, local);

    if (a->root == MPI_PROC_NULL || a->count == 0) {
        return rc;
    }
    if (a->root == MPI_ROOT) {
        return weft_sched_recv(s, a->rbuf, a->count, a->dt, 0, comm);
    }
    void *t = local->rank == 0 ? weft_sched_tmp(s, a->count, a->dt) : NULL;
    if (local->rank == 0 && t == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, local, a->sbuf, t, a->count, a->dt, a->op, 0));
    if (local->rank == 0) {
        WEFT_TRY(rc, weft_sched_fence(s));
        WEFT_TRY(rc, weft_sched_send(s, t, a->count, a->dt, a->root, comm));
    }
    return rc;
}

int weft_coll_allreduce_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm, *local = comm->local_comm;
    int          rc   = weft_sched_use(s, local);

    if (a->count == 0) {
        return rc;
    }
    void *t = local->rank == 0 ? weft_sched_tmp(s, a->count, a->dt) : NULL;
    if (local->rank == 0 && t == NULL) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, local, a->sbuf, t, a->count, a->dt, a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (local->rank == 0) {
        WEFT_TRY(rc, weft_sched_send(s, t, a->count, a->dt, 0, comm));
        WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, a->count, a->dt, 0, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    weft_coll_args_t l = *a;
    l.comm             = local;
    l.root             = 0;
    WEFT_TRY(rc, weft_coll_bcast_intra_binomial(s, &l));
    return rc;
}

/* Reduce_scatter(_block): per MPI-4.1 6.11.2 every member of a group gives
 * count = sum(local counts) elements (equal in both groups); each group
 * reduces to its rank 0, the leaders swap the results, and each leader
 * scatters the other group's result by the local counts. */
static int reduce_scatter_inter(weft_sched_t *s, const weft_coll_args_t *a,
                                const MPI_Count *counts)
{
    weft_comm_t *comm = a->comm, *local = comm->local_comm;
    int          rc   = weft_sched_use(s, local);
    MPI_Count    total = 0;
    MPI_Aint    *displs = weft_sched_alloc(s, (size_t)local->size * sizeof(MPI_Aint));

    if (displs == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < local->size; i++) {
        displs[i] = (MPI_Aint)total;
        total += counts[i];
    }
    if (total == 0) {
        return rc;
    }
    void *t = local->rank == 0 ? weft_sched_tmp(s, total, a->dt) : NULL;
    void *u = local->rank == 0 ? weft_sched_tmp(s, total, a->dt) : NULL;
    if (local->rank == 0 && (t == NULL || u == NULL)) {
        return MPI_ERR_NO_MEM;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, local, a->sbuf, t, total, a->dt, a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (local->rank == 0) {
        WEFT_TRY(rc, weft_sched_send(s, t, total, a->dt, 0, comm));
        WEFT_TRY(rc, weft_sched_recv(s, u, total, a->dt, 0, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    weft_coll_args_t l = *a;
    l.comm             = local;
    l.root             = 0;
    l.sbuf             = u;
    l.scounts          = counts;
    l.sdispls          = displs;
    l.rcount           = counts[local->rank];
    l.sdt              = a->dt;
    l.rdt              = a->dt;
    WEFT_TRY(rc, weft_coll_scatterv_intra_linear(s, &l));
    return rc;
}

int weft_coll_reduce_scatter_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return reduce_scatter_inter(s, a, a->rcounts);
}

int weft_coll_reduce_scatter_block_inter_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    MPI_Count *c = weft_sched_alloc(s, (size_t)a->comm->local_comm->size * sizeof(MPI_Count));

    if (c == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < a->comm->local_comm->size; i++) {
        c[i] = a->rcount;
    }
    return reduce_scatter_inter(s, a, c);
}
