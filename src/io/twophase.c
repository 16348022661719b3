/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-phase collective I/O. The ranks' accessed range [lo, hi) is cut into
 * one file domain per aggregator (cb_nodes ranks, spread over the nodes),
 * with domain boundaries on the stripe unit (or the file system block). The
 * domains are processed in rounds of cb_buffer_size bytes: every rank sends
 * each aggregator the (offset, length) pieces of its data inside that
 * aggregator's window and, for writes, the data (three exchanges over the
 * communicator: counts, pieces, data). The aggregator then does one large
 * contiguous write of the window (reading it first only when the pieces
 * leave holes), or one large read whose pieces go back the same way.
 *
 * Segments of one access are in file order and their data is consecutive
 * in the stream, so the bytes a rank exchanges with one aggregator in one
 * round are one contiguous run of its buffer: no packing on the rank side.
 *
 * The transfer is a state machine (weft_io_tp_advance). Blocking calls run
 * it with blocking exchanges and file I/O in the calling thread, so it ends
 * in one advance. Non-blocking and split collectives (nbcoll.c) run it in
 * the background: each exchange is a non-blocking collective on the file's
 * private communicator and each aggregator read/write goes to the I/O worker
 * thread; the progress engine advances it when they complete.
 *
 * Writes of more than one round overlap round r's exchanges with round
 * r-1's aggregator write, in both modes: the aggregator's round data is
 * double-buffered (scratch slots 1 and 2 by round parity), and the write of
 * every round but the last goes to the I/O worker (under the file's
 * xfer_lock, as any file I/O step). It is waited for once round r's data
 * has arrived, before round r's own write (so the file sees the rounds'
 * writes in order, one at a time, and round r+1 may reuse its buffer), and
 * so before the final agreement; every way out waits for it too. A failed
 * write is seen one round later than without the overlap: later rounds
 * still exchange, skip their writes, and the final agreement fails on
 * every rank, as before.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io_internal.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/request.h"
#include "core/runtime.h"
#include "api_impl.h"

typedef struct {
    MPI_Offset off, len;
} piece_t;

/* Per-aggregator walk over this rank's segments. */
typedef struct {
    int        idx; /* current segment */
    MPI_Offset at;  /* file offset reached inside it */
} cursor_t;

typedef struct weft_io_tp tp_t;

/* One aggregator file I/O step: the round's pieces of all senders in rank
 * order, with their data in buf (writes) or to be filled (reads); the
 * aggregator's own pieces, [self_first, self_first + self_n), are not
 * exchanged: their data is the run at self_data in its own buffer. */
typedef struct {
    tp_t      *t;
    piece_t   *pieces;
    MPI_Count  n;
    char      *buf;
    MPI_Count  self_first, self_n;
    char      *self_data;
} agg_t;

/* States of a collective transfer (see weft_io_tp_advance). */
enum {
    S_START,       /* post the exchange of every rank's range and status */
    S_INFO,        /* ranges known: choose independent or two-phase */
    S_INDEP_IO,    /* independent transfer done: agree on its status */
    S_INDEP_AGREED,
    S_SETUP,       /* aggregators and buffers set up on every rank? */
    S_ROUND,       /* start round r (or the final agreement) */
    S_COUNTS,      /* piece and byte counts exchanged */
    S_ROUND_AGREED,
    S_PIECES,      /* pieces exchanged */
    S_WDATA,       /* write data at the aggregators */
    S_WPREV,       /* aggregator's write of the previous round done (overlap) */
    S_WIO,         /* aggregator wrote its window */
    S_RIO,         /* aggregator read its window */
    S_RDATA,       /* read data back at the ranks */
    S_FINAL,
    S_FINISHED
};

struct weft_io_tp {
    weft_file_t     *fh;
    weft_comm_t     *comm;
    int              bg;        /* background: exchanges non-blocking, file I/O on the worker */
    int              writing, nagg, local_rc;
    int              state, rc, io_rc, job_rc;
    weft_request_t  *req;       /* exchange in flight (bg) */
    weft_io_job_t   *job;       /* file I/O in flight (bg) */
    int              agree_in, agree_out;
    MPI_Offset       mine[4], *all;
    int              r, rounds;
    int             *agg_rank;  /* aggregator index -> rank */
    int              my_agg;    /* my aggregator index or -1 */
    MPI_Offset       lo, hi, dsize, cb;
    const weft_io_seg_t *segs;
    int              nseg;
    char            *data;
    MPI_Offset       nbytes, done;
    cursor_t        *cur;
    /* per-round exchange buffers, indexed by rank */
    MPI_Count       *cnt_send, *cnt_recv;  /* 2 per rank: pieces, bytes */
    MPI_Count       *mc_s, *mc_r, *dc_s, *dc_r;
    MPI_Aint        *md_s, *md_r, *dd_s, *dd_r;
    piece_t         *my_pieces;
    int              my_cap, my_n, round_local;
    /* this round at the aggregator: pieces received and their data */
    piece_t         *rpieces;
    char            *rdata;
    MPI_Count        npieces;
    MPI_Count        self_first, self_n; /* my own pieces among them (not exchanged) */
    char            *self_data;          /* and their data: a run of my buffer */
    agg_t            agg;      /* this round's aggregator step, run now */
    /* overlapped writes: the previous round's write, still on the worker */
    int              overlap;
    agg_t            wb;       /* its pieces (owned) and data (a scratch slot) */
    weft_io_job_t   *wjob;
};

