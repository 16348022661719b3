/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft-proxy: one per node. Receives the job from mpiexec over the control
 * channel, plans CPU binding, forks the node's ranks (each in its own process
 * group, with PR_SET_PDEATHSIG), serves PMI on per-rank socketpairs, forwards
 * stdout/stderr/stdin, relays signals, reports exits, and removes the job's
 * leftover /dev/shm/weft-<jobid>-* segments when everything has ended.
 * If mpiexec goes away (control EOF or our own parent-death SIGTERM) every
 * rank's process group is killed.
 * The weft-proxy program (proxy_main.c) runs this on remote hosts; on
 * mpiexec's own host mpiexec forks and runs it without an exec (proxy.h).
 * This file has the event loop and the control messages; starting the
 * ranks (environment, fork, exec confirmation) is in proxy_ranks.c, and
 * the state both use is in proxy_internal.h.
 */
#include "common/auth.h"
#include "common/guard.h"
#include "common/listener.h"
#include "common/tree.h"
#include "pmi/pmi_shm.h"
#include "proxy.h"
#include "proxy_internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Wait this long for output pipes held open by a rank's children after the
 * rank itself has exited, then kill its process group. */
#define PROXY_DRAIN_MS 1000
/* Stop reading rank output while this much waits for mpiexec: the ranks then
 * block in write() instead of the proxy growing without bound. */
#define PROXY_OUTPUT_HIGH_WATER (8u << 20)
/* A remote proxy gives up if it cannot read the secret and reach mpiexec
 * within this time. */
#define PROXY_CONNECT_MS 30000

/* The proxy's state (proxy_internal.h). */
proxy_state_t px = {.stdin_fd = -1, .sigpipe = {-1, -1}};

/* Child proxies in the tree (remote proxies with children only). */
typedef struct {
    int             pos;
    int             connected;
    int             fenced; /* its subtree's FENCE_IN of this round arrived */
    int             done;   /* its DONE passed through, or it was lost */
    weft_ctl_conn_t ctl;
} proxy_kid_t;

static struct {
    int             pos;    /* among remote proxies; -1: local, talks to mpiexec directly */
    int             degree;
    int             count;
    weft_secret_t   secret;
    weft_listener_t lis;
    proxy_kid_t    *kids;
    int             nkids;
    int             nfenced;
    int             own_fenced;
    weft_buf_t      fence_buf;
} tree = {.pos = -1, .lis = {.fd = -1}};

/* Remote hosts only: where to tell the guard (guard.h) our job id. */
static int px_guard_fd = -1;
static int px_shm_hold = -1; /* guard.h: another proxy may share this host */

void px_log(const char *fmt, ...)
{
    char    line[1024];
    va_list ap;
    int     n = snprintf(line, sizeof(line), "weft-proxy: error: ");

    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n         = (int)strlen(line);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing more to do */
    }
}

static void px_on_signal(int sig)
{
    unsigned char c     = (unsigned char)sig;
    int           saved = errno;
    if (write(px.sigpipe[1], &c, 1) < 0) {
        /* pipe full: a wakeup is already pending */
    }
    errno = saved;
}

static void px_signal_all(int sig)
{
    for (int i = 0; i < px.job.nlocal; i++) {
        if (px.ranks != NULL && px.ranks[i].pid > 0) {
            /* The whole process group, so the rank's own children go too. */
            kill(-px.ranks[i].pid, sig);
            if (px.ranks[i].alive) {
                kill(px.ranks[i].pid, sig);
            }
        }
    }
}

static void px_cleanup_shm(void)
{
    weft_cleanup_shm(px.job.jobid, &px_shm_hold);
}

/* mpiexec is gone: nobody can report or decide anything any more. */
static void px_emergency_exit(void)
{
    px_signal_all(SIGKILL);
    px_cleanup_shm();
    _exit(1);
}

