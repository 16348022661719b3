/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Node phases by CMA (coll_shm_internal.h). From the size at which two
 * ranks of this node move a message by one CMA copy (weft_p2p_shm_cma_from,
 * kept in sh->cma_from when every member is of this job), a bcast, scatter, gather,
 * allgather or alltoall is one round: the ranks that hold data offer their buffer's
 * address in a line, the ranks that need it pull it from there by CMA all
 * at once, and a rank whose buffer is offered returns when every reader
 * has finished. An alltoall is the same with every rank offering all its
 * send blocks. One copy, none into lines the readers last read: that copy
 * in ran at 2-8 GB/s on the family 25 AMD VM (np 2 bcast 64 KiB took
 * 8-31 us through the region; 6.5 by CMA). A chunk round's size tag is at
 * most SLOT_BYTES, so the all-ones tag marks an offer.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/errors.h"
#include "transport/shm/shm_coll.h"

typedef struct {
    uint64_t addr;   /* the data (block j of a scatter at addr + j * stride) */
    uint64_t total;  /* bytes (per block) */
    uint64_t stride;
    int32_t  pid;
} cma_offer_t;

_Static_assert(sizeof(cma_offer_t) <= INLINE_BYTES, "a CMA offer fits in a line");

/* Publish an offer of bytes at addr (per block, blocks stride apart) on l. */
static void cma_offer(line_t *l, uint64_t r, const void *addr, MPI_Count bytes, MPI_Aint stride)
{
    cma_offer_t o = {(uint64_t)(uintptr_t)addr, (uint64_t)bytes, (uint64_t)stride,
                     (int32_t)getpid()};
    memcpy(l->data, &o, sizeof(o));
    publish(l, seq_make(r, WEFT_COLL_SHM_CMA_OFFER_TAG, 1));
}

