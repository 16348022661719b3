/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Window objects: creation in the four flavours, the shared control segment,
 * free, attributes, info hints, names, groups, shared_query, attach/detach.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "api_impl.h"
#include "core/attr.h"
#include "core/comm.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/info.h"
#include "core/objpool.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/runtime.h"
#include "rma_internal.h"
#include "util/tunables.h"

#define RMA_TAG_EXCHANGE 1
#define RMA_LINE         64

static weft_objpool_t win_pool = WEFT_OBJPOOL_INIT(weft_win_t);
static unsigned       win_serial; /* distinguishes segment names of one process */

/* A word every process can read of its peers: the CMA probe. */
static volatile uint64_t rma_cma_probe_word = 0x5745465452u;

/* ---- hooks used by core (attributes, error handlers) ----------------------------- */

struct weft_attr_entry **weft_win_attr_list(weft_win_t *win)
{
    return &win->attrs;
}

int weft_win_predefined_attr(weft_win_t *win, int keyval, void **value)
{
    switch (keyval) {
    case MPI_WIN_BASE:
        *value = win->base;
        return 1;
    case MPI_WIN_SIZE:
        *value = &win->win_size;
        return 1;
    case MPI_WIN_DISP_UNIT:
        *value = &win->disp_unit_int;
        return 1;
    case MPI_WIN_CREATE_FLAVOR:
        *value = &win->flavor;
        return 1;
    case MPI_WIN_MODEL:
        *value = &win->model;
        return 1;
    default:
        return 0;
    }
}

weft_errhandler_t **weft_win_errhandler_slot(weft_win_t *win)
{
    return &win->errhandler;
}

/* ---- small collectives over the window's private communicator -------------------- */

/* Everyone's len bytes into all[] (rank order): gather at 0, send back. Only
 * used while creating windows, so simple beats fast. */
int rma_allgather(weft_win_t *win, const void *mine, size_t len, void *all)
{
    weft_comm_t *c = win->comm;
    int          rc = MPI_SUCCESS;

    memcpy((char *)all + (size_t)c->rank * len, mine, len);
    if (c->rank == 0) {
        for (int r = 1; r < c->size && rc == MPI_SUCCESS; r++) {
            rc = weft_recv_bytes((char *)all + (size_t)r * len, len, r, RMA_TAG_EXCHANGE, c);
        }
        for (int r = 1; r < c->size && rc == MPI_SUCCESS; r++) {
            rc = weft_send_bytes(all, len * (size_t)c->size, r, RMA_TAG_EXCHANGE, c);
        }
    } else {
        rc = weft_send_bytes(mine, len, 0, RMA_TAG_EXCHANGE, c);
        if (rc == MPI_SUCCESS) {
            rc = weft_recv_bytes(all, len * (size_t)c->size, 0, RMA_TAG_EXCHANGE, c);
        }
    }
    return rc;
}

/* Window-rank of every member of group (MPI_ERR_GROUP if one is not in the
 * window). *ranks_p is malloc'd (NULL for an empty group). */
int rma_ranks_of_group(weft_win_t *win, const weft_group_t *group, int **ranks_p)
{
    int *ranks = NULL;

    *ranks_p = NULL;
    if (group->size == 0) {
        return MPI_SUCCESS;
    }
    ranks = malloc(sizeof(int) * (size_t)group->size);
    if (ranks == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a group of %d", group->size);
    }
    for (int i = 0; i < group->size; i++) {
        ranks[i] = weft_group_rank_of_world(win->group, group->world_ranks[i]);
        if (ranks[i] == MPI_UNDEFINED) {
            free(ranks);
            return weft_error(MPI_ERR_GROUP, "group member %d is not in the window", i);
        }
    }
    *ranks_p = ranks;
    return MPI_SUCCESS;
}

/* ---- info hints -------------------------------------------------------------------- */

