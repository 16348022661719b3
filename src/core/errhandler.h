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

#endif
