/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM communication contexts. Within a node every put, get and atomic
 * is complete when it returns, so each context is trivially its own
 * ordering and completion domain: shmem_ctx_quiet/fence order memory.
 * Operations on PEs of other nodes (shmem_net.c) share one completion
 * state, so quiet on one context also completes the others' (allowed: it
 * never completes less). What a context
 * does change is the PE numbering (a context made by shmem_team_create_ctx
 * addresses PEs by their index in that team) and, for SHMEM_CTX_PRIVATE,
 * which thread may use it. */
#include "shmem/shmem_internal.h"

#include <pthread.h>
#include <stdlib.h>

static const long ctx_known_options = SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE;

void weft_shmem_ctx_check(const char *call, shmem_ctx_t ctx)
{
    weft_shmem_check_init(call);
    if (ctx == SHMEM_CTX_INVALID) {
        weft_shmem_fail(call, "ctx is SHMEM_CTX_INVALID");
    }
    if (ctx->magic != WEFT_SHMEM_CTX_MAGIC) {
        weft_shmem_fail(call, "ctx %p is not a live context (destroyed, or never created)", (void *)ctx);
    }
    if ((ctx->options & SHMEM_CTX_PRIVATE) && ctx->owner != (unsigned long)pthread_self()) {
        weft_shmem_fail(call, "ctx %p was created SHMEM_CTX_PRIVATE by another thread", (void *)ctx);
    }
}

int weft_shmem_ctx_pe(const char *call, shmem_ctx_t ctx, int pe)
{
    weft_shmem_ctx_check(call, ctx);
    struct weft_shmem_team *t = ctx->team;
    if (t == SHMEM_TEAM_WORLD) {
        return pe;
    }
    if (pe < 0 || pe >= t->n_pes) {
        weft_shmem_fail(call, "PE %d out of range of the context's team (0..%d)", pe, t->n_pes - 1);
    }
    return t->world_pe[pe];
}

static int ctx_new(const char *call, struct weft_shmem_team *team, long options, shmem_ctx_t *ctx)
{
    if (options & ~ctx_known_options) {
        weft_shmem_fail(call, "options 0x%lx hold bits that are not SHMEM_CTX_SERIALIZED, _PRIVATE or _NOSTORE",
                        options);
    }
    struct weft_shmem_ctx *c = malloc(sizeof *c);
    if (!c) {
        *ctx = SHMEM_CTX_INVALID;
        return -1; /* the standard's way to report "no more contexts" */
    }
    *c = (struct weft_shmem_ctx){WEFT_SHMEM_CTX_MAGIC, options, team, (unsigned long)pthread_self()};
    __atomic_add_fetch(&team->n_contexts, 1, __ATOMIC_RELAXED);
    *ctx = c;
    return 0;
}

int shmem_ctx_create(long options, shmem_ctx_t *ctx)
{
    weft_shmem_check_init("shmem_ctx_create");
    return ctx_new("shmem_ctx_create", SHMEM_TEAM_WORLD, options, ctx);
}

int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx)
{
    weft_shmem_check_init("shmem_team_create_ctx");
    if (team == SHMEM_TEAM_INVALID) {
        *ctx = SHMEM_CTX_INVALID;
        return -1;
    }
    return ctx_new("shmem_team_create_ctx", team, options, ctx);
}

void shmem_ctx_destroy(shmem_ctx_t ctx)
{
    if (ctx == SHMEM_CTX_INVALID) {
        return; /* the standard makes this a no-op */
    }
    if (ctx == SHMEM_CTX_DEFAULT) {
        weft_shmem_fail("shmem_ctx_destroy", "SHMEM_CTX_DEFAULT cannot be destroyed");
    }
    weft_shmem_ctx_check("shmem_ctx_destroy", ctx);
    shmem_ctx_quiet(ctx); /* destroying a context completes its operations */
    __atomic_sub_fetch(&ctx->team->n_contexts, 1, __ATOMIC_RELAXED);
    ctx->magic = 0;
    free(ctx);
}

int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team)
{
    if (ctx == SHMEM_CTX_INVALID) {
        *team = SHMEM_TEAM_INVALID;
        return -1;
    }
    weft_shmem_ctx_check("shmem_ctx_get_team", ctx);
    *team = ctx->team;
    return 0;
}