static const char *const hint_keys[] = {"no_locks", "accumulate_ordering", "accumulate_ops",
                                        "same_size", "same_disp_unit", "alloc_shared_noncontig"};
static const char *const hint_defaults[] = {"false", "rar,raw,war,waw", "same_op_no_op",
                                            "false", "false", "false"};

static int info_true(const weft_info_t *info, const char *key)
{
    const char *v = info ? weft_info_lookup(info, key) : NULL;
    return v != NULL && strcmp(v, "true") == 0;
}

/* Record the hints in use (user values for the known keys, else defaults). */
static int apply_info(weft_win_t *win, const weft_info_t *user)
{
    weft_info_t *in_use = weft_info_new();

    if (in_use == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the window's info");
    }
    for (size_t i = 0; i < sizeof(hint_keys) / sizeof(hint_keys[0]); i++) {
        const char *v = user ? weft_info_lookup(user, hint_keys[i]) : NULL;
        if (v == NULL && win->info) {
            v = weft_info_lookup(win->info, hint_keys[i]);
        }
        if (weft_info_put(in_use, hint_keys[i], v ? v : hint_defaults[i]) != MPI_SUCCESS) {
            weft_info_release(in_use);
            return weft_error(MPI_ERR_NO_MEM, "no memory for the window's info");
        }
    }
    if (win->info) {
        weft_info_release(win->info);
    }
    win->info        = in_use;
    win->no_locks    = info_true(in_use, "no_locks");
    win->acc_same_op = strcmp(weft_info_lookup(in_use, "accumulate_ops"), "same_op") == 0;
    return MPI_SUCCESS;
}

/* ---- the control segment ----------------------------------------------------------- */

static size_t round_up(size_t n, size_t a)
{
    return (n + a - 1) / a * a;
}

typedef struct {
    MPI_Aint size, disp_unit;
    uint64_t addr;      /* base in the owner's address space */
    uint64_t probe;     /* &rma_cma_probe_word in the owner */
    int32_t  pid;
    int32_t  node;
} rank_info_t;

/* Map the node segment (rank 0 creates and, once all have mapped it,
 * unlinks it: nothing is left in /dev/shm even if the job dies later). */
static int map_segment(weft_win_t *win, size_t bytes)
{
    char name[400];
    int      fd = -1, ok = 1, *oks = NULL, rc = MPI_SUCCESS;
    void    *p  = MAP_FAILED;
    uint32_t key[2], (*keys)[2];

    oks = malloc(sizeof(int) * (size_t)win->size);
    keys = malloc(sizeof(*keys) * (size_t)win->size);
    if (oks == NULL || keys == NULL) {
        free(oks);
        free(keys);
        return weft_error(MPI_ERR_NO_MEM, "no memory for window setup");
    }
    /* The name comes from rank 0: its job rank and window serial make it
     * unique within the job. */
    key[0] = (uint32_t)weft_runtime.pmi.rank;
    key[1] = win_serial++;
    rc     = rma_allgather(win, key, sizeof(key), keys);
    snprintf(name, sizeof(name), "/weft-%s-w%u-%u-%u", weft_runtime.jobid, keys[0][0],
             keys[0][1], win->comm->context_id);
    free(keys);
    if (rc == MPI_SUCCESS && win->rank == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        ok = fd >= 0 && ftruncate(fd, (off_t)bytes) == 0;
    }
    if (rc == MPI_SUCCESS) {
        rc = rma_allgather(win, &ok, sizeof(ok), oks);
    }
    if (rc == MPI_SUCCESS && oks[0]) {
        if (win->rank != 0) {
            fd = shm_open(name, O_RDWR, 0600);
        }
        if (fd >= 0) {
            p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        }
        ok = p != MAP_FAILED;
        rc = rma_allgather(win, &ok, sizeof(ok), oks);
    }
    if (win->rank == 0 && fd >= 0) {
        shm_unlink(name);
    }
    if (fd >= 0) {
        close(fd);
    }
    for (int r = 0; rc == MPI_SUCCESS && r < win->size; r++) {
        if (!oks[r]) {
            rc = weft_error(MPI_ERR_NO_MEM, "rank %d could not map the window's shared memory "
                            "(%zu bytes)", r, bytes);
        }
    }
    free(oks);
    if (rc != MPI_SUCCESS) {
        if (p != MAP_FAILED) {
            munmap(p, bytes);
        }
        return rc;
    }
    win->seg       = p;
    win->seg_bytes = bytes;
    return MPI_SUCCESS;
}