static int is_offer(const line_t *l, cma_offer_t *o)
{
    if (seq_size(load(l)) != WEFT_COLL_SHM_CMA_OFFER_TAG) {
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

/* Large offers (from sh->coop_from: point-to-point's measured threshold,
 * at most COLL_COOP_MAX; np 2, 64-128 KiB back to back, 3 alternating
 * rounds against 256 KiB: scatterv 6.1-6.3/9.0-12.1 us against
 * 7.5-9.4/13.4-17.5, gatherv 5.3-5.5/8.7-9.8 against 7.2-9.0/12.9-14.3,
 * bcast 4.3-5.2/6.8-8.5 against 6.1-6.7/10.6-12.0) are
 * copied by both sides at once: each reader publishes its destination in
 * its post line, and the reader (pulling) and the root (pushing, once its
 * offer is out) claim pieces of it from that line's counter
 * (coop_chunk_bytes).
 * Two cores copy, where one CMA call left the root idle. */
#define COOP_CHUNK ((uint64_t)128 << 10)

static inline uint64_t coop_from(const struct weft_coll_shm *sh)
{
    return (uint64_t)sh->coop_from;
}

/* Chunks of a cooperative copy of `bytes`: at most COOP_CHUNK, and at
 * least two (halves, page-rounded) so that both sides have one, as in
 * point-to-point's. */
static uint64_t coop_chunk_bytes(uint64_t bytes)
{
    uint64_t half = (bytes / 2 + 4095) & ~(uint64_t)4095;
    return half < COOP_CHUNK ? half : COOP_CHUNK;
}
/* A reader's line: its destination, pid and chunk count, then the chunk
 * counters (next to claim, done, an errno). A gather contributor's line
 * holds its offer in words 0-3 and the counters after it. */
enum { COOP_DST, COOP_PID, COOP_CHUNKS, COOP_CTR };
/* A scatterv reader's post line first holds the root's offer: the reader
 * answers there (chunks 0 when it pulls alone) and then sets this word to
 * the round, which is what the root waits for. */
#define SCATTERV_COOP_ASKED (INLINE_BYTES / 8 - 1)
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
        uint64_t chunk = coop_chunk_bytes(bytes);
        uint64_t off = k * chunk, len = bytes - off < chunk ? bytes - off : chunk;
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
    uint64_t chunk = coop_chunk_bytes(bytes);
    return (bytes + chunk - 1) / chunk;
}

/* The reading side of a cooperative copy: claim chunks of the n of ctr,
 * reading src in process pid into dst here, then wait for all of them
 * (the other side pushes the rest). */
static int coop_pull(uint64_t *ctr, uint64_t n, int32_t pid, void *dst, uint64_t src,
                     uint64_t bytes, const char *what)
{
    coop_chunks(ctr, n, pid, (uint64_t)(uintptr_t)dst, src, bytes, 0);
    return coop_finish(ctr, n, bytes, pid, what);
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

/* A reader's request in its line l: copy `chunks` chunks into dst in this
 * process (0: it pulls alone), counters from zero. */
static void coop_ask(line_t *l, void *dst, uint64_t chunks)
{
    l->word[COOP_DST]            = (uint64_t)(uintptr_t)dst;
    l->word[COOP_PID]            = (uint64_t)getpid();
    l->word[COOP_CHUNKS]         = chunks;
    l->word[COOP_CTR + CTR_NEXT] = 0;
    l->word[COOP_CTR + CTR_DONE] = 0;
    l->word[COOP_CTR + CTR_ERR]  = 0;
}

/* Reader of an offer of o->total >= coop_from(sh) bytes at src in the root: ask
 * for help when the block lands whole and contiguous at dst (else say no
 * and return -1: the caller pulls alone with cma_take). */
static int coop_read(struct weft_coll_shm *sh, uint64_t r, const cma_offer_t *o, uint64_t src,
                     void *dst, int whole, const char *what)
{
    line_t  *l = post_line(sh, sh->me, r);
    uint64_t n = whole ? coop_nchunks(o->total) : 0;

    weft_coll_shm_round_reuse(sh, r, 1);
    coop_ask(l, dst, n);
    publish(l, seq_make(r, 0, 0));
    if (n == 0) {
        return -1;
    }
    return coop_pull(&l->word[COOP_CTR], n, o->pid, dst, src, o->total, what);
}

int weft_coll_shm_cma_bcast_root(struct weft_coll_shm *sh, const void *buf, MPI_Count total,
                          const weft_datatype_t *dt)
{
    uint64_t r = round_begin(sh);

    weft_coll_shm_round_reuse(sh, r, 1);
    cma_offer(&ready_pkt(sh, r)[0], r, (const char *)buf + dt->true_lb, total, 0);
    if ((uint64_t)total >= coop_from(sh)) {
        coop_help_readers(sh, r, (const char *)buf + dt->true_lb, 0, (uint64_t)total);
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, sh->n, sh->me, r);
    return MPI_SUCCESS;
}

int weft_coll_shm_cma_scatter_root(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block)
{
    MPI_Aint    sstride = (MPI_Aint)b->scount * b->sdt->extent;
    void       *tmp     = NULL;
    const char *base    = (const char *)b->sbuf + b->sdt->true_lb;
    MPI_Aint    stride  = sstride;

    if (!b->sdt->is_contig) { /* every block packed, block bytes apart */
        if ((size_t)block > SIZE_MAX / (size_t)sh->n ||
            (tmp = malloc((size_t)block * (size_t)sh->n)) == NULL) {
            return WEFT_COLL_SHM_CMA_NO_MEMORY;
        }
        for (int j = 0; j < sh->n; j++) {
            weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, 0,
                         (char *)tmp + (size_t)j * (size_t)block, block);
        }
        base   = tmp;
        stride = (MPI_Aint)block;
    }
    uint64_t r = round_begin(sh);
    weft_coll_shm_round_reuse(sh, r, 1);
    cma_offer(&ready_pkt(sh, r)[0], r, base, block, stride);
    if ((uint64_t)block >= coop_from(sh)) {
        coop_help_readers(sh, r, base, stride, (uint64_t)block);
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, sh->n, sh->me, r);
    free(tmp);
    return MPI_SUCCESS;
}

/* Scatterv root: rank j's block (scounts[j] elements of sdt at sdispls[j])
 * offered on j's post line of one round, the ready line flagged after them
 * (the line a reader of a larger block waits on); every reader pulls its
 * own block at once. Blocks of a non-contiguous sdt are packed one after
 * another first; without memory for that every block is offered empty, so
 * the readers report a mismatch instead of waiting. */
int weft_coll_shm_cma_scatterv_root(struct weft_coll_shm *sh, const void *sbuf,
                                    const MPI_Count *scounts, const MPI_Aint *sdispls,
                                    const weft_datatype_t *sdt)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    MPI_Count total = 0;
    char     *tmp   = NULL;
    uint64_t  r;

    if (!sdt->is_contig) {
        for (int j = 0; j < n; j++) {
            total += j == me ? 0 : scounts[j] * sdt->size;
        }
        tmp = (uint64_t)total <= SIZE_MAX ? malloc((size_t)total + 1) : NULL;
        if (tmp == NULL) {
            rc = weft_error(MPI_ERR_NO_MEM, "a scatterv: no memory to pack %lld bytes of send "
                            "blocks", (long long)total);
        }
    }
    if (tmp != NULL) { /* block j at the sum of the blocks before it */
        MPI_Count at = 0;
        for (int j = 0; j < n; j++) {
            if (j != me) {
                weft_dt_pack(sdt, scounts[j], (const char *)sbuf + sdispls[j] * sdt->extent, 0,
                             tmp + at, scounts[j] * sdt->size);
                at += scounts[j] * sdt->size;
            }
        }
    }
    r = round_begin(sh);
    weft_coll_shm_round_reuse(sh, r, 1);
    for (int pass = 0; pass < 2; pass++) { /* offer every block, then help */
        MPI_Count at = 0;
        for (int j = 0; j < n; j++) {
            line_t     *l  = post_line(sh, j, r);
            MPI_Count   bj = rc == MPI_SUCCESS ? scounts[j] * sdt->size : 0;
            const char *src = rc != MPI_SUCCESS ? "" /* nothing to offer: readers see 0 bytes */
                              : tmp != NULL     ? tmp + at
                                                : (const char *)sbuf + sdispls[j] * sdt->extent + sdt->true_lb;
            if (j == me) {
                continue;
            }
            at += bj;
            if (pass == 0) {
                cma_offer(l, r, src, bj, 0);
                continue;
            }
            if ((uint64_t)bj < coop_from(sh)) { /* its reader pulls alone (see coop_read) */
                continue;
            }
            weft_coll_shm_wait_word_ge(&l->word[SCATTERV_COOP_ASKED], r);
            uint64_t chunks = __atomic_load_n(&l->word[COOP_CHUNKS], __ATOMIC_ACQUIRE);
            if (chunks > 0) {
                coop_chunks(&l->word[COOP_CTR], chunks, (int32_t)l->word[COOP_PID],
                            (uint64_t)(uintptr_t)src, l->word[COOP_DST], (uint64_t)bj, 1);
            }
        }
        if (pass == 0) {
            publish(&ready_pkt(sh, r)[0], seq_make(r, WEFT_COLL_SHM_CMA_OFFER_TAG, 1));
        }
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, n, me, r); /* every reader has its block */
    free(tmp);
    return rc;
}

