/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intercommunicators: creation (from a peer communicator or from two
 * groups), merge, and context-id agreement across both groups.
 *
 * An intercommunicator's rank/size describe the local group and
 * peer_world/peer_size the remote group, so point-to-point needs nothing
 * special. Each one carries local_comm, an intracommunicator over the local
 * group with its own context id, used for the internal exchanges here (and
 * by intercommunicator collectives).
 *
 * Agreement on a context id free in both groups: AND the masks within each
 * group, the two leaders (local rank 0, or the given leaders) swap their
 * group's mask, AND them, and broadcast the result in their group; both
 * groups then pick the same lowest bits.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/dev/peer.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/runtime.h"

/* Agreement given the local participant list x, a leader index in x, and
 * how the leader reaches the other leader (over `via`, peer rank `peer`).
 * extra_out/extra_in: bytes the leaders swap along (may be 0), and that
 * are broadcast to the group with the mask. */
typedef struct {
    int             status;
    weft_ctx_mask_t mask;
} agree_msg_t;

static int agree_two_groups(const weft_xgroup_t *x, int leader, weft_comm_t *via, int peer, int tag,
                            const void *extra_out, size_t nextra_out, void **extra_in_p,
                            size_t *nextra_in_p, weft_ctx_mask_t *mask_p)
{
    agree_msg_t msg;
    size_t      nin   = 0;
    void       *in    = NULL;
    int         rc;

    weft_ctx_mask_local(&msg.mask);
    msg.status = MPI_SUCCESS;
    rc = weft_x_allreduce_band(x, &msg.mask, sizeof(msg.mask), tag);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (x->me == leader) {
        size_t         nout = sizeof(msg.mask) + nextra_out;
        unsigned char *out  = malloc(nout), *got = NULL;
        size_t         ngot = 0;

        if (out == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator exchange");
        }
        memcpy(out, &msg.mask, sizeof(msg.mask));
        if (nextra_out > 0) { /* extra_out may be NULL when empty */
            memcpy(out + sizeof(msg.mask), extra_out, nextra_out);
        }
        rc = weft_x_exchange(via, peer, out, nout, (void **)&got, &ngot, tag + 2);
        free(out);
        if (rc == MPI_SUCCESS && ngot < sizeof(msg.mask)) {
            rc = weft_error(MPI_ERR_INTERN, "short intercommunicator exchange (%zu bytes)", ngot);
        }
        if (rc == MPI_SUCCESS) {
            weft_ctx_mask_t other;
            memcpy(&other, got, sizeof(other));
            for (int i = 0; i < WEFT_CTX_WORDS; i++) {
                msg.mask.w[i] &= other.w[i];
            }
            nin = ngot - sizeof(other);
            in  = malloc(nin ? nin : 1);
            if (in == NULL) {
                rc = weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator exchange");
            } else {
                memcpy(in, got + sizeof(other), nin);
            }
        }
        free(got);
        msg.status = rc;
    }
    /* Everyone learns the outcome, the mask and the remote extra bytes. */
    rc = weft_x_bcast(x, &msg, sizeof(msg), leader, tag + 4);
    if (rc == MPI_SUCCESS && msg.status == MPI_SUCCESS) {
        rc = weft_x_bcast(x, &nin, sizeof(nin), leader, tag + 5);
        if (rc == MPI_SUCCESS && x->me != leader) {
            in = malloc(nin ? nin : 1);
            if (in == NULL) {
                rc = weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator exchange");
            }
        }
        if (rc == MPI_SUCCESS && nin > 0) {
            rc = weft_x_bcast(x, in, nin, leader, tag + 6);
        }
    } else if (rc == MPI_SUCCESS) {
        rc = x->me == leader ? msg.status
                             : weft_error(msg.status, "the group leader failed to reach the remote group");
    }
    if (rc != MPI_SUCCESS) {
        free(in);
        return rc;
    }
    *mask_p = msg.mask;
    if (extra_in_p != NULL) {
        *extra_in_p  = in;
        *nextra_in_p = nin;
    } else {
        free(in);
    }
    return MPI_SUCCESS;
}

int weft_intercomm_agree(weft_comm_t *inter, int n, uint32_t *ids, int tag)
{
    weft_xgroup_t   x;
    weft_ctx_mask_t mask;
    int             rc;

    weft_xgroup_of_comm(&x, inter->local_comm);
    rc = agree_two_groups(&x, 0, inter, 0, tag, NULL, 0, NULL, NULL, &mask);
    return rc == MPI_SUCCESS ? weft_ctx_pick(&mask, n, ids) : rc;
}

