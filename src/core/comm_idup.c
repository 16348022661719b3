/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_idup / MPI_Comm_idup_with_info on intracommunicators: the call
 * returns at once and the context-id agreement runs as a small state
 * machine driven by the progress engine (a registered hook, and the
 * request's own progress callback under Wait/Test), so the members may
 * call it in any order relative to their other non-blocking operations.
 *
 * Agreement: at the call, each member holds back the free context slots of
 * one word of its slot mask (64 slots, taken out of the local free mask, so
 * no communicator created meanwhile can take them) and sends them to member
 * 0, which ANDs them and sends the result back; everyone takes the lowest
 * common slot and gives the rest back. The word is a hash of the parent's
 * context and the idup's sequence number, so idups pending at the same time
 * on different communicators (started in different orders by different
 * processes) hold different words; if a word has nothing in common, the
 * next round tries the next word (at most every word once). Messages use
 * internal tags (WEFT_XTAG_IDUP | sequence of the idup on this
 * communicator, round), which every member counts in the same order, on the
 * collective context: they never match user or collective traffic. The attributes are copied and the
 * handle written into *newcomm when the agreement completes.
 */
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/attr.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/pt2pt.h"
#include "core/request.h"
#include "core/runtime.h"


typedef struct idup_op {
    struct idup_op  *next;
    weft_comm_t     *comm;    /* parent (retained) */
    weft_info_t     *info;    /* copy of the hints for _with_info, or NULL */
    int              use_info;
    MPI_Comm        *newcomm; /* the caller's handle, written at completion */
    weft_request_t  *req;     /* NULL once the user freed it */
    uint32_t         seq;     /* idup number on comm */
    int              round;   /* rounds tried (one mask word each) */
    int              posted;  /* this round's messages are posted (2: member 0's results) */
    int              done;    /* failed at the call: completed already */
    int              nsub;
    weft_request_t **sub;     /* this round's outstanding transfers */
    weft_ctx_mask_t  held;    /* slots held back from other creations */
    weft_ctx_mask_t  result;  /* AND of everyone's held slots */
    weft_ctx_mask_t *in;      /* member 0: the others' held slots */
} idup_op_t;

static idup_op_t *pending;
static int        hook_registered, in_progress;

static weft_datatype_t *byte_type(void)
{
    return weft_datatype_from_handle(MPI_BYTE);
}

/* Hold the free slots of mask word `word` (64 slots). */
static void hold_slots(weft_ctx_mask_t *held, int word)
{
    weft_ctx_mask_t free_mask;
    uint64_t        w;

    weft_ctx_mask_local(&free_mask);
    memset(held, 0, sizeof(*held));
    held->w[word] = w = free_mask.w[word];
    while (w != 0) {
        weft_ctx_reserve((uint32_t)(2 * (word * 64 + __builtin_ctzll(w))));
        w &= w - 1;
    }
}

/* The mask word a round offers: the same on every member, different (most
 * likely) for concurrent idups on other communicators, next word each
 * round. */
static int round_word(const idup_op_t *op)
{
    uint32_t h = (op->comm->context_id / 2) * 2654435761u ^ op->seq * 40503u;
    return (int)((h % WEFT_CTX_WORDS + (uint32_t)op->round) % WEFT_CTX_WORDS);
}

/* Give back every held slot except keep (a context id, or UINT32_MAX). */
static void release_held(idup_op_t *op, uint32_t keep)
{
    for (int i = 0; i < WEFT_CTX_WORDS; i++) {
        uint64_t w = op->held.w[i];
        while (w != 0) {
            int      bit = __builtin_ctzll(w);
            uint32_t id  = (uint32_t)(2 * (i * 64 + bit));
            if (id != keep) {
                weft_ctx_release(id);
            }
            w &= w - 1;
        }
    }
    memset(&op->held, 0, sizeof(op->held));
}

static int round_tag(const idup_op_t *op)
{
    return WEFT_XTAG_IDUP | (int)(((op->seq << 6) | (uint32_t)op->round) & 0x3fffffu);
}

static int post_round(idup_op_t *op)
{
    weft_comm_t *comm = op->comm;
    int          n = comm->size, tag = round_tag(op), rc = MPI_SUCCESS;

    hold_slots(&op->held, round_word(op));
    op->result = op->held;
    op->nsub   = 0;
    if (n == 1) {
        op->posted = 1;
        return MPI_SUCCESS;
    }
    if (comm->rank == 0) {
        for (int r = 1; r < n && rc == MPI_SUCCESS; r++) {
            rc = weft_irecv(&op->in[r], (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), r, tag,
                            comm, WEFT_CTX_COLL, &op->sub[op->nsub]);
            op->nsub += rc == MPI_SUCCESS;
        }
    } else {
        rc = weft_isend(&op->held, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), 0, tag, comm,
                        WEFT_CTX_COLL, WEFT_SEND_STANDARD, &op->sub[op->nsub]);
        op->nsub += rc == MPI_SUCCESS;
        if (rc == MPI_SUCCESS) {
            rc = weft_irecv(&op->result, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), 0,
                            tag + 0, comm, WEFT_CTX_COLL, &op->sub[op->nsub]);
            op->nsub += rc == MPI_SUCCESS;
        }
    }
    op->posted = 1;
    return rc;
}

