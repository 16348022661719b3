/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Impls of the request-completion entry points: MPI_Wait*, MPI_Test*,
 * MPI_Request_*, MPI_Cancel, MPI_Get_count, MPI_Status_* and MPI_Grequest_*.
 * Kept apart from pt2pt_api.c (which starts operations) because completion
 * serves every kind of request: pt2pt, collective, partitioned, generalized.
 *
 * Completion calls share one path (request_finish) that builds the
 * user's status, runs generalized-request callbacks and releases or
 * deactivates the request.
 */
#include "api_impl.h"
#include "core/bsend.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt_internal.h"
#include "core/runtime.h"
#include "core/status.h"

/* ---- helpers ----------------------------------------------------------- */

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
    weft_request_t *r = p2p_request_of(*handle);
    weft_request_t *t = req_target(r);
    MPI_Status      st;
    int             rc;

    if (t == NULL) { /* the empty status, MPI_ERROR included */
        p2p_status_empty(&st);
        st.MPI_ERROR = MPI_SUCCESS;
        p2p_status_out(status, &st, 1);
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
    p2p_status_out(status, &st, with_error);
    if (rc != MPI_SUCCESS) {
        /* The error belongs to the request's communicator (its handler runs). */
        weft_err_set_comm(t->comm ? t->comm : r->comm);
        if (rc == MPI_ERR_TRUNCATE) {
            p2p_truncate_error(&st, t->count * (t->datatype ? t->datatype->size : 0));
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

/* ---- completion -------------------------------------------------------- */

static int check_array(int count, const MPI_Request reqs[])
{
    if (count > 0 && reqs == NULL) {
        return weft_error(MPI_ERR_ARG, "argument array_of_requests: NULL with count %d", count);
    }
    for (int i = 0; i < count; i++) {
        if (reqs[i] != MPI_REQUEST_NULL && p2p_request_of(reqs[i]) == NULL) {
            return weft_error(MPI_ERR_REQUEST, "argument array_of_requests[%d]: invalid or freed "
                              "request handle", i);
        }
    }
    return MPI_SUCCESS;
}

int weft_wait_impl(MPI_Request *request, MPI_Status *status)
{
    weft_request_t *r = p2p_request_of(*request);

    if (r == NULL && *request != MPI_REQUEST_NULL) {
        return p2p_bad_request("request");
    }
    if (r) {
        weft_err_set_comm(r->comm);
        wait_until(r);
    }
    return request_finish(request, status, 0);
}

int weft_test_impl(MPI_Request *request, int *flag, MPI_Status *status)
{
    weft_request_t *r = p2p_request_of(*request);

    if (r == NULL && *request != MPI_REQUEST_NULL) {
        return p2p_bad_request("request");
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
        wait_until(p2p_request_of(array_of_requests[i]));
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
        all = req_poll(p2p_request_of(array_of_requests[i]));
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
        weft_request_t *t = req_target(p2p_request_of(reqs[i]));
        if (t == NULL) {
            continue;
        }
        active++;
        if (req_poll(p2p_request_of(reqs[i]))) {
            return i;
        }
    }
    return active ? -1 : count;
}

/* Progress until find_done has an answer for the array (a done index, or
 * count when nothing is active). */
static int wait_for_done(int count, MPI_Request array_of_requests[])
{
    weft_wait_t w = {0};
    int         i;

    while ((i = find_done(count, array_of_requests)) < 0) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    return i;
}

int weft_waitany_impl(int count, MPI_Request array_of_requests[], int *indx, MPI_Status *status)
{
    int rc = check_array(count, array_of_requests), i;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    i = wait_for_done(count, array_of_requests);
    if (i == count) {
        *indx = MPI_UNDEFINED;
        if (status != MPI_STATUS_IGNORE) {
            p2p_status_empty(status);
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
            p2p_status_empty(status);
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
        if (req_target(p2p_request_of(reqs[i])) == NULL) {
            continue;
        }
        active++;
        if (req_poll(p2p_request_of(reqs[i]))) {
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
    int rc = check_array(incount, array_of_requests);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    (void)wait_for_done(incount, array_of_requests);
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
    weft_request_t *t = req_target(p2p_request_of(h));
    MPI_Status      st;

    if (status == MPI_STATUS_IGNORE) {
        return;
    }
    if (t == NULL) { /* the empty status, MPI_ERROR included */
        p2p_status_empty(&st);
        st.MPI_ERROR = MPI_SUCCESS;
        p2p_status_out(status, &st, 1);
        return;
    } else {
        st = t->status;
        if (t->kind == WEFT_REQ_GREQ) {
            ((MPI_Grequest_query_function *)t->greq_query)(t->greq_extra, &st);
        }
    }
    p2p_status_out(status, &st, 0);
}

int weft_request_get_status_impl(MPI_Request request, int *flag, MPI_Status *status)
{
    if (request != MPI_REQUEST_NULL && p2p_request_of(request) == NULL) {
        return p2p_bad_request("request");
    }
    if (!req_poll(p2p_request_of(request))) {
        weft_progress_poll();
    }
    *flag = req_poll(p2p_request_of(request));
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
        all = req_poll(p2p_request_of(array_of_requests[i]));
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
        if (req_target(p2p_request_of(array_of_requests[i])) == NULL) {
            continue;
        }
        active++;
        if (req_poll(p2p_request_of(array_of_requests[i]))) {
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
    weft_request_t *r = p2p_request_of(*request);

    if (r == NULL) {
        return p2p_bad_request("request");
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
    weft_request_t *r = p2p_request_of(*request), *t;

    if (r == NULL) {
        return p2p_bad_request("request");
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
    p2p_status_empty(&r->status);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

int weft_grequest_complete_impl(MPI_Request request)
{
    weft_request_t *r = p2p_request_of(request);

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
