/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Private to src/coll/shm: the node-shared region of a communicator, its
 * counters and rounds, and the node-level operations the algorithms are
 * made of. The files:
 *   shm_region.c  region setup and teardown, waiting on counters, round reuse
 *   shm_node.c    blocking node phases: barrier, bcast, reduce, gather, scatter
 *   shm_cma.c     the same by CMA from the root's or the senders' buffers
 *                 (large blocking bcast, scatter, gather, allgather)
 *   shm_algs.c    the registry rows' blocking runs (node phase plus the
 *                 leaders' inter-node phase)
 *   shm_sched.c   non-blocking and persistent calls: the order rule, poll
 *                 steps and the registry rows' schedule builders
 *
 * Shared-memory-aware collectives (and a one-node alltoall): the node-local
 * phase goes through a region shared by the ranks of one node (one region
 * per communicator, created at the first call that selects one of these
 * algorithms); with several nodes, the node leaders run the inter-node phase
 * with an ordinary point-to-point schedule on the leader communicator.
 * Blocking calls run directly, not as schedules; a non-blocking or
 * persistent bcast, reduce, allreduce, gather, allgather or scatter on one
 * node is a schedule of one poll step (see the order rule in shm_sched.c
 * for how it shares the region with the blocking calls).
 *
 * Region (n = ranks of the node), every entry one cache line:
 *   arrive[n] release          barrier counters
 *   post[n][nbuf]              "my contribution for round r is in place"
 *                              (seq = r; up to INLINE_BYTES of data ride in
 *                              the same line, so a small message is one line)
 *   reduced[n]                 "my piece of round r's reduction is done"
 *   done[n]                    "I finished round r" (buffer reuse)
 *   spilled[n] taken[n]        a gatherv block's pieces after the first:
 *                              how many rank j ever wrote to its slots
 *                              outside the rounds, and how many of them
 *                              the roots took (see weft_coll_shm_node_gatherv)
 *   ready[nbuf][PKT_LINES]     broadcast chunk of round r: up to PKT_MAX
 *                              bytes spread over lines that each carry their
 *                              own counter (readers fetch them all at once),
 *                              else line 0 flags a chunk in result[]
 *   slots[n][NSLOT][SLOT_BYTES] contributions larger than SMALL_BYTES
 *                              (large reductions combine in place in the
 *                              last rank's slot, each rank its 1/n piece)
 *   result[NSLOT][SLOT_BYTES]  broadcast chunks larger than a packet
 *   small[n][nbuf][SMALL_BYTES] contributions larger than a line, up to
 *                              SMALL_BYTES: as deep as the lines
 * Every data movement is cut into rounds of at most SLOT_BYTES; round r
 * uses lines and small areas r % nbuf and slots r % NSLOT, and a rank writes
 * into them only once every rank finished round r - nbuf (lines, small
 * areas) or r - NSLOT (slots), so
 * the writer of the next chunk never
 * waits for the readers of the current one (and, knowing how far everyone
 * got, checks again only every few rounds). All counters only grow, and
 * all ranks of the node see the same sequence of rounds (the number of
 * rounds of a call depends only on arguments that must match across
 * ranks), so no counter is ever reset.
 */
#ifndef WEFT_COLL_SHM_INTERNAL_H
#define WEFT_COLL_SHM_INTERNAL_H

#include <stdint.h>
#include <string.h>

#include "coll/coll_internal.h"

/* Rounds in flight (sh->nbuf, at most NBUF): a writer re-reads the other
 * ranks' done counters (a cache miss each) only every few rounds, not
 * before every small message, and a root runs up to nbuf calls ahead of
 * its readers. On a node with more of the region's ranks than CPUs that
 * depth is what back-to-back small collectives get per context switch, so
 * such a node takes NBUF (np 4 on 2 cores, back to back, medians of 4
 * alternating runs: bcast 4-256 B 0.62-0.77 us with 8 rounds, 0.36-0.43
 * with 32; reduce 4-32 B 0.66-0.76 against 0.31-0.35; gather 4-32 B
 * 0.91-0.94 against 0.37-0.44); 128 rather than 32 (np 8 back to back,
 * 4 alternating rounds: gather 4-256 B 0.84-0.98 us against 0.46-0.56,
 * bcast 0.61-0.71 against 0.34-0.42, reduce 0.61-0.88 against 0.47-0.57;
 * np 4 5-35% less; 512 made np 8 scatter 2x slower: more lines than
 * L1 holds). With a CPU per rank, 8 (np 2 pinned,
 * OSU-style: gather 32 B-4 KiB 0.18-0.62 us with 8, 0.24-0.82 with 16 or
 * 32). Only lines and the small areas go
 * deeper: the NSLOT sets of SLOT_BYTES buffers of larger rounds stay at 8
 * (32 sets made np 4 OSU-style gather 4-16 KiB 10.8-14.8 us against
 * 1.9-3.4: n + 1 sets of 16 KiB per round no longer stay in cache), so a
 * round's lines are rewritten once every rank finished round r - nbuf,
 * its slots round r - NSLOT. */
#define NBUF         128
#define NSLOT        8
#define SLOT_BYTES   (16u * 1024u)
#define INLINE_BYTES 56u
/* CMA node phases copy a block from this size by both sides at once even
 * where point-to-point would not (sh->coop_from: point-to-point's measured
 * threshold where it is lower). */
#define COLL_COOP_MAX ((size_t)256 << 10)
/* Contributions up to this size (more than a line) go to a small area per
 * rank and round that cycles with the lines, NBUF deep, not through the
 * 8-deep slots: on an oversubscribed node back-to-back reduce, gather and
 * scatter of 64-256 B otherwise got a context switch every 8 calls (np 4
 * on 2 cores, docs/performance.md "Small areas"). n * NBUF * 512 B. */
#define SMALL_BYTES 512u
/* Up to this many ranks every rank of a one-node barrier reads everyone's
 * counter (one line transfer of latency); above it, a leader collects and
 * releases (two transfers, but no n^2 cache traffic). With more of the
 * region's ranks than CPUs (weft_coll_node_oversubscribed) the leader
 * form always: local rank 0 leaves first, so a rooted
 * collective after a barrier (rank 0 the usual root) finds its root
 * running instead of waiting for it to be scheduled again; with all-read,
 * the last to arrive leaves first and the root, which arrived first, is
 * often descheduled (family 25 AMD VM, np 4 on 2 cores: bcast 4 B 1.2 us
 * against 0.13, scatter 1.9 against 0.24, gather, reduce, allreduce,
 * allgather and alltoall level; the barrier itself costs more, 2.9-3.7
 * against 3.7-4.2 at np 4 and 6.8 against 8.0 at np 8). */
#define BARRIER_ALL_READ_MAX 16
/* Reductions up to this size: every rank reads every contribution and
 * reduces the whole vector itself (one round trip); above, each rank
 * reduces 1/n of it and everyone copies the result. */
#define REDUCE_ALL_MAX 4096u
/* Rounds of a larger reduction written before a rank waits for the others
 * (weft_coll_shm_node_reduce); at most NSLOT / 2, so writing a window never
 * waits for a slot that the window before it still uses. */
#define REDUCE_WINDOW 4
/* Prefetch the next round's buffer for small messages only. */
#define PREFETCH_MAX 4096u
/* Broadcast chunks up to PKT_MAX bytes travel as "packets": INLINE_BYTES
 * per line, each line with its own counter, so a reader needs one round
 * trip for all of them instead of one for a flag and one for the data. */
#define PKT_LINES 8
#define PKT_MAX   (PKT_LINES * INLINE_BYTES)

typedef struct {
    uint64_t seq;
    union {
        unsigned char data[INLINE_BYTES];
        uint64_t      word[INLINE_BYTES / 8]; /* counters updated atomically */
    };
} __attribute__((aligned(64))) line_t;

struct weft_coll_shm {
    weft_comm_t *node;  /* ranks of my node: the parent itself on one node */
    int          n, me;
    uint64_t     round, bar;
    uint64_t     done_floor; /* every rank finished at least this round */
    uint64_t     nbuf;       /* rounds in flight (lines): 8 or NBUF, see NBUF */
    size_t       cma_from;   /* bcasts from this size on go by CMA (SIZE_MAX: never) */
    size_t       coop_from;  /* CMA blocks from this size on are copied by both sides */
    int          barrier_all_read; /* one-node barrier: everyone reads everyone (else a leader) */
    void        *base;
    size_t       bytes;
    line_t      *arrive, *release, *post, *reduced, *done, *spilled, *taken, *ready;
    char        *slots, *result, *small;
    /* Non-blocking and persistent calls in flight on this communicator, in
     * the order they were started (see "Order rule" below). */
    struct shm_op *queue_head, *queue_tail;
    /* Bytes of every round buffer of result[] and of slots[] already in
     * this process's page tables (see weft_coll_shm_prefault). */
    size_t result_mapped, slots_mapped;
    /* A member process was lost: waits on the region return at once and the
     * call in flight fails (it would otherwise wait for a counter nobody
     * advances); lost_world names the process. */
    int broken, lost_world;
};

/* 1 when sh has lost a member (sets sh->broken); cheap while no process of
 * the job is lost. */
int weft_coll_shm_member_lost(struct weft_coll_shm *sh);
/* The error of a call on a region that lost a member (names the process). */
int weft_coll_shm_lost_error(const struct weft_coll_shm *sh, const char *what);

/* ---- counters (inline: the hot path of every node phase) ------------------ */

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

static inline uint64_t round_begin(struct weft_coll_shm *sh)
{
    return ++sh->round;
}

/* Every rank finished round r - depth as far as we know (the cached floor). */
static inline int weft_coll_shm_round_free(const struct weft_coll_shm *sh, uint64_t r,
                                           uint64_t depth)
{
    return r <= depth || sh->done_floor >= r - depth;
}

/* Are round r's buffers free as far as we know (every rank finished round
 * r - nbuf)? Also what makes prefetching them for our next write harmless. */
static inline int buffer_free(const struct weft_coll_shm *sh, uint64_t r)
{
    return weft_coll_shm_round_free(sh, r, sh->nbuf);
}

/* The same for round r's SLOT_BYTES buffers (slots, result). */
static inline int slot_free(const struct weft_coll_shm *sh, uint64_t r)
{
    return weft_coll_shm_round_free(sh, r, NSLOT);
}

static inline void round_end(struct weft_coll_shm *sh, uint64_t r)
{
    publish(&sh->done[sh->me], r);
}

static inline line_t *post_line(struct weft_coll_shm *sh, int j, uint64_t r)
{
    return &sh->post[(size_t)j * sh->nbuf + r % sh->nbuf];
}

/* Where rank j's contribution of len bytes for round r lives: its post
 * line, its small area (both reused after r - nbuf) or its slot (after
 * r - NSLOT, see in_slot). */
static inline unsigned char *contrib(struct weft_coll_shm *sh, int j, uint64_t r, size_t len)
{
    if (len <= INLINE_BYTES) {
        return post_line(sh, j, r)->data;
    }
    if (len <= SMALL_BYTES) {
        return (unsigned char *)sh->small + ((size_t)j * sh->nbuf + r % sh->nbuf) * SMALL_BYTES;
    }
    return (unsigned char *)sh->slots + ((size_t)j * NSLOT + r % NSLOT) * SLOT_BYTES;
}

/* Does a contribution of len bytes live in a slot (the NSLOT reuse rule,
 * weft_coll_shm_round_reuse's slots argument)? */
static inline int in_slot(size_t len)
{
    return len > SMALL_BYTES;
}

/* Bytes of a block of `block` bytes that the round starting at byte off
 * carries (0 once the block is done). */
static inline size_t round_piece(MPI_Count block, MPI_Count off)
{
    return block <= off ? 0 : (size_t)(block - off < SLOT_BYTES ? block - off : SLOT_BYTES);
}

/* Bytes of the largest of n blocks of counts[j] elements of dt, leaving out
 * block skip (-1: none). */
static inline MPI_Count largest_block(const MPI_Count *counts, const weft_datatype_t *dt, int n, int skip)
{
    MPI_Count most = 0;
    for (int j = 0; j < n; j++) {
        MPI_Count bj = j == skip ? 0 : counts[j] * dt->size;
        most         = bj > most ? bj : most;
    }
    return most;
}

static inline line_t *ready_pkt(struct weft_coll_shm *sh, uint64_t r)
{
    return &sh->ready[(r % sh->nbuf) * PKT_LINES];
}

/* Bytes of a len-byte packet carried by the line starting at byte at. */
static inline MPI_Count pkt_piece(size_t len, MPI_Count at)
{
    MPI_Count left = (MPI_Count)len - at;
    return left < INLINE_BYTES ? left : INLINE_BYTES;
}

/* One line of a packet from / to the packed stream of (buf, count, dt) at
 * byte at: a whole line of contiguous data by a fixed-size copy the
 * compiler inlines (a pack call per 56-byte line cost more than the copy),
 * the rest by the datatype engine (which also clamps to count). */
static inline void pkt_line_pack(line_t *l, const weft_datatype_t *dt, MPI_Count count,
                                 const void *buf, MPI_Count at, MPI_Count n)
{
    if (dt->is_contig && n == INLINE_BYTES && at + n <= count * dt->size) {
        memcpy(l->data, (const char *)buf + dt->true_lb + at, INLINE_BYTES);
    } else {
        weft_dt_pack(dt, count, buf, at, l->data, n);
    }
}

static inline void pkt_line_unpack(const line_t *l, const weft_datatype_t *dt, MPI_Count count,
                                   void *buf, MPI_Count at, MPI_Count n)
{
    if (dt->is_contig && n == INLINE_BYTES && at + n <= count * dt->size) {
        memcpy((char *)buf + dt->true_lb + at, l->data, INLINE_BYTES);
    } else {
        weft_dt_unpack(dt, count, buf, at, l->data, n);
    }
}

static inline unsigned char *bcast_data(struct weft_coll_shm *sh, uint64_t r)
{
    return (unsigned char *)sh->result + (r % NSLOT) * SLOT_BYTES;
}

/* The blocks of a gather / allgather / scatter node phase. */
typedef struct {
    const void      *sbuf; /* my block: packed from (sbuf, scount, sdt) */
    MPI_Count        scount;
    weft_datatype_t *sdt;
    void            *rbuf; /* rank j's block unpacked at rbuf + j * rcount * extent */
    MPI_Count        rcount;
    weft_datatype_t *rdt;
} blocks_t;

/* ---- shm_region.c ---- */

/* Before a call that moves bytes per rank through result[] (a broadcast)
 * or slots[] (the others): map the first min(bytes, SLOT_BYTES) of every
 * round buffer of that area at once, the first time a call needs them.
 * Otherwise the first calls of each size take a page fault per 4 KiB and
 * buffer (~1 us each on a VM, on every rank): OSU's 5 large warm-up calls
 * reach only 5 of the 8 buffers, so bcast 16 KiB measured 0.57 us instead
 * of 0.33 (issue 18). Mapping the whole region at creation instead made a
 * communicator's first collective 1-9 ms slower at np 2-8. */
void weft_coll_shm_prefault_more(struct weft_coll_shm *sh, int result, size_t bytes);
static inline void weft_coll_shm_prefault(struct weft_coll_shm *sh, int result, MPI_Count bytes)
{
    size_t want = (size_t)bytes < SLOT_BYTES ? (size_t)bytes : SLOT_BYTES;
    if (want > (result ? sh->result_mapped : sh->slots_mapped)) {
        weft_coll_shm_prefault_more(sh, result, want);
    }
}

/* Wait for l->seq >= v (keeps point-to-point moving); lines[j * stride] >= v
 * for every j != skip. */
void weft_coll_shm_wait_ge(const line_t *l, uint64_t v);
/* Wait until the round-r post of some rank j with pending[j] is in: j (with
 * a lost member, any pending j at once). */
int weft_coll_shm_wait_any_post(struct weft_coll_shm *sh, uint64_t r, const unsigned char *pending);
/* The same for a counter word of a line (*w >= v). */
void weft_coll_shm_wait_word_ge(const uint64_t *w, uint64_t v);
void weft_coll_shm_wait_all(const line_t *lines, size_t stride, int n, int skip, uint64_t v);
/* Before writing into round r's buffers: wait until they are free; the _try
 * form does not wait (1: free). */
/* Before writing into round r's buffers: its lines, and its SLOT_BYTES
 * buffers too when slots (the stricter NSLOT rule, see NBUF). */
void weft_coll_shm_round_reuse(struct weft_coll_shm *sh, uint64_t r, int slots);
int  weft_coll_shm_round_reuse_try(struct weft_coll_shm *sh, uint64_t r, int slots);
/* After every post of round r is in: the first local rank whose posted size
 * tag differs from size, or -1; the MPI_ERR_TRUNCATE that reports it. */
int weft_coll_shm_posted_size_differs(struct weft_coll_shm *sh, uint64_t r, MPI_Count size);
int weft_coll_shm_size_mismatch(const char *what, MPI_Count size, int j,
                                struct weft_coll_shm *sh, uint64_t r);
/* The same, where the other figure is the root's (a scatter's posted tag). */
int weft_coll_shm_root_size_mismatch(const char *what, MPI_Count size, uint64_t posted);
/* MPI_ERR_TRUNCATE: this rank's own block (mine bytes) differs from the
 * size the call's counts give it (expected), e.g. an allgatherv's send count
 * against its recvcounts entry: the others see it in its post, it must too. */
int weft_coll_shm_own_size_mismatch(const char *what, MPI_Count mine, MPI_Count expected);

/* ---- shm_node.c: blocking node phases ---- */

int    weft_coll_shm_node_barrier(struct weft_coll_shm *sh, int (*inter)(void *), void *arg,
                                  int all_read);
/* The barrier's leader (local rank 0) releases barrier b, with the class of
 * its part's error rc (and the lost member, if any) on the release line; a
 * non-leader, once the release line reached b, reads them back: the error
 * to return. */
void   weft_coll_shm_barrier_release(struct weft_coll_shm *sh, uint64_t b, int rc);
int    weft_coll_shm_barrier_released(struct weft_coll_shm *sh, uint64_t b);
size_t weft_coll_shm_bcast_round_write(struct weft_coll_shm *sh, uint64_t r, const void *buf,
                                       MPI_Count count, const weft_datatype_t *dt, MPI_Count off,
                                       int *last);
int    weft_coll_shm_node_bcast(struct weft_coll_shm *sh, void *buf, MPI_Count count,
                                const weft_datatype_t *dt, int lroot);
int    weft_coll_shm_node_reduce(struct weft_coll_shm *sh, const void *mydata, void *rbuf,
                                 MPI_Count count, weft_datatype_t *dt, weft_op_t *op, int all,
                                 int lroot);
/* The same reduction on every rank, each keeping only elements
 * [soff, soff + scnt) of the result (in rbuf) and copying out only them. */
int    weft_coll_shm_node_reduce_scatter(struct weft_coll_shm *sh, const void *mydata, void *rbuf,
                                         MPI_Count count, weft_datatype_t *dt, weft_op_t *op,
                                         MPI_Count soff, MPI_Count scnt);
int    weft_coll_shm_node_gather(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block,
                                 int all, int lroot);
int    weft_coll_shm_node_scatter(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block,
                                  int lroot);
/* The v-forms on one node: blocks of per-rank sizes (elements of the
 * datatype at displacements in elements, as the call gives them). */
int    weft_coll_shm_node_allgatherv(struct weft_coll_shm *sh, const void *sbuf, MPI_Count scount,
                                     weft_datatype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                                     const MPI_Aint *rdispls, weft_datatype_t *rdt);
int    weft_coll_shm_node_gatherv(struct weft_coll_shm *sh, const void *sbuf, MPI_Count scount,
                                  weft_datatype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                                  const MPI_Aint *rdispls, weft_datatype_t *rdt, int lroot);
int    weft_coll_shm_node_scatterv(struct weft_coll_shm *sh, const void *sbuf,
                                   const MPI_Count *scounts, const MPI_Aint *sdispls,
                                   weft_datatype_t *sdt, void *rbuf, MPI_Count rcount,
                                   weft_datatype_t *rdt, int lroot);

/* ---- shm_cma.c: node phases by CMA (from sh->cma_from bytes) ---- */

static inline int weft_coll_shm_cma_wanted(const struct weft_coll_shm *sh, MPI_Count bytes)
{
    return bytes > 0 && (size_t)bytes >= sh->cma_from;
}
/* The size tag of a line that holds a CMA offer (a chunk round's tag is
 * the bytes of its block, see weft_coll_shm_cma_usable). */
#define WEFT_COLL_SHM_CMA_OFFER_TAG ((MPI_Count)SEQ_SIZE_MASK)
/* Offers can be told from chunk rounds by their size tag alone: CMA is on
 * and starts below the all-ones tag, so no chunk round's block carries it
 * (the forms whose readers cannot know the root's choice, scatterv). */
static inline int weft_coll_shm_cma_usable(const struct weft_coll_shm *sh)
{
    return sh->cma_from < (size_t)SEQ_SIZE_MASK;
}
/* Does line l hold an offer (only where offers can be told apart)? */
static inline int weft_coll_shm_cma_is_offer(const struct weft_coll_shm *sh, const line_t *l)
{
    return weft_coll_shm_cma_usable(sh) && seq_size(load(l)) == WEFT_COLL_SHM_CMA_OFFER_TAG;
}
/* Root of a contiguous bcast of total bytes: offer it, help, wait for all. */
int weft_coll_shm_cma_bcast_root(struct weft_coll_shm *sh, const void *buf, MPI_Count total,
                                 const weft_datatype_t *dt);
/* A bcast reader whose round-r line l holds an offer: take it (an MPI
 * code); -1 when l is not an offer (a chunk round). */
int weft_coll_shm_cma_bcast_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l, void *buf,
                                 MPI_Count count, const weft_datatype_t *dt);
