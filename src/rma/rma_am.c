/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The active-message RMA path (WEFT_USE_SHM_ONE_SIDED=0, windows spanning
 * nodes, MPI_Win_create/dynamic without CMA): the origin sends a request to
 * the target over core point-to-point on the window's private communicator;
 * the target's progress hook applies it to its memory and replies. Every
 * request is a round trip (the call returns once the reply arrived), so
 * operations complete at return as on the direct path, and one target
 * applies accumulates one at a time (atomic, ordered per origin).
 *
 * Messages (context WEFT_CTX_PT2PT of the private communicator):
 *   AM_TAG_HDR      rma_am_hdr_t, from origin, received with ANY_SOURCE
 *   AM_TAG_PAYLOAD  segments (offset, length) of the target datatype, then
 *                   data (put, accumulate operand, compare-and-swap values)
 *   AM_TAG_REPLY    int64 error code, then data (get, fetched values)
 *   AM_TAG_POST / AM_TAG_DONE   PSCW
 * Kept in this one file behind rma_am_* so it can move onto the transport's
 * active-message table.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/op.h"
#include "core/pt2pt.h"
#include "core/runtime.h"
#include "rma_internal.h"

enum { AM_TAG_HDR = 11, AM_TAG_PAYLOAD, AM_TAG_REPLY, AM_TAG_POST, AM_TAG_DONE };
enum { AM_PUT = 1, AM_GET, AM_ACC, AM_CAS, AM_LOCK, AM_UNLOCK };

typedef struct {
    int32_t  kind;
    int32_t  op;          /* accumulate: builtin op index; lock: exclusive */
    uint64_t basic;       /* accumulate / cas: handle of the basic datatype */
    uint64_t nsegs;       /* (offset, length) pairs in the payload */
    uint64_t nbytes;      /* data bytes (stream size of the target side) */
    uint64_t payload;     /* payload bytes (0: no payload message) */
    int32_t  fetch;       /* accumulate: reply with the previous contents */
    int32_t  pad;
} rma_am_hdr_t;

typedef struct am_pending {
    struct am_pending *next;
    weft_win_t        *win;
    int                src;
    rma_am_hdr_t       hdr;
    char              *payload;
    weft_request_t    *req;
} am_pending_t;

typedef struct am_send {
    struct am_send *next;
    weft_request_t *req;
    char           *buf;
} am_send_t;

static weft_win_t   *am_windows;  /* windows served by the hook */
static am_pending_t *am_payloads; /* headers waiting for their payload */
static am_send_t    *am_sends;    /* replies in flight */
static int           am_in_hook, am_hook_registered;
static int           am_losses_seen; /* weft_dev.nfailed when the hook last looked */

static weft_datatype_t *byte_type(void)
{
    return weft_datatype_from_handle(MPI_BYTE);
}

/* ---- target side ------------------------------------------------------------------- */

static void send_reply(weft_win_t *win, int dest, int64_t rc, const void *data, size_t n)
{
    am_send_t *s   = malloc(sizeof(*s));
    char      *buf = malloc(sizeof(int64_t) + n);

    if (s == NULL || buf == NULL) {
        weft_runtime_abort(MPI_ERR_NO_MEM, "RMA: no memory for a reply");
    }
    memcpy(buf, &rc, sizeof(rc));
    if (n) {
        memcpy(buf + sizeof(rc), data, n);
    }
    s->buf = buf;
    if (weft_isend(buf, (MPI_Count)(sizeof(rc) + n), byte_type(), dest, AM_TAG_REPLY, win->comm,
                   WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, &s->req) != MPI_SUCCESS) {
        weft_runtime_abort(MPI_ERR_INTERN, "RMA: cannot send a reply");
    }
    s->next  = am_sends;
    am_sends = s;
}

/* Are the segments inside this rank's window memory? */
static int segs_ok(weft_win_t *win, const uint64_t *segs, uint64_t nsegs)
{
    for (uint64_t i = 0; i < nsegs; i++) {
        uint64_t off = segs[2 * i], len = segs[2 * i + 1];
        if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
            rma_rank_ctl_t *c   = &win->ctl[win->rank];
            rma_region_t   *tab = &win->attach[(size_t)win->rank * (size_t)win->attach_max];
            int             ok  = 0;
            for (uint32_t k = 0; k < c->nattach && !ok; k++) {
                ok = off >= tab[k].base && off + len <= tab[k].base + tab[k].len;
            }
            if (!ok) {
                return 0;
            }
        } else if (off + len > (uint64_t)win->win_size || off + len < off) {
            return 0;
        }
    }
    return 1;
}