/* Upstream (towards mpiexec) as is. */
static void px_send_up(int type, int a0, int a1, const void *data, size_t len)
{
    if (weft_ctl_send(&px.ctl, type, a0, a1, data, len) != 0) {
        px_emergency_exit();
    }
}

/* A message of ours for mpiexec: in a FROM envelope when we are in the tree. */
void px_send(int type, int a0, int a1, const void *data, size_t len)
{
    weft_buf_t inner = {0};

    if (tree.pos < 0) {
        px_send_up(type, a0, a1, data, len);
        return;
    }
    if (weft_ctl_encode(&inner, type, a0, a1, data, len) != 0) {
        px_emergency_exit();
    }
    px_send_up(WEFT_CTL_FROM, tree.pos, 0, inner.data, inner.len);
    weft_buf_free(&inner);
}

/* Our ranks' puts and every child subtree's are in: one FENCE_IN upwards. */
static void px_fence_check(void)
{
    if (!tree.own_fenced || tree.nfenced < tree.nkids) {
        return;
    }
    px_send_up(WEFT_CTL_FENCE_IN, 0, 0, tree.fence_buf.data, tree.fence_buf.len);
    tree.fence_buf.len = 0;
    tree.own_fenced    = 0;
    tree.nfenced       = 0;
    for (int k = 0; k < tree.nkids; k++) {
        tree.kids[k].fenced = 0;
    }
}

static void px_on_fence(void *ctx, const char *puts, size_t len)
{
    (void)ctx;
    weft_buf_append(&tree.fence_buf, puts, len);
    tree.own_fenced = 1;
    px_fence_check();
}

static void px_on_abort(void *ctx, int rank, int code, const char *msg)
{
    (void)ctx;
    px_send(WEFT_CTL_ABORT, rank, code, msg, strlen(msg));
}

/* Name service and spawn are mpiexec's: pass them up, answers come back as
 * NAME_R / SPAWN_R for the same connection. */
static void px_on_name(void *ctx, int conn, int op, const char *service, const char *port)
{
    weft_buf_t b = {0};

    (void)ctx;
    weft_buf_append_str0(&b, service ? service : "");
    weft_buf_append_str0(&b, port ? port : "");
    px_send(WEFT_CTL_NAME, conn, op, b.data, b.len);
    weft_buf_free(&b);
}

static void px_on_spawn(void *ctx, int conn, const char *req, size_t len)
{
    (void)ctx;
    px_send(WEFT_CTL_SPAWN, conn, 0, req, len);
}

static char px_shm_prefix[128]; /* node-local PMI snapshot (pmi_shm.h) */

static void px_on_error(void *ctx, int rank, const char *what)
{
    (void)ctx;
    px_log("PMI from rank %d: %s", rank, what);
}

/* Forward what an output pipe has; on EOF tell mpiexec and close it. */
static void px_read_output(int i, int stream)
{
    proxy_rank_t *r = &px.ranks[i];
    char          chunk[16384];

    for (;;) {
        ssize_t n = read(r->fds[stream], chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n <= 0) {
            close(r->fds[stream]);
            r->fds[stream] = -1;
            px_send(WEFT_CTL_OUTPUT, r->rank, stream + 1, NULL, 0);
            return;
        }
        px_send(WEFT_CTL_OUTPUT, r->rank, stream + 1, chunk, (size_t)n);
        if ((size_t)n < sizeof(chunk)) {
            return;
        }
    }
}

static void px_pmi_input(int i)
{
    weft_pmi_sconn_t *c = &px.srv.conns[i];

    if (c->fd < 0) {
        return;
    }
    if (weft_pmi_server_input(&px.srv, i) <= 0) {
        close(c->fd);
        c->fd = -1;
    }
}

