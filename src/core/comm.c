/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Communicators: WORLD/SELF, reference counting, and the intracommunicator
 * constructors (dup, split, split_type, create, create_group), comparison,
 * names and info hints. Intercommunicators are in intercomm.c, topologies
 * in topo.c, attributes in attr.c.
 */
#include "core/comm.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/attr.h"
#include "core/bsend.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/dev/peer.h"
#include "core/errhandler.h"
#include "core/hwinfo.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/objpool.h"
#include "core/request.h"
#include "core/runtime.h"
#include "core/topo.h"

weft_comm_t  weft_comm_world;
weft_comm_t  weft_comm_self;
weft_comm_t *weft_builtin_comm[3];
static weft_objpool_t comm_pool = WEFT_OBJPOOL_INIT(weft_comm_t);

/* Context ids 0 (WORLD) and 2 (SELF) are fixed; the rest are handed out by
 * the context-id allocator (comm_ctx.c). */
#define WEFT_CONTEXT_WORLD 0u
#define WEFT_CONTEXT_SELF  2u

static void comm_init_fields(weft_comm_t *comm, weft_group_t *group, weft_group_t *remote,
                             uint32_t context_id)
{
    comm->context_id   = context_id;
    comm->group        = group;
    comm->remote_group = remote;
    comm->is_inter     = remote != NULL;
    comm->rank         = group->rank;
    comm->size         = group->size;
    comm->peer_world   = remote ? remote->world_ranks : group->world_ranks;
    comm->peer_size    = remote ? remote->size : group->size;
    comm->errhandler   = &weft_errhandler_fatal;
    comm->topo_kind    = MPI_UNDEFINED;
}

weft_comm_t *weft_comm_alloc(weft_group_t *group, weft_group_t *remote_group, uint32_t context_id)
{
    weft_comm_t *comm = weft_objpool_alloc(&comm_pool);

    if (comm == NULL) {
        return NULL;
    }
    weft_object_init(&comm->hdr, WEFT_KIND_COMM, 0);
    weft_group_retain(group);
    if (remote_group) {
        weft_group_retain(remote_group);
    }
    comm_init_fields(comm, group, remote_group, context_id);
    return comm;
}

weft_comm_t *weft_comm_new_owned(weft_group_t *group, weft_group_t *remote_group,
                                 uint32_t context_id)
{
    weft_comm_t *comm = weft_comm_alloc(group, remote_group, context_id);

    if (comm != NULL) {
        comm->owns_context = 1;
        weft_ctx_reserve(context_id);
    }
    return comm;
}

weft_comm_t *weft_comm_derive(weft_comm_t *parent, weft_group_t *group, weft_group_t *remote,
                              uint32_t ctx, uint32_t local_ctx)
{
    weft_comm_t *comm = weft_comm_new_owned(group, remote, ctx);

    if (comm == NULL) {
        return NULL;
    }
    if (remote != NULL) {
        comm->local_comm = weft_comm_new_owned(group, NULL, local_ctx);
        if (comm->local_comm == NULL) {
            weft_comm_release(comm);
            return NULL;
        }
        snprintf(comm->local_comm->name, sizeof(comm->local_comm->name), "(local group)");
    }
    if (parent != NULL) {
        weft_errhandler_retain(parent->errhandler);
        comm->errhandler = parent->errhandler;
        comm->session    = parent->session;
    }
    return comm;
}

void weft_comm_retain(weft_comm_t *comm)
{
    comm->hdr.refcount++;
}

void weft_comm_release(weft_comm_t *comm)
{
    if (comm == NULL || comm->hdr.handle != 0 || --comm->hdr.refcount > 0) {
        return;
    }
    weft_comm_destroy_hooks_run(comm); /* modules' per-communicator state */
    weft_bsend_owner_fini(comm);
    if (comm->owns_context) {
        weft_ctx_release(comm->context_id);
    }
    if (comm->local_comm != NULL) {
        weft_comm_release(comm->local_comm);
    }
    weft_topo_free(comm->topo);
    /* Attributes were deleted by MPI_Comm_free; anything left (a failed
     * delete callback) is dropped without callbacks. */
    for (struct weft_attr_entry *a = comm->attrs, *next; a != NULL; a = next) {
        next = a->next;
        free(a);
    }
    weft_errhandler_release(comm->errhandler);
    weft_info_release(comm->info);
    weft_group_release(comm->group);
    weft_group_release(comm->remote_group);
    weft_objpool_free(&comm_pool, comm);
}

