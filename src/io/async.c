/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-blocking independent file access (MPI_File_iread/iwrite[_at|_shared]
 * and their _c forms) in the background: the call checks its arguments,
 * moves the file pointer by the amount requested (as the standard says) and
 * queues the transfer for one I/O worker thread per process, which runs the
 * same engine as the blocking calls (packing, pread/pwrite, data sieving).
 * The request completes only when the worker is done with the data: a
 * progress hook hands finished transfers back to the MPI thread, which fills
 * the status and completes the request, so MPI_Test/Wait see it complete
 * through the ordinary progress engine.
 *
 * The worker and the MPI threads never touch the same file at once:
 * weft_file_t.xfer_lock serialises transfers of one file (a data-sieving
 * read-modify-write must not interleave with another write of the window).
 * MPI_File_close and MPI_Finalize wait for the file's queued transfers.
 *
 * The same worker runs the file I/O steps of background collectives
 * (nbcoll.c, twophase.c): weft_io_job_post queues fn(arg), the owner polls
 * weft_io_job_test from the progress engine (no request, no done list), or
 * sleeps in weft_io_job_wait (a blocking two-phase write overlapping its
 * next round's exchanges with the previous round's write).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/request.h"
#include "core/runtime.h"

struct io_job {
    struct io_job   *next;
    weft_file_t     *fh;
    int            (*fn)(void *); /* a file I/O step of a background collective (else a transfer) */
    void            *arg;
    int              done;        /* fn jobs: set by the worker, polled by their owner */
    int              writing;
    MPI_Offset       pos; /* etypes, absolute in the view */
    void            *buf;
    MPI_Count        count;
    weft_datatype_t *dt;
    MPI_Offset       nbytes;
    weft_request_t  *req;
    int              rc;
    char            *reason; /* the worker's recorded reason when rc failed */
    const char      *call;   /* the MPI call that posted a transfer */
    MPI_Status       status;
};
typedef struct io_job io_job_t;

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t  q_cond = PTHREAD_COND_INITIALIZER;
static pthread_cond_t  job_cond = PTHREAD_COND_INITIALIZER; /* a fn job finished (weft_io_job_wait) */
static io_job_t       *todo_head, *todo_tail, *done_head;
static int             ndone; /* read without the lock by the progress hook */
static int             worker_up, stopping;
static pthread_t       worker;

static void *worker_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&q_lock);
    for (;;) {
        io_job_t *j = todo_head;
        if (j == NULL) {
            if (stopping) {
                break;
            }
            pthread_cond_wait(&q_cond, &q_lock);
            continue;
        }
        todo_head = j->next;
        if (todo_head == NULL) {
            todo_tail = NULL;
        }
        pthread_mutex_unlock(&q_lock);
        weft_err_begin("MPI-IO worker"); /* this job's reason only */
        if (j->fn != NULL) {
            j->rc = weft_io_locked(j->fh, j->fn, j->arg);
            if (j->rc != MPI_SUCCESS) {
                j->reason = weft_io_reason_copy();
            }
            __atomic_store_n(&j->done, 1, __ATOMIC_RELEASE); /* the owner frees it: touch it no more */
            pthread_mutex_lock(&q_lock);
            pthread_cond_broadcast(&job_cond);
            continue;
        }
        j->rc = weft_io_transfer(j->fh, j->writing, j->pos, j->buf, j->count, j->dt, j->nbytes, &j->status);
        if (j->rc != MPI_SUCCESS) {
            j->reason = weft_io_reason_copy();
        }
        pthread_mutex_lock(&q_lock);
        j->next   = done_head;
        done_head = j;
        __atomic_add_fetch(&ndone, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&q_lock);
    weft_err_thread_end();
    return NULL;
}

/* Progress hook (MPI thread): complete the requests of finished transfers. */
static int async_progress(void)
{
    io_job_t *list;
    int       n = 0;

    if (__atomic_load_n(&ndone, __ATOMIC_ACQUIRE) == 0) {
        return 0;
    }
    pthread_mutex_lock(&q_lock);
    list      = done_head;
    done_head = NULL;
    __atomic_store_n(&ndone, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&q_lock);
    while (list != NULL) {
        io_job_t *j = list;
        list        = j->next;
        j->req->status = j->status;
        weft_datatype_release(j->dt);
        __atomic_sub_fetch(&j->fh->async_pending, 1, __ATOMIC_RELEASE);
        if (j->rc != MPI_SUCCESS) {
            weft_io_request_fail(j->req, j->fh, j->call, j->rc, j->reason);
        } else {
            j->req->status.MPI_ERROR = MPI_SUCCESS;
            weft_request_complete(j->req);
        }
        free(j);
        n++;
    }
    return n;
}

static void async_finalize(void)
{
    if (!worker_up) {
        return;
    }
    pthread_mutex_lock(&q_lock);
    stopping = 1;
    pthread_cond_signal(&q_cond);
    pthread_mutex_unlock(&q_lock);
    pthread_join(worker, NULL);
    async_progress(); /* requests nobody waited for: completed, never leaked as running */
    worker_up = stopping = 0;
}

