/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The recursive-halving reduce-scatter shared by the Rabenseifner reduce
 * and allreduce (commutative ops only). Ranks beyond the largest power of
 * two p' fold in first (the first 2*rem ranks pair up, the even one gives
 * its data to the odd one and sits out). Step k pairs newranks differing in
 * bit k; the lower keeps the lower half of the current block range, sends
 * the upper half, and reduces the half it receives. After log2 p' steps each
 * newrank owns one fully reduced block of count/p' elements.
 * Cost: 2 log2 p' alpha + (p'-1)/p' n (beta + gamma) (+ n for the fold).
 */
#include "coll/coll_internal.h"

int weft_coll_rsa_reduce_scatter(weft_sched_t *s, weft_comm_t *comm, void *w, void *tmp,
                                 MPI_Count count, weft_datatype_t *dt, weft_op_t *op,
                                 weft_coll_halving_t *h)
{
    int rank = comm->rank, rc = MPI_SUCCESS;

    h->pof2    = weft_coll_pof2_floor(comm->size);
    h->rem     = comm->size - h->pof2;
    h->newrank = weft_coll_newrank(rank, h->rem);
    h->steps   = 0;
    if (rank < 2 * h->rem) {
        if ((rank & 1) == 0) {
            WEFT_TRY(rc, weft_sched_send(s, w, count, dt, rank + 1, comm));
        } else {
            WEFT_TRY(rc, weft_sched_recv(s, tmp, count, dt, rank - 1, comm));
        }
        WEFT_TRY(rc, weft_sched_fence(s));
        if (rank & 1) {
            WEFT_TRY(rc, weft_sched_reduce(s, tmp, w, count, dt, op));
        }
    }
    if (h->newrank < 0) {
        return rc;
    }
    int lo = 0, hi = h->pof2;
    for (int mask = 1; mask < h->pof2; mask <<= 1) {
        int       k       = h->steps++;
        int       partner = weft_coll_oldrank(h->newrank ^ mask, h->rem);
        int       mid     = (lo + hi) / 2;
        int       klo, khi, slo, shi;
        MPI_Count soff, scnt, koff, kcnt, e;
        if ((h->newrank & mask) == 0) {
            klo = lo, khi = mid, slo = mid, shi = hi;
        } else {
            klo = mid, khi = hi, slo = lo, shi = mid;
        }
        h->lo[k] = lo, h->hi[k] = hi, h->klo[k] = klo, h->khi[k] = khi;
        weft_coll_block(count, h->pof2, slo, &soff, &e);
        weft_coll_block(count, h->pof2, shi - 1, &e, &scnt);
        scnt = e + scnt - soff;
        weft_coll_block(count, h->pof2, klo, &koff, &e);
        weft_coll_block(count, h->pof2, khi - 1, &e, &kcnt);
        kcnt = e + kcnt - koff;
        WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(w, soff, dt), scnt, dt, partner, comm));
        WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(tmp, koff, dt), kcnt, dt, partner, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
        WEFT_TRY(rc, weft_sched_reduce(s, weft_coll_elem(tmp, koff, dt),
                                       weft_coll_elem(w, koff, dt), kcnt, dt, op));
        lo = klo, hi = khi;
    }
    return rc;
}

/* Element range of blocks [blo, bhi). */
static void range(const weft_coll_halving_t *h, MPI_Count count, int blo, int bhi, MPI_Count *off,
                  MPI_Count *cnt)
{
    MPI_Count e, c;
    weft_coll_block(count, h->pof2, blo, off, &e);
    weft_coll_block(count, h->pof2, bhi - 1, &e, &c);
    *cnt = e + c - *off;
}

/* Allgather phase of the allreduce: retrace the halving steps backwards,
 * each rank sends what it holds and receives what it gave away. */
static int rsa_allgather(weft_sched_t *s, weft_comm_t *comm, void *w, MPI_Count count,
                         weft_datatype_t *dt, const weft_coll_halving_t *h)
{
    int rc = MPI_SUCCESS;
    for (int k = h->steps - 1; k >= 0; k--) {
        int       mask    = 1 << k;
        int       partner = weft_coll_oldrank(h->newrank ^ mask, h->rem);
        MPI_Count koff, kcnt, ooff, ocnt;
        range(h, count, h->klo[k], h->khi[k], &koff, &kcnt);
        if (h->klo[k] == h->lo[k]) {
            range(h, count, h->khi[k], h->hi[k], &ooff, &ocnt);
        } else {
            range(h, count, h->lo[k], h->klo[k], &ooff, &ocnt);
        }
        WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(w, koff, dt), kcnt, dt, partner, comm));
        WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(w, ooff, dt), ocnt, dt, partner, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    return rc;
}

