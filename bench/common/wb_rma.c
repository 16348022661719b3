/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "wb_rma.h"

void wb_rma_create(wb_rma_t *r, wb_ctx_t *c, size_t bytes)
{
    MPI_Group world;

    r->c = c;
    r->bytes = bytes ? bytes : 1;
    r->peer = c->rank < 2 ? 1 - c->rank : c->rank;
    if (c->o.win_allocate) {
        void *p = NULL;
        WB(MPI_Win_allocate((MPI_Aint)r->bytes, 1, MPI_INFO_NULL, c->comm, &p, &r->win));
        r->base = p;
        r->own_mem = 0;
    } else {
        r->base = wb_alloc(r->bytes);
        r->own_mem = 1;
        WB(MPI_Win_create(r->base, (MPI_Aint)r->bytes, 1, MPI_INFO_NULL, c->comm, &r->win));
    }
    WB(MPI_Win_set_errhandler(r->win, MPI_ERRORS_RETURN));
    WB(MPI_Comm_group(c->comm, &world));
    WB(MPI_Group_incl(world, 1, &r->peer, &r->peer_group));
    WB(MPI_Group_free(&world));
}

void wb_rma_free(wb_rma_t *r)
{
    WB(MPI_Group_free(&r->peer_group));
    WB(MPI_Win_free(&r->win));
    if (r->own_mem)
        wb_free(r->base);
    r->base = NULL;
}

void wb_rma_open(wb_rma_t *r, int origin, int target)
{
    (void)target;
    switch (r->c->o.sync) {
    case WB_SYNC_FLUSH:
        if (origin)
            WB(MPI_Win_lock(MPI_LOCK_SHARED, r->peer, 0, r->win));
        break;
    case WB_SYNC_FENCE:
        WB(MPI_Win_fence(0, r->win));
        break;
    default:
        break;
    }
}

void wb_rma_begin(wb_rma_t *r, int origin, int target)
{
    switch (r->c->o.sync) {
    case WB_SYNC_LOCK:
        if (origin)
            WB(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, r->peer, 0, r->win));
        break;
    case WB_SYNC_LOCK_ALL:
        if (origin)
            WB(MPI_Win_lock_all(0, r->win));
        break;
    case WB_SYNC_PSCW:
        if (target)
            WB(MPI_Win_post(r->peer_group, 0, r->win));
        if (origin)
            WB(MPI_Win_start(r->peer_group, 0, r->win));
        break;
    default:
        break;
    }
}

void wb_rma_end(wb_rma_t *r, int origin, int target)
{
    switch (r->c->o.sync) {
    case WB_SYNC_FLUSH:
        if (origin)
            WB(MPI_Win_flush(r->peer, r->win));
        break;
    case WB_SYNC_LOCK:
        if (origin)
            WB(MPI_Win_unlock(r->peer, r->win));
        break;
    case WB_SYNC_LOCK_ALL:
        if (origin)
            WB(MPI_Win_unlock_all(r->win));
        break;
    case WB_SYNC_FENCE:
        WB(MPI_Win_fence(0, r->win));
        break;
    case WB_SYNC_PSCW:
        if (origin)
            WB(MPI_Win_complete(r->win));
        if (target)
            WB(MPI_Win_wait(r->win));
        break;
    }
}

void wb_rma_close(wb_rma_t *r, int origin, int target)
{
    (void)target;
    if (r->c->o.sync == WB_SYNC_FLUSH && origin)
        WB(MPI_Win_unlock(r->peer, r->win));
}
