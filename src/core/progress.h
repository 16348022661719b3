/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The progress engine: one poll of every transport and registered hook, and
 * the wait loop that applies WEFT_WAIT_POLICY.
 */
#ifndef WEFT_CORE_PROGRESS_H
#define WEFT_CORE_PROGRESS_H

#include <stdint.h>

int  weft_progress_module_init(void);
/* Called first thing in MPI_Finalize: complete outstanding traffic and
 * synchronize with every other rank so nobody tears down a channel a peer
 * still uses. Returns an MPI error code. */
int  weft_progress_module_quiesce(void);
void weft_progress_module_fini(void);

/* More ranks on this node than it has CPUs (the same on every rank of a
 * node): a waiting rank often waits for one that is not running. */
int weft_progress_oversubscribed(void);

/* Poll everything once; returns the number of events handled. */
int weft_progress_poll(void);
/* How many polls have run (wraps): changes while some thread is in MPI. */
unsigned weft_progress_poll_count(void);

/* Run registered progress hooks (runtime.c). */
int weft_progress_hooks_run(void);

/* Waiting: call weft_wait_begin() once, then weft_wait_step() after each
 * unsuccessful poll; the policy decides whether to spin, yield or sleep. */
typedef struct {
    unsigned polls;
    uint64_t sampled_ns; /* clock at the last sample (every 64 polls), for weft_wait_time */
} weft_wait_t;

void weft_wait_step(weft_wait_t *w);

/* Under the big lock: the netmod's wait fd to sleep on (>= 0), -1 when it
 * has none (no netmod, or its fd is unusable), -2 when it has work pending
 * (poll again first). */
int weft_progress_netmod_sleep_fd(void);

/* Asynchronous progress (WEFT_ASYNC_PROGRESS, progress_async.c): a thread
 * that polls under the big lock and sleeps on the fabric's wait fd. start
 * needs the big lock switched on (weft_runtime.thread_multiple) and returns
 * an MPI error code; stop joins the thread and must run before the lock is
 * switched off (finalize, exit). The caller may hold the lock. */
int  weft_progress_async_start(void);
void weft_progress_async_stop(void);

#endif
