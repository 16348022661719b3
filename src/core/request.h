/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Requests: one struct for every kind of pending operation, allocated from a
 * pool (no malloc on the fast path). A request is complete when `complete`
 * is set; its MPI_Status is then valid. Persistent requests stay allocated
 * between MPI_Start calls; others are freed when waited on.
 */
#ifndef WEFT_CORE_REQUEST_H
#define WEFT_CORE_REQUEST_H

#include <stdint.h>
#include <sys/uio.h>
#include "core/object.h"

typedef enum {
    WEFT_REQ_SEND = 1,
    WEFT_REQ_RECV,
    WEFT_REQ_GREQ,      /* generalized request */
    WEFT_REQ_COLL,      /* non-blocking or persistent collective (schedule) */
    WEFT_REQ_PARTITIONED,
    WEFT_REQ_NOOP       /* completes at start (PROC_NULL persistent ops) */
} weft_req_kind_t;

typedef enum {
    WEFT_SEND_STANDARD = 0,
    WEFT_SEND_SYNC,
    WEFT_SEND_READY,
    WEFT_SEND_BUFFERED
} weft_send_mode_t;

/* Context offsets: user pt2pt and internal collective traffic of one
 * communicator never match each other. */
#define WEFT_CTX_PT2PT 0u
#define WEFT_CTX_COLL  1u

typedef int (*weft_req_progress_fn_t)(weft_request_t *req); /* for COLL: advance */
typedef void (*weft_req_free_fn_t)(weft_request_t *req);
/* A failed request being completed by a call (Wait, Test, ..._end): records
 * the reason in that call and routes its error handler. */
typedef void (*weft_req_error_fn_t)(weft_request_t *req);

struct weft_request {
    weft_object_t          hdr;
    weft_req_kind_t        kind;
    volatile int           complete;
    int                    persistent;
    int                    active;       /* persistent: started and not yet completed */
    int                    freed;        /* MPI_Request_free called while active */
    int                    cancelled;
    MPI_Status             status;
    weft_comm_t           *comm;         /* for errors and matching */

    /* The operation (pt2pt) */
    void                  *buf;
    MPI_Count              count;
    weft_datatype_t       *datatype;
    int                    peer;         /* rank in comm (or MPI_ANY_SOURCE/PROC_NULL) */
    int                    tag;
    uint32_t               context;      /* comm->context_id + offset */
    weft_send_mode_t       mode;
    MPI_Count              bytes;        /* packed size of the operation */

    /* Matching queue links (posted receives) and send queues. */
    weft_request_t        *next, *prev;
    /* MPI_Request_free of an active request: the list of those awaiting
     * completion (its own link: the request may still sit in a matching
     * queue through next/prev). */
    weft_request_t        *zombie_next;

    /* Protocol state owned by pt2pt.c / the transports. */
    void                  *pack_buf;     /* packed copy for non-contiguous eager data */
    struct iovec          *iov;          /* rendezvous: sender-side iov list */
    int                    iov_count;
    uint64_t               proto[4];

    /* COLL and GREQ: callbacks and state. */
    weft_req_progress_fn_t progress;
    weft_req_free_fn_t     on_free;
    weft_req_error_fn_t    on_error; /* NULL: the error belongs to comm */
    void                  *state;
    void                  *greq_query, *greq_free, *greq_cancel, *greq_extra;

    /* PARTITIONED: the channel's state (pt2pt_part.c). */
    struct weft_part      *part;

    /* Failed because a process was lost: its process id + 1 (0: not), and
     * its rank in comm (-1 unknown), for the error message. */
    int                    failed_peer;
    int                    failed_rank;
};

/* Allocate a zeroed request of kind with refcount 1 from the pool. */
weft_request_t *weft_request_alloc(weft_req_kind_t kind);
/* Return a request to the pool (releases its comm/datatype references). */
void weft_request_free(weft_request_t *req);

/* Mark complete (status already filled). Safe to call from progress. */
static inline void weft_request_complete(weft_request_t *req)
{
    __atomic_store_n(&req->complete, 1, __ATOMIC_RELEASE);
}

static inline int weft_request_is_complete(const weft_request_t *req)
{
    return __atomic_load_n(&req->complete, __ATOMIC_ACQUIRE);
}

/* Block until req completes (progressing everything). Copies the status out
 * (unless status is MPI_STATUS_IGNORE), frees non-persistent requests and
 * marks persistent ones inactive. Returns the request's error code. */
int weft_request_wait(weft_request_t *req, MPI_Status *status);

/* Wait for all n (entries may be NULL); statuses may be MPI_STATUSES_IGNORE. */
int weft_request_waitall(int n, weft_request_t **reqs, MPI_Status *statuses);

/* Complete a request finished by progress with an error (asynchronous
 * failure): sets status.MPI_ERROR then completes. */
void weft_request_fail(weft_request_t *req, int mpi_errno);

/* Call fn for every pool request that is allocated and not complete (slow:
 * for the rare events that must find requests no queue holds). */
void weft_request_foreach_live(void (*fn)(weft_request_t *req, void *arg), void *arg);

#endif
