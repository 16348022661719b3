/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Pairwise-exchange alltoall, alltoallv and alltoallw: step i sends to
 * rank+i and receives from rank-i, one exchange in flight per rank, so the
 * memory and link use stay even for large blocks. MPI_IN_PLACE copies the
 * receive buffer aside first and exchanges from the copy.
 * Cost: (p-1) (alpha + n/p beta).
 */
#include <string.h>

#include "coll/coll_internal.h"

/* One description covers the three forms: block i is (buf + disp(i),
 * count(i), type(i)). */
typedef struct {
    const void             *buf;
    MPI_Count               count;   /* plain alltoall */
    weft_datatype_t        *dt;
    const MPI_Count        *counts;  /* v and w */
    const MPI_Aint         *displs;  /* elements (v) or bytes (w) */
    weft_datatype_t *const *dts;     /* w */
} side_t;

static void *blk(const side_t *x, int i, MPI_Count *c, weft_datatype_t **t)
{
    if (x->dts) {
        *c = x->counts[i];
        *t = x->dts[i];
        return (char *)x->buf + x->displs[i];
    }
    *t = x->dt;
    if (x->counts) {
        *c = x->counts[i];
        return weft_coll_elem(x->buf, x->displs[i], x->dt);
    }
    *c = x->count;
    return weft_coll_elem(x->buf, (MPI_Count)i * x->count, x->dt);
}

static void sides(const weft_coll_args_t *a, side_t *snd, side_t *rcv)
{
    memset(snd, 0, sizeof(*snd));
    memset(rcv, 0, sizeof(*rcv));
    rcv->buf = a->rbuf, rcv->count = a->rcount, rcv->dt = a->rdt;
    rcv->counts = a->rcounts, rcv->displs = a->rdispls, rcv->dts = a->rdts;
    snd->buf = a->sbuf, snd->count = a->scount, snd->dt = a->sdt;
    snd->counts = a->scounts, snd->displs = a->sdispls, snd->dts = a->sdts;
}

/* MPI_IN_PLACE: the send side becomes a copy of the receive buffer with
 * the receive layout. */
static int inplace_copy(weft_sched_t *s, const weft_coll_args_t *a, side_t *snd,
                        const side_t *rcv)
{
    MPI_Aint lo = 0, hi = 0;
    int      any = 0;
    for (int i = 0; i < a->comm->size; i++) {
        MPI_Count        c;
        weft_datatype_t *t;
        char            *p = blk(rcv, i, &c, &t);
        if (c == 0 || t->size == 0) {
            continue;
        }
        MPI_Aint l = (MPI_Aint)(p - (char *)a->rbuf) + t->true_lb;
        MPI_Aint h = l + (MPI_Aint)(c - 1) * t->extent + t->true_extent;
        if (!any || l < lo) {
            lo = l;
        }
        if (!any || h > hi) {
            hi = h;
        }
        any = 1;
    }
    *snd = *rcv;
    if (!any) {
        return MPI_SUCCESS;
    }
    char *tmp = weft_sched_alloc(s, (size_t)(hi - lo));
    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    snd->buf = tmp - lo;
    return weft_sched_copy(s, (char *)a->rbuf + lo, hi - lo, weft_coll_byte, tmp, hi - lo,
                           weft_coll_byte);
}

static int own_block_copy(weft_sched_t *s, const side_t *snd, const side_t *rcv, int rank)
{
    MPI_Count        sc, rc2;
    weft_datatype_t *st, *rt;
    void            *rp = blk(rcv, rank, &rc2, &rt);
    const void      *sp = blk(snd, rank, &sc, &st);
    return weft_sched_copy(s, sp, sc, st, rp, rc2, rt);
}

static int pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    side_t       snd, rcv;
    MPI_Count    sc, rc2;
    weft_datatype_t *st, *rt;

    sides(a, &snd, &rcv);
    if (a->sbuf == MPI_IN_PLACE) {
        WEFT_TRY(rc, inplace_copy(s, a, &snd, &rcv));
    }
    for (int i = 1; i < n; i++) {
        int         dst = (rank + i) % n, src = (rank - i + n) % n;
        const void *sp  = blk(&snd, dst, &sc, &st);
        void       *rp  = blk(&rcv, src, &rc2, &rt);
        /* receive first: the send then sees an exchange (no cooperative copy) */
        if (rc2 * rt->size > 0 || !a->rcounts) {
            WEFT_TRY(rc, weft_sched_recv(s, rp, rc2, rt, src, comm));
        }
        if (sc * st->size > 0 || !a->scounts) {
            WEFT_TRY(rc, weft_sched_send(s, sp, sc, st, dst, comm));
        }
        if (i == 1 && a->sbuf != MPI_IN_PLACE) { /* my own block, while the first exchange runs */
            WEFT_TRY(rc, own_block_copy(s, &snd, &rcv, rank));
        }
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    if (n == 1 && a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, own_block_copy(s, &snd, &rcv, rank));
    }
    return rc;
}

/* All transfers at once (not in place). */
static int linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    side_t       snd, rcv;
    MPI_Count    sc, rc2;
    weft_datatype_t *st, *rt;

    sides(a, &snd, &rcv);
    {
        void       *rp = blk(&rcv, rank, &rc2, &rt);
        const void *sp = blk(&snd, rank, &sc, &st);
        WEFT_TRY(rc, weft_sched_copy(s, sp, sc, st, rp, rc2, rt));
    }
    for (int i = 1; i < n; i++) {
        int   src = (rank - i + n) % n;
        void *rp  = blk(&rcv, src, &rc2, &rt);
        if (rc2 * rt->size > 0 || !a->rcounts) {
            WEFT_TRY(rc, weft_sched_recv(s, rp, rc2, rt, src, comm));
        }
    }
    for (int i = 1; i < n; i++) {
        int         dst = (rank + i) % n;
        const void *sp  = blk(&snd, dst, &sc, &st);
        if (sc * st->size > 0 || !a->scounts) {
            WEFT_TRY(rc, weft_sched_send(s, sp, sc, st, dst, comm));
        }
    }
    return rc;
}

int weft_coll_alltoall_intra_pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    if (a->rcount * a->rdt->size == 0) {
        return MPI_SUCCESS;
    }
    return pairwise(s, a);
}

int weft_coll_alltoallv_intra_pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    return pairwise(s, a);
}

int weft_coll_alltoallw_intra_pairwise(weft_sched_t *s, const weft_coll_args_t *a)
{
    return pairwise(s, a);
}

int weft_coll_alltoall_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    if (a->rcount * a->rdt->size == 0) {
        return MPI_SUCCESS;
    }
    return linear(s, a);
}

int weft_coll_alltoallv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return linear(s, a);
}

int weft_coll_alltoallw_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return linear(s, a);
}
