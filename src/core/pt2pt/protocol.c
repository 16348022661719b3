/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Point-to-point protocols over active messages (handler ids in
 * transport/transport.h, registered in the AM table at init).
 *
 * Order: messages from one sender travel through one FIFO channel (a shm
 * ring, or the netmod, which delivers AMs in order per peer) and are matched
 * in arrival order, and a send that cannot leave yet waits in a per-peer
 * FIFO that later sends to that peer also join; so MPI's non-overtaking rule
 * holds for eager and rendezvous messages alike.
 *
 * Protocols:
 *   EAGER  header + data; matched data is copied to the receive buffer,
 *          unmatched data to an unexpected buffer.
 *   RTS    rendezvous request: size (and for a local sender, the data's
 *          location). The matched receiver continues by the peer's kind:
 *          local (shm_rndv.c: CMA pull + FIN, cooperative copy, or CTS and
 *          the 2-copy pipe) or remote (net_rndv.c: CTS, then R3 chunks).
 *          Synchronous sends always use RTS, so they complete only after
 *          the match.
 *   FRAG   to a remote peer above the eager limit and up to
 *          WEFT_NET_FRAG_MAX: RTS carrying the first fragment, then DATA
 *          fragments, sent at once (net_frag.c).
 * Local peers are reached by direct shm calls (peer->is_local), remote ones
 * through the netmod ops table.
 */
#include "core/pt2pt/proto_internal.h"
#include "core/pt2pt/shm_thresholds.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "core/status.h"
#include "transport/shm/shm.h"
#include "util/log.h"
#include "util/tunables.h"

p2p_t p2p;

/* ---- sending AMs ------------------------------------------------------- */

/* One AM to peer by its channel; 0 sent, -1 no room yet. */
static inline int am_send(int peer, uint8_t type, int32_t tag, uint32_t ctx, int32_t src,
                          const void *payload, size_t len)
{
    const weft_peer_t *p = weft_peer(peer);

    if (p->is_local) {
        return weft_shm_send(p->shm_index, type, tag, ctx, src, payload, len);
    }
    return weft_dev_net_send(peer, type, tag, ctx, src, payload, len);
}

static void sendq_push(peer_state_t *ps, weft_request_t *req)
{
    req->next = NULL;
    if (ps->sendq_tail) {
        ps->sendq_tail->next = req;
    } else {
        ps->sendq_head = req;
    }
    ps->sendq_tail = req;
    p2p.pending++;
}

void p2p_ctrl_send(int peer, uint8_t type, uint64_t a, uint64_t b)
{
    peer_state_t *ps      = &p2p.peers[peer];
    uint64_t      body[2] = {a, b};

    if (ps->ctrl_head == NULL &&
        am_send(peer, type, 0, 0, 0, body, type == WEFT_AM_PT2PT_CTS ? 16 : 8) == 0) {
        return;
    }
    pending_ctrl_t *c = malloc(sizeof(*c));
    if (c == NULL) {
        weft_runtime_abort(MPI_ERR_NO_MEM, "out of memory queueing a control message");
    }
    c->next    = NULL;
    c->type    = type;
    c->body[0] = a;
    c->body[1] = b;
    if (ps->ctrl_tail) {
        ps->ctrl_tail->next = c;
    } else {
        ps->ctrl_head = c;
    }
    ps->ctrl_tail = c;
    p2p.pending++;
}

/* ---- delivering data into a receive ---------------------------------- */

void p2p_recv_set_status(weft_request_t *req, int src, int tag, MPI_Count bytes)
{
    MPI_Count cap = req->count * req->datatype->size;

    WEFT_PVAR_INC(MSGS_RECEIVED);
    req->status.MPI_SOURCE = src;
    req->status.MPI_TAG    = tag;
    if (bytes > cap) {
        /* Only the class here: this runs inside progress, possibly during an
         * unrelated call; the completing call reports it. */
        req->status.MPI_ERROR = MPI_ERR_TRUNCATE;
        bytes = cap;
    }
    weft_status_set_bytes(&req->status, bytes);
}

