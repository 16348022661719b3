/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The libfabric netmod (see ofi.c): sending active messages (reserve, commit, the
 * FIFO of sends the provider had no room for) and delivering arrivals in
 * each sender's order.
 */
#include "transport/ofi/ofi_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"

int ofi_post_recv(ofi_buf_t *b)
{
    int rc;

    do {
        rc = (int)fi_recv(weft_ofi.ep, b->data, weft_ofi.stride, weft_ofi.desc, FI_ADDR_UNSPEC, b);
        if (rc == -FI_EAGAIN) {
            fi_cq_read(weft_ofi.cq, NULL, 0); /* let the provider free room */
        }
    } while (rc == -FI_EAGAIN);
    return ofi_check(rc, "fi_recv");
}

/* ---- sending ----------------------------------------------------------- */

void *ofi_am_reserve(int dst, size_t len)
{
    ofi_buf_t *b = weft_ofi.free_tx;

    (void)dst;
    if (b == NULL || len > weft_ofi.max_payload) {
        return NULL;
    }
    weft_ofi.free_tx  = b->next;
    weft_ofi.reserved = b;
    return b->data + sizeof(net_hdr_t);
}

void ofi_peer_failed(int dst, int err, const char *what)
{
    char why[256];

    if (ofi_peer_gone(dst)) {
        return; /* given up on already: nobody waits for it */
    }

    snprintf(why, sizeof(why), "%s: %s (libfabric provider %s)", what, weft_ofi_fab.strerror(err),
             ofi_provider());
    weft_ofi.peer_lost(dst, why);
    /* Lost for good: nothing more goes to it, and it owes no goodbye. */
    weft_ofi.talked[dst] = 0;
    weft_ofi.gone[dst] |= GONE_LOST;
}

/* Hand b to the provider: 0 accepted, 1 try again later. */
int ofi_post_send(ofi_buf_t *b)
{
    ssize_t rc;

    /* Keepalives and goodbyes need a completion (an error names a lost
     * peer; a completed goodbye has left). */
    if (b->len <= weft_ofi.inject && b->data[0] != WEFT_AM_NETMOD_KEEPALIVE &&
        b->data[0] != WEFT_AM_NETMOD_BYE) {
        rc = fi_inject(weft_ofi.ep, b->data, b->len, weft_ofi.addrs[b->dst]);
        if (rc == 0) {
            b->next     = weft_ofi.free_tx;
            weft_ofi.free_tx = b;
            return 0;
        }
    } else {
        rc = fi_send(weft_ofi.ep, b->data, b->len, weft_ofi.desc, weft_ofi.addrs[b->dst], b);
        if (rc == 0) {
            weft_ofi.tx_inflight++;
            weft_ofi.inflight[b->dst]++;
            return 0;
        }
    }
    if (rc == -FI_EAGAIN) {
        return 1;
    }
    ofi_peer_failed(b->dst, (int)-rc, "sending");
    b->next     = weft_ofi.free_tx; /* lost: drop it, go on */
    weft_ofi.free_tx = b;
    return 0;
}

weft_status_t ofi_am_commit(int dst, uint8_t type, int32_t tag, uint32_t context,
                                   int32_t src, size_t len)
{
    ofi_buf_t *b = weft_ofi.reserved;
    net_hdr_t  h = {type, 0, {0, 0}, tag, context, src, (uint32_t)len, weft_ofi.me, 0, 0};

    if (dst >= weft_ofi.size) { /* a process of another job knows us by uid */
        h.flags  = HDR_DYN;
        h.world  = (int32_t)(uint32_t)weft_ofi.uid;
        h.uid_hi = (uint32_t)(weft_ofi.uid >> 32);
    }
    if (type == WEFT_AM_DYNPROC_CONNECT) {
        h.flags |= HDR_UNSEQ;
    } else {
        h.seq = weft_ofi.send_seq[dst]++;
    }

    weft_ofi.reserved = NULL;
    if (ofi_peer_gone(dst)) { /* disconnected: nobody listens, and its address is gone */
        b->next     = weft_ofi.free_tx;
        weft_ofi.free_tx = b;
        return WEFT_OK;
    }
    weft_ofi.talked[dst] = 1;
    memcpy(b->data, &h, sizeof(h));
    b->len  = sizeof(h) + len;
    b->dst  = dst;
    b->next = NULL;
    if (weft_ofi.queue_head == NULL && ofi_post_send(b) == 0) {
        return WEFT_OK;
    }
    if (weft_ofi.queue_tail) {
        weft_ofi.queue_tail->next = b;
    } else {
        weft_ofi.queue_head = b;
    }
    weft_ofi.queue_tail = b;
    return WEFT_OK;
}

void ofi_deliver(const net_hdr_t *h, const void *payload)
{
    weft_am_t msg = {h->type, h->tag, h->context, h->src, h->len, payload};

    weft_ofi.recv_seq[h->world]++;
    weft_ofi.talked[h->world]   = !ofi_peer_gone(h->world);
    weft_ofi.ka_since[h->world] = 0; /* alive */
    if (h->type == WEFT_AM_NETMOD_BYE) {
        weft_ofi.byes_got++;
        weft_ofi.gone[h->world] |= GONE_BYE;
    } else if (h->type != WEFT_AM_NETMOD_KEEPALIVE) {
        weft_ofi.handlers[h->type](h->world, &msg);
    }
}

void ofi_keep_early(const net_hdr_t *h, const void *payload)
{
    early_t *e = malloc(sizeof(*e) + h->len), **at = &weft_ofi.early[h->world];

    if (e == NULL) {
        weft_ofi.peer_lost(h->world, "out of memory holding an early message");
        return;
    }
    e->hdr = *h;
    memcpy(e->payload, payload, h->len);
    /* Sequence numbers wrap: compare by signed distance from the next due. */
    uint32_t due = weft_ofi.recv_seq[h->world];
    while (*at && (int32_t)((*at)->hdr.seq - due) < (int32_t)(h->seq - due)) {
        at = &(*at)->next;
    }
    e->next = *at;
    *at     = e;
}

