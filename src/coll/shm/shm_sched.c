/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-blocking and persistent shared-memory calls on one node: the order
 * rule (a FIFO of calls in flight per communicator), the poll steps that run
 * the node phases' rounds without blocking, and the schedule builders of the
 * algorithms.def rows with a schedule form.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/errors.h"
#include "core/progress.h"

/* ---- non-blocking and persistent calls ---------------------------------------
 *
 * Order rule: the region's rounds are numbered by one counter per rank, so
 * every rank of the node must run the same sequence of shared-memory
 * operations. MPI requires every rank to issue the collectives of one
 * communicator (blocking, non-blocking and persistent starts alike) in the
 * same order, so each rank keeps the ones in flight in a FIFO, in start
 * order: only the head takes rounds, and a blocking shared-memory call first
 * drives the FIFO empty. Each rank's sequence of rounds is then the
 * sequence of calls, the same everywhere.
 */
typedef struct shm_op {
    struct shm_op        *next;
    struct weft_coll_shm *sh;
    void                 *buf;
    MPI_Count             count, off;
    weft_datatype_t      *dt;
    int                   lroot, last, rc, in_round;
    uint64_t              r;
    /* reductions */
    const void           *mydata;
    weft_op_t            *op;
    int                   all, phase;
    MPI_Count             first;  /* first element of the current window */
    int                   rounds; /* rounds in the current window (0: none begun) */
    MPI_Count             soff, scnt; /* the result's elements I keep (reduce_scatter: my block) */
    int                   k;      /* the window's round the phase is at */
} shm_op_t;

static void queue_push(struct weft_coll_shm *sh, shm_op_t *op)
{
    op->next = NULL;
    if (sh->queue_tail) {
        sh->queue_tail->next = op;
    } else {
        sh->queue_head = op;
    }
    sh->queue_tail = op;
}

static void queue_pop(struct weft_coll_shm *sh)
{
    sh->queue_head = sh->queue_head->next;
    if (sh->queue_head == NULL) {
        sh->queue_tail = NULL;
    }
}

/* A member of the node was lost: take op out of the FIFO and fail it (the
 * rounds of the others would never be published). */
static void abandon(struct weft_coll_shm *sh, shm_op_t *op, int *rc)
{
    for (shm_op_t **at = &sh->queue_head; *at != NULL; at = &(*at)->next) {
        if (*at == op) {
            *at = op->next;
            break;
        }
    }
    sh->queue_tail = NULL;
    for (shm_op_t *q = sh->queue_head; q != NULL; q = q->next) {
        sh->queue_tail = q;
    }
    *rc = weft_coll_shm_lost_error(sh, "a non-blocking collective");
}

/* The head of every poll step. On the first call of a run, map prefault
 * bytes of the round buffers of result[] (result 1) or slots[] (0) in this
 * process (process-local, so before our turn; 0: none needed), reset op and
 * queue it. Then 1 when op holds the region's turn, 0 when a call started
 * before it still runs, -1 when the region lost a member (op failed with
 * *rc and out of the FIFO: the step is finished). */
static int turn(struct weft_coll_shm *sh, shm_op_t *op, int first, int *rc, int result,
                MPI_Count prefault)
{
    if (first) {
        if (prefault > 0) {
            weft_coll_shm_prefault(sh, result, prefault);
        }
        op->off = 0, op->last = 0, op->rc = MPI_SUCCESS, op->in_round = 0;
        queue_push(sh, op);
    }
    if (weft_coll_shm_member_lost(sh)) {
        abandon(sh, op, rc);
        return -1;
    }
    return sh->queue_head == op;
}

/* Before a blocking shared-memory call: finish the ones started before it
 * (the other ranks finish them too, in their own blocking call or in any
 * wait, since progress advances schedules). */
