/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "core/runtime.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/dynproc/dynproc.h"
#include "core/hwinfo.h"
#include "core/errhandler.h"
#include "core/group.h"
#include "core/info.h"
#include "core/progress.h"
#include "transport/shm/shm.h"
#include "util/log.h"
#include "util/tunables.h"
#include "core/mpit/report.h"

weft_runtime_t  weft_runtime;
pthread_mutex_t weft_big_lock = PTHREAD_MUTEX_INITIALIZER;
__thread __attribute__((tls_model("initial-exec"))) int weft_cs_depth;

#define WEFT_MAX_HOOKS 32
static weft_progress_fn_t progress_hooks[WEFT_MAX_HOOKS];
static int                progress_hook_count;
static weft_finalize_fn_t finalize_hooks[WEFT_MAX_HOOKS];
static int                finalize_hook_count;
static weft_comm_destroy_fn_t comm_destroy_hooks[WEFT_MAX_HOOKS];
static int                    comm_destroy_hook_count;

/* Append fn to one of the hook lists above. Registering a hook twice is a
 * no-op: modules register from their init, which runs again when the
 * runtime restarts (MPI_Session_init after the last finalize). */
#define HOOK_ADD(hooks, count, fn)                                              \
    do {                                                                        \
        int seen_ = 0;                                                          \
        for (int i_ = 0; i_ < (count); i_++) {                                  \
            seen_ |= (hooks)[i_] == (fn);                                       \
        }                                                                       \
        if (!seen_ && (count) < WEFT_MAX_HOOKS) {                               \
            (hooks)[(count)++] = (fn);                                          \
        }                                                                       \
    } while (0)

void weft_progress_register(weft_progress_fn_t fn)
{
    HOOK_ADD(progress_hooks, progress_hook_count, fn);
}

void weft_finalize_register(weft_finalize_fn_t fn)
{
    HOOK_ADD(finalize_hooks, finalize_hook_count, fn);
}

void weft_comm_destroy_register(weft_comm_destroy_fn_t fn)
{
    HOOK_ADD(comm_destroy_hooks, comm_destroy_hook_count, fn);
}

void weft_comm_destroy_hooks_run(weft_comm_t *comm)
{
    for (int i = comm_destroy_hook_count - 1; i >= 0; i--) {
        comm_destroy_hooks[i](comm);
    }
}

int weft_progress_hooks_run(void)
{
    int events = 0;
    for (int i = 0; i < progress_hook_count; i++) {
        events += progress_hooks[i]();
    }
    return events;
}

void weft_cs_yield(void)
{
    if (weft_runtime.thread_multiple && weft_cs_depth > 0) {
        pthread_mutex_unlock(&weft_big_lock);
        sched_yield();
        pthread_mutex_lock(&weft_big_lock);
    } else {
        sched_yield();
    }
}

void weft_cs_switch_off(void)
{
    if (weft_runtime.thread_multiple && weft_cs_depth > 0) {
        weft_cs_depth = 0;
        pthread_mutex_unlock(&weft_big_lock);
    }
    weft_runtime.thread_multiple = 0;
}

void weft_runtime_abort(int code, const char *msg)
{
    char line[1400];

    snprintf(line, sizeof(line), "rank %d: %s", weft_runtime.pmi.rank, msg ? msg : "");
    weft_shm_abandon(); /* local ranks still starting would have unlinked it; they get killed */
    if (weft_runtime.pmi.size > 0) {
        weft_pmi_abort(code, line);
    }
    weft_log_error("%s", line);
    _exit(code ? code : 1);
}

int weft_api_arg_check = 1; /* read by the generated entry points (api.h) */

/* The PMI connection stays open from the first init until the process
 * exits, so that a finished runtime can start again (MPI_Session_init after
 * MPI_Finalize or after the last MPI_Session_finalize; the launcher accepts
 * one PMI connection per process). */
static int pmi_connected;
static int at_exit_pending; /* runtime_at_exit is registered and has not run */

/* At exit, tell the launcher this process finished its MPI part when it did:
 * the runtime is down, or only a session kept the core up after
 * MPI_Finalize. A process that ends with the world model or a session still
 * open has not (the launcher then reports a rank that exited without
 * finalizing). */
static void runtime_at_exit(void)
{
    at_exit_pending = 0;
    weft_progress_async_stop(); /* exit without finalize: before libraries tear down */
    if (pmi_connected &&
        (!weft_runtime.core_up || weft_runtime.state == WEFT_STATE_FINALIZED)) {
        weft_pmi_finalize();
        pmi_connected = 0;
    }
}

static void warn_unknown_env(const char *name, const char *closest, void *arg)
{
    (void)arg;
    weft_log_warn("%s is set but no Weft tunable knows it; did you mean %s? "
                  "(weft-info --tunables lists them; WEFT_WARN_UNKNOWN_ENV=0 silences this)",
                  name, closest);
}

/* Make sure runtime_at_exit runs after this point. Handlers registered
 * while exit() runs its handlers are still called, so a finalize from the
 * application's own atexit handler (which runs after ours) re-arms it. */
static void at_exit_arm(void)
{
    if (!at_exit_pending) {
        at_exit_pending = 1;
        atexit(runtime_at_exit);
    }
}

