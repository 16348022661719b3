/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Shared-memory-aware collectives (and a one-node alltoall): the node-local
 * phase goes through a region shared by the ranks of one node (one region
 * per communicator, created at the first call that selects one of these
 * algorithms); with several nodes, the node leaders run the inter-node phase
 * with an ordinary point-to-point schedule on the leader communicator.
 * Blocking calls run directly, not as schedules; a non-blocking or
 * persistent bcast, reduce, allreduce, gather, allgather or scatter on one
 * node is a schedule of one poll step (see "Order
 * rule" below for how it shares the region with the blocking calls).
 *
 * Region (n = ranks of the node), every entry one cache line:
 *   arrive[n] release          barrier counters
 *   post[n][NBUF]              "my contribution for round r is in place"
 *                              (seq = r; up to INLINE_BYTES of data ride in
 *                              the same line, so a small message is one line)
 *   reduced[n]                 "my piece of round r's reduction is done"
 *   done[n]                    "I finished round r" (buffer reuse)
 *   ready[NBUF][PKT_LINES]     broadcast chunk of round r: up to PKT_MAX
 *                              bytes spread over lines that each carry their
 *                              own counter (readers fetch them all at once),
 *                              else line 0 flags a chunk in result[]
 *   slots[n][NBUF][SLOT_BYTES] contributions larger than a line (large
 *                              reductions combine in place in the last
 *                              rank's slot, each rank its 1/n piece)
 *   result[NBUF][SLOT_BYTES]   broadcast chunks larger than a packet
 * Every data movement is cut into rounds of at most SLOT_BYTES; round r
 * uses buffer r % NBUF, and a rank writes into a buffer only once every
 * rank finished round r - NBUF, so the writer of the next chunk never
 * waits for the readers of the current one (and, knowing how far everyone
 * got, checks again only every few rounds). All counters only grow, and
 * all ranks of the node see the same sequence of rounds (the number of
 * rounds of a call depends only on arguments that must match across
 * ranks), so no counter is ever reset.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/comm_ctx.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/runtime.h"
#include "transport/shm/shm_coll.h"
#include "util/cache.h"

/* Eight buffers: a writer re-reads the other ranks' done counters (a cache
 * miss each) only every few rounds, not before every small message. */
#define NBUF         8
#define SLOT_BYTES   (16u * 1024u)
#define INLINE_BYTES 56u
/* Up to this many ranks every rank of a one-node barrier reads everyone's
 * counter (one line transfer of latency); above it, a leader collects and
 * releases (two transfers, but no n^2 cache traffic). */
#define BARRIER_ALL_READ_MAX 16
/* Reductions up to this size: every rank reads every contribution and
 * reduces the whole vector itself (one round trip); above, each rank
 * reduces 1/n of it and everyone copies the result. */
#define REDUCE_ALL_MAX 4096u
/* Prefetch the next round's buffer for small messages only. */
#define PREFETCH_MAX 4096u
/* Broadcast chunks up to PKT_MAX bytes travel as "packets": INLINE_BYTES
 * per line, each line with its own counter, so a reader needs one round
 * trip for all of them instead of one for a flag and one for the data. */
#define PKT_LINES 8
#define PKT_MAX   (PKT_LINES * INLINE_BYTES)

typedef struct {
    uint64_t      seq;
    unsigned char data[INLINE_BYTES];
} __attribute__((aligned(64))) line_t;

struct weft_coll_shm {
    weft_comm_t *node;  /* ranks of my node: the parent itself on one node */
    int          n, me;
    uint64_t     round, bar;
    uint64_t     done_floor; /* every rank finished at least this round */
    void        *base;
    size_t       bytes;
    line_t      *arrive, *release, *post, *reduced, *done, *ready;
    char        *slots, *result;
    /* Non-blocking and persistent calls in flight on this communicator, in
     * the order they were started (see "Order rule" below). */
    struct shm_op *queue_head, *queue_tail;
};

static size_t region_bytes(int n)
{
    size_t lines = (size_t)n * (3 + NBUF) + 1 + (size_t)NBUF * PKT_LINES;
    return lines * sizeof(line_t) + (size_t)(n + 1) * NBUF * SLOT_BYTES;
}

static void region_carve(struct weft_coll_shm *sh)
{
    line_t *l   = sh->base;
    int     n   = sh->n;
    sh->arrive  = l;
    sh->release = l + n;
    sh->post    = sh->release + 1;
    sh->reduced = sh->post + (size_t)n * NBUF;
    sh->done    = sh->reduced + n;
    sh->ready   = sh->done + n;
    sh->slots   = (char *)(sh->ready + NBUF * PKT_LINES);
    sh->result  = sh->slots + (size_t)n * NBUF * SLOT_BYTES;
}

/* ---- counters ------------------------------------------------------------- */

/* A published counter is the round number in the low 40 bits; data lines
 * also carry a size tag above it (the bytes of the round or of the whole
 * call, see the users) and a "last round" bit, so ranks whose arguments
 * disagree notice it instead of falling out of step. */
#define SEQ_ROUND_MASK ((UINT64_C(1) << 40) - 1)
#define SEQ_SIZE_MASK  ((UINT64_C(1) << 23) - 1) /* sizes are compared modulo 8 MiB */
#define SEQ_LAST       (UINT64_C(1) << 63)

static inline uint64_t seq_make(uint64_t r, MPI_Count size, int last)
{
    return r | (((uint64_t)size & SEQ_SIZE_MASK) << 40) | (last ? SEQ_LAST : 0);
}
static inline MPI_Count seq_size(uint64_t v)
{
    return (MPI_Count)((v >> 40) & SEQ_SIZE_MASK);
}
static inline int seq_size_is(uint64_t v, MPI_Count size)
{
    return seq_size(v) == (MPI_Count)((uint64_t)size & SEQ_SIZE_MASK);
}

static inline uint64_t load(const line_t *l)
{
    return __atomic_load_n(&l->seq, __ATOMIC_ACQUIRE);
}

static inline void publish(line_t *l, uint64_t v)
{
    __atomic_store_n(&l->seq, v, __ATOMIC_RELEASE);
}

/* Wait for l->seq >= v, keeping point-to-point moving (a peer may need one
 * of our pending sends to reach this collective). */
static void wait_ge(const line_t *l, uint64_t v)
{
    weft_wait_t w = {0};
    while ((load(l) & SEQ_ROUND_MASK) < v) {
        if ((w.polls & 7) == 7) {
            weft_progress_poll();
        }
        weft_wait_step(&w);
    }
}

/* lines[j * stride] >= v for every j != skip */
static void wait_all(const line_t *lines, size_t stride, int n, int skip, uint64_t v)
{
    for (int j = 0; j < n; j++) {
        if (j != skip) {
            wait_ge(&lines[(size_t)j * stride], v);
        }
    }
}

static uint64_t round_begin(struct weft_coll_shm *sh)
{
    return ++sh->round;
}

/* Are round r's buffers free as far as we know (every rank finished round
 * r - NBUF)? Also what makes prefetching them for our next write harmless. */
static int buffer_free(const struct weft_coll_shm *sh, uint64_t r)
{
    return r <= NBUF || sh->done_floor >= r - NBUF;
}

static void done_floor_update(struct weft_coll_shm *sh, uint64_t r);

/* Before writing into round r's buffers. */
static void round_reuse(struct weft_coll_shm *sh, uint64_t r)
{
    if (buffer_free(sh, r)) {
        return;
    }
    wait_all(sh->done, 1, sh->n, sh->me, r - NBUF);
    done_floor_update(sh, r);
}

/* round_reuse without waiting: 1 when round r's buffers are free. */
static int round_reuse_try(struct weft_coll_shm *sh, uint64_t r)
{
    if (buffer_free(sh, r)) {
        return 1;
    }
    for (int j = 0; j < sh->n; j++) {
        if (j != sh->me && (load(&sh->done[j]) & SEQ_ROUND_MASK) < r - NBUF) {
            return 0;
        }
    }
    done_floor_update(sh, r);
    return 1;
}

/* Every rank finished round r - NBUF: remember how far all of them got. */
static void done_floor_update(struct weft_coll_shm *sh, uint64_t r)
{
    uint64_t floor = r - 1; /* mine: I am past round r - 1 */
    for (int j = 0; j < sh->n; j++) {
        uint64_t d = j == sh->me ? floor : load(&sh->done[j]) & SEQ_ROUND_MASK;
        floor      = d < floor ? d : floor;
    }
    sh->done_floor = floor;
}

static void round_end(struct weft_coll_shm *sh, uint64_t r)
{
    publish(&sh->done[sh->me], r);
}


static line_t *post_line(struct weft_coll_shm *sh, int j, uint64_t r)
{
    return &sh->post[(size_t)j * NBUF + r % NBUF];
}

/* After every post of round r is in: the first local rank whose posted
 * size tag differs from size, or -1. */
static int posted_size_differs(struct weft_coll_shm *sh, uint64_t r, MPI_Count size)
{
    for (int j = 0; j < sh->n; j++) {
        if (!seq_size_is(load(post_line(sh, j, r)), size)) {
            return j;
        }
    }
    return -1;
}

static int size_mismatch(const char *what, MPI_Count size, int j, struct weft_coll_shm *sh,
                         uint64_t r)
{
    return weft_error(MPI_ERR_TRUNCATE,
                      "ranks passed different amounts of data to %s (%lld bytes here, about "
                      "%lld at local rank %d)",
                      what, (long long)size, (long long)seq_size(load(post_line(sh, j, r))), j);
}

/* Where rank j's contribution of len bytes for round r lives. */
static unsigned char *contrib(struct weft_coll_shm *sh, int j, uint64_t r, size_t len)
{
    if (len <= INLINE_BYTES) {
        return post_line(sh, j, r)->data;
    }
    return (unsigned char *)sh->slots + ((size_t)j * NBUF + r % NBUF) * SLOT_BYTES;
}

static line_t *ready_pkt(struct weft_coll_shm *sh, uint64_t r)
{
    return &sh->ready[(r % NBUF) * PKT_LINES];
}

/* Bytes of a len-byte packet carried by the line starting at byte at. */
static MPI_Count pkt_piece(size_t len, MPI_Count at)
{
    MPI_Count left = (MPI_Count)len - at;
    return left < INLINE_BYTES ? left : INLINE_BYTES;
}

/* ---- node-level operations ------------------------------------------------ */

/* Barrier among the node's ranks; between the leader's arrival and release,
 * inter(arg) runs on the leader (NULL: none). */
static int node_barrier(struct weft_coll_shm *sh, int (*inter)(void *), void *arg, int all_read)
{
    uint64_t b  = ++sh->bar;
    int      rc = MPI_SUCCESS;

    if (sh->n == 1) {
        return inter ? inter(arg) : MPI_SUCCESS;
    }
    publish(&sh->arrive[sh->me], b);
    if (all_read) {
        wait_all(sh->arrive, 1, sh->n, sh->me, b);
        return MPI_SUCCESS;
    }
    if (sh->me == 0) {
        wait_all(sh->arrive, 1, sh->n, 0, b);
        if (inter) {
            rc = inter(arg);
        }
        publish(sh->release, b);
    } else {
        wait_ge(sh->release, b);
    }
    return rc;
}

static unsigned char *bcast_data(struct weft_coll_shm *sh, uint64_t r)
{
    return (unsigned char *)sh->result + (r % NBUF) * SLOT_BYTES;
}

/* Broadcast root, round r (its buffers free): the next chunk of the packed
 * stream of (buf, count, dt) from byte off into the region and flagged;
 * returns its length, *last set on the final chunk. */
static size_t bcast_round_write(struct weft_coll_shm *sh, uint64_t r, const void *buf,
                                MPI_Count count, const weft_datatype_t *dt, MPI_Count off,
                                int *last)
{
    MPI_Count total = count * dt->size;
    line_t   *pkt   = ready_pkt(sh, r);
    size_t    len   = (size_t)(total - off < SLOT_BYTES ? total - off : SLOT_BYTES);
    int       lines = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;

    *last      = off + (MPI_Count)len >= total;
    uint64_t v = seq_make(r, (MPI_Count)len, *last);
    if (len == 0) {
        publish(&pkt[0], v);
    } else if (lines > 0) {
        for (int i = 0; i < lines; i++) {
            MPI_Count at = (MPI_Count)i * INLINE_BYTES;
            weft_dt_pack(dt, count, buf, off + at, pkt[i].data, pkt_piece(len, at));
            publish(&pkt[i], v);
        }
    } else {
        weft_dt_pack(dt, count, buf, off, bcast_data(sh, r), (MPI_Count)len);
        publish(&pkt[0], v);
    }
    return len;
}

/* Broadcast the packed stream of (buf, count, dt) from local rank lroot. */
static int node_bcast(struct weft_coll_shm *sh, void *buf, MPI_Count count,
                      const weft_datatype_t *dt, int lroot)
{
    MPI_Count total = count * dt->size, off = 0;
    int       last  = 0, rc = MPI_SUCCESS;

    if (sh->n == 1) {
        return MPI_SUCCESS;
    }
    /* The root decides the rounds: each round's lines carry its length and
     * the last one says so, so a rank whose count disagrees still takes
     * part in every round (and reports truncation if it gets more than it
     * has room for, as a receive would). A zero-byte call is one round. */
    while (!last) {
        uint64_t       r    = round_begin(sh);
        line_t        *pkt  = ready_pkt(sh, r);
        unsigned char *data = bcast_data(sh, r);
        size_t         len;
        int            lines;
        if (sh->me == lroot) {
            round_reuse(sh, r);
            len   = bcast_round_write(sh, r, buf, count, dt, off, &last);
            lines = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;
            if (total <= PREFETCH_MAX && buffer_free(sh, r + 1)) { /* same root next time? */
                weft_prefetch_for_write(ready_pkt(sh, r + 1),
                                        sizeof(line_t) * (size_t)(lines ? lines : 1));
            }
        } else {
            wait_ge(&pkt[0], r);
            uint64_t v = load(&pkt[0]);
            len        = (size_t)seq_size(v);
            last       = (v & SEQ_LAST) != 0;
            lines      = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;
            if (off + (MPI_Count)len > total && rc == MPI_SUCCESS) {
                rc = weft_error(MPI_ERR_TRUNCATE, "the root broadcasts more data than count "
                                                  "and datatype here hold (%lld bytes)",
                                (long long)total);
            }
            if (lines > 0) {
                for (int i = 0; i < lines; i++) {
                    MPI_Count at = (MPI_Count)i * INLINE_BYTES;
                    wait_ge(&pkt[i], r);
                    weft_dt_unpack(dt, count, buf, off + at, pkt[i].data, pkt_piece(len, at));
                }
            } else {
                weft_dt_unpack(dt, count, buf, off, data, (MPI_Count)len);
            }
        }
        off += (MPI_Count)len;
        round_end(sh, r);
    }
    return rc;
}

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
    MPI_Count             first; /* first element of the current round */
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

/* Before a blocking shared-memory call: finish the ones started before it
 * (the other ranks finish them too, in their own blocking call or in any
 * wait, since progress advances schedules). */
static void queue_drain(struct weft_coll_shm *sh)
{
    weft_wait_t w = {0};
    while (sh->queue_head != NULL) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

/* One step of a non-blocking node_bcast; 1 when the call is finished. */
static int bcast_poll(void *state, int first, int *rc)
{
    shm_op_t             *op    = state;
    struct weft_coll_shm *sh    = op->sh;
    MPI_Count             total = op->count * op->dt->size;

    if (first) {
        op->off = 0, op->last = 0, op->rc = MPI_SUCCESS, op->in_round = 0;
        queue_push(sh, op);
    }
    if (sh->queue_head != op) {
        return 0;
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
            if (!round_reuse_try(sh, r)) {
                return 0;
            }
            len = bcast_round_write(sh, r, op->buf, op->count, op->dt, op->off, &op->last);
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
                    weft_dt_unpack(op->dt, op->count, op->buf, op->off + at, pkt[i].data,
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

/* Reduce count elements of contiguous dt from every local rank (mine at
 * mydata) into rbuf: on every rank (all) or on local rank lroot. Operands
 * combine in local rank order, so non-commutative ops are right. */
static int node_reduce(struct weft_coll_shm *sh, const void *mydata, void *rbuf, MPI_Count count,
                       weft_datatype_t *dt, weft_op_t *op, int all, int lroot)
{
    size_t   esize = (size_t)dt->size, total = (size_t)count * esize;
    MPI_Aint tlb   = dt->true_lb;
    int      n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    int      want  = all || me == lroot;

    if (n == 1) {
        if (want && mydata != rbuf && total) {
            memcpy((char *)rbuf + tlb, (const char *)mydata + tlb, total);
        }
        return MPI_SUCCESS;
    }
    /* Every post carries the call's byte count: ranks whose counts differ
     * report it (and, as everyone reads every post of the first round, all
     * leave together) instead of falling out of step. A zero count is still
     * one round for that reason. */
    if (total <= REDUCE_ALL_MAX) {
        uint64_t r = round_begin(sh);
        int      j;
        round_reuse(sh, r);
        memcpy(contrib(sh, me, r, total), (const char *)mydata + tlb, total);
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 1));
        if (buffer_free(sh, r + 1)) {
            weft_prefetch_for_write(post_line(sh, me, r + 1), sizeof(line_t));
            if (total > INLINE_BYTES) {
                weft_prefetch_for_write(contrib(sh, me, r + 1, total), total);
            }
        }
        if (want) {
            wait_all(sh->post + r % NBUF, NBUF, n, me, r);
            if ((j = posted_size_differs(sh, r, (MPI_Count)total)) >= 0) {
                round_end(sh, r);
                return size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
            }
            if (total == 0) {
                round_end(sh, r);
                return MPI_SUCCESS;
            }
            /* ((c0 op c1) op ...) evaluated from the right: acc = c[j] op acc */
            memcpy((char *)rbuf + tlb, contrib(sh, n - 1, r, total), total);
            for (int j = n - 2; j >= 0 && rc == MPI_SUCCESS; j--) {
                rc = weft_op_reduce(op, contrib(sh, j, r, total) - tlb, rbuf, count, dt);
            }
        }
        round_end(sh, r);
        return rc;
    }
    /* Each rank reduces its 1/n piece of the round in place in the last
     * rank's slot (only the piece's owner touches that part), then everyone
     * copies the whole reduced round out of that slot. */
    MPI_Count per_round = SLOT_BYTES / esize;
    for (MPI_Count first = 0; first < count; first += per_round) {
        MPI_Count      cnt = count - first < per_round ? count - first : per_round;
        size_t         len = (size_t)cnt * esize, at = (size_t)first * esize;
        uint64_t       r   = round_begin(sh);
        MPI_Count      poff, pcnt;
        unsigned char *acc;

        round_reuse(sh, r);
        memcpy(contrib(sh, me, r, len), (const char *)mydata + tlb + at, len);
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 0));
        wait_all(sh->post + r % NBUF, NBUF, n, me, r);
        acc = contrib(sh, n - 1, r, len);
        weft_coll_block(cnt, n, me, &poff, &pcnt);
        if (first == 0) {
            int j = posted_size_differs(sh, r, (MPI_Count)total);
            if (j >= 0) { /* everyone sees it in this round and leaves after it */
                rc   = size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
                pcnt = 0;
                want = 0;
                count = first + cnt; /* no further round */
            }
        }
        if (pcnt > 0) {
            size_t pat = (size_t)poff * esize;
            for (int j = n - 2; j >= 0 && rc == MPI_SUCCESS; j--) {
                rc = weft_op_reduce(op, contrib(sh, j, r, len) + pat - tlb, acc + pat - tlb, pcnt,
                                    dt);
            }
        }
        publish(&sh->reduced[me], r);
        if (want) {
            wait_all(sh->reduced, 1, n, me, r);
            memcpy((char *)rbuf + tlb + at, acc, len);
        }
        round_end(sh, r);
    }
    return rc;
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

/* One step of a non-blocking node_reduce (same rounds, same combining
 * order); 1 when the call is finished. Phases of a round: 0 write my
 * contribution once the buffers are free, 1 wait for every contribution
 * and reduce, 2 (large) wait for every piece and copy the result out. */
static int reduce_poll(void *state, int first, int *rc)
{
    shm_op_t             *o  = state;
    struct weft_coll_shm *sh = o->sh;
    weft_datatype_t      *dt = o->dt;
    size_t                esize = (size_t)dt->size, total = (size_t)o->count * esize;
    MPI_Aint              tlb   = dt->true_lb;
    int                   n = sh->n, me = sh->me, want = o->all || me == o->lroot;
    int                   small = total <= REDUCE_ALL_MAX;
    MPI_Count             per_round = small ? o->count : (MPI_Count)(SLOT_BYTES / esize);

    if (first) {
        o->first = 0, o->phase = 0, o->rc = MPI_SUCCESS, o->in_round = 0, o->last = 0;
        queue_push(sh, o);
    }
    if (sh->queue_head != o) {
        return 0;
    }
    while (!o->last) {
        MPI_Count cnt = o->count - o->first < per_round ? o->count - o->first : per_round;
        size_t    len = (size_t)cnt * esize, at = (size_t)o->first * esize;
        uint64_t  r;
        if (!o->in_round) {
            o->r        = round_begin(sh);
            o->in_round = 1;
            o->phase    = 0;
        }
        r = o->r;
        if (o->phase == 0) {
            if (!round_reuse_try(sh, r)) {
                return 0;
            }
            memcpy(contrib(sh, me, r, small ? total : len), (const char *)o->mydata + tlb + at,
                   len);
            publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, small));
            o->phase = 1;
        }
        if (o->phase == 1) {
            if ((want || !small) && !all_in(sh, sh->post + r % NBUF, NBUF, r)) {
                return 0;
            }
            if (o->first == 0 && (want || !small)) {
                int j = posted_size_differs(sh, r, (MPI_Count)total);
                if (j >= 0) { /* everyone reads every post of this round: all stop */
                    o->rc = size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
                    if (!small) {
                        publish(&sh->reduced[me], r);
                    }
                    round_end(sh, r);
                    o->last = 1;
                    break;
                }
            }
            if (small) {
                if (want && total > 0) {
                    memcpy((char *)o->buf + tlb, contrib(sh, n - 1, r, total), total);
                    for (int j = n - 2; j >= 0 && o->rc == MPI_SUCCESS; j--) {
                        o->rc = weft_op_reduce(o->op, contrib(sh, j, r, total) - tlb, o->buf,
                                               o->count, dt);
                    }
                }
                round_end(sh, r);
                o->last = 1;
                break;
            }
            MPI_Count      poff, pcnt;
            unsigned char *acc = contrib(sh, n - 1, r, len);
            weft_coll_block(cnt, n, me, &poff, &pcnt);
            for (int j = n - 2; pcnt > 0 && j >= 0 && o->rc == MPI_SUCCESS; j--) {
                size_t pat = (size_t)poff * esize;
                o->rc = weft_op_reduce(o->op, contrib(sh, j, r, len) + pat - tlb, acc + pat - tlb,
                                       pcnt, dt);
            }
            publish(&sh->reduced[me], r);
            o->phase = 2;
        }
        if (want) {
            if (!all_in(sh, sh->reduced, 1, r)) {
                return 0;
            }
            memcpy((char *)o->buf + tlb + at, contrib(sh, n - 1, r, len), len);
        }
        round_end(sh, r);
        o->in_round = 0;
        o->first += cnt;
        o->last = o->first >= o->count;
    }
    queue_pop(sh);
    *rc = o->rc;
    return 1;
}

/* Every local rank's block (block bytes each) gathered on lroot, or on
 * every rank (all), packed and unpacked through the callers' datatypes. */
typedef struct {
    const void      *sbuf; /* my block: packed from (sbuf, scount, sdt) */
    MPI_Count        scount;
    weft_datatype_t *sdt;
    void            *rbuf; /* rank j's block unpacked at rbuf + j * rcount * extent */
    MPI_Count        rcount;
    weft_datatype_t *rdt;
} blocks_t;

static int node_gather(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int all,
                       int lroot)
{
    int       n = sh->n, me = sh->me, want = all || me == lroot, rc = MPI_SUCCESS;
    MPI_Aint  rstride = (MPI_Aint)b->rcount * b->rdt->extent;
    MPI_Count off     = 0;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    /* Posts carry the block size. With `all` every rank reads every post of
     * the first round, so if the sizes differ all of them notice and stop
     * after it (a rooted gather's root reports it; a multi-round mismatch
     * there can still leave the ranks out of step). At least one round, so
     * a zero-size block meets a non-zero one. */
    do {
        size_t   len = (size_t)(block - off < SLOT_BYTES ? block - off : SLOT_BYTES);
        uint64_t r   = round_begin(sh);
        if (!want || all) {
            round_reuse(sh, r);
            weft_dt_pack(b->sdt, b->scount, b->sbuf, off, contrib(sh, me, r, len), (MPI_Count)len);
            publish(post_line(sh, me, r), seq_make(r, block, 0));
        }
        if (want) {
            for (int j = 0; j < n; j++) {
                if (j == me) {
                    continue;
                }
                wait_ge(post_line(sh, j, r), r);
                if (!seq_size_is(load(post_line(sh, j, r)), block)) {
                    if (rc == MPI_SUCCESS) {
                        rc = size_mismatch("a gather", block, j, sh, r);
                    }
                    continue;
                }
                weft_dt_unpack(b->rdt, b->rcount, (char *)b->rbuf + j * rstride, off,
                               contrib(sh, j, r, len), (MPI_Count)len);
            }
        }
        round_end(sh, r);
        off += SLOT_BYTES;
    } while (off < block && !(all && rc != MPI_SUCCESS));
    return rc;
}

/* One node: lroot packs round r's piece of rank j's block into rank j's
 * slot (up to SLOT_BYTES per rank and round) and flags the round on the
 * ready line; every other rank copies its piece out of its own slot, all in
 * parallel. The root decides the rounds (its block size rides on the ready
 * line, with the last-round bit), so a rank whose block size disagrees still
 * follows every round and reports the mismatch. */
static int node_scatter(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int lroot)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS, last = 0;
    MPI_Aint  sstride = (MPI_Aint)b->scount * b->sdt->extent;
    MPI_Count off     = 0;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    while (!last) {
        uint64_t r   = round_begin(sh);
        line_t  *pkt = ready_pkt(sh, r);
        if (me == lroot) {
            size_t len = (size_t)(block - off < SLOT_BYTES ? block - off : SLOT_BYTES);
            last       = off + (MPI_Count)len >= block;
            round_reuse(sh, r);
            for (int j = 0; j < n && len > 0; j++) {
                if (j != me) {
                    weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, off,
                                 contrib(sh, j, r, SLOT_BYTES), (MPI_Count)len);
                }
            }
            publish(&pkt[0], seq_make(r, block, last));
        } else {
            wait_ge(&pkt[0], r);
            uint64_t  v     = load(&pkt[0]);
            MPI_Count rooth = seq_size(v), len, mine;
            last            = (v & SEQ_LAST) != 0;
            if (!seq_size_is(v, block) && rc == MPI_SUCCESS) {
                rc = weft_error(MPI_ERR_TRUNCATE,
                                "ranks passed different amounts of data to a scatter (%lld "
                                "bytes here, about %lld at the root)",
                                (long long)block, (long long)rooth);
            }
            /* the root's block size is known modulo 8 MiB only: copy what
             * this round holds for us and fits our buffer */
            len  = last ? (block - off) : SLOT_BYTES;
            mine = block - off < len ? block - off : len;
            if (rc == MPI_SUCCESS && mine > 0) {
                weft_dt_unpack(b->rdt, b->rcount, b->rbuf, off, contrib(sh, me, r, SLOT_BYTES),
                               mine);
            }
        }
        off += SLOT_BYTES;
        round_end(sh, r);
    }
    return rc;
}