static weft_datatype_t *byte_t(void)
{
    return weft_datatype_from_handle(MPI_BYTE);
}

static int node_of(const weft_comm_t *comm, int r)
{
    return weft_runtime.pmi.node_of_rank ? weft_runtime.pmi.node_of_rank[comm->peer_world[r]] : 0;
}

/* Aggregators: the first rank of each node, then the second of each, ... */
static int choose_aggregators(tp_t *t, int want)
{
    int  n    = t->comm->size, got = 0;
    int *used = calloc(n, sizeof(int));

    t->agg_rank = malloc(want * sizeof(int));
    if (!used || !t->agg_rank) {
        free(used);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the aggregator list");
    }
    while (got < want) {
        for (int r = 0; r < n && got < want; r++) {
            int seen_node = 0;
            if (used[r]) {
                continue;
            }
            /* take r only if no rank of its node was taken in this pass */
            for (int k = 0; k < got && !seen_node; k++) {
                seen_node = used[t->agg_rank[k]] == 2 && node_of(t->comm, t->agg_rank[k]) == node_of(t->comm, r);
            }
            if (!seen_node) {
                used[r]             = 2;
                t->agg_rank[got++] = r;
            }
        }
        for (int k = 0; k < got; k++) {
            used[t->agg_rank[k]] = 1; /* next pass: nodes are free again */
        }
    }
    t->nagg   = want;
    t->my_agg = -1;
    for (int k = 0; k < want; k++) {
        if (t->agg_rank[k] == t->comm->rank) {
            t->my_agg = k;
        }
    }
    free(used);
    return MPI_SUCCESS;
}

static void domain(const tp_t *t, int a, MPI_Offset *s, MPI_Offset *e)
{
    *s = t->lo + (MPI_Offset)a * t->dsize;
    *e = *s + t->dsize;
    if (*s > t->hi) {
        *s = t->hi;
    }
    if (*e > t->hi) {
        *e = t->hi;
    }
}

/* First segment ending after off (segments are in file order). */
static int first_seg_after(const weft_io_seg_t *segs, int n, MPI_Offset off)
{
    int lo = 0, hi = n;

    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (segs[mid].off + segs[mid].len <= off) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

/* Append a piece to the current aggregator's list, which starts at index
 * first (merged with its last piece when they touch; never with the
 * previous aggregator's, even when the file bytes continue across the
 * domain boundary). */
static int add_piece(tp_t *t, int first, MPI_Offset off, MPI_Offset len)
{
    if (t->my_n == t->my_cap) {
        int      cap = t->my_cap ? 2 * t->my_cap : 64;
        piece_t *p   = realloc(t->my_pieces, cap * sizeof(*p));
        if (p == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "cannot allocate collective I/O pieces");
        }
        t->my_pieces = p;
        t->my_cap    = cap;
    }
    if (t->my_n > first && t->my_pieces[t->my_n - 1].off + t->my_pieces[t->my_n - 1].len == off) {
        t->my_pieces[t->my_n - 1].len += len;
        return MPI_SUCCESS;
    }
    t->my_pieces[t->my_n++] = (piece_t){off, len};
    return MPI_SUCCESS;
}

/* A piece and where its bytes are (or go). */
typedef struct {
    MPI_Offset off, len;
    char      *mem;
} placed_t;

/* The round's pieces in arrival (rank) order with their bytes' places: the
 * others' in the round's buffer, one after another, the aggregator's own
 * straight in its buffer. NULL when out of memory. */
static placed_t *placed_pieces(const agg_t *a)
{
    placed_t  *p = malloc((size_t)a->n * sizeof(*p));
    MPI_Offset at = 0, self_at = 0;

    for (MPI_Count i = 0; p && i < a->n; i++) {
        int self = i >= a->self_first && i < a->self_first + a->self_n;
        p[i]     = (placed_t){a->pieces[i].off, a->pieces[i].len, self ? a->self_data + self_at : a->buf + at};
        if (self) {
            self_at += a->pieces[i].len;
        } else {
            at += a->pieces[i].len;
        }
    }
    return p;
}

/* The pieces in file order. Each sender's pieces arrive in file order, one
 * sender after another, so a natural merge sort (merge the ascending runs
 * pairwise until one is left) takes O(n log senders); ties keep the lower
 * rank first. NULL when out of memory. */
