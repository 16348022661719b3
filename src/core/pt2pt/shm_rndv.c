/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node rendezvous. The receiver, once matched, pulls the data with
 * CMA (process_vm_readv, single copy, non-contiguous through iovec lists)
 * and answers FIN; large contiguous messages are copied by both sides at
 * once (cooperative copy); below the CMA threshold, or where CMA is not
 * permitted, the receiver answers CTS and the sender streams through the
 * pair's 2-copy pipeline slots (messages one after another, in CTS order).
 *
 * Peers are job ranks of local peers; the shm calls take their local index.
 */
#include "core/pt2pt/proto_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/datatype.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"
#include "util/tunables.h"
#include "transport/shm/shm.h"
#include "util/log.h"

static inline int shm_of(int peer)
{
    return weft_peer(peer)->shm_index;
}

/* Single copy for this many bytes with this peer (a process of another job
 * may refuse it: weft_shm_peer_cma). */
static int is_cma_size(int peer, uint64_t bytes)
{
    return p2p.cma && bytes >= p2p.cma_threshold && weft_shm_peer_cma(shm_of(peer));
}

/* The pair's pipeline carries one message after another, in the order the
 * receiver sent its CTSes: the receiver answers every matched pipeline
 * message at once (queueing all but the first on pipe_wait) and the sender
 * streams them back to back in CTS order, so a run of rendezvous messages
 * never drains the slots and waits a CTS round trip between messages
 * (that wait made bw at 128 KiB fall below eager 64 KiB; issue 18). Every
 * message starts in a fresh slot, so the receiver knows where each ends. */
static void pipe_recv_start(peer_state_t *ps, weft_request_t *req)
{
    req->proto[2] = 0; /* bytes drained */
    ps->pipe_recv = req;
    p2p.pending++;
    if (req->proto[1] == 0) {
        ps->pipe_recv = NULL;
        p2p.pending--;
        weft_request_complete(req);
    }
}

/* A matched pipeline receive: answer it now; drain it now or after the
 * receives answered before it. */
static void pipe_recv_matched(int peer, weft_request_t *req)
{
    peer_state_t *ps = &p2p.peers[peer];

    p2p_ctrl_send(peer, WEFT_AM_PT2PT_CTS, req->proto[0], (uint64_t)(uintptr_t)req);
    if (req->proto[1] == 0) {
        weft_request_complete(req); /* nothing will come through the slots */
        return;
    }
    if (ps->pipe_recv == NULL) {
        pipe_recv_start(ps, req);
        return;
    }
    req->next = NULL;
    if (ps->pipe_wait_tail) {
        ps->pipe_wait_tail->next = req;
    } else {
        ps->pipe_wait_head = req;
    }
    ps->pipe_wait_tail = req;
}

/* Build the iovec list of (buf, count, dt) covering up to max_bytes.
 * Returns the count, or -1 when it would need more than max_iov entries. */
int p2p_build_iov(const weft_datatype_t *dt, MPI_Count count, const void *buf,
                  MPI_Count max_bytes, struct iovec **iov_p, int max_iov)
{
    struct iovec *iov;
    MPI_Count     covered = 0;
    int           n       = 0, cap = 64;

    if (dt->is_contig) {
        iov = malloc(sizeof(*iov));
        if (iov == NULL) {
            return -1;
        }
        iov->iov_base = (char *)buf + dt->true_lb;
        iov->iov_len  = (size_t)max_bytes;
        *iov_p        = iov;
        return 1;
    }
    iov = malloc(sizeof(*iov) * (size_t)cap);
    while (iov != NULL && covered < max_bytes) {
        MPI_Count got = 0;
        if (n == cap) {
            if (cap >= max_iov) {
                free(iov);
                return -1;
            }
            cap *= 2;
            struct iovec *grow = realloc(iov, sizeof(*iov) * (size_t)cap);
            if (grow == NULL) {
                free(iov);
                return -1;
            }
            iov = grow;
        }
        int k = weft_dt_iov(dt, count, buf, covered, iov + n, cap - n, &got);
        if (k <= 0 || got <= 0) {
            break;
        }
        n += k;
        covered += got;
    }
    if (iov == NULL) {
        return -1;
    }
    if (covered > max_bytes) { /* trim the last entry to max_bytes */
        iov[n - 1].iov_len -= (size_t)(covered - max_bytes);
    }
    *iov_p = iov;
    return n;
}

