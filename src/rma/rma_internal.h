/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Windows and one-sided operations: state shared by the files of src/rma.
 *
 * A window whose ranks all live on this node has one shared control segment
 * (created by rank 0, mapped by all, unlinked at once). It holds, per rank,
 * the passive-target lock word, the accumulate lock, the dynamic attach
 * table, and the post/complete counters of PSCW; MPI_Win_allocate and
 * allocate_shared windows keep their memory in the same segment. Origins
 * then read and write the target directly (loads/stores, CPU atomics), or
 * through CMA for memory the target passed to MPI_Win_create / attach: the
 * target takes no part in any operation or passive-target epoch.
 * Every operation is complete when its call returns, so flush is a memory
 * fence and accumulates from one origin are ordered.
 */
#ifndef WEFT_RMA_INTERNAL_H
#define WEFT_RMA_INTERNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "core/object.h"
#include "core/progress.h"
#include "core/request.h"
#include "transport/transport.h"

#define RMA_LOCK_WRITER 0x80000000u

/* Per rank, in the control segment (one cache line for the hot words). */
typedef struct {
    uint32_t lock;        /* passive target: RMA_LOCK_WRITER or reader count */
    uint32_t acc_lock;    /* serialises non-atomic accumulates at this target */
    uint32_t attach_lock; /* guards the attach table below */
    uint32_t nattach;
    char     pad[48];
} rma_rank_ctl_t;

typedef struct {
    uint64_t base, len;
} rma_region_t;

typedef struct {
    uint32_t bar_count; /* node barrier (sense by generation) */
    uint32_t bar_gen;
    char     pad[56];
} rma_seg_hdr_t;

/* How an origin reaches one target's memory. */
typedef struct {
    char    *addr;      /* window base: mapped address (direct) or the target's own
                           address (CMA); NULL for dynamic windows */
    MPI_Aint size;
    MPI_Aint disp_unit;
    pid_t    pid;
    int      direct;    /* 1: loads/stores; 0: process_vm_readv/writev */
} rma_target_t;

/* Local epoch state. */
enum { RMA_LOCK_NONE = 0, RMA_LOCK_HELD_SHARED, RMA_LOCK_HELD_EXCLUSIVE };

struct weft_win {
    weft_object_t           hdr;
    weft_comm_t            *comm;       /* private copy of the user's communicator */
    weft_group_t           *group;
    int                     rank, size;
    int                     flavor;     /* MPI_WIN_FLAVOR_* */
    int                     model;      /* MPI_WIN_UNIFIED */
    void                   *base;
    MPI_Aint                win_size;
    MPI_Aint                disp_unit;
    int                     disp_unit_int; /* for the MPI_WIN_DISP_UNIT attribute */
    weft_info_t            *info;          /* the hints in use */
    struct weft_attr_entry *attrs;
    weft_errhandler_t      *errhandler;
    char                    name[MPI_MAX_OBJECT_NAME];

    /* Info hints that change behaviour. */
    int no_locks;
    int acc_same_op;       /* accumulate_ops=same_op */

    /* Shared control segment. */
    void           *seg;
    size_t          seg_bytes;
    rma_seg_hdr_t  *hdr_ctl;
    rma_rank_ctl_t *ctl;      /* size entries */
    rma_region_t   *attach;   /* size * attach_max entries */
    int             attach_max;
    uint32_t       *posted;   /* [target * size + origin]: posts target made to origin */
    uint32_t       *done;     /* [target * size + origin]: completes origin made to target */
    rma_target_t   *targets;  /* size entries */

    /* Epochs. */
    int           fence_open;  /* a fence without MPI_MODE_NOSUCCEED opened an epoch */
    int           lock_all;    /* inside lock_all */
    int           lock_all_nocheck;
    int           nlocks;      /* targets locked with MPI_Win_lock */
    unsigned char *lock_held;  /* RMA_LOCK_* per target */
    unsigned char *lock_nocheck;
    int           *start_ranks; int nstart; /* access group of MPI_Win_start, or NULL */
    int           *post_ranks;  int npost;  /* exposure group of MPI_Win_post, or NULL */
    uint32_t      *started;    /* posts from each target consumed by start */
    uint32_t      *completed;  /* completes from each origin consumed by wait */

    /* Active-message path (rma_am.c). */
    int               am;          /* operations and synchronisation by messages */
    int               seg_shared;  /* the control segment is shared by all ranks */
    weft_win_t       *am_next;     /* windows the progress hook serves */
    uint64_t          am_hdr_buf[6];
    weft_request_t   *am_hdr_req;  /* posted receive for the next request */
    uint32_t          am_lock;     /* this rank's lock: RMA_LOCK_WRITER or readers */
    struct { int origin, excl; } *am_waiters; /* queued lock requests, FIFO */
    unsigned char    *am_held;     /* per origin: 0, 1 shared, 2 exclusive lock held here */
    int               am_waiters_n;
    weft_request_t  **am_done_reqs; /* PSCW: completes expected by MPI_Win_wait */
    int               am_sink;

    /* libfabric RMA for put/get (rma_net.c), on an active-message window. */
    int               net;      /* some target's put/get go by RMA */
    unsigned char    *net_target; /* per rank: put/get to it go by RMA (another node,
                                     reached through the netmod, both registered) */
    void             *net_mr;   /* this rank's registration */
    uint64_t         *net_key;  /* per rank */
    uint64_t         *net_addr; /* per rank: address (or 0) of its byte 0 */
    weft_rma_count_t  net_cnt;  /* puts/gets in flight (completed by rma_net_quiet) */
    struct rma_net_stage *net_staged; /* packed origin data of puts in flight */
};