/* Can this rank read every peer's memory with process_vm_readv? */
static int cma_probe(const rank_info_t *infos, int n, int me)
{
    if (!weft_tunables.SMP_USE_CMA) {
        return 0;
    }
    for (int r = 0; r < n; r++) {
        uint64_t     v = 0;
        struct iovec l = {&v, sizeof(v)}, rm = {(void *)(uintptr_t)infos[r].probe, sizeof(v)};
        if (r == me) {
            continue;
        }
        if (process_vm_readv(infos[r].pid, &l, 1, &rm, 1, 0) != (ssize_t)sizeof(v) ||
            v != rma_cma_probe_word) {
            return 0;
        }
    }
    return 1;
}

static void win_destroy(weft_win_t *win)
{
    int orphans;

    if (win->am_waiters) {
        rma_am_win_fini(win);
    }
    orphans = rma_net_win_fini(win);
    if (win->seg) {
        munmap(win->seg, win->seg_bytes);
    }
    if (win->comm) {
        weft_comm_release(win->comm);
    }
    if (win->group) {
        weft_group_release(win->group);
    }
    if (win->info) {
        weft_info_release(win->info);
    }
    if (win->errhandler) {
        weft_errhandler_release(win->errhandler);
    }
    free(win->targets);
    free(win->lock_held);
    free(win->lock_nocheck);
    free(win->started);
    free(win->completed);
    free(win->start_ranks);
    free(win->post_ranks);
    if (orphans) {
        /* Operations to a lost target never completed; a late completion
         * still counts into win->net_cnt, so the object is not reused. */
        win->hdr.magic = WEFT_MAGIC_FREED;
        return;
    }
    weft_objpool_free(&win_pool, win);
}

int rma_my_node(void)
{
    return weft_tunables.RMA_FAKE_PPN > 0 ? weft_runtime.pmi.rank / weft_tunables.RMA_FAKE_PPN
                                          : weft_runtime.pmi.node_id;
}