/* Scatter root; WEFT_COLL_SHM_CMA_NO_MEMORY, before any round, when its
 * blocks need packing and there is no memory for that. */
#define WEFT_COLL_SHM_CMA_NO_MEMORY (-1)
int weft_coll_shm_cma_scatter_root(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block);
/* A scatter reader: as weft_coll_shm_cma_bcast_read. */
int weft_coll_shm_cma_scatter_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l,
                                   const blocks_t *b, MPI_Count block);
/* Scatterv root, one round: rank j's block offered on its post line (the
 * caller checked weft_coll_shm_cma_usable); returns when all have read. */
int weft_coll_shm_cma_scatterv_root(struct weft_coll_shm *sh, const void *sbuf,
                                    const MPI_Count *scounts, const MPI_Aint *sdispls,
                                    const weft_datatype_t *sdt);
/* A scatterv reader (mine bytes expected) whose post line l holds an offer
 * for round r: take it (an MPI code); -1 when l is not one. */
int weft_coll_shm_cma_scatterv_read(struct weft_coll_shm *sh, uint64_t r, const line_t *l,
                                    void *rbuf, MPI_Count rcount, const weft_datatype_t *rdt,
                                    MPI_Count mine);
/* Gatherv contributor of a block of mine bytes (the CMA size or more, the
 * caller checked weft_coll_shm_cma_usable) in round r: offer it, return
 * when the root has it. */
int weft_coll_shm_cma_gatherv_offer(struct weft_coll_shm *sh, uint64_t r, const void *sbuf,
                                    MPI_Count scount, const weft_datatype_t *sdt, MPI_Count mine);
/* Gatherv root: local rank j's round-r post (already in) is an offer: take
 * it into (buf, count, dt), an MPI code; -1 when it is not an offer. */
int weft_coll_shm_cma_gatherv_take(struct weft_coll_shm *sh, uint64_t r, int j, void *buf,
                                   MPI_Count count, const weft_datatype_t *dt);
/* Gather on lroot, or allgather (all): one round, every rank's block
 * offered and pulled; a rank returns when the receivers are done with it. */
int weft_coll_shm_cma_gather(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block, int all,
                             int lroot);
/* Alltoall, not in place: one round, every rank's send blocks offered and
 * block `me` of each pulled; a rank returns when everyone has read its
 * blocks. */
int weft_coll_shm_cma_alltoall(struct weft_coll_shm *sh, const blocks_t *b, MPI_Count block);

/* ---- shm_sched.c ---- */

/* Before a blocking shared-memory call: finish the non-blocking ones started
 * before it (the order rule). */
void weft_coll_shm_queue_drain(struct weft_coll_shm *sh);

#endif