int weft_intercomm_create_impl(weft_comm_t *local_comm, int local_leader, weft_comm_t *peer_comm,
                               int remote_leader, int tag, MPI_Comm *newintercomm)
{
    weft_xgroup_t   x;
    weft_ctx_mask_t mask;
    weft_group_t   *remote;
    weft_comm_t    *nc;
    uint32_t        ids[2];
    void           *in = NULL;
    size_t          nin = 0;
    int             rc;

    if (local_comm->rank == local_leader) {
        if (peer_comm == NULL) {
            return weft_comm_arg_error(MPI_ERR_COMM, "peer_comm", "MPI_COMM_NULL at the local leader");
        }
        if (remote_leader < 0 || remote_leader >= peer_comm->peer_size) {
            return weft_comm_arg_error(MPI_ERR_RANK, "remote_leader",
                                       "rank %d is out of range (peer_comm has %d ranks)",
                                       remote_leader, peer_comm->peer_size);
        }
        if (peer_comm->peer_world[remote_leader] == weft_runtime.pmi.rank) {
            return weft_comm_arg_error(MPI_ERR_RANK, "remote_leader",
                                       "the remote leader is this process (groups overlap)");
        }
    }
    if (tag < 0) {
        return weft_comm_arg_error(MPI_ERR_TAG, "tag", "tag %d is negative", tag);
    }
    weft_xgroup_of_comm(&x, local_comm);
    rc = agree_two_groups(&x, local_leader, peer_comm, remote_leader,
                          WEFT_XTAG_INTER_USER | ((tag << 3) & 0x07fffff8),
                          local_comm->group->world_ranks,
                          sizeof(int) * (size_t)local_comm->size, &in, &nin, &mask);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_ctx_pick(&mask, 2, ids);
    if (rc != MPI_SUCCESS) {
        free(in);
        return rc;
    }
    remote = weft_group_create((int)(nin / sizeof(int)), in);
    free(in);
    if (remote == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the remote group");
    }
    for (int i = 0; i < remote->size; i++) {
        if (remote->world_ranks[i] == weft_runtime.pmi.rank) {
            weft_group_release(remote);
            return weft_error(MPI_ERR_COMM, "the local and remote groups overlap");
        }
    }
    nc = weft_comm_derive(local_comm, local_comm->group, remote, ids[0], ids[1]);
    weft_group_release(remote);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator");
    }
    *newintercomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

int weft_intercomm_create_from_groups_impl(weft_group_t *local_group, int local_leader,
                                           weft_group_t *remote_group, int remote_leader,
                                           const char *stringtag, weft_info_t *info,
                                           weft_errhandler_t *errhandler, MPI_Comm *newintercomm)
{
    weft_xgroup_t   x;
    weft_ctx_mask_t mask;
    weft_comm_t    *nc;
    uint32_t        ids[2];
    int             rc;

    if (stringtag == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "stringtag", "NULL pointer");
    }
    if (local_group->rank == MPI_UNDEFINED) {
        return weft_comm_arg_error(MPI_ERR_GROUP, "local_group", "the calling process is not a member");
    }
    if (local_leader < 0 || local_leader >= local_group->size) {
        return weft_comm_arg_error(MPI_ERR_RANK, "local_leader", "rank %d is out of range (group has %d)",
                                   local_leader, local_group->size);
    }
    if (remote_leader < 0 || remote_leader >= remote_group->size) {
        return weft_comm_arg_error(MPI_ERR_RANK, "remote_leader",
                                   "rank %d is out of range (group has %d)", remote_leader,
                                   remote_group->size);
    }
    if (remote_group->rank != MPI_UNDEFINED) {
        return weft_comm_arg_error(MPI_ERR_GROUP, "remote_group",
                                   "the calling process is in both groups");
    }
    /* Everything travels over WORLD (group members are world ranks). */
    x.comm  = &weft_comm_world;
    x.ranks = local_group->world_ranks;
    x.n     = local_group->size;
    x.me    = local_group->rank;
    rc      = agree_two_groups(&x, local_leader, &weft_comm_world,
                               remote_group->world_ranks[remote_leader], weft_xtag_of_string(stringtag),
                               NULL, 0, NULL, NULL, &mask);
    if (rc == MPI_SUCCESS) {
        rc = weft_ctx_pick(&mask, 2, ids);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    nc = weft_comm_derive(NULL, local_group, remote_group, ids[0], ids[1]);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator");
    }
    weft_errhandler_retain(errhandler);
    weft_errhandler_release(nc->errhandler);
    nc->errhandler = errhandler;
    if (info != NULL && (nc->info = weft_info_clone(info)) == NULL) {
        weft_comm_release(nc);
        return weft_error(MPI_ERR_NO_MEM, "no memory for info hints");
    }
    *newintercomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

