/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Bootstrap: how mpiexec starts one weft-proxy on a host and gets a control
 * connection to it. Local hosts: fork, control over a socketpair. Remote
 * hosts: a launcher command (ssh, or the WEFT_LAUNCHER_CMD template) runs the
 * proxy there; the proxy reads the job secret from its stdin, connects back
 * to mpiexec over TCP and authenticates (auth.h).
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

/* Start a proxy on this machine (fork, control over a socketpair). Remote
 * hosts (host_is_local 0) go through weft_bootstrap_launch_remote. */
int weft_bootstrap_launch(const char *host, int host_is_local, char *const argv[], int *ctl_fd_p,
                          pid_t *pid_p, char *err, size_t errlen);
/* Start a proxy on this machine without an exec: fork, and in the child
 * (own process group, named `name` in ps) call run(ctl_fd, arg) and _exit
 * with its result. Before run the child is made to look freshly exec'ed:
 * caught signals back to their default, the signal mask as it was, and
 * every close-on-exec descriptor but the control one closed (so it holds no
 * other proxy's link, listener or mpiexec's own pipes). The parent's stdio
 * is flushed first so nothing buffered is written twice. */
int weft_bootstrap_fork_run(const char *name, int (*run)(int ctl_fd, void *arg), void *arg,
                            int *ctl_fd_p, pid_t *pid_p, char *err, size_t errlen);
/* Start argv on a remote host through the launcher template tmpl ("ssh",
 * "ip netns exec %h", ...: %h is replaced by host, else host is appended),
 * writing stdin_text to the launcher's stdin. *pid_p is the launcher
 * process, in its own process group. 0, or -1 with err. */
int weft_bootstrap_launch_remote(const char *host, const char *tmpl, char *const argv[],
                                 const char *stdin_text, pid_t *pid_p, char *err, size_t errlen);
int weft_bootstrap_kill(pid_t pid, int sig);
int weft_bootstrap_wait(pid_t pid, int *status_p, int nohang);

#endif
