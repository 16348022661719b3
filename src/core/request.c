/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Request pool and the wait primitive every blocking call builds on.
 */
#include "core/request.h"

#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/dev/peer.h"
#include "core/datatype.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "core/status.h"

#define REQUEST_CHUNK 256

static weft_request_t *free_list;

/* Every chunk ever allocated, so a lost process's requests can be found
 * (weft_request_foreach_live); chunks are never returned. */
static weft_request_t **chunks;
static int              nchunks, cap_chunks;

weft_request_t *weft_builtin_request[1]; /* MPI_REQUEST_NULL maps to NULL */

weft_request_t *weft_request_alloc(weft_req_kind_t kind)
{
    weft_request_t *req = free_list;

    if (req == NULL) {
        weft_request_t *chunk = calloc(REQUEST_CHUNK, sizeof(*chunk));
        if (chunk == NULL) {
            return NULL;
        }
        if (nchunks == cap_chunks) {
            int              cap = cap_chunks ? 2 * cap_chunks : 16;
            weft_request_t **c   = realloc(chunks, sizeof(*c) * (size_t)cap);
            if (c == NULL) {
                free(chunk);
                return NULL;
            }
            chunks     = c;
            cap_chunks = cap;
        }
        chunks[nchunks++] = chunk;
        /* Chunks are never returned to malloc: requests are recycled. */
        for (int i = 1; i < REQUEST_CHUNK; i++) {
            chunk[i].next = i + 1 < REQUEST_CHUNK ? &chunk[i + 1] : NULL;
        }
        free_list = &chunk[1];
        req       = &chunk[0];
    } else {
        free_list = req->next;
    }
    memset(req, 0, sizeof(*req));
    weft_object_init(&req->hdr, WEFT_KIND_REQUEST, 0);
    req->kind              = kind;
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG    = MPI_ANY_TAG;
    return req;
}

void weft_request_free(weft_request_t *req)
{
    if (req->on_free) {
        req->on_free(req);
    }
    if (req->comm) {
        weft_comm_release(req->comm);
    }
    if (req->datatype) {
        weft_datatype_release(req->datatype);
    }
    free(req->pack_buf);
    free(req->iov);
    req->hdr.magic = WEFT_MAGIC_FREED;
    req->next      = free_list;
    free_list      = req;
}

void weft_request_foreach_live(void (*fn)(weft_request_t *req, void *arg), void *arg)
{
    for (int c = 0; c < nchunks; c++) {
        for (int i = 0; i < REQUEST_CHUNK; i++) {
            weft_request_t *r = &chunks[c][i];
            if (r->hdr.magic == WEFT_MAGIC(WEFT_KIND_REQUEST) && !weft_request_is_complete(r)) {
                fn(r, arg);
            }
        }
    }
}

void weft_request_fail(weft_request_t *req, int mpi_errno)
{
    req->status.MPI_ERROR = mpi_errno;
    weft_request_complete(req);
}

int weft_request_wait(weft_request_t *req, MPI_Status *status)
{
    weft_wait_t w = {0};
    int         rc;

    while (!weft_request_is_complete(req)) {
        if (req->progress != NULL) {
            req->progress(req);
            if (weft_request_is_complete(req)) {
                break;
            }
        }
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    rc = req->status.MPI_ERROR;
    if (req->failed_peer > 0) { /* the message names the lost process */
        weft_dev_lost_error(req->failed_peer - 1, req->failed_rank);
    }
    if (rc != MPI_SUCCESS && req->on_error != NULL) {
        req->on_error(req);
    }
    if (status != MPI_STATUS_IGNORE) {
        *status = req->status;
    }
    weft_request_free(req);
    return rc;
}

int weft_request_waitall(int n, weft_request_t **reqs, MPI_Status *statuses)
{
    int rc = MPI_SUCCESS;

    for (int i = 0; i < n; i++) {
        if (reqs[i] == NULL) {
            continue;
        }
        int r = weft_request_wait(reqs[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE
                                                                            : &statuses[i]);
        reqs[i] = NULL;
        if (r != MPI_SUCCESS && rc == MPI_SUCCESS) {
            rc = r;
        }
    }
    return rc;
}
