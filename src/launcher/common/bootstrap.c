/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "bootstrap.h"

#include "buf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

static int fork_init(void)
{
    return 0;
}

/* The forked child of fork_launch: exec argv with "--control-fd N" added. */
static int exec_with_control_fd(int ctl_fd, void *arg)
{
    char *const *argv = arg;
    int          argc = 0;
    char         fdnum[16];
    char       **args;

    while (argv[argc] != NULL) {
        argc++;
    }
    if ((args = calloc((size_t)argc + 3, sizeof(char *))) == NULL) {
        fprintf(stderr, "mpiexec: error: out of memory starting %s\n", argv[0]);
        return 127;
    }
    snprintf(fdnum, sizeof(fdnum), "%d", ctl_fd);
    memcpy(args, argv, sizeof(char *) * (size_t)argc);
    args[argc]     = "--control-fd";
    args[argc + 1] = fdnum;
    weft_fd_set_cloexec(ctl_fd, 0);
    execv(args[0], args);
    fprintf(stderr, "mpiexec: error: cannot execute %s: %s\n", args[0], strerror(errno));
    return 127;
}

static int fork_launch(const char *host, char *const argv[], int *ctl_fd_p, pid_t *pid_p,
                       char *err, size_t errlen)
{
    (void)host;
    return weft_bootstrap_fork_run("weft-proxy", exec_with_control_fd, (void *)argv, ctl_fd_p,
                                   pid_p, err, errlen);
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
        snprintf(err, errlen, "host '%s': remote hosts start with weft_bootstrap_launch_remote",
                 host);
        return -1;
    }
    return bootstrap_fork_ops.launch(host, argv, ctl_fd_p, pid_p, err, errlen);
}

/* What an exec would have closed: every close-on-exec descriptor but keep. */
static void close_cloexec_fds(int keep)
{
    DIR           *d = opendir("/proc/self/fd");
    struct dirent *e;

    if (d == NULL) {
        for (int fd = 3; fd < 1024; fd++) {
            int fl = fd == keep ? 0 : fcntl(fd, F_GETFD);
            if (fl >= 0 && (fl & FD_CLOEXEC)) {
                close(fd);
            }
        }
        return;
    }
    while ((e = readdir(d)) != NULL) {
        int fd = atoi(e->d_name);
        int fl;
        if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == keep || fd == dirfd(d)) {
            continue;
        }
        fl = fcntl(fd, F_GETFD);
        if (fl >= 0 && (fl & FD_CLOEXEC)) {
            close(fd);
        }
    }
    closedir(d);
}