static void recv_copy_in(weft_request_t *req, const void *data, MPI_Count bytes)
{
    MPI_Count cap = req->count * req->datatype->size;
    MPI_Count n   = bytes < cap ? bytes : cap;

    if (n == 0) {
        return;
    }
    if (req->datatype->is_contig) {
        memcpy((char *)req->buf + req->datatype->true_lb, data, (size_t)n);
    } else {
        weft_dt_unpack(req->datatype, req->count, req->buf, 0, data, n);
    }
}

/* A matched rendezvous: continue by the sender's channel. */
static void rndv_recv(int peer, weft_request_t *req, const rts_t *rts)
{
    if (weft_peer(peer)->is_local) {
        p2p_shm_rndv_recv(peer, req, rts);
    } else {
        p2p_net_rndv_recv(peer, req, rts);
    }
}

void weft_pt2pt_recv_unexpected(weft_request_t *req, weft_unexp_t *u)
{
    p2p_recv_set_status(req, u->src, u->tag, u->bytes);
    switch (u->type) {
    case WEFT_AM_PT2PT_EAGER:
        if (u->data == NULL && u->self_sreq) { /* large self-send: one copy, now */
            weft_request_t *s = u->self_sreq;
            weft_dt_copy(s->buf, s->count, s->datatype, req->buf, req->count, req->datatype);
        } else {
            recv_copy_in(req, u->data, u->bytes);
        }
        if (u->self_sreq) { /* synchronous or rendezvous self-send: completes at the match */
            weft_request_complete(u->self_sreq);
        }
        weft_request_complete(req);
        break;
    case WEFT_AM_PT2PT_RTS: {
        rts_t rts = {u->rts[0], u->rts[1], u->rts[2], u->rts[3], u->rts[4]};
        rndv_recv(u->peer, req, &rts);
        break;
    }
    case WEFT_AM_PT2PT_DATA: /* fragmented eager from a remote peer */
        p2p_net_frag_recv_unexpected(req, u);
        break;
    }
    p2p_unexp_free(u);
}

/* ---- arrivals (AM handlers) ------------------------------------------- */

static void on_eager(int peer, const weft_am_t *m)
{
    weft_request_t *req = p2p_match_posted(m->context, m->src, m->tag);

    if (req) {
        p2p_recv_set_status(req, m->src, m->tag, m->len);
        recv_copy_in(req, m->payload, m->len);
        weft_request_complete(req);
        return;
    }
    weft_unexp_t *u = p2p_unexp_new(WEFT_AM_PT2PT_EAGER, m->context, m->src, m->tag, peer, m->len);
    memcpy(p2p_unexp_buffer(u, m->len), m->payload, m->len);
    if (weft_peer(peer)->is_local) {
        p2p_unexp_hold(u);
    }
}

static void on_rts(int peer, const weft_am_t *m)
{
    rts_t rts;

    if (weft_peer(peer)->failed) {
        return; /* its data can no longer be fetched */
    }
    memcpy(&rts, m->payload, sizeof(rts));
    if (rts.iov_count == RTS_FRAG && !weft_peer(peer)->is_local) {
        p2p_net_frag_first(peer, m, &rts);
        return;
    }
    weft_request_t *req = p2p_match_posted(m->context, m->src, m->tag);
    if (req) {
        p2p_recv_set_status(req, m->src, m->tag, (MPI_Count)rts.bytes);
        rndv_recv(peer, req, &rts);
    } else {
        weft_unexp_t *u = p2p_unexp_new(WEFT_AM_PT2PT_RTS, m->context, m->src, m->tag, peer,
                                        (MPI_Count)rts.bytes);
        memcpy(u->rts, &rts, sizeof(rts));
    }
}

static void on_cts(int peer, const weft_am_t *m)
{
    cts_t cts;

    if (weft_peer(peer)->failed) {
        return; /* the send it answers has failed (and may be gone) */
    }
    memcpy(&cts, m->payload, sizeof(cts));
    weft_request_t *sreq = (weft_request_t *)(uintptr_t)cts.sreq;
    if (sreq->bytes == 0) {
        p2p.sends_out--;
        WEFT_EVENT_RAISE(RNDV_FINISH, sreq->peer, sreq->tag, 0, 0);
        weft_request_complete(sreq);
    } else if (weft_peer(peer)->is_local) {
        p2p_shm_cts(peer, sreq);
    } else {
        p2p_net_cts(peer, sreq, cts.rreq);
    }
}

