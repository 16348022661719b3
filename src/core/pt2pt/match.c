/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Matching: the posted-receive and unexpected-message queues. Arrivals from
 * every transport (shm and the netmod) go through the same two queues, so
 * MPI_ANY_SOURCE sees local and remote senders in arrival order. Entries of
 * the unexpected queue come from a free list (no malloc per message once
 * warm).
 */
#include "core/pt2pt/proto_internal.h"

#include <stdlib.h>

#include "core/datatype.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"

static weft_unexp_t *unexp_pool; /* free entries, linked by next */

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

weft_unexp_t *weft_pt2pt_find_unexpected(uint32_t context, int source, int tag, int remove)
{
    for (weft_unexp_t *u = p2p.unexp.next; u != &p2p.unexp; u = u->next) {
        if (matches(u->context, u->src, u->tag, context, source, tag)) {
            if (remove) {
                WEFT_PVAR_LEVEL_DEC(UNEXP_QUEUE_LEN);
                WEFT_PVAR_ADD(UNEXP_QUEUE_TIME, weft_pvar_now_ns() - u->arrived_ns);
                u->prev->next = u->next;
                u->next->prev = u->prev;
                u->next = u->prev = NULL;
            }
            return u;
        }
    }
    return NULL;
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
    u->type      = type;
    u->context   = ctx;
    u->src       = src;
    u->tag       = tag;
    u->peer      = peer;
    u->bytes     = bytes;
    u->data      = NULL;
    u->self_sreq = NULL;
    u->prev      = p2p.unexp.prev;
    u->next      = &p2p.unexp;
    p2p.unexp.prev->next = u;
    p2p.unexp.prev       = u;
    u->arrived_ns        = weft_pvar_now_ns();
    WEFT_PVAR_INC(UNEXP_MSGS);
    WEFT_PVAR_LEVEL_INC(UNEXP_QUEUE_LEN);
    WEFT_EVENT_RAISE(UNEXPECTED_MESSAGE, src, tag, bytes, ctx);
    return u;
}

void p2p_unexp_free(weft_unexp_t *u)
{
    if (u->data != u->inline_data) {
        free(u->data);
    }
    u->next    = unexp_pool;
    unexp_pool = u;
}

void p2p_match_fini(void)
{
    while (p2p.unexp.next != &p2p.unexp) {
        weft_unexp_t *u = p2p.unexp.next;
        p2p.unexp.next  = u->next;
        p2p_unexp_free(u);
    }
    p2p.unexp.prev = &p2p.unexp;
    while (unexp_pool != NULL) {
        weft_unexp_t *u = unexp_pool;
        unexp_pool      = u->next;
        free(u);
    }
}
