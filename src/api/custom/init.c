/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Hand-written entry points: MPI_Init*, MPI_Finalize, timers, MPI_Pcontrol
 * and the impls of the small environment queries.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "api/api.h"
#include "core/progress.h"
#include "api_impl.h"
#include "core/info.h"
#include "util/log.h"
#include "weft_build_config.h"

static int init_common(int required, int *provided, const char *fname)
{
    int rc;

    weft_err_begin(fname);
    if (weft_runtime.state == WEFT_STATE_INITIALIZED && weft_runtime.world_by_shmem) {
        /* shmem_init brought the runtime up: MPI_Init joins it (one runtime). */
        weft_runtime.world_by_shmem = 0;
        if (provided) {
            *provided = weft_runtime.thread_level;
        }
        return MPI_SUCCESS;
    }
    if (weft_runtime.state != WEFT_STATE_UNINITIALIZED) {
        rc = weft_error(MPI_ERR_OTHER, "MPI is already %s",
                        weft_runtime.state == WEFT_STATE_FINALIZED ? "finalized" : "initialized");
        return weft_err_dispatch_comm(MPI_COMM_WORLD, rc);
    }
    rc = weft_runtime_init(required, provided);
    if (rc != MPI_SUCCESS) {
        return weft_err_dispatch_comm(MPI_COMM_WORLD, rc);
    }
    return MPI_SUCCESS;
}

WEFT_API int PMPI_Init(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    return init_common(MPI_THREAD_SINGLE, NULL, "MPI_Init");
}
WEFT_API_ALIAS(MPI_Init)

WEFT_API int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    (void)argc;
    (void)argv;
    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE) {
        weft_err_begin("MPI_Init_thread");
        return weft_err_dispatch_comm(
            MPI_COMM_WORLD, weft_err_arg(MPI_ERR_ARG, "required", "invalid thread level %d", required));
    }
    return init_common(required, provided, "MPI_Init_thread");
}
WEFT_API_ALIAS(MPI_Init_thread)

WEFT_API int PMPI_Finalize(void)
{
    int rc;

    weft_err_begin("MPI_Finalize");
    if (weft_runtime.state != WEFT_STATE_INITIALIZED || weft_runtime.mpi_finalize_deferred) {
        rc = weft_err_not_ready();
        return weft_err_dispatch_comm(MPI_COMM_WORLD, rc);
    }
    if (weft_runtime.shmem_up) {
        /* OpenSHMEM still runs on this runtime: MPI is finished for the
         * program (MPI_Finalized says so); shmem_finalize tears it down. */
        weft_runtime.mpi_finalize_deferred = 1;
        return MPI_SUCCESS;
    }
    /* The big lock is not needed any more, and finalize must not hold it
     * while waiting for other ranks; the progress thread goes first. */
    weft_progress_async_stop();
    weft_cs_switch_off();
    rc = weft_runtime_finalize();
    return rc == MPI_SUCCESS ? rc : weft_err_dispatch_comm(MPI_COMM_WORLD, rc);
}
WEFT_API_ALIAS(MPI_Finalize)

WEFT_API double PMPI_Wtime(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
WEFT_API_ALIAS(MPI_Wtime)

WEFT_API double PMPI_Wtick(void)
{
    struct timespec ts;
    clock_getres(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
WEFT_API_ALIAS(MPI_Wtick)

WEFT_API int PMPI_Pcontrol(const int level, ...)
{
    (void)level; /* no profiling levels of our own: a no-op by definition */
    return MPI_SUCCESS;
}
WEFT_API_ALIAS(MPI_Pcontrol)

int weft_initialized_impl(int *flag)
{
    *flag = weft_runtime.state != WEFT_STATE_UNINITIALIZED;
    return MPI_SUCCESS;
}

int weft_finalized_impl(int *flag)
{
    *flag = weft_runtime.state == WEFT_STATE_FINALIZED || weft_runtime.mpi_finalize_deferred;
    return MPI_SUCCESS;
}

int weft_abort_impl(weft_comm_t *comm, int errorcode)
{
    char msg[128];

    (void)comm; /* aborting a subset is not possible: the whole job goes */
    snprintf(msg, sizeof(msg), "MPI_Abort(errorcode=%d) called", errorcode);
    weft_runtime_abort(errorcode, msg);
}

int weft_query_thread_impl(int *provided)
{
    *provided = weft_runtime.thread_level;
    return MPI_SUCCESS;
}

int weft_is_thread_main_impl(int *flag)
{
    *flag = pthread_equal(pthread_self(), weft_runtime.main_thread);
    return MPI_SUCCESS;
}

int weft_get_version_impl(int *version, int *subversion)
{
    *version    = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}

int weft_get_library_version_impl(char *version, int *resultlen)
{
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "Weft %s (MPI %d.%d, standard ABI %d.%d)\n"
                     "build: %s, %s; hwloc %s%s%s",
                     WEFT_VERSION, MPI_VERSION, MPI_SUBVERSION, MPI_ABI_VERSION,
                     MPI_ABI_SUBVERSION, WEFT_BUILD_TYPE, WEFT_C_COMPILER, WEFT_HWLOC_VERSION,
                     WEFT_SANITIZE_FLAGS[0] ? "; sanitizers " : "", WEFT_SANITIZE_FLAGS);
    *resultlen = n < MPI_MAX_LIBRARY_VERSION_STRING ? n : MPI_MAX_LIBRARY_VERSION_STRING - 1;
    return MPI_SUCCESS;
}

int weft_get_processor_name_impl(char *name, int *resultlen)
{
    int n = snprintf(name, MPI_MAX_PROCESSOR_NAME, "%s", weft_runtime.processor_name);
    *resultlen = n < MPI_MAX_PROCESSOR_NAME ? n : MPI_MAX_PROCESSOR_NAME - 1;
    return MPI_SUCCESS;
}

int weft_comm_rank_impl(weft_comm_t *comm, int *rank)
{
    *rank = comm->rank;
    return MPI_SUCCESS;
}

int weft_comm_size_impl(weft_comm_t *comm, int *size)
{
    *size = comm->size;
    return MPI_SUCCESS;
}
