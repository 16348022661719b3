/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Blocking node phases over the shared region: barrier, broadcast,
 * reduction (whole vector on every reader, or 1/n slices), gather and
 * scatter of blocks, each cut into rounds of at most SLOT_BYTES.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/errors.h"
#include "transport/shm/shm_coll.h"
#include "util/cache.h"

/* ---- node-level operations ------------------------------------------------ */

/* Barrier among the node's ranks; between the leader's arrival and release,
 * inter(arg) runs on the leader (NULL: none). */
int weft_coll_shm_node_barrier(struct weft_coll_shm *sh, int (*inter)(void *), void *arg, int all_read)
{
    uint64_t b  = ++sh->bar;
    int      rc = MPI_SUCCESS;

    if (sh->n == 1) {
        return inter ? inter(arg) : MPI_SUCCESS;
    }
    publish(&sh->arrive[sh->me], b);
    if (all_read) {
        weft_coll_shm_wait_all(sh->arrive, 1, sh->n, sh->me, b);
        return MPI_SUCCESS;
    }
    if (sh->me == 0) {
        weft_coll_shm_wait_all(sh->arrive, 1, sh->n, 0, b);
        if (inter) {
            rc = inter(arg);
        }
        publish(sh->release, b);
    } else {
        weft_coll_shm_wait_ge(sh->release, b);
    }
    return rc;
}

/* Broadcast root, round r (its buffers free): the next chunk of the packed
 * stream of (buf, count, dt) from byte off into the region and flagged;
 * returns its length, *last set on the final chunk. */
size_t weft_coll_shm_bcast_round_write(struct weft_coll_shm *sh, uint64_t r, const void *buf,
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
            pkt_line_pack(&pkt[i], dt, count, buf, off + at, pkt_piece(len, at));
            publish(&pkt[i], v);
        }
    } else {
        weft_dt_pack(dt, count, buf, off, bcast_data(sh, r), (MPI_Count)len);
        publish(&pkt[0], v);
    }
    return len;
}

/* Node phases by CMA. From the size at which two ranks of this node move
 * a message by one CMA copy (weft_p2p_shm_cma_from, kept in sh->cma_from
 * when every member is of this job), a bcast, scatter, gather or
 * allgather is one round: the ranks that hold data offer their buffer's
 * address in a line, the ranks that need it pull it from there by CMA all
 * at once, and a rank whose buffer is offered returns when every reader
 * has finished. One copy, none into lines the readers last read: that copy
 * in ran at 2-8 GB/s on the family 25 AMD VM (np 2 bcast 64 KiB took
 * 8-31 us through the region; 6.5 by CMA). A chunk round's size tag is at
 * most SLOT_BYTES, so the all-ones tag marks an offer. */
#define CMA_OFFER_TAG ((MPI_Count)SEQ_SIZE_MASK)

typedef struct {
    uint64_t addr;   /* the data (block j of a scatter at addr + j * stride) */
    uint64_t total;  /* bytes (per block) */
    uint64_t stride;
    int32_t  pid;
} cma_offer_t;

_Static_assert(sizeof(cma_offer_t) <= INLINE_BYTES, "a CMA offer fits in a line");

static int cma_wanted(const struct weft_coll_shm *sh, MPI_Count bytes)
{
    return bytes > 0 && (size_t)bytes >= sh->cma_from;
}

/* Publish an offer of bytes at addr (per block, blocks stride apart) on l. */
static void cma_offer(line_t *l, uint64_t r, const void *addr, MPI_Count bytes, MPI_Aint stride)
{
    cma_offer_t o = {(uint64_t)(uintptr_t)addr, (uint64_t)bytes, (uint64_t)stride,
                     (int32_t)getpid()};
    memcpy(l->data, &o, sizeof(o));
    publish(l, seq_make(r, CMA_OFFER_TAG, 1));
}

static int is_offer(const line_t *l, cma_offer_t *o)
{
    if (seq_size(load(l)) != CMA_OFFER_TAG) {
        return 0;
    }
    memcpy(o, l->data, sizeof(*o));
    return 1;
}

/* The bytes of the stream of (buf, count, dt) as one contiguous piece: the
 * buffer itself, or a packed copy in *tmp (to free). NULL without memory. */