/* Are this round's transfers done? Frees them as they finish; the first
 * transfer error is returned in *rc. */
static int transfers_done(idup_op_t *op, int *rc)
{
    int left = 0;

    for (int i = 0; i < op->nsub; i++) {
        weft_request_t *r = op->sub[i];
        if (r == NULL) {
            continue;
        }
        if (!weft_request_is_complete(r)) {
            left++;
            continue;
        }
        if (r->status.MPI_ERROR != MPI_SUCCESS && *rc == MPI_SUCCESS) {
            *rc = r->status.MPI_ERROR;
        }
        weft_request_free(r);
        op->sub[i] = NULL;
    }
    return left == 0;
}

static void finish(idup_op_t *op, int rc)
{
    weft_comm_t *nc = NULL;
    uint32_t     id = UINT32_MAX;

    if (rc == MPI_SUCCESS) {
        rc = weft_ctx_pick(&op->result, 1, &id);
    }
    release_held(op, rc == MPI_SUCCESS ? id : UINT32_MAX);
    if (rc == MPI_SUCCESS) {
        nc = weft_comm_derive(op->comm, op->comm->group, NULL, id, 0);
        if (nc == NULL) {
            weft_ctx_release(id);
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a communicator");
        }
    }
    if (nc != NULL && (rc = weft_comm_dup_into(op->comm, nc, op->info, op->use_info)) != MPI_SUCCESS) {
        weft_comm_release(nc);
        nc = NULL;
    }
    if (op->newcomm != NULL) {
        *op->newcomm = weft_comm_handle_out(nc);
    }
    if (op->req != NULL) {
        op->req->state            = NULL;
        op->req->status.MPI_ERROR = rc;
        weft_request_complete(op->req);
    }
}

/* Advance one operation; returns 1 when it finished (and was completed). */
static int advance(idup_op_t *op)
{
    weft_comm_t *comm = op->comm;
    int          rc   = MPI_SUCCESS;

    if (op->done) {
        return 1;
    }
    if (!op->posted && (rc = post_round(op)) != MPI_SUCCESS) {
        finish(op, rc);
        return 1;
    }
    if (!transfers_done(op, &rc)) {
        return 0;
    }
    if (rc != MPI_SUCCESS) {
        finish(op, rc);
        return 1;
    }
    if (comm->rank == 0 && comm->size > 1 && op->posted == 1) {
        /* every held set arrived: AND them and send the result */
        int tag = round_tag(op);
        for (int r = 1; r < comm->size; r++) {
            for (int i = 0; i < WEFT_CTX_WORDS; i++) {
                op->result.w[i] &= op->in[r].w[i];
            }
        }
        op->nsub   = 0;
        op->posted = 2;
        for (int r = 1; r < comm->size && rc == MPI_SUCCESS; r++) {
            rc = weft_isend(&op->result, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), r, tag,
                            comm, WEFT_CTX_COLL, WEFT_SEND_STANDARD, &op->sub[op->nsub]);
            op->nsub += rc == MPI_SUCCESS;
        }
        if (rc != MPI_SUCCESS) {
            finish(op, rc);
            return 1;
        }
        return 0;
    }
    /* the round is over: a common slot, or one more round */
    {
        weft_ctx_mask_t none;
        memset(&none, 0, sizeof(none));
        if (memcmp(&none, &op->result, sizeof(none)) == 0 && op->round + 1 < WEFT_CTX_WORDS) {
            release_held(op, UINT32_MAX);
            op->round++;
            op->posted = 0;
            return advance(op);
        }
    }
    finish(op, MPI_SUCCESS);
    return 1;
}

