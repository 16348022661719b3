/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "core/errors.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* Per-thread error state touched by every MPI call: small scalars with the
 * initial-exec TLS model (no __tls_get_addr call on the hot path; small
 * enough for glibc's static TLS surplus when the library is dlopen'ed, e.g.
 * by mpi4py). The reason text lives on the heap, allocated on first error. */
#define WEFT_TLS __thread __attribute__((tls_model("initial-exec")))
#define REASON_LEN 768

WEFT_TLS weft_err_call_t weft_err_call = {.fname = "MPI"};
static WEFT_TLS char    *err_reason;
static WEFT_TLS MPI_File err_file;

void weft_err_thread_end(void)
{
    free(err_reason);
    err_reason               = NULL;
    weft_err_call.has_reason = 0;
}

int weft_error(int cls, const char *fmt, ...)
{
    va_list ap;

    if (weft_err_call.has_reason) { /* the first (innermost) reason wins */
        return cls;
    }
    if (err_reason == NULL && (err_reason = malloc(REASON_LEN)) == NULL) {
        return cls;
    }
    va_start(ap, fmt);
    vsnprintf(err_reason, REASON_LEN, fmt, ap);
    va_end(ap);
    weft_err_call.has_reason = 1;
    return cls;
}

const char *weft_err_fname(void)
{
    return weft_err_call.fname;
}

const char *weft_err_reason(void)
{
    return weft_err_call.has_reason ? err_reason : "";
}

void weft_err_set_comm(weft_comm_t *comm)
{
    weft_err_call.comm = comm;
}

weft_comm_t *weft_err_get_comm(void)
{
    return weft_err_call.comm;
}

void weft_err_set_file(MPI_File file)
{
    err_file               = file;
    weft_err_call.has_file = 1;
}

int weft_err_get_file(MPI_File *file)
{
    if (weft_err_call.has_file) {
        *file = err_file;
    }
    return weft_err_call.has_file;
}

int weft_err_has_reason(void)
{
    return weft_err_call.has_reason;
}

void weft_err_push(weft_err_saved_t *saved, const char *fname)
{
    *saved = (weft_err_saved_t){.fname      = weft_err_call.fname,
                                .reason     = err_reason,
                                .has_reason = weft_err_call.has_reason,
                                .has_file   = weft_err_call.has_file,
                                .comm       = weft_err_call.comm,
                                .file       = err_file};
    weft_err_begin(fname);
    err_reason = NULL; /* a buffer of its own, allocated on a first error */
}

void weft_err_pop(const weft_err_saved_t *saved)
{
    free(err_reason);
    err_reason               = saved->reason;
    err_file                 = saved->file;
    weft_err_call.fname      = saved->fname;
    weft_err_call.comm       = saved->comm;
    weft_err_call.has_reason = saved->has_reason;
    weft_err_call.has_file   = saved->has_file;
}

