/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Inter-node rendezvous through the netmod (messages above WEFT_NET_FRAG_MAX,
 * or above WEFT_EAGER_THRESHOLD when fragmented eager is off; and every
 * synchronous send above the eager threshold).
 *
 * RGET (provider with FI_RMA, WEFT_RNDV_PROTOCOL auto or rget; contiguous
 * send buffer): the sender registers its buffer and names it in the RTS
 * (addr, key; iov_count = RTS_RGET); the matched receiver, if its buffer is
 * contiguous, reads straight into it (pieces of the netmod's max_rma, up
 * to WEFT_NET_RGET_INFLIGHT bytes from one sender in flight; a message
 * alone, twice as long one at a time: rget_alone) and answers
 * FIN. Otherwise the receiver answers CTS and the sender drops the
 * registration and streams R3.
 *
 * R3 (pipelined sends): RTS ->
 * (match) -> CTS naming the receive -> the sender streams DATA messages of
 * WEFT_R3_CHUNK_SIZE bytes, each carrying the receive and its offset, packed
 * straight into the netmod's send buffers. The send completes once the last
 * chunk is handed to the netmod (its copy); the receive once every byte has
 * arrived. Chunks of one message may be in flight together, so neither side
 * waits a round trip per chunk.
 */
#include "core/pt2pt/proto_internal.h"

#include <string.h>

#include <stdlib.h>

#include "core/datatype.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"
#include "util/tunables.h"

/* rts.iov_count of a remote RTS whose data can be read (RGET). */
#define RTS_RGET UINT64_MAX

/* A receive being read from the sender's memory. */
typedef struct rget {
    struct rget    *next;
    struct rget    *live_next; /* every read in progress (rget_live) */
    weft_request_t *rreq;      /* NULL: its sender was lost, the receive failed */
    uint64_t        sreq, raddr, key;
    void           *mr;
    char           *local;
    size_t          n, issued, done;
    size_t          piece, window; /* read size and bytes in flight, set at the first issue */
    int             peer;
} rget_t;

static rget_t *rget_wait_head, *rget_wait_tail; /* reads the netmod had no room for */
static rget_t *rget_live;                       /* every read not yet done */
/* Walk the waiting reads at the next progress call: a read completed (its
 * peer's window has room), one was queued, or the netmod was full (any
 * completion may make room). Otherwise the walk would only find every
 * peer still full: with bw's window of 64 receives of 512 KiB behind a
 * 2 MiB window, the walk of ~60 reads on every poll took 11% of the
 * receiver's CPU. */
static int rget_kick;

void p2p_net_rts_prepare(weft_request_t *req, rts_t *rts)
{
    uint64_t key, addr;
    void    *mr;

    if (!p2p.rget || !req->datatype->is_contig || req->bytes == 0 || req->proto[3] != 0) {
        return;
    }
    if (weft_dev.netmod->mem_register((char *)req->buf + req->datatype->true_lb,
                                      (size_t)req->bytes, 1, &key, &addr, &mr) != WEFT_OK) {
        return; /* R3 instead */
    }
    rts->addr      = addr;
    rts->coop      = key;
    rts->iov_count = RTS_RGET;
    req->proto[3]  = (uint64_t)(uintptr_t)mr;
}

/* Drop a send's registration (RTS not sent, CTS instead of a read, FIN). */
void p2p_net_send_release(weft_request_t *req)
{
    if (req->proto[3] != 0) {
        weft_dev.netmod->mem_deregister((void *)(uintptr_t)req->proto[3]);
        req->proto[3] = 0;
    }
}

enum { RGET_ISSUED = 0, RGET_NETMOD_FULL = -1, RGET_PEER_FULL = -2 };

/* A message of at most four pieces that is alone: no read in flight from
 * its sender and no other receive posted (a ping-pong, not a window of
 * receives). It is read in pieces twice as long, one at a time: across two
 * namespace hosts over TCP, 256 KiB 53 against 57 us and 512 KiB 95
 * against 112 (MPICH 57 and 104), where both pieces in flight at once
 * swung between 88 and 164 us at 512 KiB; streaming windows never take
 * it (docs/performance.md, "Across hosts: 16 KiB and 256-512 KiB rows
 * looked at again"). */
static int rget_alone(const rget_t *g)
{
    return g->n <= 4 * weft_dev.netmod->max_rma() && p2p.peers[g->peer].rget_inflight == 0 &&
           p2p.posted.next == &p2p.posted;
}