/* Non-blocking gather / allgather / scatter on one node: node_gather's and
 * node_scatter's rounds as poll steps (same FIFO order rule as the bcast). */
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
        o->h.off = 0, o->h.last = 0, o->h.rc = MPI_SUCCESS, o->h.in_round = 0;
        blocks_op_start(o);
        queue_push(sh, &o->h);
    }
    if (sh->queue_head != &o->h) {
        return 0;
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
                if (!round_reuse_try(sh, r)) {
                    return 0;
                }
                weft_dt_pack(b->sdt, b->scount, b->sbuf, off, contrib(sh, me, r, len),
                             (MPI_Count)len);
                publish(post_line(sh, me, r), seq_make(r, o->block, 0));
            }
            o->h.phase = 1;
        }
        if (want) {
            if (!all_in(sh, sh->post + r % NBUF, NBUF, r)) {
                return 0;
            }
            for (int j = 0; j < n; j++) {
                if (j == me) {
                    continue;
                }
                if (!seq_size_is(load(post_line(sh, j, r)), o->block)) {
                    if (o->h.rc == MPI_SUCCESS) {
                        o->h.rc = size_mismatch("a gather", o->block, j, sh, r);
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
        o->h.off = 0, o->h.last = 0, o->h.rc = MPI_SUCCESS, o->h.in_round = 0;
        blocks_op_start(o);
        queue_push(sh, &o->h);
    }
    if (sh->queue_head != &o->h) {
        return 0;
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
            if (!round_reuse_try(sh, r)) {
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
                o->h.rc = weft_error(MPI_ERR_TRUNCATE,
                                     "ranks passed different amounts of data to a scatter (%lld "
                                     "bytes here, about %lld at the root)",
                                     (long long)o->block, (long long)seq_size(v));
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

/* ---- setup ------------------------------------------------------------------ */

static void shm_free(struct weft_coll_shm *sh)
{
    if (sh != NULL) {
        weft_shm_region_unmap(sh->base, sh->bytes);
        free(sh);
    }
}

void weft_coll_shm_free(struct weft_coll_comm *cc)
{
    shm_free(cc->shm);
    cc->shm = NULL;
}

/* AND of ok over comm (rank 0 collects and answers): every rank must agree
 * whether the region exists, or they would pick different algorithms. */
/* Setup traffic uses internal tags (WEFT_XTAG_COLL_SHM), not the
 * collective tag sequence: the region is set up lazily inside the first
 * shared-memory collective, and its messages must never match a collective's
 * (issue 19 bug 12: a stale collective receive took the region name). */
static int agree(weft_comm_t *comm, int ok)
{
    int tag = WEFT_XTAG_COLL_SHM + 1, rc = MPI_SUCCESS;
    int v   = ok;

    if (comm->rank == 0) {
        for (int r = 1; r < comm->size && rc == MPI_SUCCESS; r++) {
            int x = 0;
            rc    = weft_recv_bytes(&x, sizeof(x), r, tag, comm);
            v     = v && x;
        }
        for (int r = 1; r < comm->size && rc == MPI_SUCCESS; r++) {
            rc = weft_send_bytes(&v, sizeof(v), r, tag, comm);
        }
    } else {
        rc = weft_send_bytes(&v, sizeof(v), 0, tag, comm);
        if (rc == MPI_SUCCESS) {
            rc = weft_recv_bytes(&v, sizeof(v), 0, tag, comm);
        }
    }
    return rc == MPI_SUCCESS && v;
}

int weft_coll_shm_setup(weft_comm_t *comm)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(comm);
    struct weft_coll_shm  *sh;
    weft_comm_t           *node = comm;
    char                   name[WEFT_SHM_REGION_NAME_MAX] = "";
    int                    rc, ok;

    if (cc->shm_state != 0) {
        return MPI_SUCCESS;
    }
    if (weft_coll_byte == NULL) { /* normally set by the first schedule */
        weft_coll_byte = weft_datatype_from_handle(MPI_BYTE);
    }
    if (cc->nodes > 1) {
        rc = weft_coll_comm_two_level(comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        node = cc->node_comm;
    }
    sh = calloc(1, sizeof(*sh));
    ok = sh != NULL;
    if (sh != NULL) {
        sh->node  = node;
        sh->n     = node->size;
        sh->me    = node->rank;
        sh->bytes = region_bytes(sh->n);
    }
    if (node->size > 1) {
        int tag = WEFT_XTAG_COLL_SHM;
        rc      = MPI_SUCCESS;
        if (node->rank == 0) {
            if (sh != NULL) {
                sh->base = weft_shm_region_create(sh->bytes, name);
            }
            if (sh == NULL || sh->base == NULL) {
                name[0] = '\0';
            }
            for (int j = 1; j < node->size && rc == MPI_SUCCESS; j++) {
                rc = weft_send_bytes(name, sizeof(name), j, tag, node);
            }
        } else {
            rc = weft_recv_bytes(name, sizeof(name), 0, tag, node);
            if (rc == MPI_SUCCESS && name[0] != '\0' && sh != NULL) {
                sh->base = weft_shm_region_attach(name, sh->bytes);
            }
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        ok = ok && sh->base != NULL;
    }
    ok = agree(comm, ok);
    if (node->rank == 0 && name[0] != '\0') {
        weft_shm_region_unlink(name); /* everyone attached (or gave up) */
    }
    if (!ok) {
        shm_free(sh);
        cc->shm_state = -1;
        return MPI_SUCCESS;
    }
    if (sh->base != NULL) {
        region_carve(sh);
    }
    cc->shm       = sh;
    cc->shm_state = 1;
    return MPI_SUCCESS;
}

/* ---- the algorithms ------------------------------------------------------------- */

/* Run alg on a sub-communicator (the leaders' phase) to completion. */
static int run_sub(weft_coll_args_t *sub)
{
    int           alg, rc;
    weft_sched_t *s;

    sub->nested = 1;
    alg         = weft_coll_select(sub);
    if (alg < 0) {
        return weft_error(MPI_ERR_INTERN, "no %s algorithm for the node leaders",
                          weft_coll_names[sub->coll]);
    }
    s = weft_coll_schedule(alg, sub, &rc);
    return s == NULL ? rc : weft_sched_run(s);
}

/* Local index (rank in the node communicator) of comm rank r, which must be
 * on my node. */
static int local_index(struct weft_coll_comm *cc, int r)
{
    int k = 0;
    if (cc->nodes == 1) {
        return r;
    }
    for (int i = 0; i < r; i++) {
        k += cc->node_index[i] == cc->node_index[r];
    }
    return k;
}

static int leader_barrier(void *arg)
{
    weft_coll_args_t sub;
    memset(&sub, 0, sizeof(sub));
    sub.coll = WEFT_COLL_BARRIER;
    sub.comm = arg;
    return run_sub(&sub);
}

static int barrier_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh = cc->shm;
    if (cc->nodes == 1) {
        return node_barrier(sh, NULL, NULL, sh->n <= BARRIER_ALL_READ_MAX);
    }
    (void)a;
    return node_barrier(sh, cc->leader_comm ? leader_barrier : NULL, cc->leader_comm, 0);
}

static int bcast_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh = cc->shm;
    int                   rc = MPI_SUCCESS, root_node;

    if (cc->nodes == 1) {
        return node_bcast(sh, a->rbuf, a->count, a->dt, a->root);
    }
    root_node = cc->node_index[a->root];
    if (cc->node_id == root_node) {
        rc = node_bcast(sh, a->rbuf, a->count, a->dt, local_index(cc, a->root));
    }
    if (cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t sub = *a;
        int              lrc;
        sub.comm = cc->leader_comm;
        sub.root = root_node;
        lrc      = run_sub(&sub);
        rc       = rc == MPI_SUCCESS ? lrc : rc;
    }
    if (cc->node_id != root_node) {
        int nrc = node_bcast(sh, a->rbuf, a->count, a->dt, 0);
        rc      = rc == MPI_SUCCESS ? nrc : rc;
    }
    return rc;
}

/* Node leader's accumulator for count elements of dt: rbuf when it has
 * one to spare, else a temporary (freed by the caller). */
static void *leader_acc(const weft_coll_args_t *a, int use_rbuf, void **tmp)
{
    *tmp = NULL;
    if (use_rbuf) {
        return a->rbuf;
    }
    *tmp = malloc((size_t)(a->count * a->dt->size) + 1);
    return *tmp ? (char *)*tmp - a->dt->true_lb : NULL;
}

static int reduce_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh   = cc->shm;
    weft_comm_t          *comm = a->comm;
    const void           *mine = weft_coll_mydata(a);
    int                   rc, rl;
    void                 *tmp, *acc;

    if (cc->nodes == 1) {
        return node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 0, a->root);
    }
    rl  = cc->leader_of[a->root];
    acc = leader_acc(a, !cc->is_leader || comm->rank == a->root, &tmp);
    /* a non-leader's acc is never written (its recvbuf, insignificant at a
     * non-root, may be NULL) */
    if (acc == NULL && cc->is_leader && comm->rank != a->root) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a reduction temporary");
    }
    rc = node_reduce(sh, mine, acc, a->count, a->dt, a->op, 0, 0);
    if (rc == MPI_SUCCESS && cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t sub = *a;
        sub.comm             = cc->leader_comm;
        sub.root             = cc->node_index[a->root];
        sub.sbuf             = comm->rank == rl ? MPI_IN_PLACE : acc;
        sub.rbuf             = acc;
        rc                   = run_sub(&sub);
    }
    if (rc == MPI_SUCCESS && rl != a->root) {
        if (comm->rank == rl) {
            rc = weft_send(acc, a->count, a->dt, a->root, weft_coll_next_tag(comm), comm,
                           WEFT_CTX_COLL);
        } else {
            int tag = weft_coll_next_tag(comm);
            if (comm->rank == a->root) {
                rc = weft_recv(a->rbuf, a->count, a->dt, rl, tag, comm, WEFT_CTX_COLL,
                               MPI_STATUS_IGNORE);
            }
        }
    }
    free(tmp);
    return rc;
}

static int allreduce_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh   = cc->shm;
    const void           *mine = weft_coll_mydata(a);
    int                   rc;

    if (cc->nodes == 1) {
        return node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 1, 0);
    }
    rc = node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 0, 0);
    if (rc == MPI_SUCCESS && cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t sub = *a;
        sub.comm             = cc->leader_comm;
        sub.sbuf             = MPI_IN_PLACE;
        rc                   = run_sub(&sub);
    }
    if (node_bcast(sh, a->rbuf, a->count, a->dt, 0) != MPI_SUCCESS && rc == MPI_SUCCESS) {
        rc = weft_error(MPI_ERR_INTERN, "allreduce: node broadcast of the result disagreed");
    }
    return rc;
}

