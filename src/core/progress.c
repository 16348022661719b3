/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One poll = the shared-memory rings, then point-to-point's deferred work,
 * then registered hooks (collective schedules, RMA). Waiting follows
 * WEFT_WAIT_POLICY: spin, yield, or spin-then-yield (adaptive, default), or
 * spin-then-sleep on a futex that senders ring (blocking). When there are
 * more local ranks than CPUs, spinning only steals time from the rank we are
 * waiting for, so waits yield almost at once.
 */
#include "core/progress.h"

#include <sched.h>
#include <unistd.h>

#include "core/dev/peer.h"
#include "core/pt2pt_internal.h"
#include "core/runtime.h"
#include "transport/shm/shm.h"
#include "util/fence.h"
#include "util/tunables.h"
#include "core/mpit/pvar.h"

enum { POLICY_ADAPTIVE, POLICY_SPIN, POLICY_YIELD, POLICY_BLOCKING };

static struct {
    int      policy;
    unsigned spin_limit;
    int      shm_up;
    unsigned idle_polls; /* polls that found nothing, for the lost-peer check */
    int      oversubscribed;
} progress;

int weft_progress_module_init(void)
{
    cpu_set_t cpus;
    int       ncpu;
    int       rc;

    progress.policy     = weft_tunables.WAIT_POLICY;
    progress.spin_limit = weft_tunables.SPIN_COUNT > 0 ? (unsigned)weft_tunables.SPIN_COUNT : 0;
    ncpu                = sched_getaffinity(0, sizeof(cpus), &cpus) == 0 ? CPU_COUNT(&cpus)
                                                                        : (int)sysconf(_SC_NPROCESSORS_ONLN);
    /* Our affinity may be a single core (bound): compare the node's rank count
     * to the machine's CPUs, not to our mask. */
    ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN) > ncpu ? (int)sysconf(_SC_NPROCESSORS_ONLN) : ncpu;
    progress.oversubscribed = weft_runtime.pmi.local_size > ncpu;
    if (progress.oversubscribed && progress.spin_limit > 16) {
        progress.spin_limit = 16;
    }
    rc = weft_pt2pt_module_init();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    progress.shm_up = 1;
    return MPI_SUCCESS;
}

int weft_progress_module_quiesce(void)
{
    /* Complete our own deferred sends, then meet every rank: after the fence
     * nobody will touch our rings or read our memory again. */
    int rc = weft_pt2pt_drain();

    if (weft_pmi_fence() != 0 && rc == MPI_SUCCESS) {
        rc = MPI_ERR_OTHER;
    }
    return rc;
}

void weft_progress_module_fini(void)
{
    if (progress.shm_up) {
        weft_pt2pt_module_fini();
        progress.shm_up = 0;
    }
}

int weft_progress_oversubscribed(void)
{
    return progress.oversubscribed;
}

/* Polls so far, read by the progress thread to see whether the application
 * is inside MPI (a relaxed store: a plain move, no locked instruction). */
static unsigned poll_count;

unsigned weft_progress_poll_count(void)
{
    return __atomic_load_n(&poll_count, __ATOMIC_RELAXED);
}

int weft_progress_poll(void)
{
    __atomic_store_n(&poll_count, __atomic_load_n(&poll_count, __ATOMIC_RELAXED) + 1, __ATOMIC_RELAXED);
    int events = weft_shm_poll();

    events += weft_pt2pt_progress();
    events += weft_progress_hooks_run();
    /* MPI_Test loops never wait: look for lost peers here too, on idle
     * polls only, so a poll that found a message pays nothing. */
    if (events == 0 && (++progress.idle_polls & 255) == 0) {
        weft_dev_watch_peers();
    }
    return events;
}

int weft_progress_netmod_sleep_fd(void)
{
    const weft_transport_ops_t *net = weft_dev.netmod;
    int                         fd  = net != NULL ? net->wait_fd() : -1;

    if (fd < 0) {
        return -1;
    }
    return net->wait_ready() ? fd : -2;
}

/* What to sleep on, decided under the big lock (the netmod's trywait and
 * keepalives touch its state): the fabric's wait fd (>= 0), the futex alone
 * (-1), or nothing: events are pending, poll again (-2). */
static int wait_sleep_fd(void)
{
    int fd = weft_progress_netmod_sleep_fd();

    if (fd < 0) {
        return fd;
    }
    return weft_shm_sleep_fd_prepare() == 0 ? fd : -1;
}

/* Sleep until a local peer rings us or, with a netmod that has a wait fd,
 * until network traffic arrives. Timeouts: 2 ms on the futex alone (some
 * events do not come through a ring); with the fabric's fd, 100 ms, so the
 * netmod's once-a-second keepalives still go out from a blocked rank. */
static void wait_sleep(int fd)
{
    if (fd >= 0) {
        weft_shm_sleep_fd(fd, 100000);
    } else {
        weft_shm_sleep(2000);
    }
}

void weft_wait_step(weft_wait_t *w)
{
    unsigned n = w->polls++;

    /* Neither clock is read on a wait's first polls: back to back, most
     * waits end within a few (np 2 scatter of 8 B back to back: 0.0496
     * against 0.0510 us with both reads at the first poll). */
    if ((n & 15) == 15) { /* a coarse clock read; a poll of pidfds per interval */
        weft_dev_watch_peers();
    }
    if ((n & 63) == 63) { /* time in waits, sampled: a clock read per 64 polls */
        uint64_t now = weft_pvar_now_ns();
        WEFT_PVAR_ADD(WAIT_TIME, n > 63 ? now - w->sampled_ns : 0);
        w->sampled_ns = now;
    }

    switch (progress.policy) {
    case POLICY_SPIN:
        weft_cpu_relax();
        if (weft_runtime.thread_multiple && (n & 63) == 63) {
            weft_cs_yield(); /* let other threads into the library now and then */
        }
        break;
    case POLICY_YIELD:
        weft_cs_yield();
        break;
    case POLICY_BLOCKING:
        if (n < progress.spin_limit) {
            weft_cpu_relax();
        } else if (n < progress.spin_limit + 64) {
            weft_cs_yield();
        } else {
            /* Drop the big lock while asleep; a sender's futex wake (or the
             * timeout, for events that do not come through a ring) ends it. */
            int fd = wait_sleep_fd();
            if (fd == -2) {
                break;
            }
            weft_dev_watch_peers();
            int depth = weft_cs_depth;
            if (weft_runtime.thread_multiple && depth > 0) {
                weft_cs_depth = 0;
                pthread_mutex_unlock(&weft_big_lock);
            }
            wait_sleep(fd);
            if (weft_runtime.thread_multiple && depth > 0) {
                pthread_mutex_lock(&weft_big_lock);
                weft_cs_depth = depth;
            }
        }
        break;
    default:
        /* No pause while spinning: on recent x86 it costs ~100 cycles, which
         * shows up directly in small-message latency. */
        if (n < progress.spin_limit) {
            __asm__ __volatile__("" ::: "memory");
        } else {
            weft_cs_yield();
        }
        break;
    }
}