static void px_reap(void)
{
    /* A rank's exec confirmation goes before its exit. */
    px_check_exec();
    for (;;) {
        int   status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid <= 0) {
            return;
        }
        for (int i = 0; i < px.job.nlocal; i++) {
            proxy_rank_t     *r = &px.ranks[i];
            weft_pmi_sconn_t *c = &px.srv.conns[i];
            char              info[128];

            if (r->pid != pid || !r->alive) {
                continue;
            }
            /* Handle what the rank said last (abort, finalize) and what it
             * printed before reporting its end. */
            px_pmi_input(i);
            for (int s = 0; s < 2; s++) {
                if (r->fds[s] >= 0) {
                    px_read_output(i, s);
                }
            }
            r->alive = 0;
            px.nlive--;
            if (c->initialized && !c->finalized && !c->aborted) {
                /* Died: the survivors' fences must not wait for it (with
                 * auto-cleanup the job ends anyway). Once every local rank
                 * has ended this proxy ends, and mpiexec stops counting it.
                 * A rank that never spoke PMI (not an MPI program) takes no
                 * part in fences: counting its end as one started a fence
                 * while the proxies were ending, and mpiexec then saw a
                 * proxy's link close before its DONE ("lost the connection
                 * to weft-proxy", test_hello_3x2[chain], 2 in 8 runs). */
                weft_pmi_server_conn_dead(&px.srv, i);
            }
            /* It is gone, so its status pipe is closed: settle its exec
             * confirmation now, before its exit (the proxy may end next). */
            px_check_exec();
            snprintf(info, sizeof(info), "pid=%d init=%d fin=%d abort=%d", (int)pid,
                     c->initialized, c->finalized, c->aborted);
            px_send(WEFT_CTL_EXIT, r->rank, status, info, strlen(info));
        }
        if (px.nlive == 0 && px.drain_deadline == 0) {
            px.drain_deadline = weft_now_ms() + PROXY_DRAIN_MS;
        }
    }
}

static void px_write_stdin(void)
{
    while (px.stdin_fd >= 0 && px.stdin_buf.len > 0) {
        ssize_t n = write(px.stdin_fd, px.stdin_buf.data, px.stdin_buf.len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return;
        }
        if (n < 0) {
            /* Rank 0 closed its stdin: discard, but keep acknowledging. */
            close(px.stdin_fd);
            px.stdin_fd = -1;
            px_send(WEFT_CTL_STDIN_ACK, (int)px.stdin_buf.len, 0, NULL, 0);
            px.stdin_buf.len = 0;
            return;
        }
        weft_buf_consume(&px.stdin_buf, (size_t)n);
        px_send(WEFT_CTL_STDIN_ACK, (int)n, 0, NULL, 0);
    }
    if (px.stdin_fd >= 0 && px.stdin_eof && px.stdin_buf.len == 0) {
        close(px.stdin_fd);
        px.stdin_fd = -1;
    }
}

static void px_handle_ctl(const weft_ctl_hdr_t *hdr, const char *payload);

/* From upstream: deliver, route down the tree, or broadcast. */
static void px_dispatch(const weft_ctl_hdr_t *hdr, const char *payload)
{
    if (hdr->type == WEFT_CTL_TO) {
        weft_ctl_hdr_t inner;
        const char    *body;
        if (weft_ctl_decode(payload, hdr->len, &inner, &body) != 0) {
            px_log("malformed envelope from upstream");
            return;
        }
        if (hdr->a0 == tree.pos) {
            char *copy = malloc(inner.len + 1);
            if (copy == NULL) {
                px_emergency_exit();
            }
            memcpy(copy, body, inner.len);
            copy[inner.len] = '\0';
            px_handle_ctl(&inner, copy);
            free(copy);
            return;
        }
        int via = weft_tree_route(tree.pos, hdr->a0, tree.degree);
        for (int k = 0; k < tree.nkids; k++) {
            if (tree.kids[k].pos == via && tree.kids[k].connected) {
                weft_ctl_send(&tree.kids[k].ctl, WEFT_CTL_TO, hdr->a0, 0, payload, hdr->len);
            }
        }
        return;
    }
    if (hdr->type == WEFT_CTL_GO || hdr->type == WEFT_CTL_SIGNAL ||
        hdr->type == WEFT_CTL_FENCE_OUT || hdr->type == WEFT_CTL_PING ||
        hdr->type == WEFT_CTL_RANK_LOST) {
        for (int k = 0; k < tree.nkids; k++) {
            if (tree.kids[k].connected && !tree.kids[k].done) {
                weft_ctl_send(&tree.kids[k].ctl, (int)hdr->type, hdr->a0, hdr->a1, payload,
                              hdr->len);
            }
        }
    }
    px_handle_ctl(hdr, payload);
}

