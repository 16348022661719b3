/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Bootstrap: how mpiexec starts one weft-proxy on a host and gets a control
 * connection to it. One ops table per backend; "fork" (local hosts) is the
 * only backend so far. ssh / WEFT_LAUNCHER_CMD come with remote launch: their
 * proxies will connect back over TCP and authenticate with the job secret.
 */
#ifndef WEFT_LAUNCHER_BOOTSTRAP_H
#define WEFT_LAUNCHER_BOOTSTRAP_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    const char *name;
    int (*init)(void);
    /* Start argv (argv[0] = proxy path) on host; the proxy gets its control fd
     * as "--control-fd N" appended to argv. Sets *ctl_fd_p and *pid_p. */
    int (*launch)(const char *host, char *const argv[], int *ctl_fd_p, pid_t *pid_p, char *err,
                  size_t errlen);
    /* Signal a launched proxy (its process group). */
    int (*kill)(pid_t pid, int sig);
    /* Reap a launched proxy: 1 reaped (*status_p set), 0 still running, -1 error. */
    int (*wait)(pid_t pid, int *status_p, int nohang);
    void (*fini)(void);
} weft_bootstrap_ops_t;

/* Pick the backend for host: fork when host is this machine; remote hosts
 * fail with "remote hosts not supported yet". */
int weft_bootstrap_launch(const char *host, int host_is_local, char *const argv[], int *ctl_fd_p,
                          pid_t *pid_p, char *err, size_t errlen);
int weft_bootstrap_kill(pid_t pid, int sig);
int weft_bootstrap_wait(pid_t pid, int *status_p, int nohang);

#endif