/* Pull a rendezvous message with CMA into req; then tell the sender. */
static void cma_recv(int peer, weft_request_t *req, const rts_t *rts)
{
    MPI_Count     cap    = req->count * req->datatype->size;
    MPI_Count     n      = (MPI_Count)rts->bytes < cap ? (MPI_Count)rts->bytes : cap;
    struct iovec *local  = NULL, *remote = NULL;
    struct iovec  local_one, remote_one;
    void         *bounce = NULL;
    int           nlocal = 1, nremote = 1, rc = 0;

    WEFT_PVAR_ADD(CMA_BYTES, n);
    if (n > 0) {
        nlocal = p2p_build_iov(req->datatype, req->count, req->buf, n, &local, 1 << 14);
        if (nlocal < 0) { /* very fragmented receive: land contiguous, then unpack */
            local  = NULL;
            nlocal = 1;
            bounce = malloc((size_t)n);
            rc     = bounce ? 0 : -1;
            local_one.iov_base = bounce;
            local_one.iov_len  = (size_t)n;
        }
        if (rts->iov_count == 0) {
            remote_one.iov_base = (void *)(uintptr_t)rts->addr;
            remote_one.iov_len  = (size_t)n;
        } else { /* the sender's iovec array lives in its memory: read it first */
            struct iovec there = {(void *)(uintptr_t)rts->addr,
                                  sizeof(struct iovec) * rts->iov_count};
            nremote = (int)rts->iov_count;
            remote  = malloc(there.iov_len);
            if (remote == NULL) {
                rc = -1;
            } else {
                struct iovec here = {remote, there.iov_len};
                rc = rc ? rc : weft_shm_cma_read(shm_of(peer), &here, 1, &there, 1);
            }
        }
        if (rc == 0) {
            rc = weft_shm_cma_read(shm_of(peer), local ? local : &local_one, nlocal,
                                   remote ? remote : &remote_one, nremote);
        }
        if (rc == 0 && bounce) {
            weft_dt_unpack(req->datatype, req->count, req->buf, 0, bounce, n);
        }
        if (rc != 0) {
            weft_log_error("single-copy read from rank %d (same host) failed: %s", peer, strerror(errno));
            req->status.MPI_ERROR = MPI_ERR_OTHER;
        }
        free(local);
        free(remote);
        free(bounce);
    }
    p2p_ctrl_send(peer, WEFT_AM_PT2PT_FIN, rts->sreq, 0);
    weft_request_complete(req);
}

/* A matched rendezvous from a local peer: pull it (CMA) or ask for it (pipeline). */
void p2p_shm_rndv_recv(int peer, weft_request_t *req, const rts_t *rts)
{
    if (rts->coop != 0) {
        MPI_Count cap = req->count * req->datatype->size;
        MPI_Count n   = (MPI_Count)rts->bytes < cap ? (MPI_Count)rts->bytes : cap;
        if (req->datatype->is_contig && n > 0) {
            int slot = (int)(rts->coop & 0xff) - 1;
            WEFT_PVAR_ADD(CMA_BYTES, n);
            weft_shm_coop_start(shm_of(peer), rts->coop,
                                (char *)req->buf + req->datatype->true_lb, (size_t)n);
            req->proto[0] = rts->sreq;
            req->proto[3] = rts->coop;
            p2p.peers[peer].coop_recv[slot] = req;
            p2p.pending++;
            return;
        }
        /* Non-contiguous or empty receive: decline, pull it ourselves. */
        weft_shm_coop_start(shm_of(peer), rts->coop, NULL, 0);
        weft_shm_coop_close(shm_of(peer), rts->coop); /* the sender no longer touches it */
        cma_recv(peer, req, rts);                     /* pulls from rts->addr, sends FIN */
        return;
    }
    /* The sender exposed its buffer (addr): a process of another job may use
     * another threshold, so its choice, not ours, says whether to pull. */
    if (is_cma_size(peer, rts->bytes) && rts->addr != 0) {
        cma_recv(peer, req, rts);
        return;
    }
    WEFT_PVAR_ADD(PIPE_BYTES, rts->bytes);
    WEFT_PVAR_ADD(CMA_FALLBACKS, weft_tunables.SMP_USE_CMA && !p2p.cma); /* CMA wanted, probe said no */
    req->proto[0] = rts->sreq;
    req->proto[1] = rts->bytes;
    pipe_recv_matched(peer, req);
}