/* A child proxy proved the secret at our listener. */
static int px_on_kid_conn(void *ctx, int fd, unsigned index)
{
    (void)ctx;
    for (int k = 0; k < tree.nkids; k++) {
        if ((unsigned)tree.kids[k].pos == index && !tree.kids[k].connected) {
            tree.kids[k].connected = 1;
            weft_ctl_conn_init(&tree.kids[k].ctl, fd);
            return 0;
        }
    }
    return -1;
}

static void px_on_kid_refused(void *ctx, const char *text)
{
    (void)ctx;
    px_log("%s", text);
}

/* Everything a child proxy sent: pass its envelopes up, merge its fences. */
static void px_kid_input(proxy_kid_t *kid)
{
    int rd = weft_ctl_read(&kid->ctl);

    for (;;) {
        weft_ctl_hdr_t hdr;
        char          *payload;
        if (weft_ctl_next(&kid->ctl, &hdr, &payload) != 1) {
            break;
        }
        if (hdr.type == WEFT_CTL_FENCE_IN) {
            weft_buf_append(&tree.fence_buf, payload, hdr.len);
            if (!kid->fenced) {
                kid->fenced = 1;
                tree.nfenced++;
            }
            px_fence_check();
        } else if (hdr.type == WEFT_CTL_FROM) {
            weft_ctl_hdr_t inner;
            const char    *body;
            if (hdr.a0 == kid->pos && weft_ctl_decode(payload, hdr.len, &inner, &body) == 0 &&
                inner.type == WEFT_CTL_DONE) {
                kid->done = 1;
            }
            px_send_up(WEFT_CTL_FROM, hdr.a0, hdr.a1, payload, hdr.len);
        }
        free(payload);
    }
    if (rd <= 0) {
        if (!kid->done) {
            weft_buf_t inner = {0};
            weft_ctl_encode(&inner, WEFT_CTL_LOST, 0, 0, NULL, 0);
            px_send_up(WEFT_CTL_FROM, kid->pos, 0, inner.data, inner.len);
            weft_buf_free(&inner);
        }
        kid->done = 1;
        weft_ctl_conn_fini(&kid->ctl);
        kid->ctl.fd = -1;
    }
}