/* MPI_Finalize frees MPI_COMM_SELF first (its delete callbacks run), then
 * WORLD's attributes go the same way. */
static void comm_finalize_attrs(void)
{
    weft_attr_delete_all(WEFT_ATTR_COMM, MPI_COMM_SELF, &weft_comm_self.attrs);
    weft_attr_delete_all(WEFT_ATTR_COMM, MPI_COMM_WORLD, &weft_comm_world.attrs);
}

int weft_comm_module_init(void)
{
    int           n     = weft_runtime.pmi.size;
    int          *ranks = malloc(sizeof(int) * (size_t)n);
    weft_group_t *world, *self;
    int           me = weft_runtime.pmi.rank;

    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int i = 0; i < n; i++) {
        ranks[i] = i;
    }
    world = weft_group_create(n, ranks);
    self  = weft_group_create(1, &me);
    free(ranks);
    if (world == NULL || self == NULL) {
        return MPI_ERR_NO_MEM;
    }
    /* a restarted runtime (sessions): drop the previous run's groups */
    weft_group_release(weft_comm_world.group);
    weft_group_release(weft_comm_self.group);
    weft_ctx_module_init();
    weft_object_init(&weft_comm_world.hdr, WEFT_KIND_COMM, (uintptr_t)MPI_COMM_WORLD);
    comm_init_fields(&weft_comm_world, world, NULL, WEFT_CONTEXT_WORLD);
    strcpy(weft_comm_world.name, "MPI_COMM_WORLD");
    weft_object_init(&weft_comm_self.hdr, WEFT_KIND_COMM, (uintptr_t)MPI_COMM_SELF);
    comm_init_fields(&weft_comm_self, self, NULL, WEFT_CONTEXT_SELF);
    strcpy(weft_comm_self.name, "MPI_COMM_SELF");
    weft_builtin_comm[0] = NULL;
    weft_builtin_comm[1] = &weft_comm_world;
    weft_builtin_comm[2] = &weft_comm_self;
    weft_finalize_register(comm_finalize_attrs);
    return MPI_SUCCESS;
}

void weft_comm_module_fini(void)
{
    weft_comm_destroy_hooks_run(&weft_comm_world);
    weft_comm_destroy_hooks_run(&weft_comm_self);
}

/* ---- construction helpers ------------------------------------------------ */

int weft_comm_agree_ids(weft_comm_t *parent, int n, uint32_t *ids, int tag)
{
    weft_xgroup_t x;

    if (parent->is_inter) {
        return weft_intercomm_agree(parent, n, ids, tag);
    }
    weft_xgroup_of_comm(&x, parent);
    return weft_ctx_agree(&x, n, ids, tag);
}

static int no_mem(const char *what)
{
    return weft_error(MPI_ERR_NO_MEM, "no memory for %s", what);
}

/* New communicator over world ranks w[0..k-1] (my rank among them). */
static int comm_from_ranks(weft_comm_t *parent, int k, const int *w, uint32_t ctx,
                           weft_comm_t **new_p)
{
    weft_group_t *g = weft_group_create(k, w);
    weft_comm_t  *c;

    if (g == NULL) {
        return no_mem("a group");
    }
    c = weft_comm_derive(parent, g, NULL, ctx, 0);
    weft_group_release(g);
    if (c == NULL) {
        return no_mem("a communicator");
    }
    *new_p = c;
    return MPI_SUCCESS;
}

typedef struct {
    int color, key;
} split_entry_t;

typedef struct {
    int key, idx;
} split_sort_t;