/* Several nodes: blocks are packed (B bytes each) into one buffer in node
 * order (node index, then comm rank); each node gathers into its leader's
 * part of it through the region, leaders run gatherv / allgatherv on the
 * leader communicator, and the full buffer reaches the root (or, through
 * the region again, every rank), which unpacks it in comm rank order. */
static int gather_nodes(const weft_coll_args_t *a, struct weft_coll_comm *cc, const blocks_t *mine,
                        MPI_Count block, int all)
{
    weft_comm_t *comm = a->comm;
    int          p = comm->size, nodes = cc->nodes, rc = MPI_SUCCESS, root_node;
    int          want = all || comm->rank == a->root;
    int         *order = malloc((size_t)p * sizeof(int));
    MPI_Count   *counts = calloc((size_t)nodes, sizeof(MPI_Count));
    MPI_Aint    *displs = calloc((size_t)nodes, sizeof(MPI_Aint));
    char        *full   = NULL;

    root_node = all ? 0 : cc->node_index[a->root];
    if (order == NULL || counts == NULL || displs == NULL) {
        weft_runtime_abort(1, "out of memory (gather node layout)");
    }
    for (int r = 0; r < p; r++) {
        counts[cc->node_index[r]] += block;
    }
    for (int k = 1; k < nodes; k++) {
        displs[k] = displs[k - 1] + (MPI_Aint)counts[k - 1];
    }
    for (int k = 0, i = 0; k < nodes; k++) {
        for (int r = 0; r < p; r++) {
            if (cc->node_index[r] == k) {
                order[i++] = r;
            }
        }
    }
    if (block == 0) {
        goto out;
    }
    if (cc->is_leader || want) {
        /* every rank of the node must take part in the region's rounds, so
         * there is no way to drop out cleanly here */
        full = malloc((size_t)(p * block));
        if (full == NULL) {
            weft_runtime_abort(1, "out of memory (gather staging buffer)");
        }
    }
    /* node phase: my node's blocks into the leader's part of full (rank
     * order inside a node is local order, since node ranks follow comm
     * ranks); it runs even after an allocation failure elsewhere so the
     * region's rounds stay in step */
    {
        blocks_t nb = *mine;
        char    *at = cc->is_leader ? full + displs[cc->node_id] : NULL;
        nb.rbuf     = at;
        nb.rcount   = block;
        nb.rdt      = weft_coll_byte;
        if (cc->is_leader) {
            weft_dt_pack(mine->sdt, mine->scount, mine->sbuf, 0, at, block);
        }
        rc = node_gather(cc->shm, &nb, block, 0, 0);
    }
    if (rc == MPI_SUCCESS && cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t sub;
        memset(&sub, 0, sizeof(sub));
        sub.coll    = all ? WEFT_COLL_ALLGATHERV : WEFT_COLL_GATHERV;
        sub.comm    = cc->leader_comm;
        sub.blocking = 1;
        sub.sbuf    = (all || cc->node_id == root_node) ? MPI_IN_PLACE : full + displs[cc->node_id];
        sub.scount  = counts[cc->node_id];
        sub.sdt     = weft_coll_byte;
        sub.rbuf    = full;
        sub.rcounts = counts;
        sub.rdispls = displs;
        sub.rdt     = weft_coll_byte;
        sub.root    = root_node;
        rc          = run_sub(&sub);
    }
    if (all) {
        int brc = node_bcast(cc->shm, full, p * block, weft_coll_byte, 0);
        rc      = rc == MPI_SUCCESS ? brc : rc;
    } else if (cc->leader_of[a->root] != a->root) {
        int rl = cc->leader_of[a->root], tag = weft_coll_next_tag(comm);
        if (comm->rank == rl && rc == MPI_SUCCESS) {
            rc = weft_send(full, p * block, weft_coll_byte, a->root, tag, comm, WEFT_CTX_COLL);
        } else if (comm->rank == a->root && rc == MPI_SUCCESS) {
            rc = weft_recv(full, p * block, weft_coll_byte, rl, tag, comm, WEFT_CTX_COLL,
                           MPI_STATUS_IGNORE);
        }
    }
    if (rc == MPI_SUCCESS && want) {
        MPI_Aint rstride = (MPI_Aint)a->rcount * a->rdt->extent;
        for (int i = 0; i < p; i++) {
            weft_dt_unpack(a->rdt, a->rcount, (char *)a->rbuf + order[i] * rstride, 0,
                           full + (MPI_Aint)i * block, block);
        }
    }
out:
    free(full);
    free(order);
    free(counts);
    free(displs);
    return rc;
}