static void px_handle_ctl(const weft_ctl_hdr_t *hdr, const char *payload)
{
    char err[512];

    switch (hdr->type) {
    case WEFT_CTL_JOB:
        if (weft_job_unpack(payload, hdr->len, &px.job) != 0) {
            snprintf(err, sizeof(err), "malformed job description from mpiexec");
            px_send(WEFT_CTL_READY, -1, 0, err, strlen(err));
            return;
        }
        if (px_guard_fd >= 0) {
            if (write(px_guard_fd, px.job.jobid, strlen(px.job.jobid)) < 0) {
                /* the guard then cleans processes only */
            }
            close(px_guard_fd);
            px_guard_fd = -1;
        }
        if (weft_pmi_server_init(&px.srv, px.job.nlocal) != 0) {
            snprintf(err, sizeof(err), "out of memory");
            px_send(WEFT_CTL_READY, -1, 0, err, strlen(err));
            return;
        }
        px.srv.kvsname  = px.job.kvsname;
        px.srv.mapping  = px.job.mapping;
        px.srv.size     = px.job.size;
        px.srv.universe = px.job.universe;
        px.srv.on_fence = px_on_fence;
        px.srv.on_abort = px_on_abort;
        px.srv.on_name  = px_on_name;
        px.srv.on_spawn = px_on_spawn;
        px.srv.on_error = px_on_error;
        /* Always written (ranks with WEFT_PMI_SHM=0 ignore it); the name is
         * weft-<jobid>-*, removed with the job's other segments. */
        px_shm_hold = weft_shm_hold(px.job.jobid);
        snprintf(px_shm_prefix, sizeof(px_shm_prefix), "/weft-%s-pmikv%d", px.job.jobid,
                 (int)getpid());
        px.srv.shm_prefix = px_shm_prefix;
        if (weft_pmi_lost_create(px_shm_prefix, px.job.size) != 0) {
            px_log("cannot create the list of lost ranks (%s): ranks on this host learn of "
                   "deaths elsewhere only by their network keepalives", strerror(errno));
        }
        if (weft_binding_plan(&px.job.bind, px.job.nlocal, &px.plan, err, sizeof(err)) != 0) {
            px_send(WEFT_CTL_READY, -1, 0, err, strlen(err));
            return;
        }
        if (px.job.bind.show) {
            for (int i = 0; i < px.job.nlocal; i++) {
                px_send(WEFT_CTL_BINDING, px.job.ranks[i], 0, px.plan.text[i],
                        strlen(px.plan.text[i]));
            }
        }
        px_send(WEFT_CTL_READY, 0, 0, px.plan.note, strlen(px.plan.note));
        break;
    case WEFT_CTL_GO:
        if (px_start_ranks() != 0) {
            px_emergency_exit();
        }
        break;
    case WEFT_CTL_FENCE_OUT:
        weft_pmi_server_fence_done(&px.srv, payload, hdr->len);
        break;
    case WEFT_CTL_STDIN:
        if (hdr->len == 0) {
            px.stdin_eof = 1;
        } else if (px.stdin_fd >= 0) {
            weft_buf_append(&px.stdin_buf, payload, hdr->len);
        } else {
            px_send(WEFT_CTL_STDIN_ACK, (int)hdr->len, 0, NULL, 0);
        }
        px_write_stdin();
        break;
    case WEFT_CTL_SIGNAL:
        px_signal_all(hdr->a0);
        break;
    case WEFT_CTL_RANK_LOST:
        weft_pmi_lost_add(hdr->a0);
        break;
    case WEFT_CTL_PING:
        break; /* heard_ms is updated on every read */
    case WEFT_CTL_NAME_R:
        if (hdr->len >= 2) {
            weft_pmi_server_name_done(&px.srv, hdr->a0, payload[0], hdr->a1, payload + 2);
        }
        break;
    case WEFT_CTL_SPAWN_R: {
        const char *codes = payload;
        const char *msg   = hdr->len > strlen(codes) ? codes + strlen(codes) + 1 : "";
        weft_pmi_server_spawn_done(&px.srv, hdr->a0, hdr->a1, codes, msg);
        break;
    }
    default:
        px_log("unexpected control message %u", hdr->type);
        break;
    }
}

static int px_finished(void)
{
    if (!px.started || px.nlive > 0) {
        return 0;
    }
    for (int k = 0; k < tree.nkids; k++) {
        if (!tree.kids[k].done || tree.kids[k].ctl.fd >= 0) {
            return 0;
        }
    }
    for (int i = 0; i < px.job.nlocal; i++) {
        if (px.ranks[i].fds[0] >= 0 || px.ranks[i].fds[1] >= 0) {
            return 0;
        }
    }
    return 1;
}

/* Remote start: the job secret arrives on stdin (one hex line, from
 * mpiexec through the launcher command), then we dial mpiexec and prove we
 * know it. stdin is /dev/null afterwards. Returns the control fd or -1. */
