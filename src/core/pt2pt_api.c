/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Impls of the point-to-point, request and status entry points.
 *
 * Request handles are weft_request_t pointers. A persistent request keeps its
 * arguments and, while active, points (state) at the inner request doing the
 * work. Completion calls share one path (request_finish) that builds the
 * user's status, runs generalized-request callbacks and releases or
 * deactivates the request.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/bsend.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt_internal.h"
#include "core/pt2pt_part.h"
#include "core/runtime.h"
#include "core/status.h"

/* ---- helpers ----------------------------------------------------------- */

static int truncated(const MPI_Status *st, MPI_Count cap)
{
    return weft_error(MPI_ERR_TRUNCATE, "message from rank %d (tag %d) is longer than the "
                      "%lld-byte receive buffer; the first %lld bytes were delivered",
                      st->MPI_SOURCE, st->MPI_TAG, (long long)cap, (long long)cap);
}

static void status_empty(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG    = MPI_ANY_TAG;
    weft_status_set_bytes(st, 0);
    weft_status_set_cancelled(st, 0);
}

/* Status copy for single-completion calls, which leave MPI_ERROR alone. */
static void status_out(MPI_Status *out, const MPI_Status *in, int with_error)
{
    if (out == MPI_STATUS_IGNORE) {
        return;
    }
    int err = out->MPI_ERROR;
    *out    = *in;
    if (!with_error) {
        out->MPI_ERROR = err;
    }
}

static weft_request_t *req_of(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL) {
        return NULL;
    }
    return weft_object_valid(h, WEFT_KIND_REQUEST) ? (weft_request_t *)h : NULL;
}

static int bad_request(const char *arg)
{
    return weft_error(MPI_ERR_REQUEST, "argument %s: invalid or freed request handle", arg);
}

/* The request whose completion matters: the inner one of an active
 * persistent request. NULL when there is nothing to wait for. */
static weft_request_t *req_target(weft_request_t *r)
{
    if (r == NULL) {
        return NULL;
    }
    if (r->persistent) {
        return r->active ? (weft_request_t *)r->state : NULL;
    }
    return r;
}

static int req_poll(weft_request_t *r)
{
    weft_request_t *t = req_target(r);
    if (t == NULL) {
        return 1; /* null or inactive: complete with an empty status */
    }
    if (t->kind == WEFT_REQ_COLL && !weft_request_is_complete(t) && t->progress) {
        t->progress(t);
    }
    return weft_request_is_complete(t);
}

/* Requests freed by MPI_Request_free while still active: reclaimed by
 * progress once complete (a peer may still reference them until then). */
static weft_request_t *zombies;

static int reap_zombies(void)
{
    weft_request_t **link = &zombies;
    int              n    = 0;

    while (*link) {
        weft_request_t *r = *link;
        if (weft_request_is_complete(r)) {
            *link          = r->zombie_next;
            r->zombie_next = NULL;
            weft_request_free(r);
            n++;
        } else {
            link = &r->zombie_next;
        }
    }
    return n;
}

static void zombie_add(weft_request_t *r)
{
    static int registered;
    if (!registered) {
        weft_progress_register(reap_zombies);
        registered = 1;
    }
    /* not r->next: an active receive is still linked in the posted queue
     * through it (issue 19 bug 10: reusing it corrupted that queue) */
    r->zombie_next = zombies;
    zombies        = r;
}

/* Finish a complete request: status out, release. Returns its error code. */
static int request_finish(MPI_Request *handle, MPI_Status *status, int with_error)
{
    weft_request_t *r = req_of(*handle);
    weft_request_t *t = req_target(r);
    MPI_Status      st;
    int             rc;

    if (t == NULL) { /* the empty status, MPI_ERROR included */
        status_empty(&st);
        st.MPI_ERROR = MPI_SUCCESS;
        status_out(status, &st, 1);
        return MPI_SUCCESS;
    }
    st = t->status;
    if (t->kind == WEFT_REQ_GREQ) {
        rc = ((MPI_Grequest_query_function *)t->greq_query)(t->greq_extra, &st);
        if (rc != MPI_SUCCESS) {
            st.MPI_ERROR = rc;
        }
    }
    rc = st.MPI_ERROR;
    status_out(status, &st, with_error);
    if (rc != MPI_SUCCESS) {
        /* The error belongs to the request's communicator (its handler runs). */
        weft_err_set_comm(t->comm ? t->comm : r->comm);
        if (rc == MPI_ERR_TRUNCATE) {
            truncated(&st, t->count * (t->datatype ? t->datatype->size : 0));
        }
        if (t->failed_peer > 0) {
            weft_dev_lost_error(t->failed_peer - 1, t->failed_rank);
        }
        if (t->on_error != NULL) {
            t->on_error(t);
        }
    }
    if (t->kind == WEFT_REQ_GREQ && t->greq_free != NULL) {
        /* free_fn's error is the call's error (it runs here, not on_free) */
        int frc = ((MPI_Grequest_free_function *)t->greq_free)(t->greq_extra);
        t->on_free = NULL;
        if (frc != MPI_SUCCESS && rc == MPI_SUCCESS) {
            rc = frc;
        }
    }
    if (r->persistent) {
        r->active = 0;
        r->state  = NULL;
        weft_request_free(t);
    } else {
        weft_request_free(r);
        *handle = MPI_REQUEST_NULL;
    }
    return rc;
}