void weft_coll_shm_queue_drain(struct weft_coll_shm *sh)
{
    weft_wait_t w = {0};
    while (sh->queue_head != NULL) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

/* One step of a non-blocking weft_coll_shm_node_bcast; 1 when the call is finished. */
static int bcast_poll(void *state, int first, int *rc)
{
    shm_op_t             *op    = state;
    struct weft_coll_shm *sh    = op->sh;
    MPI_Count             total = op->count * op->dt->size;

    int t = turn(sh, op, first, rc, 1, total > (MPI_Count)PKT_MAX ? total : 0);
    if (t <= 0) {
        return t < 0;
    }
    while (!op->last) {
        uint64_t r;
        size_t   len;
        if (!op->in_round) {
            op->r        = round_begin(sh);
            op->in_round = 1;
        }
        r = op->r;
        if (sh->me == op->lroot) {
            if (!weft_coll_shm_round_reuse_try(sh, r, 1)) {
                return 0;
            }
            len = weft_coll_shm_bcast_round_write(sh, r, op->buf, op->count, op->dt, op->off, &op->last);
        } else {
            line_t  *pkt = ready_pkt(sh, r);
            uint64_t v;
            int      lines;
            if ((load(&pkt[0]) & SEQ_ROUND_MASK) < r) {
                return 0;
            }
            v     = load(&pkt[0]);
            len   = (size_t)seq_size(v);
            lines = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;
            /* the root publishes a packet's lines in order: the last one
             * in means all are */
            if (lines > 1 && (load(&pkt[lines - 1]) & SEQ_ROUND_MASK) < r) {
                return 0;
            }
            op->last = (v & SEQ_LAST) != 0;
            if (op->off + (MPI_Count)len > total) {
                if (op->rc == MPI_SUCCESS) {
                    op->rc = weft_error(MPI_ERR_TRUNCATE, "the root broadcasts more data than "
                                                          "count and datatype here hold (%lld "
                                                          "bytes)",
                                        (long long)total);
                }
            } else if (lines > 0) {
                for (int i = 0; i < lines; i++) {
                    MPI_Count at = (MPI_Count)i * INLINE_BYTES;
                    pkt_line_unpack(&pkt[i], op->dt, op->count, op->buf, op->off + at,
                                    pkt_piece(len, at));
                }
            } else {
                weft_dt_unpack(op->dt, op->count, op->buf, op->off, bcast_data(sh, r),
                               (MPI_Count)len);
            }
        }
        op->off += (MPI_Count)len;
        op->in_round = 0;
        round_end(sh, r);
    }
    queue_pop(sh);
    *rc = op->rc;
    return 1;
}

/* all posts (or, with reduced, all "reduced" lines) of round r in? */
static int all_in(struct weft_coll_shm *sh, const line_t *lines, size_t stride, uint64_t r)
{
    for (int j = 0; j < sh->n; j++) {
        if (j != sh->me && (load(&lines[(size_t)j * stride]) & SEQ_ROUND_MASK) < r) {
            return 0;
        }
    }
    return 1;
}

/* Begin op's next window of rounds (as the blocking calls go: a rank writes
 * its part of up to REDUCE_WINDOW rounds before it waits for anyone): at
 * most `left` rounds (at least one), 1 if `alone`; their numbers are taken
 * from the region's counter now. */
static void window_begin(struct weft_coll_shm *sh, shm_op_t *op, MPI_Count left, int alone)
{
    op->rounds = alone || left <= 1 ? 1 : (int)(left < REDUCE_WINDOW ? left : REDUCE_WINDOW);
    op->r      = sh->round + 1;
    sh->round += (uint64_t)op->rounds;
    op->phase = 0, op->k = 0;
}

/* One step of a non-blocking weft_coll_shm_node_reduce (same rounds, same combining
 * order, same windows); 1 when the call is finished. A small reduction is one
 * round: write my contribution once the buffers are free, then (if I want the
 * result) wait for every contribution and reduce them all. A larger one goes
 * a window of rounds at a time, as the blocking call does (the first round
 * alone: it carries the size check): phase 0 writes my part of each round of
 * the window, phase 1 waits for each round's contributions and reduces my
 * 1/n piece of it, phase 2 waits for each round's pieces and copies the
 * result out. Going round by round instead, a rank on an oversubscribed node
 * gave up its CPU once per round (np 4 on 2 cores, iallreduce 256 KiB-2 MiB:
 * 112-860 us against the blocking call's 70-500). */
static int reduce_poll(void *state, int first, int *rc)
{
    shm_op_t             *o  = state;
    struct weft_coll_shm *sh = o->sh;
    weft_datatype_t      *dt = o->dt;
    size_t                esize = (size_t)dt->size, total = (size_t)o->count * esize;
    MPI_Aint              tlb   = dt->true_lb;
    int                   n = sh->n, me = sh->me, want = o->all || me == o->lroot;
    MPI_Count             per_round = (MPI_Count)(SLOT_BYTES / esize);
    size_t                sat = (size_t)o->soff * esize, slen = (size_t)o->scnt * esize;

    if (first) {
        o->first = 0, o->phase = 0, o->k = 0, o->rounds = 0;
    }
    int t = turn(sh, o, first, rc, 0, in_slot(total) ? (MPI_Count)total : 0);
    if (t <= 0) {
        return t < 0;
    }
    if (total <= REDUCE_ALL_MAX) {
        if (!o->in_round) {
            o->r        = round_begin(sh);
            o->in_round = 1;
        }
        uint64_t r = o->r;
        if (o->phase == 0) {
            if (!weft_coll_shm_round_reuse_try(sh, r, in_slot(total))) {
                return 0;
            }
            memcpy(contrib(sh, me, r, total), (const char *)o->mydata + tlb, total);
            publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 1));
            o->phase = 1;
        }
        if (want) {
            if (!all_in(sh, post_line(sh, 0, r), sh->nbuf, r)) {
                return 0;
            }
            int j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total);
            if (j >= 0) {
                o->rc = weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
            } else if (slen > 0) {
                memcpy((char *)o->buf + tlb, contrib(sh, n - 1, r, total) + sat, slen);
                for (j = n - 2; j >= 0 && o->rc == MPI_SUCCESS; j--) {
                    o->rc = weft_op_reduce(o->op, contrib(sh, j, r, total) + sat - tlb, o->buf,
                                           o->scnt, dt);
                }
            }
        }
        round_end(sh, r);
        queue_pop(sh);
        *rc = o->rc;
        return 1;
    }
    while (o->first < o->count) {
        if (o->rounds == 0) {
            window_begin(sh, o, (o->count - o->first + per_round - 1) / per_round, o->first == 0);
        }
        for (; o->phase == 0 && o->k < o->rounds; o->k++) {
            MPI_Count at  = o->first + (MPI_Count)o->k * per_round;
            MPI_Count cnt = o->count - at < per_round ? o->count - at : per_round;
            uint64_t  r   = o->r + (uint64_t)o->k;
            if (!weft_coll_shm_round_reuse_try(sh, r, 1)) {
                return 0;
            }
            memcpy(contrib(sh, me, r, (size_t)cnt * esize),
                   (const char *)o->mydata + tlb + (size_t)at * esize, (size_t)cnt * esize);
            publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 0));
        }
        if (o->phase == 0) {
            o->phase = 1, o->k = 0;
        }
        for (; o->phase == 1 && o->k < o->rounds; o->k++) {
            MPI_Count at  = o->first + (MPI_Count)o->k * per_round;
            MPI_Count cnt = o->count - at < per_round ? o->count - at : per_round;
            uint64_t  r   = o->r + (uint64_t)o->k;
            size_t    len = (size_t)cnt * esize;
            MPI_Count poff, pcnt;
            if (!all_in(sh, post_line(sh, 0, r), sh->nbuf, r)) {
                return 0;
            }
            weft_coll_block(cnt, n, me, &poff, &pcnt);
            if (at == 0) {
                int j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total);
                if (j >= 0) { /* everyone sees it in this round and leaves after it */
                    o->rc   = weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
                    o->last = 1;
                    pcnt    = 0;
                }
            }
            if (pcnt > 0 && o->rc == MPI_SUCCESS) {
                unsigned char *acc = contrib(sh, n - 1, r, len);
                size_t         pat = (size_t)poff * esize;
                for (int j = n - 2; j >= 0 && o->rc == MPI_SUCCESS; j--) {
                    o->rc = weft_op_reduce(o->op, contrib(sh, j, r, len) + pat - tlb,
                                           acc + pat - tlb, pcnt, dt);
                }
            }
            publish(&sh->reduced[me], r);
        }
        if (o->phase == 1) {
            o->phase = 2, o->k = 0;
        }
        for (; o->k < o->rounds; o->k++) {
            MPI_Count at  = o->first + (MPI_Count)o->k * per_round;
            MPI_Count cnt = o->count - at < per_round ? o->count - at : per_round;
            uint64_t  r   = o->r + (uint64_t)o->k;
            MPI_Count lo  = at > o->soff ? at : o->soff;
            MPI_Count hi  = at + cnt < o->soff + o->scnt ? at + cnt : o->soff + o->scnt;
            if (want && !o->last && lo < hi) { /* the part of my slice this round holds */
                if (!all_in(sh, sh->reduced, 1, r)) {
                    return 0;
                }
                memcpy((char *)o->buf + tlb + (size_t)(lo - o->soff) * esize,
                       contrib(sh, n - 1, r, (size_t)cnt * esize) + (size_t)(lo - at) * esize,
                       (size_t)(hi - lo) * esize);
            }
            round_end(sh, r);
        }
        /* An op's error does not stop the rounds (the others are in them); a
         * size mismatch, seen by all in the first round, stops everyone. */
        o->first  = o->last ? o->count : o->first + (MPI_Count)o->rounds * per_round;
        o->rounds = 0;
    }
    queue_pop(sh);
    *rc = o->rc;
    return 1;
}