int weft_coll_allreduce_intra_rabenseifner(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t        *comm = a->comm;
    weft_coll_halving_t h = { 0 };
    int                 rc = MPI_SUCCESS;

    if (a->count == 0) {
        return MPI_SUCCESS;
    }
    void *tmp = weft_sched_tmp(s, a->count, a->dt);
    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (a->sbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->count, a->dt, a->rbuf, a->count, a->dt));
    }
    WEFT_TRY(rc, weft_coll_rsa_reduce_scatter(s, comm, a->rbuf, tmp, a->count, a->dt, a->op, &h));
    if (h.newrank >= 0) {
        WEFT_TRY(rc, rsa_allgather(s, comm, a->rbuf, a->count, a->dt, &h));
    }
    if (comm->rank < 2 * h.rem) {
        WEFT_TRY(rc, weft_sched_fence(s));
        if (comm->rank & 1) {
            WEFT_TRY(rc, weft_sched_send(s, a->rbuf, a->count, a->dt, comm->rank - 1, comm));
        } else {
            WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, a->count, a->dt, comm->rank + 1, comm));
        }
    }
    return rc;
}

int weft_coll_reduce_intra_rabenseifner(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t        *comm = a->comm;
    weft_coll_halving_t h = { 0 };
    int                 rc = MPI_SUCCESS;

    if (a->count == 0) {
        return MPI_SUCCESS;
    }
    int   pof2 = weft_coll_pof2_floor(comm->size), rem = comm->size - pof2;
    int   r0   = weft_coll_oldrank(0, rem); /* newrank 0 collects the result */
    void *tmp  = weft_sched_tmp(s, a->count, a->dt);
    void *w    = (comm->rank == a->root && a->root == r0) ? a->rbuf
                                                          : weft_sched_tmp(s, a->count, a->dt);
    if (tmp == NULL || w == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (weft_coll_mydata(a) != w) {
        WEFT_TRY(rc, weft_sched_copy(s, weft_coll_mydata(a), a->count, a->dt, w, a->count, a->dt));
    }
    WEFT_TRY(rc, weft_coll_rsa_reduce_scatter(s, comm, w, tmp, a->count, a->dt, a->op, &h));
    /* binomial gather to newrank 0 along the halving steps, backwards */
    if (h.newrank >= 0) {
        for (int k = h.steps - 1; k >= 0; k--) {
            int       mask    = 1 << k;
            int       partner = weft_coll_oldrank(h.newrank ^ mask, h.rem);
            MPI_Count off, cnt;
            if (h.newrank >= 2 * mask) {
                continue; /* already sent */
            }
            if (h.newrank & mask) {
                range(&h, a->count, h.klo[k], h.khi[k], &off, &cnt);
                WEFT_TRY(rc, weft_sched_send(s, weft_coll_elem(w, off, a->dt), cnt, a->dt, partner,
                                             comm));
                WEFT_TRY(rc, weft_sched_fence(s));
                break;
            }
            if (h.klo[k] == h.lo[k]) {
                range(&h, a->count, h.khi[k], h.hi[k], &off, &cnt);
            } else {
                range(&h, a->count, h.lo[k], h.klo[k], &off, &cnt);
            }
            WEFT_TRY(rc, weft_sched_recv(s, weft_coll_elem(w, off, a->dt), cnt, a->dt, partner,
                                         comm));
            WEFT_TRY(rc, weft_sched_fence(s));
        }
    }
    if (a->root != r0) {
        WEFT_TRY(rc, weft_sched_fence(s));
        if (comm->rank == r0) {
            WEFT_TRY(rc, weft_sched_send(s, w, a->count, a->dt, a->root, comm));
        } else if (comm->rank == a->root) {
            WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, a->count, a->dt, r0, comm));
        }
    }
    return rc;
}
