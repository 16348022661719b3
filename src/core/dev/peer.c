/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Peer table, active-message table and the core side of the netmod.
 */
#include "core/dev/peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"
#include "util/log.h"
#include "util/tunables.h"

weft_dev_t           weft_dev;
weft_am_handler_fn_t weft_am_handlers[WEFT_AM_TABLE_SIZE];

static unsigned char *uses_netmod;

/* The host of a job rank: the PMI node id, or for namespace tests
 * (WEFT_TEST_HOST_BLOCK=N) blocks of N consecutive ranks. */
static int host_of(const weft_pmi_info_t *pmi, int world)
{
    if (weft_tunables.TEST_HOST_BLOCK > 0) {
        return world / (int)weft_tunables.TEST_HOST_BLOCK;
    }
    return pmi->node_of_rank ? pmi->node_of_rank[world] : 0;
}

static void am_corrupt(int world, const weft_am_t *msg)
{
    char why[160];

    snprintf(why, sizeof(why), "corrupt message (unknown type %u) from rank %d on host %d",
             msg->type, world, weft_dev_host_of(world));
    weft_runtime_abort(MPI_ERR_INTERN, why);
}

void weft_am_register(int id, weft_am_handler_fn_t fn)
{
    weft_am_handlers[id] = fn ? fn : am_corrupt;
}

int weft_dev_host_of(int world)
{
    return weft_dev.peers[world].node_id;
}

static void peer_lost(int world, const char *why)
{
    char msg[512];

    snprintf(msg, sizeof(msg), "lost contact with rank %d on host %d: %s", world,
             weft_dev_host_of(world), why);
    weft_runtime_abort(MPI_ERR_OTHER, msg);
}

int weft_dev_peers_init(void)
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;

    for (int i = 0; i < WEFT_AM_TABLE_SIZE; i++) {
        weft_am_handlers[i] = am_corrupt;
    }
    weft_dev.me     = pmi->rank;
    weft_dev.size   = pmi->size;
    weft_dev.peers  = calloc((size_t)pmi->size, sizeof(weft_peer_t));
    uses_netmod     = calloc((size_t)pmi->size, 1);
    if (weft_dev.peers == NULL || uses_netmod == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the peer table");
    }
    int my_host = host_of(pmi, pmi->rank);
    for (int w = 0; w < pmi->size; w++) {
        weft_dev.peers[w].shm_index = -1;
        weft_dev.peers[w].node_id   = host_of(pmi, w);
        uses_netmod[w] = w != pmi->rank &&
                         (weft_tunables.NETMOD_ONLY || weft_dev.peers[w].node_id != my_host);
    }
    for (int i = 0; i < pmi->local_size; i++) {
        weft_peer_t *p = &weft_dev.peers[pmi->local_ranks[i]];
        p->shm_index   = i;
        /* Ourselves: neither (self-sends are matched directly). */
        p->is_local    = !uses_netmod[pmi->local_ranks[i]] && pmi->local_ranks[i] != pmi->rank;
    }
    return MPI_SUCCESS;
}

int weft_dev_netmod_init(size_t max_payload, int want_rma,
                         void (*rma_done)(void *cookie, size_t len, int err))
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;
    weft_transport_init_t  args;

    /* Every rank must take part in the netmod's PMI exchange, or none:
     * decide from job-wide facts only (is any rank on another host than
     * rank 0?). */
    int hosts = 0;
    for (int w = 1; w < pmi->size && !hosts; w++) {
        hosts = host_of(pmi, w) != host_of(pmi, 0);
    }
    if (!weft_tunables.NETMOD_ONLY && !hosts) {
        return MPI_SUCCESS;
    }
    if (weft_ofi_ops.size != sizeof(weft_transport_ops_t)) {
        return weft_error(MPI_ERR_INTERN, "netmod %s was built against another transport.h",
                          weft_ofi_ops.name);
    }
    args.pmi         = pmi;
    args.handlers    = weft_am_handlers;
    args.uses_netmod = uses_netmod;
    args.provider    = weft_tunables.OFI_PROVIDER;
    args.max_payload = max_payload;
    args.peer_lost   = peer_lost;
    args.want_rma    = want_rma;
    args.want_wait   = weft_tunables.WAIT_POLICY == 3; /* blocking */
    args.rma_done    = rma_done;
    if (weft_ofi_ops.init(&args) != WEFT_OK) {
        return weft_error(MPI_ERR_OTHER, "the network module (libfabric) failed to start");
    }
    weft_dev.netmod = &weft_ofi_ops;
    return MPI_SUCCESS;
}

void weft_dev_fini(void)
{
    if (weft_dev.netmod) {
        weft_dev.netmod->fini();
        weft_dev.netmod = NULL;
    }
    free(weft_dev.peers);
    free(uses_netmod);
    weft_dev.peers = NULL;
    uses_netmod    = NULL;
}

static void net_failed(int world, weft_status_t st)
{
    peer_lost(world, st == WEFT_UNREACHABLE ? "unreachable" : "network send failed");
}

void *weft_dev_net_reserve(int world, size_t len)
{
    return weft_dev.netmod->am_reserve(world, len);
}

void weft_dev_net_commit(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                         size_t len)
{
    weft_status_t st = weft_dev.netmod->am_commit(world, type, tag, context, src, len);

    WEFT_PVAR_INC(NETMOD_AMS_SENT);
    WEFT_PVAR_ADD(NETMOD_BYTES_SENT, len);

    if (st != WEFT_OK) {
        net_failed(world, st);
    }
}

int weft_dev_net_send(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                      const void *payload, size_t len)
{
    void *p = weft_dev.netmod->am_reserve(world, len);

    if (p == NULL) {
        return -1;
    }
    if (len) {
        memcpy(p, payload, len);
    }
    weft_dev_net_commit(world, type, tag, context, src, len);
    return 0;
}