static placed_t *in_file_order(const placed_t *arrival, MPI_Count n)
{
    placed_t *a = malloc((size_t)n * sizeof(*a)), *b = malloc((size_t)n * sizeof(*b)), *tmp;
    MPI_Count runs = 2;

    if (!a || !b) {
        free(a);
        free(b);
        return NULL;
    }
    memcpy(a, arrival, (size_t)n * sizeof(*a));
    while (runs > 1) {
        MPI_Count i = 0, o = 0;
        runs = 0;
        while (i < n) {
            MPI_Count m = i + 1, e;
            while (m < n && a[m].off >= a[m - 1].off) {
                m++;
            }
            e = m;
            while (e < n && (e == m || a[e].off >= a[e - 1].off)) {
                e++;
            }
            for (MPI_Count x = i, y = m; x < m || y < e;) {
                b[o++] = y >= e || (x < m && a[x].off <= a[y].off) ? a[x++] : a[y++];
            }
            i = e;
            runs++;
        }
        tmp = a;
        a   = b;
        b   = tmp;
    }
    free(b);
    return a;
}

/* Aggregator side of one round (a file I/O step: runs under the file's
 * xfer_lock, on the I/O worker in the background or when overlapped).
 * Reads whose pieces tile [lo, hi) exactly (the usual case: interleaved
 * views) go from the file straight into the round's data by one vectored
 * call. Everything else goes through a span buffer, read first for writes
 * whose pieces leave holes, so writing it back keeps the bytes between
 * them. Writes stay one pwrite of the packed span: a pwritev of the 1 KiB
 * pieces of io_strided was 8-14% slower at 1-2 MiB per rank (the kernel's
 * per-segment copy costs more than packing them here). */
static int aggregate(void *arg)
{
    agg_t     *a = arg;
    tp_t      *t = a->t;
    MPI_Count  n = a->n;
    MPI_Offset lo, hi, covered = 0, reach, got = 0;
    char      *span = NULL;
    placed_t  *arrival, *p;
    struct iovec *iov;
    int        rc = MPI_SUCCESS, tiles = 1;

    if (n == 0) {
        return MPI_SUCCESS;
    }
    arrival = placed_pieces(a);
    p       = arrival ? in_file_order(arrival, n) : NULL;
    if (!p) {
        free(arrival);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the collective I/O piece list (%lld pieces)",
                          (long long)n);
    }
    lo    = p[0].off;
    reach = lo;
    for (MPI_Count i = 0; i < n; i++) {
        MPI_Offset e = p[i].off + p[i].len;
        tiles &= p[i].off == reach && p[i].len > 0;
        if (e > reach) {
            covered += e - (p[i].off > reach ? p[i].off : reach);
            reach = e;
        }
    }
    hi = reach;
    iov = tiles && !t->writing && n <= INT_MAX ? malloc((size_t)n * sizeof(*iov)) : NULL;
    if (iov) {
        for (MPI_Count i = 0; i < n; i++) {
            iov[i] = (struct iovec){p[i].mem, (size_t)p[i].len};
        }
        rc = weft_io_preadv_all(t->fh, iov, (int)n, lo, &got);
        for (MPI_Count i = 0; rc == MPI_SUCCESS && i < n; i++) { /* past the end of file: zeros */
            MPI_Offset have = got - (p[i].off - lo);
            have = have < 0 ? 0 : have;
            if (have < p[i].len) {
                memset(p[i].mem + have, 0, (size_t)(p[i].len - have));
            }
        }
        free(iov);
        free(arrival);
        free(p);
        return rc;
    }
    free(p);
    span = weft_io_scratch(t->fh, 0, (size_t)(hi - lo));
    if (!span) {
        free(arrival);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the collective buffer (%lld bytes)",
                          (long long)(hi - lo));
    }
    if (!t->writing || covered < hi - lo) {
        /* reads; writes with holes keep the bytes between the pieces */
        rc = weft_io_pread_all(t->fh, span, hi - lo, lo, &got);
        if (rc == MPI_SUCCESS && got < hi - lo) {
            memset(span + got, 0, (size_t)(hi - lo - got));
        }
    }
    /* in arrival (rank) order: where writes overlap, the higher rank's bytes win */
    for (MPI_Count i = 0; i < n && rc == MPI_SUCCESS; i++) {
        if (t->writing) {
            memcpy(span + (arrival[i].off - lo), arrival[i].mem, (size_t)arrival[i].len);
        } else {
            memcpy(arrival[i].mem, span + (arrival[i].off - lo), (size_t)arrival[i].len);
        }
    }
    if (rc == MPI_SUCCESS && t->writing) {
        rc = weft_io_pwrite_all(t->fh, span, hi - lo, lo);
    }
    free(arrival);
    return rc;
}

