/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The node-shared region of a communicator: creation (collective, agreed by
 * every rank), teardown, waiting on its counters and the rule for reusing a
 * round's buffers. Layout and counters: coll_shm_internal.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/shm/coll_shm_internal.h"
#include "core/comm_ctx.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/runtime.h"
#include "transport/shm/shm_coll.h"

/* Lines and small areas are nbuf rounds deep (8, or NBUF where ranks share
 * CPUs), so a node with a CPU per rank does not pay for the deep form. */
static size_t region_bytes(int n, uint64_t nbuf)
{
    size_t lines = (size_t)n * (5 + nbuf) + 1 + (size_t)nbuf * PKT_LINES;
    return lines * sizeof(line_t) + (size_t)(n + 1) * NSLOT * SLOT_BYTES +
           (size_t)n * nbuf * SMALL_BYTES;
}

static void region_carve(struct weft_coll_shm *sh)
{
    line_t *l   = sh->base;
    int     n   = sh->n;
    sh->arrive  = l;
    sh->release = l + n;
    sh->post    = sh->release + 1;
    sh->reduced = sh->post + (size_t)n * sh->nbuf;
    sh->done    = sh->reduced + n;
    sh->spilled = sh->done + n;
    sh->taken   = sh->spilled + n;
    sh->ready   = sh->taken + n;
    sh->slots   = (char *)(sh->ready + sh->nbuf * PKT_LINES);
    sh->result  = sh->slots + (size_t)n * NSLOT * SLOT_BYTES;
    sh->small   = sh->result + (size_t)NSLOT * SLOT_BYTES;
}

/* The region of the blocking shared-memory call this thread is running
 * (weft_coll_shm_run saves and restores it around nested calls), so its
 * waits can give up when a member process is lost. */
static __thread __attribute__((tls_model("initial-exec"))) struct weft_coll_shm *running;

int weft_coll_shm_member_lost(struct weft_coll_shm *sh)
{
    if (sh == NULL) {
        return 0;
    }
    if (sh->broken) {
        return 1;
    }
    int lost = weft_comm_first_lost(sh->node);
    if (lost < 0) {
        return 0;
    }
    sh->broken     = 1;
    sh->lost_world = sh->node->peer_world[lost];
    return 1;
}

int weft_coll_shm_lost_error(const struct weft_coll_shm *sh, const char *what)
{
    return weft_error(WEFT_ERR_PROC_LOST, "%s: lost contact with rank %d on host %d, a member of "
                                          "the communicator",
                      what, sh->lost_world, weft_dev_host_of(sh->lost_world));
}

int weft_coll_shm_run(struct weft_coll_comm *cc, int (*run)(const weft_coll_args_t *),
                      const weft_coll_args_t *a, const char *what)
{
    struct weft_coll_shm *outer = running;
    int                   rc;

    running = cc->shm;
    rc      = run(a);
    running = outer;
    if (cc->shm != NULL && cc->shm->broken) {
        cc->shm_state = -1; /* no more shared-memory calls here; freed with the comm */
        rc = weft_coll_shm_lost_error(cc->shm, what);
    }
    return rc;
}

/* Wait until ready(ctx), keeping point-to-point moving (a peer may need
 * one of our pending sends to reach this collective). 1 at once on a
 * region that lost a member (the caller's result is then discarded), else
 * 0. Inlined with each predicate. */
static inline int wait_until(int (*ready)(void *ctx), void *ctx)
{
    weft_wait_t w8 = {0};
    while (!ready(ctx)) {
        if ((w8.polls & 7) == 7) {
            weft_progress_poll();
            if (weft_coll_shm_member_lost(running)) {
                return 1;
            }
        }
        weft_wait_step(&w8);
    }
    return 0;
}

struct word_ge {
    const uint64_t *w;
    uint64_t        mask, v;
};

static int word_ge_ready(void *ctx)
{
    const struct word_ge *c = ctx;
    return (__atomic_load_n(c->w, __ATOMIC_ACQUIRE) & c->mask) >= c->v;
}

/* Wait for (*w & mask) >= v (wait_until). */
static void wait_word(const uint64_t *w, uint64_t mask, uint64_t v)
{
    struct word_ge c = {w, mask, v};
    (void)wait_until(word_ge_ready, &c);
}

void weft_coll_shm_wait_ge(const line_t *l, uint64_t v)
{
    wait_word(&l->seq, SEQ_ROUND_MASK, v);
}

