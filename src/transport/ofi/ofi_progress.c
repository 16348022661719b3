/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The libfabric netmod (see ofi.c): progress (the completion queue), keepalives,
 * finalize's goodbyes and the blocking wait.
 */
#include "transport/ofi/ofi_internal.h"

#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "util/tunables.h"

#define WAIT_FD_STUCK_MAX 64

/* ---- progress ---------------------------------------------------------- */

static void cq_error(void)
{
    struct fi_cq_err_entry err = {0};
    ofi_buf_t             *b;

    if (fi_cq_readerr(weft_ofi.cq, &err, 0) != 1) {
        return;
    }
    b = err.op_context;
    if (err.err == FI_ECANCELED) {
        return;
    }
    if (b != NULL && b->is_rx == 3) {
        int dst = b->dst;
        ofi_win_rma_done(b, err.err);
        ofi_peer_failed(dst, err.err, "a window put/get completed with an error");
        return;
    }
    if (b != NULL && b->is_rx != 1) {
        weft_ofi.tx_inflight--;
        if (b->is_rx == 0) {
            weft_ofi.inflight[b->dst]--;
        }
        ofi_peer_failed(b->dst, err.err,
                    b->is_rx == 2 ? "remote read completed with an error"
                                  : "send completed with an error");
        if (b->is_rx == 0) { /* survived: recycle */
            b->next     = weft_ofi.free_tx;
            weft_ofi.free_tx = b;
        }
        return;
    }
    weft_log_error("netmod: receive failed: %s (%s)", weft_ofi_fab.strerror(err.err),
                   fi_cq_strerror(weft_ofi.cq, err.prov_errno, err.err_data, NULL, 0));
    weft_ofi.peer_lost(weft_ofi.me, "a receive from the network failed");
}

/* Once a second (checked every 1024 polls): a keepalive to every peer we
 * have talked to, so a broken connection shows up as a send error. */
void ofi_keepalives(void)
{
    struct timespec now;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
    if (now.tv_sec == weft_ofi.last_keepalive) {
        return;
    }
    if (now.tv_sec - weft_ofi.last_keepalive > 2) {
        /* We were away from MPI (completions unread): time only what we saw. */
        for (int p = 0; p < weft_ofi.npeers; p++) {
            weft_ofi.ka_since[p] = weft_ofi.ka_since[p] ? now.tv_sec : 0;
        }
    }
    weft_ofi.last_keepalive = now.tv_sec;
    for (int p = 0; p < weft_ofi.npeers; p++) {
        if (!weft_ofi.talked[p] || ofi_peer_gone(p)) {
            continue;
        }
        /* A dead process's connection may only be refused, again and again,
         * inside the provider (ofi_rxm reconnects and keeps the send): a
         * keepalive that has not left for this long, with nothing heard from
         * the peer meanwhile (a live one in MPI sends its own every second),
         * means it is gone. */
        if (weft_ofi.ka_since[p] != 0 && weft_tunables.NETMOD_PEER_TIMEOUT > 0 &&
            now.tv_sec - weft_ofi.ka_since[p] >= weft_tunables.NETMOD_PEER_TIMEOUT) {
            char why[128];
            snprintf(why, sizeof(why), "nothing heard from it, and a keepalive undelivered, for %lld s "
                     "(WEFT_NETMOD_PEER_TIMEOUT)", (long long)(now.tv_sec - weft_ofi.ka_since[p]));
            weft_ofi.peer_lost(p, why);
            weft_ofi.talked[p] = 0;
            weft_ofi.gone[p] |= GONE_LOST;
            continue;
        }
        if (weft_ofi.ka_since[p] == 0 && ofi_am_reserve(p, 0) != NULL) {
            weft_ofi.ka_since[p] = now.tv_sec;
            ofi_am_commit(p, WEFT_AM_NETMOD_KEEPALIVE, 0, 0, 0, 0);
        }
    }
}

