/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Put and get across hosts by libfabric RMA (WEFT_RMA_NET): on a window of
 * the active-message path, each rank with a peer reached through the netmod
 * registers its window memory for remote read and write at creation, and
 * the ranks exchange (key, address, node). Put/get to a target on another
 * node are then fi_write / fi_read of the target's byte ranges (one per
 * contiguous piece of the target datatype; the origin side packed when it
 * is not contiguous, the staging kept until completion); targets on the
 * origin's own node keep messages through shared memory. They are counted
 * per window and completed by the next flush, unlock, fence, complete or
 * free (rma_net_quiet; a put asks for delivery completion: its data is then
 * in the target's memory), so a window of puts is in flight at once. A get
 * into a non-contiguous origin buffer and the R-forms complete at once.
 *
 * Accumulates, locks, PSCW and fence stay active messages. Native atomics
 * (fi_atomic) cannot cover every (type, op) pair MPI allows on a window
 * (long double, complex, MINLOC/MAXLOC pairs), and a window cannot know at
 * creation which pairs it will see; mixing the provider's atomics with the
 * target's own accumulate code on one location would lose atomicity, so
 * every accumulate goes to the target as a message.
 *
 * Whether the target needs MPI calls depends on the provider's data
 * progress: tcp;ofi_rxm is FI_PROGRESS_MANUAL (the target's provider code
 * runs only inside its fi_cq_read, i.e. inside MPI), see docs/design.md.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/progress.h"
#include "rma_internal.h"
#include "util/tunables.h"

enum { RMA_NET_AUTO = 0, RMA_NET_AM = 1, RMA_NET_NATIVE = 2 };

#define RMA_NET_INFLIGHT 64 /* pieces in flight before waiting for some */
#define RMA_NET_IOV      64

typedef struct {
    int32_t  ok;     /* this rank can take part (reason in no_reason) */
    int32_t  node;   /* rma_my_node() */
    uint64_t key;
    uint64_t addr;   /* what a peer names for this rank's byte 0 (the address, or 0 when
                        the provider addresses registrations by offset) */
} net_info_t;

static int wait_below(weft_win_t *win, int limit);

/* Whether rank r of the window is reached through the netmod. */
static int through_netmod(const weft_win_t *win, int r)
{
    return r != win->rank && !weft_peer(win->comm->peer_world[r])->is_local;
}

/* Why this rank cannot use RMA for the window, or NULL. */
static const char *no_reason(const weft_win_t *win)
{
    int any = 0;

    if (weft_dev.netmod == NULL) {
        return "no network module is up";
    }
    if ((weft_dev.netmod->caps() & WEFT_TRANSPORT_CAP_ONESIDED) == 0) {
        return "the libfabric provider has no FI_RMA without local registration";
    }
    /* Like RGET: the sockets provider's fi_read stalls intermittently under
     * load (transport/ofi/ofi.c), so auto leaves it to messages. */
    if (weft_tunables.RMA_NET == RMA_NET_AUTO &&
        strcmp(weft_dev.netmod->provider(), "sockets") == 0) {
        return "WEFT_RMA_NET=auto does not use the sockets provider's RMA";
    }
    for (int r = 0; r < win->size && !any; r++) {
        any = through_netmod(win, r);
    }
    return any ? NULL : "no other rank of the window is reached through the netmod";
}

/* Targets on other nodes that the netmod reaches get put/get by RMA when
 * both sides registered; the others (this node's ranks, reached through
 * shared memory) keep messages. */
int rma_net_win_init(weft_win_t *win)
{
    net_info_t  mine = {0}, *all;
    const char *why  = weft_tunables.RMA_NET == RMA_NET_AM ? "WEFT_RMA_NET=am" : no_reason(win);
    int         rc, bad = -1;

    /* Dynamic windows attach memory at any time (a registration and key
     * exchange per attach is not built): messages, even when native is
     * forced. Shared windows are node-local. Every rank sees the same
     * flavor, so the choice agrees without an exchange. */
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC || win->flavor == MPI_WIN_FLAVOR_SHARED) {
        return MPI_SUCCESS;
    }
    if (why == NULL && win->win_size > 0 &&
        weft_dev.netmod->win_register(win->base, (size_t)win->win_size, &mine.key, &mine.addr,
                                      &win->net_mr) != WEFT_OK) {
        why = "registering the window memory failed";
    }
    mine.ok   = why == NULL;
    mine.node = rma_my_node();
    all = calloc((size_t)win->size, sizeof(*all));
    win->net_key    = calloc((size_t)win->size, sizeof(uint64_t));
    win->net_addr   = calloc((size_t)win->size, sizeof(uint64_t));
    win->net_target = calloc((size_t)win->size, 1);
    if (all == NULL || win->net_key == NULL || win->net_addr == NULL || win->net_target == NULL) {
        free(all);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a window of %d ranks", win->size);
    }
    if ((rc = rma_allgather(win, &mine, sizeof(mine), all)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    win->net = 0;
    for (int r = 0; r < win->size; r++) {
        if (r == win->rank || all[r].node == mine.node) {
            continue;
        }
        win->net_target[r] = mine.ok && all[r].ok && through_netmod(win, r);
        win->net |= win->net_target[r];
        if (!win->net_target[r] && bad < 0) {
            bad = mine.ok ? r : win->rank;
        }
        win->net_key[r]  = all[r].key;
        win->net_addr[r] = all[r].addr;
    }
    free(all);
    if (bad >= 0 && weft_tunables.RMA_NET == RMA_NET_NATIVE) {
        return weft_error(MPI_ERR_OTHER, "WEFT_RMA_NET=native: rank %d of the window cannot use "
                          "libfabric RMA%s%s", bad, bad == win->rank && why ? ": " : "",
                          bad == win->rank && why ? why : " (see its reason)");
    }
    return MPI_SUCCESS;
}

/* Packed origin data of a put, freed once the put completed. */
struct rma_net_stage {
    struct rma_net_stage *next;
    char                  data[];
};

int rma_net_quiet(weft_win_t *win)
{
    int failed;

    if (!win->net) {
        return MPI_SUCCESS;
    }
    int rc = wait_below(win, 0);
    if (rc != MPI_SUCCESS) {
        return rc; /* staged data stays: the provider may still read it */
    }
    while (win->net_staged != NULL) {
        struct rma_net_stage *s = win->net_staged;
        win->net_staged         = s->next;
        free(s);
    }
    failed              = win->net_cnt.failed;
    win->net_cnt.failed = 0;
    return failed ? weft_error(MPI_ERR_OTHER, "a put or get over the network failed") : MPI_SUCCESS;
}

int rma_net_win_fini(weft_win_t *win)
{
    int orphans;

    rma_net_quiet(win);
    orphans = win->net_cnt.pending > 0;
    if (win->net_mr != NULL) {
        weft_dev.netmod->mem_deregister(win->net_mr);
        win->net_mr = NULL;
    }
    free(win->net_key);
    free(win->net_addr);
    free(win->net_target);
    win->net_key    = NULL;
    win->net_addr   = NULL;
    win->net_target = NULL;
    win->net        = 0;
    return orphans;
}

/* Wait until at most limit operations are in flight. A lost member of the
 * window fails the wait: a dead target never completes what was issued to
 * it (ofi_rxm keeps retrying its connection), and we cannot tell which
 * pending operation was its. */
static int wait_below(weft_win_t *win, int limit)
{
    RMA_WAIT_UNTIL(win, win->net_cnt.pending <= limit);
    return MPI_SUCCESS;
}

/* Move len bytes between local and the target's (raddr, key), in pieces of
 * at most max_rma. 0, -1 when the netmod refused, or an MPI error code (a
 * lost member: no wait for room lasts forever). */
static int issue(weft_win_t *win, int world, char *local, size_t len, uint64_t raddr,
                 uint64_t key, int put)
{
    weft_rma_count_t *cnt = &win->net_cnt;
    size_t            max = weft_dev.netmod->max_rma();
    weft_wait_t       w   = {0};
    int               rc;

    while (len > 0) {
        size_t        n  = len < max ? len : max;
        weft_status_t st = put ? weft_dev.netmod->rma_put(world, local, n, raddr, key, cnt)
                               : weft_dev.netmod->rma_get(world, local, n, raddr, key, cnt);
        if (st == WEFT_AGAIN) {
            if (weft_progress_poll() == 0 && (rc = rma_wait_idle(win, &w)) != MPI_SUCCESS) {
                return rc;
            }
            continue;
        }
        if (st != WEFT_OK) {
            return -1;
        }
        local += n;
        raddr += n;
        len -= n;
        if (cnt->pending >= RMA_NET_INFLIGHT &&
            (rc = wait_below(win, RMA_NET_INFLIGHT / 2)) != MPI_SUCCESS) {
            return rc;
        }
    }
    return 0;
}

/* nbytes of packed local data <-> the target ranges of (base_off, tcount,
 * tdt) at target, counted in the window (complete at rma_net_quiet). */
static int transfer(weft_win_t *win, int target, MPI_Aint base_off, char *local,
                    MPI_Count nbytes, MPI_Count tcount, const weft_datatype_t *tdt, int put)
{
    int               world = win->comm->peer_world[target], bad = 0;
    uint64_t         key = win->net_key[target], base = win->net_addr[target];

    if (tdt->is_contig) {
        bad = issue(win, world, local, (size_t)nbytes, base + (uint64_t)(base_off + tdt->true_lb),
                    key, put);
    } else {
        struct iovec iov[RMA_NET_IOV];
        MPI_Count    off = 0;
        while (off < nbytes && !bad) {
            MPI_Count covered;
            int       k = weft_dt_iov(tdt, tcount, (void *)(uintptr_t)base_off, off, iov,
                                      RMA_NET_IOV, &covered);
            if (k == 0) {
                break;
            }
            for (int i = 0, at = 0; i < k && !bad; at += (int)iov[i].iov_len, i++) {
                bad = issue(win, world, local + off + at, iov[i].iov_len,
                            base + (uint64_t)(uintptr_t)iov[i].iov_base, key, put);
            }
            off += covered;
        }
    }
    if (bad > 0) {
        return bad; /* a lost member, already described */
    }
    if (bad) {
        return weft_error(MPI_ERR_OTHER, "%s rank %d's window memory over the network failed",
                          put ? "writing" : "reading", target);
    }
    return MPI_SUCCESS;
}

int rma_net_put(weft_win_t *win, int target, MPI_Aint base_off, const void *obuf,
                MPI_Count ocount, const weft_datatype_t *odt, MPI_Count tcount,
                const weft_datatype_t *tdt)
{
    MPI_Count             nbytes = tcount * tdt->size;
    struct rma_net_stage *stage;
    char                 *local;

    if (odt->is_contig) {
        local = (char *)obuf + odt->true_lb;
    } else {
        if ((stage = malloc(sizeof(*stage) + (size_t)nbytes)) == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory to stage %lld bytes", (long long)nbytes);
        }
        weft_dt_pack(odt, ocount, obuf, 0, stage->data, nbytes);
        stage->next     = win->net_staged;
        win->net_staged = stage;
        local           = stage->data;
    }
    return transfer(win, target, base_off, local, nbytes, tcount, tdt, 1);
}

int rma_net_get(weft_win_t *win, int target, MPI_Aint base_off, void *obuf, MPI_Count ocount,
                const weft_datatype_t *odt, MPI_Count tcount, const weft_datatype_t *tdt)
{
    MPI_Count nbytes = tcount * tdt->size;
    char     *tmp = NULL, *local;
    int       rc;

    if (odt->is_contig) {
        local = (char *)obuf + odt->true_lb;
    } else if ((local = tmp = malloc((size_t)nbytes)) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory to stage %lld bytes", (long long)nbytes);
    }
    rc = transfer(win, target, base_off, local, nbytes, tcount, tdt, 0);
    if (tmp != NULL) { /* unpack now: wait for this get (and the others) */
        int qrc = rma_net_quiet(win);
        rc      = rc == MPI_SUCCESS ? qrc : rc;
        if (rc == MPI_SUCCESS) {
            weft_dt_unpack(odt, ocount, obuf, 0, tmp, nbytes);
        }
    }
    free(tmp);
    return rc;
}
