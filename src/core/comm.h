/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Communicators. Each has a context id used by matching: point-to-point
 * traffic uses context_id, collective traffic context_id + 1, so a user
 * message can never match a collective's internal message.
 */
#ifndef WEFT_CORE_COMM_H
#define WEFT_CORE_COMM_H

#include <stdint.h>
#include "core/object.h"
#include "core/group.h"

struct weft_attr_entry;
struct weft_coll_comm;

struct weft_comm {
    weft_object_t           hdr;
    uint32_t                context_id;   /* even; +1 is the collective context */
    int                     rank;         /* in the local group */
    int                     size;         /* of the local group */
    int                     is_inter;
    weft_group_t           *group;        /* local group */
    weft_group_t           *remote_group; /* intercommunicators only */
    const int              *peer_world;   /* rank -> world rank of the peers
                                             (remote group for inter) */
    int                     peer_size;    /* size of the peer group */
    weft_errhandler_t      *errhandler;
    weft_info_t            *info;
    struct weft_attr_entry *attrs;
    void                   *topo;         /* cartesian/graph data, NULL if none */
    int                     topo_kind;    /* MPI_CART, MPI_GRAPH, MPI_DIST_GRAPH, MPI_UNDEFINED */
    struct weft_coll_comm  *coll;         /* collective module state, lazily built */
    char                    name[MPI_MAX_OBJECT_NAME];
    weft_comm_t            *local_comm;   /* intercomms: intracomm over the local group
                                             (own context id), for internal exchanges */
    int                     owns_context; /* context id came from the allocator */
    int                     freed;        /* MPI_Comm_free called (handle gone) */
    uint32_t                idup_seq;     /* MPI_Comm_idup calls on it (comm_idup.c) */
    int                     any_source_outlives_losses; /* internal service comms: a lost
                                             member does not fail ANY_SOURCE receives */
    const void             *session;      /* MPI session it derives from, or NULL
                                             (compared only: buffered-send lookup) */
    uint64_t                pvar_msgs_sent, pvar_bytes_sent; /* MPI_T, core/mpit/pvars.def */
};

extern weft_comm_t weft_comm_world;
extern weft_comm_t weft_comm_self;

/* Number of ranks a rank argument refers to (remote size for intercomms). */
static inline int weft_comm_peer_size(const weft_comm_t *comm)
{
    return comm->peer_size;
}
static inline int weft_comm_is_inter(const weft_comm_t *comm)
{
    return comm->is_inter;
}

/* Build a communicator over group (and remote_group for an intercomm) with a
 * fresh context id agreed among parent's ranks... see comm.c. Takes
 * references on the groups. */
weft_comm_t *weft_comm_alloc(weft_group_t *group, weft_group_t *remote_group, uint32_t context_id);
void         weft_comm_retain(weft_comm_t *comm);
void         weft_comm_release(weft_comm_t *comm);

/* Build a communicator over group (intra, remote_group NULL) or an
 * intercommunicator, owning the context id (released to the allocator when
 * the last reference goes). Copies nothing else (errhandler = FATAL). */
weft_comm_t *weft_comm_new_owned(weft_group_t *group, weft_group_t *remote_group,
                                 uint32_t context_id);

/* MPI_Comm_split semantics on an intracommunicator, for library-internal
 * sub-communicators (e.g. node and leader communicators of the two-level
 * collectives). Collective over comm: every rank calls it in the same order
 * relative to other communicator constructions on comm. *new_p is NULL for
 * color MPI_UNDEFINED; otherwise a communicator with refcount 1 (its own
 * context id, comm's error handler), released with weft_comm_release.
 * Returns an MPI error code. */
int weft_comm_split_raw(weft_comm_t *comm, int color, int key, weft_comm_t **new_p);

/* The rank in comm's peer group of its first lost process (core/dev/peer.h
 * "Lost processes"), or -1 while none is lost. */
int weft_comm_first_lost(const weft_comm_t *comm);

/* Set up WORLD and SELF after PMI init; tear down at finalize. */
int  weft_comm_module_init(void);
void weft_comm_module_fini(void);

#endif