int ofi_progress(void)
{
    struct fi_cq_msg_entry ent[OFI_CQ_BATCH];
    ssize_t                n;
    int                    events = 0;

    if (weft_ofi.drain_due) {
        events += ofi_dyn_drain();
    }

    if ((++weft_ofi.polls & 1023) == 0) {
        ofi_keepalives();
    }
    while (weft_ofi.queue_head != NULL) {
        ofi_buf_t *b    = weft_ofi.queue_head;
        ofi_buf_t *next = b->next; /* post_send may put b on the free list */
        if (ofi_post_send(b) != 0) {
            break;
        }
        weft_ofi.queue_head = next;
        if (weft_ofi.queue_head == NULL) {
            weft_ofi.queue_tail = NULL;
        }
        events++;
    }
    n = fi_cq_read(weft_ofi.cq, ent, OFI_CQ_BATCH);
    if (n == -FI_EAGAIN) {
        return events;
    }
    if (n == -FI_EAVAIL) {
        cq_error();
        return events + 1;
    }
    if (n < 0) {
        weft_log_error("netmod: fi_cq_read failed: %s", weft_ofi_fab.strerror((int)-n));
        weft_ofi.peer_lost(weft_ofi.me, "the completion queue failed");
        return events;
    }
    for (ssize_t i = 0; i < n; i++) {
        ofi_buf_t *b = ent[i].op_context;
        if (b->is_rx == 3) {
            ofi_win_rma_done(b, 0);
            continue;
        }
        if (b->is_rx == 2) {
            weft_ofi.tx_inflight--;
            void  *cookie = b->data;
            size_t len    = b->len;
            free(b);
            weft_ofi.rma_done(cookie, len, 0);
            continue;
        }
        if (!b->is_rx) {
            if (b->data[0] == WEFT_AM_NETMOD_KEEPALIVE) {
                weft_ofi.ka_since[b->dst] = 0;
            }
            weft_ofi.tx_inflight--;
            weft_ofi.inflight[b->dst]--;
            b->next     = weft_ofi.free_tx;
            weft_ofi.free_tx = b;
            continue;
        }
        net_hdr_t h;
        memcpy(&h, b->data, sizeof(h));
        if (h.flags != 0 && !ofi_dyn_arrival(&h, b->data + sizeof(h))) {
            ofi_post_recv(b);
            continue;
        }
        if (h.seq == weft_ofi.recv_seq[h.world]) {
            ofi_deliver(&h, b->data + sizeof(h));
            while (weft_ofi.early[h.world] &&
                   weft_ofi.early[h.world]->hdr.seq == weft_ofi.recv_seq[h.world]) {
                early_t *e            = weft_ofi.early[h.world];
                weft_ofi.early[h.world]    = e->next;
                ofi_deliver(&e->hdr, e->payload);
                free(e);
            }
        } else {
            ofi_keep_early(&h, b->data + sizeof(h));
        }
        ofi_post_recv(b);
    }
    return events + (int)n;
}

/* Goodbyes go to every netmod peer (not only those we talked to: a peer
 * may have sent to us without our knowing yet). Sent from quiesce_done
 * as send buffers free up. */
/* Sends to processes of other jobs we gave up on (disconnected, or never
 * answered): nobody waits for those. */
static int stuck_sends(void)
{
    int n = 0;

    for (int p = 0; p < weft_ofi.npeers; p++) {
        n += ofi_peer_gone(p) ? weft_ofi.inflight[p] : 0;
    }
    return n;
}

void ofi_quiesce_start(void)
{
    for (int p = 0; p < weft_ofi.size; p++) {
        weft_ofi.byes_due += weft_ofi.uses_netmod[p] != 0;
    }
    weft_ofi.byes_to_send = 0; /* next peer to greet */
}

int ofi_quiesce_done(void)
{
    while (weft_ofi.byes_to_send < weft_ofi.size) {
        int p = weft_ofi.byes_to_send;
        if (weft_ofi.uses_netmod[p]) {
            if (ofi_am_reserve(p, 0) == NULL) {
                return 0;
            }
            ofi_am_commit(p, WEFT_AM_NETMOD_BYE, 0, 0, 0, 0);
        }
        weft_ofi.byes_to_send++;
    }
    /* Every peer said goodbye, or is lost (it never will). */
    for (int p = 0; p < weft_ofi.size; p++) {
        if (weft_ofi.uses_netmod[p] && weft_ofi.gone[p] == 0) {
            return 0;
        }
    }
    return weft_ofi.tx_inflight == stuck_sends() &&
           weft_ofi.queue_head == NULL;
}

/* Finalize waits until this says 0 (sends with completions still out). */
int ofi_busy(void)
{
    return weft_ofi.tx_inflight > stuck_sends() || weft_ofi.queue_head != NULL;
}

int ofi_wait_fd(void)
{
    return weft_ofi.wait_fd;
}

int ofi_wait_ready(void)
{
    struct fid *fids[1] = {&weft_ofi.cq->fid};

    ofi_keepalives(); /* a rank asleep polls rarely: keep the once-a-second beat */
    if (weft_ofi.queue_head != NULL) {
        return 0; /* queued sends go out from progress, not from a wakeup */
    }
    if (fi_trywait(weft_ofi.fabric, fids, 1) != FI_SUCCESS) {
        return 0;
    }
    /* Nothing is pending, so the fd should not be readable (but for an
     * arrival since). A provider whose fd stays readable anyway turns every
     * sleep into a spin: libfabric 1.17's net provider did (100% CPU in
     * blocking waits). After WAIT_FD_STUCK_MAX such sleeps in a row its fd
     * is dropped, and core naps on the futex as for providers without one. */
    struct pollfd p = {.fd = weft_ofi.wait_fd, .events = POLLIN};
    if (poll(&p, 1, 0) != 1) {
        weft_ofi.wait_fd_stuck = 0;
        return 1;
    }
    if (++weft_ofi.wait_fd_stuck >= WAIT_FD_STUCK_MAX) {
        /* Said by rank 0 only: every rank runs the same provider, and a
         * line per rank buries the job's output. */
        if (weft_ofi.me == 0) {
            weft_log_warn("netmod: provider %s: its wait fd stays readable with no completion "
                          "pending; sleeping waits (blocking wait policy, progress thread) nap "
                          "1-2 ms instead of sleeping on it (WEFT_OFI_PROVIDER=tcp;ofi_rxm sleeps "
                          "on its fd)",
                          weft_ofi.info->fabric_attr->prov_name);
        }
        weft_ofi.wait_fd = -1;
        return 0;
    }
    return 1;
}