/* rma_win.c */
/* The node this rank belongs to for windows (PMI node id, or the test
 * layout WEFT_RMA_FAKE_PPN gives). */
int  rma_my_node(void);
int  rma_allgather(weft_win_t *win, const void *mine, size_t len, void *all);
int  rma_barrier(weft_win_t *win);
/* rma_sync.c: one idle turn of a window wait (progress found nothing): the
 * error naming a lost member of win's communicator, since a dead process
 * never posts, completes, unlocks, reaches a barrier or answers a network
 * operation and we cannot tell which one we wait for; else MPI_SUCCESS after
 * the wait policy's step. */
int  rma_wait_idle(weft_win_t *win, weft_wait_t *w);
/* Wait until cond holds, progressing other traffic; returns the error from
 * the caller when a member of win is lost. */
#define RMA_WAIT_UNTIL(_win, _cond)                                                         \
    do {                                                                                    \
        weft_wait_t _w = {0};                                                               \
        while (!(_cond)) {                                                                  \
            int _rc = weft_progress_poll() == 0 ? rma_wait_idle((_win), &_w) : MPI_SUCCESS; \
            if (_rc != MPI_SUCCESS) {                                                       \
                return _rc;                                                                 \
            }                                                                               \
        }                                                                                   \
    } while (0)
int  rma_ranks_of_group(weft_win_t *win, const weft_group_t *group, int **ranks_p);

/* rma_sync.c: may an operation target `rank` now? MPI_SUCCESS or
 * MPI_ERR_RMA_SYNC (reason recorded). Locks and fences are tested inline
 * (every operation asks); the PSCW access group out of line. */
int rma_check_epoch_group(weft_win_t *win, int rank, const char *what);
static inline int rma_check_epoch(weft_win_t *win, int rank, const char *what)
{
    if (win->lock_all || win->lock_held[rank] != RMA_LOCK_NONE || win->fence_open) {
        return MPI_SUCCESS;
    }
    return rma_check_epoch_group(win, rank, what);
}

/* The accumulate and attach locks: a word in the control segment, taken by
 * one atomic exchange. The exchange is inline and the wait is not (np 2
 * fetch_and_op spends a quarter of its cycles in the lock). */
void rma_spin_lock_wait(uint32_t *word);
static inline void rma_spin_lock(uint32_t *word)
{
    if (__builtin_expect(__atomic_exchange_n(word, 1u, __ATOMIC_ACQUIRE) != 0, 0)) {
        rma_spin_lock_wait(word);
    }
}
static inline void rma_spin_unlock(uint32_t *word)
{
    __atomic_store_n(word, 0u, __ATOMIC_RELEASE);
}

/* rma_am.c: the active-message path. base_off: displacement in bytes from
 * the target's base (dynamic windows: the absolute address). */
int  rma_am_win_init(weft_win_t *win);
void rma_am_win_fini(weft_win_t *win);
int  rma_am_put(weft_win_t *win, int target, MPI_Aint base_off, const void *obuf,
                MPI_Count ocount, const weft_datatype_t *odt, MPI_Count tcount,
                const weft_datatype_t *tdt);
int  rma_am_get(weft_win_t *win, int target, MPI_Aint base_off, void *obuf, MPI_Count ocount,
                const weft_datatype_t *odt, MPI_Count tcount, const weft_datatype_t *tdt);
int  rma_am_acc(weft_win_t *win, int target, MPI_Aint base_off, const char *in, char *old,
                MPI_Count tcount, const weft_datatype_t *tdt, const weft_op_t *op,
                const weft_datatype_t *bdt);
int  rma_am_cas(weft_win_t *win, int target, MPI_Aint off, const void *origin,
                const void *compare, void *result, const weft_datatype_t *dt);
int  rma_am_lock(weft_win_t *win, int target, int exclusive);
int  rma_am_unlock(weft_win_t *win, int target, int exclusive);
int  rma_am_post(weft_win_t *win, const int *origins, int n);
int  rma_am_start(weft_win_t *win, const int *targets, int n);
int  rma_am_complete(weft_win_t *win, const int *targets, int n);
int  rma_am_wait(weft_win_t *win, int n, int wait);
int  rma_am_barrier(weft_win_t *win);

/* rma_net.c: put/get by the netmod's RMA, complete at the next
 * synchronisation. win_init is collective (sets win->net; an error only
 * when WEFT_RMA_NET=native cannot be honoured). */
int  rma_net_win_init(weft_win_t *win);
/* Returns 1 when operations to a lost target are still outstanding: the
 * window object must then not be reused (their completions count into it). */
int  rma_net_win_fini(weft_win_t *win);
/* Wait until every put/get of this process on win completed (the sync
 * calls: flush, unlock, fence, complete, free; R-forms at once). */
int  rma_net_quiet(weft_win_t *win);
int  rma_net_put(weft_win_t *win, int target, MPI_Aint base_off, const void *obuf,
                 MPI_Count ocount, const weft_datatype_t *odt, MPI_Count tcount,
                 const weft_datatype_t *tdt);
int  rma_net_get(weft_win_t *win, int target, MPI_Aint base_off, void *obuf, MPI_Count ocount,
                 const weft_datatype_t *odt, MPI_Count tcount, const weft_datatype_t *tdt);

#endif
