/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Error handlers: the three predefined ones and user functions bound to a
 * comm, win, file or session.
 */
#ifndef WEFT_CORE_ERRHANDLER_H
#define WEFT_CORE_ERRHANDLER_H

#include "core/object.h"

typedef enum {
    WEFT_EH_FATAL,  /* MPI_ERRORS_ARE_FATAL: print, abort the job */
    WEFT_EH_ABORT,  /* MPI_ERRORS_ABORT: print, abort the processes of the object */
    WEFT_EH_RETURN, /* MPI_ERRORS_RETURN */
    WEFT_EH_USER
} weft_eh_mode_t;

typedef enum {
    WEFT_EH_FOR_ANY,
    WEFT_EH_FOR_COMM,
    WEFT_EH_FOR_WIN,
    WEFT_EH_FOR_FILE,
    WEFT_EH_FOR_SESSION
} weft_eh_target_t;

struct weft_errhandler {
    weft_object_t    hdr;
    weft_eh_mode_t   mode;
    weft_eh_target_t target;
    void           (*fn)(void); /* the user function, cast by target */
};

extern weft_errhandler_t weft_errhandler_fatal;
extern weft_errhandler_t weft_errhandler_abort;
extern weft_errhandler_t weft_errhandler_return;

int  weft_errhandler_module_init(void);
void weft_errhandler_retain(weft_errhandler_t *eh);
void weft_errhandler_release(weft_errhandler_t *eh);

/* MPI_SUCCESS if eh may be set on an object of kind target, else
 * MPI_ERR_ARG (reason recorded). */
int weft_errhandler_check_target(const weft_errhandler_t *eh, weft_eh_target_t target);
/* *slot = eh, taking a reference on eh and dropping the old one. */
void weft_errhandler_assign(weft_errhandler_t **slot, weft_errhandler_t *eh);

/* Handler lookups used by the API's error dispatch (api/errors.c). Windows
 * and files provide their handler slot through the hooks below (weak
 * defaults: none; the RMA / I/O modules define them). */
weft_errhandler_t  *weft_win_errhandler(MPI_Win win);
weft_errhandler_t  *weft_file_errhandler(MPI_File file);
weft_errhandler_t  *weft_session_errhandler(MPI_Session session);
weft_errhandler_t **weft_win_errhandler_slot(weft_win_t *win);
weft_errhandler_t **weft_file_errhandler_slot(MPI_File file);

/* MPI_File_set/get_errhandler (MPI_FILE_NULL: the default for new files). */
int weft_file_errhandler_set(MPI_File file, weft_errhandler_t *errhandler);
int weft_file_errhandler_get(MPI_File file, MPI_Errhandler *errhandler);

#endif