static const void *cma_source(const void *buf, MPI_Count count, const weft_datatype_t *dt,
                              MPI_Count bytes, void **tmp)
{
    *tmp = NULL;
    if (dt->is_contig) {
        return (const char *)buf + dt->true_lb;
    }
    if ((*tmp = malloc((size_t)bytes)) != NULL) {
        weft_dt_pack(dt, count, buf, 0, *tmp, bytes);
    }
    return *tmp;
}

/* take bytes at src in process pid into the stream of (buf, count, dt)
 * from byte 0. */
static int cma_pull(int32_t pid, uint64_t src, MPI_Count take, void *buf, MPI_Count count,
                    const weft_datatype_t *dt, const char *what)
{
    int err;

    if (take <= 0) {
        return MPI_SUCCESS;
    }
    if (dt->is_contig) {
        err = weft_shm_region_cma_copy(pid, (char *)buf + dt->true_lb,
                                       (const void *)(uintptr_t)src, (size_t)take, 0);
    } else {
        unsigned char *tmp = malloc((size_t)take);
        err = tmp ? weft_shm_region_cma_copy(pid, tmp, (const void *)(uintptr_t)src, (size_t)take, 0)
                  : ENOMEM;
        if (err == 0) {
            weft_dt_unpack(dt, count, buf, 0, tmp, take);
        }
        free(tmp);
    }
    if (err != 0) {
        return weft_error(err == ENOMEM ? MPI_ERR_NO_MEM : MPI_ERR_OTHER,
                          "%s: reading %lld bytes from pid %d by CMA failed: %s", what,
                          (long long)take, (int)pid, strerror(err));
    }
    return MPI_SUCCESS;
}

/* A reader's side of an offer of `offered` bytes when its own buffer holds
 * `room`: MPI_ERR_TRUNCATE when it holds less (it takes what fits). */
static int cma_take(const cma_offer_t *o, MPI_Aint at, MPI_Count room, void *buf, MPI_Count count,
                    const weft_datatype_t *dt, const char *what)
{
    MPI_Count take = (MPI_Count)o->total < room ? (MPI_Count)o->total : room;
    int       rc   = cma_pull(o->pid, o->addr + (uint64_t)at, take, buf, count, dt, what);

    if ((MPI_Count)o->total > room && rc == MPI_SUCCESS) {
        rc = weft_error(MPI_ERR_TRUNCATE, "%s: the root sends more data (%llu bytes) than count "
                        "and datatype here hold (%lld bytes)", what,
                        (unsigned long long)o->total, (long long)room);
    }
    return rc;
}

/* Large offers (from COOP_MIN, as point-to-point's cooperative copy) are
 * copied by both sides at once: each reader publishes its destination in
 * its post line, and the reader (pulling) and the root (pushing, once its
 * offer is out) claim COOP_CHUNK pieces of it from that line's counter.
 * Two cores copy, where one CMA call left the root idle. */
#define COOP_MIN   ((uint64_t)256 << 10)
#define COOP_CHUNK ((uint64_t)128 << 10)
/* A reader's line: its destination, pid and chunk count, then the chunk
 * counters (next to claim, done, an errno). A gather contributor's line
 * holds its offer in words 0-3 and the counters after it. */
enum { COOP_DST, COOP_PID, COOP_CHUNKS, COOP_CTR };
#define GATHER_COOP_CTR 4
enum { CTR_NEXT, CTR_DONE, CTR_ERR };

/* Claim and copy chunks of a block of bytes between local (here) and
 * remote (in process pid) until none of n is left: push writes local to
 * remote, else remote is read into local. A failed chunk still counts as
 * done (so nobody waits for it) and leaves its errno in ctr. */
static void coop_chunks(uint64_t *ctr, uint64_t n, int32_t pid, uint64_t local, uint64_t remote,
                        uint64_t bytes, int push)
{
    for (;;) {
        uint64_t k = __atomic_fetch_add(&ctr[CTR_NEXT], 1, __ATOMIC_ACQ_REL);
        if (k >= n) {
            return;
        }
        uint64_t off = k * COOP_CHUNK, len = bytes - off < COOP_CHUNK ? bytes - off : COOP_CHUNK;
        int      err = weft_shm_region_cma_copy(pid, (void *)(uintptr_t)(local + off),
                                                (const void *)(uintptr_t)(remote + off), len, push);
        if (err != 0) {
            __atomic_store_n(&ctr[CTR_ERR], (uint64_t)err, __ATOMIC_RELAXED);
        }
        __atomic_fetch_add(&ctr[CTR_DONE], 1, __ATOMIC_RELEASE);
    }
}