static int gather_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc, int all)
{
    weft_comm_t *comm = a->comm;
    int          me = comm->rank, want = all || me == a->root;
    MPI_Aint     rstride = (MPI_Aint)a->rcount * a->rdt->extent;
    blocks_t     b = {a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt};
    MPI_Count    block;

    if (a->sbuf == MPI_IN_PLACE) { /* my block already sits in rbuf */
        b.sbuf   = (char *)a->rbuf + me * rstride;
        b.scount = a->rcount;
        b.sdt    = a->rdt;
    }
    block = b.scount * b.sdt->size;
    if (cc->nodes > 1) {
        return gather_nodes(a, cc, &b, block, all);
    }
    if (want && a->sbuf != MPI_IN_PLACE) {
        weft_dt_copy(a->sbuf, a->scount, a->sdt, (char *)a->rbuf + me * rstride, a->rcount,
                     a->rdt);
    }
    return node_gather(cc->shm, &b, block, all, a->root);
}

static int scatter_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    weft_comm_t *comm = a->comm;
    int          me = comm->rank, root = a->root;
    blocks_t     b  = {a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt};
    MPI_Count    block;

    (void)cc;
    if (me == root) {
        block = a->scount * a->sdt->size;
        if (a->rbuf != MPI_IN_PLACE) {
            weft_dt_copy((const char *)a->sbuf + me * (MPI_Aint)a->scount * a->sdt->extent,
                         a->scount, a->sdt, a->rbuf, a->rcount, a->rdt);
        }
    } else {
        block = a->rcount * a->rdt->size;
    }
    return node_scatter(cc->shm, &b, block, root);
}