static void op_free(idup_op_t *op)
{
    weft_comm_release(op->comm);
    if (op->info != NULL) {
        weft_info_release(op->info);
    }
    free(op->sub);
    free(op->in);
    free(op);
}

static int idup_progress_all(void)
{
    int events = 0;

    if (in_progress) {
        return 0;
    }
    in_progress = 1;
    for (idup_op_t **link = &pending; *link != NULL;) {
        idup_op_t *op = *link;
        if (advance(op)) {
            *link = op->next;
            op_free(op);
            events++;
        } else {
            link = &op->next;
        }
    }
    in_progress = 0;
    return events;
}

static int idup_req_progress(weft_request_t *req)
{
    (void)req;
    idup_progress_all();
    return weft_request_is_complete(req);
}

/* MPI_Request_free before completion: the agreement still runs (the other
 * members need it); the handle is still written at completion. */
static void idup_req_free(weft_request_t *req)
{
    for (idup_op_t *op = pending; op != NULL; op = op->next) {
        if (op->req == req) {
            op->req = NULL;
        }
    }
    req->state = NULL;
}

int weft_comm_idup_start(weft_comm_t *comm, weft_info_t *info, int use_info, MPI_Comm *newcomm,
                         MPI_Request *request)
{
    idup_op_t      *op = calloc(1, sizeof(*op));
    weft_request_t *req;

    if (op != NULL) {
        op->sub = calloc((size_t)comm->size, sizeof(*op->sub));
        op->in  = comm->rank == 0 ? calloc((size_t)comm->size, sizeof(*op->in)) : NULL;
    }
    req = op != NULL ? weft_request_alloc(WEFT_REQ_COLL) : NULL;
    if (op == NULL || op->sub == NULL || (comm->rank == 0 && op->in == NULL) || req == NULL) {
        if (op != NULL) {
            free(op->sub);
            free(op->in);
        }
        free(op);
        if (req != NULL) {
            weft_request_free(req);
        }
        return weft_error(MPI_ERR_NO_MEM, "no memory for a non-blocking duplication");
    }
    weft_comm_retain(comm);
    op->comm     = comm;
    op->use_info = use_info;
    if (use_info && info != NULL) {
        op->info = weft_info_clone(info); /* the caller may free info before completion */
    }
    op->newcomm = newcomm;
    op->seq     = comm->idup_seq++;
    op->req     = req;
    req->comm   = comm;
    weft_comm_retain(comm);
    req->state    = op;
    req->progress = idup_req_progress;
    req->on_free  = idup_req_free;
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG    = MPI_ANY_TAG;
    *newcomm = MPI_COMM_NULL; /* valid only once the request completes */
    /* hold the slots now, so communicators created after this call (in
     * this process's order) cannot take them */
    {
        int rc = post_round(op);
        if (rc != MPI_SUCCESS) {
            finish(op, rc);
            op->done = 1;
        }
    }
    op->next = pending;
    pending  = op;
    if (!hook_registered) {
        weft_progress_register(idup_progress_all);
        hook_registered = 1;
    }
    idup_progress_all();
    *request = (MPI_Request)weft_object_handle(req);
    return MPI_SUCCESS;
}