static void wait_until(weft_request_t *r)
{
    weft_wait_t w = {0};
    while (!req_poll(r)) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

/* ---- sends and receives ------------------------------------------------ */

/* A request that is complete from the start, with the empty status and
 * source (MPI_PROC_NULL or MPI_ANY_SOURCE); NULL when out of memory. */
static weft_request_t *completed_request(weft_req_kind_t kind, weft_comm_t *comm, int source)
{
    weft_request_t *r = weft_request_alloc(kind);
    if (r == NULL) {
        return NULL;
    }
    if (comm != NULL) {
        r->comm = comm;
        weft_comm_retain(comm);
    }
    status_empty(&r->status);
    r->status.MPI_SOURCE = source;
    weft_request_complete(r);
    return r;
}

static int complete_now(weft_comm_t *comm, MPI_Request *request)
{
    weft_request_t *r = completed_request(WEFT_REQ_NOOP, comm, MPI_ANY_SOURCE);
    if (r == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

static int isend_mode(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                      weft_comm_t *comm, weft_send_mode_t mode, MPI_Request *request)
{
    weft_request_t *r;
    int             rc;

    if (mode == WEFT_SEND_BUFFERED) {
        rc = weft_bsend_start(buf, count, dt, dest, tag, comm);
        return rc != MPI_SUCCESS ? rc : complete_now(comm, request);
    }
    rc = weft_isend(buf, count, dt, dest, tag, comm, WEFT_CTX_PT2PT, mode, &r);
    if (rc == MPI_SUCCESS) {
        *request = (MPI_Request)r;
    }
    return rc;
}

static int send_mode(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                     weft_comm_t *comm, weft_send_mode_t mode)
{
    weft_request_t *r;
    int             rc;

    if (mode == WEFT_SEND_BUFFERED) {
        return weft_bsend_start(buf, count, dt, dest, tag, comm);
    }
    if (mode != WEFT_SEND_SYNC && weft_send_eager_now(buf, count, dt, dest, tag, comm, WEFT_CTX_PT2PT)) {
        return MPI_SUCCESS;
    }
    rc = weft_isend(buf, count, dt, dest, tag, comm, WEFT_CTX_PT2PT, mode, &r);
    return rc != MPI_SUCCESS ? rc : weft_request_wait(r, MPI_STATUS_IGNORE);
}

int weft_send_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest, int tag,
                   weft_comm_t *comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_STANDARD);
}

int weft_ssend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest, int tag,
                    weft_comm_t *comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_SYNC);
}

int weft_rsend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest, int tag,
                    weft_comm_t *comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_READY);
}

int weft_bsend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest, int tag,
                    weft_comm_t *comm)
{
    return send_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_BUFFERED);
}

int weft_isend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest, int tag,
                    weft_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_STANDARD, request);
}

int weft_issend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                     int tag, weft_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_SYNC, request);
}

int weft_irsend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                     int tag, weft_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_READY, request);
}

int weft_ibsend_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                     int tag, weft_comm_t *comm, MPI_Request *request)
{
    return isend_mode(buf, count, datatype, dest, tag, comm, WEFT_SEND_BUFFERED, request);
}

int weft_recv_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, int source, int tag,
                   weft_comm_t *comm, MPI_Status *status)
{
    MPI_Status st;
    int        rc;

    if (source == MPI_PROC_NULL) {
        status_empty(&st);
        st.MPI_SOURCE = MPI_PROC_NULL;
        status_out(status, &st, 0);
        return MPI_SUCCESS;
    }
    rc = weft_recv_now(buf, count, datatype, source, tag, comm, WEFT_CTX_PT2PT, &st);
    status_out(status, &st, 0);
    return rc == MPI_ERR_TRUNCATE ? truncated(&st, count * datatype->size) : rc;
}

int weft_irecv_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, int source, int tag,
                    weft_comm_t *comm, MPI_Request *request)
{
    weft_request_t *r;
    int             rc = weft_irecv(buf, count, datatype, source, tag, comm, WEFT_CTX_PT2PT, &r);

    if (rc == MPI_SUCCESS) {
        *request = (MPI_Request)r;
    }
    return rc;
}