/* A scatterv reader whose post line l holds an offer of its block for
 * round r (mine bytes expected): take it; -1 when l is not an offer, or is
 * an older round's (a two-rank round with the block in the flag's line
 * leaves the post line alone). */
int weft_coll_shm_cma_scatterv_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l,
                                    void *rbuf, MPI_Count rcount, const weft_datatype_t *rdt,
                                    MPI_Count mine)
{
    cma_offer_t o;
    int         rc;

    if (!weft_coll_shm_cma_usable(sh) || (load(l) & SEQ_ROUND_MASK) != r || !is_offer(l, &o)) {
        return -1;
    }
    rc = -1;
    if (o.total >= coop_from(sh)) { /* the root waits for an answer: help, or pull alone */
        line_t  *w      = (line_t *)l; /* our own line: nobody else writes it this round */
        int      whole  = rdt->is_contig && (MPI_Count)o.total == mine;
        uint64_t chunks = whole ? coop_nchunks(o.total) : 0;
        void    *dst    = (char *)rbuf + rdt->true_lb;
        coop_ask(w, dst, chunks);
        __atomic_store_n(&w->word[SCATTERV_COOP_ASKED], r, __ATOMIC_RELEASE);
        if (chunks > 0) {
            coop_chunks(&w->word[COOP_CTR], chunks, o.pid, (uint64_t)(uintptr_t)dst, o.addr,
                        o.total, 0);
            rc = coop_finish(&w->word[COOP_CTR], chunks, o.total, o.pid, "a scatterv");
        }
    }
    if (rc < 0) {
        rc = cma_take(&o, 0, mine, rbuf, rcount, rdt, "a scatterv");
    }
    if ((MPI_Count)o.total < mine && rc == MPI_SUCCESS) {
        rc = weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data to a scatterv "
                        "(%lld bytes here, %llu at the root)", (long long)mine,
                        (unsigned long long)o.total);
    }
    return rc;
}

