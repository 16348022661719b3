/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft-proxy: starting the node's ranks (environment, fork, the child's
 * set-up and exec) and confirming their execs. Kept apart from proxy.c's
 * event loop and control-message handling, which call px_start_ranks on GO
 * and px_check_exec when an exec-status pipe is ready or a rank is reaped.
 */
#include "proxy_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* "NAME=..." with the same NAME as var? */
static int env_same_name(const char *entry, const char *var)
{
    size_t n = strcspn(var, "=");
    return strncmp(entry, var, n) == 0 && entry[n] == '=';
}

/* The process mapping goes into WEFT_PMI_JOB when shorter than this. */
#define PX_MAPPING_ENV_MAX 1024

static char **px_build_env(int i, int pmi_fd)
{
    char   extra[10][160];
    int    nextra = 0, n = 0;
    char **envp   = calloc((size_t)px.job.nenv + 12, sizeof(char *));
    char  *job_env = NULL;

    if (envp == NULL) {
        return NULL;
    }
    snprintf(extra[nextra++], sizeof(extra[0]), "PMI_FD=%d", pmi_fd);
    snprintf(extra[nextra++], sizeof(extra[0]), "PMI_RANK=%d", px.job.ranks[i]);
    snprintf(extra[nextra++], sizeof(extra[0]), "PMI_SIZE=%d", px.job.size);
    snprintf(extra[nextra++], sizeof(extra[0]), "PMI_JOBID=%s", px.job.kvsname);
    snprintf(extra[nextra++], sizeof(extra[0]), "WEFT_JOBID=%s", px.job.jobid);
    snprintf(extra[nextra++], sizeof(extra[0]), "MPI_LOCALRANKID=%d", i);
    snprintf(extra[nextra++], sizeof(extra[0]), "MPI_LOCALNRANKS=%d", px.job.nlocal);
    if (px.host_addr[0] != '\0') { /* our side of the link to mpiexec: the netmod's interface */
        snprintf(extra[nextra++], sizeof(extra[0]), "WEFT_HOST_ADDR=%s", px.host_addr);
    }
    if (px.srv.shm_prefix != NULL) {
        snprintf(extra[nextra++], sizeof(extra[0]), "WEFT_PMI_SHM_NAME=%s", px.srv.shm_prefix);
    }
    /* What a Weft rank would otherwise ask in three PMI round trips before
     * its first fence (kvsname, appnum, process mapping), from us, the
     * server, so the same answers (pmi_client.c); tied to the PMI socket by
     * its inode, so a copy inherited by another job is ignored. The mapping
     * is left out when long (the rank then asks). */
    struct stat st;
    const char *mapping = px.job.mapping != NULL ? px.job.mapping : "";
    if (strlen(mapping) >= PX_MAPPING_ENV_MAX) {
        mapping = "";
    }
    job_env = malloc(strlen(mapping) + strlen(px.job.kvsname) + 64);
    if (job_env != NULL) {
        sprintf(job_env, "WEFT_PMI_JOB=%llu:%d:%s:%s",
                fstat(pmi_fd, &st) == 0 ? (unsigned long long)st.st_ino : 0ULL,
                weft_job_app_of(&px.job, px.job.ranks[i]), px.job.kvsname, mapping);
    }
    for (int e = 0; e < px.job.nenv; e++) {
        /* Ours, or none: a stale one would give the ranks a wrong layout. */
        int dup = strncmp(px.job.env[e], "WEFT_PMI_JOB=", 13) == 0;
        for (int x = 0; x < nextra && !dup; x++) {
            dup = env_same_name(px.job.env[e], extra[x]);
        }
        if (!dup) {
            envp[n++] = px.job.env[e];
        }
    }
    for (int x = 0; x < nextra; x++) {
        envp[n++] = strdup(extra[x]);
    }
    if (job_env != NULL) {
        envp[n++] = job_env;
    }
    envp[n] = NULL;
    return envp;
}

/* Write end of the rank being started's exec-status pipe (close-on-exec:
 * EOF means the exec happened, an int is the errno of a failed one). */
static int px_exec_fd = -1;