/* Independent transfer of this rank's segments (a file I/O step). */
static int independent(void *arg)
{
    tp_t *t = arg;

    return t->nseg > 0 ? weft_io_indep(t->fh, t->writing, t->segs, t->nseg, t->data, &t->done) : MPI_SUCCESS;
}

/* ---- exchanges and file I/O steps in either mode ---------------------------------
 * Blocking: the exchange or the I/O is done when the call returns. Background:
 * it is posted (t->req, t->job) and weft_io_tp_advance resumes once it is. */

/* (h is read after the call that fills it, an argument next to it, ran) */
static int posted(tp_t *t, int rc, const MPI_Request *h)
{
    if (rc == MPI_SUCCESS) {
        t->req = weft_request_from_handle(*h);
    }
    return rc;
}

static int x_allgather(tp_t *t, const void *s, MPI_Count n, void *r)
{
    MPI_Request h;

    if (!t->bg) {
        return weft_allgather_impl(s, n, byte_t(), r, n, byte_t(), t->comm);
    }
    return posted(t, weft_iallgather_impl(s, n, byte_t(), r, n, byte_t(), t->comm, &h), &h);
}

/* agree_out = the worst agree_in of the ranks */
static int x_agree(tp_t *t)
{
    MPI_Request      h;
    weft_datatype_t *i = weft_datatype_from_handle(MPI_INT);
    weft_op_t       *max = weft_op_from_handle(MPI_MAX);

    t->agree_out = t->agree_in;
    if (t->comm->size == 1) {
        return MPI_SUCCESS;
    }
    if (!t->bg) {
        return weft_allreduce_impl(&t->agree_in, &t->agree_out, 1, i, max, t->comm);
    }
    return posted(t, weft_iallreduce_impl(&t->agree_in, &t->agree_out, 1, i, max, t->comm, &h), &h);
}

static int x_alltoallv(tp_t *t, const void *s, const MPI_Count *sc, const MPI_Aint *sd, void *r,
                       const MPI_Count *rc, const MPI_Aint *rd)
{
    MPI_Request h;

    if (!t->bg) {
        return weft_alltoallv_c_impl(s, sc, sd, byte_t(), r, rc, rd, byte_t(), t->comm);
    }
    return posted(t, weft_ialltoallv_c_impl(s, sc, sd, byte_t(), r, rc, rd, byte_t(), t->comm, &h), &h);
}

static int x_counts(tp_t *t)
{
    MPI_Count   n = 2 * (MPI_Count)sizeof(MPI_Count);
    MPI_Request h;

    if (!t->bg) {
        return weft_alltoall_impl(t->cnt_send, n, byte_t(), t->cnt_recv, n, byte_t(), t->comm);
    }
    return posted(t, weft_ialltoall_impl(t->cnt_send, n, byte_t(), t->cnt_recv, n, byte_t(), t->comm, &h), &h);
}

/* A file I/O step: its result lands in t->job_rc. */
static int io_step(tp_t *t, int (*fn)(void *), void *arg)
{
    if (!t->bg) {
        t->job_rc = weft_io_locked(t->fh, fn, arg);
        return MPI_SUCCESS;
    }
    return weft_io_job_post(t->fh, fn, arg, &t->job);
}

/* This round's aggregator step, on this round's buffers. */
static int agg_step(tp_t *t)
{
    t->agg = (agg_t){.t = t, .pieces = t->rpieces, .n = t->npieces, .buf = t->rdata,
                     .self_first = t->self_first, .self_n = t->self_n, .self_data = t->self_data};
    return io_step(t, aggregate, &t->agg);
}

/* The previous round's write is done (rc): its status and its pieces. */
static void wb_done(tp_t *t, int rc)
{
    if (t->io_rc == MPI_SUCCESS) {
        t->io_rc = rc;
    }
    free(t->wb.pieces);
    t->wb.pieces = NULL;
}

/* Wait here for the previous round's write, if any (rare paths only: the
 * state machine waits in weft_io_tp_advance). */
static void wb_wait(tp_t *t)
{
    int rc;

    if (t->wjob != NULL) {
        weft_io_job_wait(t->wjob, &rc);
        t->wjob = NULL;
        wb_done(t, rc);
    }
}

/* Leaving early: the previous round's write must end before its buffers go
 * (its status no longer matters: the call fails). */
static void wb_drain(tp_t *t)
{
    wb_wait(t);
    free(t->wb.pieces);
    t->wb.pieces = NULL;
}

/* Round r's data is at the aggregator and round r-1's write done: write
 * the window now, or (overlap, not the last round) hand it to the worker
 * and go on with round r+1's exchanges. */