void weft_coll_shm_wait_word_ge(const uint64_t *w, uint64_t v)
{
    wait_word(w, UINT64_MAX, v);
}

struct any_post {
    struct weft_coll_shm *sh;
    uint64_t              r;
    const unsigned char  *pending;
    int                   found;
};

static int any_post_ready(void *ctx)
{
    struct any_post *c = ctx;
    for (int j = 0; j < c->sh->n; j++) {
        if (c->pending[j] && (load(post_line(c->sh, j, c->r)) & SEQ_ROUND_MASK) >= c->r) {
            c->found = j;
            return 1;
        }
    }
    return 0;
}

int weft_coll_shm_wait_any_post(struct weft_coll_shm *sh, uint64_t r, const unsigned char *pending)
{
    struct any_post c = {sh, r, pending, -1};
    if (wait_until(any_post_ready, &c) != 0) {
        for (int j = 0; j < sh->n; j++) { /* lost a member: any, the result is discarded */
            if (pending[j]) {
                return j;
            }
        }
    }
    return c.found;
}

/* lines[j * stride] >= v for every j != skip */
void weft_coll_shm_wait_all(const line_t *lines, size_t stride, int n, int skip, uint64_t v)
{
    for (int j = 0; j < n; j++) {
        if (j != skip) {
            weft_coll_shm_wait_ge(&lines[(size_t)j * stride], v);
        }
    }
}

static void done_floor_update(struct weft_coll_shm *sh, uint64_t r);

void weft_coll_shm_prefault_more(struct weft_coll_shm *sh, int result, size_t bytes)
{
    size_t *mapped = result ? &sh->result_mapped : &sh->slots_mapped;
    char   *area   = result ? sh->result : sh->slots;
    int     bufs   = result ? NSLOT : sh->n * NSLOT;

    if (area == NULL) {
        return;
    }
    for (int i = 0; i < bufs; i++) {
        weft_shm_region_prefault(area + (size_t)i * SLOT_BYTES + *mapped, bytes - *mapped);
    }
    *mapped = bytes;
}

void weft_coll_shm_round_reuse(struct weft_coll_shm *sh, uint64_t r, int slots)
{
    uint64_t depth = slots ? NSLOT : sh->nbuf;

    if (weft_coll_shm_round_free(sh, r, depth)) {
        return;
    }
    /* Wait for a few rounds more than round r needs (half the depth, at
     * most 8): a rank running ahead (back to back) then reads the others'
     * done lines once per few rounds, not once per round, and their
     * writers keep those lines between reads (alternating A/B, 3 rounds,
     * 9 collectives 4 B-64 KiB, geometric mean against waiting for r -
     * depth only: np 2 back to back 0.99, np 4 0.94, np 8 1.00, np 4
     * OSU-style 0.96; np 4 back to back allreduce 1.7-2.2 against 1.9-3.4
     * us; 64 more at np 4/8, half their depth, was mixed). Safe: every round up to
     * r - 1 has our part. */
    uint64_t more = depth / 2 < 8 ? depth / 2 : 8;
    weft_coll_shm_wait_all(sh->done, 1, sh->n, sh->me, r - depth + more);
    done_floor_update(sh, r);
}

/* weft_coll_shm_round_reuse without waiting: 1 when round r's buffers are free. */
int weft_coll_shm_round_reuse_try(struct weft_coll_shm *sh, uint64_t r, int slots)
{
    uint64_t depth = slots ? NSLOT : sh->nbuf;

    if (weft_coll_shm_round_free(sh, r, depth)) {
        return 1;
    }
    for (int j = 0; j < sh->n; j++) {
        if (j != sh->me && (load(&sh->done[j]) & SEQ_ROUND_MASK) < r - depth) {
            return 0;
        }
    }
    done_floor_update(sh, r);
    return 1;
}

/* Every rank finished the round reuse waited for: remember how far all of
 * them got. */
static void done_floor_update(struct weft_coll_shm *sh, uint64_t r)
{
    uint64_t floor = r - 1; /* mine: I am past round r - 1 */
    for (int j = 0; j < sh->n; j++) {
        uint64_t d = j == sh->me ? floor : load(&sh->done[j]) & SEQ_ROUND_MASK;
        floor      = d < floor ? d : floor;
    }
    sh->done_floor = floor;
}

/* After every post of round r is in: the first local rank whose posted
 * size tag differs from size, or -1. */
