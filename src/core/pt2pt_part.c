/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Partitioned point-to-point communication (MPI_Psend_init, MPI_Precv_init,
 * MPI_Pready*, MPI_Parrived) on top of the ordinary pt2pt send/receive.
 *
 * Matching. MPI_Psend_init sends a small setup message (the sender's
 * partition count and size, and the tags its data will use) on the
 * communicator's collective context with tag PART_SETUP_TAG. A receive side
 * matches setups to its MPI_Precv_init requests itself: setups from one
 * source arrive in the sender's init order, and unmatched receives are
 * served in their own init order, so the k-th Psend_init to (dest, tag, comm)
 * pairs with the k-th Precv_init from (source, tag, comm), as the standard
 * orders them. Setups that no receive wants yet wait in a per-process stash.
 *
 * Data. Each send partition travels as its own message as soon as it is
 * MPI_Pready: send partition j of a request uses tag tag_base + j (negative
 * tags on the collective context, which no collective or internal exchange
 * uses; tag_base comes from a per-process counter, so two requests in flight
 * never share tags). The receive side posts one receive per send partition
 * straight into the user's buffer at the partition's byte offset: shared
 * memory then moves every partition as it becomes ready (eager copy or
 * single-copy CMA), with no whole-buffer copy at the end. Only a send
 * partition whose bytes do not fall on whole elements of a non-contiguous
 * receive datatype is staged and unpacked, alone, when it arrives. Send and
 * receive partition counts are independent: a receive partition has arrived
 * when every send partition overlapping its bytes has.
 *
 * Restart. A persistent round is an inner request (kind COLL, progressed by
 * its progress function and by a progress hook). Messages of round k+1 can
 * only follow those of round k on the same tag, so they never overtake.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/pt2pt_internal.h"
#include "core/pt2pt_part.h"
#include "core/runtime.h"
#include "core/status.h"

/* Negative tags of the collective context (collectives use 0..0x3fffffff,
 * internal exchanges 0x40000000 and above). */
#define PART_SETUP_TAG    (-0x1000)
#define PART_TAG_MIN      INT32_MIN
#define PART_TAG_SPAN     ((int64_t)-0x10000 - (int64_t)INT32_MIN) /* data tags [MIN, -0x10000) */
#define PART_SETUP_MAGIC  0x50415254 /* "PART" */

typedef struct {
    int32_t magic;
    int32_t tag;        /* the user's tag */
    int32_t tag_base;   /* send partition j uses tag_base + j */
    int32_t partitions;
    int64_t part_bytes; /* bytes in one send partition */
} part_setup_t;

/* One send partition's message as the receive side sees it. */
typedef struct {
    weft_request_t *req;
    void           *tmp;    /* staging: bytes not on whole receive elements */
    MPI_Count       offset; /* first receive-stream byte it fills */
    MPI_Count       keep;   /* bytes of it that fit in the receive buffer */
    int             done;
} part_chunk_t;

typedef struct weft_part weft_part_t;
struct weft_part {
    weft_part_t     *next, *prev; /* every live partitioned request, in init order */
    int              refs;        /* user request, active round, setup send */
    int              is_send;
    weft_comm_t     *comm;
    weft_datatype_t *dt;
    void            *buf;
    int              partitions;
    MPI_Count        count;       /* elements per partition */
    MPI_Count        total;       /* bytes of the whole buffer */
    int              peer, tag;
    weft_request_t  *round;       /* the active round, or NULL */
    int              err;         /* first error of this round */
    /* send side */
    int32_t          tag_base;
    part_setup_t     setup;       /* what setup_req carries (must outlive it) */
    weft_request_t  *setup_req;   /* holds a reference until it completes */
    unsigned char   *ready;
    weft_request_t **sreqs;
    /* receive side */
    int              matched, posted, ndone;
    part_setup_t     remote;
    part_chunk_t    *chunks;      /* one per send partition */
};

/* A setup that arrived before any receive wanted it. */
typedef struct stash {
    struct stash   *next;
    uint32_t        context;
    int             src;
    weft_request_t *req; /* receiving hdr; NULL once complete */
    part_setup_t    hdr;
} stash_t;

static weft_part_t live = {.next = &live, .prev = &live};
static stash_t    *stash_head;
static int64_t     next_tag_off;
static int         hooks_registered;