/* One node: every rank packs all its outgoing blocks into its slot (block
 * j at j * piece), then unpacks block `me` of every other rank's slot.
 * Rounds cover the same byte range of every block, so MPI_IN_PLACE works:
 * a range is packed before it is overwritten. */
static int alltoall_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh = cc->shm;
    int                   n = sh->n, me = sh->me, inplace = a->sbuf == MPI_IN_PLACE;
    const char           *sbuf   = inplace ? a->rbuf : a->sbuf;
    MPI_Count             scount = inplace ? a->rcount : a->scount;
    weft_datatype_t      *sdt    = inplace ? a->rdt : a->sdt;
    MPI_Aint              sstride = (MPI_Aint)scount * sdt->extent;
    MPI_Aint              rstride = (MPI_Aint)a->rcount * a->rdt->extent;
    MPI_Count             block   = scount * sdt->size;
    MPI_Count             piece   = SLOT_BYTES / (MPI_Count)n;

    MPI_Count             off     = 0;
    int                   rc      = MPI_SUCCESS;

    /* Posts carry the block size; everyone reads every post, so a size
     * mismatch is seen by all in the first round and all stop after it. */
    do {
        size_t         len  = (size_t)(block - off < piece ? block - off : piece);
        size_t         all  = len * (size_t)n; /* this round's bytes per slot */
        uint64_t       r    = round_begin(sh);
        unsigned char *mine = contrib(sh, me, r, all);
        round_reuse(sh, r);
        for (int j = 0; j < n; j++) {
            weft_dt_pack(sdt, scount, sbuf + j * sstride, off, mine + (size_t)j * len,
                         (MPI_Count)len);
        }
        publish(post_line(sh, me, r), seq_make(r, block, 0));
        for (int j = 0; j < n; j++) {
            if (j != me) {
                wait_ge(post_line(sh, j, r), r);
            }
        }
        int j = posted_size_differs(sh, r, block);
        if (j >= 0) {
            rc = size_mismatch("an alltoall", block, j, sh, r);
        }
        for (j = 0; j < n && rc == MPI_SUCCESS; j++) {
            weft_dt_unpack(a->rdt, a->rcount, (char *)a->rbuf + j * rstride, off,
                           contrib(sh, j, r, all) + (size_t)me * len, (MPI_Count)len);
        }
        round_end(sh, r);
        off += piece;
    } while (off < block && rc == MPI_SUCCESS);
    return rc;
}

