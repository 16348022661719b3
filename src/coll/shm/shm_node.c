/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Blocking node phases over the shared region: barrier, broadcast,
 * reduction (whole vector on every reader, or 1/n slices), gather and
 * scatter of blocks, each cut into rounds of at most SLOT_BYTES.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/errors.h"
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
    /* The release line says how the leader's part ended (words 0 and 1:
     * the inter-node phase's error class, the lost member's process + 1),
     * so the others fail with it instead of passing a barrier that did not
     * complete. The leader releases even then: the others would otherwise
     * wait for it until they noticed the loss themselves, if ever. */
    if (sh->me == 0) {
        weft_coll_shm_wait_all(sh->arrive, 1, sh->n, 0, b);
        if (inter && !sh->broken) {
            rc = inter(arg);
        }
        weft_coll_shm_barrier_release(sh, b, rc);
    } else {
        weft_coll_shm_wait_ge(sh->release, b);
        rc = weft_coll_shm_barrier_released(sh, b);
    }
    return rc;
}

void weft_coll_shm_barrier_release(struct weft_coll_shm *sh, uint64_t b, int rc)
{
    sh->release->word[0] = rc == MPI_SUCCESS ? 0 : (uint64_t)weft_error_class_of(rc);
    sh->release->word[1] = sh->broken ? (uint64_t)sh->lost_world + 1 : 0;
    publish(sh->release, b);
}