/* A poll step's state on one node's region: bytes (at least a shm_op_t,
 * which it starts with) zeroed in the schedule (what: "a shared-memory
 * barrier" etc., for the errors); *out is NULL after an error. */
static int shm_op_new(weft_sched_t *s, const weft_coll_args_t *a, size_t bytes, const char *what,
                      shm_op_t **out)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);
    shm_op_t              *op;

    *out = NULL;
    if (cc->shm == NULL || cc->nodes != 1) {
        return weft_error(MPI_ERR_INTERN, "%s schedule needs one node's region", what);
    }
    op = weft_sched_alloc(s, bytes);
    if (op == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for %s", what);
    }
    memset(op, 0, bytes);
    op->sh = cc->shm;
    *out   = op;
    return MPI_SUCCESS;
}

/* Non-blocking gather / allgather / scatter on one node: weft_coll_shm_node_gather's and
 * weft_coll_shm_node_scatter's rounds as poll steps (same FIFO order rule as the bcast). */
typedef struct {
    shm_op_t  h; /* queue link, region, round state, error */
    blocks_t  b;
    MPI_Count block;
    int       kind; /* 0 gather, 1 allgather, 2 scatter */
    int       inplace;
} shm_blocks_op_t;

/* The local part of the call, at each start (the data may have changed). */
static void blocks_op_start(shm_blocks_op_t *o)
{
    struct weft_coll_shm *sh = o->h.sh;
    int                   me = sh->me, root = o->h.lroot;
    blocks_t             *b  = &o->b;

    if (o->kind == 2) {
        if (me == root && !o->inplace) {
            weft_dt_copy((const char *)b->sbuf + me * (MPI_Aint)b->scount * b->sdt->extent,
                         b->scount, b->sdt, b->rbuf, b->rcount, b->rdt);
        }
    } else if ((o->kind == 1 || me == root) && !o->inplace) {
        weft_dt_copy(b->sbuf, b->scount, b->sdt,
                     (char *)b->rbuf + me * (MPI_Aint)b->rcount * b->rdt->extent, b->rcount,
                     b->rdt);
    }
}

