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
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "io_internal.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
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

typedef struct {
    weft_file_t     *fh;
    weft_comm_t     *comm;
    int              writing, nagg;
    int             *agg_rank;  /* aggregator index -> rank */
    int              my_agg;    /* my aggregator index or -1 */
    MPI_Offset       lo, hi, dsize, cb;
    const weft_io_seg_t *segs;
    int              nseg;
    char            *data;
    cursor_t        *cur;
    /* per-round exchange buffers, indexed by rank */
    MPI_Count       *cnt_send, *cnt_recv;  /* 2 per rank: pieces, bytes */
    MPI_Count       *mc_s, *mc_r, *dc_s, *dc_r;
    MPI_Aint        *md_s, *md_r, *dd_s, *dd_r;
    piece_t         *my_pieces;
    int              my_cap, my_n;
} tp_t;

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

static int add_piece(tp_t *t, MPI_Offset off, MPI_Offset len)
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
    if (t->my_n > 0 && t->my_pieces[t->my_n - 1].off + t->my_pieces[t->my_n - 1].len == off) {
        t->my_pieces[t->my_n - 1].len += len;
        return MPI_SUCCESS;
    }
    t->my_pieces[t->my_n++] = (piece_t){off, len};
    return MPI_SUCCESS;
}

static int cmp_piece(const void *a, const void *b)
{
    const piece_t *x = a, *y = b;

    return x->off < y->off ? -1 : x->off > y->off;
}

/* Aggregator side of one round: pieces (n, from all senders in rank order)
 * with their data in buf (writes) or to be filled (reads). */
static int aggregate(tp_t *t, piece_t *pieces, MPI_Count n, char *buf)
{
    MPI_Offset lo = INT64_MAX, hi = -1, covered = 0, reach, got;
    char      *span;
    piece_t   *sorted;
    int        rc;

    if (n == 0) {
        return MPI_SUCCESS;
    }
    for (MPI_Count i = 0; i < n; i++) {
        lo = pieces[i].off < lo ? pieces[i].off : lo;
        hi = pieces[i].off + pieces[i].len > hi ? pieces[i].off + pieces[i].len : hi;
    }
    span   = weft_io_scratch(t->fh, 0, (size_t)(hi - lo));
    sorted = t->writing ? malloc(n * sizeof(*sorted)) : NULL;
    if (!span || (t->writing && !sorted)) {
        free(sorted);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the collective buffer (%lld bytes)",
                          (long long)(hi - lo));
    }
    rc = MPI_SUCCESS;
    if (t->writing) {
        memcpy(sorted, pieces, n * sizeof(*sorted));
        qsort(sorted, n, sizeof(*sorted), cmp_piece);
        reach = lo;
        for (MPI_Count i = 0; i < n; i++) {
            MPI_Offset e = sorted[i].off + sorted[i].len;
            if (e > reach) {
                covered += e - (sorted[i].off > reach ? sorted[i].off : reach);
                reach = e;
            }
        }
        if (covered < hi - lo) {
            /* holes: keep the bytes between the pieces */
            rc = weft_io_pread_all(t->fh, span, hi - lo, lo, &got);
            if (rc == MPI_SUCCESS && got < hi - lo) {
                memset(span + got, 0, (size_t)(hi - lo - got));
            }
        }
        for (MPI_Count i = 0, at = 0; i < n && rc == MPI_SUCCESS; i++) {
            memcpy(span + (pieces[i].off - lo), buf + at, (size_t)pieces[i].len);
            at += pieces[i].len;
        }
        if (rc == MPI_SUCCESS) {
            rc = weft_io_pwrite_all(t->fh, span, hi - lo, lo);
        }
    } else {
        rc = weft_io_pread_all(t->fh, span, hi - lo, lo, &got);
        if (rc == MPI_SUCCESS && got < hi - lo) {
            memset(span + got, 0, (size_t)(hi - lo - got));
        }
        for (MPI_Count i = 0, at = 0; i < n; i++) {
            memcpy(buf + at, span + (pieces[i].off - lo), (size_t)pieces[i].len);
            at += pieces[i].len;
        }
    }
    free(sorted);
    return rc;
}