int weft_coll_shm_run(int alg, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);

    if (cc->shm != NULL) {
        queue_drain(cc->shm);
    }

    switch (alg) {
    case WEFT_ALG_BARRIER_INTRA_shm: return barrier_shm(a, cc);
    case WEFT_ALG_BCAST_INTRA_shm: return bcast_shm(a, cc);
    case WEFT_ALG_REDUCE_INTRA_shm: return reduce_shm(a, cc);
    case WEFT_ALG_ALLREDUCE_INTRA_shm: return allreduce_shm(a, cc);
    case WEFT_ALG_GATHER_INTRA_shm: return gather_shm(a, cc, 0);
    case WEFT_ALG_ALLGATHER_INTRA_shm: return gather_shm(a, cc, 1);
    case WEFT_ALG_ALLTOALL_INTRA_shm: return alltoall_shm(a, cc);
    case WEFT_ALG_SCATTER_INTRA_shm: return scatter_shm(a, cc);
    default:
        return weft_error(MPI_ERR_INTERN, "algorithm %s is not a shared-memory one",
                          weft_coll_algs[alg].name);
    }
}

/* Non-blocking and persistent bcast on one node: one poll step (the node
 * phase, ordered with the communicator's other shared-memory calls). */
int weft_coll_bcast_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);
    shm_op_t              *op;

    if (cc->shm == NULL || cc->nodes != 1) {
        return weft_error(MPI_ERR_INTERN, "the shm bcast schedule needs one node's region");
    }
    op = weft_sched_alloc(s, sizeof(*op));
    if (op == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a shared-memory bcast");
    }
    memset(op, 0, sizeof(*op));
    op->sh    = cc->shm;
    op->buf   = a->rbuf;
    op->count = a->count;
    op->dt    = a->dt;
    op->lroot = a->root;
    return weft_sched_poll(s, bcast_poll, op);
}

