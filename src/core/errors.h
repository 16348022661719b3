/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Error reporting inside the library. Impl functions return an MPI error code
 * and record the reason with weft_error(); the API edge builds the message
 * "MPI_Call(arg): reason" and dispatches the error handler. Reasons are
 * per-thread and formatted only on the failure path.
 */
#ifndef WEFT_CORE_ERRORS_H
#define WEFT_CORE_ERRORS_H

#include <mpi.h>
#include "core/object_types.h"

/* The MPI call in progress on this thread (errors.c keeps the rest of the
 * error state): reset at the entry of every call, so its reset is inline. */
typedef struct {
    const char  *fname;
    weft_comm_t *comm;
    int          has_reason, has_file;
} weft_err_call_t;
extern __thread weft_err_call_t weft_err_call __attribute__((tls_model("initial-exec")));

/* Start of an MPI call: remembers its name for messages. */
static inline void weft_err_begin(const char *fname)
{
    weft_err_call.fname      = fname;
    weft_err_call.comm       = NULL;
    weft_err_call.has_reason = 0;
    weft_err_call.has_file   = 0;
}
/* A thread other than the application's (the MPI-IO worker) ends: free its
 * reason buffer, which thread-local storage would otherwise leak. */
void weft_err_thread_end(void);

/* Record the reason for error class cls; returns cls. */
int weft_error(int cls, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The current call's name and recorded reason ("" when none). */
const char *weft_err_fname(void);
const char *weft_err_reason(void);

/* Route the next dispatch of this call to comm's handler (requests remember
 * their communicator; Wait/Test errors belong to it). */
void weft_err_set_comm(weft_comm_t *comm);
weft_comm_t *weft_err_get_comm(void);

/* Route the next dispatch to a file's handler instead (requests of
 * non-blocking file access: their Wait/Test errors belong to the file). */
void     weft_err_set_file(MPI_File file);
int      weft_err_get_file(MPI_File *file); /* 1 when set */

/* Background work run inside another MPI call (progress hooks advancing
 * non-blocking collective I/O): its reasons must not become that call's,
 * nor that call's its. weft_err_push starts a fresh reason under fname;
 * weft_err_pop gives the call its own back. */
typedef struct {
    const char  *fname;
    char        *reason;
    int          has_reason, has_file;
    weft_comm_t *comm;
    MPI_File     file;
} weft_err_saved_t;
void weft_err_push(weft_err_saved_t *saved, const char *fname);
void weft_err_pop(const weft_err_saved_t *saved);
int  weft_err_has_reason(void);

/* Error class of a code (codes added by MPI_Add_error_code map to a class). */
int weft_error_class_of(int code);
/* Text of a code or class, or NULL if unknown. */
const char *weft_error_string_of(int code);

#endif
