/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The transport boundary: what core sees of a network module (netmod), and
 * the active-message (AM) types every transport delivers.
 *
 * Shm is not behind this table: core calls transport/shm/shm.h directly on
 * the hot path (a peer's "local" bit picks it). Every other peer is reached
 * through one netmod that fills weft_transport_ops_t.
 *
 * Active messages: a small envelope (type, tag, context, source) plus a
 * payload. The type is a handler id registered by a core module (pt2pt now;
 * RMA and OpenSHMEM later); both shm and the netmod dispatch arrivals through
 * the same handler table, in order per sending process.
 */
#ifndef WEFT_TRANSPORT_TRANSPORT_H
#define WEFT_TRANSPORT_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "pmi/pmi.h"

/* Result of a transport call; never an overloaded -1. */
typedef enum {
    WEFT_OK = 0,
    WEFT_AGAIN,       /* no resources right now: retry after progress */
    WEFT_UNREACHABLE, /* the peer cannot be reached (dead, link down) */
    WEFT_ERROR        /* anything else; a message has been printed */
} weft_status_t;

/* Handler ids (the "type" of an AM). 0 is never used. */
enum {
    WEFT_AM_PT2PT_EAGER = 1,
    WEFT_AM_PT2PT_RTS,
    WEFT_AM_PT2PT_CTS,
    WEFT_AM_PT2PT_FIN,
    WEFT_AM_PT2PT_DATA,   /* a rendezvous chunk sent as a message (R3) */
    WEFT_AM_RMA_FIRST   = 16, /* 16..31 reserved for RMA */
    WEFT_AM_SHMEM_FIRST = 32, /* 32..47 reserved for OpenSHMEM */
    /* 48..55 dynamic processes (core/dynproc). The first one, a connect
     * request, may come from a process the receiver does not know yet: the
     * netmod delivers it unsequenced with world_src -1. */
    WEFT_AM_DYNPROC_FIRST = 48,
    WEFT_AM_DYNPROC_CONNECT = 48,
    WEFT_AM_NETMOD_BYE       = 62, /* finalize handshake, inside the netmod */
    WEFT_AM_NETMOD_KEEPALIVE = 63, /* handled inside the netmod, never dispatched */
    WEFT_AM_MAX         = 64, /* ids are below this */
    WEFT_AM_TABLE_SIZE  = 256 /* handler tables cover every uint8_t type */
};

/* What a receiver sees of an AM. payload is valid only during the handler. */
typedef struct {
    uint8_t     type;    /* handler id */
    int32_t     tag;
    uint32_t    context;
    int32_t     src;     /* sender's rank in the communicator (opaque here) */
    uint32_t    len;     /* payload bytes */
    const void *payload;
} weft_am_t;

/* world_src: the sender's rank in the job (MPI_COMM_WORLD of this job). */
typedef void (*weft_am_handler_fn_t)(int world_src, const weft_am_t *msg);

/* What core hands a netmod at init. */
typedef struct {
    const weft_pmi_info_t      *pmi;
    const weft_am_handler_fn_t *handlers;   /* WEFT_AM_TABLE_SIZE entries */
    /* Ranks (job ranks) this process will talk to through the netmod:
     * uses_netmod[r] != 0. Same answer on every rank for a pair. */
    const unsigned char        *uses_netmod;
    const char                 *provider;   /* "" = default order */
    size_t                      max_payload; /* largest AM payload core will send */
    size_t                      eager_limit; /* largest payload core sends eagerly (a
                                                provider's own eager size should fit it) */
    int                         want_rma;    /* FI_RMA for RGET: 0 no, 1 where it works well, 2 forced */
    int                         want_wait;   /* blocking waits: give the CQ a wait fd */
    /* An rma_read finished (err 0) or failed; cookie as passed to it. */
    void (*rma_done)(void *cookie, size_t len, int err);
    /* A peer was lost (connection error, dead process): core reports it
     * (naming rank and host) and ends the job. Does not return. */
    void (*peer_lost)(int world, const char *why);
    /* Dynamic processes: this process's identity for processes of other
     * jobs (random, nonzero). */
    uint64_t                    uid;
} weft_transport_init_t;

/* Netmod capability bits (ops.caps). */
#define WEFT_TRANSPORT_CAP_RMA     0x1u /* rma_read works on this provider */
#define WEFT_TRANSPORT_CAP_ATOMICS 0x2u
#define WEFT_TRANSPORT_CAP_ONESIDED 0x4u /* win_register/rma_put/rma_get work */

/* Completion count of one-sided window operations: the netmod adds 1 per
 * operation it accepted and subtracts 1 when it completed (a put: its data
 * is in the target's memory); a failed one sets failed (a peer error has
 * also been reported through peer_lost). */
typedef struct {
    int pending;
    int failed;
} weft_rma_count_t;

typedef struct {
    size_t      size; /* sizeof(weft_transport_ops_t): checked by core */
    const char *name;

    /* Collective over the job (PMI fences). Returns WEFT_OK or WEFT_ERROR
     * (message printed: a named provider that is missing is listed with the
     * ones that are available). */
    weft_status_t (*init)(const weft_transport_init_t *args);
    void          (*fini)(void);
    /* After init: the provider chosen and the capability bits. */
    const char   *(*provider)(void);
    unsigned      (*caps)(void);
    /* Largest payload one AM may carry (>= the max_payload asked for). */
    size_t        (*max_payload)(void);

    /* Sending an AM to world rank dst: reserve returns where len payload
     * bytes go (NULL: no buffer free, retry after progress); commit sends
     * it. The payload is the netmod's copy: the caller's memory is free at
     * once. AMs to one peer arrive in commit order. */
    void         *(*am_reserve)(int dst, size_t len);
    weft_status_t (*am_commit)(int dst, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                               size_t len);

    /* Drive the network (manual progress): completions, arrivals (handlers
     * called from here). Returns the number of events. */
    int (*progress)(void);
    /* Sends still in flight or queued (finalize waits for 0). */
    int (*busy)(void);
    /* Finalize handshake, after busy() is 0: quiesce_start sends a goodbye
     * to every netmod peer; the caller keeps progressing until
     * quiesce_done() says every peer's goodbye has arrived and ours have
     * completed (a message whose provider needs our progress to leave has
     * then left; only after that may we stop progressing). */
    void (*quiesce_start)(void);
    int  (*quiesce_done)(void);
    /* A file descriptor that becomes readable when the netmod has work
     * (blocking wait policy, want_wait), or -1 when there is none. */
    int (*wait_fd)(void);
    /* Right before sleeping on wait_fd: 1 when that is safe (nothing
     * pending that would not make the fd readable), 0: progress first. */
    int (*wait_ready)(void);

    /* Memory registration (CAP_RMA only). remote: the peer may read it.
     * Fills the key and the address a peer names in rma_read. */
    weft_status_t (*mem_register)(void *buf, size_t len, int remote, uint64_t *key_p,
                                  uint64_t *addr_p, void **handle_p);
    void          (*mem_deregister)(void *handle);
    /* Read len bytes at (raddr, key) of world rank src into local (registered
     * as local_handle); rma_done(cookie, len, err) follows. AGAIN: retry. */
    weft_status_t (*rma_read)(int src, void *local, size_t len, void *local_handle,
                              uint64_t raddr, uint64_t key, void *cookie);
    /* Largest single rma_read, rma_put or rma_get (WEFT_NET_RMA_CHUNK_SIZE
     * or the provider's limit): callers split longer transfers. */
    size_t        (*max_rma)(void);
    /* The provider's own limit on one of them (max_rma without the
     * WEFT_NET_RMA_CHUNK_SIZE cut). */
    size_t        (*rma_limit)(void);

    /* ---- Dynamic processes (processes of other jobs) ----
     * Peers numbered from pmi->size up are processes of other jobs; they
     * send with their uid, which the receiver maps back to the number given
     * in dyn_add_peer (messages from a uid not added yet wait until it is).
     * dyn_open: bring the endpoint up without any PMI exchange, when init
     * has not run (not collective; args as for init, uses_netmod all 0). */
    weft_status_t (*dyn_open)(const weft_transport_init_t *args);
    /* Our endpoint name (binary, *len in: room, out: bytes). */
    weft_status_t (*dyn_name)(void *name, size_t *len);
    /* Make id (>= job size, ids added in increasing order, no gaps) the
     * process at endpoint name whose sends carry uid. */
    weft_status_t (*dyn_add_peer)(int id, const void *name, size_t len, uint64_t uid);
    /* No more keepalives, sends or goodbyes to id (it disconnected: it may
     * exit at will; or, a job rank too, core found it lost). */
    void          (*dyn_forget)(int id);

    /* ---- One-sided windows (CAP_ONESIDED) ----
     * win_register: memory peers may read and write; key and address as
     * for mem_register. rma_put / rma_get move len bytes (at most max_rma)
     * between local memory and (raddr, key) at world rank peer, counted in
     * cnt; the target takes part only through its provider's progress.
     * AGAIN: no room, retry after progress. */
    weft_status_t (*win_register)(void *buf, size_t len, uint64_t *key_p, uint64_t *addr_p,
                                  void **handle_p);
    weft_status_t (*rma_put)(int peer, const void *local, size_t len, uint64_t raddr,
                             uint64_t key, weft_rma_count_t *cnt);
    weft_status_t (*rma_get)(int peer, void *local, size_t len, uint64_t raddr, uint64_t key,
                             weft_rma_count_t *cnt);
} weft_transport_ops_t;

/* The libfabric netmod (transport/ofi). */
extern const weft_transport_ops_t weft_ofi_ops;

#endif
