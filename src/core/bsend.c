/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Buffered sends and their buffers. MPI-4.1 order: a send on a
 * communicator uses the communicator's buffer if one is attached, else the
 * buffer of the session the communicator derives from, else the process's.
 * Each buffer holds packed copies of outgoing messages; each block is freed
 * when its send completes. MPI_BUFFER_AUTOMATIC: every message gets its own
 * allocation, so a buffered send never fails for lack of room.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/bsend.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/status.h"

typedef struct bsend_block {
    struct bsend_block *next;
    MPI_Count           offset, size;
    void               *mem;   /* automatic mode: the block's own memory */
    weft_request_t     *req;
} bsend_block_t;

typedef struct bsend_buf {
    struct bsend_buf *next;     /* all buffers, for reaping */
    const void       *owner;    /* communicator or session; NULL: the process buffer */
    char             *buffer;
    MPI_Count         size;
    int               attached, automatic;
    bsend_block_t    *blocks;   /* sorted by offset */
} bsend_buf_t;

static bsend_buf_t  bsend_process;
/* Owner of records whose communicator or session is gone; owner_buffer
 * recycles them (never freed while a reap may be walking them). */
static const char   bsend_orphan;
static bsend_buf_t *bsend_all = &bsend_process;

static void bsend_reap_one(bsend_buf_t *bb)
{
    bsend_block_t **link = &bb->blocks;
    while (*link) {
        bsend_block_t *b = *link;
        if (weft_request_is_complete(b->req)) {
            /* unlink first: freeing the request may release the last
             * reference of its communicator, whose teardown flushes (and
             * so reaps) buffers again */
            *link = b->next;
            weft_request_free(b->req);
            free(b->mem);
            free(b);
        } else {
            link = &b->next;
        }
    }
}

int weft_bsend_busy(void)
{
    int busy = 0;
    for (bsend_buf_t *bb = bsend_all; bb != NULL; bb = bb->next) {
        bsend_reap_one(bb);
        busy |= bb->blocks != NULL;
    }
    return busy;
}

static bsend_buf_t *attached_of(const void *owner)
{
    for (bsend_buf_t *bb = bsend_all; owner != NULL && bb != NULL; bb = bb->next) {
        if (bb->owner == owner && bb->attached) {
            return bb;
        }
    }
    return NULL;
}

static bsend_buf_t *bsend_of_comm(weft_comm_t *comm)
{
    bsend_buf_t *bb = attached_of(comm);

    if (bb == NULL) {
        bb = attached_of(comm->session);
    }
    return bb != NULL ? bb : &bsend_process;
}

int weft_bsend_start(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                       weft_comm_t *comm)
{
    bsend_buf_t    *bb    = bsend_of_comm(comm);
    MPI_Count       bytes = count * dt->size;
    MPI_Count       need  = bytes + MPI_BSEND_OVERHEAD;
    MPI_Count       at    = 0;
    bsend_block_t **link;
    bsend_block_t  *b;
    void           *copy;
    int             rc;

    if (dest == MPI_PROC_NULL) {
        return MPI_SUCCESS;
    }
    bsend_reap_one(bb);
    for (link = &bb->blocks; *link && !bb->automatic; link = &(*link)->next) {
        if ((*link)->offset - at >= need) {
            break;
        }
        at = (*link)->offset + (*link)->size;
    }
    if (!bb->automatic && (!bb->attached || at + need > bb->size)) {
        return weft_error(MPI_ERR_BUFFER,
                          "no room in the attached buffer for a %lld-byte message (needs %lld "
                          "bytes including MPI_BSEND_OVERHEAD; buffer is %lld bytes, %s)",
                          (long long)bytes, (long long)need, (long long)bb->size,
                          bb->attached ? "partly in use" : "none attached");
    }
    b = calloc(1, sizeof(*b));
    if (b == NULL || (bb->automatic && (b->mem = malloc(bytes > 0 ? (size_t)bytes : 1)) == NULL)) {
        free(b);
        return weft_error(MPI_ERR_NO_MEM, "cannot buffer a %lld-byte message", (long long)bytes);
    }
    copy = bb->automatic ? b->mem : bb->buffer + at;
    weft_dt_pack(dt, count, buf, 0, copy, bytes);
    rc = weft_isend(copy, bytes, weft_datatype_from_handle(MPI_PACKED), dest, tag, comm,
                    WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, &b->req);
    if (rc != MPI_SUCCESS) {
        free(b->mem);
        free(b);
        return rc;
    }
    b->offset = at;
    b->size   = need;
    b->next   = *link;
    *link     = b;
    return MPI_SUCCESS;
}

static int buffer_attach(bsend_buf_t *bb, void *buffer, MPI_Count size)
{
    if (bb->attached) {
        return weft_error(MPI_ERR_BUFFER, "a buffer is already attached (detach it first)");
    }
    if (buffer == NULL && size > 0) {
        return weft_error(MPI_ERR_BUFFER, "argument buffer: NULL");
    }
    bb->automatic = buffer == MPI_BUFFER_AUTOMATIC;
    bb->buffer    = bb->automatic ? NULL : buffer;
    bb->size      = bb->automatic ? 0 : size;
    bb->attached  = 1;
    return MPI_SUCCESS;
}

