/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * State shared by the point-to-point pieces in this folder:
 *   match.c     posted/unexpected queues (pooled unexpected entries)
 *   protocol.c  eager and rendezvous over active messages, sending, progress
 *   shm_rndv.c  intra-node rendezvous: CMA pull, cooperative copy, 2-copy pipe
 *   shm_tune.c  intra-node thresholds in force (shm_thresholds.c: the choice)
 *   net_rndv.c  inter-node rendezvous through the netmod (RGET, R3)
 *   net_frag.c  inter-node fragmented eager (above the eager limit, up to
 *               WEFT_NET_FRAG_MAX: one trip, no rendezvous)
 * Peers are job ranks; the peer table (core/dev/peer.h) says how each is
 * reached.
 */
#ifndef WEFT_CORE_PT2PT_PROTO_INTERNAL_H
#define WEFT_CORE_PT2PT_PROTO_INTERNAL_H

#include <stdint.h>
#include <sys/uio.h>

#include "core/dev/peer.h"
#include "core/pt2pt/shm_thresholds.h"
#include "core/pt2pt_internal.h"

/* RTS payload. */
typedef struct {
    uint64_t sreq;      /* echoed in CTS/FIN */
    uint64_t bytes;
    uint64_t addr;      /* data (iov_count == 0) or the sender's iovec array (local only) */
    uint64_t iov_count;
    uint64_t coop;      /* cooperative-copy handle, 0 if none */
} rts_t;

/* rts.iov_count of a remote RTS that carries the message's first fragment
 * after it (net_frag.c): the rest follows in DATA messages whose rreq is 0. */
#define RTS_FRAG (UINT64_MAX - 1)

/* CTS payload. */
typedef struct {
    uint64_t sreq;
    uint64_t rreq;
} cts_t;

/* R3 chunk header (followed by the data). */
typedef struct {
    uint64_t rreq;
    uint64_t offset;
} r3_hdr_t;

/* Contiguous CMA messages of at least p2p.coop_threshold bytes are copied by
 * both sides at once (weft_shm_coop_*): the receiver pulls chunks while the
 * sender pushes. */
#define COOP_SLOTS 8

/* A control message that did not fit into its ring yet. */
typedef struct pending_ctrl {
    struct pending_ctrl *next;
    uint8_t              type;
    uint64_t             body[2];
} pending_ctrl_t;

typedef struct {
    weft_request_t *sendq_head, *sendq_tail; /* sends waiting for ring room */
    pending_ctrl_t *ctrl_head, *ctrl_tail;
    weft_request_t *pipe_send;               /* streaming through our slots */
    weft_request_t *pipe_recv;               /* draining its slots */
    weft_request_t *pipe_wait_head, *pipe_wait_tail; /* matched, waiting to CTS */
    weft_request_t *coop_send[COOP_SLOTS];   /* our sends the peer is copying */
    weft_request_t *coop_recv[COOP_SLOTS];   /* our receives from the peer */
    weft_request_t *r3_head, *r3_tail;       /* remote: sends streaming after CTS */
    weft_request_t *frag_req;                /* remote: receive its fragments fill */
    weft_unexp_t   *frag_unexp;              /* remote: or the unexpected entry they fill */
    size_t          rget_inflight;           /* remote: bytes of our RGET reads from it not done */
    uint64_t        held;                    /* local: its eager bytes we hold unmatched */
    int             held_back;               /* local: we told it to stop sending eagerly */
} peer_state_t;

typedef struct {
    int            me_world;
    peer_state_t  *peers;     /* one per job rank */
    int            npeers;    /* job size */
    size_t         eager_limit;     /* shm */
    size_t         net_eager_limit; /* netmod */
    size_t         net_frag_max;    /* netmod: fragmented eager up to here (0: none) */
    size_t         r3_chunk;
    int            rget;            /* netmod rendezvous by RMA read */
    size_t         rget_window;     /* netmod: RGET bytes in flight per peer (0: no limit) */
    size_t         cma_threshold;
    size_t         held_limit;     /* local: a sender's eager bytes we hold unmatched before it must stop */
    size_t         coop_threshold; /* contiguous CMA rendezvous: cooperative copy from here */
    int            cma;
    weft_request_t posted;   /* sentinel of the posted-receive list */
    weft_unexp_t   unexp;    /* sentinel of the unexpected list */
    int            pending;  /* peers with queued work (fast skip) */
    int            sends_out; /* rendezvous sends not yet completed */
    weft_p2p_thresholds_t tuning; /* intra-node thresholds and why (shm_tune.c); last: cold */
} p2p_t;

