/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Error handlers: the predefined ones (usable before MPI_Init, e.g. by
 * MPI_Session_init), user handlers for comm/win/file/session, and the
 * per-object handler lookups the API's error dispatch uses.
 */
#include "core/errhandler.h"

#include <stdlib.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/errors.h"
#include "core/objpool.h"

#define BUILTIN_EH(_handle, _mode)                                                         \
    {                                                                                      \
        .hdr  = {.magic    = WEFT_MAGIC(WEFT_KIND_ERRHANDLER),                             \
                 .refcount = 1,                                                            \
                 .toint    = 0,                                                            \
                 .handle   = (uintptr_t)(_handle)},                                        \
        .mode = (_mode), .target = WEFT_EH_FOR_ANY, .fn = NULL                             \
    }

/* Statically initialised so handle conversion works before MPI_Init. */
weft_errhandler_t  weft_errhandler_fatal  = BUILTIN_EH(0x141, WEFT_EH_FATAL);
weft_errhandler_t  weft_errhandler_abort  = BUILTIN_EH(0x142, WEFT_EH_ABORT);
weft_errhandler_t  weft_errhandler_return = BUILTIN_EH(0x143, WEFT_EH_RETURN);
weft_errhandler_t *weft_builtin_errhandler[4] = {NULL, &weft_errhandler_fatal, &weft_errhandler_abort,
                                                 &weft_errhandler_return};

_Static_assert((uintptr_t)MPI_ERRORS_ARE_FATAL == 0x141, "ABI handle value");
_Static_assert((uintptr_t)MPI_ERRORS_ABORT == 0x142, "ABI handle value");
_Static_assert((uintptr_t)MPI_ERRORS_RETURN == 0x143, "ABI handle value");

static weft_objpool_t eh_pool = WEFT_OBJPOOL_INIT(weft_errhandler_t);

int weft_errhandler_module_init(void)
{
    return MPI_SUCCESS;
}

void weft_errhandler_retain(weft_errhandler_t *eh)
{
    if (eh != NULL && eh->hdr.handle == 0) {
        eh->hdr.refcount++;
    }
}

void weft_errhandler_release(weft_errhandler_t *eh)
{
    if (eh == NULL || eh->hdr.handle != 0) {
        return;
    }
    if (--eh->hdr.refcount == 0) {
        weft_objpool_free(&eh_pool, eh);
    }
}

static int eh_create(weft_eh_target_t target, void (*fn)(void), MPI_Errhandler *errhandler)
{
    weft_errhandler_t *eh;

    if (fn == NULL) {
        return weft_error(MPI_ERR_ARG, "argument fn: NULL error handler function");
    }
    eh = weft_objpool_alloc(&eh_pool);
    if (eh == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an error handler");
    }
    weft_object_init(&eh->hdr, WEFT_KIND_ERRHANDLER, 0);
    eh->mode   = WEFT_EH_USER;
    eh->target = target;
    eh->fn     = fn;
    *errhandler = (MPI_Errhandler)weft_object_handle(eh);
    return MPI_SUCCESS;
}

static const char *target_name(weft_eh_target_t t)
{
    switch (t) {
    case WEFT_EH_FOR_COMM:
        return "communicator";
    case WEFT_EH_FOR_WIN:
        return "window";
    case WEFT_EH_FOR_FILE:
        return "file";
    case WEFT_EH_FOR_SESSION:
        return "session";
    default:
        return "any object";
    }
}

int weft_errhandler_check_target(const weft_errhandler_t *eh, weft_eh_target_t target)
{
    if (eh->target != WEFT_EH_FOR_ANY && eh->target != target) {
        return weft_error(MPI_ERR_ARG, "argument errhandler: a %s error handler cannot be set on a %s",
                          target_name(eh->target), target_name(target));
    }
    return MPI_SUCCESS;
}

/* Replace *slot by eh (references moved accordingly). */
void weft_errhandler_assign(weft_errhandler_t **slot, weft_errhandler_t *eh)
{
    weft_errhandler_retain(eh);
    weft_errhandler_release(*slot);
    *slot = eh;
}

static int eh_out(weft_errhandler_t *eh, MPI_Errhandler *errhandler)
{
    if (eh == NULL) {
        eh = &weft_errhandler_fatal;
    }
    weft_errhandler_retain(eh);
    *errhandler = (MPI_Errhandler)weft_object_handle(eh);
    return MPI_SUCCESS;
}

int weft_comm_create_errhandler_impl(MPI_Comm_errhandler_function *comm_errhandler_fn,
                                     MPI_Errhandler *errhandler)
{
    return eh_create(WEFT_EH_FOR_COMM, (void (*)(void))comm_errhandler_fn, errhandler);
}

int weft_win_create_errhandler_impl(MPI_Win_errhandler_function *win_errhandler_fn,
                                    MPI_Errhandler *errhandler)
{
    return eh_create(WEFT_EH_FOR_WIN, (void (*)(void))win_errhandler_fn, errhandler);
}