int weft_io_worker_start(void)
{
    if (worker_up) {
        return MPI_SUCCESS;
    }
    if (pthread_create(&worker, NULL, worker_main, NULL) != 0) {
        return weft_error(MPI_ERR_OTHER, "cannot start the I/O worker thread for non-blocking file access");
    }
    worker_up = 1;
    weft_progress_register(async_progress);
    weft_finalize_register(async_finalize);
    return MPI_SUCCESS;
}

static void enqueue(io_job_t *j)
{
    pthread_mutex_lock(&q_lock);
    if (todo_tail) {
        todo_tail->next = j;
    } else {
        todo_head = j;
    }
    todo_tail = j;
    pthread_cond_signal(&q_cond);
    pthread_mutex_unlock(&q_lock);
}

int weft_io_locked(weft_file_t *fh, int (*fn)(void *), void *arg)
{
    int rc;

    pthread_mutex_lock(&fh->xfer_lock);
    rc = fn(arg);
    pthread_mutex_unlock(&fh->xfer_lock);
    return rc;
}

int weft_io_job_post(weft_file_t *fh, int (*fn)(void *), void *arg, weft_io_job_t **job)
{
    io_job_t *j;
    int       rc = weft_io_worker_start();

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if ((j = calloc(1, sizeof(*j))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate an I/O job (file \"%s\")", fh->path);
    }
    j->fh  = fh;
    j->fn  = fn;
    j->arg = arg;
    *job   = j;
    enqueue(j);
    return MPI_SUCCESS;
}

int weft_io_job_test(weft_io_job_t *job, int *rc)
{
    if (!__atomic_load_n(&job->done, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    *rc = job->rc;
    if (job->reason != NULL) {
        weft_error(job->rc, "%s", job->reason);
        free(job->reason);
    }
    free(job);
    return 1;
}

int weft_io_job_wait(weft_io_job_t *job, int *rc)
{
    /* done is set before the worker takes q_lock to broadcast: checked
     * under q_lock, no wakeup is lost */
    pthread_mutex_lock(&q_lock);
    while (!__atomic_load_n(&job->done, __ATOMIC_ACQUIRE)) {
        pthread_cond_wait(&job_cond, &q_lock);
    }
    pthread_mutex_unlock(&q_lock);
    return weft_io_job_test(job, rc);
}

int weft_io_post(weft_file_t *fh, int writing, MPI_Offset pos, void *buf, MPI_Count count, weft_datatype_t *dt,
                 MPI_Offset nbytes, MPI_Request *request)
{
    io_job_t       *j;
    weft_request_t *r;
    int             rc = weft_io_worker_start();

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    j = calloc(1, sizeof(*j));
    r = j ? weft_request_alloc(WEFT_REQ_NOOP) : NULL;
    if (r == NULL) {
        free(j);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request (file \"%s\")", fh->path);
    }
    weft_datatype_retain(dt);
    *j = (io_job_t){.fh = fh, .writing = writing, .pos = pos, .buf = buf, .count = count, .dt = dt,
                    .nbytes = nbytes, .req = r, .call = weft_err_fname()};
    __atomic_add_fetch(&fh->async_pending, 1, __ATOMIC_RELAXED);
    enqueue(j);
    *request = (MPI_Request)weft_object_handle(r);
    return MPI_SUCCESS;
}

void weft_io_drain(weft_file_t *fh)
{
    weft_wait_t w = {0};

    while (__atomic_load_n(&fh->async_pending, __ATOMIC_ACQUIRE) > 0) {
        if (async_progress() == 0 && weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

/* ---- errors found in the background ------------------------------------------------ */

typedef struct {
    MPI_File file;
    char     text[];
} bg_error_t;

char *weft_io_reason_copy(void)
{
    return weft_err_has_reason() ? strdup(weft_err_reason()) : NULL;
}

/* The completing call (MPI thread): its message and its handler. */
static void bg_error_report(weft_request_t *r)
{
    bg_error_t *e = r->state;

    weft_error(r->status.MPI_ERROR, "%s", e->text);
    weft_err_set_file(e->file);
}

static void bg_error_free(weft_request_t *r)
{
    free(r->state);
    r->state = NULL;
}

void weft_io_request_fail(weft_request_t *r, weft_file_t *fh, const char *call, int rc, char *reason)
{
    size_t      n = strlen(call) + strlen(fh->path) + (reason ? strlen(reason) : 0) + 64;
    bg_error_t *e = malloc(sizeof(*e) + n);

    if (e != NULL) { /* else the class alone, on the request's default route */
        if (reason != NULL) {
            snprintf(e->text, n, "%s, in the background: %s", call, reason);
        } else {
            snprintf(e->text, n, "%s on file \"%s\", in the background: failed", call, fh->path);
        }
        e->file     = (MPI_File)fh;
        r->state    = e;
        r->on_error = bg_error_report;
        r->on_free  = bg_error_free;
    }
    free(reason);
    weft_request_fail(r, rc);
}
