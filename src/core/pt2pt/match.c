/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Matching: the posted-receive and unexpected-message queues. Arrivals from
 * every transport (shm and the netmod) go through the same two queues, so
 * MPI_ANY_SOURCE sees local and remote senders in arrival order. Entries of
 * the unexpected queue come from a free list (no malloc per message once
 * warm), and are also chained per (context, source) bucket: a receive from
 * one source looks only at its bucket, so a backlog from other senders
 * (back-to-back eager sends to a busy root: 10,000 entries were seen at np
 * 4) does not make every match walk all of it.
 */
#include "core/pt2pt/proto_internal.h"

#include <stdlib.h>

#include "core/datatype.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"

static weft_unexp_t *unexp_pool; /* free entries, linked by next */

/* Payload buffers of unexpected eager messages, kept by power-of-two class
 * from 64 B to 64 KiB when freed, up to what flow control lets the local
 * senders leave here (held_limit each; 8-64 MiB): a backlog that drains
 * and refills (flow control keeps it between half the limit and the limit)
 * otherwise has glibc trim its heap and fault it back in at every cycle
 * (np 4 back-to-back gathers of 64 KiB blocks: 72 -> 47 us with trimming
 * off). */
#define POOL_MIN_SHIFT 6
#define POOL_CLASSES   11
#define POOL_MIN_BYTES ((size_t)8 << 20)
#define POOL_MAX_BYTES ((size_t)64 << 20)
typedef struct pool_buf {
    struct pool_buf *next;
} pool_buf_t;
static pool_buf_t *payload_pool[POOL_CLASSES];
static size_t      payload_pool_bytes, payload_pool_max;

static inline size_t class_bytes(int c)
{
    return (size_t)1 << (POOL_MIN_SHIFT + c);
}

/* The smallest class holding len bytes, or -1 above the largest. */
static int pool_class_of(size_t len)
{
    int c = 0;
    while (class_bytes(c) < len) {
        if (++c == POOL_CLASSES) {
            return -1;
        }
    }
    return c;
}

#define UNEXP_BUCKETS 256 /* a power of two */
static weft_unexp_t unexp_bucket[UNEXP_BUCKETS]; /* sentinels, linked by bnext/bprev */

static inline weft_unexp_t *bucket_of(uint32_t context, int source)
{
    return &unexp_bucket[(context * 31u + (uint32_t)source) & (UNEXP_BUCKETS - 1)];
}