static int gather_poll(void *state, int first, int *rc)
{
    shm_blocks_op_t      *o  = state;
    struct weft_coll_shm *sh = o->h.sh;
    const blocks_t       *b  = &o->b;
    int                   n = sh->n, me = sh->me, all = o->kind == 1;
    int                   want = all || me == o->h.lroot;
    MPI_Aint              rstride = want ? (MPI_Aint)b->rcount * b->rdt->extent : 0;

    if (first) {
        blocks_op_start(o);
    }
    int t = turn(sh, &o->h, first, rc, 0, in_slot((size_t)o->block) ? o->block : 0);
    if (t <= 0) {
        return t < 0;
    }
    while (!o->h.last) {
        MPI_Count off = o->h.off;
        size_t    len = (size_t)(o->block - off < SLOT_BYTES ? o->block - off : SLOT_BYTES);
        uint64_t  r;
        if (!o->h.in_round) {
            o->h.r        = round_begin(sh);
            o->h.in_round = 1;
            o->h.phase    = 0;
        }
        r = o->h.r;
        if (o->h.phase == 0) {
            if (!want || all) {
                if (!weft_coll_shm_round_reuse_try(sh, r, 1)) {
                    return 0;
                }
                weft_dt_pack(b->sdt, b->scount, b->sbuf, off, contrib(sh, me, r, len),
                             (MPI_Count)len);
                publish(post_line(sh, me, r), seq_make(r, o->block, 0));
            }
            o->h.phase = 1;
        }
        if (want) {
            if (!all_in(sh, post_line(sh, 0, r), sh->nbuf, r)) {
                return 0;
            }
            for (int j = 0; j < n; j++) {
                if (j == me) {
                    continue;
                }
                if (!seq_size_is(load(post_line(sh, j, r)), o->block)) {
                    if (o->h.rc == MPI_SUCCESS) {
                        o->h.rc = weft_coll_shm_size_mismatch("a gather", o->block, j, sh, r);
                    }
                    continue;
                }
                weft_dt_unpack(b->rdt, b->rcount, (char *)b->rbuf + j * rstride, off,
                               contrib(sh, j, r, len), (MPI_Count)len);
            }
        }
        round_end(sh, r);
        o->h.in_round = 0;
        o->h.off += SLOT_BYTES;
        o->h.last = o->h.off >= o->block || (all && o->h.rc != MPI_SUCCESS);
    }
    queue_pop(sh);
    *rc = o->h.rc;
    return 1;
}