static const char *const class_strings[] = {
    [MPI_SUCCESS]                   = "MPI_SUCCESS: no error",
    [MPI_ERR_BUFFER]                = "MPI_ERR_BUFFER: invalid buffer pointer",
    [MPI_ERR_COUNT]                 = "MPI_ERR_COUNT: invalid count argument",
    [MPI_ERR_TYPE]                  = "MPI_ERR_TYPE: invalid datatype",
    [MPI_ERR_TAG]                   = "MPI_ERR_TAG: invalid tag",
    [MPI_ERR_COMM]                  = "MPI_ERR_COMM: invalid communicator",
    [MPI_ERR_RANK]                  = "MPI_ERR_RANK: invalid rank",
    [MPI_ERR_REQUEST]               = "MPI_ERR_REQUEST: invalid request",
    [MPI_ERR_ROOT]                  = "MPI_ERR_ROOT: invalid root",
    [MPI_ERR_GROUP]                 = "MPI_ERR_GROUP: invalid group",
    [MPI_ERR_OP]                    = "MPI_ERR_OP: invalid reduction operation",
    [MPI_ERR_TOPOLOGY]              = "MPI_ERR_TOPOLOGY: invalid topology",
    [MPI_ERR_DIMS]                  = "MPI_ERR_DIMS: invalid dimension argument",
    [MPI_ERR_ARG]                   = "MPI_ERR_ARG: invalid argument",
    [MPI_ERR_UNKNOWN]               = "MPI_ERR_UNKNOWN: unknown error",
    [MPI_ERR_TRUNCATE]              = "MPI_ERR_TRUNCATE: message truncated",
    [MPI_ERR_OTHER]                 = "MPI_ERR_OTHER: other error",
    [MPI_ERR_INTERN]                = "MPI_ERR_INTERN: internal error",
    [MPI_ERR_PENDING]               = "MPI_ERR_PENDING: pending request",
    [MPI_ERR_IN_STATUS]             = "MPI_ERR_IN_STATUS: error code is in status",
    [MPI_ERR_ACCESS]                = "MPI_ERR_ACCESS: permission denied",
    [MPI_ERR_AMODE]                 = "MPI_ERR_AMODE: invalid file access mode",
    [MPI_ERR_ASSERT]                = "MPI_ERR_ASSERT: invalid assert argument",
    [MPI_ERR_BAD_FILE]              = "MPI_ERR_BAD_FILE: invalid file name",
    [MPI_ERR_BASE]                  = "MPI_ERR_BASE: invalid base address",
    [MPI_ERR_CONVERSION]            = "MPI_ERR_CONVERSION: data conversion error",
    [MPI_ERR_DISP]                  = "MPI_ERR_DISP: invalid displacement",
    [MPI_ERR_DUP_DATAREP]           = "MPI_ERR_DUP_DATAREP: data representation already defined",
    [MPI_ERR_FILE_EXISTS]           = "MPI_ERR_FILE_EXISTS: file exists",
    [MPI_ERR_FILE_IN_USE]           = "MPI_ERR_FILE_IN_USE: file in use",
    [MPI_ERR_FILE]                  = "MPI_ERR_FILE: invalid file handle",
    [MPI_ERR_INFO_KEY]              = "MPI_ERR_INFO_KEY: info key too long",
    [MPI_ERR_INFO_NOKEY]            = "MPI_ERR_INFO_NOKEY: no such info key",
    [MPI_ERR_INFO_VALUE]            = "MPI_ERR_INFO_VALUE: info value too long",
    [MPI_ERR_INFO]                  = "MPI_ERR_INFO: invalid info object",
    [MPI_ERR_IO]                    = "MPI_ERR_IO: I/O error",
    [MPI_ERR_KEYVAL]                = "MPI_ERR_KEYVAL: invalid keyval",
    [MPI_ERR_LOCKTYPE]              = "MPI_ERR_LOCKTYPE: invalid lock type",
    [MPI_ERR_NAME]                  = "MPI_ERR_NAME: name not published",
    [MPI_ERR_NO_MEM]                = "MPI_ERR_NO_MEM: out of memory",
    [MPI_ERR_NOT_SAME]              = "MPI_ERR_NOT_SAME: arguments differ across processes",
    [MPI_ERR_NO_SPACE]              = "MPI_ERR_NO_SPACE: out of space",
    [MPI_ERR_NO_SUCH_FILE]          = "MPI_ERR_NO_SUCH_FILE: no such file",
    [MPI_ERR_PORT]                  = "MPI_ERR_PORT: invalid port name",
    [MPI_ERR_QUOTA]                 = "MPI_ERR_QUOTA: quota exceeded",
    [MPI_ERR_READ_ONLY]             = "MPI_ERR_READ_ONLY: read-only file",
    [MPI_ERR_RMA_ATTACH]            = "MPI_ERR_RMA_ATTACH: memory cannot be attached",
    [MPI_ERR_RMA_CONFLICT]          = "MPI_ERR_RMA_CONFLICT: conflicting RMA accesses",
    [MPI_ERR_RMA_RANGE]             = "MPI_ERR_RMA_RANGE: target memory out of window range",
    [MPI_ERR_RMA_SHARED]            = "MPI_ERR_RMA_SHARED: memory cannot be shared",
    [MPI_ERR_RMA_SYNC]              = "MPI_ERR_RMA_SYNC: wrong RMA synchronization",
    [MPI_ERR_SERVICE]               = "MPI_ERR_SERVICE: invalid service name",
    [MPI_ERR_SIZE]                  = "MPI_ERR_SIZE: invalid size",
    [MPI_ERR_SPAWN]                 = "MPI_ERR_SPAWN: spawn failed",
    [MPI_ERR_UNSUPPORTED_DATAREP]   = "MPI_ERR_UNSUPPORTED_DATAREP: unsupported data representation",
    [MPI_ERR_UNSUPPORTED_OPERATION] = "MPI_ERR_UNSUPPORTED_OPERATION: operation not supported",
    [MPI_ERR_WIN]                   = "MPI_ERR_WIN: invalid window",
    [MPI_ERR_RMA_FLAVOR]            = "MPI_ERR_RMA_FLAVOR: wrong window flavor",
    [MPI_ERR_PROC_ABORTED]          = "MPI_ERR_PROC_ABORTED: process aborted",
    [MPI_ERR_VALUE_TOO_LARGE]       = "MPI_ERR_VALUE_TOO_LARGE: value too large for the output",
    [MPI_ERR_SESSION]               = "MPI_ERR_SESSION: invalid session",
    [MPI_ERR_ERRHANDLER]            = "MPI_ERR_ERRHANDLER: invalid error handler",
    [MPI_ERR_ABI]                   = "MPI_ERR_ABI: ABI mismatch",
};

/* User-defined classes and codes (MPI_Add_error_class/code/string) are kept
 * by the error-handling module; these weak defaults cover the predefined set. */
__attribute__((weak)) int weft_user_error_class_of(int code)
{
    (void)code;
    return -1;
}

__attribute__((weak)) const char *weft_user_error_string_of(int code)
{
    (void)code;
    return NULL;
}

int weft_error_class_of(int code)
{
    int n = (int)(sizeof(class_strings) / sizeof(class_strings[0]));

    if (code >= 0 && code < n) {
        return code;
    }
    return weft_user_error_class_of(code);
}

const char *weft_error_string_of(int code)
{
    int n = (int)(sizeof(class_strings) / sizeof(class_strings[0]));

    if (code >= 0 && code < n) {
        return class_strings[code];
    }
    return weft_user_error_string_of(code);
}