/* Wait until the n chunks of ctr are done: an MPI error naming what when
 * one failed. */
static int coop_finish(uint64_t *ctr, uint64_t n, uint64_t bytes, int32_t pid, const char *what)
{
    weft_coll_shm_wait_word_ge(&ctr[CTR_DONE], n);
    uint64_t err = __atomic_load_n(&ctr[CTR_ERR], __ATOMIC_RELAXED);
    if (err != 0) {
        return weft_error(MPI_ERR_OTHER, "%s: copying %llu bytes with pid %d by CMA failed: %s",
                          what, (unsigned long long)bytes, (int)pid, strerror((int)err));
    }
    return MPI_SUCCESS;
}

static uint64_t coop_nchunks(uint64_t bytes)
{
    return (bytes + COOP_CHUNK - 1) / COOP_CHUNK;
}

/* Root: help every reader that asked for it (round r; reader j's block at
 * base + j * stride). */
static void coop_help_readers(struct weft_coll_shm *sh, uint64_t r, const char *base,
                              MPI_Aint stride, uint64_t bytes)
{
    for (int j = 0; j < sh->n; j++) {
        line_t *l = post_line(sh, j, r);
        if (j == sh->me) {
            continue;
        }
        weft_coll_shm_wait_ge(l, r);
        uint64_t n = __atomic_load_n(&l->word[COOP_CHUNKS], __ATOMIC_ACQUIRE);
        if (n > 0) {
            coop_chunks(&l->word[COOP_CTR], n, (int32_t)l->word[COOP_PID],
                        (uint64_t)(uintptr_t)(base + j * stride), l->word[COOP_DST], bytes, 1);
        }
    }
}

/* Reader of an offer of o->total >= COOP_MIN bytes at src in the root: ask
 * for help when the block lands whole and contiguous at dst (else say no
 * and return -1: the caller pulls alone with cma_take). */
static int coop_read(struct weft_coll_shm *sh, uint64_t r, const cma_offer_t *o, uint64_t src,
                     void *dst, int whole, const char *what)
{
    line_t  *l = post_line(sh, sh->me, r);
    uint64_t n = whole ? coop_nchunks(o->total) : 0;

    weft_coll_shm_round_reuse(sh, r);
    l->word[COOP_DST]              = (uint64_t)(uintptr_t)dst;
    l->word[COOP_PID]              = (uint64_t)getpid();
    l->word[COOP_CHUNKS]           = n;
    l->word[COOP_CTR + CTR_NEXT]   = 0;
    l->word[COOP_CTR + CTR_DONE]   = 0;
    l->word[COOP_CTR + CTR_ERR]    = 0;
    publish(l, seq_make(r, 0, 0));
    if (n == 0) {
        return -1;
    }
    coop_chunks(&l->word[COOP_CTR], n, o->pid, (uint64_t)(uintptr_t)dst, src, o->total, 0);
    return coop_finish(&l->word[COOP_CTR], n, o->total, o->pid, what);
}

static int bcast_cma_root(struct weft_coll_shm *sh, const void *buf, MPI_Count total,
                          const weft_datatype_t *dt)
{
    uint64_t r = round_begin(sh);

    weft_coll_shm_round_reuse(sh, r);
    cma_offer(&ready_pkt(sh, r)[0], r, (const char *)buf + dt->true_lb, total, 0);
    if ((uint64_t)total >= COOP_MIN) {
        coop_help_readers(sh, r, (const char *)buf + dt->true_lb, 0, (uint64_t)total);
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, sh->n, sh->me, r);
    return MPI_SUCCESS;
}

/* Scatter, root: rank j's block at addr + j * stride of the offer.
 * SCATTER_CMA_NO_MEMORY, before any round, when the blocks need packing
 * and there is no memory for that. */
