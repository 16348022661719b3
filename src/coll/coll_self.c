/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The `self` rows of algorithms.def (shared file): a blocking collective on
 * an intracommunicator of one rank (MPI_COMM_SELF, a one-process job) is a
 * copy of the rank's own block, or nothing. Cost: one datatype copy and no
 * schedule. Why: the general algorithms built and ran a schedule for it,
 * 0.06-0.12 us a call at np 1 against MPICH's 0.006-0.08 (gather,
 * scatter, reduce, allreduce, bcast back to back, docs/performance.md).
 * The result of a reduction over one rank is its own operand (the op is
 * not called); an exclusive scan leaves the receive buffer alone there.
 */
#include "coll/coll_internal.h"
#include "core/errors.h"

/* Copy a block of the call to its place, as if sent and received; the
 * argument checks took blocks of different sizes where they can tell, and
 * a larger send block is a truncation, as in point-to-point. */
static int copy_block(const weft_coll_args_t *a, const void *sbuf, MPI_Count scount,
                      const weft_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                      const weft_datatype_t *rdt)
{
    MPI_Count sbytes = scount * sdt->size, rbytes = rcount * rdt->size;

    if (sbytes > rbytes) {
        return weft_error(MPI_ERR_TRUNCATE, "%s: the send block (%lld bytes) is larger than the "
                                            "receive block (%lld bytes)",
                          weft_coll_names[a->coll], (long long)sbytes, (long long)rbytes);
    }
    if (sbytes > 0) {
        weft_dt_copy(sbuf, scount, sdt, rbuf, rcount, rdt);
    }
    return MPI_SUCCESS;
}

static char *at(const void *buf, MPI_Aint displ, const weft_datatype_t *dt)
{
    return (char *)buf + displ * dt->extent;
}

static int self_run(const weft_coll_args_t *a)
{
    const void            *src = a->sbuf;
    void                  *dst = a->rbuf;
    MPI_Count              scount = a->scount, rcount = a->rcount;
    const weft_datatype_t *sdt = a->sdt, *rdt = a->rdt;

    /* In place the block is already there; first, as the in-place side's
     * counts and displacements are not significant (may be NULL) */
    if (a->sbuf == MPI_IN_PLACE || a->rbuf == MPI_IN_PLACE) {
        return MPI_SUCCESS;
    }
    switch (a->coll) {
    case WEFT_COLL_GATHER:
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_ALLTOALL:
    case WEFT_COLL_SCATTER:
        break;
    case WEFT_COLL_GATHERV:
    case WEFT_COLL_ALLGATHERV:
        dst = at(a->rbuf, a->rdispls[0], a->rdt), rcount = a->rcounts[0];
        break;
    case WEFT_COLL_SCATTERV:
        src = at(a->sbuf, a->sdispls[0], a->sdt), scount = a->scounts[0];
        break;
    case WEFT_COLL_ALLTOALLV:
        src = at(a->sbuf, a->sdispls[0], a->sdt), scount = a->scounts[0];
        dst = at(a->rbuf, a->rdispls[0], a->rdt), rcount = a->rcounts[0];
        break;
    case WEFT_COLL_REDUCE:
    case WEFT_COLL_ALLREDUCE:
    case WEFT_COLL_SCAN:
        scount = rcount = a->count, sdt = rdt = a->dt;
        break;
    case WEFT_COLL_REDUCE_SCATTER:
        scount = rcount = a->rcounts[0], sdt = rdt = a->dt;
        break;
    case WEFT_COLL_REDUCE_SCATTER_BLOCK:
        scount = rcount = a->rcount, sdt = rdt = a->dt;
        break;
    case WEFT_COLL_BARRIER:
    case WEFT_COLL_BCAST:
    case WEFT_COLL_EXSCAN:
        return MPI_SUCCESS;
    default:
        return weft_error(MPI_ERR_INTERN, "%s has no one-rank form", weft_coll_names[a->coll]);
    }
    return copy_block(a, src, scount, sdt, dst, rcount, rdt);
}

#define SELF_RUN(_lcoll)                                                \
    int weft_coll_##_lcoll##_intra_self_run(const weft_coll_args_t *a) \
    {                                                                   \
        return self_run(a);                                             \
    }

SELF_RUN(barrier)
SELF_RUN(bcast)
SELF_RUN(gather)
SELF_RUN(gatherv)
SELF_RUN(scatter)
SELF_RUN(scatterv)
SELF_RUN(allgather)
SELF_RUN(allgatherv)
SELF_RUN(alltoall)
SELF_RUN(alltoallv)
SELF_RUN(reduce)
SELF_RUN(allreduce)
SELF_RUN(reduce_scatter)
SELF_RUN(reduce_scatter_block)
SELF_RUN(scan)
SELF_RUN(exscan)