/* Wait for local rank j's offer of round r into *o: 0, and a mismatch in
 * *rc (the first), when it is not an offer of `block` bytes. */
static int offer_in(struct weft_coll_shm *sh, int j, uint64_t r, MPI_Count block, const char *what,
                    cma_offer_t *o, int *rc)
{
    weft_coll_shm_wait_ge(post_line(sh, j, r), r);
    if (is_offer(post_line(sh, j, r), o) && (MPI_Count)o->total == block) {
        return 1;
    }
    if (*rc == MPI_SUCCESS) {
        *rc = weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data to %s (%lld "
                         "bytes per block here, not what local rank %d offers)", what,
                         (long long)block, j);
    }
    return 0;
}

/* A gather(v) contributor's small area of a round in which it offers its
 * block, unused otherwise: words the root writes (see
 * weft_coll_shm_cma_gatherv_offer; a gather uses only ASK_TAKEN). */
enum { ASK_DST, ASK_PID, ASK_ROUND, ASK_TAKEN };

static uint64_t *ask_words(struct weft_coll_shm *sh, int j, uint64_t r)
{
    return (uint64_t *)(void *)contrib(sh, j, r, SMALL_BYTES);
}

/* A gather(v) contributor offers its block of `bytes` on its post line l
 * for round r, counters of a cooperative copy cleared first. Returns the
 * address offered (*tmp a packed copy, freed by the caller when the round
 * is over); *offered the bytes (0 with no memory to pack: the root reports
 * a mismatch, and *rc the error). */
static const void *gather_offer(line_t *l, uint64_t r, const void *sbuf, MPI_Count scount,
                                const weft_datatype_t *sdt, MPI_Count bytes, void **tmp,
                                MPI_Count *offered, int *rc, const char *what)
{
    const void *src = cma_source(sbuf, scount, sdt, bytes, tmp);

    *offered = bytes;
    if (src == NULL) {
        *rc      = weft_error(MPI_ERR_NO_MEM, "%s: no memory to pack the send block", what);
        src      = "";
        *offered = 0;
    }
    l->word[GATHER_COOP_CTR + CTR_NEXT] = 0;
    l->word[GATHER_COOP_CTR + CTR_DONE] = 0;
    l->word[GATHER_COOP_CTR + CTR_ERR]  = 0;
    cma_offer(l, r, src, *offered, 0);
    return src;
}

/* Both sides copy a gather(v) block of `bytes` (contributor's line l):
 * the contributor pushes its src into dst in the root's process pid, and
 * the root pulls o's block into dst and waits for every chunk. */
static void gather_coop_push(line_t *l, int32_t pid, const void *src, uint64_t dst, uint64_t bytes)
{
    coop_chunks(&l->word[GATHER_COOP_CTR], coop_nchunks(bytes), pid, (uint64_t)(uintptr_t)src,
                dst, bytes, 1);
}

static int gather_coop_pull(line_t *l, const cma_offer_t *o, void *dst, uint64_t bytes,
                            const char *what)
{
    return coop_pull(&l->word[GATHER_COOP_CTR], coop_nchunks(bytes), o->pid, dst, o->addr, bytes,
                     what);
}