static void on_fin(int peer, const weft_am_t *m)
{
    uint64_t sreq;

    if (weft_peer(peer)->failed) {
        return; /* the send it answers has failed (and may be gone) */
    }
    memcpy(&sreq, m->payload, sizeof(sreq));
    weft_request_t *r = (weft_request_t *)(uintptr_t)sreq;
    if (weft_peer(peer)->is_local) {
        p2p_shm_fin(peer, r);
    } else {
        p2p_net_send_release(r);
    }
    p2p.sends_out--;
    WEFT_EVENT_RAISE(RNDV_FINISH, r->peer, r->tag, r->bytes, 0);
    weft_request_complete(r);
}

/* ---- sending ----------------------------------------------------------- */

/* Flow control: a local receiver that holds more than its held_limit
 * bytes of our eager messages unmatched (a root that back-to-back senders
 * outrun) gets the next ones as rendezvous, which wait for its receives.
 * Eager copies would only pile up on its heap: 1.6 GB within 1.5 s at np 4
 * for back-to-back gathers of 64 KiB blocks. */
static inline int held_back(const weft_peer_t *pe)
{
    if (!pe->is_local || !weft_shm_held_back(pe->shm_index)) {
        return 0;
    }
    WEFT_PVAR_INC(EAGER_HELD_BACK);
    return 1;
}

/* Try to hand a send to its channel; returns 0 when done, -1 when no room. */
static int send_try(int peer, weft_request_t *req)
{
    const weft_peer_t *pe    = weft_peer(peer);
    size_t             limit = pe->is_local ? p2p.eager_limit : p2p.net_eager_limit;

    if (req->mode != WEFT_SEND_SYNC && (size_t)req->bytes <= limit && !held_back(pe)) {
        void *p = pe->is_local ? weft_shm_reserve(pe->shm_index, (size_t)req->bytes)
                               : weft_dev_net_reserve(peer, (size_t)req->bytes);
        if (p == NULL) {
            WEFT_PVAR_INC(SHM_RING_FULL);
            return -1;
        }
        if (req->bytes > 0) {
            if (req->datatype->is_contig) {
                memcpy(p, (const char *)req->buf + req->datatype->true_lb, (size_t)req->bytes);
            } else {
                weft_dt_pack(req->datatype, req->count, req->buf, 0, p, req->bytes);
            }
        }
        if (pe->is_local) {
            weft_shm_commit(pe->shm_index, WEFT_AM_PT2PT_EAGER, req->tag, req->context,
                            req->status.MPI_SOURCE, (size_t)req->bytes);
        } else {
            weft_dev_net_commit(peer, WEFT_AM_PT2PT_EAGER, req->tag, req->context,
                                req->status.MPI_SOURCE, (size_t)req->bytes);
        }
        WEFT_PVAR_INC(EAGER_MSGS_SENT);
        WEFT_PVAR_ADD(EAGER_BYTES_SENT, req->bytes);
        weft_request_complete(req);
        return 0;
    }
    if (!pe->is_local && req->mode != WEFT_SEND_SYNC && (size_t)req->bytes <= p2p.net_frag_max) {
        return p2p_net_frag_send(peer, req);
    }
    rts_t rts = {(uint64_t)(uintptr_t)req, (uint64_t)req->bytes, 0, 0, 0};
    if (pe->is_local && p2p_shm_rts_prepare(peer, req, &rts) != 0) {
        return 0; /* the request failed (out of memory) */
    }
    if (!pe->is_local) {
        p2p_net_rts_prepare(req, &rts);
    }
    if (am_send(peer, WEFT_AM_PT2PT_RTS, req->tag, req->context, req->status.MPI_SOURCE, &rts,
                sizeof(rts)) != 0) {
        /* retried later: give the slot / registration back until then */
        if (!pe->is_local) {
            p2p_net_send_release(req);
        } else if (rts.coop) {
            weft_shm_coop_cancel(pe->shm_index, rts.coop);
        }
        WEFT_PVAR_INC(SHM_RING_FULL);
        return -1;
    }
    if (pe->is_local && rts.coop) {
        req->proto[3] = rts.coop;
        p2p.peers[peer].coop_send[(rts.coop & 0xff) - 1] = req;
        p2p.pending++;
    }
    p2p.sends_out++;
    WEFT_PVAR_INC(RNDV_MSGS_SENT);
    WEFT_PVAR_ADD(RNDV_BYTES_SENT, req->bytes);
    WEFT_EVENT_RAISE(RNDV_START, req->peer, req->tag, req->bytes, 0);
    return 0;
}

