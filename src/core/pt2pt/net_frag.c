/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Fragmented eager to a remote peer: a standard or buffered send above
 * WEFT_EAGER_THRESHOLD and up to WEFT_NET_FRAG_MAX leaves at once as
 *   RTS (iov_count RTS_FRAG, bytes = the whole size) + the first fragment,
 *   then DATA messages {rreq 0, offset} + the next fragments,
 * every fragment at most WEFT_EAGER_THRESHOLD bytes, so each one stays in the
 * provider's eager path (ofi_rxm copies up to its buffer size and sends
 * anything larger by a rendezvous of its own; its buffer pools are sized by
 * that limit). One network trip instead of RGET's three (RTS, read, FIN).
 *
 * Order and matching: the header is matched when it arrives, in the
 * sender's order, like any eager message (ANY_SOURCE, probe and mprobe see
 * it then, with its full size). A send's fragments leave back to back: the
 * send stays at the head of its peer's send queue until its last fragment
 * is handed to the netmod, so no later message of the same sender comes in
 * between, and the netmod delivers a peer's messages in order. So per peer
 * at most one fragmented message is being filled at a time (frag_req, or
 * frag_unexp while nobody has received it); R3 chunks (rreq != 0) and
 * control messages may come in between and are told apart by their type
 * and rreq.
 *
 * The send completes once its last fragment is with the netmod (its copy);
 * synchronous sends never come here (they need the match: RTS).
 */
#include "core/pt2pt/proto_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"

int p2p_net_frag_send(int peer, weft_request_t *req)
{
    MPI_Count frag = (MPI_Count)p2p.net_eager_limit;
    MPI_Count off  = (MPI_Count)req->proto[2]; /* bytes handed to the netmod */
    char     *p;

    if (off == 0) {
        MPI_Count n   = req->bytes < frag ? req->bytes : frag;
        rts_t     rts = {0, (uint64_t)req->bytes, 0, RTS_FRAG, 0};
        if ((p = weft_dev_net_reserve(peer, sizeof(rts) + (size_t)n)) == NULL) {
            return -1;
        }
        memcpy(p, &rts, sizeof(rts));
        weft_dt_pack(req->datatype, req->count, req->buf, 0, p + sizeof(rts), n);
        weft_dev_net_commit(peer, WEFT_AM_PT2PT_RTS, req->tag, req->context,
                            req->status.MPI_SOURCE, sizeof(rts) + (size_t)n);
        off = n;
    }
    while (off < req->bytes) {
        MPI_Count n = req->bytes - off < frag ? req->bytes - off : frag;
        r3_hdr_t  h = {0, (uint64_t)off};
        if ((p = weft_dev_net_reserve(peer, sizeof(h) + (size_t)n)) == NULL) {
            req->proto[2] = (uint64_t)off;
            return -1;
        }
        memcpy(p, &h, sizeof(h));
        weft_dt_pack(req->datatype, req->count, req->buf, off, p + sizeof(h), n);
        weft_dev_net_commit(peer, WEFT_AM_PT2PT_DATA, 0, 0, 0, sizeof(h) + (size_t)n);
        off += n;
    }
    req->proto[2] = 0;
    WEFT_PVAR_INC(EAGER_MSGS_SENT);
    WEFT_PVAR_ADD(EAGER_BYTES_SENT, req->bytes);
    weft_request_complete(req);
    return 0;
}

/* len bytes at offset arrived for the message peer is filling. */
static void frag_add(peer_state_t *ps, uint64_t offset, const void *data, MPI_Count len)
{
    if (ps->frag_req != NULL) {
        weft_request_t *req = ps->frag_req;
        weft_dt_unpack(req->datatype, req->count, req->buf, (MPI_Count)offset, data, len);
        req->proto[2] += (uint64_t)len;
        if (req->proto[2] >= req->proto[1]) {
            ps->frag_req = NULL;
            weft_request_complete(req);
        }
    } else if (ps->frag_unexp != NULL) {
        weft_unexp_t *u = ps->frag_unexp;
        memcpy((char *)u->data + offset, data, (size_t)len);
        u->rts[0] += (uint64_t)len;
        if ((MPI_Count)u->rts[0] >= u->bytes) {
            ps->frag_unexp = NULL;
        }
    }
}

void p2p_net_frag_first(int peer, const weft_am_t *m, const rts_t *rts)
{
    peer_state_t   *ps  = &p2p.peers[peer];
    weft_request_t *req = p2p_match_posted(m->context, m->src, m->tag);

    if (req != NULL) {
        p2p_recv_set_status(req, m->src, m->tag, (MPI_Count)rts->bytes);
        req->proto[1] = rts->bytes;
        req->proto[2] = 0; /* bytes arrived */
        ps->frag_req  = req;
    } else {
        weft_unexp_t *u = p2p_unexp_new(WEFT_AM_PT2PT_DATA, m->context, m->src, m->tag, peer,
                                        (MPI_Count)rts->bytes);
        u->data = malloc((size_t)rts->bytes);
        if (u->data == NULL) {
            weft_runtime_abort(MPI_ERR_NO_MEM, "out of memory buffering an unexpected message");
        }
        u->rts[0]      = 0; /* bytes arrived */
        ps->frag_unexp = u;
    }
    frag_add(ps, 0, (const char *)m->payload + sizeof(*rts),
             (MPI_Count)m->len - (MPI_Count)sizeof(*rts));
}

void p2p_net_frag_more(int peer, uint64_t offset, const void *data, MPI_Count len)
{
    frag_add(&p2p.peers[peer], offset, data, len);
}

/* req matched u (its status is set): copy what arrived; the rest goes
 * straight to req. */
void p2p_net_frag_recv_unexpected(weft_request_t *req, weft_unexp_t *u)
{
    peer_state_t *ps      = &p2p.peers[u->peer];
    MPI_Count     arrived = (MPI_Count)u->rts[0];

    weft_dt_unpack(req->datatype, req->count, req->buf, 0, u->data, arrived);
    if (arrived >= u->bytes) {
        weft_request_complete(req);
        return;
    }
    if (ps->frag_unexp != u) { /* unfinished, and its sender lost (net_frag_peer_lost) */
        p2p_fail_lost(req, u->peer, u->src);
        return;
    }
    ps->frag_unexp = NULL;
    req->proto[1]  = (uint64_t)u->bytes;
    req->proto[2]  = (uint64_t)arrived;
    ps->frag_req   = req;
}

void p2p_net_frag_peer_lost(int world)
{
    peer_state_t *ps = &p2p.peers[world];
    weft_unexp_t *u  = ps->frag_unexp;

    ps->frag_req   = NULL; /* matched, unfinished: failed with the in-flight receives */
    ps->frag_unexp = NULL;
    if (u != NULL && u->next != NULL) {
        /* Unfinished and still queued: never will be; drop it, so later
         * receives from it fail instead of waiting. (Taken by an mprobe,
         * its mrecv fails in net_frag_recv_unexpected.) */
        p2p_unexp_remove(u);
        p2p_unexp_free(u);
    }
}
