/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-4 sessions: init/finalize, process sets (mpi://WORLD, mpi://SELF),
 * groups from process sets and communicators from groups.
 *
 * The first MPI_Session_init brings the runtime up when MPI_Init has not
 * (the world model then keeps its state: MPI_Initialized stays false, or
 * MPI_Finalized true); when the last session is finalized and the world
 * model is not active, the runtime goes down again, and a later
 * MPI_Session_init starts it again (docs/design.md "Re-initialisation").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/bsend.h"
#include "core/comm.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/errhandler.h"
#include "core/errors.h"
#include "core/info.h"
#include "core/objpool.h"
#include "core/progress.h"
#include "core/runtime.h"

struct weft_session {
    weft_object_t      hdr;
    weft_errhandler_t *errhandler;
    weft_info_t       *info;
    int                thread_level;
};

static weft_objpool_t session_pool = WEFT_OBJPOOL_INIT(weft_session_t);

static const char *const psets[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS ((int)(sizeof(psets) / sizeof(psets[0])))

weft_errhandler_t *weft_session_errhandler(MPI_Session session)
{
    weft_session_t *s = weft_session_from_handle(session);
    return s ? s->errhandler : &weft_errhandler_return;
}

static int thread_level_of(const char *v)
{
    if (v == NULL) {
        return MPI_THREAD_SINGLE;
    }
    if (strcmp(v, "MPI_THREAD_MULTIPLE") == 0) {
        return MPI_THREAD_MULTIPLE;
    }
    if (strcmp(v, "MPI_THREAD_SERIALIZED") == 0) {
        return MPI_THREAD_SERIALIZED;
    }
    if (strcmp(v, "MPI_THREAD_FUNNELED") == 0) {
        return MPI_THREAD_FUNNELED;
    }
    return MPI_THREAD_SINGLE;
}

static const char *thread_level_name(int level)
{
    return level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                            : "MPI_THREAD_SINGLE";
}

int weft_session_init_impl(weft_info_t *info, weft_errhandler_t *errhandler, MPI_Session *session)
{
    weft_session_t *s;
    int             rc;

    if (errhandler->target != WEFT_EH_FOR_ANY && errhandler->target != WEFT_EH_FOR_SESSION) {
        return weft_errhandler_check_target(errhandler, WEFT_EH_FOR_SESSION);
    }
    if (!weft_runtime_is_ready()) {
        weft_runtime_state_t world = weft_runtime.state; /* never started, or finalized */
        rc = weft_runtime_init(thread_level_of(weft_info_lookup(info, "thread_level")), NULL);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        weft_runtime.state = world; /* the world model is not started by a session */
    }
    s = weft_objpool_alloc(&session_pool);
    if (s == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a session");
    }
    weft_object_init(&s->hdr, WEFT_KIND_SESSION, 0);
    weft_errhandler_retain(errhandler);
    s->errhandler   = errhandler;
    s->info         = info ? weft_info_clone(info) : weft_info_new();
    s->thread_level = weft_runtime.thread_level;
    if (s->info == NULL) {
        weft_objpool_free(&session_pool, s);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a session");
    }
    weft_info_put(s->info, "thread_level", thread_level_name(s->thread_level));
    weft_runtime.sessions++;
    *session = (MPI_Session)s;
    return MPI_SUCCESS;
}

int weft_session_finalize_impl(MPI_Session *session)
{
    weft_session_t *s;

    if (session == NULL) {
        return weft_error(MPI_ERR_ARG, "argument session: NULL pointer");
    }
    s = weft_session_from_handle(*session);
    if (s == NULL) {
        return weft_error(MPI_ERR_SESSION, "argument session: invalid session");
    }
    weft_bsend_owner_fini(s);
    weft_errhandler_release(s->errhandler);
    weft_info_release(s->info);
    weft_objpool_free(&session_pool, s);
    *session = MPI_SESSION_NULL;
    weft_runtime.sessions--;
    if (weft_runtime.sessions == 0 && weft_runtime.core_up &&
        weft_runtime.state != WEFT_STATE_INITIALIZED) {
        weft_progress_async_stop(); /* under our entry's lock: stop drops it to join */
        weft_cs_switch_off(); /* our entry's lock too: the wrapper's exit is a no-op now */
        return weft_runtime_finalize();
    }
    return MPI_SUCCESS;
}

int weft_session_get_num_psets_impl(weft_session_t *session, weft_info_t *info, int *npset_names)
{
    (void)session;
    (void)info;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}

int weft_session_get_nth_pset_impl(weft_session_t *session, weft_info_t *info, int n, int *pset_len,
                                   char *pset_name)
{
    size_t len;

    (void)session;
    (void)info;
    if (n < 0 || n >= NPSETS) {
        return weft_error(MPI_ERR_ARG, "argument n: %d is not in 0..%d", n, NPSETS - 1);
    }
    len = strlen(psets[n]);
    if (*pset_len > 0) {
        size_t k = len < (size_t)*pset_len - 1 ? len : (size_t)*pset_len - 1;
        if (pset_name == NULL) {
            return weft_error(MPI_ERR_ARG, "argument pset_name: NULL pointer");
        }
        memcpy(pset_name, psets[n], k);
        pset_name[k] = '\0';
    }
    *pset_len = (int)len + 1;
    return MPI_SUCCESS;
}

static int pset_index(const char *name)
{
    for (int i = 0; name != NULL && i < NPSETS; i++) {
        if (strcmp(name, psets[i]) == 0) {
            return i;
        }
    }
    return -1;
}

static int unknown_pset(const char *name)
{
    return weft_error(MPI_ERR_ARG, "argument pset_name: \"%s\" is not a process set (have mpi://WORLD, mpi://SELF)",
                      name ? name : "(null)");
}

int weft_session_get_pset_info_impl(weft_session_t *session, const char *pset_name, MPI_Info *info)
{
    int          i = pset_index(pset_name);
    weft_info_t *in;
    char         size[16];

    (void)session;
    if (i < 0) {
        return unknown_pset(pset_name);
    }
    in = weft_info_new();
    if (in == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an info object");
    }
    snprintf(size, sizeof(size), "%d", i == 0 ? weft_runtime.pmi.size : 1);
    weft_info_put(in, "mpi_size", size);
    *info = (MPI_Info)in;
    return MPI_SUCCESS;
}

int weft_session_get_info_impl(weft_session_t *session, MPI_Info *info_used)
{
    weft_info_t *in = weft_info_clone(session->info);

    if (in == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an info object");
    }
    *info_used = (MPI_Info)in;
    return MPI_SUCCESS;
}

int weft_session_set_errhandler_impl(weft_session_t *session, weft_errhandler_t *errhandler)
{
    int rc = weft_errhandler_check_target(errhandler, WEFT_EH_FOR_SESSION);

    if (rc == MPI_SUCCESS) {
        weft_errhandler_assign(&session->errhandler, errhandler);
    }
    return rc;
}

int weft_session_get_errhandler_impl(weft_session_t *session, MPI_Errhandler *errhandler)
{
    weft_errhandler_retain(session->errhandler);
    *errhandler = (MPI_Errhandler)weft_object_handle(session->errhandler);
    return MPI_SUCCESS;
}

int weft_group_from_session_pset_impl(weft_session_t *session, const char *pset_name,
                                      MPI_Group *newgroup)
{
    int           i = pset_index(pset_name);
    weft_group_t *g;

    (void)session;
    if (i < 0) {
        return unknown_pset(pset_name);
    }
    /* a group of its own that remembers the session (its communicators
     * use the session's buffered-send buffer) */
    g = i == 0 ? weft_comm_world.group : weft_comm_self.group;
    g = weft_group_create(g->size, g->world_ranks);
    if (g == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a group");
    }
    g->session = session;
    *newgroup = (MPI_Group)weft_object_handle(g);
    return MPI_SUCCESS;
}

/* The members agree on a context id over WORLD's internal channel, tagged
 * by a hash of stringtag so concurrent creations with different tags do
 * not mix. */
int weft_comm_create_from_group_impl(weft_group_t *group, const char *stringtag, weft_info_t *info,
                                     weft_errhandler_t *errhandler, MPI_Comm *newcomm)
{
    weft_xgroup_t x;
    weft_comm_t  *nc;
    uint32_t      ctx;
    int           rc;

    if (stringtag == NULL) {
        return weft_error(MPI_ERR_ARG, "argument stringtag: NULL pointer");
    }
    if (strlen(stringtag) >= MPI_MAX_STRINGTAG_LEN) {
        return weft_error(MPI_ERR_ARG, "argument stringtag: longer than MPI_MAX_STRINGTAG_LEN-1");
    }
    if (group->size == 0) {
        *newcomm = MPI_COMM_NULL; /* MPI: the empty group gives MPI_COMM_NULL */
        return MPI_SUCCESS;
    }
    if (group->rank == MPI_UNDEFINED) {
        return weft_error(MPI_ERR_GROUP, "argument group: the calling process is not a member");
    }
    rc = weft_errhandler_check_target(errhandler, WEFT_EH_FOR_COMM);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    x.comm  = &weft_comm_world;
    x.ranks = group->world_ranks;
    x.n     = group->size;
    x.me    = group->rank;
    rc      = weft_ctx_agree(&x, 1, &ctx, weft_xtag_of_string(stringtag));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    nc = weft_comm_derive(NULL, group, NULL, ctx, 0);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a communicator");
    }
    weft_errhandler_assign(&nc->errhandler, errhandler);
    nc->session = group->session;
    if (info != NULL && (nc->info = weft_info_clone(info)) == NULL) {
        weft_comm_release(nc);
        return weft_error(MPI_ERR_NO_MEM, "no memory for info hints");
    }
    *newcomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}