/* Once per process: tunables, PMI, names. */
static void runtime_connect(void)
{
    char        errbuf[512];
    const char *jobid;

    /* Tunables first (the PMI client reads WEFT_PMI_VERSION); a bad value is
     * reported once PMI is up, so the whole job stops with one message. */
    int bad_tunable = weft_tunables_load(errbuf, sizeof(errbuf)) != 0;

    if (weft_pmi_init(&weft_runtime.pmi) != 0) {
        weft_log_fatal(1, "MPI_Init: cannot connect to the process manager (PMI)");
    }
    if (bad_tunable) {
        char msg[600];
        snprintf(msg, sizeof(msg), "MPI_Init: %s", errbuf);
        if (weft_runtime.pmi.rank == 0 || weft_runtime.pmi.is_singleton) {
            weft_log_error("%s", msg);
        }
        weft_pmi_abort(1, msg);
    }
    weft_api_arg_check = weft_tunables.ARG_CHECK;
    if (weft_tunables.WARN_UNKNOWN_ENV && (weft_runtime.pmi.rank == 0 || weft_runtime.pmi.is_singleton)) {
        weft_tunables_check_env(NULL, warn_unknown_env, NULL); /* a typo would be ignored silently */
    }
    {
        char prefix[64];
        snprintf(prefix, sizeof(prefix), "weft[%d]", weft_runtime.pmi.rank);
        weft_log_set_prefix(prefix);
    }
    jobid = weft_tunables.JOBID[0] ? weft_tunables.JOBID : NULL; /* set by mpiexec */
    snprintf(weft_runtime.jobid, sizeof(weft_runtime.jobid), "%s",
             jobid ? jobid : weft_runtime.pmi.kvsname);
    if (weft_runtime.jobid[0] == '\0' || weft_runtime.pmi.is_singleton) {
        snprintf(weft_runtime.jobid, sizeof(weft_runtime.jobid), "s%d", (int)getpid());
    }
    if (gethostname(weft_runtime.processor_name, sizeof(weft_runtime.processor_name) - 1) != 0) {
        strcpy(weft_runtime.processor_name, "localhost");
    }
    pmi_connected = 1;
    at_exit_arm();
}

int weft_runtime_init(int required, int *provided)
{
    int rc;

    if (weft_runtime.core_up) {
        /* Sessions brought the core up first: MPI_Init only opens the world
         * model on top of it (the thread level is the one already chosen). */
        weft_runtime.state = WEFT_STATE_INITIALIZED;
        weft_report_start();
        if (provided) {
            *provided = weft_runtime.thread_level;
        }
        return MPI_SUCCESS;
    }

    if (!pmi_connected) {
        runtime_connect();
    }

    if (required > MPI_THREAD_MULTIPLE) {
        required = MPI_THREAD_MULTIPLE;
    }
    weft_runtime.thread_level = required < MPI_THREAD_SINGLE ? MPI_THREAD_SINGLE : required;
    weft_runtime.main_thread  = pthread_self();

    if ((rc = weft_errhandler_module_init()) != MPI_SUCCESS ||
        (rc = weft_info_module_init()) != MPI_SUCCESS ||
        (rc = weft_group_module_init()) != MPI_SUCCESS ||
        (rc = weft_datatype_module_init()) != MPI_SUCCESS ||
        (rc = weft_comm_module_init()) != MPI_SUCCESS ||
        (rc = weft_progress_module_init()) != MPI_SUCCESS) {
        return rc;
    }
    weft_runtime.state   = WEFT_STATE_INITIALIZED;
    weft_runtime.core_up = 1;
    if ((rc = weft_dynproc_init()) != MPI_SUCCESS) { /* spawned: meet the parents */
        return rc;
    }
    /* Turn the lock on last: init itself runs single-threaded. The progress
     * thread needs it whatever level the program asked for. */
    weft_runtime.thread_multiple =
        weft_runtime.thread_level == MPI_THREAD_MULTIPLE || weft_tunables.ASYNC_PROGRESS;
    weft_report_start();
    /* Last: from here on this thread touches library state only inside
     * calls, under the lock. */
    if (weft_tunables.ASYNC_PROGRESS && (rc = weft_progress_async_start()) != MPI_SUCCESS) {
        return rc;
    }
    if (provided) {
        *provided = weft_runtime.thread_level;
    }
    return MPI_SUCCESS;
}

int weft_runtime_finalize(void)
{
    int rc;

    if (weft_runtime.state == WEFT_STATE_INITIALIZED) {
        weft_report_finish(); /* gathers to rank 0: while every rank can still talk */
    }
    if (weft_runtime.sessions > 0 && weft_runtime.state == WEFT_STATE_INITIALIZED) {
        /* MPI_Finalize while sessions live: the world model ends, the core
         * stays for the sessions; the last MPI_Session_finalize tears it down. */
        weft_runtime.state = WEFT_STATE_FINALIZED;
        at_exit_arm();
        return MPI_SUCCESS;
    }
    rc = weft_progress_module_quiesce();

    for (int i = finalize_hook_count - 1; i >= 0; i--) {
        finalize_hooks[i]();
    }
    weft_hw_topology_release();
    weft_progress_module_fini();
    weft_comm_module_fini();
    /* The world model is finalized only if it was started (after sessions
     * alone, MPI_Init is still allowed). PMI stays up: see pmi_connected. */
    if (weft_runtime.state == WEFT_STATE_INITIALIZED) {
        weft_runtime.state = WEFT_STATE_FINALIZED;
    }
    weft_runtime.core_up = 0;
    at_exit_arm();
    return rc;
}