static char *seg_addr(weft_win_t *win, uint64_t off)
{
    return win->flavor == MPI_WIN_FLAVOR_DYNAMIC ? (char *)(uintptr_t)off
                                                 : (char *)win->base + off;
}

static void grant_waiters(weft_win_t *win)
{
    while (win->am_waiters_n > 0) {
        int o = win->am_waiters[0].origin, excl = win->am_waiters[0].excl;
        if (excl ? win->am_lock != 0 : (win->am_lock & RMA_LOCK_WRITER) != 0) {
            return;
        }
        win->am_lock    = excl ? RMA_LOCK_WRITER : win->am_lock + 1;
        win->am_held[o] = excl ? 2 : 1;
        memmove(win->am_waiters, win->am_waiters + 1,
                sizeof(win->am_waiters[0]) * (size_t)--win->am_waiters_n);
        send_reply(win, o, MPI_SUCCESS, NULL, 0);
    }
}

static void release_lock_of(weft_win_t *win, int origin)
{
    if (win->am_held[origin] == 2) {
        win->am_lock = 0;
    } else if (win->am_held[origin] == 1 && win->am_lock > 0 && !(win->am_lock & RMA_LOCK_WRITER)) {
        win->am_lock--;
    }
    win->am_held[origin] = 0;
}

/* A lost origin never unlocks: drop its lock and its queued requests, so
 * the survivors' lock requests are granted (their other waits on it fail
 * in point-to-point). */
static void forget_lost_origins(weft_win_t *win)
{
    for (int r = 0; r < win->size; r++) {
        if (!weft_peer(win->comm->peer_world[r])->failed) {
            continue;
        }
        release_lock_of(win, r);
        for (int i = 0; i < win->am_waiters_n;) {
            if (win->am_waiters[i].origin == r) {
                memmove(win->am_waiters + i, win->am_waiters + i + 1,
                        sizeof(win->am_waiters[0]) * (size_t)(--win->am_waiters_n - i));
            } else {
                i++;
            }
        }
    }
    grant_waiters(win);
}

static void handle(weft_win_t *win, int src, const rma_am_hdr_t *h, char *payload)
{
    const uint64_t *segs = (const uint64_t *)payload;
    char           *data = payload ? payload + h->nsegs * 2 * sizeof(uint64_t) : NULL;
    char           *out  = NULL;
    size_t          nout = 0;
    int             rc   = MPI_SUCCESS;

    if (h->kind == AM_LOCK) {
        if (win->am_waiters_n >= win->size) {
            send_reply(win, src, weft_error(MPI_ERR_INTERN, "RMA lock queue full"), NULL, 0);
            return;
        }
        win->am_waiters[win->am_waiters_n].origin = src;
        win->am_waiters[win->am_waiters_n].excl   = h->op;
        win->am_waiters_n++;
        grant_waiters(win);
        return;
    }
    if (h->kind == AM_UNLOCK) {
        release_lock_of(win, src);
        send_reply(win, src, MPI_SUCCESS, NULL, 0);
        grant_waiters(win);
        return;
    }
    if (!segs_ok(win, segs, h->nsegs)) {
        send_reply(win, src, MPI_ERR_RMA_RANGE, NULL, 0);
        return;
    }
    if (h->kind == AM_GET || (h->kind == AM_ACC && h->fetch) || h->kind == AM_CAS) {
        nout = (size_t)h->nbytes;
        out  = malloc(nout ? nout : 1);
        if (out == NULL) {
            send_reply(win, src, MPI_ERR_NO_MEM, NULL, 0);
            return;
        }
        for (uint64_t i = 0, at = 0; i < h->nsegs; at += segs[2 * i + 1], i++) {
            memcpy(out + at, seg_addr(win, segs[2 * i]), (size_t)segs[2 * i + 1]);
        }
    }
    if (h->kind == AM_PUT) {
        for (uint64_t i = 0, at = 0; i < h->nsegs; at += segs[2 * i + 1], i++) {
            memcpy(seg_addr(win, segs[2 * i]), data + at, (size_t)segs[2 * i + 1]);
        }
    } else if (h->kind == AM_ACC && h->op != WEFT_OP_NO_OP) {
        weft_op_t       *op  = weft_op_from_handle((void *)(uintptr_t)(0x20 + h->op));
        weft_datatype_t *bdt = weft_datatype_from_handle((void *)(uintptr_t)h->basic);
        for (uint64_t i = 0, at = 0; i < h->nsegs && rc == MPI_SUCCESS; at += segs[2 * i + 1], i++) {
            char *t = seg_addr(win, segs[2 * i]);
            if (h->op == WEFT_OP_REPLACE) {
                memcpy(t, data + at, (size_t)segs[2 * i + 1]);
            } else {
                rc = weft_op_reduce(op, data + at, t, (MPI_Count)(segs[2 * i + 1] / (uint64_t)bdt->size),
                                    bdt);
            }
        }
    } else if (h->kind == AM_CAS) {
        /* data = new value, then the compare value */
        if (memcmp(out, data + h->nbytes, (size_t)h->nbytes) == 0) {
            memcpy(seg_addr(win, segs[0]), data, (size_t)h->nbytes);
        }
    }
    send_reply(win, src, rc, out, rc == MPI_SUCCESS ? nout : 0);
    free(out);
}