static weft_datatype_t *byte_type(void)
{
    return weft_datatype_from_handle(MPI_BYTE);
}

static weft_part_t *part_of(MPI_Request h)
{
    weft_request_t *r = (h != MPI_REQUEST_NULL && weft_object_valid(h, WEFT_KIND_REQUEST))
                            ? (weft_request_t *)h : NULL;
    return r != NULL && r->kind == WEFT_REQ_PARTITIONED ? r->part : NULL;
}

/* ---- lifetime ------------------------------------------------------------ */

/* Free an inner request unless the engine still owns it; returns 1 if freed
 * (or NULL). */
static int discard(weft_request_t *r)
{
    if (r == NULL) {
        return 1;
    }
    if (!weft_request_is_complete(r)) {
        weft_pt2pt_cancel(r);
    }
    if (!weft_request_is_complete(r)) {
        return 0;
    }
    weft_request_free(r);
    return 1;
}

static void part_release(weft_part_t *p)
{
    if (--p->refs > 0) {
        return;
    }
    p->prev->next = p->next;
    p->next->prev = p->prev;
    /* Every round has completed by now, so these are normally NULL; one left
     * by a failed round is withdrawn if it can be, else left to the pool
     * (freeing a request the matching engine still holds would be worse). */
    for (int j = 0; p->sreqs != NULL && j < p->partitions; j++) {
        discard(p->sreqs[j]);
    }
    for (int j = 0; p->chunks != NULL && j < p->remote.partitions; j++) {
        if (discard(p->chunks[j].req)) {
            free(p->chunks[j].tmp);
        }
    }
    free(p->ready);
    free(p->sreqs);
    free(p->chunks);
    weft_comm_release(p->comm);
    weft_datatype_release(p->dt);
    free(p);
}

static void outer_on_free(weft_request_t *req)
{
    weft_part_t *p = req->part;
    req->part = NULL;
    if (p != NULL) {
        part_release(p);
    }
}

static void round_on_free(weft_request_t *round)
{
    weft_part_t *p = round->state;
    if (p->round == round) {
        p->round = NULL;
    }
    part_release(p);
}

/* ---- matching (receive side) --------------------------------------------- */

static int stash_pull(weft_part_t *p)
{
    uint32_t ctx = p->comm->context_id + WEFT_CTX_COLL;

    while (weft_pt2pt_find_unexpected(ctx, p->peer, PART_SETUP_TAG, 0) != NULL) {
        stash_t *s = calloc(1, sizeof(*s));
        int      rc;
        if (s == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory for a partitioned setup");
        }
        s->context = ctx;
        s->src     = p->peer;
        rc = weft_irecv(&s->hdr, sizeof(s->hdr), byte_type(), p->peer, PART_SETUP_TAG, p->comm,
                        WEFT_CTX_COLL, &s->req);
        if (rc != MPI_SUCCESS) {
            free(s);
            return rc;
        }
        stash_t **link = &stash_head;
        while (*link != NULL) {
            link = &(*link)->next;
        }
        *link = s;
    }
    return MPI_SUCCESS;
}

/* Give p the first arrived setup from its source with its tag; returns 1
 * when matched. Setups from one source are taken in arrival order. */
static int stash_take(weft_part_t *p)
{
    uint32_t ctx = p->comm->context_id + WEFT_CTX_COLL;

    for (stash_t **link = &stash_head; *link != NULL; link = &(*link)->next) {
        stash_t *s = *link;
        if (s->context != ctx || s->src != p->peer) {
            continue;
        }
        if (s->req != NULL) {
            if (!weft_request_is_complete(s->req)) {
                return 0; /* later setups from this source must wait for it */
            }
            weft_request_free(s->req);
            s->req = NULL;
        }
        if (s->hdr.magic != PART_SETUP_MAGIC || s->hdr.tag != p->tag) {
            continue;
        }
        p->remote  = s->hdr;
        p->matched = 1;
        *link      = s->next;
        free(s);
        return 1;
    }
    return 0;
}

/* Serve unmatched receives in init order. */
static void match_all(void)
{
    for (weft_part_t *p = live.next; p != &live; p = p->next) {
        if (!p->is_send && !p->matched && stash_pull(p) == MPI_SUCCESS) {
            stash_take(p);
        }
    }
}