static int win_create(int flavor, void *base, MPI_Aint size, MPI_Aint disp_unit,
                      weft_info_t *info, weft_comm_t *comm, void *baseptr, MPI_Win *win_out)
{
    weft_win_t  *win;
    rank_info_t  mine = {0}, *infos = NULL;
    int          rc, n, local = 1, cma = 1, *flags = NULL, noncontig;
    size_t       off, ctl_off, attach_off, posted_off, done_off, data_off, page;
    size_t      *data_at = NULL;

    if (disp_unit <= 0 && flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        return weft_error(MPI_ERR_DISP, "disp_unit %lld must be positive", (long long)disp_unit);
    }
    if (size > 0 && base == NULL && flavor == MPI_WIN_FLAVOR_CREATE) {
        return weft_error(MPI_ERR_ARG, "base is NULL for a window of %lld bytes", (long long)size);
    }
    win = weft_objpool_alloc(&win_pool);
    if (win == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a window");
    }
    weft_object_init(&win->hdr, WEFT_KIND_WIN, 0);
    win->flavor        = flavor;
    win->model         = MPI_WIN_UNIFIED;
    win->disp_unit     = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 1 : disp_unit;
    win->disp_unit_int = (int)win->disp_unit;
    win->win_size      = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    win->base          = flavor == MPI_WIN_FLAVOR_DYNAMIC ? MPI_BOTTOM : base;
    win->errhandler    = &weft_errhandler_fatal;
    weft_errhandler_retain(win->errhandler);

    rc = weft_comm_split_raw(comm, 0, comm->rank, &win->comm);
    if (rc != MPI_SUCCESS) {
        win->comm = NULL;
        goto fail;
    }
    /* its only ANY_SOURCE receive is the active-message service's, which
     * must go on serving the survivors when a member is lost */
    win->comm->any_source_outlives_losses = 1;
    win->group = win->comm->group;
    weft_group_retain(win->group);
    win->rank = win->comm->rank;
    win->size = n = win->comm->size;
    if ((rc = apply_info(win, info)) != MPI_SUCCESS) {
        goto fail;
    }
    noncontig = info_true(win->info, "alloc_shared_noncontig");

    infos   = calloc((size_t)n, sizeof(*infos));
    flags   = calloc((size_t)n, sizeof(int));
    data_at = calloc((size_t)n, sizeof(size_t));
    win->targets      = calloc((size_t)n, sizeof(rma_target_t));
    win->lock_held    = calloc((size_t)n, 1);
    win->lock_nocheck = calloc((size_t)n, 1);
    win->started      = calloc((size_t)n, sizeof(uint32_t));
    win->completed    = calloc((size_t)n, sizeof(uint32_t));
    if (!infos || !flags || !data_at || !win->targets || !win->lock_held || !win->lock_nocheck ||
        !win->started || !win->completed) {
        rc = weft_error(MPI_ERR_NO_MEM, "no memory for a window of %d ranks", n);
        goto fail;
    }
    mine.size      = flavor == MPI_WIN_FLAVOR_DYNAMIC ? 0 : size;
    mine.disp_unit = win->disp_unit;
    mine.addr      = (uint64_t)(uintptr_t)base;
    mine.probe     = (uint64_t)(uintptr_t)&rma_cma_probe_word;
    mine.pid       = (int32_t)getpid();
    mine.node      = rma_my_node();
    if ((rc = rma_allgather(win, &mine, sizeof(mine), infos)) != MPI_SUCCESS) {
        goto fail;
    }
    for (int r = 0; r < n; r++) {
        local &= infos[r].node == mine.node;
    }
    if (flavor == MPI_WIN_FLAVOR_CREATE || flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        int ok = local ? cma_probe(infos, n, win->rank) : 0;
        if ((rc = rma_allgather(win, &ok, sizeof(ok), flags)) != MPI_SUCCESS) {
            goto fail;
        }
        for (int r = 0; r < n; r++) {
            cma &= flags[r];
        }
    }
    if (flavor == MPI_WIN_FLAVOR_SHARED && !local) {
        rc = weft_error(MPI_ERR_RMA_SHARED, "MPI_Win_allocate_shared needs every rank of comm "
                        "on one node");
        goto fail;
    }
    /* Direct access needs every rank on this node (and CMA for memory the
     * user owns); otherwise, or when disabled, requests go by messages. */
    win->am         = !local || !cma || !weft_tunables.USE_SHM_ONE_SIDED;
    win->seg_shared = local;

    /* Segment layout: header, per-rank control, attach tables, PSCW counters,
     * then (allocate flavours) each rank's memory. */
    page            = (size_t)sysconf(_SC_PAGESIZE);
    win->attach_max = flavor == MPI_WIN_FLAVOR_DYNAMIC ? (int)weft_tunables.RMA_ATTACH_MAX : 0;
    ctl_off         = RMA_LINE;
    attach_off      = ctl_off + (size_t)n * sizeof(rma_rank_ctl_t);
    posted_off      = round_up(attach_off + (size_t)n * (size_t)win->attach_max *
                               sizeof(rma_region_t), RMA_LINE);
    done_off        = round_up(posted_off + (size_t)n * (size_t)n * sizeof(uint32_t), RMA_LINE);
    data_off        = round_up(done_off + (size_t)n * (size_t)n * sizeof(uint32_t), page);
    off             = data_off;
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
        for (int r = 0; r < n; r++) {
            if (local || r == win->rank) { /* across nodes: only this rank's memory */
                data_at[r] = off;
                off = round_up(off + (size_t)infos[r].size, noncontig ? page : RMA_LINE);
            }
        }
    }
    if (local) {
        rc = map_segment(win, off > data_off ? off : data_off);
    } else {
        /* Nothing to share: a private copy of the layout (own attach table
         * and memory). */
        win->seg_bytes = off > data_off ? off : data_off;
        win->seg       = mmap(NULL, win->seg_bytes, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (win->seg == MAP_FAILED) {
            win->seg = NULL;
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a window of %zu bytes", win->seg_bytes);
        }
    }
    if (rc != MPI_SUCCESS) {
        goto fail;
    }
    win->hdr_ctl = (rma_seg_hdr_t *)win->seg;
    win->ctl     = (rma_rank_ctl_t *)((char *)win->seg + ctl_off);
    win->attach  = (rma_region_t *)((char *)win->seg + attach_off);
    win->posted  = (uint32_t *)((char *)win->seg + posted_off);
    win->done    = (uint32_t *)((char *)win->seg + done_off);
    for (int r = 0; r < n; r++) {
        rma_target_t *t = &win->targets[r];
        t->size      = infos[r].size;
        t->disp_unit = infos[r].disp_unit;
        t->pid       = infos[r].pid;
        t->direct    = 1;
        if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
            t->addr = (char *)win->seg + data_at[r];
        } else if (flavor == MPI_WIN_FLAVOR_CREATE) {
            t->addr   = (char *)(uintptr_t)infos[r].addr;
            t->direct = r == win->rank;
        } else {
            t->addr   = NULL;
            t->direct = r == win->rank;
        }
    }
    if (flavor == MPI_WIN_FLAVOR_ALLOCATE || flavor == MPI_WIN_FLAVOR_SHARED) {
        win->base = size > 0 ? win->targets[win->rank].addr : NULL;
        *(void **)baseptr = win->base;
    }
    if (win->am && ((rc = rma_am_win_init(win)) != MPI_SUCCESS ||
                    (rc = rma_net_win_init(win)) != MPI_SUCCESS)) {
        goto fail;
    }
    free(infos);
    free(flags);
    free(data_at);
    *win_out = (MPI_Win)win;
    return MPI_SUCCESS;