static int scatter_poll(void *state, int first, int *rc)
{
    shm_blocks_op_t      *o  = state;
    struct weft_coll_shm *sh = o->h.sh;
    const blocks_t       *b  = &o->b;
    int                   n = sh->n, me = sh->me, lroot = o->h.lroot;
    MPI_Aint              sstride = me == lroot ? (MPI_Aint)b->scount * b->sdt->extent : 0;

    if (first) {
        blocks_op_start(o);
    }
    int t = turn(sh, &o->h, first, rc, 0, in_slot((size_t)o->block) ? o->block : 0);
    if (t <= 0) {
        return t < 0;
    }
    while (!o->h.last) {
        MPI_Count off = o->h.off;
        uint64_t  r;
        line_t   *pkt;
        if (!o->h.in_round) {
            o->h.r        = round_begin(sh);
            o->h.in_round = 1;
        }
        r   = o->h.r;
        pkt = ready_pkt(sh, r);
        if (me == lroot) {
            size_t len = (size_t)(o->block - off < SLOT_BYTES ? o->block - off : SLOT_BYTES);
            if (!weft_coll_shm_round_reuse_try(sh, r, 1)) {
                return 0;
            }
            o->h.last = off + (MPI_Count)len >= o->block;
            for (int j = 0; j < n && len > 0; j++) {
                if (j != me) {
                    weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, off,
                                 contrib(sh, j, r, SLOT_BYTES), (MPI_Count)len);
                }
            }
            publish(&pkt[0], seq_make(r, o->block, o->h.last));
        } else {
            uint64_t  v;
            MPI_Count len, mine;
            if ((load(&pkt[0]) & SEQ_ROUND_MASK) < r) {
                return 0;
            }
            v         = load(&pkt[0]);
            o->h.last = (v & SEQ_LAST) != 0;
            if (!seq_size_is(v, o->block) && o->h.rc == MPI_SUCCESS) {
                o->h.rc = weft_coll_shm_root_size_mismatch("a scatter", o->block, v);
            }
            len  = o->h.last ? (o->block - off) : SLOT_BYTES;
            mine = o->block - off < len ? o->block - off : len;
            if (o->h.rc == MPI_SUCCESS && mine > 0) {
                weft_dt_unpack(b->rdt, b->rcount, b->rbuf, off, contrib(sh, me, r, SLOT_BYTES),
                               mine);
            }
        }
        round_end(sh, r);
        o->h.in_round = 0;
        o->h.off += SLOT_BYTES;
    }
    queue_pop(sh);
    *rc = o->h.rc;
    return 1;
}

