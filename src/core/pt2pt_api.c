/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Impls of the point-to-point entry points: sends and receives, persistent
 * requests, probes and matched probes. Completing requests (Wait/Test,
 * request queries), status and generalized requests are in request_api.c.
 *
 * Request handles are weft_request_t pointers. A persistent request keeps its
 * arguments and, while active, points (state) at the inner request doing the
 * work.
 */
#include <stdlib.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/bsend.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt_internal.h"
#include "core/pt2pt_part.h"
#include "core/status.h"

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
    p2p_status_empty(&r->status);
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
        p2p_status_empty(&st);
        st.MPI_SOURCE = MPI_PROC_NULL;
        p2p_status_out(status, &st, 0);
        return MPI_SUCCESS;
    }
    rc = weft_recv_now(buf, count, datatype, source, tag, comm, WEFT_CTX_PT2PT, &st);
    p2p_status_out(status, &st, 0);
    return rc == MPI_ERR_TRUNCATE ? p2p_truncate_error(&st, count * datatype->size) : rc;
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
    p2p_status_out(status, &st, 0);
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
        p2p_status_out(status, &st[1], 0);
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
    weft_request_t *r = p2p_request_of(h), *inner = NULL;
    int             rc;

    if (r == NULL || !r->persistent) {
        return r == NULL ? p2p_bad_request(arg)
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

/* ---- probes and matched probes ------------------------------------------ */

weft_message_t *weft_builtin_message[2];
static weft_message_t message_no_proc;

static void probe_status(MPI_Status *status, const weft_unexp_t *u)
{
    MPI_Status st;

    if (status == MPI_STATUS_IGNORE) {
        return;
    }
    p2p_status_empty(&st);
    st.MPI_SOURCE = u->src;
    st.MPI_TAG    = u->tag;
    weft_status_set_bytes(&st, u->bytes);
    p2p_status_out(status, &st, 0);
}

static void proc_null_status(MPI_Status *status)
{
    MPI_Status st;
    if (status != MPI_STATUS_IGNORE) {
        p2p_status_empty(&st);
        st.MPI_SOURCE = MPI_PROC_NULL;
        p2p_status_out(status, &st, 0);
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
    p2p_status_out(status, &st, 0);
    return rc == MPI_ERR_TRUNCATE ? p2p_truncate_error(&st, count * datatype->size) : rc;
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

/* ---- module setup --------------------------------------------------------- */

__attribute__((constructor)) static void message_builtins(void)
{
    weft_object_init(&message_no_proc.hdr, WEFT_KIND_MESSAGE, (uintptr_t)MPI_MESSAGE_NO_PROC);
    weft_builtin_message[0] = NULL;
    weft_builtin_message[1] = &message_no_proc;
}
