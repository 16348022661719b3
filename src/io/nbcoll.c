/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-blocking collective file access (MPI_File_iread_all, iwrite_all,
 * iread_at_all, iwrite_at_all and their _c forms) and the split
 * collectives' begin: the call prepares the access (segments, data in file
 * representation) and returns; the two-phase transfer (twophase.c) then
 * runs in the background, its exchanges as non-blocking collectives on the
 * file's private communicator fh->nbc_comm and its file I/O on the I/O
 * worker thread, advanced by a progress hook. A call never waits for
 * another rank.
 *
 * Each file has a queue: its collectives run one at a time in call order.
 * Every rank makes the same collective calls on a file in the same order,
 * so the exchanges on nbc_comm match across ranks, and a later access sees
 * the effect of an earlier one (MPI's ordering of collective calls). Every
 * blocking collective call on the file, MPI_File_close and MPI_Finalize
 * first wait for the queue to empty.
 */
#include <stdlib.h>
#include "io_internal.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"
#include "api_impl.h"

/* Stages of an ordered access before its transfer can start. */
enum { ORD_NONE, ORD_COUNTS, ORD_BASE, ORD_POS };

struct weft_io_nbc {
    weft_io_nbc_t  *next; /* the file's queue */
    weft_file_t    *fh;
    weft_io_xfer_t  x;
    int             local_rc;
    int             started;
    weft_io_tp_t   *tp;  /* NULL before it starts, or when it could not */
    weft_request_t *req; /* NULL: the call failed locally, nobody waits */
    const char     *call;   /* the MPI call that started it, for its error message */
    char           *reason; /* the first reason recorded while it ran in the background */
    /* ordered (split *_ordered_begin): x.pos comes from an exchange */
    int             ord;
    weft_request_t *ord_req;
    MPI_Offset      ord_n, ord_before, ord_base[2], *ord_all;
};

static weft_file_t *files; /* files with queued collectives */
static int          hooks_up, advancing;

/* Finished: unpack, complete the request, free. */
static void op_done(weft_io_nbc_t *op)
{
    MPI_Offset done = 0, moved;
    MPI_Status st   = {0};
    int        rc   = op->tp ? weft_io_tp_result(op->tp, &done) : op->local_rc;

    rc = weft_io_xfer_finish(op->fh, &op->x, rc, done, &st, &moved);
    if (op->tp) {
        weft_io_tp_free(op->tp);
    }
    if (op->x.dt) {
        weft_datatype_release(op->x.dt);
    }
    free(op->ord_all);
    if (rc != MPI_SUCCESS && op->reason == NULL) {
        op->reason = weft_io_reason_copy();
    }
    if (op->req) {
        if (rc != MPI_SUCCESS) {
            weft_io_request_fail(op->req, op->fh, op->call, rc, op->reason);
            op->reason = NULL;
        } else {
            op->req->status           = st;
            op->req->status.MPI_ERROR = MPI_SUCCESS;
            weft_request_complete(op->req);
        }
    }
    free(op->reason);
    free(op);
}

static int ord_posted(weft_io_nbc_t *op, int rc, const MPI_Request *h)
{
    if (rc == MPI_SUCCESS) {
        op->ord_req = weft_request_from_handle(*h);
    }
    return rc;
}

/* An ordered access goes in rank order after the shared file pointer,
 * which rank 0 advances by the total: exchange the counts, then rank 0's
 * old pointer. Returns 1 once x.pos is known (or the access failed). */
static int ordered_step(weft_io_nbc_t *op)
{
    weft_file_t     *fh  = op->fh;
    weft_comm_t     *c   = fh->nbc_comm;
    weft_datatype_t *i64 = weft_datatype_from_handle(MPI_INT64_T);
    MPI_Request      h;
    int              rc;

    for (;;) {
        if (op->ord_req != NULL) {
            if (!weft_request_is_complete(op->ord_req)) {
                return 0;
            }
            rc          = weft_request_wait(op->ord_req, MPI_STATUS_IGNORE);
            op->ord_req = NULL;
            if (rc != MPI_SUCCESS) {
                op->local_rc = rc;
                op->ord      = ORD_NONE;
                return 1;
            }
        }
        switch (op->ord) {
        case ORD_COUNTS:
            op->ord_all = malloc(c->size * sizeof(MPI_Offset));
            if (op->ord_all == NULL) {
                /* cannot take part in the exchanges: the others fail in the transfer's first */
                op->local_rc = weft_error(MPI_ERR_NO_MEM, "cannot allocate the ordering state");
                op->ord      = ORD_NONE;
                return 1;
            }
            op->ord = ORD_BASE;
            rc = ord_posted(op, weft_iallgather_impl(&op->ord_n, 1, i64, op->ord_all, 1, i64, c, &h), &h);
            break;
        case ORD_BASE: {
            MPI_Offset total = 0;
            for (int r = 0; r < c->size; r++) {
                op->ord_before += r < c->rank ? op->ord_all[r] : 0;
                total += op->ord_all[r];
            }
            if (c->rank == 0) {
                op->ord_base[1] = weft_io_shared_fetch_add(fh, total, &op->ord_base[0]);
            }
            op->ord = ORD_POS;
            rc      = ord_posted(op, weft_ibcast_impl(op->ord_base, 2, i64, 0, c, &h), &h);
            break;
        }
        default: /* ORD_POS */
            op->ord = ORD_NONE;
            if (op->ord_base[1] != MPI_SUCCESS && op->local_rc == MPI_SUCCESS) {
                op->local_rc = c->rank == 0 ? (int)op->ord_base[1]
                                            : weft_error((int)op->ord_base[1],
                                                         "file \"%s\": shared file pointer failed on rank 0", fh->path);
            }
            if (op->local_rc == MPI_SUCCESS) {
                op->x.pos    = op->ord_base[0] + op->ord_before;
                op->local_rc = weft_io_xfer_prepare(fh, &op->x);
            }
            return 1;
        }
        if (rc != MPI_SUCCESS) {
            op->local_rc = rc;
            op->ord      = ORD_NONE;
            return 1;
        }
    }
}

/* Advance one collective; 1 when it finished. */
static int advance_op(weft_file_t *fh, weft_io_nbc_t *op)
{
    if (op->ord != ORD_NONE && !ordered_step(op)) {
        return 0;
    }
    if (!op->started) {
        op->started = 1;
        op->tp      = weft_io_tp_start(fh, fh->nbc_comm, op->local_rc, op->x.writing, op->x.segs, op->x.nseg,
                                       op->x.data, op->x.nbytes);
        if (op->tp == NULL) {
            op->local_rc = weft_error(MPI_ERR_NO_MEM, "file \"%s\": cannot allocate collective I/O state",
                                      fh->path);
        }
    }
    if (op->tp != NULL && !weft_io_tp_advance(op->tp)) {
        return 0;
    }
    return 1;
}

/* Advance the file's first collective; start the next one as it finishes.
 * Each runs inside whatever MPI call made progress: its errors are
 * recorded apart from that call's (weft_err_push) and kept for the call
 * that completes its request. */
static int advance_file(weft_file_t *fh)
{
    int n = 0;

    while (fh->nbc_head != NULL) {
        weft_io_nbc_t   *op = fh->nbc_head;
        weft_err_saved_t saved;
        int              finished;

        weft_err_push(&saved, op->call);
        finished = advance_op(fh, op);
        if (finished) {
            fh->nbc_head = op->next;
            if (fh->nbc_head == NULL) {
                fh->nbc_tail = NULL;
            }
            op_done(op);
            n++;
        } else if (op->reason == NULL) {
            op->reason = weft_io_reason_copy();
        }
        weft_err_pop(&saved);
        if (!finished) {
            break;
        }
    }
    return n;
}

/* Progress hook (and every direct push): advance every file's queue. */
static int advance_all(void)
{
    weft_file_t **link = &files;
    int           n    = 0;

    if (advancing) { /* an exchange posted below ran the progress hooks */
        return 0;
    }
    advancing = 1;
    while (*link != NULL) {
        weft_file_t *fh = *link;
        n += advance_file(fh);
        if (fh->nbc_head == NULL) {
            *link       = fh->nbc_next;
            fh->nbc_next = NULL;
        } else {
            link = &fh->nbc_next;
        }
    }
    advancing = 0;
    return n;
}

/* Wait until fh's queue (every file's: fh NULL) is empty. */
static void wait_until_empty(weft_file_t *fh)
{
    weft_wait_t w = {0};

    while (fh ? fh->nbc_head != NULL : files != NULL) {
        if (advance_all() == 0 && weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

void weft_io_nbc_drain(weft_file_t *fh)
{
    wait_until_empty(fh);
}

/* MPI_Finalize: every rank of a file's communicator is here too, so the
 * collectives nobody waited for can still finish (runs before the I/O
 * worker's hook, which was registered first). */
static void nbc_finalize(void)
{
    wait_until_empty(NULL);
    hooks_up = 0;
}

int weft_io_nbc_start(weft_file_t *fh, int local_rc, int ordered, weft_io_xfer_t *x, weft_request_t **req)
{
    weft_io_nbc_t *op = calloc(1, sizeof(*op));

    *req = NULL;
    if (op == NULL) {
        MPI_Offset moved;
        weft_io_xfer_finish(fh, x, MPI_ERR_NO_MEM, 0, MPI_STATUS_IGNORE, &moved);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a collective I/O operation (file \"%s\")", fh->path);
    }
    if (!hooks_up) {
        int rc = weft_io_worker_start(); /* first, so our finalize hook runs before the worker stops */
        if (rc != MPI_SUCCESS && local_rc == MPI_SUCCESS) {
            local_rc = rc; /* file I/O will fail; the exchanges still run */
        }
        weft_progress_register(advance_all);
        weft_finalize_register(nbc_finalize);
        hooks_up = 1;
    }
    if (local_rc == MPI_SUCCESS && (op->req = weft_request_alloc(WEFT_REQ_NOOP)) == NULL) {
        local_rc = weft_error(MPI_ERR_NO_MEM, "cannot allocate a request (file \"%s\")", fh->path);
    }
    op->fh       = fh;
    op->x        = *x;
    op->local_rc = local_rc;
    op->call     = weft_err_fname();
    if (ordered) {
        op->ord   = ORD_COUNTS;
        op->ord_n = local_rc == MPI_SUCCESS ? x->nbytes / fh->view.esize : 0;
    }
    if (op->x.dt) {
        weft_datatype_retain(op->x.dt);
    }
    *req = op->req;
    if (fh->nbc_tail != NULL) {
        fh->nbc_tail->next = op;
    } else {
        weft_file_t *f = files;
        fh->nbc_head   = op;
        while (f != NULL && f != fh) { /* still listed if its queue only just emptied */
            f = f->nbc_next;
        }
        if (f == NULL) {
            fh->nbc_next = files;
            files        = fh;
        }
    }
    fh->nbc_tail = op;
    advance_all(); /* post its first exchange now if it is the file's first */
    return local_rc;
}
