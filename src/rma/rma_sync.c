/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * RMA synchronisation: fence, post/start/complete/wait/test, lock/unlock,
 * lock_all/unlock_all, the flush family and Win_sync, on the window's
 * shared control segment. Operations complete inside their call, so ending
 * an access epoch needs only a memory fence plus the synchronisation itself;
 * passive-target epochs touch only the target's lock word.
 */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/progress.h"
#include "rma_internal.h"
#include "util/fence.h"

int rma_wait_idle(weft_win_t *win, weft_wait_t *w)
{
    int lost = weft_comm_first_lost(win->comm);

    if (lost >= 0) {
        return weft_dev_lost_error(win->comm->peer_world[lost], lost);
    }
    weft_wait_step(w);
    return MPI_SUCCESS;
}

static inline uint32_t load_acq(const uint32_t *p)
{
    return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

/* Short critical sections (accumulate, attach table): spin, then yield so a
 * descheduled holder on a shared core gets to run. */
void rma_spin_lock_wait(uint32_t *word)
{
    unsigned spins = 0;

    do {
        while (__atomic_load_n(word, __ATOMIC_RELAXED) != 0) {
            if (++spins > 64) {
                sched_yield();
            } else {
                weft_cpu_relax();
            }
        }
    } while (__atomic_exchange_n(word, 1u, __ATOMIC_ACQUIRE) != 0);
}

/* Node barrier over the control segment (all window ranks share it). */
int rma_barrier(weft_win_t *win)
{
    rma_seg_hdr_t *h   = win->hdr_ctl;
    uint32_t       gen = load_acq(&h->bar_gen);

    if (__atomic_add_fetch(&h->bar_count, 1u, __ATOMIC_ACQ_REL) == (uint32_t)win->size) {
        __atomic_store_n(&h->bar_count, 0u, __ATOMIC_RELAXED);
        __atomic_add_fetch(&h->bar_gen, 1u, __ATOMIC_RELEASE);
        return MPI_SUCCESS;
    }
    RMA_WAIT_UNTIL(win, load_acq(&h->bar_gen) != gen);
    return MPI_SUCCESS;
}

static int in_list(const int *ranks, int n, int r)
{
    for (int i = 0; i < n; i++) {
        if (ranks[i] == r) {
            return 1;
        }
    }
    return 0;
}

int rma_check_epoch_group(weft_win_t *win, int rank, const char *what)
{
    if (win->start_ranks != NULL && in_list(win->start_ranks, win->nstart, rank)) {
        return MPI_SUCCESS;
    }
    return weft_error(MPI_ERR_RMA_SYNC, "%s to rank %d outside an access epoch to it", what, rank);
}

static int check_rank(weft_win_t *win, int rank)
{
    if (rank < 0 || rank >= win->size) {
        return weft_error(MPI_ERR_RANK, "rank %d is out of range (window has %d ranks)", rank,
                          win->size);
    }
    return MPI_SUCCESS;
}

static int passive_active(const weft_win_t *win)
{
    return win->lock_all || win->nlocks > 0;
}

/* ---- fence ------------------------------------------------------------------------- */

int weft_win_fence_impl(int assert, weft_win_t *win)
{
    int rc;

    if (passive_active(win) || win->start_ranks || win->post_ranks) {
        return weft_error(MPI_ERR_RMA_SYNC, "fence inside a %s epoch",
                          passive_active(win) ? "passive-target" : "PSCW");
    }
    if ((rc = rma_net_quiet(win)) != MPI_SUCCESS) {
        return rc;
    }
    weft_full_fence();
    /* Even with MPI_MODE_NOPRECEDE the barrier orders the target's own
     * stores before the next epoch's accesses. */
    if (win->am) {
        if ((rc = rma_am_barrier(win)) != MPI_SUCCESS) {
            return rc;
        }
    } else if ((rc = rma_barrier(win)) != MPI_SUCCESS) {
        return rc;
    }
    win->fence_open = !(assert & MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}

/* ---- PSCW -------------------------------------------------------------------------- */

int weft_win_post_impl(weft_group_t *group, int assert, weft_win_t *win)
{
    int *ranks, rc;

    (void)assert;
    if (win->post_ranks != NULL) {
        return weft_error(MPI_ERR_RMA_SYNC, "an exposure epoch (MPI_Win_post) is already open");
    }
    if (passive_active(win)) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_post inside a passive-target epoch");
    }
    if ((rc = rma_ranks_of_group(win, group, &ranks)) != MPI_SUCCESS) {
        return rc;
    }
    weft_full_fence();
    if (win->am && (rc = rma_am_post(win, ranks, group->size)) != MPI_SUCCESS) {
        free(ranks);
        return rc;
    }
    for (int i = 0; i < group->size && !win->am; i++) {
        __atomic_add_fetch(&win->posted[(size_t)win->rank * (size_t)win->size + (size_t)ranks[i]],
                           1u, __ATOMIC_RELEASE);
    }
    win->fence_open = 0;
    win->post_ranks = ranks ? ranks : malloc(sizeof(int));
    win->npost      = group->size;
    return win->post_ranks ? MPI_SUCCESS : weft_error(MPI_ERR_NO_MEM, "no memory");
}

int weft_win_start_impl(weft_group_t *group, int assert, weft_win_t *win)
{
    int *ranks, rc;

    if (win->start_ranks != NULL) {
        return weft_error(MPI_ERR_RMA_SYNC, "an access epoch (MPI_Win_start) is already open");
    }
    if (passive_active(win)) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_start inside a passive-target epoch");
    }
    if ((rc = rma_ranks_of_group(win, group, &ranks)) != MPI_SUCCESS) {
        return rc;
    }
    /* Wait for each target's post (MPI_MODE_NOCHECK: the user guarantees it
     * happened, but the counter still has to be consumed). */
    (void)assert;
    if (win->am && (rc = rma_am_start(win, ranks, group->size)) != MPI_SUCCESS) {
        free(ranks);
        return rc;
    }
    for (int i = 0; i < group->size && !win->am; i++) {
        int       t = ranks[i];
        uint32_t *p = &win->posted[(size_t)t * (size_t)win->size + (size_t)win->rank];
        uint32_t  want = win->started[t] + 1;
        RMA_WAIT_UNTIL(win, (int32_t)(load_acq(p) - want) >= 0);
        win->started[t] = want;
    }
    win->fence_open  = 0;
    win->start_ranks = ranks ? ranks : malloc(sizeof(int));
    win->nstart      = group->size;
    return win->start_ranks ? MPI_SUCCESS : weft_error(MPI_ERR_NO_MEM, "no memory");
}