static int write_round(tp_t *t)
{
    t->state  = S_WIO;
    t->job_rc = t->io_rc;
    if (t->io_rc != MPI_SUCCESS || t->npieces == 0) {
        return MPI_SUCCESS;
    }
    if (t->overlap && t->r + 1 < t->rounds) {
        t->wb      = (agg_t){.t = t, .pieces = t->rpieces, .n = t->npieces, .buf = t->rdata,
                         .self_first = t->self_first, .self_n = t->self_n, .self_data = t->self_data};
        t->rpieces = NULL; /* the write owns them now */
        if (weft_io_job_post(t->fh, aggregate, &t->wb, &t->wjob) != MPI_SUCCESS) {
            t->wjob = NULL; /* no worker: write it here */
            wb_done(t, weft_io_locked(t->fh, aggregate, &t->wb));
            t->job_rc = t->io_rc;
        }
        return MPI_SUCCESS;
    }
    return agg_step(t);
}

/* ---- the steps ------------------------------------------------------------------ */

/* This rank's pieces of round r for every aggregator's window, and the
 * counts to send. */
static void round_pieces(tp_t *t)
{
    int size = t->comm->size, rc;

    memset(t->cnt_send, 0, 2 * size * sizeof(MPI_Count));
    memset(t->mc_s, 0, size * sizeof(MPI_Count));
    memset(t->dc_s, 0, size * sizeof(MPI_Count));
    memset(t->md_s, 0, size * sizeof(MPI_Aint));
    memset(t->dd_s, 0, size * sizeof(MPI_Aint));
    t->my_n        = 0;
    t->round_local = MPI_SUCCESS;
    for (int a = 0; a < t->nagg; a++) {
        MPI_Offset ds, de, wlo, whi, bytes = 0;
        cursor_t  *c    = &t->cur[a];
        int        dest = t->agg_rank[a], first = t->my_n;
        MPI_Offset pos0 = -1;

        domain(t, a, &ds, &de);
        wlo = ds + (MPI_Offset)t->r * t->cb;
        whi = wlo + t->cb < de ? wlo + t->cb : de;
        while (wlo < whi && c->idx < t->nseg && t->segs[c->idx].off < whi) {
            const weft_io_seg_t *s  = &t->segs[c->idx];
            MPI_Offset           st = s->off > c->at ? s->off : c->at, en = s->off + s->len;
            st                      = st > wlo ? st : wlo;
            if (en > whi) {
                en = whi;
            }
            if (en > st) {
                if (pos0 < 0) {
                    pos0 = s->pos + (st - s->off);
                }
                if ((rc = add_piece(t, first, st, en - st)) != MPI_SUCCESS) {
                    t->round_local = rc; /* still exchange (empty) counts and agree below */
                    break;
                }
                bytes += en - st;
            }
            if (s->off + s->len <= whi) {
                c->idx++;
                c->at = 0;
            } else {
                c->at = whi;
                break;
            }
        }
        t->cnt_send[2 * dest]     = t->my_n - first;
        t->cnt_send[2 * dest + 1] = bytes;
        t->mc_s[dest]             = (MPI_Count)(t->my_n - first) * (MPI_Count)sizeof(piece_t);
        t->md_s[dest]             = (MPI_Aint)first * (MPI_Aint)sizeof(piece_t);
        t->dc_s[dest]             = bytes;
        t->dd_s[dest]             = pos0 < 0 ? 0 : (MPI_Aint)pos0;
    }
    if (t->round_local != MPI_SUCCESS) {
        memset(t->cnt_send, 0, 2 * size * sizeof(MPI_Count));
    }
    /* my data for my own window stays where it is (agg_t.self_data) */
    t->self_data           = t->data ? t->data + t->dd_s[t->comm->rank] : NULL;
    t->dc_s[t->comm->rank] = 0;
}

/* Counts received: displacements and the aggregator's buffers. */
static void round_buffers(tp_t *t)
{
    MPI_Count nbytes = 0;

    t->npieces = 0;
    for (int s = 0; s < t->comm->size; s++) {
        int self   = s == t->comm->rank;
        t->mc_r[s] = t->cnt_recv[2 * s] * (MPI_Count)sizeof(piece_t);
        t->md_r[s] = (MPI_Aint)t->npieces * (MPI_Aint)sizeof(piece_t);
        t->dc_r[s] = self ? 0 : t->cnt_recv[2 * s + 1];
        t->dd_r[s] = (MPI_Aint)nbytes;
        if (self) {
            t->self_first = t->npieces;
            t->self_n     = t->cnt_recv[2 * s];
        }
        t->npieces += t->cnt_recv[2 * s];
        nbytes += t->dc_r[s];
    }
    if (t->round_local == MPI_SUCCESS) {
        /* overlap: slot 1 or 2 by round parity (the other may be being written) */
        t->rpieces = malloc((t->npieces ? t->npieces : 1) * sizeof(piece_t));
        t->rdata   = weft_io_scratch(t->fh, t->overlap ? 1 + (t->r & 1) : 1, nbytes ? (size_t)nbytes : 1);
        if (t->rdata == NULL && t->overlap) {
            /* no memory for a second buffer: no more overlap (the one in
             * use is free once the previous round's write is done) */
            wb_wait(t);
            t->overlap = 0;
            t->rdata   = weft_io_scratch(t->fh, 1, nbytes ? (size_t)nbytes : 1);
        }
        if (!t->rpieces || !t->rdata) {
            t->round_local = weft_error(MPI_ERR_NO_MEM, "cannot allocate %lld bytes for collective I/O",
                                        (long long)nbytes);
        }
    }
}

