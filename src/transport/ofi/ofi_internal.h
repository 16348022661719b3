/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * State and helpers shared by the files of the libfabric netmod (private to
 * this folder; ofi.c describes the module):
 *   ofi.c          setup (provider, endpoint, buffers, addresses), ops table
 *   ofi_msg.c      sending and delivering active messages
 *   ofi_progress.c completion queue, keepalives, finalize, blocking waits
 *   ofi_rma.c      RGET reads and window RMA
 *   ofi_dyn.c      processes of other jobs
 */
#ifndef WEFT_TRANSPORT_OFI_INTERNAL_H
#define WEFT_TRANSPORT_OFI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "transport/transport.h"

/* libfabric is opened at netmod init (dlopen), not linked: its psm provider
 * libraries install a SIGSEGV handler from their constructors
 * (libinfinipath: prints a backtrace and exits 1), which would change how
 * every crashing rank dies, netmod or not. Before opening we turn that
 * handler off (IPATH_NO_BACKTRACE). These are the only libfabric symbols
 * used; everything else is an inline call through the fid's ops. */
typedef struct {
    void *lib;
    int (*getinfo)(uint32_t, const char *, const char *, uint64_t, const struct fi_info *,
                   struct fi_info **);
    void (*freeinfo)(struct fi_info *);
    struct fi_info *(*dupinfo)(const struct fi_info *);
    int (*fabric)(struct fi_fabric_attr *, struct fid_fabric **, void *);
    const char *(*strerror)(int);
} ofi_fab_t;

/* On the wire before every payload. */
typedef struct {
    uint8_t  type;
    uint8_t  flags;  /* HDR_* */
    uint8_t  pad[2];
    int32_t  tag;
    uint32_t context;
    int32_t  src;
    uint32_t len;
    int32_t  world; /* sender's job rank */
    uint32_t seq;   /* per ordered pair, from 0 */
    uint32_t uid_hi; /* HDR_DYN: world is the low half of the sender's uid */
} net_hdr_t;

#define HDR_DYN   0x1u /* sender is a process of another job: identified by uid */
#define HDR_UNSEQ 0x2u /* outside the pair's sequence (a dynamic connect request) */

/* An arrival that overtook an earlier message of its sender (kept in
 * arrival order per sender until its turn). */
typedef struct early {
    struct early *next;
    uint64_t      uid; /* orphans only: the sender not added yet */
    net_hdr_t     hdr;
    char          payload[];
} early_t;

typedef struct ofi_buf {
    struct fi_context2 ctx; /* first: completions hand it back */
    struct ofi_buf    *next;
    int                is_rx;
    int                dst;
    size_t             len;  /* header + payload */
    char              *data; /* header, then payload */
} ofi_buf_t;

#define OFI_TX_BUFS 64
#define OFI_RX_BUFS 32
#define OFI_CQ_BATCH 16
#define OFI_NAME_MAX 256
#define OFI_CHUNK    400 /* blob bytes per PMI value (hex doubles it) */

typedef struct {
    struct fi_info     *info;
    struct fid_fabric  *fabric;
    struct fid_domain  *domain;
    struct fid_av      *av;
    struct fid_cq      *cq;
    struct fid_ep      *ep;
    struct fid_mr      *mr;
    void               *desc;
    fi_addr_t          *addrs;
    int                 me, size;
    const weft_am_handler_fn_t *handlers;
    void              (*peer_lost)(int world, const char *why);
    void              (*rma_done)(void *cookie, size_t len, int err);
    int                 want_rma, has_rma;
    ofi_buf_t          *bufs;
    char               *slab;
    size_t              stride, max_payload, inject;
    ofi_buf_t          *free_tx, *reserved;
    ofi_buf_t          *queue_head, *queue_tail; /* committed, not yet accepted */
    int                 tx_inflight;
    uint32_t           *send_seq, *recv_seq; /* per peer */
    early_t           **early;               /* per peer, sorted by seq */
    unsigned char      *talked;              /* per peer: keepalives go there */
    const unsigned char *uses_netmod;        /* per peer (core's table) */
    int                 byes_due, byes_got, byes_to_send;
    /* Dynamic peers: ids size..npeers-1, per-peer arrays have cap entries. */
    int                 npeers, cap;
    uint64_t            uid;      /* ours */
    uint64_t           *peer_uid; /* per peer; 0 for job ranks */
    int                *inflight; /* per peer: fi_sends not completed */
    unsigned char      *gone;     /* per peer: GONE_* bits */
    time_t             *ka_since; /* per peer: a keepalive pending and nothing heard
                                     from it since (0: none) */
    early_t            *orphans;  /* from uids not added yet, arrival order */
    int                 drain_due;
    unsigned            polls;
    time_t              last_keepalive;
    int                 up;
    int                 wait_fd;             /* the CQ's wait fd, -1: none */
    int                 wait_fd_stuck;       /* sleeps in a row it was readable with nothing pending */
} ofi_state_t;