#define SCATTER_CMA_NO_MEMORY (-1)
static int scatter_cma_root(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block)
{
    MPI_Aint    sstride = (MPI_Aint)b->scount * b->sdt->extent;
    void       *tmp     = NULL;
    const char *base    = (const char *)b->sbuf + b->sdt->true_lb;
    MPI_Aint    stride  = sstride;

    if (!b->sdt->is_contig) { /* every block packed, block bytes apart */
        if ((size_t)block > SIZE_MAX / (size_t)sh->n ||
            (tmp = malloc((size_t)block * (size_t)sh->n)) == NULL) {
            return SCATTER_CMA_NO_MEMORY;
        }
        for (int j = 0; j < sh->n; j++) {
            weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, 0,
                         (char *)tmp + (size_t)j * (size_t)block, block);
        }
        base   = tmp;
        stride = (MPI_Aint)block;
    }
    uint64_t r = round_begin(sh);
    weft_coll_shm_round_reuse(sh, r);
    cma_offer(&ready_pkt(sh, r)[0], r, base, block, stride);
    if ((uint64_t)block >= COOP_MIN) {
        coop_help_readers(sh, r, base, stride, (uint64_t)block);
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, sh->n, sh->me, r);
    free(tmp);
    return MPI_SUCCESS;
}

/* Gather (on lroot) or allgather (all): every rank with data offers it in
 * its post line, the receivers pull every other rank's block, and a rank
 * returns when the receivers are done with its block. */
static int gather_cma(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int all,
                      int lroot)
{
    int         n = sh->n, me = sh->me, want = all || me == lroot, rc = MPI_SUCCESS;
    MPI_Aint    rstride = (MPI_Aint)b->rcount * b->rdt->extent;
    uint64_t    r       = round_begin(sh);
    void       *tmp     = NULL;
    const void *src     = NULL;

    int         coop = !all && (uint64_t)block >= COOP_MIN; /* block matches everywhere */
    MPI_Count   offered = block;

    weft_coll_shm_round_reuse(sh, r);
    if (!want || all) {
        line_t *l = post_line(sh, me, r);
        src       = cma_source(b->sbuf, b->scount, b->sdt, block, &tmp);
        if (src == NULL) { /* offer an empty block: the receivers report a mismatch */
            rc      = weft_error(MPI_ERR_NO_MEM, "a gather: no memory to pack the send block");
            src     = "";
            offered = 0;
        }
        l->word[GATHER_COOP_CTR + CTR_NEXT] = 0;
        l->word[GATHER_COOP_CTR + CTR_DONE] = 0;
        l->word[GATHER_COOP_CTR + CTR_ERR]  = 0;
        cma_offer(l, r, src, offered, 0);
    }
    if (coop && want) { /* my destination, for the contributors to push into (0: pull alone) */
        const char *dst = b->rdt->is_contig ? (const char *)b->rbuf + b->rdt->true_lb : NULL;
        cma_offer(&ready_pkt(sh, r)[0], r, dst, block, rstride);
    } else if (coop) { /* push my block's share into lroot's destination */
        cma_offer_t d;
        weft_coll_shm_wait_ge(&ready_pkt(sh, r)[0], r);
        if (is_offer(&ready_pkt(sh, r)[0], &d) && d.addr != 0 && (MPI_Count)d.total == offered) {
            coop_chunks(&post_line(sh, me, r)->word[GATHER_COOP_CTR], coop_nchunks(d.total),
                        d.pid, (uint64_t)(uintptr_t)src, d.addr + d.stride * (uint64_t)me,
                        d.total, 1);
        }
    }
    if (want) {
        for (int j = 0; j < n; j++) {
            cma_offer_t o;
            if (j == me) {
                continue;
            }
            weft_coll_shm_wait_ge(post_line(sh, j, r), r);
            if (!is_offer(post_line(sh, j, r), &o) || (MPI_Count)o.total != block) {
                if (rc == MPI_SUCCESS) {
                    rc = weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data "
                                    "to a gather (%lld bytes here, not what local rank %d "
                                    "offers)", (long long)block, j);
                }
                continue;
            }
            int prc;
            if (coop && b->rdt->is_contig) { /* j pushes its share meanwhile */
                line_t *l = post_line(sh, j, r);
                coop_chunks(&l->word[GATHER_COOP_CTR], coop_nchunks((uint64_t)block), o.pid,
                            (uint64_t)(uintptr_t)((char *)b->rbuf + b->rdt->true_lb + j * rstride),
                            o.addr, (uint64_t)block, 0);
                prc = coop_finish(&l->word[GATHER_COOP_CTR], coop_nchunks((uint64_t)block),
                                  (uint64_t)block, o.pid, "a gather");
            } else {
                prc = cma_pull(o.pid, o.addr, block, (char *)b->rbuf + j * rstride, b->rcount,
                               b->rdt, "a gather");
            }
            rc = rc == MPI_SUCCESS ? prc : rc;
        }
    }
    round_end(sh, r);
    if (!want) {
        weft_coll_shm_wait_ge(&sh->done[lroot], r); /* lroot has read my block */
    } else if (all) {
        weft_coll_shm_wait_all(sh->done, 1, n, me, r);
    }
    free(tmp);
    return rc;
}