int p2p_shm_rts_prepare(int peer, weft_request_t *req, rts_t *rts)
{
    if (!is_cma_size(peer, (uint64_t)req->bytes)) {
        return 0;
    }
    if (req->datatype->is_contig) {
        rts->addr = (uint64_t)(uintptr_t)((const char *)req->buf + req->datatype->true_lb);
        /* When this process itself waits for a large message, traffic runs
         * both ways and both processes are busy copying anyway: a cooperative
         * copy would only add chunk hand-offs (measured: 512 KiB alltoall at
         * np 2, 62 us with it, 44 us without; bibw 512 KiB 56 vs 62 GB/s). */
        if ((size_t)req->bytes >= p2p.coop_threshold &&
            !p2p_large_recv_posted(p2p.coop_threshold)) {
            rts->coop = weft_shm_coop_open(shm_of(peer), (const void *)(uintptr_t)rts->addr,
                                           (size_t)req->bytes);
        }
    } else if (req->iov != NULL || req->pack_buf != NULL) {
        rts->addr      = req->iov ? (uint64_t)(uintptr_t)req->iov : (uint64_t)(uintptr_t)req->pack_buf;
        rts->iov_count = req->iov ? (uint64_t)req->iov_count : 0;
    } else {
        int n = p2p_build_iov(req->datatype, req->count, req->buf, req->bytes, &req->iov, 1 << 14);
        if (n > 0) {
            rts->addr      = (uint64_t)(uintptr_t)req->iov;
            rts->iov_count = (uint64_t)n;
            req->iov_count = n;
        } else { /* too fragmented for an iov list: expose a packed copy */
            req->iov      = NULL;
            req->pack_buf = malloc((size_t)req->bytes);
            if (req->pack_buf == NULL) {
                weft_request_fail(req, MPI_ERR_NO_MEM);
                return -1;
            }
            weft_dt_pack(req->datatype, req->count, req->buf, 0, req->pack_buf, req->bytes);
            rts->addr = (uint64_t)(uintptr_t)req->pack_buf;
        }
    }
    return 0;
}

/* The receiver's go for sreq: stream it now, or after the sends it
 * answered before (queued behind the current one through next). */
void p2p_shm_cts(int peer, weft_request_t *sreq)
{
    peer_state_t *ps = &p2p.peers[peer];

    sreq->proto[2] = 0; /* bytes streamed */
    sreq->next     = NULL;
    if (ps->pipe_send == NULL) {
        ps->pipe_send = sreq;
        p2p.pending++;
        return;
    }
    weft_request_t *last = ps->pipe_send;
    while (last->next != NULL) {
        last = last->next;
    }
    last->next = sreq;
}

void p2p_shm_fin(int peer, weft_request_t *sreq)
{
    if (sreq->proto[3] != 0) { /* a cooperative copy: stop helping */
        p2p.peers[peer].coop_send[(sreq->proto[3] & 0xff) - 1] = NULL;
        p2p.pending--;
    }
}