/* Issue g's remaining reads, while its peer has fewer than g->window bytes
 * of reads in flight (rget_window, or one piece for a message alone): over
 * TCP, a window of 64 1 MiB receives with every piece in flight (512
 * reads) moved 3.7-4.0 GB/s between namespace hosts, and 2 MiB per peer
 * 5.4-5.8 (docs/performance.md, "RGET reads in flight"). */
static int rget_issue(rget_t *g)
{
    peer_state_t *ps = &p2p.peers[g->peer];

    if (g->issued == 0) {
        g->piece  = weft_dev.netmod->max_rma();
        g->window = p2p.rget_window;
        if (rget_alone(g)) {
            size_t limit = weft_dev.netmod->rma_limit();
            g->piece     = 2 * g->piece < limit ? 2 * g->piece : limit;
            g->window    = g->piece;
        }
    }
    while (g->issued < g->n) {
        if (g->window > 0 && ps->rget_inflight >= g->window) {
            return RGET_PEER_FULL;
        }
        size_t        len = g->n - g->issued < g->piece ? g->n - g->issued : g->piece;
        weft_status_t st  = weft_dev.netmod->rma_read(g->peer, g->local + g->issued, len, g->mr,
                                                     g->raddr + g->issued, g->key, g);
        if (st == WEFT_AGAIN) {
            return RGET_NETMOD_FULL;
        }
        g->issued += len;
        ps->rget_inflight += len;
        WEFT_PVAR_ADD(NETMOD_RGET_BYTES, len);
    }
    return RGET_ISSUED;
}

static void rget_wait(rget_t *g)
{
    g->next = NULL;
    if (rget_wait_tail) {
        rget_wait_tail->next = g;
    } else {
        rget_wait_head = g;
    }
    rget_wait_tail = g;
    p2p.pending++;
    rget_kick = 1;
}

void p2p_net_rma_done(void *cookie, size_t len, int err)
{
    rget_t *g = cookie;

    (void)err; /* an error loses the peer (the netmod reports it): see p2p_net_peer_lost */
    p2p.peers[g->peer].rget_inflight -= len;
    rget_kick = 1;
    g->done += len;
    if (g->done < g->n) {
        return;
    }
    for (rget_t **at = &rget_live; *at; at = &(*at)->live_next) {
        if (*at == g) {
            *at = g->live_next;
            break;
        }
    }
    weft_dev.netmod->mem_deregister(g->mr);
    if (g->rreq != NULL) {
        p2p_ctrl_send(g->peer, WEFT_AM_PT2PT_FIN, g->sreq, 0);
        weft_request_complete(g->rreq);
    }
    free(g);
}

int p2p_net_rget_progress(void)
{
    int events = 0;

    if (!rget_kick) {
        return 0;
    }
    rget_kick = 0;
    /* In order; a read held back by its peer's window lets later ones
     * from other peers go, one the netmod had no room for stops the walk. */
    rget_wait_tail = NULL;
    for (rget_t **at = &rget_wait_head; *at;) {
        rget_t *g  = *at;
        int     rc = rget_issue(g);
        if (rc == RGET_ISSUED) {
            *at = g->next;
            p2p.pending--;
            events++;
            continue;
        }
        rget_wait_tail = g;
        if (rc == RGET_NETMOD_FULL) {
            rget_kick = 1;
            while (rget_wait_tail->next) {
                rget_wait_tail = rget_wait_tail->next;
            }
            break;
        }
        at = &g->next;
    }
    return events;
}

/* Read a matched RGET rendezvous into req; 0 started, -1 not possible. */
static int rget_start(int peer, weft_request_t *req, const rts_t *rts)
{
    MPI_Count cap = req->count * req->datatype->size;
    size_t    n   = (size_t)((MPI_Count)rts->bytes < cap ? (MPI_Count)rts->bytes : cap);
    uint64_t  key, addr;
    rget_t   *g;

    if (!req->datatype->is_contig || n == 0 || (g = calloc(1, sizeof(*g))) == NULL) {
        return -1;
    }
    g->local = (char *)req->buf + req->datatype->true_lb;
    if (weft_dev.netmod->mem_register(g->local, n, 0, &key, &addr, &g->mr) != WEFT_OK) {
        free(g);
        return -1;
    }
    g->rreq  = req;
    g->sreq  = rts->sreq;
    g->raddr = rts->addr;
    g->key   = rts->coop;
    g->n     = n;
    g->peer  = peer;
    g->live_next = rget_live;
    rget_live    = g;
    /* Behind earlier reads still waiting, so one peer's receives stay in order. */
    if (rget_wait_head != NULL || rget_issue(g) != RGET_ISSUED) {
        rget_wait(g);
    }
    return 0;
}