static int post_header_recv(weft_win_t *win)
{
    return weft_irecv(&win->am_hdr_buf, (MPI_Count)sizeof(rma_am_hdr_t), byte_type(),
                      MPI_ANY_SOURCE, AM_TAG_HDR, win->comm, WEFT_CTX_PT2PT, &win->am_hdr_req);
}

static int serve(weft_win_t *win)
{
    MPI_Status   st;
    rma_am_hdr_t h;
    int          events = 0;

    while (win->am_hdr_req != NULL && weft_request_is_complete(win->am_hdr_req)) {
        int failed = weft_request_wait(win->am_hdr_req, &st) != MPI_SUCCESS;
        win->am_hdr_req = NULL;
        if (failed) { /* an ANY_SOURCE receive fails when a member is lost: no request came */
            if (post_header_recv(win) != MPI_SUCCESS) {
                weft_runtime_abort(MPI_ERR_INTERN, "RMA: cannot post a request receive");
            }
            events++;
            continue;
        }
        memcpy(&h, win->am_hdr_buf, sizeof(h));
        events++;
        if (h.payload > 0) {
            am_pending_t *p = calloc(1, sizeof(*p));
            if (p == NULL || (p->payload = malloc((size_t)h.payload)) == NULL) {
                weft_runtime_abort(MPI_ERR_NO_MEM, "RMA: no memory for a request payload");
            }
            p->win = win;
            p->src = st.MPI_SOURCE;
            p->hdr = h;
            if (weft_irecv(p->payload, (MPI_Count)h.payload, byte_type(), st.MPI_SOURCE,
                           AM_TAG_PAYLOAD, win->comm, WEFT_CTX_PT2PT, &p->req) != MPI_SUCCESS) {
                weft_runtime_abort(MPI_ERR_INTERN, "RMA: cannot receive a request payload");
            }
            p->next     = am_payloads;
            am_payloads = p;
        } else {
            handle(win, st.MPI_SOURCE, &h, NULL);
        }
        if (post_header_recv(win) != MPI_SUCCESS) {
            weft_runtime_abort(MPI_ERR_INTERN, "RMA: cannot post a request receive");
        }
    }
    return events;
}