/* Send to ourselves: match directly; else queue as unexpected. Up to the
 * eager size with a copy (the send completes at once); above it as a
 * rendezvous with the future receive: no copy, the send completes when a
 * receive matches and copies straight from the send buffer (a 2 GiB Isend to
 * self returns at once and never doubles memory). */
static void self_send(weft_request_t *req)
{
    weft_request_t *rreq = p2p_match_posted(req->context, req->status.MPI_SOURCE, req->tag);

    WEFT_PVAR_INC(EAGER_MSGS_SENT);
    WEFT_PVAR_ADD(EAGER_BYTES_SENT, req->bytes);
    if (rreq) {
        p2p_recv_set_status(rreq, req->status.MPI_SOURCE, req->tag, req->bytes);
        weft_dt_copy(req->buf, req->count, req->datatype, rreq->buf, rreq->count, rreq->datatype);
        weft_request_complete(rreq);
        weft_request_complete(req);
        return;
    }
    weft_unexp_t *u = p2p_unexp_new(WEFT_AM_PT2PT_EAGER, req->context, req->status.MPI_SOURCE,
                                    req->tag, -1, req->bytes);
    if ((size_t)req->bytes > p2p.eager_limit) {
        u->data      = NULL; /* rendezvous: the data stays in the send buffer */
        u->self_sreq = req;
        return;
    }
    u->data = (size_t)req->bytes <= sizeof(u->inline_data) ? u->inline_data
                                                            : malloc((size_t)req->bytes + 1);
    if (u->data == NULL) {
        weft_runtime_abort(MPI_ERR_NO_MEM, "out of memory buffering a self-send");
    }
    weft_dt_pack(req->datatype, req->count, req->buf, 0, u->data, req->bytes);
    if (req->mode == WEFT_SEND_SYNC) {
        u->self_sreq = req; /* completes when a receive matches it */
    } else {
        weft_request_complete(req);
    }
}

/* A request of kind on comm for dt, holding references to both; one whose
 * peer is MPI_PROC_NULL is complete at once with the empty status. NULL when
 * out of memory. */
static weft_request_t *p2p_request_new(weft_req_kind_t kind, weft_comm_t *comm,
                                       weft_datatype_t *dt, int peer)
{
    weft_request_t *req = weft_request_alloc(kind);

    if (req == NULL) {
        return NULL;
    }
    req->comm = comm;
    weft_comm_retain(comm);
    req->datatype = dt;
    weft_datatype_retain(dt);
    if (peer == MPI_PROC_NULL) {
        req->status.MPI_SOURCE = MPI_PROC_NULL;
        req->status.MPI_TAG    = MPI_ANY_TAG;
        weft_request_complete(req);
    }
    return req;
}