/* A gather's root: the offers in the order they come (see
 * weft_coll_shm_node_gatherv), each contributor let go once its block is
 * in (ASK_TAKEN), not when the call ends (np 4 OSU-style, 4 alternating
 * rounds: 128 KiB-1 MiB 32.9/46.9/87.5/179 us against 38.0/53.7/96.3/187). */
int weft_coll_shm_cma_gather(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int all,
                      int lroot)
{
    int         n = sh->n, me = sh->me, want = all || me == lroot, rc = MPI_SUCCESS;
    MPI_Aint    rstride = (MPI_Aint)b->rcount * b->rdt->extent;
    uint64_t    r       = round_begin(sh);
    void       *tmp     = NULL;
    const void *src     = NULL;

    int         coop = !all && (uint64_t)block >= coop_from(sh); /* block matches everywhere */
    MPI_Count   offered = block;

    weft_coll_shm_round_reuse(sh, r, 1);
    if (!want || all) {
        if (!all) {
            __atomic_store_n(&ask_words(sh, me, r)[ASK_TAKEN], 0, __ATOMIC_RELAXED);
        }
        src = gather_offer(post_line(sh, me, r), r, b->sbuf, b->scount, b->sdt, block, &tmp,
                           &offered, &rc, "a gather");
    }
    if (coop && want) { /* my destination, for the contributors to push into (0: pull alone) */
        const char *dst = b->rdt->is_contig ? (const char *)b->rbuf + b->rdt->true_lb : NULL;
        cma_offer(&ready_pkt(sh, r)[0], r, dst, block, rstride);
    } else if (coop) { /* push my block's share into lroot's destination */
        cma_offer_t d;
        weft_coll_shm_wait_ge(&ready_pkt(sh, r)[0], r);
        if (is_offer(&ready_pkt(sh, r)[0], &d) && d.addr != 0 && (MPI_Count)d.total == offered) {
            gather_coop_push(post_line(sh, me, r), d.pid, src, d.addr + d.stride * (uint64_t)me,
                             d.total);
        }
    }
    unsigned char few[64], *pending = !all && n > 2 && n <= 64 ? few : NULL;
    for (int j = 0; pending != NULL && j < n; j++) {
        pending[j] = j != me;
    }
    for (int i = 0; want && i < n - 1; i++) {
        int         j = pending != NULL ? weft_coll_shm_wait_any_post(sh, r, pending) : i + (i >= me);
        cma_offer_t o;
        if (pending != NULL) {
            pending[j] = 0;
        }
        if (!offer_in(sh, j, r, block, "a gather", &o, &rc)) {
            if (!all) {
                __atomic_store_n(&ask_words(sh, j, r)[ASK_TAKEN], r, __ATOMIC_RELEASE);
            }
            continue;
        }
        int prc;
        if (coop && b->rdt->is_contig) { /* j pushes its share meanwhile */
            prc = gather_coop_pull(post_line(sh, j, r), &o,
                                   (char *)b->rbuf + b->rdt->true_lb + j * rstride,
                                   (uint64_t)block, "a gather");
        } else {
            prc = cma_pull(o.pid, o.addr, block, (char *)b->rbuf + j * rstride, b->rcount,
                           b->rdt, "a gather");
        }
        rc = rc == MPI_SUCCESS ? prc : rc;
        if (!all) { /* j may leave */
            __atomic_store_n(&ask_words(sh, j, r)[ASK_TAKEN], r, __ATOMIC_RELEASE);
        }
    }
    round_end(sh, r);
    if (!want) {
        weft_coll_shm_wait_word_ge(&ask_words(sh, me, r)[ASK_TAKEN], r); /* lroot has my block */
    } else if (all) {
        weft_coll_shm_wait_all(sh->done, 1, n, me, r);
    }
    free(tmp);
    return rc;
}