static int am_progress(void)
{
    int events = 0;

    if (am_in_hook) {
        return 0;
    }
    am_in_hook = 1;
    int new_losses = weft_dev.nfailed != am_losses_seen;
    am_losses_seen = weft_dev.nfailed;
    for (weft_win_t *w = am_windows; w != NULL; w = w->am_next) {
        events += serve(w);
        if (new_losses) {
            forget_lost_origins(w);
        }
    }
    for (am_pending_t **pp = &am_payloads; *pp != NULL;) {
        am_pending_t *p = *pp;
        if (weft_request_is_complete(p->req)) {
            weft_request_wait(p->req, MPI_STATUS_IGNORE);
            *pp = p->next;
            handle(p->win, p->src, &p->hdr, p->payload);
            free(p->payload);
            free(p);
            events++;
        } else {
            pp = &p->next;
        }
    }
    for (am_send_t **sp = &am_sends; *sp != NULL;) {
        am_send_t *s = *sp;
        if (weft_request_is_complete(s->req)) {
            weft_request_wait(s->req, MPI_STATUS_IGNORE);
            *sp = s->next;
            free(s->buf);
            free(s);
        } else {
            sp = &s->next;
        }
    }
    am_in_hook = 0;
    return events;
}

int rma_am_win_init(weft_win_t *win)
{
    int rc;

    win->am_waiters = calloc((size_t)win->size, sizeof(win->am_waiters[0]));
    win->am_held    = calloc((size_t)win->size, 1);
    if (win->am_waiters == NULL || win->am_held == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a window");
    }
    if ((rc = post_header_recv(win)) != MPI_SUCCESS) {
        return rc;
    }
    if (!am_hook_registered) {
        weft_progress_register(am_progress);
        am_hook_registered = 1;
    }
    win->am_next = am_windows;
    am_windows   = win;
    return MPI_SUCCESS;
}

/* After the freeing barrier (no peer sends any more): stop serving and
 * retire the posted header receive with a message to self. */
void rma_am_win_fini(weft_win_t *win)
{
    rma_am_hdr_t bye = {0};

    for (weft_win_t **wp = &am_windows; *wp != NULL; wp = &(*wp)->am_next) {
        if (*wp == win) {
            *wp = win->am_next;
            break;
        }
    }
    if (win->am_hdr_req != NULL) {
        weft_send(&bye, (MPI_Count)sizeof(bye), byte_type(), win->rank, AM_TAG_HDR, win->comm,
                  WEFT_CTX_PT2PT);
        weft_request_wait(win->am_hdr_req, MPI_STATUS_IGNORE);
        win->am_hdr_req = NULL;
    }
    free(win->am_waiters);
    win->am_waiters = NULL;
    free(win->am_held);
    win->am_held = NULL;
}

/* ---- origin side ------------------------------------------------------------------- */

/* One round trip: header (+ payload) to target, reply of reply_n data bytes
 * into reply (may be NULL). Returns the target's error code. */
static int call(weft_win_t *win, int target, const rma_am_hdr_t *h, const void *payload,
                void *reply, size_t reply_n)
{
    weft_request_t *reqs[3] = {NULL, NULL, NULL};
    char           *rbuf    = malloc(sizeof(int64_t) + reply_n);
    int64_t         trc;
    int             rc;

    if (rbuf == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an RMA reply");
    }
    rc = weft_irecv(rbuf, (MPI_Count)(sizeof(int64_t) + reply_n), byte_type(), target,
                    AM_TAG_REPLY, win->comm, WEFT_CTX_PT2PT, &reqs[0]);
    if (rc == MPI_SUCCESS) {
        rc = weft_isend(h, (MPI_Count)sizeof(*h), byte_type(), target, AM_TAG_HDR, win->comm,
                        WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, &reqs[1]);
    }
    if (rc == MPI_SUCCESS && h->payload > 0) {
        rc = weft_isend(payload, (MPI_Count)h->payload, byte_type(), target, AM_TAG_PAYLOAD,
                        win->comm, WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, &reqs[2]);
    }
    if (rc == MPI_SUCCESS) {
        rc = weft_request_waitall(3, reqs, MPI_STATUSES_IGNORE);
    }
    if (rc == MPI_SUCCESS) {
        memcpy(&trc, rbuf, sizeof(trc));
        rc = (int)trc;
        if (rc == MPI_SUCCESS && reply_n) {
            memcpy(reply, rbuf + sizeof(trc), reply_n);
        } else if (rc == MPI_ERR_RMA_RANGE) {
            rc = weft_error(MPI_ERR_RMA_RANGE, "target memory of rank %d is outside its window "
                            "(or not attached)", target);
        } else if (rc != MPI_SUCCESS) {
            rc = weft_error(rc, "the operation failed at rank %d", target);
        }
    }
    free(rbuf);
    return rc;
}

