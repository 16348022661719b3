/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_idup / MPI_Comm_idup_with_info: the call returns at once and the
 * context-id agreement runs as a small state machine driven by the progress
 * engine (a registered hook, and the request's own progress callback under
 * Wait/Test), so the members may call it in any order relative to their
 * other non-blocking operations.
 *
 * Agreement: at the call, each member holds back the free context slots of
 * one word of its slot mask (64 slots, taken out of the local free mask, so
 * no communicator created meanwhile can take them) and sends them to the
 * leader (rank 0 of its group), which ANDs them. On an intercommunicator
 * the two leaders then swap their group's AND over the intercommunicator
 * and AND again. The leader sends the result back to its group; everyone
 * takes the lowest common slot (two on an intercommunicator: its context
 * and its local group's) and gives the rest back. The word is a hash of the
 * parent's context and the idup's sequence number, so idups pending at the
 * same time on different communicators (started in different orders by
 * different processes) hold different words; if a word has too few slots in
 * common, the next round tries the next word (at most every word once).
 * Messages use internal tags (WEFT_XTAG_IDUP | sequence of the idup on this
 * communicator, round), which every member counts in the same order, on the
 * collective context (of the local group's communicator within a group):
 * they never match user or collective traffic. The attributes are copied
 * and the handle written into *newcomm when the agreement completes.
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
    int              posted;  /* 0: round not started; PHASE_* below */
    int              done;    /* failed at the call: completed already */
    int              nsub;
    weft_request_t **sub;     /* this round's outstanding transfers */
    weft_ctx_mask_t  held;    /* slots held back from other creations */
    weft_ctx_mask_t  result;  /* AND of everyone's held slots */
    weft_ctx_mask_t  remote;  /* intercomm leader: the remote group's AND */
    weft_ctx_mask_t *in;      /* leader: the others' held slots */
} idup_op_t;

/* Phases of a round (op->posted). */
enum {
    PHASE_GATHER = 1, /* held slots on their way to the leader */
    PHASE_REMOTE,     /* intercomm leaders: swapping their groups' ANDs */
    PHASE_RESULT,     /* the leader's result on its way to the group */
};

/* The communicator of the group's internal messages: the local group's
 * intracommunicator of an intercommunicator. */
static weft_comm_t *group_comm(const idup_op_t *op)
{
    return op->comm->is_inter ? op->comm->local_comm : op->comm;
}

/* Context ids a duplicate needs: an intercommunicator's and its local
 * group's. */
static int ids_needed(const idup_op_t *op)
{
    return op->comm->is_inter ? 2 : 1;
}

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

/* Give back every held slot except keep and keep2 (context ids, or
 * UINT32_MAX). */
static void release_held(idup_op_t *op, uint32_t keep, uint32_t keep2)
{
    for (int i = 0; i < WEFT_CTX_WORDS; i++) {
        uint64_t w = op->held.w[i];
        while (w != 0) {
            int      bit = __builtin_ctzll(w);
            uint32_t id  = (uint32_t)(2 * (i * 64 + bit));
            if (id != keep && id != keep2) {
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
    weft_comm_t *comm = group_comm(op);
    int          n = comm->size, tag = round_tag(op), rc = MPI_SUCCESS;

    hold_slots(&op->held, round_word(op));
    op->result = op->held;
    op->nsub   = 0;
    op->posted = PHASE_GATHER;
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
                            tag, comm, WEFT_CTX_COLL, &op->sub[op->nsub]);
            op->nsub += rc == MPI_SUCCESS;
        }
        op->posted = PHASE_RESULT; /* a member only waits for the leader's result */
    }
    return rc;
}

static void mask_and(weft_ctx_mask_t *into, const weft_ctx_mask_t *with)
{
    for (int i = 0; i < WEFT_CTX_WORDS; i++) {
        into->w[i] &= with->w[i];
    }
}

/* Leader: swap the group's AND with the remote leader (remote rank 0). */
static int post_remote_swap(idup_op_t *op)
{
    int tag = round_tag(op), rc;

    op->nsub   = 0;
    op->posted = PHASE_REMOTE;
    rc = weft_irecv(&op->remote, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), 0, tag,
                    op->comm, WEFT_CTX_COLL, &op->sub[op->nsub]);
    op->nsub += rc == MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        rc = weft_isend(&op->result, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), 0, tag,
                        op->comm, WEFT_CTX_COLL, WEFT_SEND_STANDARD, &op->sub[op->nsub]);
        op->nsub += rc == MPI_SUCCESS;
    }
    return rc;
}

/* Leader: send the final result to the group. */
static int post_result(idup_op_t *op)
{
    weft_comm_t *comm = group_comm(op);
    int          tag = round_tag(op), rc = MPI_SUCCESS;

    op->nsub   = 0;
    op->posted = PHASE_RESULT;
    for (int r = 1; r < comm->size && rc == MPI_SUCCESS; r++) {
        rc = weft_isend(&op->result, (MPI_Count)sizeof(weft_ctx_mask_t), byte_type(), r, tag,
                        comm, WEFT_CTX_COLL, WEFT_SEND_STANDARD, &op->sub[op->nsub]);
        op->nsub += rc == MPI_SUCCESS;
    }
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
    uint32_t     ids[2] = {UINT32_MAX, UINT32_MAX};

    if (rc == MPI_SUCCESS) {
        rc = weft_ctx_pick(&op->result, ids_needed(op), ids);
    }
    if (rc != MPI_SUCCESS) {
        ids[0] = ids[1] = UINT32_MAX;
    }
    release_held(op, ids[0], ids[1]);
    if (rc == MPI_SUCCESS) {
        nc = weft_comm_derive(op->comm, op->comm->group, op->comm->remote_group, ids[0], ids[1]);
        if (nc == NULL) {
            weft_ctx_release(ids[0]);
            if (ids_needed(op) == 2) {
                weft_ctx_release(ids[1]);
            }
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
    int rc = MPI_SUCCESS;

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
    if (op->posted == PHASE_GATHER) {
        /* leader: every held set of the group arrived */
        for (int r = 1; r < group_comm(op)->size; r++) {
            mask_and(&op->result, &op->in[r]);
        }
        rc = op->comm->is_inter ? post_remote_swap(op) : post_result(op);
        if (rc != MPI_SUCCESS) {
            finish(op, rc);
            return 1;
        }
        return advance(op);
    }
    if (op->posted == PHASE_REMOTE) {
        mask_and(&op->result, &op->remote);
        if ((rc = post_result(op)) != MPI_SUCCESS) {
            finish(op, rc);
            return 1;
        }
        return advance(op);
    }
    /* the round is over: enough common slots, or one more round */
    {
        int common = 0;
        for (int i = 0; i < WEFT_CTX_WORDS; i++) {
            common += __builtin_popcountll(op->result.w[i]);
        }
        if (common < ids_needed(op) && op->round + 1 < WEFT_CTX_WORDS) {
            release_held(op, UINT32_MAX, UINT32_MAX);
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
        /* the leader's transfers: a receive per member, or a send per
         * member, or the two of the swap with the remote leader */
        op->sub = calloc((size_t)comm->size + 2, sizeof(*op->sub));
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