static int split_cmp(const void *a, const void *b)
{
    const split_sort_t *x = a, *y = b;
    if (x->key != y->key) {
        return x->key < y->key ? -1 : 1;
    }
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

int weft_comm_split_raw(weft_comm_t *comm, int color, int key, weft_comm_t **new_p)
{
    split_entry_t  mine = {color, key}, *all;
    split_sort_t  *sel;
    weft_xgroup_t  x;
    uint32_t       ctx;
    int           *w, k = 0, rc;

    weft_xgroup_of_comm(&x, comm);
    all = malloc(sizeof(*all) * (size_t)comm->size);
    sel = malloc(sizeof(*sel) * (size_t)comm->size);
    w   = malloc(sizeof(*w) * (size_t)comm->size);
    if (all == NULL || sel == NULL || w == NULL) {
        rc = no_mem("MPI_Comm_split");
        goto out;
    }
    rc = weft_x_allgather(&x, &mine, sizeof(mine), all, WEFT_XTAG_SPLIT);
    if (rc == MPI_SUCCESS) {
        rc = weft_ctx_agree(&x, 1, &ctx, WEFT_XTAG_CTX);
    }
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    *new_p = NULL;
    if (color == MPI_UNDEFINED) {
        goto out;
    }
    for (int i = 0; i < comm->size; i++) {
        if (all[i].color == color) {
            sel[k].key = all[i].key;
            sel[k].idx = i;
            k++;
        }
    }
    qsort(sel, (size_t)k, sizeof(*sel), split_cmp);
    for (int i = 0; i < k; i++) {
        w[i] = comm->group->world_ranks[sel[i].idx];
    }
    rc = comm_from_ranks(comm, k, w, ctx, new_p);
out:
    free(all);
    free(sel);
    free(w);
    return rc;
}

/* Copy what a duplicate inherits: info (or the given hints), topology and
 * attributes (copy callbacks). */
int weft_comm_dup_into(weft_comm_t *comm, weft_comm_t *nc, weft_info_t *info, int use_info)
{
    int rc;

    if (use_info ? info != NULL : comm->info != NULL) {
        nc->info = weft_info_clone(use_info ? info : comm->info);
        if (nc->info == NULL) {
            return no_mem("info hints");
        }
    }
    if (comm->topo != NULL) {
        nc->topo = weft_topo_dup(comm->topo);
        if (nc->topo == NULL) {
            return no_mem("a topology");
        }
        nc->topo_kind = comm->topo_kind;
    }
    rc = weft_attr_copy_all(WEFT_ATTR_COMM, weft_object_handle(comm), comm->attrs,
                            weft_object_handle(nc), &nc->attrs);
    return rc;
}

static int comm_dup(weft_comm_t *comm, weft_info_t *info, int use_info, MPI_Comm *newcomm)
{
    uint32_t     ids[2] = {0, 0};
    weft_comm_t *nc;
    int          rc;

    rc = weft_comm_agree_ids(comm, comm->is_inter ? 2 : 1, ids, WEFT_XTAG_CTX);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    nc = weft_comm_derive(comm, comm->group, comm->remote_group, ids[0], ids[1]);
    if (nc == NULL) {
        return no_mem("a communicator");
    }
    rc = weft_comm_dup_into(comm, nc, info, use_info);
    if (rc != MPI_SUCCESS) {
        weft_comm_release(nc);
        *newcomm = MPI_COMM_NULL; /* MPI: a failed copy callback leaves no new communicator */
        return rc;
    }
    *newcomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

/* ---- MPI functions ------------------------------------------------------- */

int weft_comm_dup_impl(weft_comm_t *comm, MPI_Comm *newcomm)
{
    return comm_dup(comm, NULL, 0, newcomm);
}

int weft_comm_dup_with_info_impl(weft_comm_t *comm, weft_info_t *info, MPI_Comm *newcomm)
{
    return comm_dup(comm, info, 1, newcomm);
}

/* The non-blocking duplicates return at once and agree on the context ids
 * through the progress engine (comm_idup.c), on intra- and
 * intercommunicators alike. */
static int comm_idup(weft_comm_t *comm, weft_info_t *info, int use_info, MPI_Comm *newcomm,
                     MPI_Request *request)
{
    return weft_comm_idup_start(comm, info, use_info, newcomm, request);
}

int weft_comm_idup_impl(weft_comm_t *comm, MPI_Comm *newcomm, MPI_Request *request)
{
    return comm_idup(comm, NULL, 0, newcomm, request);
}

int weft_comm_idup_with_info_impl(weft_comm_t *comm, weft_info_t *info, MPI_Comm *newcomm,
                                  MPI_Request *request)
{
    return comm_idup(comm, info, 1, newcomm, request);
}

int weft_comm_split_impl(weft_comm_t *comm, int color, int key, MPI_Comm *newcomm)
{
    weft_comm_t *nc = NULL;
    int          rc;

    if (color < 0 && color != MPI_UNDEFINED) {
        return weft_comm_arg_error(MPI_ERR_ARG, "color", "%d is negative and not MPI_UNDEFINED",
                                   color);
    }
    rc = comm->is_inter ? weft_intercomm_split(comm, color, key, &nc)
                        : weft_comm_split_raw(comm, color, key, &nc);
    if (rc == MPI_SUCCESS) {
        *newcomm = weft_comm_handle_out(nc);
    }
    return rc;
}

/* ---- split_type: hardware resources ---------------------------------- */

/* Index of the one object of type that contains this process's binding,
 * or -1 when there is none or it spans several. */
static int hw_index_of(hwloc_obj_type_t type)
{
    hwloc_bitmap_t set;
    int            n, found = -1;

    hwloc_topology_t hw_topo = weft_hw_topology();

    if (hw_topo == NULL) {
        return -1;
    }
    set = hwloc_bitmap_alloc();
    if (set == NULL) {
        return -1;
    }
    if (hwloc_get_cpubind(hw_topo, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_copy(set, hwloc_topology_get_topology_cpuset(hw_topo));
    }
    n = hwloc_get_nbobjs_by_type(hw_topo, type);
    for (int i = 0; i < n; i++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(hw_topo, type, (unsigned)i);
        if (obj != NULL && obj->cpuset != NULL && hwloc_bitmap_isincluded(set, obj->cpuset)) {
            found = i;
            break;
        }
    }
    hwloc_bitmap_free(set);
    return found;
}

static int my_node(void)
{
    const int *nodes = weft_runtime.pmi.node_of_rank;
    return nodes ? nodes[weft_runtime.pmi.rank] : 0;
}

/* Split color for resource type, MPI_UNDEFINED if not in a unique one. */
static int hw_color(hwloc_obj_type_t type)
{
    int idx;

    if (type == HWLOC_OBJ_MACHINE) {
        return my_node();
    }
    idx = hw_index_of(type);
    return idx < 0 ? MPI_UNDEFINED : my_node() * 65536 + (idx & 0xffff);
}

static const hwloc_obj_type_t hw_levels[] = {
    HWLOC_OBJ_MACHINE, HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE, HWLOC_OBJ_L3CACHE,
    HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE,     HWLOC_OBJ_PU};
#define HW_NLEVELS ((int)(sizeof(hw_levels) / sizeof(hw_levels[0])))

static const char *hw_type_name(hwloc_obj_type_t type)
{
    return type == HWLOC_OBJ_MACHINE ? "mpi_shared_memory" : hwloc_obj_type_string(type);
}

static int set_hw_info(weft_comm_t *nc, const char *value)
{
    if (nc == NULL) {
        return MPI_SUCCESS;
    }
    if (nc->info == NULL && (nc->info = weft_info_new()) == NULL) {
        return no_mem("info hints");
    }
    return weft_info_put(nc->info, "mpi_hw_resource_type", value);
}

/* MPI_COMM_TYPE_HW_UNGUIDED: every process computes, for each level from
 * the node down, the resource it is inside, and picks the first level at
 * which the processes sharing its resource are a strict subset of comm.
 * Members of a new communicator are those that picked the same level and
 * the same resource, so the split is consistent even when processes pick
 * different levels. */
static int split_unguided(weft_comm_t *comm, int key, weft_comm_t **new_p)
{
    int           mine[HW_NLEVELS], *all, *level, n = comm->size, rc, color = MPI_UNDEFINED;
    weft_xgroup_t x;

    for (int l = 0; l < HW_NLEVELS; l++) {
        mine[l] = hw_color(hw_levels[l]);
    }
    all   = malloc(sizeof(mine) * (size_t)n);
    level = malloc(sizeof(int) * (size_t)n);
    if (all == NULL || level == NULL) {
        free(all);
        free(level);
        return no_mem("MPI_Comm_split_type");
    }
    weft_xgroup_of_comm(&x, comm);
    rc = weft_x_allgather(&x, mine, sizeof(mine), all, WEFT_XTAG_SPLIT + 8);
    if (rc == MPI_SUCCESS) {
        for (int p = 0; p < n; p++) {
            const int *c = all + (size_t)p * HW_NLEVELS;
            level[p]     = -1;
            for (int l = 0; l < HW_NLEVELS && level[p] < 0; l++) {
                int same = 0;
                if (c[l] == MPI_UNDEFINED) {
                    continue;
                }
                for (int q = 0; q < n; q++) {
                    same += all[(size_t)q * HW_NLEVELS + l] == c[l];
                }
                if (same < n) {
                    level[p] = l;
                }
            }
        }
        if (level[comm->rank] >= 0) {
            int l = level[comm->rank];
            /* Colors: level in the top bits keeps levels apart. */
            color = (l << 26) | (mine[l] & 0x3ffffff);
        }
        rc = weft_comm_split_raw(comm, color, key, new_p);
        if (rc == MPI_SUCCESS && *new_p != NULL) {
            rc = set_hw_info(*new_p, hw_type_name(hw_levels[level[comm->rank]]));
        }
    }
    free(all);
    free(level);
    return rc;
}

/* Color for a guided split by hardware resource name, MPI_UNDEFINED when the
 * name is unknown or the process is not inside a unique such resource;
 * *hwname is set to the name when it is recognised. */
static int hw_guided_color(const char *value, const char **hwname)
{
    hwloc_obj_type_t type;

    if (value == NULL) {
        return MPI_UNDEFINED;
    }
    if (strcmp(value, "mpi_shared_memory") == 0) {
        *hwname = value;
        return my_node();
    }
    if (hwloc_type_sscanf(value, &type, NULL, 0) == 0) {
        *hwname = value;
        return hw_color(type);
    }
    return MPI_UNDEFINED; /* unknown resource: MPI_COMM_NULL everywhere */
}

int weft_comm_split_type_impl(weft_comm_t *comm, int split_type, int key, weft_info_t *info,
                              MPI_Comm *newcomm)
{
    weft_comm_t *nc = NULL;
    int          color, rc;
    const char  *value, *hwname = NULL;

    switch (split_type) {
    case MPI_UNDEFINED:
        color = MPI_UNDEFINED;
        break;
    case MPI_COMM_TYPE_SHARED:
        color = my_node();
        break;
    case MPI_COMM_TYPE_HW_GUIDED:
        color = hw_guided_color(weft_info_lookup(info, "mpi_hw_resource_type"), &hwname);
        break;
    case MPI_COMM_TYPE_HW_UNGUIDED:
        if (comm->is_inter) {
            /* "A strict subset of comm" has no agreed meaning across the
             * two groups of an intercommunicator. */
            return weft_comm_arg_error(MPI_ERR_UNSUPPORTED_OPERATION, "split_type",
                                       "MPI_COMM_TYPE_HW_UNGUIDED on an intercommunicator");
        }
        rc = split_unguided(comm, key, &nc);
        /* MPI-4: the resource type each process was split by is also
         * returned in the caller's info object (when it passed one). */
        if (rc == MPI_SUCCESS && nc != NULL && info != NULL) {
            rc = weft_info_put(info, "mpi_hw_resource_type",
                               weft_info_lookup(nc->info, "mpi_hw_resource_type"));
        }
        if (rc == MPI_SUCCESS) {
            *newcomm = weft_comm_handle_out(nc);
        } else if (nc != NULL) {
            weft_comm_release(nc);
        }
        return rc;
    case MPI_COMM_TYPE_RESOURCE_GUIDED:
        /* MPI-4.1: guided by a process set name or, as with
         * MPI_COMM_TYPE_HW_GUIDED, by a hardware resource type. */
        value = weft_info_lookup(info, "mpi_pset_name");
        if (value != NULL && strcmp(value, "mpi://WORLD") == 0) {
            color = 0;
        } else if (value != NULL && strcmp(value, "mpi://SELF") == 0) {
            color = weft_runtime.pmi.rank;
        } else if (value == NULL) {
            color = hw_guided_color(weft_info_lookup(info, "mpi_hw_resource_type"), &hwname);
        } else {
            color = MPI_UNDEFINED;
        }
        break;
    default:
        return weft_comm_arg_error(MPI_ERR_ARG, "split_type", "unknown split type %d", split_type);
    }
    /* On an intercommunicator the processes of the same type in both
     * groups form a new intercommunicator, as MPI_COMM_SPLIT does. */
    rc = comm->is_inter ? weft_intercomm_split(comm, color, key, &nc)
                        : weft_comm_split_raw(comm, color, key, &nc);
    if (rc == MPI_SUCCESS && hwname != NULL) {
        rc = set_hw_info(nc, hwname);
    }
    if (rc == MPI_SUCCESS) {
        *newcomm = weft_comm_handle_out(nc);
    } else if (nc != NULL) {
        weft_comm_release(nc);
    }
    return rc;
}

/* ---- create / create_group -------------------------------------------- */

static int check_subset(weft_comm_t *comm, weft_group_t *group, int *comm_ranks)
{
    for (int i = 0; i < group->size; i++) {
        int r = weft_group_rank_of_world(comm->group, group->world_ranks[i]);
        if (r == MPI_UNDEFINED) {
            return weft_comm_arg_error(MPI_ERR_GROUP, "group",
                                       "member %d (world rank %d) is not in the communicator", i,
                                       group->world_ranks[i]);
        }
        if (comm_ranks != NULL) {
            comm_ranks[i] = r;
        }
    }
    return MPI_SUCCESS;
}

int weft_comm_create_impl(weft_comm_t *comm, weft_group_t *group, MPI_Comm *newcomm)
{
    weft_comm_t *nc = NULL;
    uint32_t     ctx;
    int          rc;

    rc = check_subset(comm, group, NULL);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (comm->is_inter) {
        /* group is a subset of the local group; the remote side gives its own */
        rc = weft_intercomm_split(comm, group->rank != MPI_UNDEFINED ? 0 : MPI_UNDEFINED, group->rank, &nc);
        if (rc == MPI_SUCCESS) {
            *newcomm = weft_comm_handle_out(nc);
        }
        return rc;
    }
    rc = weft_comm_agree_ids(comm, 1, &ctx, WEFT_XTAG_CTX);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (group->rank != MPI_UNDEFINED) {
        nc = weft_comm_derive(comm, group, NULL, ctx, 0);
        if (nc == NULL) {
            return no_mem("a communicator");
        }
    }
    *newcomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

int weft_comm_create_group_impl(weft_comm_t *comm, weft_group_t *group, int tag, MPI_Comm *newcomm)
{
    weft_xgroup_t x;
    weft_comm_t  *nc;
    uint32_t      ctx;
    int          *ranks, rc;

    if (tag < 0 || tag > 0x7fffffff) {
        return weft_comm_arg_error(MPI_ERR_TAG, "tag", "tag %d is negative", tag);
    }
    if (group->rank == MPI_UNDEFINED) {
        *newcomm = MPI_COMM_NULL; /* not a member: nothing to agree on */
        return MPI_SUCCESS;
    }
    ranks = malloc(sizeof(int) * (size_t)group->size);
    if (ranks == NULL) {
        return no_mem("MPI_Comm_create_group");
    }
    rc = check_subset(comm, group, ranks);
    if (rc == MPI_SUCCESS) {
        x.comm  = comm;
        x.ranks = ranks;
        x.n     = group->size;
        x.me    = group->rank;
        rc      = weft_ctx_agree(&x, 1, &ctx, WEFT_XTAG_CREATE_GRP | ((tag << 2) & 0x0ffffffc));
    }
    free(ranks);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    nc = weft_comm_derive(comm, group, NULL, ctx, 0);
    if (nc == NULL) {
        return no_mem("a communicator");
    }
    *newcomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

/* ---- free, compare, queries ------------------------------------------- */

int weft_comm_free_impl(MPI_Comm *comm)
{
    weft_comm_t *c;
    int          rc;

    if (comm == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "comm", "NULL pointer");
    }
    c = weft_comm_from_handle(*comm);
    if (c == NULL) {
        return weft_comm_arg_error(MPI_ERR_COMM, "comm", "invalid communicator%s",
                                   *comm == MPI_COMM_NULL ? " (null handle)" : "");
    }
    weft_err_set_comm(c);
    if (c->hdr.handle != 0) {
        return weft_comm_arg_error(MPI_ERR_COMM, "comm", "%s cannot be freed", c->name);
    }
    rc = weft_attr_delete_all(WEFT_ATTR_COMM, *comm, &c->attrs);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_err_set_comm(NULL);
    /* The handle dies now; pending operations keep the object. */
    c->freed = 1;
    *comm    = MPI_COMM_NULL;
    weft_comm_release(c);
    return MPI_SUCCESS;
}

int weft_comm_compare_impl(weft_comm_t *comm1, weft_comm_t *comm2, int *result)
{
    int local, remote = MPI_IDENT;

    if (comm1 == comm2) {
        *result = MPI_IDENT;
        return MPI_SUCCESS;
    }
    if (comm1->is_inter != comm2->is_inter) {
        *result = MPI_UNEQUAL;
        return MPI_SUCCESS;
    }
    local = weft_group_compare_raw(comm1->group, comm2->group);
    if (comm1->is_inter) {
        remote = weft_group_compare_raw(comm1->remote_group, comm2->remote_group);
    }
    if (local == MPI_UNEQUAL || remote == MPI_UNEQUAL) {
        *result = MPI_UNEQUAL;
    } else if (local == MPI_IDENT && remote == MPI_IDENT) {
        *result = MPI_CONGRUENT;
    } else {
        *result = MPI_SIMILAR;
    }
    return MPI_SUCCESS;
}

int weft_comm_set_name_impl(weft_comm_t *comm, const char *comm_name)
{
    if (comm_name == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "comm_name", "NULL pointer");
    }
    snprintf(comm->name, sizeof(comm->name), "%s", comm_name);
    return MPI_SUCCESS;
}

int weft_comm_get_name_impl(weft_comm_t *comm, char *comm_name, int *resultlen)
{
    if (comm_name == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "comm_name", "NULL pointer");
    }
    /* MPI_COMM_NULL has a name too (mpi4py, MPICH and Open MPI agree). */
    snprintf(comm_name, MPI_MAX_OBJECT_NAME, "%s", comm ? comm->name : "MPI_COMM_NULL");
    *resultlen = (int)strlen(comm_name);
    return MPI_SUCCESS;
}

int weft_comm_set_info_impl(weft_comm_t *comm, weft_info_t *info)
{
    weft_info_t *copy = NULL;

    if (info != NULL && (copy = weft_info_clone(info)) == NULL) {
        return no_mem("info hints");
    }
    weft_info_release(comm->info);
    comm->info = copy;
    return MPI_SUCCESS;
}

int weft_comm_get_info_impl(weft_comm_t *comm, MPI_Info *info_used)
{
    weft_info_t *copy = comm->info ? weft_info_clone(comm->info) : weft_info_new();

    if (copy == NULL) {
        return no_mem("an info object");
    }
    *info_used = (MPI_Info)weft_object_handle(copy);
    return MPI_SUCCESS;
}

int weft_comm_test_inter_impl(weft_comm_t *comm, int *flag)
{
    *flag = comm->is_inter;
    return MPI_SUCCESS;
}

int weft_comm_remote_size_impl(weft_comm_t *comm, int *size)
{
    if (!comm->is_inter) {
        return weft_comm_arg_error(MPI_ERR_COMM, "comm", "not an intercommunicator");
    }
    *size = comm->remote_group->size;
    return MPI_SUCCESS;
}

int weft_comm_remote_group_impl(weft_comm_t *comm, MPI_Group *group)
{
    if (!comm->is_inter) {
        return weft_comm_arg_error(MPI_ERR_COMM, "comm", "not an intercommunicator");
    }
    weft_group_retain(comm->remote_group);
    *group = (MPI_Group)weft_object_handle(comm->remote_group);
    return MPI_SUCCESS;
}

int weft_comm_group_impl(weft_comm_t *comm, MPI_Group *group)
{
    weft_group_retain(comm->group);
    *group = (MPI_Group)weft_object_handle(comm->group);
    return MPI_SUCCESS;
}

int weft_comm_first_lost(const weft_comm_t *comm)
{
    for (int i = 0; weft_dev.nfailed && i < comm->peer_size; i++) {
        if (weft_peer(comm->peer_world[i])->failed) {
            return i;
        }
    }
    return -1;
}