fail:
    free(infos);
    free(flags);
    free(data_at);
    win_destroy(win);
    return rc;
}

int weft_win_create_impl(void *base, MPI_Aint size, MPI_Aint disp_unit, weft_info_t *info,
                         weft_comm_t *comm, MPI_Win *win)
{
    return win_create(MPI_WIN_FLAVOR_CREATE, base, size, disp_unit, info, comm, NULL, win);
}

int weft_win_allocate_impl(MPI_Aint size, MPI_Aint disp_unit, weft_info_t *info,
                           weft_comm_t *comm, void *baseptr, MPI_Win *win)
{
    return win_create(MPI_WIN_FLAVOR_ALLOCATE, NULL, size, disp_unit, info, comm, baseptr, win);
}

int weft_win_allocate_shared_impl(MPI_Aint size, MPI_Aint disp_unit, weft_info_t *info,
                                  weft_comm_t *comm, void *baseptr, MPI_Win *win)
{
    return win_create(MPI_WIN_FLAVOR_SHARED, NULL, size, disp_unit, info, comm, baseptr, win);
}

int weft_win_create_dynamic_impl(weft_info_t *info, weft_comm_t *comm, MPI_Win *win)
{
    return win_create(MPI_WIN_FLAVOR_DYNAMIC, NULL, 0, 1, info, comm, NULL, win);
}

/* Barrier that also tells everyone whether any rank reported an error: a
 * rank that cannot free the window does not leave the others waiting. */