int weft_coll_shm_barrier_released(struct weft_coll_shm *sh, uint64_t b)
{
    if (!sh->broken && (sh->release->seq & SEQ_ROUND_MASK) >= b) {
        uint64_t cls = sh->release->word[0], lost = sh->release->word[1];
        if (lost != 0) {
            sh->broken     = 1;
            sh->lost_world = (int)(lost - 1);
        } else if (cls != 0) {
            return weft_error((int)cls, "a barrier: the node leader's part across nodes failed");
        }
    }
    return MPI_SUCCESS;
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

/* Broadcast the packed stream of (buf, count, dt) from local rank lroot. */
int weft_coll_shm_node_bcast(struct weft_coll_shm *sh, void *buf, MPI_Count count,
                      const weft_datatype_t *dt, int lroot)
{
    MPI_Count total = count * dt->size, off = 0;
    int       last  = 0, rc = MPI_SUCCESS;

    if (sh->n == 1) {
        return MPI_SUCCESS;
    }
    if (sh->me == lroot && dt->is_contig && weft_coll_shm_cma_wanted(sh, total)) {
        return weft_coll_shm_cma_bcast_root(sh, buf, total, dt);
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
            weft_coll_shm_round_reuse(sh, r, total - off > (MPI_Count)PKT_MAX);
            len   = weft_coll_shm_bcast_round_write(sh, r, buf, count, dt, off, &last);
            lines = len <= PKT_MAX ? (int)((len + INLINE_BYTES - 1) / INLINE_BYTES) : 0;
            if (total <= PREFETCH_MAX && buffer_free(sh, r + 1)) { /* same root next time? */
                weft_prefetch_for_write(ready_pkt(sh, r + 1),
                                        sizeof(line_t) * (size_t)(lines ? lines : 1));
            }
        } else {
            weft_coll_shm_wait_ge(&pkt[0], r);
            uint64_t v = load(&pkt[0]);
            int crc = weft_coll_shm_cma_bcast_read(sh, r, &pkt[0], buf, count, dt);
            if (crc >= 0) { /* an offer: the whole call, in one round */
                rc = rc == MPI_SUCCESS ? crc : rc;
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
 * mydata); elements [soff, soff + scnt) of the result go to rbuf (its
 * first element), on every rank (all) or on local rank lroot. Operands
 * combine in local rank order, so non-commutative ops are right. */
static int node_reduce(struct weft_coll_shm *sh, const void *mydata, void *rbuf, MPI_Count count,
                       weft_datatype_t *dt, weft_op_t *op, int all, int lroot, MPI_Count soff,
                       MPI_Count scnt)
{
    size_t   esize = (size_t)dt->size, total = (size_t)count * esize;
    size_t   sat = (size_t)soff * esize, slen = (size_t)scnt * esize;
    MPI_Aint tlb   = dt->true_lb;
    int      n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    int      want  = all || me == lroot;

    if (n == 1) {
        if (want && (mydata != rbuf || sat != 0) && slen) {
            memmove((char *)rbuf + tlb, (const char *)mydata + tlb + sat, slen);
        }
        return MPI_SUCCESS;
    }
    if (in_slot(total)) {
        weft_coll_shm_prefault(sh, 0, (MPI_Count)total);
    }
    /* Every post carries the call's byte count: ranks whose counts differ
     * report it (and, as everyone reads every post of the first round, all
     * leave together) instead of falling out of step. A zero count is still
     * one round for that reason. */
    if (total <= REDUCE_ALL_MAX) {
        uint64_t r = round_begin(sh);
        int      j;
        weft_coll_shm_round_reuse(sh, r, in_slot(total));
        memcpy(contrib(sh, me, r, total), (const char *)mydata + tlb, total);
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 1));
        if (buffer_free(sh, r + 1)) {
            weft_prefetch_for_write(post_line(sh, me, r + 1), sizeof(line_t));
            if (total > INLINE_BYTES && (!in_slot(total) || slot_free(sh, r + 1))) {
                weft_prefetch_for_write(contrib(sh, me, r + 1, total), total);
            }
        }
        if (want) {
            weft_coll_shm_wait_all(post_line(sh, 0, r), sh->nbuf, n, me, r);
            if ((j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total)) >= 0) {
                round_end(sh, r);
                return weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
            }
            if (total == 0) {
                round_end(sh, r);
                return MPI_SUCCESS;
            }
            /* ((c0 op c1) op ...) evaluated from the right: acc = c[j] op acc */
            memcpy((char *)rbuf + tlb, contrib(sh, n - 1, r, total) + sat, slen);
            for (int j = n - 2; j >= 0 && rc == MPI_SUCCESS && scnt > 0; j--) {
                rc = weft_op_reduce(op, contrib(sh, j, r, total) + sat - tlb, rbuf, scnt, dt);
            }
        }
        round_end(sh, r);
        return rc;
    }
    /* Each rank reduces its 1/n piece of the round in place in the last
     * rank's slot (only the piece's owner touches that part), then everyone
     * copies the whole reduced round out of that slot. After the first
     * round (alone: every rank checks the sizes in it and, if they differ,
     * all stop after it, in step) the rounds go a window at a time: a rank
     * writes its part of up to REDUCE_WINDOW rounds before it waits for
     * anyone, so on a node with more ranks than CPUs it is scheduled about
     * twice per window instead of twice per round. */
    MPI_Count per_round = SLOT_BYTES / esize;
    MPI_Count first     = 0;
    /* An op's error does not stop the rounds: the other ranks are in them. */
    while (first < count) {
        int       rounds = first == 0 ? 1 : REDUCE_WINDOW;
        uint64_t  r0     = sh->round + 1;
        MPI_Count from   = first;
        int       k;

        for (k = 0; k < rounds && first < count; k++, first += per_round) {
            MPI_Count cnt = count - first < per_round ? count - first : per_round;
            uint64_t  r   = round_begin(sh);

            weft_coll_shm_round_reuse(sh, r, 1);
            memcpy(contrib(sh, me, r, (size_t)cnt * esize),
                   (const char *)mydata + tlb + (size_t)first * esize, (size_t)cnt * esize);
            publish(post_line(sh, me, r), seq_make(r, (MPI_Count)total, 0));
        }
        rounds = k;
        for (k = 0; k < rounds; k++) {
            MPI_Count at  = from + (MPI_Count)k * per_round;
            MPI_Count cnt = count - at < per_round ? count - at : per_round;
            uint64_t  r   = r0 + (uint64_t)k;
            size_t    len = (size_t)cnt * esize;
            MPI_Count poff, pcnt;

            weft_coll_shm_wait_all(post_line(sh, 0, r), sh->nbuf, n, me, r);
            weft_coll_block(cnt, n, me, &poff, &pcnt);
            if (at == 0) {
                int j = weft_coll_shm_posted_size_differs(sh, r, (MPI_Count)total);
                if (j >= 0) { /* everyone sees it in this round and leaves after it */
                    rc    = weft_coll_shm_size_mismatch("a reduction", (MPI_Count)total, j, sh, r);
                    pcnt  = 0;
                    want  = 0;
                    first = count; /* no further round */
                }
            }
            if (pcnt > 0 && rc == MPI_SUCCESS) {
                unsigned char *acc = contrib(sh, n - 1, r, len);
                size_t         pat = (size_t)poff * esize;
                for (int j = n - 2; j >= 0 && rc == MPI_SUCCESS; j--) {
                    rc = weft_op_reduce(op, contrib(sh, j, r, len) + pat - tlb, acc + pat - tlb,
                                        pcnt, dt);
                }
            }
            publish(&sh->reduced[me], r);
        }
        for (k = 0; k < rounds; k++) {
            MPI_Count at  = from + (MPI_Count)k * per_round;
            MPI_Count cnt = count - at < per_round ? count - at : per_round;
            uint64_t  r   = r0 + (uint64_t)k;
            MPI_Count lo  = at > soff ? at : soff;
            MPI_Count hi  = at + cnt < soff + scnt ? at + cnt : soff + scnt;

            if (want && lo < hi) { /* the part of my slice this round holds */
                weft_coll_shm_wait_all(sh->reduced, 1, n, me, r);
                memcpy((char *)rbuf + tlb + (size_t)(lo - soff) * esize,
                       contrib(sh, n - 1, r, (size_t)cnt * esize) + (size_t)(lo - at) * esize,
                       (size_t)(hi - lo) * esize);
            }
            round_end(sh, r);
        }
    }
    return rc;
}

