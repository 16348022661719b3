/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The libfabric netmod (see ofi.c): processes of other jobs (connect/accept,
 * spawn): added by uid, their early messages kept until then.
 */
#include "transport/ofi/ofi_internal.h"

#include <stdlib.h>
#include <string.h>

#include "util/log.h"

/* ---- dynamic peers ----------------------------------------------------- */

static int uid_to_peer(uint64_t uid)
{
    for (int p = weft_ofi.size; p < weft_ofi.npeers; p++) {
        if (weft_ofi.peer_uid[p] == uid) {
            return p;
        }
    }
    return -1;
}

/* An arrival with flags: 1 when it continues as a sequenced message of
 * peer h->world (rewritten to our number for the sender), 0 when handled
 * here (unsequenced) or kept until its sender is added. */
int ofi_dyn_arrival(net_hdr_t *h, const void *payload)
{
    int from = h->world;

    if (h->flags & HDR_DYN) {
        uint64_t uid = (uint64_t)h->uid_hi << 32 | (uint32_t)h->world;
        from         = uid_to_peer(uid);
        if (from < 0 && !(h->flags & HDR_UNSEQ)) {
            early_t *e = malloc(sizeof(*e) + h->len), **at = &weft_ofi.orphans;
            if (e == NULL) {
                weft_log_error("netmod: out of memory holding a message of a new process");
                return 0;
            }
            e->uid  = uid;
            e->hdr  = *h;
            e->next = NULL;
            memcpy(e->payload, payload, h->len);
            while (*at) {
                at = &(*at)->next;
            }
            *at = e;
            return 0;
        }
    }
    if (h->flags & HDR_UNSEQ) {
        weft_am_t msg = {h->type, h->tag, h->context, h->src, h->len, payload};
        if (from >= 0) {
            weft_ofi.talked[from] = !ofi_peer_gone(from);
        }
        weft_ofi.handlers[h->type](from, &msg);
        return 0;
    }
    h->world = from;
    return 1;
}

/* Deliver what waited for its predecessors or for its sender to be added. */
int ofi_dyn_drain(void)
{
    int n = 0;

    weft_ofi.drain_due = 0;
    for (int p = weft_ofi.size; p < weft_ofi.npeers; p++) {
        while (weft_ofi.early[p] && weft_ofi.early[p]->hdr.seq == weft_ofi.recv_seq[p]) {
            early_t *e    = weft_ofi.early[p];
            weft_ofi.early[p]  = e->next;
            ofi_deliver(&e->hdr, e->payload);
            free(e);
            n++;
        }
    }
    return n;
}

weft_status_t ofi_dyn_open(const weft_transport_init_t *args)
{
    return weft_ofi.up ? WEFT_OK : ofi_init_common(args, 0);
}

weft_status_t ofi_dyn_name(void *name, size_t *len)
{
    int rc = (int)fi_getname(&weft_ofi.ep->fid, name, len);

    return ofi_check(rc, "fi_getname") == 0 ? WEFT_OK : WEFT_ERROR;
}

weft_status_t ofi_dyn_add_peer(int id, const void *name, size_t len, uint64_t uid)
{
    (void)len;
    if (id < weft_ofi.npeers || ofi_peers_grow(id + 1) != 0) {
        weft_log_error("netmod: dynamic peer %d added out of order (next is %d)", id,
                       weft_ofi.npeers);
        return WEFT_ERROR;
    }
    /* Ids skipped are processes core reaches through shared memory (another
     * job's process on this host): never ours to talk to or forget. */
    for (int g = weft_ofi.npeers; g < id; g++) {
        weft_ofi.gone[g] = GONE_LOST | GONE_FORGOTTEN;
    }
    if (fi_av_insert(weft_ofi.av, name, 1, &weft_ofi.addrs[id], 0, NULL) != 1) {
        weft_log_error("netmod: fi_av_insert of a process of another job failed");
        return WEFT_ERROR;
    }
    weft_ofi.peer_uid[id] = uid;
    weft_ofi.npeers       = id + 1;
    /* Its messages that came before we knew it: into its early list. */
    for (early_t **at = &weft_ofi.orphans; *at;) {
        early_t *e = *at;
        if (e->uid != uid) {
            at = &e->next;
            continue;
        }
        *at          = e->next;
        e->hdr.world = id;
        ofi_keep_early(&e->hdr, e->payload);
        free(e);
        weft_ofi.drain_due = 1;
    }
    return WEFT_OK;
}

void ofi_dyn_forget(int id)
{
    if (id < 0 || id >= weft_ofi.npeers || (id < weft_ofi.size && !weft_ofi.uses_netmod[id]) ||
        (weft_ofi.gone[id] & GONE_FORGOTTEN)) {
        return; /* (a job rank: core found it lost; or lost, then disconnected) */
    }
    weft_ofi.talked[id] = 0;
    weft_ofi.gone[id] |= GONE_LOST | GONE_FORGOTTEN;
    /* Forget its address too: a later process may get the same host:port,
     * and must not inherit the provider's connection to this one. */
    fi_av_remove(weft_ofi.av, &weft_ofi.addrs[id], 1, 0);
    /* What still waits for the provider to take it is dropped (a dead
     * address can say FI_EAGAIN forever and block the queue). */
    weft_ofi.queue_tail = NULL;
    for (ofi_buf_t **at = &weft_ofi.queue_head; *at;) {
        ofi_buf_t *b = *at;
        if (b->dst == id) {
            *at         = b->next;
            b->next     = weft_ofi.free_tx;
            weft_ofi.free_tx = b;
        } else {
            weft_ofi.queue_tail = b;
            at             = &b->next;
        }
    }
}