/* Payload: the target segments of (base_off, count, dt) then room for
 * extra bytes. *nsegs_p gets the segment count. */
static char *segments(MPI_Aint base_off, MPI_Count count, const weft_datatype_t *dt,
                      MPI_Count nbytes, size_t extra, uint64_t *nsegs_p, size_t *head_p)
{
    struct iovec iov[64];
    size_t       cap = 16, n = 0;
    uint64_t    *segs = malloc(cap * 2 * sizeof(uint64_t));
    MPI_Count    off  = 0;
    char        *out;

    while (segs != NULL && off < nbytes) {
        MPI_Count covered;
        int k = weft_dt_iov(dt, count, (void *)(uintptr_t)base_off, off, iov, 64, &covered);
        if (k == 0) {
            break;
        }
        for (int i = 0; i < k; i++) {
            if (n == cap) {
                uint64_t *bigger = realloc(segs, cap * 4 * sizeof(uint64_t));
                if (bigger == NULL) {
                    free(segs);
                    return NULL;
                }
                segs = bigger;
                cap *= 2;
            }
            segs[2 * n]     = (uint64_t)(uintptr_t)iov[i].iov_base;
            segs[2 * n + 1] = (uint64_t)iov[i].iov_len;
            n++;
        }
        off += covered;
    }
    if (segs == NULL || (out = malloc(n * 2 * sizeof(uint64_t) + extra + 1)) == NULL) {
        free(segs);
        return NULL;
    }
    memcpy(out, segs, n * 2 * sizeof(uint64_t));
    free(segs);
    *nsegs_p = n;
    *head_p  = n * 2 * sizeof(uint64_t);
    return out;
}

int rma_am_put(weft_win_t *win, int target, MPI_Aint base_off, const void *obuf, MPI_Count ocount,
               const weft_datatype_t *odt, MPI_Count tcount, const weft_datatype_t *tdt)
{
    MPI_Count    nbytes = tcount * tdt->size;
    rma_am_hdr_t h      = {.kind = AM_PUT, .nbytes = (uint64_t)nbytes};
    size_t       head;
    char        *p = segments(base_off, tcount, tdt, nbytes, (size_t)nbytes, &h.nsegs, &head);
    int          rc;

    if (p == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an RMA request");
    }
    weft_dt_pack(odt, ocount, obuf, 0, p + head, nbytes);
    h.payload = head + (uint64_t)nbytes;
    rc        = call(win, target, &h, p, NULL, 0);
    free(p);
    return rc;
}

int rma_am_get(weft_win_t *win, int target, MPI_Aint base_off, void *obuf, MPI_Count ocount,
               const weft_datatype_t *odt, MPI_Count tcount, const weft_datatype_t *tdt)
{
    MPI_Count    nbytes = tcount * tdt->size;
    rma_am_hdr_t h      = {.kind = AM_GET, .nbytes = (uint64_t)nbytes};
    size_t       head;
    char        *p = segments(base_off, tcount, tdt, nbytes, 0, &h.nsegs, &head);
    char        *in = malloc((size_t)nbytes + 1);
    int          rc;

    if (p == NULL || in == NULL) {
        free(p);
        free(in);
        return weft_error(MPI_ERR_NO_MEM, "no memory for an RMA request");
    }
    h.payload = head;
    rc        = call(win, target, &h, p, in, (size_t)nbytes);
    if (rc == MPI_SUCCESS) {
        weft_dt_unpack(odt, ocount, obuf, 0, in, nbytes);
    }
    free(p);
    free(in);
    return rc;
}

int rma_am_acc(weft_win_t *win, int target, MPI_Aint base_off, const char *in, char *old,
               MPI_Count tcount, const weft_datatype_t *tdt, const weft_op_t *op,
               const weft_datatype_t *bdt)
{
    MPI_Count    nbytes = tcount * tdt->size;
    size_t       extra  = op->id == WEFT_OP_NO_OP ? 0 : (size_t)nbytes, head;
    rma_am_hdr_t h      = {.kind = AM_ACC, .op = op->id, .nbytes = (uint64_t)nbytes,
                           .fetch = old != NULL,
                           .basic = (uint64_t)(uintptr_t)weft_object_handle(bdt)};
    char        *p = segments(base_off, tcount, tdt, nbytes, extra, &h.nsegs, &head);
    int          rc;

    if (p == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an RMA request");
    }
    if (extra) {
        memcpy(p + head, in, extra);
    }
    h.payload = head + extra;
    rc        = call(win, target, &h, p, old, old ? (size_t)nbytes : 0);
    free(p);
    return rc;
}