int weft_coll_shm_node_reduce(struct weft_coll_shm *sh, const void *mydata, void *rbuf,
                              MPI_Count count, weft_datatype_t *dt, weft_op_t *op, int all,
                              int lroot)
{
    return node_reduce(sh, mydata, rbuf, count, dt, op, all, lroot, 0, count);
}

int weft_coll_shm_node_reduce_scatter(struct weft_coll_shm *sh, const void *mydata, void *rbuf,
                                      MPI_Count count, weft_datatype_t *dt, weft_op_t *op,
                                      MPI_Count soff, MPI_Count scnt)
{
    /* A rank with an empty block only contributes: like a reduction's
     * non-root it leaves a one-round call without waiting. */
    return node_reduce(sh, mydata, rbuf, count, dt, op, 0, scnt > 0 ? sh->me : -1, soff, scnt);
}

/* SLOT_BYTES pieces a block of `bytes` is cut into (0 for an empty one). */
static uint64_t slot_pieces(MPI_Count bytes)
{
    return (uint64_t)((bytes + SLOT_BYTES - 1) / SLOT_BYTES);
}

/* Wait for rank j's post of round r; 1 when it carries the block size
 * expected (else the first mismatch goes to *rc and nothing is read). */
static int post_in(struct weft_coll_shm *sh, int j, uint64_t r, MPI_Count size, const char *what,
                   int *rc)
{
    weft_coll_shm_wait_ge(post_line(sh, j, r), r);
    if (seq_size_is(load(post_line(sh, j, r)), size)) {
        return 1;
    }
    if (*rc == MPI_SUCCESS) {
        *rc = weft_coll_shm_size_mismatch(what, size, j, sh, r);
    }
    return 0;
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
    if (weft_coll_shm_cma_wanted(sh, block)) { /* block must match everywhere, so all ranks take it */
        return weft_coll_shm_cma_gather(sh, b, block, all, lroot);
    }
    if (in_slot((size_t)block)) {
        weft_coll_shm_prefault(sh, 0, block);
    }
    /* Posts carry the block size. With `all` every rank reads every post of
     * the first round, so if the sizes differ all of them notice and stop
     * after it (a rooted gather's root reports it; a multi-round mismatch
     * there can still leave the ranks out of step). At least one round, so
     * a zero-size block meets a non-zero one. */
    do {
        size_t   len = round_piece(block, off);
        uint64_t r   = round_begin(sh);
        if (!want || all) {
            weft_coll_shm_round_reuse(sh, r, in_slot(len));
            weft_dt_pack(b->sdt, b->scount, b->sbuf, off, contrib(sh, me, r, len), (MPI_Count)len);
            publish(post_line(sh, me, r), seq_make(r, block, 0));
        }
        if (want) {
            for (int j = 0; j < n; j++) {
                if (j == me) {
                    continue;
                }
                if (!post_in(sh, j, r, block, "a gather", &rc)) {
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
 * slot (up to SLOT_BYTES per rank and round; a block of up to INLINE_BYTES
 * goes into a line instead: on a two-rank node the flag's line itself, one
 * cache line for the reader to fetch, else rank j's post line of round r,
 * which nobody else uses in a scatter round, and lines cycle deeper than
 * slots on an oversubscribed node, see NBUF) and flags the round on the
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
    if (me == lroot && weft_coll_shm_cma_wanted(sh, block)) { /* the root decides the rounds */
        rc = weft_coll_shm_cma_scatter_root(sh, b, block);
        if (rc != WEFT_COLL_SHM_CMA_NO_MEMORY) {
            return rc;
        }
        rc = MPI_SUCCESS; /* the packed rounds below need no memory */
    }
    weft_coll_shm_prefault(sh, 0, block);
    while (!last) {
        uint64_t r   = round_begin(sh);
        line_t  *pkt = ready_pkt(sh, r);
        if (me == lroot) {
            size_t len = round_piece(block, off);
            last       = off + (MPI_Count)len >= block;
            int small = block <= (MPI_Count)INLINE_BYTES; /* one round, in lines */
            int one   = !in_slot((size_t)block);          /* one round, lines or small areas */
            weft_coll_shm_round_reuse(sh, r, !one);
            if (n == 2 && small) { /* in the flag's own line */
                weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + (1 - me) * sstride, 0,
                             pkt[0].data, block);
            }
            for (int j = 0; j < n && len > 0 && !(n == 2 && small); j++) {
                if (j != me) {
                    weft_dt_pack(b->sdt, b->scount, (const char *)b->sbuf + j * sstride, off,
                                 contrib(sh, j, r, one ? (size_t)block : SLOT_BYTES), (MPI_Count)len);
                }
            }
            publish(&pkt[0], seq_make(r, block, last));
        } else {
            weft_coll_shm_wait_ge(&pkt[0], r);
            int crc = weft_coll_shm_cma_scatter_read(sh, r, &pkt[0], b, block);
            if (crc >= 0) { /* an offer: the whole call, in one round */
                rc = rc == MPI_SUCCESS ? crc : rc;
                round_end(sh, r);
                break;
            }
            uint64_t  v     = load(&pkt[0]);
            MPI_Count rooth = seq_size(v), len, mine;
            last            = (v & SEQ_LAST) != 0;
            if (!seq_size_is(v, block) && rc == MPI_SUCCESS) {
                rc = weft_coll_shm_root_size_mismatch("a scatter", block, v);
            }
            /* the root's block size is known modulo 8 MiB only: copy what
             * this round holds for us and fits our buffer */
            len  = last ? (block - off) : SLOT_BYTES;
            mine = block - off < len ? block - off : len;
            /* a block of up to SMALL_BYTES is one round (the root's size
             * says so: off 0) in our post line or small area, and one of up
             * to a line on a two-rank node in the flag's line */
            int one = off == 0 && last && !in_slot((size_t)rooth);
            if (rc == MPI_SUCCESS && mine > 0) {
                weft_dt_unpack(b->rdt, b->rcount, b->rbuf, off,
                               !one                                       ? contrib(sh, me, r, SLOT_BYTES)
                               : n == 2 && rooth <= (MPI_Count)INLINE_BYTES ? pkt[0].data
                                                                            : contrib(sh, me, r, (size_t)rooth),
                               mine);
            }
        }
        off += SLOT_BYTES;
        round_end(sh, r);
    }
    return rc;
}

/* One node: every rank's block, each of its own size (rcounts[j] elements
 * of rdt at rdispls[j], known to all), on every rank. Rounds cover the
 * same byte range of every block, as many as the largest block needs; a
 * post carries its writer's block size, and everyone reads every post of
 * the first round, so a send count that disagrees with its rcounts entry
 * stops all ranks after it (rcounts that differ between ranks can still
 * leave them out of step, as in the gather). */
int weft_coll_shm_node_allgatherv(struct weft_coll_shm *sh, const void *sbuf, MPI_Count scount,
                                  weft_datatype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                                  const MPI_Aint *rdispls, weft_datatype_t *rdt)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    MPI_Count mine = scount * sdt->size, off = 0, most;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    most = largest_block(rcounts, rdt, n, -1);
    if (in_slot(round_piece(most, 0))) {
        weft_coll_shm_prefault(sh, 0, most);
    }
    do {
        uint64_t r   = round_begin(sh);
        size_t   len = round_piece(mine, off);
        weft_coll_shm_round_reuse(sh, r, in_slot(round_piece(most, off)));
        if (len > 0) {
            weft_dt_pack(sdt, scount, sbuf, off, contrib(sh, me, r, len), (MPI_Count)len);
        }
        publish(post_line(sh, me, r), seq_make(r, mine, 0));
        for (int j = 0; j < n; j++) {
            MPI_Count bj = rcounts[j] * rdt->size;
            size_t    lj = round_piece(bj, off);
            if (j == me) { /* the others see a wrong size in my post and stop: so must I */
                if (mine != bj && rc == MPI_SUCCESS) {
                    rc = weft_coll_shm_own_size_mismatch("an allgatherv", mine, bj);
                }
                continue;
            }
            if (!post_in(sh, j, r, bj, "an allgatherv", &rc)) {
                continue;
            }
            if (lj > 0) {
                weft_dt_unpack(rdt, rcounts[j], (char *)rbuf + rdispls[j] * rdt->extent, off,
                               contrib(sh, j, r, lj), (MPI_Count)lj);
            }
        }
        round_end(sh, r);
        off += SLOT_BYTES;
    } while (off < most && rc == MPI_SUCCESS);
    return rc;
}

/* One node, the root's blocks of their own sizes (scounts[j] elements of
 * sdt at sdispls[j]): as in the scatter the root packs round r's piece of
 * rank j's block into rank j's area and decides the rounds. Rank j's post
 * line of the round, unused by anyone else in a scatter round, is all it
 * waits on: it carries the block size the root has for it (a receive count
 * that disagrees is reported and nothing is read), the last-round bit and,
 * up to INLINE_BYTES, the data. So with more than two ranks a receiver of
 * a small block waits on its own line, written as soon as its block is
 * packed, not after every block as the ready line is (np 4 OSU-style
 * 4-512 B: 0.090-0.099 against 0.100-0.110 us). */
int weft_coll_shm_node_scatterv(struct weft_coll_shm *sh, const void *sbuf, const MPI_Count *scounts,
                                const MPI_Aint *sdispls, weft_datatype_t *sdt, void *rbuf,
                                MPI_Count rcount, weft_datatype_t *rdt, int lroot)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS, last = 0;
    /* the root's receive arguments may be MPI_IN_PLACE's (no datatype) */
    MPI_Count mine = me == lroot ? 0 : rcount * rdt->size, most = mine, off = 0;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    if (me == lroot) {
        most = largest_block(scounts, sdt, n, me);
        if (weft_coll_shm_cma_usable(sh) && weft_coll_shm_cma_wanted(sh, most)) {
            return weft_coll_shm_cma_scatterv_root(sh, sbuf, scounts, sdispls, sdt);
        }
    }
    if (in_slot(round_piece(most, 0))) {
        weft_coll_shm_prefault(sh, 0, most);
    }
    /* On a two-rank node a block of up to a line rides in the flag's own
     * line, as in the scatter: one line for the reader to fetch, not the
     * flag and then its post line. There the flag carries the block size
     * (else 0), and the reader takes the block from it when that round is
     * the first and last and the size fits. */
    while (!last) {
        uint64_t r   = round_begin(sh);
        line_t  *pkt = ready_pkt(sh, r);
        if (me == lroot) {
            int in_flag = n == 2 && most <= (MPI_Count)INLINE_BYTES;
            last        = off + SLOT_BYTES >= most;
            weft_coll_shm_round_reuse(sh, r, in_slot(round_piece(most, off)));
            for (int j = 0; j < n; j++) {
                MPI_Count bj  = scounts[j] * sdt->size;
                size_t    len = round_piece(bj, off);
                if (j == me) {
                    continue;
                }
                if (len > 0) {
                    weft_dt_pack(sdt, scounts[j], (const char *)sbuf + sdispls[j] * sdt->extent,
                                 off, in_flag ? pkt[0].data : contrib(sh, j, r, len),
                                 (MPI_Count)len);
                }
                if (!in_flag) {
                    publish(post_line(sh, j, r), seq_make(r, bj, last));
                }
            }
            publish(&pkt[0], seq_make(r, n == 2 ? most : 0, last));
        } else {
            /* On a two-rank node: the flag's line (which holds a block of
             * up to a line). Else a block in the post line or small area:
             * wait on the post line; blocks in slots: the ready line
             * (waiting on the post line was 25-45% slower at np 4 8-128
             * KiB). */
            int early = n > 2 && !in_slot((size_t)mine);
            weft_coll_shm_wait_ge(early ? post_line(sh, me, r) : &pkt[0], r);
            if (off == 0 && weft_coll_shm_cma_is_offer(sh, early ? post_line(sh, me, r) : &pkt[0])) {
                /* the whole call, in one round */
                int crc = weft_coll_shm_cma_scatterv_read(sh, r, post_line(sh, me, r), rbuf,
                                                          rcount, rdt, mine);
                if (crc >= 0) {
                    rc = crc;
                    round_end(sh, r);
                    break;
                }
            }
            uint64_t f       = n == 2 ? load(&pkt[0]) : 0;
            int      in_flag = n == 2 && off == 0 && (f & SEQ_LAST) &&
                          seq_size(f) <= (MPI_Count)INLINE_BYTES;
            uint64_t v       = in_flag ? f : load(post_line(sh, me, r));
            size_t   len     = round_piece(mine, off);
            last             = (v & SEQ_LAST) != 0;
            if (!seq_size_is(v, mine) && rc == MPI_SUCCESS) {
                rc = weft_coll_shm_root_size_mismatch("a scatterv", mine, v);
            }
            if (rc == MPI_SUCCESS && len > 0) {
                weft_dt_unpack(rdt, rcount, rbuf, off, in_flag ? pkt[0].data : contrib(sh, me, r, len),
                               (MPI_Count)len);
            }
        }
        off += SLOT_BYTES;
        round_end(sh, r);
    }
    return rc;
}

/* One node, every rank's block of its own size on lroot (rcounts[j]
 * elements of rdt at rdispls[j], known only there). A contributor cannot
 * know how many rounds the largest block needs, and waiting for the root to
 * say so cost a context switch per call back to back on a shared CPU (np 4
 * gatherv 4 B 1.7 us against 0.28 by point-to-point). So the call is one
 * round: every block's first SLOT_BYTES go through it as in the gather (the
 * post carries the block size, and the last-round bit when nothing follows),
 * and a longer block's further pieces go through its writer's own slots
 * outside the rounds: the writer counts the pieces it ever wrote in
 * spilled[j], the root the ones it took in taken[j], and the writer reuses a
 * slot once its piece was taken (or, for the NSLOT - 1 pieces after the
 * first, once every rank finished the earlier round that used it) and
 * leaves once all were taken, so its slots are free for the next round. A
 * block whose size disagrees with the root's rcounts entry is reported and
 * its pieces are marked taken unread. */
int weft_coll_shm_node_gatherv(struct weft_coll_shm *sh, const void *sbuf, MPI_Count scount,
                               weft_datatype_t *sdt, void *rbuf, const MPI_Count *rcounts,
                               const MPI_Aint *rdispls, weft_datatype_t *rdt, int lroot)
{
    int       n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    uint64_t  r;
    MPI_Count mine = me == lroot ? 0 : scount * sdt->size;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    r = round_begin(sh);
    if (me != lroot && weft_coll_shm_cma_usable(sh) && weft_coll_shm_cma_wanted(sh, mine)) {
        return weft_coll_shm_cma_gatherv_offer(sh, r, sbuf, scount, sdt, mine);
    }
    if (me != lroot) {
        size_t   len    = round_piece(mine, 0);
        uint64_t pieces = slot_pieces(mine), base;
        line_t  *l      = post_line(sh, me, r);
        if (in_slot(len)) {
            weft_coll_shm_prefault(sh, 0, mine);
        }
        weft_coll_shm_round_reuse(sh, r, in_slot(len));
        if (len > 0) {
            weft_dt_pack(sdt, scount, sbuf, 0, contrib(sh, me, r, len), (MPI_Count)len);
        }
        if (pieces <= 1) {
            publish(l, seq_make(r, mine, 1));
            round_end(sh, r);
            return MPI_SUCCESS;
        }
        /* every earlier piece was taken; read before the post, after which
         * the root starts counting this call's */
        base       = load(&sh->taken[me]);
        l->word[1] = (uint64_t)mine; /* the root skips a mismatched block's pieces */
        publish(l, seq_make(r, mine, 0));
        round_end(sh, r);
        for (uint64_t k = 1; k < pieces; k++) {
            uint64_t at = r + k;
            if (k < NSLOT) { /* the slot's last user was round at - NSLOT */
                if (at > NSLOT) {
                    weft_coll_shm_wait_all(sh->done, 1, n, me, at - NSLOT);
                }
            } else {
                weft_coll_shm_wait_ge(&sh->taken[me], base + k - NSLOT + 1);
            }
            MPI_Count off = (MPI_Count)k * SLOT_BYTES;
            weft_dt_pack(sdt, scount, sbuf, off, contrib(sh, me, at, SLOT_BYTES),
                         (MPI_Count)round_piece(mine, off));
            publish(&sh->spilled[me], base + k + 1);
        }
        weft_coll_shm_wait_ge(&sh->taken[me], base + pieces); /* my slots are free again */
        return MPI_SUCCESS;
    }

    MPI_Count most = largest_block(rcounts, rdt, n, me);
    if (in_slot(round_piece(most, 0))) {
        weft_coll_shm_prefault(sh, 0, most);
    }
    /* Blocks that may come by CMA: the first pieces in the order they come
     * (a contributor whose CPU another rank has is taken last, not waited
     * for while the others wait for us). Else rank order, which polls one
     * line at a time (np 4 OSU-style 4-256 B: 1.4-1.9 us against 1.7-2.3
     * in arrival order), as with one contributor (np 2: 0.15 against 0.16)
     * or without memory for the list. */
    int            any_order = n > 2 && weft_coll_shm_cma_usable(sh) && weft_coll_shm_cma_wanted(sh, most);
    unsigned char  few[64], *pending = !any_order ? NULL : n <= 64 ? few : malloc((size_t)n);
    for (int j = 0; pending != NULL && j < n; j++) {
        pending[j] = j != me;
    }
    for (int i = 0; i < n; i++) { /* the root writes nothing into the region */
        int j = pending != NULL ? (i < n - 1 ? weft_coll_shm_wait_any_post(sh, r, pending) : me) : i;
        MPI_Count bj = rcounts[j] * rdt->size;
        size_t    lj = round_piece(bj, 0);
        if (j == me) {
            continue;
        }
        if (pending != NULL) {
            pending[j] = 0;
        }
        weft_coll_shm_wait_ge(post_line(sh, j, r), r);
        int crc = weft_coll_shm_cma_gatherv_take(sh, r, j, (char *)rbuf + rdispls[j] * rdt->extent,
                                                 rcounts[j], rdt);
        if (crc >= 0) {
            rc = rc == MPI_SUCCESS ? crc : rc;
        } else if (post_in(sh, j, r, bj, "a gatherv", &rc)) {
            if (lj > 0) {
                weft_dt_unpack(rdt, rcounts[j], (char *)rbuf + rdispls[j] * rdt->extent, 0,
                               contrib(sh, j, r, lj), (MPI_Count)lj);
            }
        } else if (!(load(post_line(sh, j, r)) & SEQ_LAST)) { /* skip its pieces unread */
            uint64_t pieces = slot_pieces((MPI_Count)post_line(sh, j, r)->word[1]);
            publish(&sh->taken[j], load(&sh->taken[j]) + pieces);
        }
    }
    if (pending != few) {
        free(pending); /* NULL too */
    }
    /* the further pieces, a round-robin over the writers so that each can
     * run NSLOT - 1 pieces ahead (round r stays open meanwhile, so the
     * posts read above stay in place) */
    for (MPI_Count off = SLOT_BYTES; off < most; off += SLOT_BYTES) {
        uint64_t k = (uint64_t)(off / SLOT_BYTES);
        for (int j = 0; j < n; j++) {
            MPI_Count bj = rcounts[j] * rdt->size;
            if (j == me || bj <= off || !seq_size_is(load(post_line(sh, j, r)), bj) ||
                weft_coll_shm_cma_is_offer(sh, post_line(sh, j, r))) {
                continue;
            }
            uint64_t t = load(&sh->taken[j]); /* pieces before this call + k */
            if (k == 1) {
                publish(&sh->taken[j], ++t); /* the first piece, read in round r */
            }
            weft_coll_shm_wait_ge(&sh->spilled[j], t + 1);
            weft_dt_unpack(rdt, rcounts[j], (char *)rbuf + rdispls[j] * rdt->extent, off,
                           contrib(sh, j, r + k, SLOT_BYTES), (MPI_Count)round_piece(bj, off));
            publish(&sh->taken[j], t + 1);
        }
    }
    round_end(sh, r);
    return rc;
}