static inline int matches(uint32_t ctx, int src, int tag, uint32_t want_ctx, int want_src,
                          int want_tag)
{
    return ctx == want_ctx && (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

weft_request_t *p2p_match_posted(uint32_t ctx, int src, int tag)
{
    for (weft_request_t *r = p2p.posted.next; r != &p2p.posted; r = r->next) {
        if (matches(ctx, src, tag, r->context, r->peer, r->tag)) {
            WEFT_PVAR_LEVEL_DEC(POSTED_QUEUE_LEN);
            r->prev->next = r->next;
            r->next->prev = r->prev;
            r->next = r->prev = NULL;
            return r;
        }
    }
    return NULL;
}

void p2p_post_recv(weft_request_t *req)
{
    req->prev             = p2p.posted.prev;
    req->next             = &p2p.posted;
    p2p.posted.prev->next = req;
    p2p.posted.prev       = req;
    WEFT_PVAR_LEVEL_INC(POSTED_QUEUE_LEN);
}

int p2p_large_recv_posted(size_t bytes)
{
    for (weft_request_t *r = p2p.posted.next; r != &p2p.posted; r = r->next) {
        if ((size_t)(r->count * r->datatype->size) >= bytes) {
            return 1;
        }
    }
    return 0;
}

void p2p_unexp_remove(weft_unexp_t *u)
{
    WEFT_PVAR_LEVEL_DEC(UNEXP_QUEUE_LEN);
    u->prev->next   = u->next;
    u->next->prev   = u->prev;
    u->bprev->bnext = u->bnext;
    u->bnext->bprev = u->bprev;
    u->next = u->prev = u->bnext = u->bprev = NULL;
}

weft_unexp_t *weft_pt2pt_find_unexpected(uint32_t context, int source, int tag, int remove)
{
    weft_unexp_t *u = NULL;

    if (source == MPI_ANY_SOURCE) { /* arrival order over every source */
        for (u = p2p.unexp.next; u != &p2p.unexp; u = u->next) {
            if (matches(u->context, u->src, u->tag, context, source, tag)) {
                break;
            }
        }
        u = u == &p2p.unexp ? NULL : u;
    } else { /* one source: arrival order inside its bucket is all that counts */
        weft_unexp_t *b = bucket_of(context, source);
        for (u = b->bnext; u != b; u = u->bnext) {
            if (matches(u->context, u->src, u->tag, context, source, tag)) {
                break;
            }
        }
        u = u == b ? NULL : u;
    }
    if (u != NULL && remove) {
        WEFT_PVAR_ADD(UNEXP_QUEUE_TIME, weft_pvar_now_ns() - u->arrived_ns);
        p2p_unexp_remove(u);
    }
    return u;
}

weft_unexp_t *p2p_unexp_new(uint8_t type, uint32_t ctx, int src, int tag, int peer,
                            MPI_Count bytes)
{
    weft_unexp_t *u = unexp_pool;

    if (u != NULL) {
        unexp_pool = u->next;
    } else if ((u = malloc(sizeof(*u))) == NULL) {
        weft_runtime_abort(MPI_ERR_NO_MEM, "out of memory queueing an unexpected message");
    }
    weft_unexp_t *b = bucket_of(ctx, src);

    u->type       = type;
    u->held       = 0;
    u->pool_class = -1;
    u->context    = ctx;
    u->src        = src;
    u->tag        = tag;
    u->peer       = peer;
    u->bytes      = bytes;
    u->data       = NULL;
    u->self_sreq  = NULL;
    u->prev       = p2p.unexp.prev;
    u->next       = &p2p.unexp;
    p2p.unexp.prev->next = u;
    p2p.unexp.prev       = u;
    u->bprev             = b->bprev;
    u->bnext             = b;
    b->bprev->bnext      = u;
    b->bprev             = u;
    u->arrived_ns        = weft_pvar_now_ns();
    WEFT_PVAR_INC(UNEXP_MSGS);
    WEFT_PVAR_LEVEL_INC(UNEXP_QUEUE_LEN);
    WEFT_EVENT_RAISE(UNEXPECTED_MESSAGE, src, tag, bytes, ctx);
    return u;
}

void *p2p_unexp_buffer(weft_unexp_t *u, size_t len)
{
    int c = -1;

    if (len <= sizeof(u->inline_data)) {
        u->data = u->inline_data;
    } else if ((c = pool_class_of(len)) >= 0 && payload_pool[c] != NULL) {
        u->data         = payload_pool[c];
        payload_pool[c] = payload_pool[c]->next;
        payload_pool_bytes -= class_bytes(c);
    } else {
        u->data = malloc(c >= 0 ? class_bytes(c) : len);
    }
    if (u->data == NULL) {
        weft_runtime_abort(MPI_ERR_NO_MEM, "out of memory buffering an unexpected message");
    }
    u->pool_class = (int8_t)c;
    return u->data;
}

/* The sender is told to stop above the limit and to resume below half of
 * it, so a receiver near the limit does not flip the flag every message. */
void p2p_unexp_hold(weft_unexp_t *u)
{
    peer_state_t *ps = &p2p.peers[u->peer];

    u->held = 1;
    ps->held += (uint64_t)u->bytes;
    if (!ps->held_back && ps->held > p2p.held_limit) {
        ps->held_back = 1;
        weft_shm_set_held_back(weft_peer(u->peer)->shm_index, 1);
    }
}

void p2p_unexp_free(weft_unexp_t *u)
{
    if (u->held) {
        peer_state_t *ps = &p2p.peers[u->peer];
        ps->held -= (uint64_t)u->bytes;
        if (ps->held_back && ps->held <= p2p.held_limit / 2) {
            ps->held_back = 0;
            weft_shm_set_held_back(weft_peer(u->peer)->shm_index, 0);
        }
    }
    if (u->data != u->inline_data) {
        size_t bytes = u->pool_class >= 0 ? class_bytes(u->pool_class) : 0;
        if (bytes > 0 && payload_pool_bytes + bytes <= payload_pool_max) {
            pool_buf_t *b               = u->data;
            b->next                     = payload_pool[u->pool_class];
            payload_pool[u->pool_class] = b;
            payload_pool_bytes += bytes;
        } else {
            free(u->data);
        }
    }
    u->next    = unexp_pool;
    unexp_pool = u;
}

void p2p_match_pool_size(int local_senders)
{
    size_t held = p2p.held_limit * (size_t)(local_senders > 0 ? local_senders : 1);

    payload_pool_max = held < POOL_MIN_BYTES ? POOL_MIN_BYTES
                       : held > POOL_MAX_BYTES ? POOL_MAX_BYTES : held;
}

void p2p_match_init(void)
{
    p2p.unexp.next = p2p.unexp.prev = &p2p.unexp;
    for (int i = 0; i < UNEXP_BUCKETS; i++) {
        unexp_bucket[i].bnext = unexp_bucket[i].bprev = &unexp_bucket[i];
    }
}

void p2p_match_fini(void)
{
    while (p2p.unexp.next != &p2p.unexp) {
        weft_unexp_t *u = p2p.unexp.next;
        p2p.unexp.next  = u->next;
        u->held         = 0; /* the shm segment may be gone: nobody reads it any more */
        p2p_unexp_free(u);
    }
    p2p.unexp.prev = &p2p.unexp;
    while (unexp_pool != NULL) {
        weft_unexp_t *u = unexp_pool;
        unexp_pool      = u->next;
        free(u);
    }
    for (int c = 0; c < POOL_CLASSES; c++) {
        while (payload_pool[c] != NULL) {
            pool_buf_t *b   = payload_pool[c];
            payload_pool[c] = b->next;
            free(b);
        }
    }
    payload_pool_bytes = 0;
}