static int barrier_any_error(weft_win_t *win, int err)
{
    int *all = malloc(sizeof(int) * (size_t)win->size), any = 0, rc;

    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    rc = rma_allgather(win, &err, sizeof(err), all);
    for (int r = 0; rc == MPI_SUCCESS && r < win->size; r++) {
        if (all[r] && !any) {
            any = all[r];
        }
    }
    free(all);
    return rc != MPI_SUCCESS ? rc : any;
}

int weft_win_free_impl(weft_win_t *win)
{
    int   err = 0, rc;
    void *handle = weft_object_handle(win);

    if (win->nlocks || win->lock_all || win->start_ranks || win->post_ranks) {
        err = 1;
    }
    if (!err && (rc = rma_net_quiet(win)) != MPI_SUCCESS) {
        return rc;
    }
    /* Nobody unmaps while a peer may still be in an operation on it. */
    rc = barrier_any_error(win, err);
    if (rc != MPI_SUCCESS) {
        if (rc == 1) {
            return err ? weft_error(MPI_ERR_RMA_SYNC, "the window has a pending %s epoch",
                                    win->nlocks || win->lock_all ? "passive-target" : "PSCW")
                       : weft_error(MPI_ERR_RMA_SYNC, "another rank has a pending epoch on "
                                    "the window; it is not freed");
        }
        return rc;
    }
    rc = weft_attr_delete_all(WEFT_ATTR_WIN, handle, &win->attrs);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    win_destroy(win);
    return MPI_SUCCESS;
}

/* ---- queries ------------------------------------------------------------------------ */

int weft_win_get_group_impl(weft_win_t *win, MPI_Group *group)
{
    weft_group_retain(win->group);
    *group = weft_group_handle_out(win->group);
    return MPI_SUCCESS;
}

int weft_win_get_info_impl(weft_win_t *win, MPI_Info *info_used)
{
    weft_info_t *copy = weft_info_clone(win->info);

    if (copy == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an info object");
    }
    *info_used = (MPI_Info)weft_object_handle(copy);
    return MPI_SUCCESS;
}

int weft_win_set_info_impl(weft_win_t *win, weft_info_t *info)
{
    return apply_info(win, info);
}

int weft_win_set_name_impl(weft_win_t *win, const char *win_name)
{
    snprintf(win->name, sizeof(win->name), "%s", win_name);
    return MPI_SUCCESS;
}

int weft_win_get_name_impl(weft_win_t *win, char *win_name, int *resultlen)
{
    /* MPI_WIN_NULL has a name too, like MPI_COMM_NULL (mpi4py checks it). */
    snprintf(win_name, MPI_MAX_OBJECT_NAME, "%s", win ? win->name : "MPI_WIN_NULL");
    *resultlen = (int)strlen(win_name);
    return MPI_SUCCESS;
}

/* Memory of rank r that this process can load/store: all of an allocated
 * window's (one segment), only its own for create; none for dynamic. */
static int mapped_here(const weft_win_t *win, int r)
{
    if (win->flavor == MPI_WIN_FLAVOR_SHARED || win->flavor == MPI_WIN_FLAVOR_ALLOCATE) {
        return win->seg_shared || r == win->rank;
    }
    return win->flavor == MPI_WIN_FLAVOR_CREATE && r == win->rank;
}

