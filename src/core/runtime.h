/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Library-wide state: init/finalize, thread level, the global critical
 * section, the job layout from PMI, progress and finalize hook lists.
 */
#ifndef WEFT_CORE_RUNTIME_H
#define WEFT_CORE_RUNTIME_H

#include <pthread.h>
#include <mpi.h>
#include "core/object_types.h"
#include "pmi/pmi.h"

typedef enum {
    WEFT_STATE_UNINITIALIZED = 0,
    WEFT_STATE_INITIALIZED,
    WEFT_STATE_FINALIZED
} weft_runtime_state_t;

typedef struct {
    weft_runtime_state_t state;
    int                  sessions;       /* live MPI sessions (MPI-4) */
    int                  core_up;        /* PMI, transports and objects are up */
    int                  thread_level;   /* provided */
    int                  thread_multiple;
    pthread_t            main_thread;
    weft_pmi_info_t      pmi;            /* rank, size, node layout */
    char                 jobid[300];     /* unique per job: shm names */
    char                 processor_name[256];
    /* OpenSHMEM shares this runtime (src/shmem): it is finalized when the
     * last of the two models is. */
    int                  shmem_up;       /* shmem_init done, shmem_finalize not yet */
    int                  world_by_shmem; /* shmem_init started the runtime; no MPI_Init yet */
    int                  mpi_finalize_deferred; /* MPI_Finalize came while SHMEM was up */
} weft_runtime_t;

extern weft_runtime_t weft_runtime;

static inline int weft_runtime_is_ready(void)
{
    return weft_runtime.state == WEFT_STATE_INITIALIZED || weft_runtime.sessions > 0;
}

/* Bring the runtime up (PMI, transports, WORLD/SELF); required <= provided.
 * Returns an MPI error code. */
int weft_runtime_init(int required, int *provided);
int weft_runtime_finalize(void);

/* Global critical section for MPI_THREAD_MULTIPLE (recursive per thread). */
extern pthread_mutex_t weft_big_lock;
extern __thread __attribute__((tls_model("initial-exec"))) int weft_cs_depth;
static inline void weft_cs_enter(void)
{
    if (__builtin_expect(weft_runtime.thread_multiple, 0) && weft_cs_depth++ == 0) {
        pthread_mutex_lock(&weft_big_lock);
    }
}
static inline void weft_cs_exit(void)
{
    /* depth 0: the lock was switched on inside this call (MPI_Session_init
     * brought the runtime up), so this call never took it. */
    if (__builtin_expect(weft_runtime.thread_multiple, 0) && weft_cs_depth > 0 &&
        --weft_cs_depth == 0) {
        pthread_mutex_unlock(&weft_big_lock);
    }
}
/* Let other threads in while this one waits (depth is kept). */
void weft_cs_yield(void);
/* Finalize: the lock is switched off (finalize must not hold it while
 * waiting for other ranks) and released if this call's entry took it, so
 * that a later MPI_Init_thread or MPI_Session_init starts from a free lock. */
void weft_cs_switch_off(void);

/* Hooks registered by modules at init; run in registration order
 * (finalize hooks in reverse). Returns the number of events processed. */
typedef int (*weft_progress_fn_t)(void);
typedef void (*weft_finalize_fn_t)(void);
void weft_progress_register(weft_progress_fn_t fn);
void weft_finalize_register(weft_finalize_fn_t fn);
/* Modules keeping per-communicator state (collectives) drop it here, before
 * the communicator's own teardown; run in reverse registration order. */
typedef void (*weft_comm_destroy_fn_t)(weft_comm_t *comm);
void weft_comm_destroy_register(weft_comm_destroy_fn_t fn);
void weft_comm_destroy_hooks_run(weft_comm_t *comm);

/* Abort the whole job (MPI_Abort semantics). */
void weft_runtime_abort(int code, const char *msg) __attribute__((noreturn));

#endif
