/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The shared-memory rows of algorithms.def, blocking form (the _run
 * functions): the node phase through the region and, with several nodes,
 * the node leaders' inter-node phase as an ordinary collective on the
 * leader communicator. A blocking call first drains the communicator's
 * non-blocking shared-memory calls (the order rule, shm_sched.c).
 */
#include <stdlib.h>
#include <string.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/errors.h"
#include "core/pt2pt.h"
#include "core/runtime.h"

/* ---- the algorithms ------------------------------------------------------------- */

/* Run alg on a sub-communicator (the leaders' phase) to completion. */
static int run_sub(weft_coll_args_t *sub)
{
    int alg, rc;

    sub->nested   = 1;
    sub->blocking = 1;
    alg           = weft_coll_select(sub, &rc);
    if (alg < 0) {
        return rc != MPI_SUCCESS ? rc
                                 : weft_error(MPI_ERR_INTERN, "no %s algorithm for the node leaders",
                                              weft_coll_names[sub->coll]);
    }
    return weft_coll_run_blocking(alg, sub);
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
        return weft_coll_shm_node_barrier(sh, NULL, NULL, sh->barrier_all_read);
    }
    (void)a;
    return weft_coll_shm_node_barrier(sh, cc->leader_comm ? leader_barrier : NULL, cc->leader_comm, 0);
}

static int bcast_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh = cc->shm;
    int                   rc = MPI_SUCCESS, root_node;

    if (cc->nodes == 1) {
        return weft_coll_shm_node_bcast(sh, a->rbuf, a->count, a->dt, a->root);
    }
    root_node = cc->node_index[a->root];
    if (cc->node_id == root_node) {
        rc = weft_coll_shm_node_bcast(sh, a->rbuf, a->count, a->dt, local_index(cc, a->root));
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
        int nrc = weft_coll_shm_node_bcast(sh, a->rbuf, a->count, a->dt, 0);
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
        return weft_coll_shm_node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 0, a->root);
    }
    rl  = cc->leader_of[a->root];
    acc = leader_acc(a, !cc->is_leader || comm->rank == a->root, &tmp);
    /* a non-leader's acc is never written (its recvbuf, insignificant at a
     * non-root, may be NULL) */
    if (acc == NULL && cc->is_leader && comm->rank != a->root) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a reduction temporary");
    }
    rc = weft_coll_shm_node_reduce(sh, mine, acc, a->count, a->dt, a->op, 0, 0);
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
        return weft_coll_shm_node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 1, 0);
    }
    rc = weft_coll_shm_node_reduce(sh, mine, a->rbuf, a->count, a->dt, a->op, 0, 0);
    if (rc == MPI_SUCCESS && cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t sub = *a;
        sub.comm             = cc->leader_comm;
        sub.sbuf             = MPI_IN_PLACE;
        rc                   = run_sub(&sub);
    }
    if (weft_coll_shm_node_bcast(sh, a->rbuf, a->count, a->dt, 0) != MPI_SUCCESS && rc == MPI_SUCCESS) {
        rc = weft_error(MPI_ERR_INTERN, "allreduce: node broadcast of the result disagreed");
    }
    return rc;
}

/* One node (shm_allowed): counts[i] elements of the result for rank i. */
static int reduce_scatter_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc,
                              const MPI_Count *counts)
{
    weft_comm_t *comm  = a->comm;
    MPI_Count    total = 0, mine = 0;

    for (int i = 0; i < comm->size; i++) {
        mine += i < comm->rank ? counts[i] : 0;
        total += counts[i];
    }
    return weft_coll_shm_node_reduce_scatter(cc->shm, weft_coll_mydata(a), a->rbuf, total, a->dt,
                                             a->op, mine, counts[comm->rank]);
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
        rc = weft_coll_shm_node_gather(cc->shm, &nb, block, 0, 0);
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
        int brc = weft_coll_shm_node_bcast(cc->shm, full, p * block, weft_coll_byte, 0);
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
    return weft_coll_shm_node_gather(cc->shm, &b, block, all, a->root);
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
    return weft_coll_shm_node_scatter(cc->shm, &b, block, root);
}

