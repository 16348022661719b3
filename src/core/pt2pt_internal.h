/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Point-to-point internals shared by pt2pt.c, pt2pt_api.c, request_api.c and
 * progress.c.
 */
#ifndef WEFT_CORE_PT2PT_INTERNAL_H
#define WEFT_CORE_PT2PT_INTERNAL_H

#include "core/errors.h"
#include "core/pt2pt.h"
#include "core/status.h"

int  weft_pt2pt_module_init(void);
void weft_pt2pt_module_fini(void);
/* Deferred work: queued sends, control messages, 2-copy pipelines. */
int  weft_pt2pt_progress(void);
/* Push out everything queued by this rank (finalize). */
int  weft_pt2pt_drain(void);

/* An arrived message nobody has asked for yet. */
typedef struct weft_unexp {
    struct weft_unexp *next, *prev;   /* every entry, in arrival order */
    struct weft_unexp *bnext, *bprev; /* its (context, source) bucket, in arrival order */
    uint32_t           context;
    int32_t            src;      /* rank in the communicator */
    int32_t            tag;
    uint8_t            type;     /* protocol message type */
    uint8_t            held;     /* counted in its local sender's held bytes */
    int8_t             pool_class; /* data came from the payload pool (class), else -1 */
    int                peer;     /* local index of the sender */
    MPI_Count          bytes;    /* message size */
    void              *data;     /* eager payload (inline or malloc'd) */
    uint64_t           rts[5];   /* rendezvous descriptor */
    weft_request_t    *self_sreq; /* self-send waiting for its match */
    uint64_t           arrived_ns; /* for the weft_unexp_queue_time pvar */
    char               inline_data[48];
} weft_unexp_t;

/* Probe support: find (and optionally remove) the first unexpected message
 * matching (context, source, tag). */
weft_unexp_t *weft_pt2pt_find_unexpected(uint32_t context, int source, int tag, int remove);
/* Start receiving an unexpected message removed from the queue (Mrecv). */
void weft_pt2pt_recv_unexpected(weft_request_t *req, weft_unexp_t *u);

/* Buffered sends or freed-but-active requests still outstanding (request_api.c). */
int weft_pt2pt_api_busy(void);

/* Cancel a pending operation; returns 1 if it was cancelled. */
int weft_pt2pt_cancel(weft_request_t *req);

struct weft_message {
    weft_object_t hdr;
    weft_unexp_t *msg;  /* NULL for MPI_MESSAGE_NO_PROC */
    weft_comm_t  *comm;
};

/* Helpers of the impls in pt2pt_api.c and request_api.c. */

static inline int p2p_truncate_error(const MPI_Status *st, MPI_Count cap)
{
    return weft_error(MPI_ERR_TRUNCATE, "message from rank %d (tag %d) is longer than the "
                      "%lld-byte receive buffer; the first %lld bytes were delivered",
                      st->MPI_SOURCE, st->MPI_TAG, (long long)cap, (long long)cap);
}

static inline void p2p_status_empty(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG    = MPI_ANY_TAG;
    weft_status_set_bytes(st, 0);
    weft_status_set_cancelled(st, 0);
}

/* Status copy for single-completion calls, which leave MPI_ERROR alone. */
static inline void p2p_status_out(MPI_Status *out, const MPI_Status *in, int with_error)
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

static inline weft_request_t *p2p_request_of(MPI_Request h)
{
    if (h == MPI_REQUEST_NULL) {
        return NULL;
    }
    return weft_object_valid(h, WEFT_KIND_REQUEST) ? (weft_request_t *)h : NULL;
}

static inline int p2p_bad_request(const char *arg)
{
    return weft_error(MPI_ERR_REQUEST, "argument %s: invalid or freed request handle", arg);
}

#endif