static int alloc_round_buffers(tp_t *t)
{
    int n = t->comm->size;

    t->cnt_send = calloc(2 * n, sizeof(MPI_Count));
    t->cnt_recv = calloc(2 * n, sizeof(MPI_Count));
    t->mc_s     = calloc(n, sizeof(MPI_Count));
    t->mc_r     = calloc(n, sizeof(MPI_Count));
    t->dc_s     = calloc(n, sizeof(MPI_Count));
    t->dc_r     = calloc(n, sizeof(MPI_Count));
    t->md_s     = calloc(n, sizeof(MPI_Aint));
    t->md_r     = calloc(n, sizeof(MPI_Aint));
    t->dd_s     = calloc(n, sizeof(MPI_Aint));
    t->dd_r     = calloc(n, sizeof(MPI_Aint));
    t->cur      = calloc(t->nagg, sizeof(cursor_t));
    if (!t->cnt_send || !t->cnt_recv || !t->mc_s || !t->mc_r || !t->dc_s || !t->dc_r || !t->md_s || !t->md_r ||
        !t->dd_s || !t->dd_r || !t->cur) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate collective I/O state");
    }
    return MPI_SUCCESS;
}

static void free_state(tp_t *t)
{
    free(t->all);
    free(t->agg_rank);
    free(t->cnt_send);
    free(t->cnt_recv);
    free(t->mc_s);
    free(t->mc_r);
    free(t->dc_s);
    free(t->dc_r);
    free(t->md_s);
    free(t->md_r);
    free(t->dd_s);
    free(t->dd_r);
    free(t->cur);
    free(t->my_pieces);
    free(t->rpieces);
    free(t->wb.pieces);
    t->wb.pieces = NULL;
    t->all = NULL;
    t->agg_rank = NULL;
    t->cnt_send = t->cnt_recv = t->mc_s = t->mc_r = t->dc_s = t->dc_r = NULL;
    t->md_s = t->md_r = t->dd_s = t->dd_r = NULL;
    t->cur       = NULL;
    t->my_pieces = t->rpieces = NULL;
}

/* Stream bytes of this rank's access that lie below the end of the file. */
static MPI_Offset read_done(weft_file_t *fh, const weft_io_seg_t *segs, int nseg, MPI_Offset nbytes)
{
    struct stat st;
    MPI_Offset  size;

    if (fstat(fh->fd, &st) != 0) {
        return nbytes;
    }
    size = (MPI_Offset)st.st_size;
    for (int i = 0; i < nseg; i++) {
        if (segs[i].off + segs[i].len > size) {
            return segs[i].pos + (size > segs[i].off ? size - segs[i].off : 0);
        }
    }
    return nbytes;
}

static void finish(tp_t *t, int rc)
{
    wb_drain(t);
    free_state(t);
    t->rc    = rc;
    t->state = S_FINISHED;
}

/* Ranges of every rank known: independent when that is as good, else set
 * up the aggregators and domains. */
static int info_step(tp_t *t)
{
    int         size = t->comm->size, mode = t->writing ? t->fh->hints.cb_write : t->fh->hints.cb_read;
    int         interleaved = 0, noncontig = 0, rc, want;
    MPI_Offset  worst = MPI_SUCCESS, unit, *all = t->all;
    struct stat st;

    t->lo = INT64_MAX;
    t->hi = -1;
    for (int r = 0; r < size; r++) {
        MPI_Offset lo = all[4 * r], hi = all[4 * r + 1];
        worst = all[4 * r + 3] > worst ? all[4 * r + 3] : worst;
        if (hi <= lo) {
            continue;
        }
        noncontig |= all[4 * r + 2] > 1;
        for (int q = 0; q < r; q++) {
            if (all[4 * q + 1] > all[4 * q] && lo < all[4 * q + 1] && all[4 * q] < hi) {
                interleaved = 1;
            }
        }
        t->lo = lo < t->lo ? lo : t->lo;
        t->hi = hi > t->hi ? hi : t->hi;
    }
    if (t->local_rc != MPI_SUCCESS) {
        finish(t, t->local_rc);
        return MPI_SUCCESS;
    }
    if (worst != MPI_SUCCESS) {
        finish(t, weft_error((int)worst, "file \"%s\": the operation failed on another rank", t->fh->path));
        return MPI_SUCCESS;
    }
    if (t->hi <= t->lo) {
        finish(t, MPI_SUCCESS); /* nobody has data */
        return MPI_SUCCESS;
    }
    if (mode == 0 || (mode == 2 && !interleaved && !noncontig) || size == 1) {
        /* Independent is as good: each rank has one contiguous run of its own. */
        t->state = S_INDEP_IO;
        return io_step(t, independent, t);
    }
    t->cb = t->fh->hints.cb_buffer_size;
    unit  = t->fh->hints.striping_unit > 0                               ? t->fh->hints.striping_unit
            : (fstat(t->fh->fd, &st) == 0 && st.st_blksize > 0) ? (MPI_Offset)st.st_blksize
                                                                 : 4096;
    want  = t->writing ? t->fh->hints.cb_nodes : t->fh->hints.cb_nodes_read;
    rc    = choose_aggregators(t, want > 0 ? want : 1);
    if (rc == MPI_SUCCESS) {
        /* Domains: equal shares of [lo, hi), cut on multiples of the unit. */
        MPI_Offset first = t->lo - t->lo % unit;
        MPI_Offset share = (t->hi - first + t->nagg - 1) / t->nagg;
        share            = ((share + unit - 1) / unit) * unit;
        t->dsize         = share; /* domain a: [first + a*share, +share) clipped to hi */
        t->lo            = first;
        rc               = alloc_round_buffers(t);
    }
    /* A rank that could not set up must not leave the others in the rounds. */
    t->rc       = rc;
    t->agree_in = rc;
    t->state    = S_SETUP;
    return x_agree(t);
}

