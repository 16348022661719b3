/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Context-id allocation and the small internal exchanges communicator
 * construction needs (before any collective module exists for the new
 * communicator).
 *
 * Context ids: each process keeps a bitmask of free slots; slot s is context
 * id 2*s (2*s + 1 is its collective context). WORLD is slot 0, SELF slot 1.
 * A new communicator takes the lowest slot that is free on every member:
 * the members AND their masks (weft_ctx_agree) and all pick the same bit.
 *
 * Internal exchanges run over a "participant list" of a transport
 * communicator: every message uses that communicator's collective context
 * (WEFT_CTX_COLL) with a tag >= WEFT_XTAG_BASE, a range the collective
 * algorithms never use, so they match neither user traffic nor collective
 * traffic. All calls are blocking and must be entered by every participant
 * in the same order.
 */
#ifndef WEFT_CORE_COMM_CTX_H
#define WEFT_CORE_COMM_CTX_H

#include <stddef.h>
#include <stdint.h>

#include "core/comm.h"

#define WEFT_CTX_SLOTS 4096
#define WEFT_CTX_WORDS (WEFT_CTX_SLOTS / 64)

typedef struct {
    uint64_t w[WEFT_CTX_WORDS];
} weft_ctx_mask_t;

/* Internal tags (collective context only). Tags below WEFT_XTAG_BASE belong
 * to the collective algorithms. Each operation uses tag, tag+1, tag+2. */
#define WEFT_XTAG_BASE       0x40000000
#define WEFT_XTAG_CTX        0x40000100
#define WEFT_XTAG_SPLIT      0x40000200
#define WEFT_XTAG_INTER      0x40000300
#define WEFT_XTAG_MERGE      0x40000400
#define WEFT_XTAG_TOPO       0x40000500
#define WEFT_XTAG_BARRIER    0x40000600
#define WEFT_XTAG_COLL_SHM   0x40000700 /* shared-memory collective region setup */
#define WEFT_XTAG_DYNPROC    0x40000800 /* connect/accept, disconnect (core/dynproc) */
#define WEFT_XTAG_IDUP       0x44000000 /* | ((idup sequence << 6 | round) & 0x3fffff) */
#define WEFT_XTAG_INTER_USER 0x48000000 /* | (user tag << 3), MPI_Intercomm_create leaders */
#define WEFT_XTAG_CREATE_GRP 0x50000000 /* | (user tag << 2), MPI_Comm_create_group */
#define WEFT_XTAG_STRINGTAG  0x60000000 /* | hash(stringtag), sessions */

/* Tag for a string tag (MPI_Comm_create_from_group & co); multiples of 8,
 * so tag..tag+7 are the operation's. */
int weft_xtag_of_string(const char *stringtag);

typedef struct {
    weft_comm_t *comm;  /* transport communicator: ranks below are its peer ranks */
    const int   *ranks; /* participants' ranks in comm, NULL for 0..n-1 */
    int          n;     /* number of participants */
    int          me;    /* my index among them */
} weft_xgroup_t;

/* All ranks of an intracommunicator (the local group of an intercomm). */
void weft_xgroup_of_comm(weft_xgroup_t *x, weft_comm_t *comm);

/* Broadcast len bytes from participant root. */
int weft_x_bcast(const weft_xgroup_t *x, void *buf, size_t len, int root, int tag);
/* Bitwise AND of len bytes over all participants, result everywhere. */
int weft_x_allreduce_band(const weft_xgroup_t *x, void *buf, size_t len, int tag);
/* Every participant gives len bytes; all gets n*len bytes in participant order. */
int weft_x_allgather(const weft_xgroup_t *x, const void *mine, size_t len, void *all, int tag);
/* Variable sizes: *all_p (malloc'd, caller frees) gets the concatenation,
 * lens[i] (n entries, caller's array) each participant's length. */
int weft_x_allgatherv(const weft_xgroup_t *x, const void *mine, size_t len, void **all_p,
                      size_t *lens, int tag);
/* Synchronize participants. */
int weft_x_barrier(const weft_xgroup_t *x, int tag);

/* Two processes swap buffers over comm (peer is a peer rank of comm, e.g. a
 * remote rank of an intercomm); sizes are exchanged first, so *in_p is
 * malloc'd with *nin_p bytes. Deadlock-free: the lower world rank sends first. */
int weft_x_exchange(weft_comm_t *comm, int peer, const void *out, size_t nout, void **in_p,
                    size_t *nin_p, int tag);

/* This process's free slots. */
void weft_ctx_mask_local(weft_ctx_mask_t *mask);
/* Lowest n set bits of mask as context ids (no reservation). Returns
 * MPI_SUCCESS or MPI_ERR_OTHER when too few are free. */
int weft_ctx_pick(const weft_ctx_mask_t *mask, int n, uint32_t *ids);
/* Reserve / release a context id locally. */
void weft_ctx_reserve(uint32_t id);
void weft_ctx_release(uint32_t id);
/* Agree on n context ids free on all participants (not reserved: members
 * of the new communicator reserve with weft_ctx_reserve). */
int weft_ctx_agree(const weft_xgroup_t *x, int n, uint32_t *ids, int tag);
/* Number of context ids in use here (tests, diagnostics). */
int weft_ctx_in_use(void);

void weft_ctx_module_init(void);

#endif