static void buffer_flush(bsend_buf_t *bb)
{
    weft_wait_t w = {0};

    for (bsend_reap_one(bb); bb->blocks != NULL; bsend_reap_one(bb)) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

/* Detach blocks until the buffered messages have left. */
static int buffer_detach(bsend_buf_t *bb, void *buffer_addr, MPI_Count *size)
{
    if (!bb->attached) {
        return weft_error(MPI_ERR_BUFFER, "no buffer is attached");
    }
    buffer_flush(bb);
    *(void **)buffer_addr = bb->automatic ? MPI_BUFFER_AUTOMATIC : bb->buffer;
    *size                 = bb->size;
    bb->buffer            = NULL;
    bb->size              = 0;
    bb->attached          = 0;
    return MPI_SUCCESS;
}

/* The buffer record of a communicator or session, created on first use. */
static bsend_buf_t *owner_buffer(const void *owner)
{
    for (bsend_buf_t *bb = bsend_all; bb != NULL; bb = bb->next) {
        if (bb->owner == owner) {
            return bb;
        }
    }
    for (bsend_buf_t *bb = bsend_all; bb != NULL; bb = bb->next) {
        if (bb->owner == &bsend_orphan && bb->blocks == NULL) {
            bb->owner = owner;
            return bb;
        }
    }
    bsend_buf_t *bb = calloc(1, sizeof(*bb));
    if (bb != NULL) {
        bb->owner          = owner;
        bb->next           = bsend_process.next;
        bsend_process.next = bb;
    }
    return bb;
}

/* Non-blocking flush: a request completing once the buffer is empty. */
static int iflush_progress(weft_request_t *req)
{
    bsend_buf_t *bb = req->state;
    bsend_reap_one(bb);
    if (bb->blocks == NULL) {
        weft_status_set_bytes(&req->status, 0); /* the empty status */
        weft_request_complete(req);
    }
    return 0;
}

static int buffer_iflush(bsend_buf_t *bb, weft_comm_t *comm, MPI_Request *request)
{
    weft_request_t *r = weft_request_alloc(WEFT_REQ_COLL);

    if (r == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->comm = comm;
    weft_comm_retain(comm);
    r->state    = bb;
    r->progress = iflush_progress;
    iflush_progress(r);
    *request = (MPI_Request)r;
    return MPI_SUCCESS;
}

/* Attach/detach for the buffer of owner (a communicator or session; NULL:
 * the process's). */
static int owner_attach(const void *owner, void *buffer, MPI_Count size)
{
    bsend_buf_t *bb = owner_buffer(owner);
    return bb ? buffer_attach(bb, buffer, size) : weft_error(MPI_ERR_NO_MEM, "out of memory");
}

static int owner_detach(const void *owner, void *buffer_addr, MPI_Count *size)
{
    bsend_buf_t *bb = owner_buffer(owner);
    return bb ? buffer_detach(bb, buffer_addr, size) : weft_error(MPI_ERR_NO_MEM, "out of memory");
}

static int owner_detach_int(const void *owner, void *buffer_addr, int *size)
{
    MPI_Count s  = 0;
    int       rc = owner_detach(owner, buffer_addr, &s);
    if (rc == MPI_SUCCESS) {
        *size = (int)s;
    }
    return rc;
}

int weft_buffer_attach_impl(void *buffer, MPI_Count size)
{
    return owner_attach(NULL, buffer, size);
}

int weft_buffer_flush_impl(void)
{
    buffer_flush(&bsend_process);
    return MPI_SUCCESS;
}

int weft_buffer_iflush_impl(MPI_Request *request)
{
    return buffer_iflush(&bsend_process, &weft_comm_self, request);
}

int weft_buffer_detach_c_impl(void *buffer_addr, MPI_Count *size)
{
    return owner_detach(NULL, buffer_addr, size);
}

int weft_buffer_detach_impl(void *buffer_addr, int *size)
{
    return owner_detach_int(NULL, buffer_addr, size);
}

int weft_comm_attach_buffer_impl(weft_comm_t *comm, void *buffer, MPI_Count size)
{
    return owner_attach(comm, buffer, size);
}

int weft_comm_detach_buffer_c_impl(weft_comm_t *comm, void *buffer_addr, MPI_Count *size)
{
    return owner_detach(comm, buffer_addr, size);
}

int weft_comm_detach_buffer_impl(weft_comm_t *comm, void *buffer_addr, int *size)
{
    return owner_detach_int(comm, buffer_addr, size);
}

int weft_comm_flush_buffer_impl(weft_comm_t *comm)
{
    buffer_flush(bsend_of_comm(comm));
    return MPI_SUCCESS;
}

int weft_comm_iflush_buffer_impl(weft_comm_t *comm, MPI_Request *request)
{
    return buffer_iflush(bsend_of_comm(comm), comm, request);
}

int weft_session_attach_buffer_impl(weft_session_t *session, void *buffer, MPI_Count size)
{
    return owner_attach(session, buffer, size);
}

int weft_session_detach_buffer_c_impl(weft_session_t *session, void *buffer_addr, MPI_Count *size)
{
    return owner_detach(session, buffer_addr, size);
}

int weft_session_detach_buffer_impl(weft_session_t *session, void *buffer_addr, int *size)
{
    return owner_detach_int(session, buffer_addr, size);
}

int weft_session_flush_buffer_impl(weft_session_t *session)
{
    bsend_buf_t *bb = attached_of(session);
    if (bb != NULL) {
        buffer_flush(bb);
    }
    return MPI_SUCCESS;
}

int weft_session_iflush_buffer_impl(weft_session_t *session, MPI_Request *request)
{
    bsend_buf_t *bb = attached_of(session);
    /* no buffer attached: a request that is complete at once */
    return buffer_iflush(bb != NULL ? bb : owner_buffer(session), &weft_comm_self, request);
}

void weft_bsend_owner_fini(const void *owner)
{
    for (bsend_buf_t *bb = bsend_process.next; bb != NULL; bb = bb->next) {
        if (bb->owner == owner) {
            buffer_flush(bb); /* the messages still go out */
            bb->owner     = &bsend_orphan;
            bb->buffer    = NULL;
            bb->size      = 0;
            bb->attached  = 0;
            bb->automatic = 0;
            return;
        }
    }
}