extern p2p_t p2p;

/* match.c */
weft_request_t *p2p_match_posted(uint32_t ctx, int src, int tag);
void            p2p_post_recv(weft_request_t *req);
weft_unexp_t   *p2p_unexp_new(uint8_t type, uint32_t ctx, int src, int tag, int peer,
                              MPI_Count bytes);
void            p2p_unexp_free(weft_unexp_t *u);
/* Point u->data at room for len payload bytes: inline, from the payload
 * pool, or malloc'd; aborts when out of memory. */
void           *p2p_unexp_buffer(weft_unexp_t *u, size_t len);
/* Count an unexpected eager entry from a local peer in that peer's held
 * bytes (p2p_unexp_free takes it off again). */
void            p2p_unexp_hold(weft_unexp_t *u);
/* Take u out of the unexpected queue (then p2p_unexp_free or reuse it). */
void            p2p_unexp_remove(weft_unexp_t *u);
void            p2p_match_init(void);
/* How much freed payload to keep, once held_limit is known (p2p_shm_tune);
 * local_senders: the other local ranks. */
void            p2p_match_pool_size(int local_senders);
void            p2p_match_fini(void);
/* Is this process itself waiting for a message of at least bytes? */
int             p2p_large_recv_posted(size_t bytes);

/* protocol.c */
void p2p_ctrl_send(int peer, uint8_t type, uint64_t a, uint64_t b);
void p2p_recv_set_status(weft_request_t *req, int src, int tag, MPI_Count bytes);

/* shm_rndv.c (peer is local) */
int  p2p_build_iov(const weft_datatype_t *dt, MPI_Count count, const void *buf,
                   MPI_Count max_bytes, struct iovec **iov_p, int max_iov);
void p2p_shm_rndv_recv(int peer, weft_request_t *req, const rts_t *rts);
/* Fill the location fields of rts for a local rendezvous send; 0 or -1
 * (request failed: out of memory). */
int  p2p_shm_rts_prepare(int peer, weft_request_t *req, rts_t *rts);
void p2p_shm_cts(int peer, weft_request_t *sreq);
void p2p_shm_fin(int peer, weft_request_t *sreq);
int  p2p_shm_progress(int peer, peer_state_t *ps);

/* shm_tune.c: local rank 0 describes the CPU before the shm init; after it,
 * set p2p.eager_limit and p2p.cma_threshold (an MPI error code). */
void p2p_shm_node_facts(weft_shm_costs_t *facts);
int  p2p_shm_tune(size_t ring_payload);

/* net_rndv.c (peer is remote) */
void p2p_net_rndv_recv(int peer, weft_request_t *req, const rts_t *rts);
void p2p_net_cts(int peer, weft_request_t *sreq, uint64_t rreq);
void p2p_net_data(int peer, const weft_am_t *m);
int  p2p_net_progress(int peer, peer_state_t *ps);
void p2p_net_rts_prepare(weft_request_t *req, rts_t *rts);
void p2p_net_send_release(weft_request_t *req);
void p2p_net_rma_done(void *cookie, size_t len, int err);
int  p2p_net_rget_progress(void);
/* Forget reads from a lost process (their receives are failed elsewhere). */
void p2p_net_peer_lost(int world);

/* net_frag.c (peer is remote) */
/* Send req in fragments; 0 all handed to the netmod (req complete), -1 no
 * room yet (where it stopped is kept: call again). */
int  p2p_net_frag_send(int peer, weft_request_t *req);
void p2p_net_frag_first(int peer, const weft_am_t *m, const rts_t *rts);
void p2p_net_frag_more(int peer, uint64_t offset, const void *data, MPI_Count len);
void p2p_net_frag_recv_unexpected(weft_request_t *req, weft_unexp_t *u);
/* A send of which fragments have left (MPI_Cancel must leave it alone). */
static inline int p2p_net_frag_started(const weft_request_t *req)
{
    return req->proto[2] != 0;
}
void p2p_net_frag_peer_lost(int world);

/* fault.c */
void p2p_fault_init(void);
/* Fail req because process id world (rank comm_rank of its comm, or -1)
 * was lost. */
void p2p_fail_lost(weft_request_t *req, int world, int comm_rank);
/* A new operation on comm naming rank (or MPI_ANY_SOURCE): fail req and
 * return 1 if that process (any process of comm) is lost. */
int  p2p_lost_check(weft_request_t *req, weft_comm_t *comm, int rank);

#endif
