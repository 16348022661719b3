/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The schedule engine: an ordered list of steps cut into stages by fences.
 * Starting a stage runs its local steps (reduce, copy) and posts its
 * transfers in order; the next stage starts when every transfer of the
 * current one completed. A stage's local steps come first in the order the
 * builder appended them, so "reduce what the last stage received, then send
 * the result" is one stage.
 *
 * Scratch memory comes from a small cache of recently freed blocks: large
 * temporaries (1 MiB reductions) would otherwise be mmap'd and faulted in at
 * every call.
 *
 * Non-blocking schedules sit on one list advanced by a progress hook, so a
 * started collective moves whenever the application is inside any MPI call,
 * not only in Wait/Test on its own request.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll_internal.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/runtime.h"

enum { STEP_SEND = 1, STEP_RECV, STEP_REDUCE, STEP_COPY, STEP_FENCE, STEP_POLL };

/* stage_start: a poll step is not finished yet; advance returns. */
#define STAGE_BLOCKED (-1)

typedef struct {
    int              kind;
    int              chan;  /* SEND/RECV: index into s->chans */
    int              peer;
    const void      *src;
    void            *dst;
    MPI_Count        count, count2;
    weft_datatype_t *dt, *dt2;
    weft_op_t       *op;
    weft_sched_poll_fn_t poll; /* STEP_POLL: poll(dst, first, &rc), 1 when done */
    int                  entered;
} step_t;

typedef struct {
    weft_comm_t *comm;
    int          tag;
} chan_t;

#define MAX_CHANS 4

struct weft_sched {
    step_t          *steps;
    int              nsteps, cap;
    int              pos;        /* next step to start */
    int              started, done;
    int              busy;       /* inside advance: point-to-point calls may
                                    run progress hooks, which must not
                                    re-enter this schedule */
    int              rc;
    chan_t           chans[MAX_CHANS];
    int              nchans;
    weft_request_t **pending;    /* transfers of the current stage */
    int              npending, pcap;
    void           **bufs;       /* scratch blocks */
    size_t          *buf_sizes;
    int              nbufs, bcap;
    weft_datatype_t *held_dt[4];
    weft_op_t       *held_op;
    int              nheld;
    weft_request_t  *req;        /* non-blocking: completed when done */
    weft_sched_t    *next;       /* active list */
    step_t           inline_steps[16];
};

/* ---- scratch cache ------------------------------------------------------- */

#define CACHE_SLOTS 8

static struct {
    void  *p;
    size_t size;
} cache[CACHE_SLOTS];

static void *scratch_get(size_t want, size_t *got)
{
    int best = -1;
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (cache[i].p && cache[i].size >= want &&
            (best < 0 || cache[i].size < cache[best].size)) {
            best = i;
        }
    }
    if (best >= 0 && cache[best].size <= 4 * want + 4096) {
        void *p     = cache[best].p;
        *got        = cache[best].size;
        cache[best].p = NULL;
        return p;
    }
    *got = want;
    return malloc(want);
}

static void scratch_put(void *p, size_t size)
{
    int slot = -1;
    if (size > ((size_t)64 << 20)) {
        free(p);
        return;
    }
    for (int i = 0; i < CACHE_SLOTS; i++) {
        if (cache[i].p == NULL) {
            slot = i;
            break;
        }
        if (slot < 0 || cache[i].size < cache[slot].size) {
            slot = i;
        }
    }
    if (cache[slot].p != NULL) {
        if (cache[slot].size >= size) {
            free(p);
            return;
        }
        free(cache[slot].p);
    }
    cache[slot].p    = p;
    cache[slot].size = size;
}

/* ---- building -------------------------------------------------------------- */

weft_datatype_t *weft_coll_byte;

/* Finished schedules are kept (with their pending/scratch arrays) for the
 * next call: a small blocking collective then allocates nothing. */
#define SCHED_POOL_MAX 4
static weft_sched_t *sched_pool;
static int           sched_pool_n;

static weft_sched_t *sched_alloc(void)
{
    weft_sched_t *s = sched_pool;

    if (s == NULL) {
        return calloc(1, sizeof(*s));
    }
    sched_pool = s->next;
    sched_pool_n--;
    weft_request_t **pending   = s->pending;
    void           **bufs      = s->bufs;
    size_t          *buf_sizes = s->buf_sizes;
    int              pcap = s->pcap, bcap = s->bcap;
    memset(s, 0, offsetof(weft_sched_t, inline_steps));
    s->pending   = pending;
    s->pcap      = pcap;
    s->bufs      = bufs;
    s->buf_sizes = buf_sizes;
    s->bcap      = bcap;
    return s;
}