int weft_isend(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
               weft_comm_t *comm, unsigned ctx_offset, weft_send_mode_t mode,
               weft_request_t **req_p)
{
    weft_request_t *req = p2p_request_new(WEFT_REQ_SEND, comm, dt, dest);
    int             peer;

    if (req == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    *req_p = req;
    if (dest == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    req->buf               = (void *)buf;
    req->count             = count;
    req->peer              = dest;
    req->tag               = tag;
    req->context           = comm->context_id + ctx_offset;
    req->mode              = mode;
    req->bytes             = count * dt->size;
    req->status.MPI_SOURCE = comm->rank; /* what the receiver will see */
    peer                   = comm->peer_world[dest];
    WEFT_TRAFFIC(peer, req->bytes);
    WEFT_PVAR_COMM_SENT(comm, req->bytes);
    if (peer == p2p.me_world) {
        self_send(req);
        return MPI_SUCCESS;
    }
    if (weft_dev.nfailed && p2p_lost_check(req, comm, dest)) {
        return MPI_SUCCESS; /* its wait reports the lost process */
    }
    peer_state_t *ps = &p2p.peers[peer];
    if (ps->sendq_head != NULL || send_try(peer, req) != 0) {
        sendq_push(ps, req);
    }
    return MPI_SUCCESS;
}

int weft_irecv(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
               weft_comm_t *comm, unsigned ctx_offset, weft_request_t **req_p)
{
    weft_request_t *req = p2p_request_new(WEFT_REQ_RECV, comm, dt, source);
    weft_unexp_t   *u;

    if (req == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    *req_p = req;
    if (source == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    req->buf     = buf;
    req->count   = count;
    req->peer    = source;
    req->tag     = tag;
    req->context = comm->context_id + ctx_offset;
    u = weft_pt2pt_find_unexpected(req->context, source, tag, 1);
    if (u != NULL) {
        weft_pt2pt_recv_unexpected(req, u);
        return MPI_SUCCESS;
    }
    if (weft_dev.nfailed && p2p_lost_check(req, comm, source)) {
        return MPI_SUCCESS; /* nothing it sent is left: its wait reports the loss */
    }
    p2p_post_recv(req);
    return MPI_SUCCESS;
}

/* A self-send still waiting in the unexpected queue for its receive:
 * cancel it there. Returns 1 if it was found. */
static int self_send_cancel(weft_request_t *req)
{
    for (weft_unexp_t *u = p2p.unexp.next; u != &p2p.unexp; u = u->next) {
        if (u->self_sreq != req) {
            continue;
        }
        p2p_unexp_remove(u);
        p2p_unexp_free(u);
        weft_status_set_cancelled(&req->status, 1);
        weft_request_complete(req);
        return 1;
    }
    return 0;
}

int weft_pt2pt_cancel(weft_request_t *req)
{
    if (weft_request_is_complete(req)) {
        return 0;
    }
    if (req->kind == WEFT_REQ_RECV && req->next != NULL) {
        for (weft_request_t *r = p2p.posted.next; r != &p2p.posted; r = r->next) {
            if (r == req) {
                WEFT_PVAR_LEVEL_DEC(POSTED_QUEUE_LEN);
                r->prev->next = r->next;
                r->next->prev = r->prev;
                r->next = r->prev = NULL;
                weft_status_set_cancelled(&req->status, 1);
                weft_status_set_bytes(&req->status, 0);
                weft_request_complete(req);
                return 1;
            }
        }
        return 0;
    }
    if (req->kind == WEFT_REQ_SEND && self_send_cancel(req)) {
        return 1;
    }
    if (req->kind == WEFT_REQ_SEND) {
        /* Only a send still waiting for its channel has not left yet. */
        for (int i = 0; i < p2p.npeers; i++) {
            peer_state_t   *ps   = &p2p.peers[i];
            weft_request_t *prev = NULL;
            for (weft_request_t *r = ps->sendq_head; r != NULL; prev = r, r = r->next) {
                if (r != req) {
                    continue;
                }
                if (!weft_peer(i)->is_local && p2p_net_frag_started(r)) {
                    return 0; /* fragments of it have left */
                }
                if (prev) {
                    prev->next = r->next;
                } else {
                    ps->sendq_head = r->next;
                }
                if (ps->sendq_tail == r) {
                    ps->sendq_tail = prev;
                }
                p2p.pending--;
                weft_status_set_cancelled(&req->status, 1);
                weft_request_complete(req);
                return 1;
            }
        }
    }
    return 0;
}

/* ---- deferred work ----------------------------------------------------- */

int weft_pt2pt_progress(void)
{
    int events = 0;

    if (weft_dev.netmod) {
        events += weft_dev.netmod->progress();
    }
    if (weft_dev.loss_due) {
        weft_dev_handle_losses(); /* here, outside every transport's loop */
        events++;
    }
    if (p2p.pending == 0) {
        return events;
    }
    events += p2p_net_rget_progress();
    for (int peer = 0; peer < p2p.npeers; peer++) {
        peer_state_t *ps = &p2p.peers[peer];
        while (ps->ctrl_head) {
            pending_ctrl_t *c = ps->ctrl_head;
            if (am_send(peer, c->type, 0, 0, 0, c->body, c->type == WEFT_AM_PT2PT_CTS ? 16 : 8) !=
                0) {
                break;
            }
            ps->ctrl_head = c->next;
            if (ps->ctrl_head == NULL) {
                ps->ctrl_tail = NULL;
            }
            free(c);
            p2p.pending--;
            events++;
        }
        while (ps->sendq_head) {
            weft_request_t *req = ps->sendq_head;
            if (send_try(peer, req) != 0) {
                break;
            }
            ps->sendq_head = req->next;
            if (ps->sendq_head == NULL) {
                ps->sendq_tail = NULL;
            }
            req->next = NULL;
            p2p.pending--;
            events++;
        }
        if (weft_peer(peer)->is_local) {
            events += p2p_shm_progress(peer, ps);
        } else if (ps->r3_head) {
            events += p2p_net_progress(peer, ps);
        }
    }
    return events;
}

int weft_pt2pt_drain(void)
{
    weft_wait_t w = {0};

    for (;;) {
        int busy = 0;
        for (int peer = 0; peer < p2p.npeers; peer++) {
            peer_state_t *ps = &p2p.peers[peer];
            busy |= ps->sendq_head || ps->ctrl_head || ps->pipe_send || ps->r3_head;
        }
        /* A peer may still need us (CTS, pipeline) for a send the user
         * already freed: finalize only once every send has completed. The
         * netmod's own copies must have left too. */
        busy |= p2p.sends_out > 0 || weft_pt2pt_api_busy();
        busy |= weft_dev.netmod != NULL && weft_dev.netmod->busy();
        if (!busy) {
            break;
        }
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    if (weft_dev.netmod == NULL) {
        return MPI_SUCCESS;
    }
    /* Everything of ours has completed; now meet every netmod peer while
     * still progressing (see quiesce_done in transport.h). */
    weft_dev.netmod->quiesce_start();
    while (!weft_dev.netmod->quiesce_done()) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    return MPI_SUCCESS;
}

/* ---- setup ------------------------------------------------------------- */

/* The process table grew (a process of another job was connected). */
static int p2p_grow(int nprocs)
{
    peer_state_t *p = realloc(p2p.peers, sizeof(*p) * (size_t)nprocs);

    if (p == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot grow point-to-point state");
    }
    memset(p + p2p.npeers, 0, sizeof(*p) * (size_t)(nprocs - p2p.npeers));
    p2p.peers  = p;
    p2p.npeers = nprocs;
    return MPI_SUCCESS;
}

int weft_pt2pt_module_init(void)
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;
    weft_shm_config_t      cfg;
    int                    rc;

    rc = weft_dev_peers_init();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    p2p.me_world = pmi->rank;
    p2p.npeers   = pmi->size;
    p2p.peers    = calloc((size_t)pmi->size, sizeof(peer_state_t));
    if (p2p.peers == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate point-to-point state");
    }
    weft_dev_set_grow_hook(p2p_grow);
    p2p_fault_init();
    p2p.posted.next = p2p.posted.prev = &p2p.posted;
    p2p_match_init();
    weft_am_register(WEFT_AM_PT2PT_EAGER, on_eager);
    weft_am_register(WEFT_AM_PT2PT_RTS, on_rts);
    weft_am_register(WEFT_AM_PT2PT_CTS, on_cts);
    weft_am_register(WEFT_AM_PT2PT_FIN, on_fin);
    weft_am_register(WEFT_AM_PT2PT_DATA, p2p_net_data);

    cfg.ring_bytes      = weft_p2p_ring_bytes(pmi->local_size);
    cfg.pipe_slot_bytes = weft_tunables.SMP_SEND_BUF_SIZE;
    cfg.pipe_slots      = (int)weft_tunables.SMP_SEND_BUF_COUNT;
    cfg.use_cma         = weft_tunables.SMP_USE_CMA;
    cfg.wake_on_send    = weft_tunables.WAIT_POLICY == 3; /* blocking */
    cfg.time_xcopy      = !weft_progress_oversubscribed();
    cfg.cma_extra_ns    = weft_tunables.SMP_CMA_EXTRA_COST;
    /* Oversubscribed: every rank's prefault thread took the CPUs from ranks
     * still starting (np 8 hello 64 -> 17.5 ms, np 32 211 -> 51 ms, docs/performance.md); rings
     * fault on first use instead, and only those of pairs that talk. */
    cfg.prefault_rings  = !weft_progress_oversubscribed();
    cfg.node_facts      = p2p_shm_node_facts; /* local rank 0 measures for the node */
    if (weft_shm_init(pmi, weft_runtime.jobid, &cfg, weft_am_handlers) != 0) {
        return weft_error(MPI_ERR_OTHER, "shared-memory channel setup failed");
    }
    p2p.cma = weft_shm_cma_enabled();
    weft_dev_watch_init();
    WEFT_PVAR_SET(SHM_RING_BYTES, cfg.ring_bytes);
    rc = p2p_shm_tune(weft_shm_max_payload());
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    p2p_match_pool_size(pmi->local_size - 1);
    p2p.net_eager_limit = weft_tunables.EAGER_THRESHOLD;
    p2p.net_frag_max    = p2p.net_eager_limit > 0 ? weft_tunables.NET_FRAG_MAX : 0;
    p2p.r3_chunk        = weft_tunables.R3_CHUNK_SIZE > 0 ? weft_tunables.R3_CHUNK_SIZE : 65536;
    p2p.rget_window     = (size_t)weft_tunables.NET_RGET_INFLIGHT;
    /* Our largest eager message: the eager limit, or a fragment of as much
     * behind its RTS (net_frag.c); the provider's eager path is sized by it. */
    size_t net_eager    = p2p.net_eager_limit + (p2p.net_frag_max > p2p.net_eager_limit
                                                     ? sizeof(rts_t) : 0);
    size_t net_max      = p2p.r3_chunk + sizeof(r3_hdr_t);
    if (net_max < net_eager) {
        net_max = net_eager;
    }
    if (net_max < sizeof(rts_t)) {
        net_max = sizeof(rts_t);
    }
    /* RNDV_PROTOCOL auto|r3|rget -> want_rma 1|0|2 */
    rc = weft_dev_netmod_init(net_max, net_eager,
                              (int[]){1, 0, 2}[weft_tunables.RNDV_PROTOCOL % 3], p2p_net_rma_done);
    if (rc != MPI_SUCCESS || weft_dev.netmod == NULL) {
        return rc;
    }
    p2p.rget = weft_tunables.RNDV_PROTOCOL != 1 &&
               (weft_dev.netmod->caps() & WEFT_TRANSPORT_CAP_RMA) != 0;
    if (weft_tunables.RNDV_PROTOCOL == 2 && !p2p.rget) {
        return weft_error(MPI_ERR_OTHER,
                          "WEFT_RNDV_PROTOCOL=rget: libfabric provider %s has no RMA (FI_RMA); "
                          "use auto or r3", weft_dev.netmod->provider());
    }
    return MPI_SUCCESS;
}

void weft_pt2pt_module_fini(void)
{
    weft_dev_fini();
    weft_shm_fini();
    p2p_match_fini();
    free(p2p.peers);
    p2p.peers = NULL;
}

/* ---- blocking conveniences ------------------------------------------- */

int weft_send_eager_now(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                        weft_comm_t *comm, unsigned ctx_offset)
{
    MPI_Count          bytes = count * dt->size;
    int                world;
    const weft_peer_t *pe;
    void              *p;

    if (dest < 0 || (size_t)bytes > p2p.eager_limit || !dt->is_contig) {
        return 0;
    }
    world = comm->peer_world[dest];
    pe    = weft_peer(world);
    /* Ourselves is never is_local: self-sends take the general path. */
    if (!pe->is_local || pe->failed || p2p.peers[world].sendq_head != NULL || held_back(pe) ||
        (p = weft_shm_reserve(pe->shm_index, (size_t)bytes)) == NULL) {
        return 0;
    }
    if (bytes > 0) { /* MPI_Send(NULL, 0, ...) is valid; memcpy from NULL is not */
        memcpy(p, (const char *)buf + dt->true_lb, (size_t)bytes);
    }
    weft_shm_commit(pe->shm_index, WEFT_AM_PT2PT_EAGER, tag, comm->context_id + ctx_offset,
                    comm->rank, (size_t)bytes);
    WEFT_PVAR_INC(EAGER_MSGS_SENT);
    WEFT_PVAR_ADD(EAGER_BYTES_SENT, bytes);
    WEFT_TRAFFIC(world, bytes);
    WEFT_PVAR_COMM_SENT(comm, bytes);
    return 1;
}

int weft_recv_now(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
                  weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status)
{
    weft_request_t req;
    weft_unexp_t  *u;
    weft_wait_t    w = {0};

    memset(&req, 0, sizeof(req));
    req.kind     = WEFT_REQ_RECV;
    req.comm     = comm;
    req.datatype = dt;
    req.buf      = buf;
    req.count    = count;
    req.peer     = source;
    req.tag      = tag;
    req.context  = comm->context_id + ctx_offset;
    u = weft_pt2pt_find_unexpected(req.context, source, tag, 1);
    if (u != NULL) {
        weft_pt2pt_recv_unexpected(&req, u);
    } else if (!weft_dev.nfailed || !p2p_lost_check(&req, comm, source)) {
        p2p_post_recv(&req);
    }
    /* The request lives on this stack frame: nothing may refer to it once it
     * completes, and it completes before we return. (Watching only the
     * source's ring head in a tight loop was measured slower, 0.20-0.24 us
     * vs 0.18 us one-way: re-reading the line the sender is about to write
     * delays the sender's ownership of it.) */
    while (!weft_request_is_complete(&req)) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
        /* Matched, moving data (not queued, so the lost-process scan of the
         * request pool cannot see this stack request): its sender lost? */
        if (weft_dev.nfailed && req.next == NULL && !weft_request_is_complete(&req) &&
            req.status.MPI_SOURCE >= 0 &&
            weft_peer(comm->peer_world[req.status.MPI_SOURCE])->failed) {
            p2p_fail_lost(&req, comm->peer_world[req.status.MPI_SOURCE], req.status.MPI_SOURCE);
        }
    }
    if (status != MPI_STATUS_IGNORE) {
        *status = req.status;
    }
    if (req.failed_peer > 0) {
        weft_dev_lost_error(req.failed_peer - 1, req.failed_rank);
    }
    return req.status.MPI_ERROR;
}

int weft_send(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
              weft_comm_t *comm, unsigned ctx_offset)
{
    weft_request_t *req = NULL;
    int             rc  = weft_isend(buf, count, dt, dest, tag, comm, ctx_offset,
                                    WEFT_SEND_STANDARD, &req);
    return rc != MPI_SUCCESS ? rc : weft_request_wait(req, MPI_STATUS_IGNORE);
}

int weft_recv(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
              weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status)
{
    weft_request_t *req = NULL;
    int             rc = weft_irecv(buf, count, dt, source, tag, comm, ctx_offset, &req);
    return rc != MPI_SUCCESS ? rc : weft_request_wait(req, status);
}

int weft_sendrecv(const void *sbuf, MPI_Count scount, weft_datatype_t *sdt, int dest, int stag,
                  void *rbuf, MPI_Count rcount, weft_datatype_t *rdt, int source, int rtag,
                  weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status)
{
    weft_request_t *reqs[2];
    MPI_Status      st[2];
    int             rc;

    rc = weft_irecv(rbuf, rcount, rdt, source, rtag, comm, ctx_offset, &reqs[0]);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_isend(sbuf, scount, sdt, dest, stag, comm, ctx_offset, WEFT_SEND_STANDARD, &reqs[1]);
    if (rc != MPI_SUCCESS) {
        weft_pt2pt_cancel(reqs[0]);
        weft_request_wait(reqs[0], MPI_STATUS_IGNORE);
        return rc;
    }
    rc = weft_request_waitall(2, reqs, st);
    if (status != MPI_STATUS_IGNORE) {
        *status = st[0];
    }
    return rc;
}

int weft_send_bytes(const void *buf, size_t n, int dest, int tag, weft_comm_t *comm)
{
    return weft_send(buf, (MPI_Count)n, weft_datatype_from_handle(MPI_BYTE), dest, tag, comm,
                     WEFT_CTX_COLL);
}

int weft_recv_bytes(void *buf, size_t n, int source, int tag, weft_comm_t *comm)
{
    return weft_recv(buf, (MPI_Count)n, weft_datatype_from_handle(MPI_BYTE), source, tag, comm,
                     WEFT_CTX_COLL, MPI_STATUS_IGNORE);
}