int weft_sendrecv_impl(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                       int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                       weft_datatype_t *recvtype, int source, int recvtag, weft_comm_t *comm,
                       MPI_Status *status)
{
    MPI_Status st;
    int        rc = weft_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount,
                                  recvtype, source, recvtag, comm, WEFT_CTX_PT2PT, &st);
    status_out(status, &st, 0);
    return rc;
}

/* Sendrecv_replace: send from a packed copy so the receive may overwrite buf. */
static int replace_start(void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int sendtag,
                         int source, int recvtag, weft_comm_t *comm, weft_request_t **sreq,
                         weft_request_t **rreq, void **copy)
{
    MPI_Count bytes = count * dt->size;
    int       rc;

    *copy = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (*copy == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate %lld bytes for the send copy",
                          (long long)bytes);
    }
    weft_dt_pack(dt, count, buf, 0, *copy, bytes);
    rc = weft_isend(*copy, bytes, weft_datatype_from_handle(MPI_PACKED), dest, sendtag, comm,
                    WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, sreq);
    if (rc == MPI_SUCCESS) {
        rc = weft_irecv(buf, count, dt, source, recvtag, comm, WEFT_CTX_PT2PT, rreq);
    }
    return rc;
}

int weft_sendrecv_replace_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                               int sendtag, int source, int recvtag, weft_comm_t *comm,
                               MPI_Status *status)
{
    weft_request_t *reqs[2] = {NULL, NULL};
    MPI_Status      st[2];
    void           *copy = NULL;
    int             rc   = replace_start(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                         &reqs[0], &reqs[1], &copy);

    if (rc == MPI_SUCCESS) {
        rc = weft_request_waitall(2, reqs, st);
        status_out(status, &st[1], 0);
    }
    free(copy);
    return rc;
}

/* Non-blocking sendrecv: a request whose completion is that of both halves. */
typedef struct {
    weft_request_t *sreq, *rreq;
    void           *copy;
} pair_state_t;

static int pair_progress(weft_request_t *req)
{
    pair_state_t *p = req->state;
    if (weft_request_is_complete(p->sreq) && weft_request_is_complete(p->rreq)) {
        req->status = p->rreq->status;
        if (p->sreq->status.MPI_ERROR != MPI_SUCCESS) {
            req->status.MPI_ERROR = p->sreq->status.MPI_ERROR;
        }
        weft_request_complete(req);
    }
    return 0;
}

static void pair_free(weft_request_t *req)
{
    pair_state_t *p = req->state;
    if (p) {
        weft_request_free(p->sreq);
        weft_request_free(p->rreq);
        free(p->copy);
        free(p);
        req->state = NULL;
    }
}

static int pair_request(weft_comm_t *comm, weft_request_t *sreq, weft_request_t *rreq, void *copy,
                        MPI_Request *request)
{
    weft_request_t *r = weft_request_alloc(WEFT_REQ_COLL);
    pair_state_t   *p = malloc(sizeof(*p));

    if (r == NULL || p == NULL) {
        free(p);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    p->sreq = sreq;
    p->rreq = rreq;
    p->copy = copy;
    r->comm = comm;
    weft_comm_retain(comm);
    r->state    = p;
    r->progress = pair_progress;
    r->on_free  = pair_free;
    *request    = (MPI_Request)r;
    return MPI_SUCCESS;
}

int weft_isendrecv_impl(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                        int dest, int sendtag, void *recvbuf, MPI_Count recvcount,
                        weft_datatype_t *recvtype, int source, int recvtag, weft_comm_t *comm,
                        MPI_Request *request)
{
    weft_request_t *sreq, *rreq;
    int rc = weft_irecv(recvbuf, recvcount, recvtype, source, recvtag, comm, WEFT_CTX_PT2PT, &rreq);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_isend(sendbuf, sendcount, sendtype, dest, sendtag, comm, WEFT_CTX_PT2PT,
                    WEFT_SEND_STANDARD, &sreq);
    if (rc != MPI_SUCCESS) {
        weft_pt2pt_cancel(rreq);
        weft_request_wait(rreq, MPI_STATUS_IGNORE);
        return rc;
    }
    return pair_request(comm, sreq, rreq, NULL, request);
}

int weft_isendrecv_replace_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                                int sendtag, int source, int recvtag, weft_comm_t *comm,
                                MPI_Request *request)
{
    weft_request_t *sreq = NULL, *rreq = NULL;
    void           *copy = NULL;
    int rc = replace_start(buf, count, datatype, dest, sendtag, source, recvtag, comm, &sreq, &rreq,
                           &copy);
    if (rc != MPI_SUCCESS) {
        free(copy);
        return rc;
    }
    return pair_request(comm, sreq, rreq, copy, request);
}

/* ---- persistent requests ---------------------------------------------- */