int weft_file_create_errhandler_impl(MPI_File_errhandler_function *file_errhandler_fn,
                                     MPI_Errhandler *errhandler)
{
    return eh_create(WEFT_EH_FOR_FILE, (void (*)(void))file_errhandler_fn, errhandler);
}

int weft_session_create_errhandler_impl(MPI_Session_errhandler_function *session_errhandler_fn,
                                        MPI_Errhandler *errhandler)
{
    return eh_create(WEFT_EH_FOR_SESSION, (void (*)(void))session_errhandler_fn, errhandler);
}

int weft_comm_set_errhandler_impl(weft_comm_t *comm, weft_errhandler_t *errhandler)
{
    int rc = weft_errhandler_check_target(errhandler, WEFT_EH_FOR_COMM);

    if (rc == MPI_SUCCESS) {
        weft_errhandler_assign(&comm->errhandler, errhandler);
    }
    return rc;
}

int weft_comm_get_errhandler_impl(weft_comm_t *comm, MPI_Errhandler *errhandler)
{
    return eh_out(comm->errhandler, errhandler);
}

int weft_errhandler_free_impl(MPI_Errhandler *errhandler)
{
    weft_errhandler_t *eh;

    if (errhandler == NULL) {
        return weft_error(MPI_ERR_ARG, "argument errhandler: NULL pointer");
    }
    eh = weft_errhandler_from_handle(*errhandler);
    if (eh == NULL) {
        return weft_error(MPI_ERR_ERRHANDLER, "argument errhandler: invalid error handler%s",
                          *errhandler == MPI_ERRHANDLER_NULL ? " (null handle)" : "");
    }
    weft_errhandler_release(eh); /* objects using it keep their reference */
    *errhandler = MPI_ERRHANDLER_NULL;
    return MPI_SUCCESS;
}

/* ---- windows and files ------------------------------------------------ */

/* Where a window keeps its handler; the RMA module defines the real one. */
__attribute__((weak)) weft_errhandler_t **weft_win_errhandler_slot(weft_win_t *win)
{
    (void)win;
    return NULL;
}

/* Where a file keeps its handler; the I/O module defines the real one. */
__attribute__((weak)) weft_errhandler_t **weft_file_errhandler_slot(MPI_File file)
{
    (void)file;
    return NULL;
}

/* Files default to MPI_ERRORS_RETURN; MPI_File_set_errhandler on
 * MPI_FILE_NULL changes that default. */
static weft_errhandler_t *file_default = &weft_errhandler_return;

weft_errhandler_t *weft_win_errhandler(MPI_Win win)
{
    weft_win_t         *w    = weft_win_from_handle(win);
    weft_errhandler_t **slot = w ? weft_win_errhandler_slot(w) : NULL;

    return slot && *slot ? *slot : weft_comm_self.errhandler;
}

weft_errhandler_t *weft_file_errhandler(MPI_File file)
{
    weft_errhandler_t **slot = file != MPI_FILE_NULL ? weft_file_errhandler_slot(file) : NULL;

    return slot && *slot ? *slot : file_default;
}

int weft_win_set_errhandler_impl(weft_win_t *win, weft_errhandler_t *errhandler)
{
    weft_errhandler_t **slot = weft_win_errhandler_slot(win);
    int                 rc   = weft_errhandler_check_target(errhandler, WEFT_EH_FOR_WIN);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (slot == NULL) {
        return weft_error(MPI_ERR_WIN, "argument win: windows are not available yet");
    }
    weft_errhandler_assign(slot, errhandler);
    return MPI_SUCCESS;
}

int weft_win_get_errhandler_impl(weft_win_t *win, MPI_Errhandler *errhandler)
{
    weft_errhandler_t **slot = weft_win_errhandler_slot(win);

    return eh_out(slot && *slot ? *slot : weft_comm_self.errhandler, errhandler);
}

int weft_file_errhandler_set(MPI_File file, weft_errhandler_t *errhandler)
{
    weft_errhandler_t **slot;
    int                 rc = weft_errhandler_check_target(errhandler, WEFT_EH_FOR_FILE);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (file == MPI_FILE_NULL) {
        weft_errhandler_retain(errhandler);
        if (file_default != &weft_errhandler_return) {
            weft_errhandler_release(file_default);
        }
        file_default = errhandler;
        return MPI_SUCCESS;
    }
    slot = weft_file_errhandler_slot(file);
    if (slot == NULL) {
        return weft_error(MPI_ERR_FILE, "argument file: invalid file");
    }
    weft_errhandler_assign(slot, errhandler);
    return MPI_SUCCESS;
}

int weft_file_errhandler_get(MPI_File file, MPI_Errhandler *errhandler)
{
    if (file != MPI_FILE_NULL && weft_file_errhandler_slot(file) == NULL) {
        return weft_error(MPI_ERR_FILE, "argument file: invalid file");
    }
    return eh_out(weft_file_errhandler(file), errhandler);
}