/* Non-blocking and persistent allgatherv on one node: weft_coll_shm_node_allgatherv's
 * rounds as poll steps. The counts and displacements are copied into the
 * schedule (the caller's arrays may be converted copies that do not outlive
 * the call). */
typedef struct {
    shm_op_t         h;
    const void      *sbuf;
    MPI_Count        scount, mine, most;
    weft_datatype_t *sdt, *rdt;
    void            *rbuf;
    MPI_Count       *rcounts;
    MPI_Aint        *rdispls;
    int              inplace;
} shm_allgatherv_op_t;

static int allgatherv_poll(void *state, int first, int *rc)
{
    shm_allgatherv_op_t  *o  = state;
    shm_op_t             *h  = &o->h;
    struct weft_coll_shm *sh = h->sh;
    int                   n = sh->n, me = sh->me;

    if (first) {
        if (!o->inplace) { /* at each start: the data may have changed */
            weft_dt_copy(o->sbuf, o->scount, o->sdt,
                         (char *)o->rbuf + o->rdispls[me] * o->rdt->extent, o->rcounts[me], o->rdt);
        }
        h->rounds = 0;
    }
    int t = turn(sh, h, first, rc, 0, in_slot(round_piece(o->most, 0)) ? o->most : 0);
    if (t <= 0) {
        return t < 0;
    }
    /* Windows of rounds as in reduce_poll. Every rank counts the rounds from
     * the same rcounts, so even the first window may hold several: everyone
     * reads every post of its first round, and a size mismatch there stops
     * all at the window's end (reading nothing more). */
    while (!h->last) {
        if (h->rounds == 0) {
            window_begin(sh, h, (o->most - h->off + SLOT_BYTES - 1) / SLOT_BYTES, 0);
        }
        for (; h->phase == 0 && h->k < h->rounds; h->k++) {
            MPI_Count off = h->off + (MPI_Count)h->k * SLOT_BYTES;
            uint64_t  r   = h->r + (uint64_t)h->k;
            size_t    len = round_piece(o->mine, off);
            if (!weft_coll_shm_round_reuse_try(sh, r, in_slot(round_piece(o->most, off)))) {
                return 0;
            }
            if (len > 0) {
                weft_dt_pack(o->sdt, o->scount, o->sbuf, off, contrib(sh, me, r, len),
                             (MPI_Count)len);
            }
            publish(post_line(sh, me, r), seq_make(r, o->mine, 0));
        }
        if (h->phase == 0) {
            h->phase = 1, h->k = 0;
        }
        for (; h->k < h->rounds; h->k++) {
            MPI_Count off = h->off + (MPI_Count)h->k * SLOT_BYTES;
            uint64_t  r   = h->r + (uint64_t)h->k;
            if (!all_in(sh, post_line(sh, 0, r), sh->nbuf, r)) {
                return 0;
            }
            for (int j = 0; j < n && h->rc == MPI_SUCCESS; j++) {
                MPI_Count bj = o->rcounts[j] * o->rdt->size;
                size_t    lj = round_piece(bj, off);
                if (j == me) { /* the others see a wrong size in my post and stop: so must I */
                    if (o->mine != bj) {
                        h->rc = weft_coll_shm_own_size_mismatch("an allgatherv", o->mine, bj);
                    }
                    continue;
                }
                if (!seq_size_is(load(post_line(sh, j, r)), bj)) {
                    if (h->rc == MPI_SUCCESS) {
                        h->rc = weft_coll_shm_size_mismatch("an allgatherv", bj, j, sh, r);
                    }
                    continue;
                }
                if (lj > 0) {
                    weft_dt_unpack(o->rdt, o->rcounts[j],
                                   (char *)o->rbuf + o->rdispls[j] * o->rdt->extent, off,
                                   contrib(sh, j, r, lj), (MPI_Count)lj);
                }
            }
            round_end(sh, r);
        }
        h->off += (MPI_Count)h->rounds * SLOT_BYTES;
        h->rounds = 0;
        h->last   = h->off >= o->most || h->rc != MPI_SUCCESS;
    }
    queue_pop(sh);
    *rc = h->rc;
    return 1;
}