static int persistent_init(weft_req_kind_t kind, const void *buf, MPI_Count count,
                           weft_datatype_t *dt, int peer, int tag, weft_comm_t *comm,
                           weft_send_mode_t mode, MPI_Request *request)
{
    weft_request_t *r = weft_request_alloc(kind);

    if (r == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->persistent = 1;
    r->buf        = (void *)buf;
    r->count      = count;
    r->datatype   = dt;
    weft_datatype_retain(dt);
    r->peer = peer;
    r->tag  = tag;
    r->comm = comm;
    weft_comm_retain(comm);
    r->mode  = mode;
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int weft_send_init_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                        int tag, weft_comm_t *comm, MPI_Request *request)
{
    return persistent_init(WEFT_REQ_SEND, buf, count, datatype, dest, tag, comm,
                           WEFT_SEND_STANDARD, request);
}

int weft_ssend_init_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                         int tag, weft_comm_t *comm, MPI_Request *request)
{
    return persistent_init(WEFT_REQ_SEND, buf, count, datatype, dest, tag, comm, WEFT_SEND_SYNC,
                           request);
}

int weft_rsend_init_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                         int tag, weft_comm_t *comm, MPI_Request *request)
{
    return persistent_init(WEFT_REQ_SEND, buf, count, datatype, dest, tag, comm, WEFT_SEND_READY,
                           request);
}

int weft_bsend_init_impl(const void *buf, MPI_Count count, weft_datatype_t *datatype, int dest,
                         int tag, weft_comm_t *comm, MPI_Request *request)
{
    return persistent_init(WEFT_REQ_SEND, buf, count, datatype, dest, tag, comm,
                           WEFT_SEND_BUFFERED, request);
}

int weft_recv_init_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, int source,
                        int tag, weft_comm_t *comm, MPI_Request *request)
{
    return persistent_init(WEFT_REQ_RECV, buf, count, datatype, source, tag, comm,
                           WEFT_SEND_STANDARD, request);
}