int weft_bootstrap_fork_run(const char *name, int (*run)(int ctl_fd, void *arg), void *arg,
                            int *ctl_fd_p, pid_t *pid_p, char *err, size_t errlen)
{
    int      sv[2];
    pid_t    pid;
    sigset_t all, old;

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(err, errlen, "socketpair: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    /* No handler of the parent's may run in the child (they write to the
     * parent's self-pipe) before the child has reset them. */
    sigfillset(&all);
    sigprocmask(SIG_SETMASK, &all, &old);
    pid = fork();
    if (pid == 0) {
        struct sigaction dfl;
        int              rc;

        /* Own process group: terminal signals reach mpiexec only, which
         * forwards them. */
        setpgid(0, 0);
        memset(&dfl, 0, sizeof(dfl));
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        for (int sig = 1; sig < NSIG; sig++) {
            struct sigaction cur;
            if (sigaction(sig, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL &&
                cur.sa_handler != SIG_IGN) {
                sigaction(sig, &dfl, NULL);
            }
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        close_cloexec_fds(sv[1]);
        prctl(PR_SET_NAME, name);
        rc = run(sv[1], arg);
        fflush(NULL);
        _exit(rc); /* the parent's atexit handlers are not ours */
    }
    sigprocmask(SIG_SETMASK, &old, NULL);
    close(sv[1]);
    if (pid < 0) {
        snprintf(err, errlen, "fork: %s", strerror(errno));
        close(sv[0]);
        return -1;
    }
    setpgid(pid, pid); /* both sides, so no race with the child */
    *ctl_fd_p = sv[0];
    *pid_p    = pid;
    return 0;
}

/* Split the launcher template into words, replacing %h by host; without %h
 * the host is appended as one more word (the ssh form). The default ssh gets
 * -x and BatchMode (no X11, no password prompt that would hang the job). */
static char **remote_words(const char *tmpl, const char *host, int *has_host_p, int *n_p)
{
    char      **words = NULL;
    int         n = 0, has_host = strstr(tmpl, "%h") != NULL;
    const char *p = tmpl;

    while (*p != '\0') {
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p == '\0') {
            break;
        }
        size_t      len = strcspn(p, " \t\n");
        weft_buf_t  w   = {0};
        for (size_t i = 0; i < len; i++) {
            if (p[i] == '%' && i + 1 < len && p[i + 1] == 'h') {
                weft_buf_append(&w, host, strlen(host));
                i++;
            } else {
                weft_buf_append(&w, &p[i], 1);
            }
        }
        weft_buf_append(&w, "", 1);
        words      = realloc(words, sizeof(char *) * (size_t)(n + 6));
        words[n++] = w.data;
        p += len;
    }
    if (words == NULL) {
        return NULL;
    }
    if (!has_host) {
        const char *base = strrchr(words[0], '/') ? strrchr(words[0], '/') + 1 : words[0];
        if (n == 1 && strcmp(base, "ssh") == 0) {
            words[n++] = strdup("-x");
            words[n++] = strdup("-oBatchMode=yes");
        }
        words[n++] = strdup(host);
    }
    *n_p        = n;
    *has_host_p = has_host;
    return words;
}

/* s as one single-quoted shell word. */
static void shell_quote(weft_buf_t *b, const char *s)
{
    weft_buf_append(b, "'", 1);
    for (; *s; s++) {
        if (*s == '\'') {
            weft_buf_append(b, "'\\''", 4);
        } else {
            weft_buf_append(b, s, 1);
        }
    }
    weft_buf_append(b, "'", 1);
}

/* The command run on the remote host: start the proxy if it is there, else
 * say which host lacks which path and exit 127. */
static char *remote_script(const char *host, char *const argv[])
{
    weft_buf_t b = {0};
    const char *msg1 = "weft-proxy: error: host ", *msg2 = ": no executable ",
               *msg3 = " (Weft must be installed at the same path on every host)";

    weft_buf_append(&b, "if [ -x ", 8);
    shell_quote(&b, argv[0]);
    weft_buf_append(&b, " ]; then exec", 13);
    for (int i = 0; argv[i] != NULL; i++) {
        weft_buf_append(&b, " ", 1);
        shell_quote(&b, argv[i]);
    }
    weft_buf_append(&b, "; else echo ", 12);
    shell_quote(&b, msg1);
    shell_quote(&b, host);
    shell_quote(&b, msg2);
    shell_quote(&b, argv[0]);
    shell_quote(&b, msg3);
    weft_buf_append(&b, " >&2; exit 127; fi", 18);
    weft_buf_append(&b, "", 1);
    return b.data;
}

int weft_bootstrap_launch_remote(const char *host, const char *tmpl, char *const argv[],
                                 const char *stdin_text, pid_t *pid_p, char *err, size_t errlen)
{
    int    nwords = 0, has_host = 0, in[2];
    char **words  = remote_words(tmpl, host, &has_host, &nwords);
    char  *script = remote_script(host, argv);
    char **args;
    pid_t  pid;

    if (words == NULL || script == NULL) {
        snprintf(err, errlen, "host '%s': empty launcher command", host);
        free(script);
        return -1;
    }
    args = calloc((size_t)(nwords + 4), sizeof(char *));
    if (args == NULL || pipe2(in, O_CLOEXEC) != 0) {
        snprintf(err, errlen, "host '%s': %s", host, args ? strerror(errno) : "out of memory");
        free(args);
        free(script);
        return -1;
    }
    memcpy(args, words, sizeof(char *) * (size_t)nwords);
    if (has_host) {
        /* "ip netns exec %h", "srun -w %h": the command execs its argv. */
        args[nwords]     = "/bin/sh";
        args[nwords + 1] = "-c";
        args[nwords + 2] = script;
    } else {
        /* ssh-like: one string that the remote login shell runs. */
        args[nwords] = script;
    }
    pid = fork();
    if (pid == 0) {
        setpgid(0, 0);
        dup2(in[0], STDIN_FILENO);
        dup2(STDERR_FILENO, STDOUT_FILENO); /* the proxy prints nothing but errors */
        execvp(args[0], args);
        fprintf(stderr, "mpiexec: error: host '%s': cannot execute launcher command %s: %s\n",
                host, args[0], strerror(errno));
        _exit(127);
    }
    close(in[0]);
    if (pid > 0) {
        setpgid(pid, pid);
        /* The secret goes on the launcher's stdin (a pipe, never argv or
         * environment); it is a few dozen bytes, so the pipe takes it whole.
         * A launcher that already exited (EPIPE) is reported when reaped. */
        size_t len = strlen(stdin_text);
        if (write(in[1], stdin_text, len) != (ssize_t)len) {
            /* see above */
        }
    } else {
        snprintf(err, errlen, "fork: %s", strerror(errno));
    }
    close(in[1]);
    for (int i = 0; i < nwords; i++) {
        free(words[i]);
    }
    free(words);
    free(args);
    free(script);
    if (pid < 0) {
        return -1;
    }
    *pid_p = pid;
    return 0;
}

int weft_bootstrap_kill(pid_t pid, int sig)
{
    return bootstrap_fork_ops.kill(pid, sig);
}

int weft_bootstrap_wait(pid_t pid, int *status_p, int nohang)
{
    return bootstrap_fork_ops.wait(pid, status_p, nohang);
}
