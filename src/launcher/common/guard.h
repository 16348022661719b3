/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Cleanup that survives a killed weft-proxy. On a remote host nobody else
 * can clean up if the proxy itself is killed (kill -9): its ranks die with
 * it (parent-death signal), but their own children would linger. So a guard
 * process stays the proxy's parent as a child subreaper: those children are
 * reparented to it, and when the proxy ends it kills them and removes the
 * job's /dev/shm entries.
 */
#ifndef WEFT_LAUNCHER_GUARD_H
#define WEFT_LAUNCHER_GUARD_H

/* Several proxies of one job can share a host (the fork launcher, a host
 * named twice): each holds a shared lock on /dev/shm/weft-<jobid>-hosthold
 * while it runs, so that the first to end does not remove segments its
 * neighbour's ranks still use. Returns the held descriptor (close-on-exec,
 * so ranks do not inherit the lock) or -1; -1 costs only that guarantee. */
int weft_shm_hold(const char *jobid);

/* Remove /dev/shm/weft-<jobid>-* unless another process still holds the
 * job's host lock (it sweeps when it ends). Closes *hold first (the
 * caller's own lock, -1 after; hold may be NULL). No-op for an empty jobid. */
void weft_cleanup_shm(const char *jobid, int *hold);

/* Fork: the guard stays in this call until the proxy (the child, which
 * returns) ends, then cleans up and exits with the proxy's status. Returns,
 * in the proxy, a pipe to write the job id into once known (close it after),
 * or -1 when running unguarded. Signals TERM/INT/HUP to the guard are passed
 * to the proxy. */
int weft_guard_start(void);

#endif