static int start_one(MPI_Request h, const char *arg)
{
    weft_request_t *r = req_of(h), *inner = NULL;
    int             rc;

    if (r == NULL || !r->persistent) {
        return r == NULL ? bad_request(arg)
                         : weft_error(MPI_ERR_REQUEST, "argument %s: not a persistent request", arg);
    }
    if (r->active) {
        return weft_error(MPI_ERR_REQUEST, "argument %s: request is already active", arg);
    }
    if (r->kind == WEFT_REQ_COLL) { /* persistent collectives restart their schedule */
        if (r->progress == NULL) {
            return weft_error(MPI_ERR_INTERN, "persistent collective without a schedule");
        }
        r->active = 1;
        /* One push now starts the schedule, so it progresses from MPI_Start
         * on (overlap), not from the first Wait/Test. */
        weft_request_t *t = r->state;
        if (t != NULL && t->progress != NULL) {
            t->progress(t);
        }
        return MPI_SUCCESS;
    }
    if (r->kind == WEFT_REQ_PARTITIONED) {
        rc = weft_part_start(r, &inner);
    } else if (r->kind == WEFT_REQ_RECV) {
        rc = weft_irecv(r->buf, r->count, r->datatype, r->peer, r->tag, r->comm, WEFT_CTX_PT2PT,
                        &inner);
    } else if (r->mode == WEFT_SEND_BUFFERED) {
        rc = weft_bsend_start(r->buf, r->count, r->datatype, r->peer, r->tag, r->comm);
        if (rc == MPI_SUCCESS && (inner = completed_request(WEFT_REQ_NOOP, NULL,
                                                            MPI_ANY_SOURCE)) == NULL) {
            rc = weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
        }
    } else {
        rc = weft_isend(r->buf, r->count, r->datatype, r->peer, r->tag, r->comm, WEFT_CTX_PT2PT,
                        r->mode, &inner);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    r->state  = inner;
    r->active = 1;
    return MPI_SUCCESS;
}

int weft_start_impl(MPI_Request *request)
{
    return start_one(*request, "request");
}

int weft_startall_impl(int count, MPI_Request array_of_requests[])
{
    for (int i = 0; i < count; i++) {
        int rc = start_one(array_of_requests[i], "array_of_requests");
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* ---- completion -------------------------------------------------------- */

static int check_array(int count, const MPI_Request reqs[])
{
    if (count > 0 && reqs == NULL) {
        return weft_error(MPI_ERR_ARG, "argument array_of_requests: NULL with count %d", count);
    }
    for (int i = 0; i < count; i++) {
        if (reqs[i] != MPI_REQUEST_NULL && req_of(reqs[i]) == NULL) {
            return weft_error(MPI_ERR_REQUEST, "argument array_of_requests[%d]: invalid or freed "
                              "request handle", i);
        }
    }
    return MPI_SUCCESS;
}

int weft_wait_impl(MPI_Request *request, MPI_Status *status)
{
    weft_request_t *r = req_of(*request);

    if (r == NULL && *request != MPI_REQUEST_NULL) {
        return bad_request("request");
    }
    if (r) {
        weft_err_set_comm(r->comm);
        wait_until(r);
    }
    return request_finish(request, status, 0);
}

int weft_test_impl(MPI_Request *request, int *flag, MPI_Status *status)
{
    weft_request_t *r = req_of(*request);

    if (r == NULL && *request != MPI_REQUEST_NULL) {
        return bad_request("request");
    }
    if (r) {
        weft_err_set_comm(r->comm);
    }
    if (!req_poll(r)) {
        weft_progress_poll();
    }
    *flag = req_poll(r);
    return *flag ? request_finish(request, status, 0) : MPI_SUCCESS;
}

/* Finish requests[i] for a multiple-completion call; collects the error. */
static void finish_multi(MPI_Request reqs[], int i, MPI_Status *statuses, int idx, int *any_err)
{
    MPI_Status *st = statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[idx];
    int         rc = request_finish(&reqs[i], st, 1);
    if (rc != MPI_SUCCESS) {
        *any_err = 1;
    }
}

int weft_waitall_impl(int count, MPI_Request array_of_requests[], MPI_Status *array_of_statuses)
{
    int any_err = 0;
    int rc      = check_array(count, array_of_requests);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < count; i++) {
        wait_until(req_of(array_of_requests[i]));
    }
    for (int i = 0; i < count; i++) {
        finish_multi(array_of_requests, i, array_of_statuses, i, &any_err);
    }
    if (any_err) {
        return weft_error(MPI_ERR_IN_STATUS, "at least one request failed; see the statuses");
    }
    return MPI_SUCCESS;
}

int weft_testall_impl(int count, MPI_Request array_of_requests[], int *flag,
                      MPI_Status *array_of_statuses)
{
    int any_err = 0, all = 1;
    int rc      = check_array(count, array_of_requests);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    for (int i = 0; i < count && all; i++) {
        all = req_poll(req_of(array_of_requests[i]));
    }
    *flag = all;
    if (!all) {
        return MPI_SUCCESS;
    }
    for (int i = 0; i < count; i++) {
        finish_multi(array_of_requests, i, array_of_statuses, i, &any_err);
    }
    return any_err ? weft_error(MPI_ERR_IN_STATUS, "at least one request failed; see the statuses")
                   : MPI_SUCCESS;
}

/* Index of a complete active request, -1 if none complete, count if none active. */
static int find_done(int count, MPI_Request reqs[])
{
    int active = 0;
    for (int i = 0; i < count; i++) {
        weft_request_t *t = req_target(req_of(reqs[i]));
        if (t == NULL) {
            continue;
        }
        active++;
        if (req_poll(req_of(reqs[i]))) {
            return i;
        }
    }
    return active ? -1 : count;
}

int weft_waitany_impl(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    weft_wait_t w = {0};
    int         rc = check_array(count, array_of_requests), i;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    while ((i = find_done(count, array_of_requests)) < 0) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    if (i == count) {
        *indx = MPI_UNDEFINED;
        if (status != MPI_STATUS_IGNORE) {
            status_empty(status);
        }
        return MPI_SUCCESS;
    }
    *indx = i;
    return request_finish(&array_of_requests[i], status, 0);
}

int weft_testany_impl(int count, MPI_Request array_of_requests[], int *indx, int *flag,
                      MPI_Status *status)
{
    int rc = check_array(count, array_of_requests), i;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    i = find_done(count, array_of_requests);
    if (i < 0) {
        *flag = 0;
        *indx = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    *flag = 1;
    if (i == count) {
        *indx = MPI_UNDEFINED;
        if (status != MPI_STATUS_IGNORE) {
            status_empty(status);
        }
        return MPI_SUCCESS;
    }
    *indx = i;
    return request_finish(&array_of_requests[i], status, 0);
}

static int collect_some(int incount, MPI_Request reqs[], int *outcount, int indices[],
                        MPI_Status *statuses)
{
    int n = 0, active = 0, any_err = 0;

    for (int i = 0; i < incount; i++) {
        if (req_target(req_of(reqs[i])) == NULL) {
            continue;
        }
        active++;
        if (req_poll(req_of(reqs[i]))) {
            indices[n] = i;
            finish_multi(reqs, i, statuses, n, &any_err);
            n++;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return any_err ? weft_error(MPI_ERR_IN_STATUS, "at least one request failed; see the statuses")
                   : MPI_SUCCESS;
}

int weft_waitsome_impl(int incount, MPI_Request array_of_requests[], int *outcount,
                       int array_of_indices[], MPI_Status *array_of_statuses)
{
    weft_wait_t w = {0};
    int         rc = check_array(incount, array_of_requests), i;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    while ((i = find_done(incount, array_of_requests)) < 0) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    return collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

int weft_testsome_impl(int incount, MPI_Request array_of_requests[], int *outcount,
                       int array_of_indices[], MPI_Status *array_of_statuses)
{
    int rc = check_array(incount, array_of_requests);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    return collect_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses);
}

/* Request_get_status*: like Test but the requests stay allocated. */
static void peek_status(MPI_Request h, MPI_Status *status)
{
    weft_request_t *t = req_target(req_of(h));
    MPI_Status      st;

    if (status == MPI_STATUS_IGNORE) {
        return;
    }
    if (t == NULL) { /* the empty status, MPI_ERROR included */
        status_empty(&st);
        st.MPI_ERROR = MPI_SUCCESS;
        status_out(status, &st, 1);
        return;
    } else {
        st = t->status;
        if (t->kind == WEFT_REQ_GREQ) {
            ((MPI_Grequest_query_function *)t->greq_query)(t->greq_extra, &st);
        }
    }
    status_out(status, &st, 0);
}

int weft_request_get_status_impl(MPI_Request request, int *flag, MPI_Status *status)
{
    if (request != MPI_REQUEST_NULL && req_of(request) == NULL) {
        return bad_request("request");
    }
    if (!req_poll(req_of(request))) {
        weft_progress_poll();
    }
    *flag = req_poll(req_of(request));
    if (*flag) {
        peek_status(request, status);
    }
    return MPI_SUCCESS;
}

int weft_request_get_status_all_impl(int count, const MPI_Request array_of_requests[], int *flag,
                                     MPI_Status *array_of_statuses)
{
    int rc = check_array(count, array_of_requests), all = 1;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    for (int i = 0; i < count && all; i++) {
        all = req_poll(req_of(array_of_requests[i]));
    }
    *flag = all;
    for (int i = 0; all && i < count && array_of_statuses != MPI_STATUSES_IGNORE; i++) {
        peek_status(array_of_requests[i], &array_of_statuses[i]);
    }
    return MPI_SUCCESS;
}

int weft_request_get_status_any_impl(int count, const MPI_Request array_of_requests[], int *indx,
                                     int *flag, MPI_Status *status)
{
    int rc = check_array(count, array_of_requests), i;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    i     = find_done(count, (MPI_Request *)array_of_requests);
    *flag = i >= 0;
    *indx = (i >= 0 && i < count) ? i : MPI_UNDEFINED;
    if (i >= 0) {
        peek_status(i < count ? array_of_requests[i] : MPI_REQUEST_NULL, status);
    }
    return MPI_SUCCESS;
}

int weft_request_get_status_some_impl(int incount, const MPI_Request array_of_requests[],
                                      int *outcount, int array_of_indices[],
                                      MPI_Status *array_of_statuses)
{
    int rc = check_array(incount, array_of_requests), n = 0, active = 0;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_progress_poll();
    for (int i = 0; i < incount; i++) {
        if (req_target(req_of(array_of_requests[i])) == NULL) {
            continue;
        }
        active++;
        if (req_poll(req_of(array_of_requests[i]))) {
            array_of_indices[n] = i;
            peek_status(array_of_requests[i], array_of_statuses == MPI_STATUSES_IGNORE
                                                  ? MPI_STATUS_IGNORE : &array_of_statuses[n]);
            n++;
        }
    }
    *outcount = active ? n : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int weft_request_free_impl(MPI_Request *request)
{
    weft_request_t *r = req_of(*request);

    if (r == NULL) {
        return bad_request("request");
    }
    if (r->persistent) {
        if (r->active && !req_poll(r)) {
            zombie_add((weft_request_t *)r->state);
        } else if (r->active) {
            weft_request_free((weft_request_t *)r->state);
        }
        r->state = NULL;
        weft_request_free(r);
    } else if (weft_request_is_complete(r)) {
        weft_request_free(r);
    } else if (r->kind == WEFT_REQ_GREQ) {
        r->freed = 1; /* MPI_Grequest_complete frees it (and calls free_fn) */
    } else {
        zombie_add(r);
    }
    *request = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

int weft_cancel_impl(MPI_Request *request)
{
    weft_request_t *r = req_of(*request), *t;

    if (r == NULL) {
        return bad_request("request");
    }
    t = req_target(r);
    if (t == NULL) {
        return MPI_SUCCESS;
    }
    if (t->kind == WEFT_REQ_GREQ) {
        int rc = ((MPI_Grequest_cancel_function *)t->greq_cancel)(t->greq_extra,
                                                                   weft_request_is_complete(t));
        return rc;
    }
    weft_pt2pt_cancel(t);
    return MPI_SUCCESS;
}

int weft_test_cancelled_impl(const MPI_Status *status, int *flag)
{
    *flag = weft_status_get_cancelled(status);
    return MPI_SUCCESS;
}

/* ---- probes and matched probes ------------------------------------------ */

weft_message_t *weft_builtin_message[2];
static weft_message_t message_no_proc;

static void probe_status(MPI_Status *status, const weft_unexp_t *u)
{
    MPI_Status st;

    if (status == MPI_STATUS_IGNORE) {
        return;
    }
    status_empty(&st);
    st.MPI_SOURCE = u->src;
    st.MPI_TAG    = u->tag;
    weft_status_set_bytes(&st, u->bytes);
    status_out(status, &st, 0);
}

static void proc_null_status(MPI_Status *status)
{
    MPI_Status st;
    if (status != MPI_STATUS_IGNORE) {
        status_empty(&st);
        st.MPI_SOURCE = MPI_PROC_NULL;
        status_out(status, &st, 0);
    }
}

static weft_unexp_t *probe_wait(int source, int tag, weft_comm_t *comm, int remove)
{
    weft_wait_t   w = {0};
    weft_unexp_t *u;

    while ((u = weft_pt2pt_find_unexpected(comm->context_id, source, tag, remove)) == NULL) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    return u;
}

int weft_probe_impl(int source, int tag, weft_comm_t *comm, MPI_Status *status)
{
    if (source == MPI_PROC_NULL) {
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    probe_status(status, probe_wait(source, tag, comm, 0));
    return MPI_SUCCESS;
}

int weft_iprobe_impl(int source, int tag, weft_comm_t *comm, int *flag, MPI_Status *status)
{
    weft_unexp_t *u;

    if (source == MPI_PROC_NULL) {
        *flag = 1;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    u = weft_pt2pt_find_unexpected(comm->context_id, source, tag, 0);
    if (u == NULL) {
        weft_progress_poll();
        u = weft_pt2pt_find_unexpected(comm->context_id, source, tag, 0);
    }
    *flag = u != NULL;
    if (u) {
        probe_status(status, u);
    }
    return MPI_SUCCESS;
}

static int message_new(weft_unexp_t *u, weft_comm_t *comm, MPI_Message *message)
{
    weft_message_t *m = malloc(sizeof(*m));

    if (m == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a message handle");
    }
    weft_object_init(&m->hdr, WEFT_KIND_MESSAGE, 0);
    m->msg  = u;
    m->comm = comm;
    weft_comm_retain(comm);
    *message = (MPI_Message)m;
    return MPI_SUCCESS;
}

int weft_mprobe_impl(int source, int tag, weft_comm_t *comm, MPI_Message *message,
                     MPI_Status *status)
{
    weft_unexp_t *u;

    if (source == MPI_PROC_NULL) {
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    u = probe_wait(source, tag, comm, 1);
    probe_status(status, u);
    return message_new(u, comm, message);
}

int weft_improbe_impl(int source, int tag, weft_comm_t *comm, int *flag, MPI_Message *message,
                      MPI_Status *status)
{
    weft_unexp_t *u;

    if (source == MPI_PROC_NULL) {
        *flag    = 1;
        *message = MPI_MESSAGE_NO_PROC;
        proc_null_status(status);
        return MPI_SUCCESS;
    }
    u = weft_pt2pt_find_unexpected(comm->context_id, source, tag, 1);
    if (u == NULL) {
        weft_progress_poll();
        u = weft_pt2pt_find_unexpected(comm->context_id, source, tag, 1);
    }
    *flag = u != NULL;
    if (u == NULL) {
        return MPI_SUCCESS;
    }
    probe_status(status, u);
    return message_new(u, comm, message);
}

static int mrecv_start(void *buf, MPI_Count count, weft_datatype_t *dt, MPI_Message *message,
                       weft_request_t **req_p)
{
    weft_message_t *m;
    weft_request_t *r;

    if (*message == MPI_MESSAGE_NO_PROC) {
        if ((r = completed_request(WEFT_REQ_RECV, NULL, MPI_PROC_NULL)) == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
        }
        *message = MPI_MESSAGE_NULL;
        *req_p   = r;
        return MPI_SUCCESS;
    }
    m = weft_object_valid(*message, WEFT_KIND_MESSAGE) ? (weft_message_t *)*message : NULL;
    if (m == NULL) {
        return weft_error(MPI_ERR_REQUEST, "argument message: invalid or already received message "
                          "handle");
    }
    r = weft_request_alloc(WEFT_REQ_RECV);
    if (r == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->comm     = m->comm; /* the message's reference moves to the request */
    weft_err_set_comm(m->comm);
    r->datatype = dt;
    weft_datatype_retain(dt);
    r->buf   = buf;
    r->count = count;
    weft_pt2pt_recv_unexpected(r, m->msg);
    m->hdr.magic = WEFT_MAGIC_FREED;
    free(m);
    *message = MPI_MESSAGE_NULL;
    *req_p   = r;
    return MPI_SUCCESS;
}

int weft_mrecv_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, MPI_Message *message,
                    MPI_Status *status)
{
    weft_request_t *r = NULL;
    MPI_Status      st;
    int             rc = mrecv_start(buf, count, datatype, message, &r);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_request_wait(r, &st);
    status_out(status, &st, 0);
    return rc == MPI_ERR_TRUNCATE ? truncated(&st, count * datatype->size) : rc;
}

int weft_imrecv_impl(void *buf, MPI_Count count, weft_datatype_t *datatype, MPI_Message *message,
                     MPI_Request *request)
{
    weft_request_t *r  = NULL;
    int             rc = mrecv_start(buf, count, datatype, message, &r);

    if (rc == MPI_SUCCESS) {
        *request = (MPI_Request)r;
    }
    return rc;
}

/* ---- status ------------------------------------------------------------ */

int weft_get_count_c_impl(const MPI_Status *status, weft_datatype_t *datatype, MPI_Count *count)
{
    MPI_Count bytes = weft_status_get_bytes(status);

    if (datatype->size == 0) {
        *count = bytes == 0 ? 0 : MPI_UNDEFINED;
    } else if (bytes % datatype->size != 0) {
        *count = MPI_UNDEFINED;
    } else {
        *count = bytes / datatype->size;
    }
    return MPI_SUCCESS;
}

int weft_get_count_impl(const MPI_Status *status, weft_datatype_t *datatype, int *count)
{
    MPI_Count c;

    weft_get_count_c_impl(status, datatype, &c);
    *count = c > 0x7fffffff ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}

int weft_status_set_cancelled_impl(MPI_Status *status, int flag)
{
    weft_status_set_cancelled(status, flag);
    return MPI_SUCCESS;
}

int weft_status_set_error_impl(MPI_Status *status, int error)
{
    status->MPI_ERROR = error;
    return MPI_SUCCESS;
}

int weft_status_set_source_impl(MPI_Status *status, int source)
{
    status->MPI_SOURCE = source;
    return MPI_SUCCESS;
}

int weft_status_set_tag_impl(MPI_Status *status, int tag)
{
    status->MPI_TAG = tag;
    return MPI_SUCCESS;
}

int weft_status_get_error_impl(const MPI_Status *status, int *error)
{
    *error = status->MPI_ERROR;
    return MPI_SUCCESS;
}

int weft_status_get_source_impl(const MPI_Status *status, int *source)
{
    *source = status->MPI_SOURCE;
    return MPI_SUCCESS;
}

int weft_status_get_tag_impl(const MPI_Status *status, int *tag)
{
    *tag = status->MPI_TAG;
    return MPI_SUCCESS;
}

/* ---- generalized requests ---------------------------------------------- */

static void greq_on_free(weft_request_t *r)
{
    if (r->greq_free) {
        ((MPI_Grequest_free_function *)r->greq_free)(r->greq_extra);
    }
}

int weft_grequest_start_impl(MPI_Grequest_query_function *query_fn,
                             MPI_Grequest_free_function *free_fn,
                             MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                             MPI_Request *request)
{
    weft_request_t *r = weft_request_alloc(WEFT_REQ_GREQ);

    if (r == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->greq_query  = (void *)query_fn;
    r->greq_free   = (void *)free_fn;
    r->greq_cancel = (void *)cancel_fn;
    r->greq_extra  = extra_state;
    r->on_free     = greq_on_free; /* free_fn runs whenever the request goes */
    r->comm        = &weft_comm_self;
    weft_comm_retain(r->comm);
    status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int weft_grequest_complete_impl(MPI_Request request)
{
    weft_request_t *r = req_of(request);

    if (r == NULL || r->kind != WEFT_REQ_GREQ) {
        return weft_error(MPI_ERR_REQUEST, "argument request: not a generalized request");
    }
    weft_request_complete(r);
    if (r->freed) { /* MPI_Request_free came first: free_fn runs now */
        weft_request_free(r);
    }
    return MPI_SUCCESS;
}

int weft_pt2pt_api_busy(void)
{
    reap_zombies();
    return weft_bsend_busy() || zombies != NULL;
}

/* ---- module setup --------------------------------------------------------- */

__attribute__((constructor)) static void message_builtins(void)
{
    weft_object_init(&message_no_proc.hdr, WEFT_KIND_MESSAGE, (uintptr_t)MPI_MESSAGE_NO_PROC);
    weft_builtin_message[0] = NULL;
    weft_builtin_message[1] = &message_no_proc;
}