static int pipe_send_progress(int peer, peer_state_t *ps)
{
    weft_request_t *req;
    int             events = 0;
    size_t          cap;
    void           *slot;

    while ((req = ps->pipe_send) != NULL) {
        while ((MPI_Count)req->proto[2] < req->bytes &&
               (slot = weft_shm_pipe_acquire(shm_of(peer), &cap))) {
            MPI_Count off = (MPI_Count)req->proto[2];
            MPI_Count n   = req->bytes - off < (MPI_Count)cap ? req->bytes - off : (MPI_Count)cap;
            if (req->datatype->is_contig) {
                memcpy(slot, (const char *)req->buf + req->datatype->true_lb + off, (size_t)n);
            } else {
                weft_dt_pack(req->datatype, req->count, req->buf, off, slot, n);
            }
            weft_shm_pipe_publish(shm_of(peer), (size_t)n);
            req->proto[2] += (uint64_t)n;
            events++;
        }
        if ((MPI_Count)req->proto[2] < req->bytes) {
            break; /* the slots are full */
        }
        ps->pipe_send = req->next; /* the next answered send, still counted pending */
        req->next     = NULL;
        if (ps->pipe_send == NULL) {
            p2p.pending--;
        }
        p2p.sends_out--;
        WEFT_EVENT_RAISE(RNDV_FINISH, req->peer, req->tag, req->bytes, 0);
        weft_request_complete(req);
    }
    return events;
}

static int pipe_recv_progress(int peer, peer_state_t *ps)
{
    weft_request_t *req;
    int             events = 0;
    size_t          len;
    const void     *slot;

    while ((req = ps->pipe_recv) != NULL) {
        MPI_Count cap = req->count * req->datatype->size;
        while (req->proto[2] < req->proto[1] && (slot = weft_shm_pipe_peek(shm_of(peer), &len))) {
            MPI_Count off = (MPI_Count)req->proto[2];
            if (off < cap) {
                MPI_Count n = (MPI_Count)len < cap - off ? (MPI_Count)len : cap - off;
                if (req->datatype->is_contig) {
                    memcpy((char *)req->buf + req->datatype->true_lb + off, slot, (size_t)n);
                } else {
                    weft_dt_unpack(req->datatype, req->count, req->buf, off, slot, n);
                }
            }
            weft_shm_pipe_release(shm_of(peer));
            req->proto[2] += len;
            events++;
        }
        if (req->proto[2] < req->proto[1]) {
            break; /* the rest has not come yet */
        }
        ps->pipe_recv = NULL;
        p2p.pending--;
        weft_request_complete(req);
        weft_request_t *next = ps->pipe_wait_head;
        if (next) { /* already answered: its data follow in the slots */
            ps->pipe_wait_head = next->next;
            if (ps->pipe_wait_head == NULL) {
                ps->pipe_wait_tail = NULL;
            }
            next->next = NULL;
            pipe_recv_start(ps, next);
        }
    }
    return events;
}

int p2p_shm_progress(int peer, peer_state_t *ps)
{
    int events = 0;

    for (int k = 0; k < COOP_SLOTS; k++) {
        if (ps->coop_send[k]) {
            weft_shm_coop_work(shm_of(peer), ps->coop_send[k]->proto[3], 1);
        }
        weft_request_t *rr = ps->coop_recv[k];
        if (rr) {
            int done = weft_shm_coop_work(shm_of(peer), rr->proto[3], 0);
            if (done != 0) {
                if (done < 0) {
                    weft_log_error("cooperative copy from rank %d (same host) failed: %s", peer,
                                   strerror(errno));
                    rr->status.MPI_ERROR = MPI_ERR_OTHER;
                }
                ps->coop_recv[k] = NULL;
                p2p.pending--;
                weft_shm_coop_close(shm_of(peer), rr->proto[3]);
                p2p_ctrl_send(peer, WEFT_AM_PT2PT_FIN, rr->proto[0], 0);
                weft_request_complete(rr);
                events++;
            }
        }
    }
    if (ps->pipe_send) {
        events += pipe_send_progress(peer, ps);
    }
    if (ps->pipe_recv) {
        events += pipe_recv_progress(peer, ps);
    }
    return events;
}