static int px_connect_back(const char *host, int port, int index, const char *label)
{
    char          line[2 * WEFT_AUTH_SECRET_LEN + 2];
    size_t        got = 0;
    long long     deadline = weft_now_ms() + PROXY_CONNECT_MS;
    weft_secret_t secret;
    char          err[512];
    int           fd;

    while (got < sizeof(line) - 1) {
        struct pollfd pfd  = {.fd = STDIN_FILENO, .events = POLLIN};
        long long     left = deadline - weft_now_ms();
        ssize_t       n;
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
            break;
        }
        n = read(STDIN_FILENO, line + got, sizeof(line) - 1 - got);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        got += (size_t)n;
    }
    line[got] = '\0';
    fd        = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, STDIN_FILENO);
        close(fd);
    }
    if (got < 2 * WEFT_AUTH_SECRET_LEN || weft_secret_from_hex(line, &secret) != 0) {
        px_log("host %s: no job secret on stdin (weft-proxy is run by mpiexec, not by hand)",
               label);
        return -1;
    }
    fd = weft_auth_connect(host, port, &secret, (uint32_t)index,
                           (int)(deadline - weft_now_ms()), err, sizeof(err));
    tree.secret = secret; /* our children prove it to us */
    memset(&secret, 0, sizeof(secret));
    memset(line, 0, sizeof(line));
    if (fd >= 0) {
        struct sockaddr_storage ss;
        socklen_t               sl = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0 && ss.ss_family == AF_INET) {
            inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, px.host_addr,
                      sizeof(px.host_addr));
        }
    }
    if (fd < 0) {
        px_log("host %s: cannot reach %s: %s", label,
               weft_tree_parent(index, tree.degree) < 0 ? "mpiexec" : "its parent weft-proxy", err);
    }
    return fd;
}