int weft_coll_allgatherv_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    int                  n = a->comm->size, me = a->comm->rank;
    shm_op_t            *h;
    int                  rc = shm_op_new(s, a, sizeof(shm_allgatherv_op_t) +
                                                   (size_t)n * (sizeof(MPI_Count) + sizeof(MPI_Aint)),
                                         "a shared-memory allgatherv", &h);
    shm_allgatherv_op_t *o = (shm_allgatherv_op_t *)h;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    o->rcounts = (MPI_Count *)(o + 1);
    o->rdispls = (MPI_Aint *)(o->rcounts + n);
    memcpy(o->rcounts, a->rcounts, (size_t)n * sizeof(MPI_Count));
    memcpy(o->rdispls, a->rdispls, (size_t)n * sizeof(MPI_Aint));
    o->rbuf = a->rbuf;
    o->rdt  = a->rdt;
    o->inplace = a->sbuf == MPI_IN_PLACE;
    if (o->inplace) { /* my block already sits in rbuf */
        o->sbuf   = (const char *)a->rbuf + a->rdispls[me] * a->rdt->extent;
        o->scount = a->rcounts[me];
        o->sdt    = a->rdt;
    } else {
        o->sbuf   = a->sbuf;
        o->scount = a->scount;
        o->sdt    = a->sdt;
    }
    o->mine = o->scount * o->sdt->size;
    o->most = largest_block(o->rcounts, o->rdt, n, -1);
    return weft_sched_poll(s, allgatherv_poll, o);
}

/* One step of a non-blocking barrier on one node: weft_coll_shm_node_barrier's arrive
 * and release lines (the barrier's own counter, in FIFO order with the other
 * calls); 1 when the call is finished. */
static int barrier_poll(void *state, int first, int *rc)
{
    shm_op_t             *op = state;
    struct weft_coll_shm *sh = op->sh;
    uint64_t              b;

    int t = turn(sh, op, first, rc, 0, 0);
    if (t <= 0) {
        return t < 0;
    }
    if (!op->in_round) {
        op->r = ++sh->bar;
        publish(&sh->arrive[sh->me], op->r);
        op->in_round = 1;
    }
    b = op->r;
    if (sh->barrier_all_read || sh->me == 0) {
        if (!all_in(sh, sh->arrive, 1, b)) {
            return 0;
        }
        if (!sh->barrier_all_read) {
            weft_coll_shm_barrier_release(sh, b, MPI_SUCCESS);
        }
    } else {
        if ((load(sh->release) & SEQ_ROUND_MASK) < b) {
            return 0;
        }
        op->rc = weft_coll_shm_barrier_released(sh, b);
    }
    queue_pop(sh);
    *rc = op->rc;
    return 1;
}

/* A reduction's poll step (reduce_poll): the fields every form shares. */
static int reduce_op_new(weft_sched_t *s, const weft_coll_args_t *a, shm_op_t **out)
{
    int rc = shm_op_new(s, a, sizeof(shm_op_t), "a shared-memory reduction", out);

    if (rc == MPI_SUCCESS) {
        (*out)->mydata = weft_coll_mydata(a);
        (*out)->buf    = a->rbuf;
        (*out)->dt     = a->dt;
        (*out)->op     = a->op;
    }
    return rc;
}