/* One step of the state machine; a failed exchange ends it. */
static void step(tp_t *t)
{
    int rc = MPI_SUCCESS;

    switch (t->state) {
    case S_START:
        t->state = S_INFO;
        rc       = x_allgather(t, t->mine, 4 * (MPI_Count)sizeof(MPI_Offset), t->all);
        break;
    case S_INFO:
        rc = info_step(t);
        break;
    case S_INDEP_IO:
        t->io_rc    = t->job_rc;
        t->agree_in = t->io_rc;
        t->state    = S_INDEP_AGREED;
        rc          = x_agree(t);
        break;
    case S_INDEP_AGREED:
        if (t->agree_out != MPI_SUCCESS && t->io_rc == MPI_SUCCESS) {
            t->io_rc = weft_error(t->agree_out, "file \"%s\": collective I/O failed on another rank", t->fh->path);
        }
        finish(t, t->io_rc);
        return;
    case S_SETUP:
        if (t->rc == MPI_SUCCESS && t->agree_out != MPI_SUCCESS) {
            t->rc = weft_error(t->agree_out, "file \"%s\": collective I/O could not start on another rank",
                               t->fh->path);
        }
        if (t->rc != MPI_SUCCESS) {
            finish(t, t->rc);
            return;
        }
        for (int a = 0; a < t->nagg; a++) {
            MPI_Offset ds, de;
            domain(t, a, &ds, &de);
            t->cur[a].idx = first_seg_after(t->segs, t->nseg, ds);
        }
        t->rounds  = (int)((t->dsize + t->cb - 1) / t->cb);
        t->r       = 0;
        t->overlap = t->writing && t->rounds > 1 && t->my_agg >= 0;
        t->state   = S_ROUND;
        return;
    case S_ROUND:
        if (t->r == t->rounds) { /* (the last round's write was not overlapped: all done) */
            t->agree_in = t->io_rc;
            t->state    = S_FINAL;
            rc          = x_agree(t);
            break;
        }
        round_pieces(t);
        t->state = S_COUNTS;
        rc       = x_counts(t);
        break;
    case S_COUNTS:
        round_buffers(t);
        /* Out of memory on any rank: every rank leaves with an error (the
         * data exchanges would otherwise wait for it forever). */
        t->agree_in = t->round_local;
        t->state    = S_ROUND_AGREED;
        rc          = x_agree(t);
        break;
    case S_ROUND_AGREED:
        if (t->agree_out != MPI_SUCCESS) {
            finish(t, t->round_local != MPI_SUCCESS
                          ? t->round_local
                          : weft_error(t->agree_out, "file \"%s\": collective I/O failed on another rank (%s)",
                                       t->fh->path, t->agree_out == MPI_ERR_NO_MEM ? "out of memory" : "error"));
            return;
        }
        t->state = S_PIECES;
        rc       = x_alltoallv(t, t->my_pieces, t->mc_s, t->md_s, t->rpieces, t->mc_r, t->md_r);
        break;
    case S_PIECES:
        if (t->writing) {
            t->state = S_WDATA;
            rc       = x_alltoallv(t, t->data, t->dc_s, t->dd_s, t->rdata, t->dc_r, t->dd_r);
            break;
        }
        t->state  = S_RIO;
        t->job_rc = t->io_rc;
        if (t->io_rc == MPI_SUCCESS && t->npieces > 0) {
            rc = agg_step(t);
        }
        break;
    case S_WDATA:
        if (t->wjob != NULL) {
            /* the previous round's write first (advance waits for t->job) */
            t->job   = t->wjob;
            t->wjob  = NULL;
            t->state = S_WPREV;
            return;
        }
        rc = write_round(t);
        break;
    case S_WPREV:
        wb_done(t, t->job_rc);
        rc = write_round(t);
        break;
    case S_RIO:
        t->io_rc = t->job_rc;
        t->state = S_RDATA;
        rc       = x_alltoallv(t, t->rdata, t->dc_r, t->dd_r, t->data, t->dc_s, t->dd_s);
        break;
    case S_WIO:
        t->io_rc = t->job_rc;
        /* fall through */
    case S_RDATA:
        free(t->rpieces);
        t->rpieces = NULL;
        t->r++;
        t->state = S_ROUND;
        return;
    case S_FINAL:
        if (t->agree_out != MPI_SUCCESS && t->io_rc == MPI_SUCCESS) {
            t->io_rc = weft_error(t->agree_out, "file \"%s\": collective I/O failed on an aggregator", t->fh->path);
        }
        if (t->io_rc == MPI_SUCCESS) {
            t->done = t->writing ? t->nbytes : read_done(t->fh, t->segs, t->nseg, t->nbytes);
        }
        finish(t, t->io_rc);
        return;
    }
    if (rc != MPI_SUCCESS) {
        finish(t, rc); /* the exchange itself failed: nothing to agree over */
    }
}

