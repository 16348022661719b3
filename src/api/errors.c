/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The error edge of the API: recording argument errors and invoking the
 * error handler of the object a call acted on.
 */
#include <stdarg.h>
#include <stdio.h>

#include "api/api.h"
#include "core/errhandler.h"



int weft_err_arg(int cls, const char *arg, const char *fmt, ...)
{
    char    reason[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(reason, sizeof(reason), fmt, ap);
    va_end(ap);
    return weft_error(cls, "argument %s: %s", arg, reason);
}

int weft_err_not_ready(void)
{
    if (weft_runtime.state == WEFT_STATE_FINALIZED || weft_runtime.mpi_finalize_deferred) {
        return weft_error(MPI_ERR_OTHER, "called after MPI_Finalize");
    }
    return weft_error(MPI_ERR_OTHER, "called before MPI_Init");
}

int weft_api_unsupported(const char *name)
{
    weft_err_begin(name);
    return weft_error(MPI_ERR_UNSUPPORTED_OPERATION, "%s is not implemented in Weft %s yet "
                      "(see docs/STATUS.md)", name, WEFT_VERSION_STRING);
}

static void format_message(int rc, char *buf, size_t len)
{
    const char *cls_text = weft_error_string_of(weft_error_class_of(rc));
    const char *reason   = weft_err_reason();

    snprintf(buf, len, "%s: %s%s(%s)", weft_err_fname(), reason, reason[0] ? " " : "",
             cls_text ? cls_text : "unknown error code");
}

__attribute__((noreturn)) static void fatal(int rc)
{
    char msg[1024];
    char line[1200];

    format_message(rc, msg, sizeof(msg));
    snprintf(line, sizeof(line), "fatal error: %s", msg);
    weft_runtime_abort(rc, line);
}

/* Handler to use for an object: its own, else the one it inherits. Before
 * MPI_Init (or after finalize) errors are fatal, as the standard says. */
static int dispatch(weft_errhandler_t *eh, void *handle_p, int rc,
                    void (*call)(void (*fn)(void), void *handle_p, int *rc))
{
    if (!weft_runtime_is_ready() && weft_runtime.state != WEFT_STATE_FINALIZED) {
        eh = &weft_errhandler_fatal;
    }
    if (eh == NULL) {
        eh = &weft_errhandler_fatal;
    }
    switch (eh->mode) {
    case WEFT_EH_RETURN:
        return rc;
    case WEFT_EH_FATAL:
    case WEFT_EH_ABORT:
        fatal(rc);
    case WEFT_EH_USER: {
        int code = rc;
        call(eh->fn, handle_p, &code);
        return rc;
    }
    }
    return rc;
}

static void call_comm(void (*fn)(void), void *handle_p, int *rc)
{
    ((MPI_Comm_errhandler_function *)fn)((MPI_Comm *)handle_p, rc);
}

int weft_err_dispatch_comm(MPI_Comm comm, int rc)
{
    weft_comm_t *obj = weft_err_get_comm();
    MPI_File     file;

    if (weft_err_get_file(&file)) { /* a file request completed by MPI_Wait/Test... */
        return weft_err_dispatch_file(file, rc);
    }
    if (obj == NULL) {
        obj = weft_comm_from_handle(comm);
    }
    if (obj == NULL) {
        /* Invalid communicator: its error goes to MPI_COMM_SELF's handler
         * (MPI-4 rule for errors without a valid object). */
        obj = &weft_comm_self;
    }
    MPI_Comm h = (MPI_Comm)weft_object_handle(obj);
    return dispatch(obj->errhandler, &h, rc, call_comm);
}

static void call_win(void (*fn)(void), void *handle_p, int *rc)
{
    ((MPI_Win_errhandler_function *)fn)((MPI_Win *)handle_p, rc);
}

__attribute__((weak)) weft_errhandler_t *weft_win_errhandler(MPI_Win win)
{
    (void)win;
    return weft_comm_self.errhandler;
}

int weft_err_dispatch_win(MPI_Win win, int rc)
{
    return dispatch(weft_win_errhandler(win), &win, rc, call_win);
}

static void call_file(void (*fn)(void), void *handle_p, int *rc)
{
    ((MPI_File_errhandler_function *)fn)((MPI_File *)handle_p, rc);
}

/* Files default to MPI_ERRORS_RETURN, as the standard requires. */
__attribute__((weak)) weft_errhandler_t *weft_file_errhandler(MPI_File file)
{
    (void)file;
    return &weft_errhandler_return;
}

int weft_err_dispatch_file(MPI_File file, int rc)
{
    return dispatch(weft_file_errhandler(file), &file, rc, call_file);
}

static void call_session(void (*fn)(void), void *handle_p, int *rc)
{
    ((MPI_Session_errhandler_function *)fn)((MPI_Session *)handle_p, rc);
}

__attribute__((weak)) weft_errhandler_t *weft_session_errhandler(MPI_Session session)
{
    (void)session;
    return &weft_errhandler_return;
}

int weft_err_dispatch_session(MPI_Session session, int rc)
{
    return dispatch(weft_session_errhandler(session), &session, rc, call_session);
}