/* Broadcast the packed stream of (buf, count, dt) from local rank lroot. */
int weft_coll_shm_node_bcast(struct weft_coll_shm *sh, void *buf, MPI_Count count,
                      const weft_datatype_t *dt, int lroot)
{
    MPI_Count total = count * dt->size, off = 0;
    int       last  = 0, rc = MPI_SUCCESS;

    if (sh->n == 1) {
        return MPI_SUCCESS;
    }
    if (sh->me == lroot && dt->is_contig && cma_wanted(sh, total)) {
        return bcast_cma_root(sh, buf, total, dt);
    }
    if (total > (MPI_Count)PKT_MAX) {
        weft_coll_shm_prefault(sh, 1, total);
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
            weft_coll_shm_round_reuse(sh, r);
            len   = weft_coll_shm_bcast_round_write(sh, r, buf, count, dt, off, &last);
            lines = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;
            if (total <= PREFETCH_MAX && buffer_free(sh, r + 1)) { /* same root next time? */
                weft_prefetch_for_write(ready_pkt(sh, r + 1),
                                        sizeof(line_t) * (size_t)(lines ? lines : 1));
            }
        } else {
            weft_coll_shm_wait_ge(&pkt[0], r);
            uint64_t v = load(&pkt[0]);
            cma_offer_t o;
            if (is_offer(&pkt[0], &o)) { /* the whole call, in one round */
                int prc = -1;
                if (o.total >= COOP_MIN) {
                    prc = coop_read(sh, r, &o, o.addr, (char *)buf + dt->true_lb,
                                    dt->is_contig && (MPI_Count)o.total <= total, "a broadcast");
                }
                if (prc < 0) {
                    prc = cma_take(&o, 0, total, buf, count, dt, "a broadcast");
                }
                rc = rc == MPI_SUCCESS ? prc : rc;
                round_end(sh, r);
                break;
            }
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
                    weft_coll_shm_wait_ge(&pkt[i], r);
                    pkt_line_unpack(&pkt[i], dt, count, buf, off + at, pkt_piece(len, at));
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

/* Reduce count elements of contiguous dt from every local rank (mine at
 * mydata) into rbuf: on every rank (all) or on local rank lroot. Operands
 * combine in local rank order, so non-commutative ops are right. */
int weft_coll_shm_node_reduce(struct weft_coll_shm *sh, const void *mydata, void *rbuf, MPI_Count count,
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
    if (total > INLINE_BYTES) {
        weft_coll_shm_prefault(sh, 0, (MPI_Count)total);
    }
    /* Every post carries the call's byte count: ranks whose counts differ
     * report it (and, as everyone reads every post of the first round, all
     * leave together) instead of falling out of step. A zero count is still
     * one round for that reason. */
    if (total <= REDUCE_ALL_MAX) {
        uint64_t r = round_begin(sh);
        int      j;
        weft_coll_shm_round_reuse(sh, r);
        memcpy(contrib(sh, me, r, total), (const char *)mydata + tlb, total);
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 1));
        if (buffer_free(sh, r + 1)) {
            weft_prefetch_for_write(post_line(sh, me, r + 1), sizeof(line_t));
            if (total > INLINE_BYTES) {
                weft_prefetch_for_write(contrib(sh, me, r + 1, total), total);
            }
        }
        if (want) {
            weft_coll_shm_wait_all(sh->post + r % NBUF, NBUF, n, me, r);
            if ((j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total)) >= 0) {
                round_end(sh, r);
                return weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
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

        weft_coll_shm_round_reuse(sh, r);
        memcpy(contrib(sh, me, r, len), (const char *)mydata + tlb + at, len);
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 0));
        weft_coll_shm_wait_all(sh->post + r % NBUF, NBUF, n, me, r);
        acc = contrib(sh, n - 1, r, len);
        weft_coll_block(cnt, n, me, &poff, &pcnt);
        if (first == 0) {
            int j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total);
            if (j >= 0) { /* everyone sees it in this round and leaves after it */
                rc   = weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
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
            weft_coll_shm_wait_all(sh->reduced, 1, n, me, r);
            memcpy((char *)rbuf + tlb + at, acc, len);
        }
        round_end(sh, r);
    }
    return rc;
}

