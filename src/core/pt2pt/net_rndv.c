/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Inter-node rendezvous through the netmod, R3 (pipelined sends): RTS ->
 * (match) -> CTS naming the receive -> the sender streams DATA messages of
 * WEFT_R3_CHUNK_SIZE bytes, each carrying the receive and its offset, packed
 * straight into the netmod's send buffers. The send completes once the last
 * chunk is handed to the netmod (its copy); the receive once every byte has
 * arrived. Chunks of one message may be in flight together, so neither side
 * waits a round trip per chunk.
 */
#include "core/pt2pt/proto_internal.h"

#include <string.h>

#include "core/datatype.h"

void p2p_net_rndv_recv(int peer, weft_request_t *req, const rts_t *rts)
{
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
    MPI_Count       cap, n, len = (MPI_Count)m->len - (MPI_Count)sizeof(h);

    (void)peer;
    memcpy(&h, m->payload, sizeof(h));
    req = (weft_request_t *)(uintptr_t)h.rreq;
    cap = req->count * req->datatype->size;
    if ((MPI_Count)h.offset < cap) {
        n = len < cap - (MPI_Count)h.offset ? len : cap - (MPI_Count)h.offset;
        const char *data = (const char *)m->payload + sizeof(h);
        if (req->datatype->is_contig) {
            memcpy((char *)req->buf + req->datatype->true_lb + h.offset, data, (size_t)n);
        } else {
            weft_dt_unpack(req->datatype, req->count, req->buf, (MPI_Count)h.offset, data, n);
        }
    }
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
            weft_request_complete(req);
        }
    }
    return events;
}
