/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "guard.h"

#include "buf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static pid_t guarded;

static int shm_hold_open(const char *jobid)
{
    char path[160];

    snprintf(path, sizeof(path), "/dev/shm/weft-%s-hosthold", jobid);
    return open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
}

int weft_shm_hold(const char *jobid)
{
    int fd = jobid[0] != '\0' ? shm_hold_open(jobid) : -1;

    if (fd >= 0 && flock(fd, LOCK_SH) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

void weft_cleanup_shm(const char *jobid, int *hold)
{
    char           prefix[128];
    DIR           *d;
    struct dirent *e;
    int            last;

    if (hold != NULL && *hold >= 0) {
        close(*hold);
        *hold = -1;
    }
    if (jobid[0] == '\0') {
        return;
    }
    /* A fresh descriptor, not a conversion of ours: of two holders ending
     * together, the later one to try then always gets the lock. */
    last = shm_hold_open(jobid);
    if (last >= 0 && flock(last, LOCK_EX | LOCK_NB) != 0) {
        close(last);
        return; /* a neighbour still runs and sweeps at its end */
    }
    d = opendir("/dev/shm");
    snprintf(prefix, sizeof(prefix), "weft-%s-", jobid);
    while (d != NULL && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0) {
            unlinkat(dirfd(d), e->d_name, 0);
        }
    }
    if (d != NULL) {
        closedir(d);
    }
    if (last >= 0) {
        close(last);
    }
}


static void guard_forward(int sig)
{
    if (guarded > 0) {
        kill(guarded, sig);
    }
}

/* Kill and reap every process reparented to us until none is left. */
static void guard_sweep(void)
{
    long long deadline = weft_now_ms() + 2000;
    pid_t     self     = getpid();

    for (;;) {
        /* As a subreaper we are the parent of every orphan of the job: with
         * no child left (the common end) there is nothing to look for. */
        pid_t reaped;
        while ((reaped = waitpid(-1, NULL, WNOHANG)) > 0) {
        }
        if ((reaped < 0 && errno == ECHILD) || weft_now_ms() >= deadline) {
            return;
        }
        DIR  *d     = opendir("/proc");
        struct dirent *e;
        while (d != NULL && (e = readdir(d)) != NULL) {
            char  path[64], buf[512];
            pid_t pid = (pid_t)atoi(e->d_name);
            int   fd, ppid = 0;
            if (pid <= 0) {
                continue;
            }
            snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
            fd = open(path, O_RDONLY);
            if (fd < 0) {
                continue;
            }
            ssize_t n = read(fd, buf, sizeof(buf) - 1);
            close(fd);
            char *rp = n > 0 ? (buf[n] = '\0', strrchr(buf, ')')) : NULL;
            if (rp != NULL && sscanf(rp + 2, "%*c %d", &ppid) == 1 && ppid == self) {
                kill(-pid, SIGKILL);
                kill(pid, SIGKILL);
            }
        }
        if (d != NULL) {
            closedir(d);
        }
        usleep(20000);
    }
}

int weft_guard_start(void)
{
    int   pfd[2];
    pid_t child;

    if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0 || pipe2(pfd, O_CLOEXEC) != 0) {
        return -1; /* run unguarded */
    }
    pid_t guard = getpid();
    child       = fork();
    if (child < 0) {
        return -1;
    }
    if (child == 0) {
        close(pfd[0]);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != guard) {
            _exit(1);
        }
        return pfd[1];
    }
    close(pfd[1]);
    guarded = child;
    struct sigaction sa = {.sa_handler = guard_forward};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int status = 0;
    for (;;) {
        pid_t pid = waitpid(-1, &status, 0);
        if (pid == child || (pid < 0 && errno != EINTR)) {
            break;
        }
    }
    char    jobid[64] = "";
    ssize_t n         = read(pfd[0], jobid, sizeof(jobid) - 1);
    jobid[n > 0 ? n : 0] = '\0';
    guard_sweep();
    weft_cleanup_shm(jobid, NULL);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