/* The worst error class of the ranks of comm (MPI_SUCCESS if none). */
static int agree_rc(weft_comm_t *comm, int mine)
{
    int worst = mine;
    if (comm->size > 1 && weft_allreduce_impl(&mine, &worst, 1, weft_datatype_from_handle(MPI_INT),
                                              weft_op_from_handle(MPI_MAX), comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    return worst;
}

static int round_exchange(tp_t *t, int r, int *io_rc)
{
    int        size = t->comm->size, rc, local = MPI_SUCCESS;
    MPI_Count  npieces = 0, nbytes = 0;
    piece_t   *rpieces = NULL;
    char      *rdata   = NULL;

    memset(t->cnt_send, 0, 2 * size * sizeof(MPI_Count));
    memset(t->mc_s, 0, size * sizeof(MPI_Count));
    memset(t->dc_s, 0, size * sizeof(MPI_Count));
    memset(t->md_s, 0, size * sizeof(MPI_Aint));
    memset(t->dd_s, 0, size * sizeof(MPI_Aint));
    t->my_n = 0;
    /* my pieces for every aggregator's window of this round */
    for (int a = 0; a < t->nagg; a++) {
        MPI_Offset ds, de, wlo, whi, bytes = 0;
        cursor_t  *c    = &t->cur[a];
        int        dest = t->agg_rank[a], first = t->my_n;
        MPI_Offset pos0 = -1;

        domain(t, a, &ds, &de);
        wlo = ds + (MPI_Offset)r * t->cb;
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
                if ((rc = add_piece(t, st, en - st)) != MPI_SUCCESS) {
                    local = rc; /* still exchange (empty) counts and agree below */
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
    if (local != MPI_SUCCESS) {
        memset(t->cnt_send, 0, 2 * size * sizeof(MPI_Count));
    }
    rc = weft_alltoall_impl(t->cnt_send, 2 * sizeof(MPI_Count), byte_t(), t->cnt_recv, 2 * sizeof(MPI_Count),
                            byte_t(), t->comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int s = 0; s < size; s++) {
        t->mc_r[s] = t->cnt_recv[2 * s] * (MPI_Count)sizeof(piece_t);
        t->md_r[s] = (MPI_Aint)npieces * (MPI_Aint)sizeof(piece_t);
        t->dc_r[s] = t->cnt_recv[2 * s + 1];
        t->dd_r[s] = (MPI_Aint)nbytes;
        npieces += t->cnt_recv[2 * s];
        nbytes += t->cnt_recv[2 * s + 1];
    }
    if (local == MPI_SUCCESS) {
        rpieces = malloc((npieces ? npieces : 1) * sizeof(piece_t));
        rdata   = weft_io_scratch(t->fh, 1, nbytes ? (size_t)nbytes : 1);
        if (!rpieces || !rdata) {
            local = weft_error(MPI_ERR_NO_MEM, "cannot allocate %lld bytes for collective I/O",
                               (long long)nbytes);
        }
    }
    /* Out of memory on any rank: every rank leaves this round with an error
     * (the data exchanges below would otherwise wait for it forever). */
    if ((rc = agree_rc(t->comm, local)) != MPI_SUCCESS) {
        free(rpieces);
        return local != MPI_SUCCESS ? local
                                    : weft_error(rc, "file \"%s\": collective I/O failed on another rank (%s)",
                                                 t->fh->path, rc == MPI_ERR_NO_MEM ? "out of memory" : "error");
    }
    rc = weft_alltoallv_c_impl(t->my_pieces, t->mc_s, t->md_s, byte_t(), rpieces, t->mc_r, t->md_r, byte_t(),
                               t->comm);
    if (rc == MPI_SUCCESS && t->writing) {
        rc = weft_alltoallv_c_impl(t->data, t->dc_s, t->dd_s, byte_t(), rdata, t->dc_r, t->dd_r, byte_t(),
                                   t->comm);
        if (rc == MPI_SUCCESS && *io_rc == MPI_SUCCESS) {
            *io_rc = aggregate(t, rpieces, npieces, rdata);
        }
    } else if (rc == MPI_SUCCESS) {
        if (*io_rc == MPI_SUCCESS) {
            *io_rc = aggregate(t, rpieces, npieces, rdata);
        }
        rc = weft_alltoallv_c_impl(rdata, t->dc_r, t->dd_r, byte_t(), t->data, t->dc_s, t->dd_s, byte_t(),
                                   t->comm);
    }
    free(rpieces);
    return rc;
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

static void free_tp(tp_t *t)
{
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

int weft_io_collective(weft_file_t *fh, int local_rc, int writing, const weft_io_seg_t *segs, int nseg,
                       char *data, MPI_Offset nbytes, MPI_Offset *done)
{
    tp_t        t;
    weft_comm_t *comm = fh->comm;
    int          size = comm->size, mode = writing ? fh->hints.cb_write : fh->hints.cb_read;
    MPI_Offset   mine[4], *all = NULL, unit, worst = MPI_SUCCESS;
    int          rc = MPI_SUCCESS, io_rc = MPI_SUCCESS, interleaved = 0, noncontig = 0, rounds, agreed;
    struct stat  st;

    *done = 0;
    memset(&t, 0, sizeof(t));
    mine[0] = nseg > 0 ? segs[0].off : INT64_MAX;
    mine[1] = nseg > 0 ? segs[nseg - 1].off + segs[nseg - 1].len : -1;
    mine[2] = nseg;
    mine[3] = local_rc;
    all     = malloc(4 * size * sizeof(MPI_Offset));
    if (all == NULL) {
        /* still take part, as a failed rank */
        MPI_Offset failed[4] = {INT64_MAX, -1, 0, MPI_ERR_NO_MEM}, *one = malloc(4 * size * sizeof(MPI_Offset));
        if (one) {
            weft_allgather_impl(failed, sizeof(failed), byte_t(), one, sizeof(failed), byte_t(), comm);
            free(one);
        }
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate collective I/O state");
    }
    rc = weft_allgather_impl(mine, 4 * sizeof(MPI_Offset), byte_t(), all, 4 * sizeof(MPI_Offset), byte_t(), comm);
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    t.lo = INT64_MAX;
    t.hi = -1;
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
        t.lo = lo < t.lo ? lo : t.lo;
        t.hi = hi > t.hi ? hi : t.hi;
    }
    free(all);
    if (local_rc != MPI_SUCCESS) {
        return local_rc;
    }
    if (worst != MPI_SUCCESS) {
        return weft_error((int)worst, "file \"%s\": the operation failed on another rank", fh->path);
    }
    if (t.hi <= t.lo) {
        return MPI_SUCCESS; /* nobody has data */
    }
    if (mode == 0 || (mode == 2 && !interleaved && !noncontig) || size == 1) {
        /* Independent is as good: each rank has one contiguous run of its own. */
        if (nseg > 0) {
            io_rc = weft_io_indep(fh, writing, segs, nseg, data, done);
        }
        agreed = 0;
        {
            int in = io_rc;
            rc     = weft_allreduce_impl(&in, &agreed, 1, weft_datatype_from_handle(MPI_INT),
                                         weft_op_from_handle(MPI_MAX), comm);
        }
        if (rc == MPI_SUCCESS && agreed != MPI_SUCCESS && io_rc == MPI_SUCCESS) {
            io_rc = weft_error(agreed, "file \"%s\": collective I/O failed on another rank", fh->path);
        }
        return rc != MPI_SUCCESS ? rc : io_rc;
    }
    t.fh      = fh;
    t.comm    = comm;
    t.writing = writing;
    t.segs    = segs;
    t.nseg    = nseg;
    t.data    = data;
    t.cb      = fh->hints.cb_buffer_size;
    unit      = fh->hints.striping_unit > 0 ? fh->hints.striping_unit
                : (fstat(fh->fd, &st) == 0 && st.st_blksize > 0) ? (MPI_Offset)st.st_blksize : 4096;
    rc        = choose_aggregators(&t, fh->hints.cb_nodes > 0 ? fh->hints.cb_nodes : 1);
    if (rc == MPI_SUCCESS) {
        /* Domains: equal shares of [lo, hi), cut on multiples of the unit. */
        MPI_Offset first = t.lo - t.lo % unit;
        MPI_Offset share = (t.hi - first + t.nagg - 1) / t.nagg;
        share            = ((share + unit - 1) / unit) * unit;
        t.dsize          = share; /* domain a: [first + a*share, +share) clipped to hi */
        t.lo    = first;
        rc      = alloc_round_buffers(&t);
    }
    /* A rank that could not set up must not leave the others in the rounds. */
    worst = agree_rc(comm, rc);
    if (rc == MPI_SUCCESS && worst != MPI_SUCCESS) {
        rc = weft_error((int)worst, "file \"%s\": collective I/O could not start on another rank", fh->path);
    }
    if (rc == MPI_SUCCESS) {
        for (int a = 0; a < t.nagg; a++) {
            MPI_Offset ds, de;
            domain(&t, a, &ds, &de);
            t.cur[a].idx = first_seg_after(segs, nseg, ds);
        }
        rounds = (int)((t.dsize + t.cb - 1) / t.cb);
        for (int r = 0; r < rounds && rc == MPI_SUCCESS; r++) {
            rc = round_exchange(&t, r, &io_rc);
        }
    }
    free_tp(&t);
    if (rc == MPI_SUCCESS) {
        int in = io_rc;
        rc     = weft_allreduce_impl(&in, &agreed, 1, weft_datatype_from_handle(MPI_INT),
                                     weft_op_from_handle(MPI_MAX), comm);
        if (rc == MPI_SUCCESS && agreed != MPI_SUCCESS && io_rc == MPI_SUCCESS) {
            io_rc = weft_error(agreed, "file \"%s\": collective I/O failed on an aggregator", fh->path);
        }
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (io_rc == MPI_SUCCESS) {
        *done = writing ? nbytes : read_done(fh, segs, nseg, nbytes);
    }
    return io_rc;
}