int weft_intercomm_merge_impl(weft_comm_t *intercomm, int high, MPI_Comm *newintracomm)
{
    weft_xgroup_t   x;
    weft_ctx_mask_t mask;
    weft_group_t   *first, *second, *g;
    weft_comm_t    *nc;
    uint32_t        ctx;
    int             mine = high ? 1 : 0, remote_high, *w, rc;
    void           *in  = NULL;
    size_t          nin = 0;

    if (!intercomm->is_inter) {
        return weft_comm_arg_error(MPI_ERR_COMM, "intercomm", "not an intercommunicator");
    }
    weft_xgroup_of_comm(&x, intercomm->local_comm);
    rc = agree_two_groups(&x, 0, intercomm, 0, WEFT_XTAG_MERGE, &mine, sizeof(mine), &in, &nin,
                          &mask);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (nin != sizeof(int)) {
        free(in);
        return weft_error(MPI_ERR_INTERN, "bad merge exchange (%zu bytes)", nin);
    }
    memcpy(&remote_high, in, sizeof(int));
    free(in);
    rc = weft_ctx_pick(&mask, 1, &ctx);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    /* The group that passed high=false comes first; on a tie, the group
     * whose first member comes first (lower world rank in one job; an order
     * both jobs agree on otherwise). */
    if (mine != remote_high) {
        first = mine ? intercomm->remote_group : intercomm->group;
    } else {
        first = weft_dev_process_cmp(intercomm->group->world_ranks[0],
                                     intercomm->remote_group->world_ranks[0]) < 0
                    ? intercomm->group
                    : intercomm->remote_group;
    }
    second = first == intercomm->group ? intercomm->remote_group : intercomm->group;
    w      = malloc(sizeof(int) * ((size_t)first->size + (size_t)second->size));
    if (w == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a merged group");
    }
    memcpy(w, first->world_ranks, sizeof(int) * (size_t)first->size);
    memcpy(w + first->size, second->world_ranks, sizeof(int) * (size_t)second->size);
    g = weft_group_create(first->size + second->size, w);
    free(w);
    if (g == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a merged group");
    }
    nc = weft_comm_derive(intercomm, g, NULL, ctx, 0);
    weft_group_release(g);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a communicator");
    }
    *newintracomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

/* ---- split / create on an intercommunicator ------------------------- */

typedef struct {
    int color, key;
} inter_entry_t;

/* World ranks of the entries with color, ordered by (key, position). */
static int *select_members(const inter_entry_t *e, int n, int color, const int *world, int *k_p)
{
    int *idx = malloc(sizeof(int) * (size_t)(n + 1)), *w = malloc(sizeof(int) * (size_t)(n + 1)), k = 0;

    if (idx == NULL || w == NULL) {
        free(idx);
        free(w);
        return NULL;
    }
    for (int i = 0; i < n; i++) {
        if (e[i].color == color) {
            int j = k++;
            /* insertion sort: stable in position for equal keys */
            while (j > 0 && e[idx[j - 1]].key > e[i].key) {
                idx[j] = idx[j - 1];
                j--;
            }
            idx[j] = i;
        }
    }
    for (int i = 0; i < k; i++) {
        w[i] = world[idx[i]];
    }
    free(idx);
    *k_p = k;
    return w;
}

/* Every process of both groups gives (color, key): the local group's pairs
 * are gathered, the leaders swap them with the context mask, and each
 * process builds the local and remote groups of its color. A process whose
 * color is MPI_UNDEFINED, or whose color has no member on the other side,
 * gets NULL. */
int weft_intercomm_split(weft_comm_t *inter, int color, int key, weft_comm_t **new_p)
{
    weft_comm_t    *local = inter->local_comm, *nc;
    weft_xgroup_t   x;
    weft_ctx_mask_t mask;
    inter_entry_t   mine = {color, key}, *all, *remote = NULL;
    size_t          nin  = 0;
    uint32_t        ids[2];
    int            *lw = NULL, *rw = NULL, nl = 0, nr = 0, rc;
    weft_group_t   *lg, *rg;

    weft_xgroup_of_comm(&x, local);
    all = malloc(sizeof(*all) * (size_t)local->size);
    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator split");
    }
    rc = weft_x_allgather(&x, &mine, sizeof(mine), all, WEFT_XTAG_SPLIT + 16);
    if (rc == MPI_SUCCESS) {
        rc = agree_two_groups(&x, 0, inter, 0, WEFT_XTAG_SPLIT + 24, all,
                              sizeof(*all) * (size_t)local->size, (void **)&remote, &nin, &mask);
    }
    if (rc == MPI_SUCCESS && nin != sizeof(*all) * (size_t)inter->remote_group->size) {
        rc = weft_error(MPI_ERR_INTERN, "bad intercommunicator split exchange (%zu bytes)", nin);
    }
    if (rc == MPI_SUCCESS) {
        rc = weft_ctx_pick(&mask, 2, ids);
    }
    *new_p = NULL;
    if (rc != MPI_SUCCESS || color == MPI_UNDEFINED) {
        goto out;
    }
    lw = select_members(all, local->size, color, inter->group->world_ranks, &nl);
    rw = select_members(remote, inter->remote_group->size, color, inter->remote_group->world_ranks, &nr);
    if (lw == NULL || rw == NULL) {
        rc = weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator split");
        goto out;
    }
    if (nr == 0) {
        goto out;
    }
    lg = weft_group_create(nl, lw);
    rg = weft_group_create(nr, rw);
    nc = lg && rg ? weft_comm_derive(inter, lg, rg, ids[0], ids[1]) : NULL;
    weft_group_release(lg);
    weft_group_release(rg);
    if (nc == NULL) {
        rc = weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator");
        goto out;
    }
    *new_p = nc;
out:
    free(all);
    free(remote);
    free(lw);
    free(rw);
    return rc;
}