/* The registry wants a builder per row; these algorithms have no schedule
 * form (shm_allowed in coll.c keeps them off non-blocking and persistent
 * calls). */
#define NO_SCHEDULE(_coll)                                                                    \
    int weft_coll_##_coll##_intra_shm(weft_sched_t *s, const weft_coll_args_t *a)            \
    {                                                                                         \
        (void)s;                                                                              \
        (void)a;                                                                              \
        return weft_error(MPI_ERR_INTERN, "the shm " #_coll " has no schedule form");       \
    }
NO_SCHEDULE(barrier)
/* Non-blocking and persistent reduce / allreduce on one node. */
static int reduce_schedule(weft_sched_t *s, const weft_coll_args_t *a, int all)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);
    shm_op_t              *op;

    if (cc->shm == NULL || cc->nodes != 1) {
        return weft_error(MPI_ERR_INTERN, "the shm reduction schedule needs one node's region");
    }
    op = weft_sched_alloc(s, sizeof(*op));
    if (op == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a shared-memory reduction");
    }
    memset(op, 0, sizeof(*op));
    op->sh     = cc->shm;
    op->mydata = weft_coll_mydata(a);
    op->buf    = a->rbuf;
    op->count  = a->count;
    op->dt     = a->dt;
    op->op     = a->op;
    op->all    = all;
    op->lroot  = a->root;
    return weft_sched_poll(s, reduce_poll, op);
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
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);
    shm_blocks_op_t       *o;
    int                    me = a->comm->rank;

    if (cc->shm == NULL || cc->nodes != 1) {
        return weft_error(MPI_ERR_INTERN, "the shm gather/scatter schedule needs one node's region");
    }
    o = weft_sched_alloc(s, sizeof(*o));
    if (o == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a shared-memory gather or scatter");
    }
    memset(o, 0, sizeof(*o));
    o->h.sh    = cc->shm;
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

NO_SCHEDULE(alltoall)
