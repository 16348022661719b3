/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * A lost process (core/dev/peer.h) fails every point-to-point request that
 * needs it, so no wait on it lasts forever:
 *   - posted receives from it, and ANY_SOURCE receives on a communicator
 *     that contains it (MPI-4 allows failing those rather than hanging),
 *     except on internal service communicators (RMA active messages);
 *   - every collective-context receive on a communicator that contains it: a
 *     collective cannot complete without it, and a survivor that left the
 *     collective on the error would leave the others waiting for it. (A
 *     collective's rendezvous send to a survivor that failed its receive
 *     still waits: failing it while that survivor may yet answer would free
 *     the request under it. Collectives' small messages are eager.);
 *   - sends to it: queued, streaming, or waiting for its CTS/FIN;
 *   - matched rendezvous receives from it still moving data;
 *   - later operations naming it (p2p_lost_check), once nothing it sent
 *     before dying is left to receive.
 * Its queued control messages and unexpected RTSs (whose data can no longer
 * be fetched) are dropped; eager messages it sent before dying stay
 * receivable. Collectives fail through their point-to-point requests.
 */
#include "core/pt2pt/proto_internal.h"

#include <stdlib.h>

#include "core/comm.h"
#include "core/mpit/pvar.h"
#include "core/status.h"

/* Rank of process id world in comm's peer group, or -1. */
static int comm_rank_of(const weft_comm_t *comm, int world)
{
    for (int i = 0; comm != NULL && i < comm->peer_size; i++) {
        if (comm->peer_world[i] == world) {
            return i;
        }
    }
    return -1;
}

void p2p_fail_lost(weft_request_t *req, int world, int comm_rank)
{
    /* A fragmented message it was filling gets no more fragments: forget
     * it now (a blocking receive's request is on a stack frame that ends
     * as soon as this returns). */
    if (world >= 0 && world < p2p.npeers && p2p.peers[world].frag_req == req) {
        p2p.peers[world].frag_req = NULL;
    }
    req->failed_peer = world + 1;
    req->failed_rank = comm_rank;
    if (req->kind == WEFT_REQ_RECV && req->status.MPI_SOURCE == MPI_ANY_SOURCE &&
        comm_rank >= 0) {
        req->status.MPI_SOURCE = comm_rank;
    }
    weft_status_set_bytes(&req->status, 0);
    weft_request_fail(req, WEFT_ERR_PROC_LOST);
}

/* Process id a pt2pt request talks to (a receive: its matched source), or -1. */
static int req_world(const weft_request_t *r)
{
    int rank = r->kind == WEFT_REQ_RECV ? r->status.MPI_SOURCE : r->peer;

    if (r->comm == NULL || rank < 0 || rank >= r->comm->peer_size) {
        return -1;
    }
    return r->comm->peer_world[rank];
}

/* in_pending / in_sends_out: whether each request of the list is counted
 * in p2p.pending / p2p.sends_out. */
static void fail_list(weft_request_t *head, int world, int in_pending, int in_sends_out)
{
    while (head) {
        weft_request_t *next = head->next;
        head->next           = NULL;
        p2p.pending -= in_pending;
        p2p.sends_out -= in_sends_out;
        p2p_fail_lost(head, world, comm_rank_of(head->comm, world));
        head = next;
    }
}

static int is_coll(const weft_request_t *r)
{
    return r->comm != NULL && r->context == r->comm->context_id + WEFT_CTX_COLL;
}

static void fail_posted(int world)
{
    for (weft_request_t *r = p2p.posted.next; r != &p2p.posted;) {
        weft_request_t *next = r->next;
        int             rank = comm_rank_of(r->comm, world);
        int any = r->peer == MPI_ANY_SOURCE && !r->comm->any_source_outlives_losses;
        if (rank >= 0 && (any || r->peer == rank || is_coll(r))) {
            WEFT_PVAR_LEVEL_DEC(POSTED_QUEUE_LEN);
            r->prev->next = r->next;
            r->next->prev = r->prev;
            r->next = r->prev = NULL;
            p2p_fail_lost(r, world, rank);
        }
        r = next;
    }
}

static void drop_unexpected_rts(int world)
{
    for (weft_unexp_t *u = p2p.unexp.next; u != &p2p.unexp;) {
        weft_unexp_t *next = u->next;
        if (u->peer == world && u->type == WEFT_AM_PT2PT_RTS) {
            p2p_unexp_remove(u);
            p2p_unexp_free(u);
        }
        u = next;
    }
}

/* Per-peer protocol state: every request it holds fails, its queues empty. */
static void fail_peer_state(int world)
{
    peer_state_t *ps = &p2p.peers[world];

    while (ps->ctrl_head) {
        pending_ctrl_t *c = ps->ctrl_head;
        ps->ctrl_head     = c->next;
        free(c);
        p2p.pending--;
    }
    ps->ctrl_tail = NULL;
    fail_list(ps->sendq_head, world, 1, 0); /* never left */
    ps->sendq_head = ps->sendq_tail = NULL;
    fail_list(ps->r3_head, world, 1, 1);
    ps->r3_head = ps->r3_tail = NULL;
    fail_list(ps->pipe_wait_head, world, 0, 0);
    ps->pipe_wait_head = ps->pipe_wait_tail = NULL;
    if (ps->pipe_recv) {
        p2p.pending--;
        p2p_fail_lost(ps->pipe_recv, world, comm_rank_of(ps->pipe_recv->comm, world));
        ps->pipe_recv = NULL;
    }
    if (ps->pipe_send) {
        p2p.pending--;
        p2p.sends_out--;
        p2p_fail_lost(ps->pipe_send, world, comm_rank_of(ps->pipe_send->comm, world));
        ps->pipe_send = NULL;
    }
    for (int k = 0; k < COOP_SLOTS; k++) {
        weft_request_t *sides[2] = {ps->coop_send[k], ps->coop_recv[k]};
        for (int s = 0; s < 2; s++) {
            if (sides[s] != NULL) {
                p2p.pending--;
                p2p.sends_out -= s == 0;
                if (!weft_request_is_complete(sides[s])) {
                    p2p_fail_lost(sides[s], world, comm_rank_of(sides[s]->comm, world));
                }
            }
        }
        ps->coop_send[k] = ps->coop_recv[k] = NULL;
    }
}

/* Requests no queue holds: sends whose RTS went out (awaiting CTS or FIN)
 * and matched receives waiting for data. */
static void fail_in_flight(weft_request_t *r, void *arg)
{
    int world = *(int *)arg;

    if (r->persistent || (r->kind != WEFT_REQ_SEND && r->kind != WEFT_REQ_RECV) ||
        (r->kind == WEFT_REQ_RECV && r->next != NULL)) {
        return;
    }
    if (req_world(r) != world) {
        return;
    }
    if (r->kind == WEFT_REQ_SEND) {
        p2p.sends_out--; /* counted when its RTS left (or its stream began) */
        p2p_net_send_release(r);
    }
    p2p_fail_lost(r, world, comm_rank_of(r->comm, world));
}

static void p2p_peer_lost(int world)
{
    if (world < 0 || world >= p2p.npeers) {
        return;
    }
    fail_posted(world);
    drop_unexpected_rts(world);
    p2p_net_peer_lost(world);
    fail_peer_state(world);
    weft_request_foreach_live(fail_in_flight, &world);
}

void p2p_fault_init(void)
{
    weft_dev_on_peer_lost(p2p_peer_lost);
}

int p2p_lost_check(weft_request_t *req, weft_comm_t *comm, int rank)
{
    if (rank != MPI_ANY_SOURCE && req->context != comm->context_id + WEFT_CTX_COLL) {
        int world = comm->peer_world[rank];
        if (!weft_peer(world)->failed) {
            return 0;
        }
        p2p_fail_lost(req, world, rank);
        return 1;
    }
    if (rank == MPI_ANY_SOURCE && comm->any_source_outlives_losses) {
        return 0;
    }
    int lost = weft_comm_first_lost(comm);
    if (lost < 0) {
        return 0;
    }
    p2p_fail_lost(req, comm->peer_world[lost], lost);
    return 1;
}