weft_sched_t *weft_sched_new(weft_comm_t *comm)
{
    weft_sched_t *s = sched_alloc();
    if (s == NULL) {
        return NULL;
    }
    s->steps = s->inline_steps;
    s->cap   = (int)(sizeof(s->inline_steps) / sizeof(s->inline_steps[0]));
    if (weft_coll_byte == NULL) {
        weft_coll_byte = weft_datatype_from_handle(MPI_BYTE);
    }
    if (comm != NULL && weft_sched_use(s, comm) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

void weft_sched_free(weft_sched_t *s)
{
    if (s == NULL) {
        return;
    }
    for (int i = 0; i < s->npending; i++) {
        if (s->pending[i]) {
            weft_request_free(s->pending[i]);
        }
    }
    for (int i = 0; i < s->nbufs; i++) {
        scratch_put(s->bufs[i], s->buf_sizes[i]);
    }
    for (int i = 0; i < s->nheld; i++) {
        weft_datatype_release(s->held_dt[i]);
    }
    if (s->held_op) {
        weft_op_release(s->held_op);
    }
    for (int i = 0; i < s->nchans; i++) {
        weft_comm_release(s->chans[i].comm);
    }
    if (s->steps != s->inline_steps) {
        free(s->steps);
    }
    if (sched_pool_n < SCHED_POOL_MAX) {
        s->next    = sched_pool;
        sched_pool = s;
        sched_pool_n++;
        return;
    }
    free(s->pending);
    free(s->bufs);
    free(s->buf_sizes);
    free(s);
}

static int chan_of(weft_sched_t *s, weft_comm_t *comm)
{
    for (int i = 0; i < s->nchans; i++) {
        if (s->chans[i].comm == comm) {
            return i;
        }
    }
    return -1;
}

int weft_sched_use(weft_sched_t *s, weft_comm_t *comm)
{
    if (chan_of(s, comm) >= 0) {
        return MPI_SUCCESS;
    }
    if (s->nchans == MAX_CHANS) {
        return weft_error(MPI_ERR_INTERN, "collective schedule uses too many communicators");
    }
    weft_comm_retain(comm);
    s->chans[s->nchans].comm = comm;
    s->chans[s->nchans].tag  = weft_coll_next_tag(comm);
    s->nchans++;
    return MPI_SUCCESS;
}

static step_t *step_add(weft_sched_t *s, int kind)
{
    if (s->nsteps == s->cap) {
        int     ncap = s->cap * 2;
        step_t *n    = malloc((size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return NULL;
        }
        memcpy(n, s->steps, (size_t)s->nsteps * sizeof(*n));
        if (s->steps != s->inline_steps) {
            free(s->steps);
        }
        s->steps = n;
        s->cap   = ncap;
    }
    step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof(*st));
    st->kind = kind;
    return st;
}

static int no_mem(void)
{
    return weft_error(MPI_ERR_NO_MEM, "no memory for a collective schedule");
}

static int xfer(weft_sched_t *s, int kind, const void *buf, MPI_Count count, weft_datatype_t *dt,
                int peer, weft_comm_t *comm)
{
    int c = chan_of(s, comm);
    if (c < 0) {
        int rc = weft_sched_use(s, comm);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        c = s->nchans - 1;
    }
    step_t *st = step_add(s, kind);
    if (st == NULL) {
        return no_mem();
    }
    st->chan  = c;
    st->peer  = peer;
    st->src   = buf;
    st->dst   = (void *)buf;
    st->count = count;
    st->dt    = dt;
    return MPI_SUCCESS;
}

int weft_sched_send(weft_sched_t *s, const void *buf, MPI_Count count, weft_datatype_t *dt,
                    int peer, weft_comm_t *comm)
{
    return xfer(s, STEP_SEND, buf, count, dt, peer, comm);
}

int weft_sched_recv(weft_sched_t *s, void *buf, MPI_Count count, weft_datatype_t *dt, int peer,
                    weft_comm_t *comm)
{
    return xfer(s, STEP_RECV, buf, count, dt, peer, comm);
}

int weft_sched_reduce(weft_sched_t *s, const void *in, void *inout, MPI_Count count,
                      weft_datatype_t *dt, weft_op_t *op)
{
    if (count == 0) {
        return MPI_SUCCESS;
    }
    step_t *st = step_add(s, STEP_REDUCE);
    if (st == NULL) {
        return no_mem();
    }
    st->src   = in;
    st->dst   = inout;
    st->count = count;
    st->dt    = dt;
    st->op    = op;
    return MPI_SUCCESS;
}

int weft_sched_copy(weft_sched_t *s, const void *sbuf, MPI_Count scount, weft_datatype_t *sdt,
                    void *rbuf, MPI_Count rcount, weft_datatype_t *rdt)
{
    if (scount == 0 || rcount == 0 || sdt->size == 0) {
        return MPI_SUCCESS;
    }
    step_t *st = step_add(s, STEP_COPY);
    if (st == NULL) {
        return no_mem();
    }
    st->src    = sbuf;
    st->dst    = rbuf;
    st->count  = scount;
    st->dt     = sdt;
    st->count2 = rcount;
    st->dt2    = rdt;
    return MPI_SUCCESS;
}

int weft_sched_fence(weft_sched_t *s)
{
    if (s->nsteps == 0 || s->steps[s->nsteps - 1].kind == STEP_FENCE) {
        return MPI_SUCCESS;
    }
    return step_add(s, STEP_FENCE) ? MPI_SUCCESS : no_mem();
}

int weft_sched_poll(weft_sched_t *s, weft_sched_poll_fn_t fn, void *state)
{
    step_t *st = step_add(s, STEP_POLL);
    if (st == NULL) {
        return no_mem();
    }
    st->poll = fn;
    st->dst  = state;
    return MPI_SUCCESS;
}

void *weft_sched_alloc(weft_sched_t *s, size_t bytes)
{
    if (s->nbufs == s->bcap) {
        int     ncap = s->bcap ? s->bcap * 2 : 4;
        void  **nb   = realloc(s->bufs, (size_t)ncap * sizeof(*nb));
        if (nb == NULL) {
            return NULL;
        }
        s->bufs = nb;
        size_t *ns = realloc(s->buf_sizes, (size_t)ncap * sizeof(*ns));
        if (ns == NULL) {
            return NULL;
        }
        s->buf_sizes = ns;
        s->bcap      = ncap;
    }
    size_t got;
    void  *p = scratch_get(bytes ? bytes : 1, &got);
    if (p == NULL) {
        return NULL;
    }
    s->bufs[s->nbufs]      = p;
    s->buf_sizes[s->nbufs] = got;
    s->nbufs++;
    return p;
}

void *weft_sched_tmp(weft_sched_t *s, MPI_Count count, const weft_datatype_t *dt)
{
    if (count <= 0) {
        return weft_sched_alloc(s, 1);
    }
    MPI_Aint span = dt->true_extent + (MPI_Aint)(count - 1) * dt->extent;
    char    *p    = weft_sched_alloc(s, (size_t)span);
    return p ? p - dt->true_lb : NULL;
}

int weft_sched_hold(weft_sched_t *s, weft_datatype_t *dt, weft_op_t *op)
{
    if (dt && !dt->builtin) {
        if (s->nheld == 4) {
            return weft_error(MPI_ERR_INTERN, "schedule holds too many datatypes");
        }
        weft_datatype_retain(dt);
        s->held_dt[s->nheld++] = dt;
    }
    if (op && !weft_op_is_builtin(op) && s->held_op == NULL) {
        weft_op_retain(op);
        s->held_op = op;
    }
    return MPI_SUCCESS;
}

/* ---- running ------------------------------------------------------------------ */

static int pending_add(weft_sched_t *s, weft_request_t *r)
{
    if (s->npending == s->pcap) {
        int              ncap = s->pcap ? s->pcap * 2 : 8;
        weft_request_t **n    = realloc(s->pending, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return no_mem();
        }
        s->pending = n;
        s->pcap    = ncap;
    }
    s->pending[s->npending++] = r;
    return MPI_SUCCESS;
}

static int stage_start(weft_sched_t *s)
{
    while (s->pos < s->nsteps) {
        step_t         *st = &s->steps[s->pos++];
        weft_request_t *r  = NULL;
        int             rc = MPI_SUCCESS;
        switch (st->kind) {
        case STEP_FENCE:
            return MPI_SUCCESS;
        case STEP_SEND:
            rc = weft_isend(st->src, st->count, st->dt, st->peer, s->chans[st->chan].tag,
                            s->chans[st->chan].comm, WEFT_CTX_COLL, WEFT_SEND_STANDARD, &r);
            break;
        case STEP_RECV:
            rc = weft_irecv(st->dst, st->count, st->dt, st->peer, s->chans[st->chan].tag,
                            s->chans[st->chan].comm, WEFT_CTX_COLL, &r);
            break;
        case STEP_REDUCE:
            rc = weft_op_reduce(st->op, st->src, st->dst, st->count, st->dt);
            break;
        case STEP_COPY:
            weft_dt_copy(st->src, st->count, st->dt, st->dst, st->count2, st->dt2);
            /* A rank's own block larger than its place (bad counts, as a
             * receive would report): the class only, as for a receive */
            if (st->count * st->dt->size > st->count2 * st->dt2->size) {
                rc = MPI_ERR_TRUNCATE;
            }
            break;
        case STEP_POLL: {
            int first   = !st->entered;
            st->entered = 1;
            if (!st->poll(st->dst, first, &rc)) {
                s->pos--; /* poll it again on the next advance */
                return STAGE_BLOCKED;
            }
            break;
        }
        default:
            break;
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        if (r != NULL) {
            rc = pending_add(s, r);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        }
    }
    return MPI_SUCCESS;
}

static int advance(weft_sched_t *s, int *rc_p);

int weft_sched_advance(weft_sched_t *s, int *rc_p)
{
    if (s->done) {
        *rc_p = s->rc;
        return 1;
    }
    if (s->busy) {
        return 0;
    }
    s->busy = 1;
    int r   = advance(s, rc_p);
    s->busy = 0;
    return r;
}

static int advance(weft_sched_t *s, int *rc_p)
{
    for (;;) {
        for (int i = 0; i < s->npending; i++) {
            if (!weft_request_is_complete(s->pending[i])) {
                return 0;
            }
        }
        for (int i = 0; i < s->npending; i++) {
            weft_request_t *r = s->pending[i];
            if (r->status.MPI_ERROR != MPI_SUCCESS && s->rc == MPI_SUCCESS) {
                s->rc = r->status.MPI_ERROR;
            }
            weft_request_free(r);
        }
        s->npending = 0;
        /* An error (a truncated receive when ranks passed different counts)
         * does not stop the schedule: the peers still expect our later
         * messages, and leaving them out would hang them. The first error is
         * what the call returns. */
        if (s->pos >= s->nsteps) {
            s->done = 1;
            *rc_p   = s->rc;
            return 1;
        }
        int rc = stage_start(s);
        if (rc == STAGE_BLOCKED) {
            return 0;
        }
        if (rc != MPI_SUCCESS && s->rc == MPI_SUCCESS) {
            s->rc = rc;
        }
    }
}

void weft_sched_rewind(weft_sched_t *s)
{
    for (int i = 0; i < s->nsteps; i++) {
        s->steps[i].entered = 0;
    }
    s->pos     = 0;
    s->done    = 0;
    s->rc      = MPI_SUCCESS;
    s->started = 0;
    /* The tag taken at init is kept: a persistent operation is never active
     * twice at once, and per-pair ordering keeps successive starts apart. */
}

int weft_sched_run(weft_sched_t *s)
{
    weft_wait_t w = {0};
    int         rc;

    s->started = 1;
    while (!weft_sched_advance(s, &rc)) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    weft_sched_free(s);
    return rc;
}

/* ---- background schedules ------------------------------------------------------- */

static weft_sched_t *active;
static int           hook_registered;

static void finish(weft_sched_t *s, int rc)
{
    weft_request_t *req = s->req;
    s->req              = NULL;
    req->status.MPI_ERROR = rc;
    weft_request_complete(req);
}

static int active_progress(void)
{
    static int     running;
    weft_sched_t **link = &active;
    int            n    = 0;

    if (running) { /* a transfer posted below ran the progress hooks */
        return 0;
    }
    running = 1;

    while (*link) {
        weft_sched_t *s = *link;
        int           rc;
        if (weft_sched_advance(s, &rc)) {
            *link   = s->next;
            s->next = NULL;
            finish(s, rc);
            n++;
        } else {
            link = &s->next;
        }
    }
    running = 0;
    return n;
}

int weft_sched_start(weft_sched_t *s, weft_request_t *req)
{
    int rc;

    if (!hook_registered) {
        weft_progress_register(active_progress);
        hook_registered = 1;
    }
    s->req     = req;
    s->started = 1;
    if (weft_sched_advance(s, &rc)) {
        finish(s, rc);
        return MPI_SUCCESS;
    }
    s->next = active;
    active  = s;
    return MPI_SUCCESS;
}