int rma_am_cas(weft_win_t *win, int target, MPI_Aint off, const void *origin, const void *compare,
               void *result, const weft_datatype_t *dt)
{
    size_t       n = (size_t)dt->size;
    rma_am_hdr_t h = {.kind = AM_CAS, .nbytes = n, .nsegs = 1};
    char        *p = malloc(2 * sizeof(uint64_t) + 2 * n);
    uint64_t     seg[2] = {(uint64_t)(off + dt->true_lb), n};
    int          rc;

    if (p == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an RMA request");
    }
    memcpy(p, seg, sizeof(seg));
    memcpy(p + sizeof(seg), origin, n);
    memcpy(p + sizeof(seg) + n, compare, n);
    h.payload = sizeof(seg) + 2 * n;
    rc        = call(win, target, &h, p, result, n);
    free(p);
    return rc;
}

int rma_am_lock(weft_win_t *win, int target, int exclusive)
{
    rma_am_hdr_t h = {.kind = AM_LOCK, .op = exclusive};
    return call(win, target, &h, NULL, NULL, 0);
}

int rma_am_unlock(weft_win_t *win, int target, int exclusive)
{
    rma_am_hdr_t h = {.kind = AM_UNLOCK, .op = exclusive};
    return call(win, target, &h, NULL, NULL, 0);
}

/* ---- PSCW over messages -------------------------------------------------------------- */

int rma_am_post(weft_win_t *win, const int *origins, int n)
{
    int one = 1, rc = MPI_SUCCESS;

    win->am_done_reqs = calloc((size_t)(n ? n : 1), sizeof(weft_request_t *));
    if (win->am_done_reqs == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = weft_irecv(&win->am_sink, 1, weft_datatype_from_handle(MPI_INT), origins[i],
                        AM_TAG_DONE, win->comm, WEFT_CTX_PT2PT, &win->am_done_reqs[i]);
    }
    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = weft_send(&one, 1, weft_datatype_from_handle(MPI_INT), origins[i], AM_TAG_POST,
                       win->comm, WEFT_CTX_PT2PT);
    }
    return rc;
}

int rma_am_start(weft_win_t *win, const int *targets, int n)
{
    int v, rc = MPI_SUCCESS;

    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = weft_recv(&v, 1, weft_datatype_from_handle(MPI_INT), targets[i], AM_TAG_POST,
                       win->comm, WEFT_CTX_PT2PT, MPI_STATUS_IGNORE);
    }
    return rc;
}

int rma_am_complete(weft_win_t *win, const int *targets, int n)
{
    int one = 1, rc = MPI_SUCCESS;

    for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
        rc = weft_send(&one, 1, weft_datatype_from_handle(MPI_INT), targets[i], AM_TAG_DONE,
                       win->comm, WEFT_CTX_PT2PT);
    }
    return rc;
}

/* wait=1 blocks; otherwise returns 1 when every origin completed. */
int rma_am_wait(weft_win_t *win, int n, int wait)
{
    if (!wait) {
        for (int i = 0; i < n; i++) {
            if (!weft_request_is_complete(win->am_done_reqs[i])) {
                return 0;
            }
        }
    }
    weft_request_waitall(n, win->am_done_reqs, MPI_STATUSES_IGNORE);
    free(win->am_done_reqs);
    win->am_done_reqs = NULL;
    return 1;
}

/* Barrier over the private communicator (fence), serving requests while it
 * waits. */
int rma_am_barrier(weft_win_t *win)
{
    int *all = malloc(sizeof(int) * (size_t)win->size), zero = 0, rc;

    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    rc = rma_allgather(win, &zero, sizeof(zero), all);
    free(all);
    return rc;
}
