/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * What every MPI entry point needs: export macros, the enter/exit protocol
 * (init check, critical section), argument-error recording and error-handler
 * dispatch. Used by the generated wrappers and by src/api/custom/.
 */
#ifndef WEFT_API_API_H
#define WEFT_API_API_H

#include <mpi.h>
#include "core/object.h"
#include "core/runtime.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/mpit/mpi_time.h"

#define WEFT_API             __attribute__((visibility("default")))
#define WEFT_API_ALIAS(_name) \
    extern __typeof__(P##_name) _name __attribute__((weak, alias("P" #_name), visibility("default")));

/* Argument checks on/off (WEFT_ARG_CHECK), copied from the tunables at init. */
extern int weft_api_arg_check;

/* Largest valid tag (MPI_TAG_UB attribute). */
#define WEFT_TAG_UB 0x7fffffff

#define WEFT_API_ENTER(_name, _init_check)                                           \
    weft_err_begin(_name);                                                           \
    weft_cs_enter();                                                                 \
    if (__builtin_expect(weft_mpi_time_on, 0)) {                                     \
        weft_mpi_time_enter();                                                       \
    }                                                                                \
    if ((_init_check) && __builtin_expect(!weft_runtime_is_ready(), 0)) {            \
        rc = weft_err_not_ready();                                                   \
        goto fail;                                                                   \
    }

/* _cls: the call's weft_call_class_t, for the time-in-MPI split of the report. */
#define WEFT_API_EXIT_AS(_cls)                                                       \
    do {                                                                             \
        if (__builtin_expect(weft_mpi_time_on, 0)) {                                 \
            weft_mpi_time_exit(_cls);                                                \
        }                                                                            \
        weft_cs_exit();                                                              \
    } while (0)
#define WEFT_API_EXIT() WEFT_API_EXIT_AS(WEFT_CALL_OTHER)

/* Record an argument error: class, argument name, reason. Returns the class. */
int weft_err_arg(int cls, const char *arg, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Error when called before MPI_Init / after MPI_Finalize. */
int weft_err_not_ready(void);

/* Invoke the error handler of the object the call acted on (or of
 * MPI_COMM_SELF when there is none) with code rc; returns what the MPI call
 * returns (rc under MPI_ERRORS_RETURN; fatal handlers do not return). */
int weft_err_dispatch_comm(MPI_Comm comm, int rc);
int weft_err_dispatch_win(MPI_Win win, int rc);
int weft_err_dispatch_file(MPI_File file, int rc);
int weft_err_dispatch_session(MPI_Session session, int rc);

/* Record the not-implemented error for name; returns its code for the
 * stub to hand to the error handler of the call's object. */
int weft_api_unsupported(const char *name);

#endif
