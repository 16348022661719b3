/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "bootstrap.h"

#include "buf.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int fork_init(void)
{
    return 0;
}

static int fork_launch(const char *host, char *const argv[], int *ctl_fd_p, pid_t *pid_p,
                       char *err, size_t errlen)
{
    int   sv[2];
    pid_t pid;
    int   argc = 0;

    (void)host;
    while (argv[argc] != NULL) {
        argc++;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return -1;
    }
    char  fdnum[16];
    char **args = calloc((size_t)argc + 3, sizeof(char *));
    if (args == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    snprintf(fdnum, sizeof(fdnum), "%d", sv[1]);
    memcpy(args, argv, sizeof(char *) * (size_t)argc);
    args[argc]     = "--control-fd";
    args[argc + 1] = fdnum;
    pid            = fork();
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        free(args);
        close(sv[0]);
        close(sv[1]);
        return -1;
    }
    if (pid == 0) {
        /* Own process group: terminal signals reach mpiexec only, which
         * forwards them. */
        setpgid(0, 0);
        weft_fd_set_cloexec(sv[1], 0);
        execv(args[0], args);
        fprintf(stderr, "mpiexec: error: cannot execute %s: %s\n", args[0], strerror(errno));
        _exit(127);
    }
    setpgid(pid, pid); /* both sides, so no race with the child */
    free(args);
    close(sv[1]);
    *ctl_fd_p = sv[0];
    *pid_p    = pid;
    return 0;
}

static int fork_kill(pid_t pid, int sig)
{
    return kill(pid, sig);
}

static int fork_wait(pid_t pid, int *status_p, int nohang)
{
    pid_t r;
    do {
        r = waitpid(pid, status_p, nohang ? WNOHANG : 0);
    } while (r < 0 && errno == EINTR);
    return r == pid ? 1 : (r == 0 ? 0 : -1);
}

static void fork_fini(void)
{
}

static const weft_bootstrap_ops_t bootstrap_fork_ops = {
    .name   = "fork",
    .init   = fork_init,
    .launch = fork_launch,
    .kill   = fork_kill,
    .wait   = fork_wait,
    .fini   = fork_fini,
};

int weft_bootstrap_launch(const char *host, int host_is_local, char *const argv[], int *ctl_fd_p,
                          pid_t *pid_p, char *err, size_t errlen)
{
    if (!host_is_local) {
        snprintf(err, errlen, "host '%s': remote hosts not supported yet (only this machine)",
                 host);
        return -1;
    }
    return bootstrap_fork_ops.launch(host, argv, ctl_fd_p, pid_p, err, errlen);
}

int weft_bootstrap_kill(pid_t pid, int sig)
{
    return bootstrap_fork_ops.kill(pid, sig);
}

int weft_bootstrap_wait(pid_t pid, int *status_p, int nohang)
{
    return bootstrap_fork_ops.wait(pid, status_p, nohang);
}