extern ofi_fab_t   weft_ofi_fab;
extern ofi_state_t weft_ofi;

/* A process of another job we disconnected from: its address left the AV,
 * so nothing may be sent to it any more (libfabric would crash). */
#define GONE_LOST 1 /* dyn_forget called, or lost (peer_failed) */
#define GONE_BYE  2 /* its goodbye arrived (finalize) */
#define GONE_FORGOTTEN 4 /* dyn_forget done: its address left the AV */

static inline int ofi_peer_gone(int p)
{
    return p < weft_ofi.npeers && (weft_ofi.gone[p] & GONE_LOST);
}

/* ofi.c */
int           ofi_check(int rc, const char *what);
weft_status_t ofi_init_common(const weft_transport_init_t *args, int exchange);
void          ofi_fini(void);
int           ofi_peers_grow(int n);
const char   *ofi_provider(void);

/* ofi_msg.c */
int           ofi_post_recv(ofi_buf_t *b);
void         *ofi_am_reserve(int dst, size_t len);
void          ofi_peer_failed(int dst, int err, const char *what);
/* Hand b to the provider: 0 accepted, 1 try again later. */
int           ofi_post_send(ofi_buf_t *b);
weft_status_t ofi_am_commit(int dst, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                            size_t len);
void          ofi_deliver(const net_hdr_t *h, const void *payload);
void          ofi_keep_early(const net_hdr_t *h, const void *payload);

/* ofi_progress.c */
void ofi_keepalives(void);
int  ofi_progress(void);
void ofi_quiesce_start(void);
int  ofi_quiesce_done(void);
int  ofi_busy(void);
int  ofi_wait_fd(void);
int  ofi_wait_ready(void);

/* ofi_rma.c */
weft_status_t ofi_mem_register(void *buf, size_t len, int remote, uint64_t *key_p,
                               uint64_t *addr_p, void **handle_p);
void          ofi_mem_deregister(void *handle);
weft_status_t ofi_rma_read(int src, void *local, size_t len, void *local_handle, uint64_t raddr,
                           uint64_t key, void *cookie);
size_t        ofi_max_rma(void);
size_t        ofi_rma_limit(void);
int           ofi_win_rma_ok(void);
weft_status_t ofi_win_register(void *buf, size_t len, uint64_t *key_p, uint64_t *addr_p,
                               void **handle_p);
weft_status_t ofi_rma_put(int peer, const void *local, size_t len, uint64_t raddr, uint64_t key,
                          weft_rma_count_t *cnt);
weft_status_t ofi_rma_get(int peer, void *local, size_t len, uint64_t raddr, uint64_t key,
                          weft_rma_count_t *cnt);
void          ofi_win_rma_done(ofi_buf_t *b, int err);

/* ofi_dyn.c */
/* An arrival with flags: 1 when it continues as a sequenced message of
 * peer h->world, 0 when handled there or kept until its sender is added. */
int           ofi_dyn_arrival(net_hdr_t *h, const void *payload);
int           ofi_dyn_drain(void);
weft_status_t ofi_dyn_open(const weft_transport_init_t *args);
weft_status_t ofi_dyn_name(void *name, size_t *len);
weft_status_t ofi_dyn_add_peer(int id, const void *name, size_t len, uint64_t uid);
void          ofi_dyn_forget(int id);

#endif
