/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The device layer of core: the peer table (how each job rank is reached)
 * and the active-message handler table every transport dispatches through.
 *
 * A peer is local (same host: the shared-memory channel, by local index) or
 * remote (the netmod; its endpoint is addressed by job rank). "Host" is the
 * launcher's assignment (PMI node id), never gethostname(): test hosts made
 * of network namespaces share one hostname. WEFT_NETMOD_ONLY=1 marks every
 * other rank remote so the netmod can be tested on one machine.
 */
#ifndef WEFT_CORE_DEV_PEER_H
#define WEFT_CORE_DEV_PEER_H

#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

typedef struct {
    int is_local;  /* reached through shm (direct calls) */
    int shm_index; /* local index when is_local, else -1 */
    int node_id;   /* PMI node id (the peer's host); for processes of other
                      jobs a number >= 1<<24 per (job, node of that job): equal
                      exactly when they share a node in their job */
    int failed;    /* lost (dead, unreachable): nothing more goes to it */
} weft_peer_t;

typedef struct {
    weft_peer_t                *peers;     /* one per job rank, then one per
                                              connected process of other jobs */
    int                         me;        /* our job rank */
    int                         size;      /* job size */
    int                         nprocs;    /* entries in peers (>= size) */
    const weft_transport_ops_t *netmod;    /* NULL when no peer is remote */
    int                         nfailed;   /* processes lost so far (fast "none" test) */
    int                         loss_due;  /* lost, their requests not failed yet */
} weft_dev_t;

extern weft_dev_t weft_dev;

/* Handler table indexed by AM type (WEFT_AM_TABLE_SIZE entries; unknown
 * types abort the job as corrupt). */
extern weft_am_handler_fn_t weft_am_handlers[WEFT_AM_TABLE_SIZE];

/* Register the handler of AM id (module init, before traffic). */
void weft_am_register(int id, weft_am_handler_fn_t fn);

/* Build the peer table from PMI (honours WEFT_NETMOD_ONLY). Returns an MPI
 * error code. */
int  weft_dev_peers_init(void);
/* Bring up the netmod when some peer is remote; max_payload: the largest AM
 * payload the caller will send through it; eager_limit: the largest it
 * sends eagerly; want_rma: ask for RMA reads, whose completions go to
 * rma_done. Collective. */
int  weft_dev_netmod_init(size_t max_payload, size_t eager_limit, int want_rma,
                          void (*rma_done)(void *cookie, size_t len, int err));
void weft_dev_fini(void);

static inline const weft_peer_t *weft_peer(int world)
{
    return &weft_dev.peers[world];
}

/* Send one AM to a remote peer through the netmod (copying payload); 0 sent,
 * -1 no resources (retry after progress). A lost peer ends the job. */
int weft_dev_net_send(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                      const void *payload, size_t len);
/* Reserve/commit form (the payload is written in place). */
void *weft_dev_net_reserve(int world, size_t len);
void  weft_dev_net_commit(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                          size_t len);

/* "host N" text naming a rank's host, for error messages. */
int weft_dev_host_of(int world);

/* ---- Lost processes ----
 * A process is lost when the netmod's keepalives or sends fail, or, for a
 * process on this host, when it exits (a pidfd poll every
 * WEFT_PEER_CHECK_INTERVAL ms, from waits and from the progress engine). Losing one never ends the job here:
 * the requests that involve it complete with MPI_ERR_OTHER (the ABI has no
 * MPI_ERR_PROC_FAILED) and their communicator's error handler decides
 * (MPI_ERRORS_ARE_FATAL aborts, naming the process). The loss is recorded at
 * once (it may be noticed deep inside a transport) and handled at the next
 * progress poll by the registered hooks (pt2pt fails its requests). */
#define WEFT_ERR_PROC_LOST MPI_ERR_OTHER

/* Called once per lost process id, from progress (not inside a transport). */
typedef void (*weft_peer_lost_fn_t)(int world);
void weft_dev_on_peer_lost(weft_peer_lost_fn_t fn);
/* Record that process id world is lost (idempotent; why: the evidence). */
void weft_dev_peer_lost(int world, const char *why);
/* Run the hooks for losses recorded since the last call (from progress). */
void weft_dev_handle_losses(void);
/* Start watching the job's local peers (after the shm channel is up). */
void weft_dev_watch_init(void);
/* Watch process id (shm peer shm_index, whose pid may not be known yet) for
 * its exit until weft_dev_watch_remove(id); -1 without memory. The progress
 * engine and waits look at the watched processes every check interval. */
int  weft_dev_watch_add(int id, int shm_index);
void weft_dev_watch_remove(int id);
/* Check the watched processes are alive, at most every interval. */
void weft_dev_watch_peers(void);
/* Record the reason of an operation failed by lost process world (comm
 * rank comm_rank, or -1) with weft_error; returns WEFT_ERR_PROC_LOST. */
int  weft_dev_lost_error(int world, int comm_rank);

/* ---- Processes of other jobs (dynamic processes) ----
 * They get process ids from size up, used wherever a world rank is (groups,
 * peer_world); on this host through shared memory, else the netmod. */

/* This process's identity across jobs: uid (random, nonzero) and the key of
 * its job (a hash of the job id; equal keys = same MPI_COMM_WORLD). */
uint64_t weft_dev_uid(void);
uint64_t weft_dev_jobkey(void);
/* Bring the netmod up here if it is not (not collective). MPI error code. */
int      weft_dev_dyn_open(void);
/* Our netmod address (after weft_dev_dyn_open); *len: room in, bytes out. */
int      weft_dev_dyn_name(void *name, size_t *len);
/* Longest job id usable in shared-memory names shared with other jobs. */
#define WEFT_DEV_JOBID_MAX 63

/* What a process of another job tells about itself. */
typedef struct {
    uint64_t    uid, jobkey;
    int         job_rank, node; /* node: its node id in its job */
    uint64_t    hostkey;        /* weft_dev_hostkey() there (0: no shared memory) */
    uint64_t    shm_layout;     /* weft_shm_layout_key() there */
    int         cma;            /* weft_dev_dyn_cma() there */
    const char *jobid;          /* its job id (shared-memory names) */
    const void *addr;           /* netmod address; addrlen 0: none (netmod closed) */
    size_t      addrlen;
} weft_dev_proc_t;

/* This host, for telling processes of other jobs on it apart from those
 * elsewhere: boot id, /dev/shm, network and pid namespaces, user. 0 when
 * processes of other jobs must use the netmod (WEFT_NETMOD_ONLY,
 * WEFT_DYN_SHM=0). */
uint64_t weft_dev_hostkey(void);
/* Single copy (CMA) offered to processes of other jobs on this host. */
int      weft_dev_dyn_cma(void);
/* The process id of a process of another job: our world rank for our job,
 * the id already given to its uid, or a new id, reached through a shared-
 * memory bridge when it is on this host (same hostkey and layout), else the
 * netmod (opened here if needed). MPI error code. */
int      weft_dev_add_process(const weft_dev_proc_t *proc, int *id_p);
/* (jobkey, job rank) of a process id, for a total order all jobs agree on. */
void     weft_dev_identity(int id, uint64_t *jobkey_p, int *job_rank_p);
/* <0, 0, >0: a before, same as, after b in that order. */
int      weft_dev_process_cmp(int a, int b);
/* It disconnected: stop watching it (it may exit at will). */
void     weft_dev_forget_process(int id);
/* Called with the new count whenever the table grows (pt2pt's per-peer
 * state); returns an MPI error code. */
void     weft_dev_set_grow_hook(int (*fn)(int nprocs));

#endif