int weft_io_tp_advance(weft_io_tp_t *t)
{
    for (;;) {
        if (t->req != NULL) {
            int rc;
            if (!weft_request_is_complete(t->req)) {
                return 0;
            }
            rc     = weft_request_wait(t->req, MPI_STATUS_IGNORE);
            t->req = NULL;
            if (rc != MPI_SUCCESS) {
                finish(t, rc);
            }
        }
        if (t->job != NULL) {
            if (!t->bg) {
                weft_io_job_wait(t->job, &t->job_rc); /* an overlapped write (blocking call) */
            } else if (!weft_io_job_test(t->job, &t->job_rc)) {
                return 0;
            }
            t->job = NULL;
        }
        if (t->state == S_FINISHED) {
            return 1;
        }
        step(t);
    }
}

static void tp_init(tp_t *t, weft_file_t *fh, weft_comm_t *comm, int bg, int local_rc, int writing,
                    const weft_io_seg_t *segs, int nseg, char *data, MPI_Offset nbytes)
{
    memset(t, 0, sizeof(*t));
    t->fh       = fh;
    t->comm     = comm;
    t->bg       = bg;
    t->writing  = writing;
    t->segs     = segs;
    t->nseg     = nseg;
    t->data     = data;
    t->nbytes   = nbytes;
    t->mine[0]  = nseg > 0 ? segs[0].off : INT64_MAX;
    t->mine[1]  = nseg > 0 ? segs[nseg - 1].off + segs[nseg - 1].len : -1;
    t->mine[2]  = nseg;
    t->all      = malloc(4 * comm->size * sizeof(MPI_Offset));
    t->local_rc = t->all ? local_rc : weft_error(MPI_ERR_NO_MEM, "cannot allocate collective I/O state");
    t->mine[3]  = t->local_rc;
    t->state    = S_START;
}

weft_io_tp_t *weft_io_tp_start(weft_file_t *fh, weft_comm_t *comm, int local_rc, int writing,
                               const weft_io_seg_t *segs, int nseg, char *data, MPI_Offset nbytes)
{
    tp_t *t = malloc(sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    tp_init(t, fh, comm, 1, local_rc, writing, segs, nseg, data, nbytes);
    if (t->all == NULL) {
        free(t); /* cannot even take part in the first exchange */
        return NULL;
    }
    return t;
}

int weft_io_tp_result(weft_io_tp_t *t, MPI_Offset *done)
{
    *done = t->done;
    return t->rc;
}

void weft_io_tp_free(weft_io_tp_t *t)
{
    wb_drain(t);
    free_state(t);
    free(t);
}

int weft_io_collective(weft_file_t *fh, int local_rc, int writing, const weft_io_seg_t *segs, int nseg,
                       char *data, MPI_Offset nbytes, MPI_Offset *done)
{
    tp_t t;

    tp_init(&t, fh, fh->comm, 0, local_rc, writing, segs, nseg, data, nbytes);
    if (t.all == NULL) {
        /* still take part, as a failed rank */
        MPI_Offset failed[4] = {INT64_MAX, -1, 0, MPI_ERR_NO_MEM}, *one = malloc(4 * fh->comm->size * sizeof(MPI_Offset));
        if (one) {
            weft_allgather_impl(failed, sizeof(failed), byte_t(), one, sizeof(failed), byte_t(), fh->comm);
            free(one);
        }
        *done = 0;
        return t.local_rc;
    }
    weft_io_tp_advance(&t); /* blocking steps: runs to the end */
    *done = t.done;
    return t.rc;
}