int weft_win_complete_impl(weft_win_t *win)
{
    if (win->start_ranks == NULL) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_complete without MPI_Win_start");
    }
    int qrc = rma_net_quiet(win);
    if (qrc != MPI_SUCCESS) {
        return qrc;
    }
    weft_full_fence();
    if (win->am) {
        int rc = rma_am_complete(win, win->start_ranks, win->nstart);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    for (int i = 0; i < win->nstart && !win->am; i++) {
        int t = win->start_ranks[i];
        __atomic_add_fetch(&win->done[(size_t)t * (size_t)win->size + (size_t)win->rank], 1u,
                           __ATOMIC_RELEASE);
    }
    free(win->start_ranks);
    win->start_ranks = NULL;
    win->nstart      = 0;
    return MPI_SUCCESS;
}

static int all_completed(weft_win_t *win)
{
    for (int i = 0; i < win->npost; i++) {
        int       o = win->post_ranks[i];
        uint32_t *d = &win->done[(size_t)win->rank * (size_t)win->size + (size_t)o];
        if ((int32_t)(load_acq(d) - (win->completed[o] + 1)) < 0) {
            return 0;
        }
    }
    return 1;
}

static void end_exposure(weft_win_t *win)
{
    for (int i = 0; i < win->npost; i++) {
        win->completed[win->post_ranks[i]]++;
    }
    free(win->post_ranks);
    win->post_ranks = NULL;
    win->npost      = 0;
}