static void px_child(int i, int pmi_fd, int out_fd, int err_fd, int in_fd, char **envp,
                     pid_t proxy_pid)
{
    sigset_t all;
    char     msg[512];
    int      n;

    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != proxy_pid) {
        _exit(1); /* the proxy died before we armed the safety net */
    }
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, NULL);
    signal(SIGPIPE, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    if (in_fd < 0) {
        in_fd = open("/dev/null", O_RDONLY);
    }
    dup2(in_fd, STDIN_FILENO);
    dup2(out_fd, STDOUT_FILENO);
    dup2(err_fd, STDERR_FILENO);
    weft_fd_set_cloexec(pmi_fd, 0);
    if (px.job.cwd[0] != '\0' && chdir(px.job.cwd) != 0) {
        n = snprintf(msg, sizeof(msg), "weft-proxy: error: rank %d: cannot chdir to %s: %s\n",
                     px.job.ranks[i], px.job.cwd, strerror(errno));
        if (write(STDERR_FILENO, msg, (size_t)n) < 0) {
            /* ignore */
        }
    }
    if (weft_binding_apply(&px.plan, i) != 0) {
        n = snprintf(msg, sizeof(msg), "weft-proxy: warning: rank %d: CPU binding failed: %s\n",
                     px.job.ranks[i], strerror(errno));
        if (write(STDERR_FILENO, msg, (size_t)n) < 0) {
            /* ignore */
        }
    }
    int    app  = weft_job_app_of(&px.job, px.job.ranks[i]);
    char **argv = app > 0 ? px.job.app_argv[app] : px.job.argv;
    execve(argv[0], argv, envp);
    int exec_errno = errno;
    if (write(px_exec_fd, &exec_errno, sizeof(exec_errno)) < 0) {
        /* the exit code still tells */
    }
    n = snprintf(msg, sizeof(msg), "mpiexec: error: rank %d: cannot execute %s: %s\n",
                 px.job.ranks[i], argv[0], strerror(exec_errno));
    if (write(STDERR_FILENO, msg, (size_t)n) < 0) {
        /* ignore */
    }
    _exit(127);
}

int px_start_ranks(void)
{
    pid_t self = getpid();

    px.ranks = calloc((size_t)px.job.nlocal, sizeof(*px.ranks));
    if (px.ranks == NULL) {
        return -1;
    }
    for (int i = 0; i < px.job.nlocal; i++) {
        int    sv[2], out[2], err[2], in[2] = {-1, -1}, ex[2];
        char **envp;
        pid_t  pid;

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
            pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
            pipe2(ex, O_CLOEXEC) != 0) {
            px_log("cannot create pipes for rank %d: %s", px.job.ranks[i], strerror(errno));
            return -1;
        }
        if (px.job.ranks[i] == 0 && pipe2(in, O_CLOEXEC) != 0) {
            px_log("cannot create stdin pipe: %s", strerror(errno));
            return -1;
        }
        envp = px_build_env(i, sv[1]);
        if (envp == NULL) {
            return -1;
        }
        px_exec_fd = ex[1];
        pid        = fork();
        if (pid < 0) {
            px_log("fork for rank %d failed: %s", px.job.ranks[i], strerror(errno));
            return -1;
        }
        if (pid == 0) {
            px_child(i, sv[1], out[1], err[1], in[0], envp, self);
        }
        setpgid(pid, pid);
        for (char **e = envp; *e != NULL; e++) { /* the per-rank strings are ours */
            int shared = 0;
            for (int k = 0; k < px.job.nenv && !shared; k++) {
                shared = *e == px.job.env[k];
            }
            if (!shared) {
                free(*e);
            }
        }
        free(envp);
        close(sv[1]);
        close(out[1]);
        close(err[1]);
        if (in[0] >= 0) {
            close(in[0]);
            px.stdin_fd = in[1];
            weft_fd_set_nonblock(px.stdin_fd);
        }
        weft_fd_set_nonblock(out[0]);
        weft_fd_set_nonblock(err[0]);
        px.ranks[i].rank   = px.job.ranks[i];
        px.ranks[i].pid    = pid;
        px.ranks[i].alive  = 1;
        px.ranks[i].fds[0] = out[0];
        px.ranks[i].fds[1] = err[0];
        px.srv.conns[i].fd   = sv[0];
        px.srv.conns[i].rank   = px.job.ranks[i];
        px.srv.conns[i].appnum = weft_job_app_of(&px.job, px.job.ranks[i]);
        px.nlive++;
        close(ex[1]);
        weft_fd_set_nonblock(ex[0]);
        px.ranks[i].exec_fd = ex[0];
        px_send(WEFT_CTL_STARTED, px.job.ranks[i], (int)pid, NULL, 0);
    }
    px.started = 1;
    return 0;
}

/* Confirm the ranks' execs without waiting for them (a blocking wait per
 * rank doubled the start time of 64 ranks): EXECED when a status pipe
 * closed, NOEXEC with the errno a failed exec wrote. The main loop polls
 * the status pipes (it used to wake every 2 ms while an exec was pending,
 * taking CPU from the ranks being started). Returns how many are pending. */
int px_check_exec(void)
{
    int pending = 0;

    for (int i = 0; px.started && i < px.job.nlocal; i++) {
        proxy_rank_t *r = &px.ranks[i];
        int           exec_errno = 0;
        ssize_t       n;

        if (r->exec_fd < 0) {
            continue;
        }
        n = read(r->exec_fd, &exec_errno, sizeof(exec_errno));
        if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
            pending++;
            continue;
        }
        close(r->exec_fd);
        r->exec_fd = -1;
        if (n > 0 && exec_errno != 0) {
            px_send(WEFT_CTL_NOEXEC, r->rank, exec_errno, NULL, 0);
        } else {
            px_send(WEFT_CTL_EXECED, r->rank, 0, NULL, 0);
        }
    }
    return pending;
}