/* Gatherv from a block of at least the CMA size: the contributor offers
 * its buffer on its post line instead of writing pieces (the root tells an
 * offer by its size tag, weft_coll_shm_cma_usable) and returns once the
 * root has it. For a block from sh->coop_from both copy: the
 * root answers in the contributor's small area of the round, unused by a
 * contributor that offers (word 0 its destination, 0 to pull alone; word 1
 * its pid; word 2 the round, written last; both round words cleared by the
 * contributor before it offers). Word 3 is the round once the root has the
 * block: the contributor returns then, not when the root has every block
 * (np 4 OSU-style 128-512 KiB, with the root also taking the posts in the
 * order they come: 25-29/40-46/79-93 us, against 42-46/69-81/122-133 with
 * every contributor waiting for the whole call, in rank order). */
int weft_coll_shm_cma_gatherv_offer(struct weft_coll_shm *sh, uint64_t r, const void *sbuf,
                                    MPI_Count scount, const weft_datatype_t *sdt, MPI_Count mine)
{
    line_t     *l   = post_line(sh, sh->me, r);
    uint64_t   *ask = ask_words(sh, sh->me, r);
    void       *tmp = NULL;
    MPI_Count   offered;
    int         rc = MPI_SUCCESS;

    weft_coll_shm_round_reuse(sh, r, 1);
    __atomic_store_n(&ask[ASK_ROUND], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&ask[ASK_TAKEN], 0, __ATOMIC_RELAXED);
    const void *src = gather_offer(l, r, sbuf, scount, sdt, mine, &tmp, &offered, &rc, "a gatherv");
    round_end(sh, r);
    if ((uint64_t)offered >= coop_from(sh)) {
        weft_coll_shm_wait_word_ge(&ask[ASK_ROUND], r);
        uint64_t dst = __atomic_load_n(&ask[ASK_DST], __ATOMIC_RELAXED);
        if (dst != 0) {
            gather_coop_push(l, (int32_t)ask[ASK_PID], src, dst, (uint64_t)offered);
        }
    }
    weft_coll_shm_wait_word_ge(&ask[ASK_TAKEN], r); /* the root has my block */
    free(tmp);
    return rc;
}

static int gatherv_take(const struct weft_coll_shm *sh, uint64_t r, const cma_offer_t *o, line_t *l,
                        uint64_t *ask, void *buf, MPI_Count count, const weft_datatype_t *dt)
{
    MPI_Count bytes = count * dt->size;
    int       coop  = dt->is_contig && (MPI_Count)o->total == bytes;

    if (o->total >= coop_from(sh)) { /* it waits for our answer */
        ask[ASK_DST] = coop ? (uint64_t)(uintptr_t)((char *)buf + dt->true_lb) : 0;
        ask[ASK_PID] = (uint64_t)getpid();
        __atomic_store_n(&ask[ASK_ROUND], r, __ATOMIC_RELEASE);
    }
    if ((MPI_Count)o->total != bytes) {
        return weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data to a gatherv "
                          "(a local rank sends %llu bytes, the root's receive count says %lld)",
                          (unsigned long long)o->total, (long long)bytes);
    }
    if (coop && o->total >= coop_from(sh)) {
        return gather_coop_pull(l, o, (char *)buf + dt->true_lb, o->total, "a gatherv");
    }
    return cma_pull(o->pid, o->addr, bytes, buf, count, dt, "a gatherv");
}

int weft_coll_shm_cma_gatherv_take(struct weft_coll_shm *sh, uint64_t r, int j, void *buf,
                                   MPI_Count count, const weft_datatype_t *dt)
{
    line_t     *l   = post_line(sh, j, r);
    uint64_t   *ask = ask_words(sh, j, r);
    cma_offer_t o;
    int         rc;

    if (!weft_coll_shm_cma_usable(sh) || !is_offer(l, &o)) {
        return -1;
    }
    rc = gatherv_take(sh, r, &o, l, ask, buf, count, dt);
    __atomic_store_n(&ask[ASK_TAKEN], r, __ATOMIC_RELEASE); /* j may leave */
    return rc;
}

/* Every rank offers its n send blocks (contiguous in place, else packed
 * block bytes apart) and pulls its own block of every other rank's offer,
 * starting with the rank after it so the ranks spread their reads over
 * the sources. One publish and one wait for the readers per call, where
 * pairwise exchange needs a handshake with each partner in turn (on an
 * oversubscribed node each one waits for that partner to be scheduled). */