int weft_coll_shm_posted_size_differs(struct weft_coll_shm *sh, uint64_t r, MPI_Count size)
{
    for (int j = 0; j < sh->n; j++) {
        if (!seq_size_is(load(post_line(sh, j, r)), size)) {
            return j;
        }
    }
    return -1;
}

int weft_coll_shm_size_mismatch(const char *what, MPI_Count size, int j, struct weft_coll_shm *sh,
                         uint64_t r)
{
    return weft_error(MPI_ERR_TRUNCATE,
                      "ranks passed different amounts of data to %s (%lld bytes here, about "
                      "%lld at local rank %d)",
                      what, (long long)size, (long long)seq_size(load(post_line(sh, j, r))), j);
}

int weft_coll_shm_root_size_mismatch(const char *what, MPI_Count size, uint64_t posted)
{
    return weft_error(MPI_ERR_TRUNCATE,
                      "ranks passed different amounts of data to %s (%lld bytes here, about "
                      "%lld at the root)",
                      what, (long long)size, (long long)seq_size(posted));
}

int weft_coll_shm_own_size_mismatch(const char *what, MPI_Count mine, MPI_Count expected)
{
    return weft_error(MPI_ERR_TRUNCATE,
                      "ranks passed different amounts of data to %s (this rank sends %lld "
                      "bytes, its own receive count says %lld)",
                      what, (long long)mine, (long long)expected);
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
static int agree(weft_comm_t *comm, int *ok)
{
    int tag = WEFT_XTAG_COLL_SHM + 1, rc = MPI_SUCCESS;
    int v   = *ok;

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
    *ok = v;
    return rc;
}

int weft_coll_shm_setup(weft_comm_t *comm)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(comm);
    struct weft_coll_shm  *sh;
    weft_comm_t           *node = comm;
    /* local rank 0's region name and cooperative-copy size: a reader and a
     * root that disagree on the latter would wait for each other */
    struct {
        char     name[WEFT_SHM_REGION_NAME_MAX];
        uint64_t coop_from;
    } msg = {"", 0};
    char *name = msg.name;
    int   rc   = MPI_SUCCESS, ok;

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
        /* deep rounds where ranks share CPUs (see NBUF); the same on every
         * member, as the layout must be */
        int shared = weft_coll_node_oversubscribed(sh->n);
        sh->nbuf   = shared ? NBUF : 8;
        sh->bytes  = region_bytes(sh->n, sh->nbuf);
        /* CMA between all members: this job's ranks, whose pairs the
         * shm channel probed (not processes of other jobs met by spawn or
         * connect, which may not permit it) */
        sh->barrier_all_read = sh->n <= BARRIER_ALL_READ_MAX && !shared;
        sh->cma_from         = weft_p2p_shm_cma_from();
        sh->coop_from        = weft_p2p_shm_coop_from();
        if (sh->coop_from > COLL_COOP_MAX) {
            sh->coop_from = COLL_COOP_MAX;
        }
        for (int j = 0; j < node->size; j++) {
            if (node->peer_world[j] >= weft_dev.size) {
                sh->cma_from = SIZE_MAX;
            }
        }
    }
    if (node->size > 1) {
        int tag = WEFT_XTAG_COLL_SHM;
        if (node->rank == 0) {
            if (sh != NULL) {
                sh->base = weft_shm_region_create(sh->bytes, name);
            }
            if (sh == NULL || sh->base == NULL) {
                name[0] = '\0';
            }
            msg.coop_from = sh != NULL ? (uint64_t)sh->coop_from : 0;
            for (int j = 1; j < node->size && rc == MPI_SUCCESS; j++) {
                rc = weft_send_bytes(&msg, sizeof(msg), j, tag, node);
            }
        } else {
            rc = weft_recv_bytes(&msg, sizeof(msg), 0, tag, node);
            if (rc == MPI_SUCCESS && name[0] != '\0' && sh != NULL) {
                sh->base      = weft_shm_region_attach(name, sh->bytes);
                sh->coop_from = (size_t)msg.coop_from;
            }
        }
        ok = ok && rc == MPI_SUCCESS && sh->base != NULL;
    }
    if (rc == MPI_SUCCESS) {
        rc = agree(comm, &ok);
    }
    if (node->rank == 0 && name[0] != '\0') {
        weft_shm_region_unlink(name); /* everyone attached (or gave up) */
    }
    if (rc != MPI_SUCCESS) {
        /* a member is gone (its error is the collective's): nothing is kept,
         * nothing left in /dev/shm; the next collective tries again */
        shm_free(sh);
        return rc;
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