static int shared_query(weft_win_t *win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                        void *baseptr)
{
    if (rank != MPI_PROC_NULL && (rank < 0 || rank >= win->size)) {
        return weft_error(MPI_ERR_RANK, "rank %d is out of range (window has %d ranks)", rank,
                          win->size);
    }
    if (rank == MPI_PROC_NULL) {
        /* The lowest rank with a non-empty segment. */
        for (int r = 0; r < win->size && rank == MPI_PROC_NULL; r++) {
            if (win->targets[r].size > 0) {
                rank = r;
            }
        }
    }
    if (rank == MPI_PROC_NULL || !mapped_here(win, rank)) {
        /* Nothing this process can address directly (MPI-4.1: size 0, NULL). */
        *size             = 0;
        *disp_unit        = rank == MPI_PROC_NULL ? win->disp_unit : win->targets[rank].disp_unit;
        *(void **)baseptr = NULL;
        return MPI_SUCCESS;
    }
    *size      = win->targets[rank].size;
    *disp_unit = win->targets[rank].disp_unit;
    *(void **)baseptr = win->targets[rank].size > 0 ? win->targets[rank].addr : NULL;
    return MPI_SUCCESS;
}

int weft_win_shared_query_impl(weft_win_t *win, int rank, MPI_Aint *size, int *disp_unit,
                               void *baseptr)
{
    MPI_Aint du = 0;
    int      rc = shared_query(win, rank, size, &du, baseptr);

    *disp_unit = (int)du;
    return rc;
}

int weft_win_shared_query_c_impl(weft_win_t *win, int rank, MPI_Aint *size, MPI_Aint *disp_unit,
                                 void *baseptr)
{
    return shared_query(win, rank, size, disp_unit, baseptr);
}

/* ---- dynamic windows --------------------------------------------------------------- */

int weft_win_attach_impl(weft_win_t *win, void *base, MPI_Aint size)
{
    rma_rank_ctl_t *me  = &win->ctl[win->rank];
    rma_region_t   *tab = &win->attach[(size_t)win->rank * (size_t)win->attach_max];
    uint64_t        lo = (uint64_t)(uintptr_t)base, hi = lo + (uint64_t)size;
    int             rc = MPI_SUCCESS;

    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        return weft_error(MPI_ERR_RMA_FLAVOR, "MPI_Win_attach needs a dynamic window");
    }
    if (size == 0) {
        return MPI_SUCCESS;
    }
    if (base == NULL) {
        return weft_error(MPI_ERR_ARG, "base is NULL");
    }
    rma_spin_lock(&me->attach_lock);
    for (uint32_t i = 0; i < me->nattach; i++) {
        if (lo < tab[i].base + tab[i].len && tab[i].base < hi) {
            rc = weft_error(MPI_ERR_RMA_ATTACH, "[%p, +%lld) overlaps memory already attached",
                            base, (long long)size);
            break;
        }
    }
    if (rc == MPI_SUCCESS && me->nattach >= (uint32_t)win->attach_max) {
        rc = weft_error(MPI_ERR_RMA_ATTACH, "%d regions already attached (WEFT_RMA_ATTACH_MAX)",
                        win->attach_max);
    }
    if (rc == MPI_SUCCESS) {
        tab[me->nattach].base = lo;
        tab[me->nattach].len  = (uint64_t)size;
        me->nattach++;
    }
    rma_spin_unlock(&me->attach_lock);
    return rc;
}

int weft_win_detach_impl(weft_win_t *win, const void *base)
{
    rma_rank_ctl_t *me  = &win->ctl[win->rank];
    rma_region_t   *tab = &win->attach[(size_t)win->rank * (size_t)win->attach_max];
    int             rc  = MPI_ERR_RMA_ATTACH;

    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        return weft_error(MPI_ERR_RMA_FLAVOR, "MPI_Win_detach needs a dynamic window");
    }
    rma_spin_lock(&me->attach_lock);
    for (uint32_t i = 0; i < me->nattach; i++) {
        if (tab[i].base == (uint64_t)(uintptr_t)base) {
            tab[i] = tab[me->nattach - 1];
            me->nattach--;
            rc = MPI_SUCCESS;
            break;
        }
    }
    rma_spin_unlock(&me->attach_lock);
    if (rc != MPI_SUCCESS) {
        return weft_error(MPI_ERR_RMA_ATTACH, "%p is not the base of an attached region", base);
    }
    return MPI_SUCCESS;
}
