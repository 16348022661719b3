/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Running a checked collective call (weft_coll_run): select the algorithm,
 * then run it to completion (blocking: the registry row's direct run or its
 * schedule), start its schedule behind a request (non-blocking) or keep it
 * behind a persistent request.
 *
 * Persistent requests: the handle is an outer persistent request whose
 * `state` is an inner WEFT_REQ_COLL request. MPI_Start only marks the outer
 * one active; the schedule (built once at init) is rewound and started the
 * first time Wait/Test/progress polls the inner request. When the request
 * layer frees a finished inner request, its on_free installs a fresh one
 * for the next start.
 */
#include <stdlib.h>

#include "coll/coll_internal.h"
#include "core/errors.h"

/* ---- requests -------------------------------------------------------------- */

static int nb_progress(weft_request_t *req)
{
    int           rc;
    weft_sched_t *s = req->state;
    /* the progress hook finishes it; this only lets Wait/Test push it too */
    if (s && weft_sched_advance(s, &rc)) {
        return 1;
    }
    return 0;
}

static void nb_free(weft_request_t *req)
{
    weft_sched_free(req->state);
    req->state = NULL;
}

typedef struct {
    weft_sched_t   *sched;
    weft_request_t *outer, *inner;
    int             started; /* current inner request started its run */
    int             closing; /* outer freed: inner frees, no replacement */
} pers_t;

static int  pers_inner_progress(weft_request_t *req);
static void pers_inner_free(weft_request_t *req);

static weft_request_t *pers_inner_new(pers_t *p)
{
    weft_request_t *t = weft_request_alloc(WEFT_REQ_COLL);
    if (t != NULL) {
        t->state    = p;
        t->progress = pers_inner_progress;
        t->on_free  = pers_inner_free;
    }
    p->inner   = t;
    p->started = 0;
    return t;
}

static int pers_inner_progress(weft_request_t *req)
{
    pers_t *p = req->state;
    if (!p->started) {
        p->started = 1;
        weft_sched_rewind(p->sched);
        weft_sched_start(p->sched, req);
    }
    return 0;
}

static void pers_inner_free(weft_request_t *req)
{
    pers_t *p = req->state;
    req->state = NULL;
    if (p->closing) {
        weft_sched_free(p->sched);
        free(p);
        return;
    }
    /* finished run: the request layer drops this inner request (and set
     * outer->state to NULL just before); install the next one */
    weft_request_t *t = pers_inner_new(p);
    p->outer->state   = t;
}

static int pers_outer_progress(weft_request_t *req)
{
    (void)req;
    return 0;
}

static void pers_outer_free(weft_request_t *req)
{
    pers_t *p = req->greq_extra; /* the request layer may have cleared state */
    if (p == NULL) {
        return;
    }
    req->state      = NULL;
    req->greq_extra = NULL;
    weft_request_t *t = p->inner;
    p->closing        = 1;
    if (t->hdr.magic == WEFT_MAGIC(WEFT_KIND_REQUEST) && (!p->started || weft_request_is_complete(t))) {
        weft_request_free(t); /* frees p through pers_inner_free */
    }
    /* otherwise a running inner request was handed to the zombie list and
     * frees p when it is reaped */
}

/* ---- running a call ------------------------------------------------------- */

int weft_coll_run(weft_coll_args_t *a, int mode, MPI_Request *request)
{
    int           alg, rc;
    weft_sched_t *s;

    a->blocking = mode == WEFT_COLL_MODE_BLOCKING;
    alg         = weft_coll_select(a, &rc);

    if (alg < 0) {
        return rc != MPI_SUCCESS
                   ? rc
                   : weft_error(MPI_ERR_INTERN, "no %s algorithm applies", weft_coll_names[a->coll]);
    }
    if (mode == WEFT_COLL_MODE_BLOCKING) {
        return weft_coll_run_blocking(alg, a);
    }
    s = weft_coll_schedule(alg, a, &rc);
    if (s == NULL) {
        return rc;
    }
    /* keep user objects alive while the schedule may still run */
    weft_sched_hold(s, a->dt, a->op);
    if (a->sdt != a->dt) {
        weft_sched_hold(s, a->sdt, NULL);
    }
    if (a->rdt != a->dt && a->rdt != a->sdt) {
        weft_sched_hold(s, a->rdt, NULL);
    }
    weft_request_t *r = weft_request_alloc(WEFT_REQ_COLL);
    if (r == NULL) {
        weft_sched_free(s);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->comm = a->comm;
    weft_comm_retain(a->comm);
    if (mode == WEFT_COLL_MODE_NONBLOCKING) {
        r->state    = s;
        r->progress = nb_progress;
        r->on_free  = nb_free;
        weft_sched_start(s, r);
        *request = (MPI_Request)r;
        return MPI_SUCCESS;
    }
    pers_t *p = calloc(1, sizeof(*p));
    if (p == NULL || pers_inner_new(p) == NULL) {
        free(p);
        weft_sched_free(s);
        weft_request_free(r);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    p->sched      = s;
    p->outer      = r;
    r->persistent = 1;
    r->state      = p->inner;
    r->progress   = pers_outer_progress;
    r->on_free    = pers_outer_free;
    r->greq_extra = p; /* unused by WEFT_REQ_COLL requests otherwise */
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}