int weft_win_wait_impl(weft_win_t *win)
{
    if (win->post_ranks == NULL) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_wait without MPI_Win_post");
    }
    if (win->am) {
        rma_am_wait(win, win->npost, 1);
    } else {
        RMA_WAIT_UNTIL(win, all_completed(win));
    }
    end_exposure(win);
    return MPI_SUCCESS;
}

int weft_win_test_impl(weft_win_t *win, int *flag)
{
    if (win->post_ranks == NULL) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_test without MPI_Win_post");
    }
    weft_progress_poll();
    *flag = win->am ? rma_am_wait(win, win->npost, 0) : all_completed(win);
    if (*flag) {
        end_exposure(win);
    }
    return MPI_SUCCESS;
}

/* ---- passive target ---------------------------------------------------------------- */

static int try_lock(uint32_t *word, int exclusive)
{
    uint32_t v = __atomic_load_n(word, __ATOMIC_RELAXED);

    if (exclusive) {
        return v == 0 && __atomic_compare_exchange_n(word, &v, RMA_LOCK_WRITER, 0,
                                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
    }
    return !(v & RMA_LOCK_WRITER) &&
           __atomic_compare_exchange_n(word, &v, v + 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static void release_lock(uint32_t *word, int exclusive)
{
    if (exclusive) {
        __atomic_store_n(word, 0u, __ATOMIC_RELEASE);
    } else {
        __atomic_sub_fetch(word, 1u, __ATOMIC_RELEASE);
    }
}

int weft_win_lock_impl(int lock_type, int rank, int assert, weft_win_t *win)
{
    int rc, excl;

    if (lock_type != MPI_LOCK_EXCLUSIVE && lock_type != MPI_LOCK_SHARED) {
        return weft_error(MPI_ERR_LOCKTYPE, "lock_type %d is neither MPI_LOCK_EXCLUSIVE nor "
                          "MPI_LOCK_SHARED", lock_type);
    }
    if (rank == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    if ((rc = check_rank(win, rank)) != MPI_SUCCESS) {
        return rc;
    }
    if (win->no_locks) {
        return weft_error(MPI_ERR_RMA_CONFLICT, "the window was created with no_locks=true");
    }
    if (win->lock_all) {
        return weft_error(MPI_ERR_RMA_CONFLICT, "MPI_Win_lock inside MPI_Win_lock_all");
    }
    if (win->lock_held[rank] != RMA_LOCK_NONE) {
        return weft_error(MPI_ERR_RMA_SYNC, "rank %d is already locked by this process", rank);
    }
    if (win->start_ranks || win->post_ranks) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_lock inside a PSCW epoch");
    }
    excl = lock_type == MPI_LOCK_EXCLUSIVE;
    if (!(assert & MPI_MODE_NOCHECK) && win->am) {
        if ((rc = rma_am_lock(win, rank, excl)) != MPI_SUCCESS) {
            return rc;
        }
    } else if (!(assert & MPI_MODE_NOCHECK)) {
        uint32_t *word = &win->ctl[rank].lock;
        RMA_WAIT_UNTIL(win, try_lock(word, excl));
    }
    win->lock_held[rank]    = excl ? RMA_LOCK_HELD_EXCLUSIVE : RMA_LOCK_HELD_SHARED;
    win->lock_nocheck[rank] = (assert & MPI_MODE_NOCHECK) != 0;
    win->nlocks++;
    return MPI_SUCCESS;
}

int weft_win_unlock_impl(int rank, weft_win_t *win)
{
    int rc;

    if (rank == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    if ((rc = check_rank(win, rank)) != MPI_SUCCESS) {
        return rc;
    }
    if (win->lock_held[rank] == RMA_LOCK_NONE) {
        return weft_error(MPI_ERR_RMA_SYNC, "rank %d is not locked by this process", rank);
    }
    if ((rc = rma_net_quiet(win)) != MPI_SUCCESS) {
        return rc;
    }
    weft_full_fence();
    if (!win->lock_nocheck[rank] && win->am) {
        rc = rma_am_unlock(win, rank, win->lock_held[rank] == RMA_LOCK_HELD_EXCLUSIVE);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    } else if (!win->lock_nocheck[rank]) {
        release_lock(&win->ctl[rank].lock, win->lock_held[rank] == RMA_LOCK_HELD_EXCLUSIVE);
    }
    win->lock_held[rank] = RMA_LOCK_NONE;
    win->nlocks--;
    return MPI_SUCCESS;
}

int weft_win_lock_all_impl(int assert, weft_win_t *win)
{
    if (win->no_locks) {
        return weft_error(MPI_ERR_RMA_CONFLICT, "the window was created with no_locks=true");
    }
    if (win->lock_all) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all is already active");
    }
    if (win->nlocks > 0) {
        return weft_error(MPI_ERR_RMA_CONFLICT, "MPI_Win_lock_all while holding MPI_Win_lock");
    }
    if (win->start_ranks || win->post_ranks) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_lock_all inside a PSCW epoch");
    }
    win->lock_all_nocheck = (assert & MPI_MODE_NOCHECK) != 0;
    if (!win->lock_all_nocheck) {
        for (int r = 0; r < win->size; r++) {
            uint32_t *word = &win->ctl[r].lock;
            if (win->am) {
                int rc = rma_am_lock(win, r, 0);
                if (rc != MPI_SUCCESS) {
                    return rc;
                }
            } else {
                RMA_WAIT_UNTIL(win, try_lock(word, 0));
            }
        }
    }
    win->lock_all = 1;
    return MPI_SUCCESS;
}

int weft_win_unlock_all_impl(weft_win_t *win)
{
    if (!win->lock_all) {
        return weft_error(MPI_ERR_RMA_SYNC, "MPI_Win_unlock_all without MPI_Win_lock_all");
    }
    int qrc = rma_net_quiet(win);
    if (qrc != MPI_SUCCESS) {
        return qrc;
    }
    weft_full_fence();
    if (!win->lock_all_nocheck) {
        for (int r = 0; r < win->size; r++) {
            if (win->am) {
                int rc = rma_am_unlock(win, r, 0);
                if (rc != MPI_SUCCESS) {
                    return rc;
                }
            } else {
                release_lock(&win->ctl[r].lock, 0);
            }
        }
    }
    win->lock_all = 0;
    return MPI_SUCCESS;
}

/* ---- flush and sync: operations are complete at return (netmod RMA: at
 * rma_net_quiet); order the memory ----------------------------------------------- */

static int flush_check(weft_win_t *win, int rank)
{
    int rc;

    if (rank == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    if ((rc = check_rank(win, rank)) != MPI_SUCCESS) {
        return rc;
    }
    if (!win->lock_all && win->lock_held[rank] == RMA_LOCK_NONE) {
        return weft_error(MPI_ERR_RMA_SYNC, "flush of rank %d outside a passive-target epoch "
                          "to it", rank);
    }
    weft_full_fence();
    return rma_net_quiet(win);
}

static int flush_all_check(weft_win_t *win)
{
    if (!passive_active(win)) {
        return weft_error(MPI_ERR_RMA_SYNC, "flush outside a passive-target epoch");
    }
    weft_full_fence();
    return rma_net_quiet(win);
}

int weft_win_flush_impl(int rank, weft_win_t *win)
{
    return flush_check(win, rank);
}

int weft_win_flush_local_impl(int rank, weft_win_t *win)
{
    return flush_check(win, rank);
}

int weft_win_flush_all_impl(weft_win_t *win)
{
    return flush_all_check(win);
}

int weft_win_flush_local_all_impl(weft_win_t *win)
{
    return flush_all_check(win);
}

int weft_win_sync_impl(weft_win_t *win)
{
    (void)win;
    weft_full_fence();
    return MPI_SUCCESS;
}