int weft_proxy_main(int argc, char **argv)
{
    int              ctl_fd = -1;
    struct sigaction sa;
    struct pollfd   *pfds;
    int              maxfds;

    const char *connect_host = NULL, *host_label = "?";
    int         connect_port = -1, index = -1;

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--control-fd") == 0 && i + 1 < argc) {
            ctl_fd = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--connect") == 0 && i + 2 < argc) {
            connect_host = argv[++i];
            connect_port = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--index") == 0 && i + 1 < argc) {
            index = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--tree") == 0 && i + 2 < argc) {
            tree.degree = atoi(argv[++i]);
            tree.count  = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--heartbeat") == 0 && i + 1 < argc) {
            px.heartbeat_ms = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--host") == 0 && i + 1 < argc) {
            host_label = argv[++i];
        }
    }
    if (connect_host != NULL && index >= 0) {
        char err[512];
        px_guard_fd = weft_guard_start();
        if (tree.degree < 1) {
            tree.degree = 1;
        }
        ctl_fd = px_connect_back(connect_host, connect_port, index, host_label);
        if (ctl_fd < 0) {
            return 1;
        }
        tree.pos   = index;
        tree.nkids = weft_tree_nchildren(index, tree.degree, tree.count);
        if (tree.nkids > 0) {
            /* Our children connect to us: listen only when we have some. */
            tree.kids = calloc((size_t)tree.nkids, sizeof(*tree.kids));
            if (tree.kids == NULL ||
                weft_listener_open(&tree.lis, NULL, &tree.secret, err, sizeof(err)) != 0) {
                px_log("host %s: %s", host_label, tree.kids ? err : "out of memory");
                return 1;
            }
            for (int k = 0; k < tree.nkids; k++) {
                tree.kids[k].pos    = weft_tree_first_child(index, tree.degree) + k;
                tree.kids[k].ctl.fd = -1;
            }
        }
    }
    if (ctl_fd < 0 || fcntl(ctl_fd, F_GETFD) < 0) {
        fprintf(stderr, "weft-proxy: error: started without a control connection "
                        "(weft-proxy is run by mpiexec, not by hand)\n");
        return 2;
    }
    px.heard_ms = weft_now_ms();
    /* mpiexec gone -> SIGTERM to us -> we kill every rank. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    weft_fd_set_cloexec(ctl_fd, 1);
    weft_ctl_conn_init(&px.ctl, ctl_fd);
    if (tree.pos >= 0) {
        px_send(WEFT_CTL_HELLO, tree.lis.fd >= 0 ? tree.lis.port : 0, 0, tree.lis.addr,
                tree.lis.fd >= 0 ? strlen(tree.lis.addr) : 0);
    }

    if (pipe2(px.sigpipe, O_CLOEXEC | O_NONBLOCK) != 0) {
        return 1;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = px_on_signal;
    sa.sa_flags   = SA_RESTART | SA_NOCLDSTOP;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGCHLD, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);

    for (;;) {
        int       n = 0, timeout = -1;
        long long now;

        int nlis = weft_listener_nfds(&tree.lis), tree_base;
        maxfds   = 3 + (px.job.nlocal > 0 ? 4 * px.job.nlocal : 0) + 1 + nlis + tree.nkids;
        pfds   = calloc((size_t)maxfds, sizeof(*pfds));
        if (pfds == NULL) {
            px_emergency_exit();
        }
        pfds[n++] = (struct pollfd){.fd     = px.ctl.fd,
                                    .events = POLLIN | (px.ctl.out.len ? POLLOUT : 0)};
        pfds[n++] = (struct pollfd){.fd = px.sigpipe[0], .events = POLLIN};
        pfds[n++] = (struct pollfd){
            .fd = (px.stdin_fd >= 0 && px.stdin_buf.len > 0) ? px.stdin_fd : -1, .events = POLLOUT};
        for (int i = 0; px.started && i < px.job.nlocal; i++) {
            weft_pmi_sconn_t *c = &px.srv.conns[i];
            int throttle = px.ctl.out.len > PROXY_OUTPUT_HIGH_WATER;
            pfds[n++] = (struct pollfd){.fd = throttle ? -1 : px.ranks[i].fds[0], .events = POLLIN};
            pfds[n++] = (struct pollfd){.fd = throttle ? -1 : px.ranks[i].fds[1], .events = POLLIN};
            pfds[n++] = (struct pollfd){.fd = c->fd, .events = POLLIN | (c->out.len ? POLLOUT : 0)};
            /* EOF (or an errno) on the exec-status pipe: the exec is settled. */
            pfds[n++] = (struct pollfd){.fd = px.ranks[i].exec_fd, .events = POLLIN};
        }
        tree_base = n;
        for (int k = 0; k < tree.nkids; k++) {
            proxy_kid_t *kid = &tree.kids[k];
            pfds[n++] = (struct pollfd){.fd     = kid->ctl.fd,
                                        .events = POLLIN | (kid->ctl.out.len ? POLLOUT : 0)};
        }
        weft_listener_fill(&tree.lis, &pfds[n]);
        n += nlis;
        if (nlis > 1) {
            int left = weft_listener_timeout(&tree.lis);
            timeout  = timeout >= 0 && timeout < left ? timeout : left;
        }
        if (px.drain_deadline > 0) {
            long long left = px.drain_deadline - weft_now_ms();
            timeout        = left > 0 ? (int)left : 0;
        }
        if (px.heartbeat_ms > 0) {
            long long left = px.next_ping - weft_now_ms();
            left           = left > 0 ? left : 0;
            timeout        = timeout >= 0 && timeout < left ? timeout : (int)left;
        }
        if (poll(pfds, (nfds_t)n, timeout) < 0 && errno != EINTR) {
            px_emergency_exit();
        }

        if (pfds[1].revents & POLLIN) {
            unsigned char sigs[64];
            ssize_t       k = read(px.sigpipe[0], sigs, sizeof(sigs));
            for (ssize_t s = 0; s < k; s++) {
                if (sigs[s] == SIGCHLD) {
                    px_reap();
                } else {
                    px_emergency_exit(); /* parent death or someone killing us */
                }
            }
        }
        if (pfds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            int rc = weft_ctl_read(&px.ctl);
            if (rc > 0) {
                px.heard_ms = weft_now_ms();
            }
            for (;;) {
                weft_ctl_hdr_t hdr;
                char          *payload;
                if (weft_ctl_next(&px.ctl, &hdr, &payload) != 1) {
                    break;
                }
                px_dispatch(&hdr, payload);
                free(payload);
            }
            if (rc <= 0) {
                px_emergency_exit();
            }
        }
        if (pfds[0].revents & POLLOUT) {
            if (weft_ctl_flush(&px.ctl) != 0) {
                px_emergency_exit();
            }
        }
        if (pfds[2].revents) {
            px_write_stdin();
        }
        for (int i = 0, k = 3; px.started && i < px.job.nlocal; i++, k += 4) {
            if (pfds[k].fd >= 0 && pfds[k].revents) {
                px_read_output(i, 0);
            }
            if (pfds[k + 1].fd >= 0 && pfds[k + 1].revents) {
                px_read_output(i, 1);
            }
            if (pfds[k + 2].fd >= 0 && (pfds[k + 2].revents & (POLLIN | POLLHUP | POLLERR))) {
                px_pmi_input(i);
            }
            if (pfds[k + 2].fd >= 0 && (pfds[k + 2].revents & POLLOUT)) {
                weft_pmi_server_flush(&px.srv, i);
            }
            if (pfds[k + 3].fd >= 0 && pfds[k + 3].revents) {
                px_check_exec();
            }
        }
        for (int k = 0; k < tree.nkids; k++) {
            proxy_kid_t *kid = &tree.kids[k];
            short        ev  = pfds[tree_base + k].revents;
            if (pfds[tree_base + k].fd < 0 || kid->ctl.fd < 0) {
                continue;
            }
            if (ev & POLLOUT) {
                weft_ctl_flush(&kid->ctl);
            }
            if (ev & (POLLIN | POLLHUP | POLLERR)) {
                px_kid_input(kid);
            }
        }
        if (nlis > 0) {
            weft_listener_service(&tree.lis, &pfds[tree_base + tree.nkids], px_on_kid_conn,
                                  px_on_kid_refused, NULL);
            if (px.started && tree.lis.npending == 0) {
                int all = 1;
                for (int k = 0; k < tree.nkids; k++) {
                    all &= tree.kids[k].connected;
                }
                if (all) {
                    weft_listener_close(&tree.lis); /* every child is in: stop listening */
                }
            }
        }
        free(pfds);

        now = weft_now_ms();
        if (px.heartbeat_ms > 0 && now >= px.next_ping) {
            px.next_ping = now + px.heartbeat_ms / 4;
            /* 1.5x mpiexec's limit: mpiexec, which sees every host, speaks
             * first and names the host that went silent. */
            if (now - px.heard_ms > px.heartbeat_ms * 3 / 2) {
                px_log("lost contact with mpiexec (silent for %d ms); ending this host's ranks",
                       px.heartbeat_ms * 3 / 2);
                px_emergency_exit();
            }
            px_send(WEFT_CTL_PING, 0, 0, NULL, 0);
        }
        if (px.drain_deadline > 0 && now >= px.drain_deadline && !px_finished()) {
            /* Rank children still hold the output pipes: end them. */
            px_signal_all(SIGKILL);
            for (int i = 0; i < px.job.nlocal; i++) {
                for (int s = 0; s < 2; s++) {
                    if (px.ranks[i].fds[s] >= 0) {
                        px_read_output(i, s);
                        if (px.ranks[i].fds[s] >= 0) {
                            close(px.ranks[i].fds[s]);
                            px.ranks[i].fds[s] = -1;
                            px_send(WEFT_CTL_OUTPUT, px.ranks[i].rank, s + 1, NULL, 0);
                        }
                    }
                }
            }
        }
        if (px_finished()) {
            break;
        }
    }

    weft_pmi_lost_close();
    px_cleanup_shm();
    px_send(WEFT_CTL_DONE, 0, 0, NULL, 0);
    weft_ctl_flush_wait(&px.ctl, 5000);
    weft_binding_plan_free(&px.plan);
    weft_pmi_server_fini(&px.srv);
    weft_job_free(&px.job);
    return 0;
}
