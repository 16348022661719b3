/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Spawn requests: packing, the agent's command line, starting it and reading
 * its report (pmi_spawn.h).
 */
#include "pmi_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- packing: NUL-separated tokens ---- */

static int tok_add(char **buf, size_t *len, size_t *cap, const char *s)
{
    size_t n = strlen(s) + 1;

    if (*len + n > *cap) {
        size_t ncap = (*cap ? *cap * 2 : 1024) + n;
        char  *nb   = realloc(*buf, ncap);
        if (nb == NULL) {
            return -1;
        }
        *buf = nb;
        *cap = ncap;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    return 0;
}

static int tok_addi(char **buf, size_t *len, size_t *cap, int v)
{
    char t[16];
    snprintf(t, sizeof(t), "%d", v);
    return tok_add(buf, len, cap, t);
}

int weft_pmi_spawn_pack(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                        const char *const *pp_keys, const char *const *pp_vals, char **out,
                        size_t *len_p)
{
    char  *buf = NULL;
    size_t len = 0, cap = 0;
    int    bad = 0;

    bad |= tok_addi(&buf, &len, &cap, count);
    bad |= tok_addi(&buf, &len, &cap, npreput);
    for (int i = 0; i < npreput && !bad; i++) {
        bad |= tok_add(&buf, &len, &cap, pp_keys[i]);
        bad |= tok_add(&buf, &len, &cap, pp_vals[i]);
    }
    for (int c = 0; c < count && !bad; c++) {
        int argc = 0;
        while (cmds[c].argv != NULL && cmds[c].argv[argc] != NULL) {
            argc++;
        }
        bad |= tok_add(&buf, &len, &cap, cmds[c].command);
        bad |= tok_addi(&buf, &len, &cap, cmds[c].maxprocs);
        bad |= tok_addi(&buf, &len, &cap, argc);
        for (int a = 0; a < argc && !bad; a++) {
            bad |= tok_add(&buf, &len, &cap, cmds[c].argv[a]);
        }
        bad |= tok_addi(&buf, &len, &cap, cmds[c].ninfo);
        for (int k = 0; k < cmds[c].ninfo && !bad; k++) {
            bad |= tok_add(&buf, &len, &cap, cmds[c].info_keys[k]);
            bad |= tok_add(&buf, &len, &cap, cmds[c].info_values[k]);
        }
    }
    if (bad) {
        free(buf);
        return -1;
    }
    *out   = buf;
    *len_p = len;
    return 0;
}

typedef struct {
    const char *p, *end;
} tok_reader_t;

static const char *tok_next(tok_reader_t *r)
{
    const char *s = r->p;
    const char *z;

    if (s >= r->end || (z = memchr(s, '\0', (size_t)(r->end - s))) == NULL) {
        return NULL;
    }
    r->p = z + 1;
    return s;
}

static int tok_int(tok_reader_t *r, int lo, int hi, int *v)
{
    const char *s = tok_next(r);
    char       *e;
    long        x;

    if (s == NULL) {
        return -1;
    }
    x = strtol(s, &e, 10);
    if (*s == '\0' || *e != '\0' || x < lo || x > hi) {
        return -1;
    }
    *v = (int)x;
    return 0;
}

int weft_pmi_spawn_unpack(const char *data, size_t len, weft_pmi_spawn_req_t *req)
{
    tok_reader_t r;
    size_t       nptr = 0, used = 0;

    memset(req, 0, sizeof(*req));
    req->text = malloc(len + 1);
    if (req->text == NULL) {
        return -1;
    }
    memcpy(req->text, data, len);
    req->text[len] = '\0';
    /* Every token is at most one pointer. */
    for (size_t i = 0; i < len; i++) {
        nptr += req->text[i] == '\0';
    }
    req->ptrs = calloc(nptr + 8, sizeof(char *));
    r         = (tok_reader_t){req->text, req->text + len};
    if (req->ptrs == NULL || tok_int(&r, 0, 1 << 16, &req->count) != 0 ||
        tok_int(&r, 0, 1 << 16, &req->npreput) != 0) {
        goto bad;
    }
    req->cmds = calloc((size_t)req->count + 1, sizeof(*req->cmds));
    if (req->cmds == NULL || (size_t)(2 * req->npreput) > nptr) {
        goto bad;
    }
    req->pp_keys = req->ptrs + used;
    used += (size_t)req->npreput;
    req->pp_vals = req->ptrs + used;
    used += (size_t)req->npreput;
    for (int i = 0; i < req->npreput; i++) {
        if ((req->pp_keys[i] = tok_next(&r)) == NULL || (req->pp_vals[i] = tok_next(&r)) == NULL) {
            goto bad;
        }
    }
    for (int c = 0; c < req->count; c++) {
        weft_pmi_spawn_cmd_t *cmd = &req->cmds[c];
        const char          **v;
        int                   argc;

        if ((cmd->command = tok_next(&r)) == NULL || tok_int(&r, 1, 1 << 20, &cmd->maxprocs) ||
            tok_int(&r, 0, 1 << 16, &argc) || used + (size_t)argc + 1 > nptr + 8) {
            goto bad;
        }
        v = req->ptrs + used;
        used += (size_t)argc + 1;
        for (int a = 0; a < argc; a++) {
            if ((v[a] = tok_next(&r)) == NULL) {
                goto bad;
            }
        }
        v[argc]   = NULL;
        cmd->argv = v;
        if (tok_int(&r, 0, 1 << 16, &cmd->ninfo) || used + 2 * (size_t)cmd->ninfo > nptr + 8) {
            goto bad;
        }
        cmd->info_keys = req->ptrs + used;
        used += (size_t)cmd->ninfo;
        cmd->info_values = req->ptrs + used;
        used += (size_t)cmd->ninfo;
        for (int k = 0; k < cmd->ninfo; k++) {
            if ((((const char **)cmd->info_keys)[k] = tok_next(&r)) == NULL ||
                (((const char **)cmd->info_values)[k] = tok_next(&r)) == NULL) {
                goto bad;
            }
        }
        req->nchildren += cmd->maxprocs;
    }
    return 0;
bad:
    weft_pmi_spawn_req_free(req);
    return -1;
}

void weft_pmi_spawn_req_free(weft_pmi_spawn_req_t *req)
{
    free(req->cmds);
    free(req->ptrs);
    free(req->text);
    memset(req, 0, sizeof(*req));
}

/* ---- the agent's command line ---- */

static const char *info_get(const weft_pmi_spawn_cmd_t *cmd, const char *key)
{
    for (int k = 0; k < cmd->ninfo; k++) {
        if (strcmp(cmd->info_keys[k], key) == 0) {
            return cmd->info_values[k];
        }
    }
    return NULL;
}

/* argv for the agent; strings point into req or into the static buffers of
 * the caller (fdtext, usize). NULL with err when the request cannot be met. */
static const char **spawn_argv(const char *mpiexec, const char *fdtext, const char *usize,
                               const weft_pmi_spawn_req_t *req, const char *default_hosts,
                               const char *const *extra, char *err, size_t errlen)
{
    size_t       n = 16, k = 0;
    const char  *hosts = NULL, *hostfile = NULL;
    const char **argv;
    static char  counts[64][16];

    if (req->count > 64) {
        snprintf(err, errlen, "spawn_multiple of more than 64 commands");
        return NULL;
    }
    for (int c = 0; c < req->count; c++) {
        int argc = 0;
        while (req->cmds[c].argv[argc] != NULL) {
            argc++;
        }
        n += (size_t)argc + 10;
        /* One job, one host list: the commands must agree on it. */
        const char *h = info_get(&req->cmds[c], "host");
        const char *f = info_get(&req->cmds[c], "hostfile");
        if ((h && hosts && strcmp(h, hosts) != 0) || (f && hostfile && strcmp(f, hostfile) != 0)) {
            snprintf(err, errlen, "the commands of one spawn name different 'host'/'hostfile' "
                                  "info values (Weft places one spawned job on one host list)");
            return NULL;
        }
        hosts    = h ? h : hosts;
        hostfile = f ? f : hostfile;
    }
    for (const char *const *e = extra; e && *e; e++) {
        n++;
    }
    argv = calloc(n, sizeof(char *));
    if (argv == NULL) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    argv[k++] = mpiexec;
    argv[k++] = "--spawn-fd";
    argv[k++] = fdtext;
    if (usize != NULL) {
        argv[k++] = "-usize";
        argv[k++] = usize;
    }
    for (const char *const *e = extra; e && *e; e++) {
        argv[k++] = *e;
    }
    if (hostfile != NULL) {
        argv[k++] = "-f";
        argv[k++] = hostfile;
    } else if (hosts != NULL || (default_hosts != NULL && default_hosts[0] != '\0')) {
        argv[k++] = "-hosts";
        argv[k++] = hosts ? hosts : default_hosts;
    }
    for (int c = 0; c < req->count; c++) {
        const weft_pmi_spawn_cmd_t *cmd = &req->cmds[c];
        const char                 *v;

        if (c > 0) {
            argv[k++] = ":";
        }
        snprintf(counts[c], sizeof(counts[c]), "%d", cmd->maxprocs);
        argv[k++] = "-n";
        argv[k++] = counts[c];
        if ((v = info_get(cmd, "wdir")) != NULL) {
            argv[k++] = "-wdir";
            argv[k++] = v;
        }
        if ((v = info_get(cmd, "path")) != NULL) {
            argv[k++] = "-path";
            argv[k++] = v;
        }
        argv[k++] = "--";
        argv[k++] = cmd->command;
        for (int a = 0; cmd->argv[a] != NULL; a++) {
            argv[k++] = cmd->argv[a];
        }
    }
    argv[k] = NULL;
    return argv;
}

/* ---- starting the agent ---- */

void weft_pmi_spawn_parse_fail(const char *line, int n, int *errcodes, char *msg, size_t len)
{
    const char *p = line + (strncmp(line, "fail ", 5) == 0 ? 5 : 0);
    size_t      tl = strcspn(p, " \n");

    for (int k = 0; k < n; k++) {
        errcodes[k] = 1; /* unless the report says otherwise */
    }
    if (!(tl == 1 && p[0] == '-')) { /* "-": no per-child detail */
        const char *q = p;
        for (int i = 0; i < n && q < p + tl; i++) {
            char *e;
            errcodes[i] = (int)strtol(q, &e, 10);
            if (e == q) {
                break;
            }
            q = *e == ',' ? e + 1 : e;
        }
    }
    p += tl;
    while (*p == ' ') {
        p++;
    }
    snprintf(msg, len, "%s", *p ? p : "the spawned job could not start");
    msg[strcspn(msg, "\n")] = '\0';
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int weft_pmi_spawn_start(const char *mpiexec_path, const weft_pmi_spawn_req_t *req,
                         const char *default_hosts, int universe,
                         const char *const *extra_args, int timeout_ms, int *pid_p,
                         int *errcodes, char *errmsg, size_t errmsg_len)
{
    int          sv[2];
    char         fdtext[16], usize[16], line[1024];
    size_t       got = 0;
    const char **argv;
    char        *pp = NULL, *pphex = NULL;
    size_t       pplen = 0;
    pid_t        pid;
    long long    deadline = now_ms() + timeout_ms;

    *pid_p = -1;
    for (int k = 0; k < req->nchildren; k++) {
        errcodes[k] = 0;
    }
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        snprintf(errmsg, errmsg_len, "socketpair: %s", strerror(errno));
        return WEFT_PMI_ERR_GENERIC;
    }
    snprintf(fdtext, sizeof(fdtext), "%d", sv[1]);
    snprintf(usize, sizeof(usize), "%d", universe);
    argv = spawn_argv(mpiexec_path, fdtext, universe > 0 ? usize : NULL, req, default_hosts,
                      extra_args, errmsg, errmsg_len);
    if (argv == NULL ||
        weft_pmi_spawn_pack(0, NULL, req->npreput, req->pp_keys, req->pp_vals, &pp, &pplen) != 0 ||
        (pphex = malloc(2 * pplen + 1)) == NULL) {
        if (argv != NULL) {
            snprintf(errmsg, errmsg_len, "out of memory");
        }
        free(argv);
        free(pp);
        close(sv[0]);
        close(sv[1]);
        for (int k = 0; k < req->nchildren; k++) {
            errcodes[k] = 1;
        }
        return WEFT_PMI_ERR_SPAWN;
    }
    weft_pmi_encode(pp, pplen, pphex);
    free(pp);
    pid = fork();
    if (pid == 0) {
        /* The pairs travel in the agent's environment, not its command line. */
        int null_fd = open("/dev/null", O_RDONLY);
        if (null_fd >= 0) {
            dup2(null_fd, STDIN_FILENO); /* stdin stays the first job's */
        }
        fcntl(sv[1], F_SETFD, 0);
        setenv("WEFT_SPAWN_PREPUT", pphex, 1);
        unsetenv("PMI_FD");
        unsetenv("PMI_PORT");
        unsetenv("PMI_ID");
        execv(mpiexec_path, (char *const *)argv);
        dprintf(sv[1], "fail - cannot execute %s: %s\n", mpiexec_path, strerror(errno));
        _exit(127);
    }
    free(argv);
    free(pphex);
    close(sv[1]);
    if (pid < 0) {
        close(sv[0]);
        snprintf(errmsg, errmsg_len, "fork: %s", strerror(errno));
        return WEFT_PMI_ERR_GENERIC;
    }
    *pid_p = (int)pid;
    for (;;) {
        struct pollfd pfd  = {.fd = sv[0], .events = POLLIN};
        long long     left = deadline - now_ms();
        ssize_t       n;

        if (memchr(line, '\n', got) != NULL) {
            break;
        }
        if (left <= 0) {
            snprintf(errmsg, errmsg_len, "the spawned job did not start within %d s",
                     timeout_ms / 1000);
            kill(pid, SIGTERM);
            close(sv[0]);
            for (int k = 0; k < req->nchildren; k++) {
                errcodes[k] = 1;
            }
            return WEFT_PMI_ERR_SPAWN;
        }
        if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR) {
            break;
        }
        n = read(sv[0], line + got, sizeof(line) - 1 - got);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
        if (got == sizeof(line) - 1) {
            break;
        }
    }
    close(sv[0]);
    line[got] = '\0';
    if (strncmp(line, "ok\n", 3) == 0) {
        return 0;
    }
    if (got == 0) {
        snprintf(line, sizeof(line), "fail - the mpiexec of the spawned job ended before "
                                     "starting it");
    }
    weft_pmi_spawn_parse_fail(line, req->nchildren, errcodes, errmsg, errmsg_len);
    return WEFT_PMI_ERR_SPAWN;
}