int weft_coll_shm_cma_alltoall(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block)
{
    int         n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    MPI_Aint    sstride = (MPI_Aint)b->scount * b->sdt->extent;
    MPI_Aint    rstride = (MPI_Aint)b->rcount * b->rdt->extent;
    const char *base    = (const char *)b->sbuf + b->sdt->true_lb;
    MPI_Aint    stride  = sstride;
    MPI_Count   offered = block;
    void       *tmp     = NULL;
    uint64_t    r       = round_begin(sh);

    weft_coll_shm_round_reuse(sh, r, 1);
    if (!b->sdt->is_contig) {
        if ((size_t)block > SIZE_MAX / (size_t)n || (tmp = malloc((size_t)block * (size_t)n)) == NULL) {
            /* offer nothing: the others report a mismatch and everyone leaves */
            rc      = weft_error(MPI_ERR_NO_MEM, "an alltoall: no memory to pack %d send blocks of "
                                                 "%lld bytes", n, (long long)block);
            base    = "";
            stride  = 0;
            offered = 0;
        } else {
            for (int j = 0; j < n; j++) {
                weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, 0,
                             (char *)tmp + (size_t)j * (size_t)block, block);
            }
            base   = tmp;
            stride = (MPI_Aint)block;
        }
    }
    cma_offer(post_line(sh, me, r), r, base, offered, stride);
    if (rc == MPI_SUCCESS) {
        weft_dt_copy((const char *)b->sbuf + me * sstride, b->scount, b->sdt,
                     (char *)b->rbuf + me * rstride, b->rcount, b->rdt);
    }
    for (int k = 1; k < n; k++) {
        int         j = (me + k) % n;
        cma_offer_t o;
        if (!offer_in(sh, j, r, block, "an alltoall", &o, &rc)) {
            continue;
        }
        if (rc == MPI_SUCCESS) {
            rc = cma_pull(o.pid, o.addr + o.stride * (uint64_t)me, block,
                          (char *)b->rbuf + j * rstride, b->rcount, b->rdt, "an alltoall");
        }
    }
    round_end(sh, r);
    weft_coll_shm_wait_all(sh->done, 1, n, me, r); /* everyone has read my blocks */
    free(tmp);
    return rc;
}

int weft_coll_shm_cma_bcast_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l, void *buf,
                                 MPI_Count count, const weft_datatype_t *dt)
{
    MPI_Count   total = count * dt->size;
    cma_offer_t o;
    int         rc = -1;

    if (!is_offer(l, &o)) {
        return -1;
    }
    if (o.total >= coop_from(sh)) {
        rc = coop_read(sh, r, &o, o.addr, (char *)buf + dt->true_lb,
                       dt->is_contig && (MPI_Count)o.total <= total, "a broadcast");
    }
    return rc >= 0 ? rc : cma_take(&o, 0, total, buf, count, dt, "a broadcast");
}

int weft_coll_shm_cma_scatter_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l,
                                   const blocks_t *b, MPI_Count block)
{
    cma_offer_t o;
    int         rc = -1;

    if (!is_offer(l, &o)) {
        return -1;
    }
    if (o.total >= coop_from(sh)) {
        rc = coop_read(sh, r, &o, o.addr + o.stride * (uint64_t)sh->me,
                       (char *)b->rbuf + b->rdt->true_lb,
                       b->rdt->is_contig && (MPI_Count)o.total == block, "a scatter");
    }
    if (rc < 0) {
        rc = cma_take(&o, (MPI_Aint)o.stride * sh->me, block, b->rbuf, b->rcount, b->rdt,
                      "a scatter");
    }
    if ((MPI_Count)o.total < block && rc == MPI_SUCCESS) {
        rc = weft_error(MPI_ERR_TRUNCATE, "ranks passed different amounts of data to a scatter "
                        "(%lld bytes here, %llu at the root)", (long long)block,
                        (unsigned long long)o.total);
    }
    return rc;
}