/* ---- rounds -------------------------------------------------------------- */

static int post_receives(weft_part_t *p)
{
    int       n  = p->remote.partitions;
    MPI_Count bs = p->remote.part_bytes;
    MPI_Count sz = p->dt->size;

    if (p->chunks == NULL && n > 0 && (p->chunks = calloc((size_t)n, sizeof(*p->chunks))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for %d partitions", n);
    }
    for (int j = 0; j < n; j++) {
        part_chunk_t *c   = &p->chunks[j];
        MPI_Count     a   = (MPI_Count)j * bs;
        int           tag = (int)(p->remote.tag_base + j);
        int           rc;
        c->offset = a;
        c->keep   = a >= p->total ? 0 : (a + bs <= p->total ? bs : p->total - a);
        c->done   = 0;
        if (c->keep == bs && p->dt->is_contig) {
            rc = weft_irecv((char *)p->buf + p->dt->true_lb + a, bs, byte_type(), p->peer, tag,
                            p->comm, WEFT_CTX_COLL, &c->req);
        } else if (c->keep == bs && sz > 0 && a % sz == 0 && bs % sz == 0) {
            rc = weft_irecv((char *)p->buf + (a / sz) * p->dt->extent, bs / sz, p->dt, p->peer,
                            tag, p->comm, WEFT_CTX_COLL, &c->req);
        } else {
            if (c->tmp == NULL && (c->tmp = malloc(bs > 0 ? (size_t)bs : 1)) == NULL) {
                return weft_error(MPI_ERR_NO_MEM, "no memory to stage a partition");
            }
            rc = weft_irecv(c->tmp, bs, byte_type(), p->peer, tag, p->comm, WEFT_CTX_COLL,
                            &c->req);
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    p->ndone  = 0;
    p->posted = 1;
    return MPI_SUCCESS;
}

static int chunk_poll(weft_part_t *p, part_chunk_t *c)
{
    if (c->done) {
        return 1;
    }
    if (!weft_request_is_complete(c->req)) {
        return 0;
    }
    if (c->req->status.MPI_ERROR != MPI_SUCCESS && p->err == MPI_SUCCESS) {
        p->err = c->req->status.MPI_ERROR;
    }
    if (c->tmp != NULL && c->keep > 0) { /* staged (the layout is the same every round) */
        weft_dt_unpack(p->dt, p->count * p->partitions, p->buf, c->offset, c->tmp, c->keep);
    }
    weft_request_free(c->req);
    c->req  = NULL;
    c->done = 1;
    p->ndone++;
    return 1;
}

static void round_finish(weft_part_t *p)
{
    weft_request_t *r = p->round;

    r->status.MPI_SOURCE = p->is_send ? MPI_ANY_SOURCE : p->peer;
    r->status.MPI_TAG    = p->is_send ? MPI_ANY_TAG : p->tag;
    weft_status_set_cancelled(&r->status, 0);
    if (p->is_send || p->peer == MPI_PROC_NULL) {
        if (p->peer == MPI_PROC_NULL) {
            r->status.MPI_SOURCE = MPI_PROC_NULL;
        }
        weft_status_set_bytes(&r->status, 0);
    } else {
        MPI_Count sent = (MPI_Count)p->remote.partitions * p->remote.part_bytes;
        weft_status_set_bytes(&r->status, sent < p->total ? sent : p->total);
        if (sent > p->total && p->err == MPI_SUCCESS) {
            p->err = MPI_ERR_TRUNCATE;
        }
    }
    r->status.MPI_ERROR = p->err;
    weft_request_complete(r);
}

/* Move the active round of p on; completes it when done. */
static void part_advance(weft_part_t *p)
{
    if (p->round == NULL || weft_request_is_complete(p->round)) {
        return;
    }
    if (p->is_send) {
        for (int j = 0; j < p->partitions; j++) {
            if (!p->ready[j]) {
                return;
            }
            if (p->sreqs[j] != NULL) {
                if (!weft_request_is_complete(p->sreqs[j])) {
                    return;
                }
                if (p->sreqs[j]->status.MPI_ERROR != MPI_SUCCESS && p->err == MPI_SUCCESS) {
                    p->err = p->sreqs[j]->status.MPI_ERROR;
                }
                weft_request_free(p->sreqs[j]);
                p->sreqs[j] = NULL;
            }
        }
        round_finish(p);
        return;
    }
    if (!p->matched) {
        match_all();
        if (!p->matched) {
            return;
        }
    }
    if (!p->posted) {
        int rc = post_receives(p);
        if (rc != MPI_SUCCESS) {
            p->err    = rc;
            p->posted = 1;
            p->ndone  = p->remote.partitions; /* give up on this round */
        }
    }
    for (int j = 0; j < p->remote.partitions && p->ndone < p->remote.partitions; j++) {
        if (p->chunks[j].req != NULL) {
            chunk_poll(p, &p->chunks[j]);
        }
    }
    if (p->ndone >= p->remote.partitions) {
        round_finish(p);
    }
}

static int round_progress(weft_request_t *round)
{
    part_advance(round->state);
    return 0;
}

/* Progress hook: matching, and rounds whose user request was freed while
 * active (nobody waits on them). */
static int part_progress_hook(void)
{
    weft_part_t *p, *next;
    int          unmatched = 0;

    for (p = live.next; p != &live; p = next) {
        next = p->next;
        unmatched |= !p->is_send && !p->matched;
        if (p->round != NULL) {
            part_advance(p);
        }
        if (p->setup_req != NULL && weft_request_is_complete(p->setup_req)) {
            weft_request_free(p->setup_req);
            p->setup_req = NULL;
            part_release(p); /* may free p */
        }
    }
    if (unmatched) {
        match_all();
    }
    return 0;
}

/* Setups nobody matched are dropped at finalize (the job is over). */
static void part_finalize_hook(void)
{
    while (stash_head != NULL) {
        stash_t *s = stash_head;
        stash_head = s->next;
        if (s->req != NULL) {
            weft_request_free(s->req);
        }
        free(s);
    }
}

int weft_part_start(weft_request_t *req, weft_request_t **round_p)
{
    weft_part_t    *p = req->part;
    weft_request_t *r;

    if (p == NULL) {
        return weft_error(MPI_ERR_INTERN, "partitioned request without its state");
    }
    if ((r = weft_request_alloc(WEFT_REQ_COLL)) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    r->comm = p->comm;
    weft_comm_retain(p->comm);
    r->datatype = byte_type(); /* status byte counts, truncation message */
    weft_datatype_retain(r->datatype);
    r->count    = p->total;
    r->progress = round_progress;
    r->on_free  = round_on_free;
    r->state    = p;
    p->refs++;
    p->round = r;
    p->err   = MPI_SUCCESS;
    if (p->is_send) {
        memset(p->ready, 0, (size_t)p->partitions);
    } else {
        p->posted = 0;
        p->ndone  = 0;
    }
    if (p->peer == MPI_PROC_NULL && p->is_send) {
        memset(p->ready, 1, (size_t)p->partitions); /* nothing to send */
    }
    part_advance(p); /* receives go up now when already matched */
    *round_p = r;
    return MPI_SUCCESS;
}

/* ---- init ---------------------------------------------------------------- */

static int part_new(int is_send, const void *buf, int partitions, MPI_Count count,
                    weft_datatype_t *dt, int peer, int tag, weft_comm_t *comm, MPI_Request *request)
{
    weft_request_t *req;
    weft_part_t    *p;

    if (partitions < 1) {
        return weft_error(MPI_ERR_ARG, "argument partitions: %d (must be at least 1)", partitions);
    }
    if (count > 0 && (MPI_Count)partitions > INT64_MAX / count / (dt->size > 0 ? dt->size : 1)) {
        return weft_error(MPI_ERR_COUNT, "argument count: %d partitions of %lld elements overflow",
                          partitions, (long long)count);
    }
    if (is_send && (int64_t)partitions > PART_TAG_SPAN / 2) {
        return weft_error(MPI_ERR_ARG, "argument partitions: %d is more than Weft can have in "
                          "flight (%lld)", partitions, (long long)(PART_TAG_SPAN / 2));
    }
    if ((p = calloc(1, sizeof(*p))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a partitioned request");
    }
    p->refs       = 1;
    p->is_send    = is_send;
    p->buf        = (void *)buf;
    p->partitions = partitions;
    p->count      = count;
    p->total      = (MPI_Count)partitions * count * dt->size;
    p->peer       = peer;
    p->tag        = tag;
    p->comm       = comm;
    p->dt         = dt;
    weft_comm_retain(comm);
    weft_datatype_retain(dt);
    if (is_send && ((p->ready = calloc((size_t)partitions, 1)) == NULL ||
                    (p->sreqs = calloc((size_t)partitions, sizeof(*p->sreqs))) == NULL)) {
        p->prev = p->next = p; /* not linked yet */
        part_release(p);
        return weft_error(MPI_ERR_NO_MEM, "no memory for %d partitions", partitions);
    }
    if ((req = weft_request_alloc(WEFT_REQ_PARTITIONED)) == NULL) {
        p->prev = p->next = p;
        part_release(p);
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a request");
    }
    req->persistent = 1;
    req->comm       = comm;
    weft_comm_retain(comm);
    req->peer    = peer;
    req->tag     = tag;
    req->part    = p;
    req->on_free = outer_on_free;

    p->prev         = live.prev;
    p->next         = &live;
    live.prev->next = p;
    live.prev       = p;
    if (!hooks_registered) {
        weft_progress_register(part_progress_hook);
        weft_finalize_register(part_finalize_hook);
        hooks_registered = 1;
    }
    if (is_send && peer != MPI_PROC_NULL) {
        int rc;
        if (next_tag_off + partitions > PART_TAG_SPAN) {
            next_tag_off = 0;
        }
        p->tag_base = (int32_t)(PART_TAG_MIN + next_tag_off);
        next_tag_off += partitions;
        p->setup = (part_setup_t){PART_SETUP_MAGIC, tag, p->tag_base, partitions,
                                  (int64_t)(count * dt->size)};
        rc = weft_isend(&p->setup, sizeof(p->setup), byte_type(), peer, PART_SETUP_TAG, comm,
                        WEFT_CTX_COLL, WEFT_SEND_STANDARD, &p->setup_req);
        if (rc != MPI_SUCCESS) {
            p->setup_req = NULL;
            weft_request_free(req); /* releases p */
            return rc;
        }
        p->refs++;
    }
    if (!is_send && peer == MPI_PROC_NULL) {
        p->matched = 1; /* nothing will come: every round is empty */
    }
    *request = (MPI_Request)req;
    return MPI_SUCCESS;
}

int weft_psend_init_impl(const void *buf, int partitions, MPI_Count count,
                         weft_datatype_t *datatype, int dest, int tag, weft_comm_t *comm,
                         weft_info_t *info, MPI_Request *request)
{
    (void)info; /* no hints are used */
    return part_new(1, buf, partitions, count, datatype, dest, tag, comm, request);
}

int weft_precv_init_impl(void *buf, int partitions, MPI_Count count, weft_datatype_t *datatype,
                         int source, int tag, weft_comm_t *comm, weft_info_t *info,
                         MPI_Request *request)
{
    (void)info; /* wildcards are rejected by the argument checks (not allowed here) */
    return part_new(0, buf, partitions, count, datatype, source, tag, comm, request);
}

/* ---- Pready / Parrived --------------------------------------------------- */

/* The active send side of request, or NULL after recording an error. */
static weft_part_t *active_part(MPI_Request request, int want_send, int *rc)
{
    weft_part_t *p = part_of(request);

    if (p == NULL) {
        *rc = weft_error(MPI_ERR_REQUEST, "argument request: not a partitioned request");
        return NULL;
    }
    weft_err_set_comm(p->comm);
    if (p->is_send != want_send) {
        *rc = weft_error(MPI_ERR_REQUEST, "argument request: a partitioned %s request",
                         p->is_send ? "send" : "receive");
        return NULL;
    }
    if (want_send && p->round == NULL) {
        *rc = weft_error(MPI_ERR_REQUEST, "argument request: not active (call MPI_Start first)");
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return p;
}

static int pready_one(weft_part_t *p, int j, const char *arg)
{
    int rc;

    if (j < 0 || j >= p->partitions) {
        return weft_error(MPI_ERR_ARG, "argument %s: partition %d is not in 0..%d", arg, j,
                          p->partitions - 1);
    }
    if (p->ready[j]) {
        return p->peer == MPI_PROC_NULL
                   ? MPI_SUCCESS
                   : weft_error(MPI_ERR_ARG, "argument %s: partition %d is already ready in this "
                                "round", arg, j);
    }
    rc = weft_isend((char *)p->buf + (MPI_Aint)j * p->count * p->dt->extent, p->count, p->dt,
                    p->peer, (int)(p->tag_base + j), p->comm, WEFT_CTX_COLL, WEFT_SEND_STANDARD,
                    &p->sreqs[j]);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    p->ready[j] = 1;
    return MPI_SUCCESS;
}

int weft_pready_impl(int partition, MPI_Request request)
{
    int          rc;
    weft_part_t *p = active_part(request, 1, &rc);
    return p == NULL ? rc : pready_one(p, partition, "partition");
}

int weft_pready_range_impl(int partition_low, int partition_high, MPI_Request request)
{
    int          rc;
    weft_part_t *p = active_part(request, 1, &rc);

    if (p == NULL) {
        return rc;
    }
    if (partition_low < 0 || partition_high >= p->partitions || partition_low > partition_high) {
        return weft_error(MPI_ERR_ARG, "arguments partition_low, partition_high: %d..%d is not "
                          "a range in 0..%d", partition_low, partition_high, p->partitions - 1);
    }
    for (int j = partition_low; j <= partition_high; j++) {
        if ((rc = pready_one(p, j, "partition_low")) != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int weft_pready_list_impl(int length, const int array_of_partitions[], MPI_Request request)
{
    int          rc;
    weft_part_t *p = active_part(request, 1, &rc);

    if (p == NULL) {
        return rc;
    }
    if (length < 0) {
        return weft_error(MPI_ERR_ARG, "argument length: negative value %d", length);
    }
    if (length > 0 && array_of_partitions == NULL) {
        return weft_error(MPI_ERR_ARG, "argument array_of_partitions: NULL with length %d",
                          length);
    }
    for (int i = 0; i < length; i++) {
        if ((rc = pready_one(p, array_of_partitions[i], "array_of_partitions")) != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

/* Receive partition i has arrived when every send partition overlapping
 * its bytes has (by partition index when either side carries no bytes). */
static int arrived(weft_part_t *p, int i)
{
    int64_t ns = p->remote.partitions, nr = p->partitions;
    int64_t rb = p->count * p->dt->size, sb = p->remote.part_bytes;
    int64_t lo, hi;

    if (ns == 0) {
        return 1;
    }
    if (rb > 0 && sb > 0) {
        lo = (int64_t)i * rb / sb;
        hi = ((int64_t)i * rb + rb - 1) / sb;
    } else {
        lo = (int64_t)i * ns / nr;
        hi = ((int64_t)i * ns + ns - 1) / nr;
    }
    if (lo >= ns) {
        lo = ns - 1; /* beyond what was sent: arrived with the last one */
    }
    if (hi >= ns) {
        hi = ns - 1;
    }
    for (int64_t j = lo; j <= hi; j++) {
        if (!p->chunks[j].done && (p->chunks[j].req == NULL || !chunk_poll(p, &p->chunks[j]))) {
            return 0;
        }
    }
    return 1;
}

int weft_parrived_impl(MPI_Request request, int partition, int *flag)
{
    int          rc;
    weft_part_t *p = active_part(request, 0, &rc);

    if (p == NULL) {
        return rc;
    }
    if (partition < 0 || partition >= p->partitions) {
        return weft_error(MPI_ERR_ARG, "argument partition: %d is not in 0..%d", partition,
                          p->partitions - 1);
    }
    if (p->round == NULL) {
        *flag = 1; /* inactive: nothing pending */
        return MPI_SUCCESS;
    }
    for (int pass = 0; pass < 2; pass++) {
        part_advance(p);
        if (p->round == NULL || weft_request_is_complete(p->round) ||
            (p->posted && arrived(p, partition))) {
            *flag = 1;
            return MPI_SUCCESS;
        }
        if (pass == 0) {
            weft_progress_poll();
        }
    }
    *flag = 0;
    return MPI_SUCCESS;
}
