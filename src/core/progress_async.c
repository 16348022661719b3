/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Asynchronous progress (WEFT_ASYNC_PROGRESS): one thread per process that
 * runs the progress engine while the application computes, so operations
 * that need the target's progress engine (RMA and OpenSHMEM across hosts,
 * active-message RMA, rendezvous and non-blocking collectives) complete
 * without the target calling MPI.
 *
 * The thread polls under the big lock (switched on for this, whatever
 * thread level the program asked for) and sleeps with the lock released:
 * on the fabric's wait fd when the netmod has one (woken by network
 * traffic, 100 ms at most so keepalives still go out), else in short naps
 * (shared-memory traffic does not wake it; local RMA is direct and needs no
 * progress). It never spins, so oversubscribed nodes lose nothing to it,
 * and it stays out of the way (naps) while the application itself polls.
 */
#include "core/progress.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/runtime.h"
#include "util/log.h"
#include "util/tunables.h"

/* A nap without a wait fd: bounds how late a computing target applies an
 * operation (the blocking wait policy naps 2 ms; this thread does less). */
#define ASYNC_NAP_MS    1
/* With the fabric's fd: long, since traffic wakes us; keepalives are 1/s. */
#define ASYNC_FD_WAIT_MS 100

static struct {
    pthread_t thread;
    int       running;
    int       stop;    /* atomic: set by weft_progress_async_stop */
    int       wake_fd; /* eventfd that ends the thread's sleep at stop */
} async;

/* Sleep until stop, traffic on fd (< 0: none; poll ignores it) or ms. */
static void sleep_on(int fd, int ms)
{
    struct pollfd p[2] = {{.fd = async.wake_fd, .events = POLLIN}, {.fd = fd, .events = POLLIN}};
    (void)poll(p, 2, ms);
}

static void nap(void)
{
    sleep_on(-1, ASYNC_NAP_MS);
}

/* The launcher binds a rank to one core; a thread there competes with the
 * rank's compute loop for that core on every wakeup. Any CPU of the node
 * lets a free core take it (the kernel keeps it inside the job's cpuset). */
static void float_over_node(void)
{
    cpu_set_t all;
    long      n = sysconf(_SC_NPROCESSORS_CONF);

    CPU_ZERO(&all);
    for (long c = 0; c < n && c < CPU_SETSIZE; c++) {
        CPU_SET((int)c, &all);
    }
    (void)pthread_setaffinity_np(pthread_self(), sizeof(all), &all); /* best effort */
}

static void *async_main(void *arg)
{
    unsigned seen           = weft_progress_poll_count();
    unsigned idle_not_ready = 0; /* polls in a row with no event and the netmod not ready */

    (void)arg;
    float_over_node();
    while (!__atomic_load_n(&async.stop, __ATOMIC_ACQUIRE)) {
        /* The application polled since we last looked: it is in MPI and
         * progresses for itself. Polling too would only take the lock from
         * it (and, on the fd, wake us per message: tcp;ofi_rxm latency went
         * from 8 to 30 us), so nap and look again. */
        unsigned polls = weft_progress_poll_count();
        if (polls != seen) {
            seen = polls;
            nap();
            continue;
        }
        pthread_mutex_lock(&weft_big_lock);
        weft_cs_depth = 1; /* code under the lock may yield it (weft_cs_yield) */
        int events = weft_progress_poll();
        int fd     = events > 0 ? -2 : weft_progress_netmod_sleep_fd();
        if (events > 0) {
            idle_not_ready = 0;
        }
        seen          = weft_progress_poll_count(); /* ours included */
        weft_cs_depth = 0;
        pthread_mutex_unlock(&weft_big_lock);

        if (fd == -2) {
            /* More may be pending: poll again, letting the application's
             * calls in first. A netmod that stays not-ready with nothing
             * happening (sends queued for a peer that does not read) gets
             * naps, never a spin. */
            if (events > 0 || ++idle_not_ready < 16) {
                sched_yield();
            } else {
                nap();
            }
            continue;
        }
        idle_not_ready = 0;
        sleep_on(fd, fd >= 0 ? ASYNC_FD_WAIT_MS : ASYNC_NAP_MS);
    }
    return NULL;
}

int weft_progress_async_start(void)
{
    sigset_t all, old;
    int      rc;

    if (async.running) {
        return MPI_SUCCESS;
    }
    async.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (async.wake_fd < 0) {
        return weft_error(MPI_ERR_OTHER, "WEFT_ASYNC_PROGRESS: cannot make the thread's eventfd: %s",
                          strerror(errno));
    }
    __atomic_store_n(&async.stop, 0, __ATOMIC_RELEASE);
    /* Signals (the launcher forwards SIGINT, SIGTERM, SIGUSR1/2) stay with
     * the application's threads. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    rc = pthread_create(&async.thread, NULL, async_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        close(async.wake_fd);
        async.wake_fd = -1;
        return weft_error(MPI_ERR_OTHER, "WEFT_ASYNC_PROGRESS: cannot start the progress thread: %s",
                          strerror(rc));
    }
    async.running = 1;
    return MPI_SUCCESS;
}

void weft_progress_async_stop(void)
{
    uint64_t one   = 1;
    int      depth = weft_cs_depth;

    if (!async.running) {
        return;
    }
    __atomic_store_n(&async.stop, 1, __ATOMIC_RELEASE);
    if (write(async.wake_fd, &one, sizeof(one)) < 0) {
        /* the nap timeout ends its sleep anyway */
    }
    /* The thread may be waiting for the lock this caller holds (exit() from
     * an error handler, MPI_Session_finalize under its entry's lock). */
    if (depth > 0) {
        weft_cs_depth = 0;
        pthread_mutex_unlock(&weft_big_lock);
    }
    pthread_join(async.thread, NULL);
    if (depth > 0) {
        pthread_mutex_lock(&weft_big_lock);
        weft_cs_depth = depth;
    }
    close(async.wake_fd);
    async.wake_fd = -1;
    async.running = 0;
}
