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
    int node_id;   /* PMI node id (the peer's host) */
} weft_peer_t;

typedef struct {
    weft_peer_t                *peers;     /* one per job rank */
    int                         me;        /* our job rank */
    int                         size;      /* job size */
    const weft_transport_ops_t *netmod;    /* NULL when no peer is remote */
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
 * payload the caller will send through it; want_rma: ask for RMA reads,
 * whose completions go to rma_done. Collective. */
int  weft_dev_netmod_init(size_t max_payload, int want_rma,
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

#endif