/* One node: every rank packs all its outgoing blocks into its slot (block
 * j at j * piece), then unpacks block `me` of every other rank's slot.
 * From the size where point-to-point uses CMA (not in place), every rank
 * pulls its blocks from the others' send buffers instead (shm_cma.c).
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

    if (!inplace && weft_coll_shm_cma_wanted(sh, block)) { /* block matches everywhere */
        blocks_t b = {a->sbuf, a->scount, a->sdt, a->rbuf, a->rcount, a->rdt};
        return weft_coll_shm_cma_alltoall(sh, &b, block);
    }
    /* Posts carry the block size; everyone reads every post, so a size
     * mismatch is seen by all in the first round and all stop after it. */
    do {
        size_t         len  = (size_t)(block - off < piece ? block - off : piece);
        size_t         all  = len * (size_t)n; /* this round's bytes per slot */
        uint64_t       r    = round_begin(sh);
        unsigned char *mine = contrib(sh, me, r, all);
        weft_coll_shm_round_reuse(sh, r, in_slot(all));
        for (int j = 0; j < n; j++) {
            weft_dt_pack(sdt, scount, sbuf + j * sstride, off, mine + (size_t)j * len,
                         (MPI_Count)len);
        }
        publish(post_line(sh, me, r), seq_make(r, block, 0));
        for (int j = 0; j < n; j++) {
            if (j != me) {
                weft_coll_shm_wait_ge(post_line(sh, j, r), r);
            }
        }
        int j = weft_coll_shm_posted_size_differs(sh, r, block);
        if (j >= 0) {
            rc = weft_coll_shm_size_mismatch("an alltoall", block, j, sh, r);
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

/* alltoallv streams whose longest one holds more than this per destination
 * leave the region after its first round for point-to-point linear, as the
 * alltoall rules do above 4 KiB blocks (default.rules). */
#define ALLTOALLV_SHM_BLOCK_MAX 4096u

/* Bytes [from, from + len) of my alltoallv stream (the header hdr of
 * hbytes, then my send blocks in destination order) into dst. */
static void stream_pack(const weft_coll_args_t *a, const uint64_t *hdr, size_t hbytes, int n,
                        uint64_t from, size_t len, unsigned char *dst)
{
    if (from < hbytes) {
        size_t h = hbytes - from < len ? hbytes - from : len;
        memcpy(dst, (const char *)hdr + from, h);
        dst += h, from += h, len -= h;
    }
    for (int d = 0; d < n && len > 0; d++) {
        uint64_t b0 = d == 0 ? hbytes : hdr[d], b1 = hdr[d + 1];
        if (b1 <= from) {
            continue;
        }
        size_t take = b1 - from < len ? (size_t)(b1 - from) : len;
        weft_dt_pack(a->sdt, a->scounts[d], (const char *)a->sbuf + a->sdispls[d] * a->sdt->extent,
                     (MPI_Count)(from - b0), dst, (MPI_Count)take);
        dst += take, from += take, len -= take;
    }
}

/* One node, blocks of per-pair sizes: every rank writes one stream, a
 * header (the stream's length, then where each block ends) followed by its
 * send blocks in destination order, cut into rounds of SLOT_BYTES, and
 * reads its own block out of every other stream. Round 0 holds every
 * header, so after it everyone knows the longest stream and thus the
 * rounds, the same everywhere without asking anyone. A block whose size
 * disagrees with the reader's receive count is reported and not read. */
static int alltoallv_shm(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    struct weft_coll_shm *sh = cc->shm;
    int                   n = sh->n, me = sh->me, rc = MPI_SUCCESS;
    size_t                hbytes = (size_t)(n + 1) * sizeof(uint64_t);
    uint64_t              local[3 * 64 + 1], *hdr = local, *b0, *b1, longest = 0, rounds = 1;
    uint64_t              switch_at; /* a longer stream sends the call to linear */
    int                   lrc = MPI_SUCCESS;

    if (hbytes > SLOT_BYTES) { /* 2047 ranks or more: the header must fit round 0 */
        return weft_coll_run_blocking(WEFT_ALG_ALLTOALLV_INTRA_linear, a);
    }
    if (n > 64 && (hdr = malloc((3 * (size_t)n + 1) * sizeof(uint64_t))) == NULL) {
        weft_runtime_abort(1, "out of memory (alltoallv stream header)"); /* the others are in step */
    }
    b0 = hdr + n + 1, b1 = b0 + n;
    switch_at = hbytes + (uint64_t)(n - 1) * ALLTOALLV_SHM_BLOCK_MAX;
    uint64_t at = hbytes; /* where block d ends in my stream */
    for (int d = 0; d < n; d++) {
        at += d == me ? 0 : (uint64_t)(a->scounts[d] * a->sdt->size);
        hdr[1 + d] = at;
    }
    hdr[0] = at;
    for (uint64_t k = 0; k < rounds; k++) {
        uint64_t from = k * SLOT_BYTES, r = round_begin(sh);
        size_t   len  = hdr[0] > from ? (size_t)(hdr[0] - from < SLOT_BYTES ? hdr[0] - from : SLOT_BYTES) : 0;
        if (hdr[0] > switch_at) { /* the call leaves after round 0: only my header */
            len = hbytes;
        }
        weft_coll_shm_round_reuse(sh, r, in_slot(len));
        stream_pack(a, hdr, hbytes, n, from, len, contrib(sh, me, r, len));
        publish(post_line(sh, me, r), seq_make(r, (MPI_Count)len, 0));
        if (k == 0 && hdr[0] > switch_at) {
            /* My own stream is too long, so the longest is: the call goes
             * to linear, and I start it now instead of after every header
             * is in. Everyone posted its header before it could block in
             * linear, so those who wait for the headers below get them.
             * Waiting for every header cost 15-40% OSU-style at np 8 from
             * 8 KiB. But back to back, ranks that ran into the next call's
             * sends while others were still receiving cost up to 17% from
             * 64 KiB, so I wait until everyone finished the previous round,
             * which after a barrier or other work has long happened
             * (docs/performance.md "alltoallv: linear at once"). */
            if (r > 1) {
                weft_coll_shm_wait_all(sh->done, 1, n, me, r - 1);
            }
            lrc = weft_coll_run_blocking(WEFT_ALG_ALLTOALLV_INTRA_linear, a);
        }
        weft_coll_shm_wait_all(sh->post + r % sh->nbuf, sh->nbuf, n, me, r);
        if (k == 0) { /* every header: my block's place in each stream, the rounds */
            longest = hdr[0];
            for (int j = 0; j < n; j++) {
                const unsigned char *h = contrib(sh, j, r, (size_t)seq_size(load(post_line(sh, j, r))));
                uint64_t             total, lo = hbytes, hi;
                if (j == me) {
                    continue;
                }
                memcpy(&total, h, sizeof(total));
                if (me > 0) {
                    memcpy(&lo, h + (size_t)me * sizeof(uint64_t), sizeof(lo));
                }
                memcpy(&hi, h + (size_t)(me + 1) * sizeof(uint64_t), sizeof(hi));
                longest = total > longest ? total : longest;
                b0[j] = lo, b1[j] = hi;
                if ((MPI_Count)(hi - lo) != a->rcounts[j] * a->rdt->size) {
                    if (rc == MPI_SUCCESS) {
                        rc = weft_error(MPI_ERR_TRUNCATE,
                                        "ranks passed different amounts of data to an alltoallv "
                                        "(local rank %d sends %llu bytes to local rank %d, whose "
                                        "receive count says %lld)",
                                        j, (unsigned long long)(hi - lo), me,
                                        (long long)(a->rcounts[j] * a->rdt->size));
                    }
                    b1[j] = lo; /* read nothing of it */
                }
            }
            rounds = (longest + SLOT_BYTES - 1) / SLOT_BYTES;
            if (longest > switch_at) {
                int ran = hdr[0] > switch_at; /* linear is done already */
                round_end(sh, r); /* everyone saw the same longest stream */
                if (hdr != local) {
                    free(hdr);
                }
                if (!ran) {
                    lrc = weft_coll_run_blocking(WEFT_ALG_ALLTOALLV_INTRA_linear, a);
                }
                return rc != MPI_SUCCESS ? rc : lrc;
            }
        }
        for (int j = 0; j < n; j++) {
            uint64_t lo = b0[j] > from ? b0[j] : from, hi = b1[j], end;
            if (j == me) {
                continue;
            }
            end = from + (uint64_t)seq_size(load(post_line(sh, j, r)));
            hi  = hi < end ? hi : end;
            if (lo < hi) {
                weft_dt_unpack(a->rdt, a->rcounts[j],
                               (char *)a->rbuf + a->rdispls[j] * a->rdt->extent,
                               (MPI_Count)(lo - b0[j]),
                               contrib(sh, j, r, (size_t)(end - from)) + (lo - from),
                               (MPI_Count)(hi - lo));
            }
        }
        round_end(sh, r);
    }
    /* my own block last: linear, above, copies it itself */
    weft_dt_copy((const char *)a->sbuf + a->sdispls[me] * a->sdt->extent, a->scounts[me], a->sdt,
                 (char *)a->rbuf + a->rdispls[me] * a->rdt->extent, a->rcounts[me], a->rdt);
    if (hdr != local) {
        free(hdr);
    }
    return rc;
}

/* A blocking shared-memory call: the non-blocking ones started before it
 * on this communicator go first. */
static struct weft_coll_comm *shm_enter(const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);

    if (cc->shm != NULL) {
        weft_coll_shm_queue_drain(cc->shm);
    }
    return cc;
}

int weft_coll_barrier_intra_shm_run(const weft_coll_args_t *a)
{
    return barrier_shm(a, shm_enter(a));
}

int weft_coll_bcast_intra_shm_run(const weft_coll_args_t *a)
{
    return bcast_shm(a, shm_enter(a));
}

int weft_coll_reduce_intra_shm_run(const weft_coll_args_t *a)
{
    return reduce_shm(a, shm_enter(a));
}

int weft_coll_allreduce_intra_shm_run(const weft_coll_args_t *a)
{
    return allreduce_shm(a, shm_enter(a));
}

int weft_coll_reduce_scatter_intra_shm_run(const weft_coll_args_t *a)
{
    return reduce_scatter_shm(a, shm_enter(a), a->rcounts);
}

int weft_coll_reduce_scatter_block_intra_shm_run(const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = shm_enter(a);
    MPI_Count              total = a->rcount * a->comm->size;

    return weft_coll_shm_node_reduce_scatter(cc->shm, weft_coll_mydata(a), a->rbuf, total, a->dt,
                                             a->op, a->rcount * a->comm->rank, a->rcount);
}

int weft_coll_allgatherv_intra_shm_run(const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc  = shm_enter(a);
    int                    me  = a->comm->rank;
    char                  *dst = (char *)a->rbuf + a->rdispls[me] * a->rdt->extent;

    if (a->sbuf == MPI_IN_PLACE) { /* my block already sits in rbuf */
        return weft_coll_shm_node_allgatherv(cc->shm, dst, a->rcounts[me], a->rdt, a->rbuf,
                                             a->rcounts, a->rdispls, a->rdt);
    }
    weft_dt_copy(a->sbuf, a->scount, a->sdt, dst, a->rcounts[me], a->rdt);
    return weft_coll_shm_node_allgatherv(cc->shm, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts,
                                         a->rdispls, a->rdt);
}

int weft_coll_gatherv_intra_shm_run(const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = shm_enter(a);
    int                    me = a->comm->rank;

    if (me == a->root && a->sbuf != MPI_IN_PLACE) {
        weft_dt_copy(a->sbuf, a->scount, a->sdt,
                     (char *)a->rbuf + a->rdispls[me] * a->rdt->extent, a->rcounts[me], a->rdt);
    }
    return weft_coll_shm_node_gatherv(cc->shm, a->sbuf, a->scount, a->sdt, a->rbuf, a->rcounts,
                                      a->rdispls, a->rdt, a->root);
}

int weft_coll_scatterv_intra_shm_run(const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc = shm_enter(a);
    int                    me = a->comm->rank;

    if (me == a->root && a->rbuf != MPI_IN_PLACE) {
        weft_dt_copy((const char *)a->sbuf + a->sdispls[me] * a->sdt->extent, a->scounts[me],
                     a->sdt, a->rbuf, a->rcount, a->rdt);
    }
    return weft_coll_shm_node_scatterv(cc->shm, a->sbuf, a->scounts, a->sdispls, a->sdt, a->rbuf,
                                       a->rcount, a->rdt, a->root);
}

int weft_coll_gather_intra_shm_run(const weft_coll_args_t *a)
{
    return gather_shm(a, shm_enter(a), 0);
}

int weft_coll_allgather_intra_shm_run(const weft_coll_args_t *a)
{
    return gather_shm(a, shm_enter(a), 1);
}

int weft_coll_scatter_intra_shm_run(const weft_coll_args_t *a)
{
    return scatter_shm(a, shm_enter(a));
}

int weft_coll_alltoallv_intra_shm_run(const weft_coll_args_t *a)
{
    return alltoallv_shm(a, shm_enter(a));
}

int weft_coll_alltoall_intra_shm_run(const weft_coll_args_t *a)
{
    return alltoall_shm(a, shm_enter(a));
}