int weft_coll_barrier_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    shm_op_t *op;
    int       rc = shm_op_new(s, a, sizeof(*op), "a shared-memory barrier", &op);

    return rc != MPI_SUCCESS ? rc : weft_sched_poll(s, barrier_poll, op);
}

/* Non-blocking and persistent bcast on one node: one poll step (the node
 * phase, ordered with the communicator's other shared-memory calls). */
int weft_coll_bcast_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    shm_op_t *op;
    int       rc = shm_op_new(s, a, sizeof(*op), "a shared-memory bcast", &op);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    op->buf   = a->rbuf;
    op->count = a->count;
    op->dt    = a->dt;
    op->lroot = a->root;
    return weft_sched_poll(s, bcast_poll, op);
}

/* Non-blocking and persistent reduce / allreduce on one node. */
static int reduce_schedule(weft_sched_t *s, const weft_coll_args_t *a, int all)
{
    shm_op_t *op;
    int       rc = reduce_op_new(s, a, &op);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    op->count = a->count;
    op->all   = all;
    op->lroot = a->root;
    op->soff  = 0;
    op->scnt  = a->count;
    return weft_sched_poll(s, reduce_poll, op);
}

/* Non-blocking and persistent reduce_scatter(_block) on one node: the
 * reduction's rounds, each rank keeping its own block (counts[i] elements
 * for rank i; a rank with an empty block only contributes). */
static int reduce_scatter_schedule(weft_sched_t *s, const weft_coll_args_t *a,
                                   const MPI_Count *counts, MPI_Count block)
{
    int       n = a->comm->size, me = a->comm->rank;
    shm_op_t *op;
    int       rc = reduce_op_new(s, a, &op);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < n; i++) {
        MPI_Count ci = counts ? counts[i] : block;
        op->soff += i < me ? ci : 0;
        op->count += ci;
    }
    op->scnt  = counts ? counts[me] : block;
    op->lroot = op->scnt > 0 ? me : -1;
    return weft_sched_poll(s, reduce_poll, op);
}

int weft_coll_reduce_scatter_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return reduce_scatter_schedule(s, a, a->rcounts, 0);
}

int weft_coll_reduce_scatter_block_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return reduce_scatter_schedule(s, a, NULL, a->rcount);
}

int weft_coll_reduce_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return reduce_schedule(s, a, 0);
}

int weft_coll_allreduce_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return reduce_schedule(s, a, 1);
}

/* Non-blocking and persistent gather / allgather / scatter on one node. */
static int blocks_schedule(weft_sched_t *s, const weft_coll_args_t *a, int kind)
{
    int              me = a->comm->rank;
    shm_op_t        *h;
    int              rc = shm_op_new(s, a, sizeof(shm_blocks_op_t),
                                     "a shared-memory gather, allgather or scatter", &h);
    shm_blocks_op_t *o = (shm_blocks_op_t *)h;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    o->h.lroot = a->root;
    o->kind    = kind;
    o->b       = (blocks_t){a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt};
    if (kind == 2) {
        o->inplace = me == a->root && a->rbuf == MPI_IN_PLACE;
        o->block   = me == a->root ? a->scount * a->sdt->size : a->rcount * a->rdt->size;
        return weft_sched_poll(s, scatter_poll, o);
    }
    o->inplace = a->sbuf == MPI_IN_PLACE;
    if (o->inplace) { /* my block already sits in rbuf */
        o->b.sbuf   = (char *)a->rbuf + me * (MPI_Aint)a->rcount * a->rdt->extent;
        o->b.scount = a->rcount;
        o->b.sdt    = a->rdt;
    }
    o->block = o->b.scount * o->b.sdt->size;
    return weft_sched_poll(s, gather_poll, o);
}

int weft_coll_gather_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return blocks_schedule(s, a, 0);
}

int weft_coll_allgather_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return blocks_schedule(s, a, 1);
}

int weft_coll_scatter_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    return blocks_schedule(s, a, 2);
}
