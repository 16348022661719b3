/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Shared window set-up and synchronisation for the one-sided benchmarks.
 * Ranks 0 and 1 take part; an access epoch per iteration is
 *   wb_rma_begin(); <operations>; wb_rma_end();
 * between wb_rma_open() and wb_rma_close(). The -s modes:
 *   flush    lock(shared, peer) once; flush(peer) per iteration
 *   lock     lock(exclusive, peer) / unlock per iteration
 *   lock_all lock_all / unlock_all per iteration
 *   fence    fence per iteration (both ranks)
 *   pscw     post/start ... complete/wait per iteration
 */
#ifndef WB_RMA_H
#define WB_RMA_H

#include "wb.h"

typedef struct wb_rma {
    wb_ctx_t *c;
    MPI_Win win;
    char *base;
    size_t bytes;
    int peer;
    MPI_Group peer_group;
    int own_mem;
} wb_rma_t;

/* Create the window (collective over c->comm) of 'bytes' bytes with
 * MPI_ERRORS_RETURN set on it. */
void wb_rma_create(wb_rma_t *r, wb_ctx_t *c, size_t bytes);
void wb_rma_free(wb_rma_t *r);

/* origin / target: whether this rank issues operations and whether its
 * window is accessed in this loop (both for bidirectional tests). */
void wb_rma_open(wb_rma_t *r, int origin, int target);
void wb_rma_begin(wb_rma_t *r, int origin, int target);
void wb_rma_end(wb_rma_t *r, int origin, int target);
void wb_rma_close(wb_rma_t *r, int origin, int target);

#endif