/* Every local rank's block (block bytes each) gathered on lroot, or on
 * every rank (all), packed and unpacked through the callers' datatypes. */
int weft_coll_shm_node_gather(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int all,
                       int lroot)
{
    int       n = sh->n, me = sh->me, want = all || me == lroot, rc = MPI_SUCCESS;
    MPI_Aint  rstride = (MPI_Aint)b->rcount * b->rdt->extent;
    MPI_Count off     = 0;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    if (cma_wanted(sh, block)) { /* block must match everywhere, so all ranks take it */
        return gather_cma(sh, b, block, all, lroot);
    }
    if (block > (MPI_Count)INLINE_BYTES) {
        weft_coll_shm_prefault(sh, 0, block);
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
            weft_coll_shm_round_reuse(sh, r);
            weft_dt_pack(b->sdt, b->scount, b->sbuf, off, contrib(sh, me, r, len), (MPI_Count)len);
            publish(post_line(sh, me, r), seq_make(r, block, 0));
        }
        if (want) {
            for (int j = 0; j < n; j++) {
                if (j == me) {
                    continue;
                }
                weft_coll_shm_wait_ge(post_line(sh, j, r), r);
                if (!seq_size_is(load(post_line(sh, j, r)), block)) {
                    if (rc == MPI_SUCCESS) {
                        rc = weft_coll_shm_size_mismatch("a gather", block, j, sh, r);
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
int weft_coll_shm_node_scatter(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int lroot)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS, last = 0;
    MPI_Aint  sstride = (MPI_Aint)b->scount * b->sdt->extent;
    MPI_Count off     = 0;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    if (me == lroot && cma_wanted(sh, block)) { /* the root decides the rounds */
        rc = scatter_cma_root(sh, b, block);
        if (rc != SCATTER_CMA_NO_MEMORY) {
            return rc;
        }
        rc = MPI_SUCCESS; /* the packed rounds below need no memory */
    }
    weft_coll_shm_prefault(sh, 0, block);
    while (!last) {
        uint64_t r   = round_begin(sh);
        line_t  *pkt = ready_pkt(sh, r);
        if (me == lroot) {
            size_t len = (size_t)(block - off < SLOT_BYTES ? block - off : SLOT_BYTES);
            last       = off + (MPI_Count)len >= block;
            weft_coll_shm_round_reuse(sh, r);
            for (int j = 0; j < n && len > 0; j++) {
                if (j != me) {
                    weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, off,
                                 contrib(sh, j, r, SLOT_BYTES), (MPI_Count)len);
                }
            }
            publish(&pkt[0], seq_make(r, block, last));
        } else {
            weft_coll_shm_wait_ge(&pkt[0], r);
            cma_offer_t o;
            if (is_offer(&pkt[0], &o)) { /* the whole call, in one round */
                int prc = -1;
                if (o.total >= COOP_MIN) {
                    prc = coop_read(sh, r, &o, o.addr + o.stride * (uint64_t)me,
                                    (char *)b->rbuf + b->rdt->true_lb,
                                    b->rdt->is_contig && (MPI_Count)o.total == block, "a scatter");
                }
                if (prc < 0) {
                    prc = cma_take(&o, (MPI_Aint)o.stride * me, block, b->rbuf, b->rcount, b->rdt,
                                   "a scatter");
                }
                rc = rc == MPI_SUCCESS ? prc : rc;
                if ((MPI_Count)o.total < block && rc == MPI_SUCCESS) {
                    rc = weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data "
                                    "to a scatter (%lld bytes here, %llu at the root)",
                                    (long long)block, (unsigned long long)o.total);
                }
                round_end(sh, r);
                break;
            }
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