void p2p_net_peer_lost(int world)
{
    p2p_net_frag_peer_lost(world);
    /* Reads not issued yet: never will be. */
    rget_wait_tail = NULL;
    for (rget_t **at = &rget_wait_head; *at;) {
        rget_t *g = *at;
        if (g->peer == world) {
            *at = g->next;
            p2p.pending--;
        } else {
            rget_wait_tail = g;
            at             = &g->next;
        }
    }
    /* Their receives fail (with the other in-flight receives); a read that
     * still completes must not touch them, and no FIN goes out. Reads the
     * provider failed never complete: their bookkeeping stays (small). */
    for (rget_t *g = rget_live; g != NULL; g = g->live_next) {
        if (g->peer == world && g->rreq != NULL) {
            g->rreq = NULL;
        }
    }
}

void p2p_net_rndv_recv(int peer, weft_request_t *req, const rts_t *rts)
{
    if (rts->iov_count == RTS_RGET && rget_start(peer, req, rts) == 0) {
        return;
    }
    req->proto[0] = rts->sreq;
    req->proto[1] = rts->bytes;
    req->proto[2] = 0; /* bytes arrived */
    p2p_ctrl_send(peer, WEFT_AM_PT2PT_CTS, rts->sreq, (uint64_t)(uintptr_t)req);
    if (rts->bytes == 0) {
        weft_request_complete(req);
    }
}

void p2p_net_cts(int peer, weft_request_t *sreq, uint64_t rreq)
{
    peer_state_t *ps = &p2p.peers[peer];

    p2p_net_send_release(sreq); /* the receiver did not read it */
    sreq->proto[1] = rreq;
    sreq->proto[2] = 0; /* bytes handed to the netmod */
    sreq->next     = NULL;
    if (ps->r3_tail) {
        ps->r3_tail->next = sreq;
    } else {
        ps->r3_head = sreq;
    }
    ps->r3_tail = sreq;
    p2p.pending++;
}

void p2p_net_data(int peer, const weft_am_t *m)
{
    r3_hdr_t        h;
    weft_request_t *req;
    MPI_Count       len = (MPI_Count)m->len - (MPI_Count)sizeof(h);

    if (weft_peer(peer)->failed) {
        return; /* its receive has failed (and may be gone) */
    }
    memcpy(&h, m->payload, sizeof(h));
    if (h.rreq == 0) { /* a fragment of an eager message (net_frag.c) */
        p2p_net_frag_more(peer, h.offset, (const char *)m->payload + sizeof(h), len);
        return;
    }
    req = (weft_request_t *)(uintptr_t)h.rreq;
    /* truncated at the receive buffer's end by the datatype engine */
    weft_dt_unpack(req->datatype, req->count, req->buf, (MPI_Count)h.offset,
                   (const char *)m->payload + sizeof(h), len);
    req->proto[2] += (uint64_t)len;
    if (req->proto[2] >= req->proto[1]) {
        weft_request_complete(req);
    }
}

int p2p_net_progress(int peer, peer_state_t *ps)
{
    int events = 0;

    while (ps->r3_head) {
        weft_request_t *req = ps->r3_head;
        MPI_Count       off = (MPI_Count)req->proto[2];
        MPI_Count       n   = req->bytes - off;
        char           *p;

        if (n > (MPI_Count)p2p.r3_chunk) {
            n = (MPI_Count)p2p.r3_chunk;
        }
        p = weft_dev_net_reserve(peer, sizeof(r3_hdr_t) + (size_t)n);
        if (p == NULL) {
            break;
        }
        r3_hdr_t h = {req->proto[1], (uint64_t)off};
        memcpy(p, &h, sizeof(h));
        if (req->datatype->is_contig) {
            memcpy(p + sizeof(h), (const char *)req->buf + req->datatype->true_lb + off, (size_t)n);
        } else {
            weft_dt_pack(req->datatype, req->count, req->buf, off, p + sizeof(h), n);
        }
        weft_dev_net_commit(peer, WEFT_AM_PT2PT_DATA, 0, 0, 0, sizeof(h) + (size_t)n);
        req->proto[2] += (uint64_t)n;
        events++;
        if ((MPI_Count)req->proto[2] >= req->bytes) {
            ps->r3_head = req->next;
            if (ps->r3_head == NULL) {
                ps->r3_tail = NULL;
            }
            req->next = NULL;
            p2p.pending--;
            p2p.sends_out--;
            WEFT_EVENT_RAISE(RNDV_FINISH, req->peer, req->tag, req->bytes, 0);
            weft_request_complete(req);
        }
    }
    return events;
}
