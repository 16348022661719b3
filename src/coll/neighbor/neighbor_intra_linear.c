/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Neighborhood collectives on cartesian, graph and distributed-graph
 * communicators: one receive per in-neighbour and one send per
 * out-neighbour, all posted at once (weft_topo_neighbors gives the lists in
 * the standard's order; MPI_PROC_NULL neighbours are skipped). When a rank
 * is the same neighbour twice (periodic dimension of size 1 or 2), the
 * messages between the pair match in posting order. On a cartesian
 * communicator a peer sends in its -1 direction first, and that block must
 * land in our +1 slot: receives are posted +1 slot first in each dimension
 * (recv_slot), so the pairs match the right way round.
 */
#include "coll/coll_internal.h"
#include "core/topo.h"

static int neighbors(const weft_coll_args_t *a, int *indeg, const int **src, int *outdeg,
                     const int **dst)
{
    return weft_topo_neighbors(a->comm, indeg, src, outdeg, dst);
}

/* Slot the i-th posted receive fills (see the header comment). */
static int recv_slot(const weft_coll_args_t *a, int i)
{
    return a->comm->topo_kind == MPI_CART ? i ^ 1 : i;
}

int weft_coll_neighbor_allgather_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    int        indeg, outdeg, rc;
    const int *src, *dst;

    if ((rc = neighbors(a, &indeg, &src, &outdeg, &dst)) != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < indeg; i++) {
        if (src[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, (MPI_Count)i * a->rcount,
                                                           a->rdt),
                                         a->rcount, a->rdt, src[i], a->comm));
        }
    }
    for (int i = 0; i < outdeg; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_send(s, a->sbuf, a->scount, a->sdt, dst[i], a->comm));
        }
    }
    return rc;
}

int weft_coll_neighbor_allgatherv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    int        indeg, outdeg, rc;
    const int *src, *dst;

    if ((rc = neighbors(a, &indeg, &src, &outdeg, &dst)) != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < indeg; i++) {
        if (src[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, a->rdispls[i], a->rdt),
                                         a->rcounts[i], a->rdt, src[i], a->comm));
        }
    }
    for (int i = 0; i < outdeg; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_send(s, a->sbuf, a->scount, a->sdt, dst[i], a->comm));
        }
    }
    return rc;
}

int weft_coll_neighbor_alltoall_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    int        indeg, outdeg, rc;
    const int *src, *dst;

    if ((rc = neighbors(a, &indeg, &src, &outdeg, &dst)) != MPI_SUCCESS) {
        return rc;
    }
    for (int k = 0; k < indeg; k++) {
        int i = recv_slot(a, k);
        if (src[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, (MPI_Count)i * a->rcount,
                                                           a->rdt),
                                         a->rcount, a->rdt, src[i], a->comm));
        }
    }
    for (int i = 0; i < outdeg; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(a->sbuf, (MPI_Count)i * a->scount,
                                                           a->sdt),
                                         a->scount, a->sdt, dst[i], a->comm));
        }
    }
    return rc;
}

int weft_coll_neighbor_alltoallv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    int        indeg, outdeg, rc;
    const int *src, *dst;

    if ((rc = neighbors(a, &indeg, &src, &outdeg, &dst)) != MPI_SUCCESS) {
        return rc;
    }
    for (int k = 0; k < indeg; k++) {
        int i = recv_slot(a, k);
        if (src[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(a->rbuf, a->rdispls[i], a->rdt),
                                         a->rcounts[i], a->rdt, src[i], a->comm));
        }
    }
    for (int i = 0; i < outdeg; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(a->sbuf, a->sdispls[i], a->sdt),
                                         a->scounts[i], a->sdt, dst[i], a->comm));
        }
    }
    return rc;
}

int weft_coll_neighbor_alltoallw_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    int        indeg, outdeg, rc;
    const int *src, *dst;

    if ((rc = neighbors(a, &indeg, &src, &outdeg, &dst)) != MPI_SUCCESS) {
        return rc;
    }
    for (int k = 0; k < indeg; k++) {
        int i = recv_slot(a, k);
        if (src[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_recv(s, (char *)a->rbuf + a->rdispls[i], a->rcounts[i],
                                         a->rdts[i], src[i], a->comm));
        }
    }
    for (int i = 0; i < outdeg; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            WEFT_TRY(rc, weft_sched_send(s, (const char *)a->sbuf + a->sdispls[i], a->scounts[i],
                                         a->sdts[i], dst[i], a->comm));
        }
    }
    return rc;
}
