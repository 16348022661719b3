/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Dynamic processes in mpiexec.
 *
 * Name service: a table of service -> port kept here, reached by this job's
 * ranks through their proxies (PMI publish/lookup/unpublish). With
 * -nameserver-file F this mpiexec also serves other jobs: it listens on the
 * job's interface and writes "host:port:secret" to F (mode 0600). A
 * connection must prove that secret (HMAC challenge, auth.h) before it may
 * send a request, so only who can read F (the user) can use the server. A
 * second job given -nameserver or WEFT_NAMESERVER (the same text, or F's
 * path) forwards its ranks' requests there.
 *
 * Spawn: a rank's request becomes a new job run by a second mpiexec, the
 * "spawn agent" (pmi/pmi_spawn.h): its own job id, KVS and world, its own
 * proxies on the hosts the info keys or this job's host list name. We wait
 * for its report (every child exec'ed, or which failed), answer the rank, and
 * then wait for the agent before exiting. A spawned job that fails does not
 * end this one unless -kill-on-child-failure was given.
 */
#include "mpiexec.h"

#include "pmi/pmi.h"
#include "pmi/pmi_spawn.h"
#include "pmi/pmi_wire.h"

#include <sys/socket.h>

#define MP_NS_TIMEOUT_MS 5000

/* ---- the name table ---- */

static int ns_find(const char *service)
{
    for (int k = 0; k < mp.ns_count; k++) {
        if (strcmp(mp.ns_names[k], service) == 0) {
            return k;
        }
    }
    return -1;
}

/* Apply op to the local table. 0 or WEFT_PMI_ERR_*; *port_p set on lookup. */
static int ns_local(int op, const char *service, const char *port, const char **port_p)
{
    int k = ns_find(service);

    switch (op) {
    case 'P':
        if (k >= 0) {
            return WEFT_PMI_ERR_DUPLICATE;
        }
        mp.ns_names = realloc(mp.ns_names, sizeof(char *) * (size_t)(mp.ns_count + 1));
        mp.ns_ports = realloc(mp.ns_ports, sizeof(char *) * (size_t)(mp.ns_count + 1));
        if (mp.ns_names == NULL || mp.ns_ports == NULL) {
            mp_die(1, "out of memory");
        }
        mp.ns_names[mp.ns_count] = strdup(service);
        mp.ns_ports[mp.ns_count] = strdup(port);
        mp.ns_count++;
        return 0;
    case 'L':
        if (k < 0) {
            return WEFT_PMI_ERR_NOT_FOUND;
        }
        *port_p = mp.ns_ports[k];
        return 0;
    default:
        if (k < 0) {
            return WEFT_PMI_ERR_NOT_FOUND;
        }
        free(mp.ns_names[k]);
        free(mp.ns_ports[k]);
        mp.ns_names[k] = mp.ns_names[mp.ns_count - 1];
        mp.ns_ports[k] = mp.ns_ports[mp.ns_count - 1];
        mp.ns_count--;
        return 0;
    }
}

/* ---- the name server's wire: one PMI-1 line each way ---- */

static void ns_request_msg(weft_pmi_msg_t *q, int op, const char *service, const char *port)
{
    weft_pmi_msg_init(q, op == 'P'   ? WEFT_PMI_MSG_PUBLISH
                         : op == 'L' ? WEFT_PMI_MSG_LOOKUP
                                     : WEFT_PMI_MSG_UNPUBLISH);
    weft_pmi_msg_add(q, "service", service);
    if (op == 'P') {
        weft_pmi_msg_add(q, "port", port);
    }
}

static void ns_reply_msg(weft_pmi_msg_t *r, int op, int rc, const char *port)
{
    weft_pmi_msg_init(r, op == 'P'   ? WEFT_PMI_MSG_PUBLISH_R
                         : op == 'L' ? WEFT_PMI_MSG_LOOKUP_R
                                     : WEFT_PMI_MSG_UNPUBLISH_R);
    weft_pmi_msg_addf(r, "rc", "%d", rc == 0 ? 0 : 1);
    if (rc == 0 && op == 'L') {
        weft_pmi_msg_add(r, "port", port);
    } else if (rc != 0) {
        weft_pmi_msg_add(r, "msg", rc == WEFT_PMI_ERR_DUPLICATE   ? "duplicate_service"
                                   : rc == WEFT_PMI_ERR_NOT_FOUND ? "service_not_found"
                                                                  : "name_service_error");
    }
}

static int ns_rc_of(const weft_pmi_msg_t *r)
{
    const char *why = weft_pmi_msg_get(r, "msg");

    if (weft_pmi_msg_rc(r) == 0) {
        return 0;
    }
    if (why != NULL && strstr(why, "duplicate") != NULL) {
        return WEFT_PMI_ERR_DUPLICATE;
    }
    if (why != NULL && strstr(why, "not_found") != NULL) {
        return WEFT_PMI_ERR_NOT_FOUND;
    }
    return WEFT_PMI_ERR_GENERIC;
}

/* "host:port:secret", or the path of a file holding that line. */
static int ns_parse_addr(const char *text, char *host, size_t hostlen, int *port,
                         weft_secret_t *secret, char *err, size_t errlen)
{
    char  line[512];
    char *c1, *c2;

    if (strchr(text, '/') != NULL || access(text, F_OK) == 0) {
        FILE *f = fopen(text, "r");
        if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
            snprintf(err, errlen, "cannot read the name server address file %s: %s", text,
                     strerror(errno));
            if (f != NULL) {
                fclose(f);
            }
            return -1;
        }
        fclose(f);
    } else {
        snprintf(line, sizeof(line), "%s", text);
    }
    line[strcspn(line, "\r\n")] = '\0';
    c1                          = NULL;
    c2                          = strrchr(line, ':');
    if (c2 != NULL) {
        *c2 = '\0';
        c1  = strrchr(line, ':');
    }
    if (c1 == NULL || c2 == NULL || weft_secret_from_hex(c2 + 1, secret) != 0) {
        snprintf(err, errlen,
                 "name server address '%s' is not host:port:secret (use the line of the other "
                 "mpirun's -nameserver-file, or that file's path)",
                 text);
        return -1;
    }
    *c1   = '\0';
    *port = atoi(c1 + 1);
    snprintf(host, hostlen, "%.255s", line);
    return *port > 0 ? 0 : -1;
}

/* Forward one request to another mpiexec's name server. */
static int ns_remote(int op, const char *service, const char *port, char *out, size_t outlen)
{
    char           host[256], err[512], buf[WEFT_PMI_WIRE_MAX];
    int            nsport, fd, n, rc;
    size_t         got = 0, flen;
    weft_secret_t  secret;
    weft_pmi_msg_t q, r;
    long long      deadline = weft_now_ms() + MP_NS_TIMEOUT_MS;

    if (ns_parse_addr(mp.ns_remote, host, sizeof(host), &nsport, &secret, out, outlen) != 0) {
        return WEFT_PMI_ERR_GENERIC;
    }
    fd = weft_auth_connect(host, nsport, &secret, 0, MP_NS_TIMEOUT_MS, err, sizeof(err));
    memset(&secret, 0, sizeof(secret));
    if (fd < 0) {
        snprintf(out, outlen, "name server %s:%d: %s", host, nsport, err);
        return WEFT_PMI_ERR_GENERIC;
    }
    ns_request_msg(&q, op, service, port);
    n = weft_pmi_msg_encode(&q, buf, sizeof(buf));
    if (n < 0 || write(fd, buf, (size_t)n) != n) {
        close(fd);
        snprintf(out, outlen, "name server %s:%d: cannot send the request", host, nsport);
        return WEFT_PMI_ERR_GENERIC;
    }
    for (;;) {
        struct pollfd pfd  = {.fd = fd, .events = POLLIN};
        long long     left = deadline - weft_now_ms();
        ssize_t       k;
        if (weft_pmi_frame(buf, got, 1, &flen) == 1) {
            break;
        }
        if (left <= 0 || poll(&pfd, 1, (int)left) <= 0 ||
            (k = read(fd, buf + got, sizeof(buf) - got)) <= 0) {
            close(fd);
            snprintf(out, outlen, "name server %s:%d did not answer", host, nsport);
            return WEFT_PMI_ERR_GENERIC;
        }
        got += (size_t)k;
    }
    close(fd);
    if (weft_pmi_msg_decode(buf, flen, 1, WEFT_PMI_DIR_R, &r, err, sizeof(err)) != 0) {
        snprintf(out, outlen, "name server %s:%d: %s", host, nsport, err);
        return WEFT_PMI_ERR_GENERIC;
    }
    rc = ns_rc_of(&r);
    if (rc == 0 && op == 'L') {
        snprintf(out, outlen, "%s", weft_pmi_msg_get(&r, "port") ? weft_pmi_msg_get(&r, "port") : "");
    }
    return rc;
}

/* A name request from proxy p's connection conn. */
void mp_ns_request(int p, int conn, int op, const char *service, const char *port)
{
    char        text[WEFT_PMI_MAX_VAL + 256] = "";
    const char *found = NULL;
    int         rc;
    weft_buf_t  b = {0};
    char        opc[2] = {(char)op, '\0'};

    if (service == NULL || service[0] == '\0' || (op == 'P' && (port == NULL || !port[0]))) {
        rc = WEFT_PMI_ERR_GENERIC;
        snprintf(text, sizeof(text), "empty service name or port");
    } else if (mp.ns_remote != NULL) {
        rc = ns_remote(op, service, port, text, sizeof(text));
        found = text;
    } else {
        rc = ns_local(op, service, port, &found);
    }
    if (rc == WEFT_PMI_ERR_GENERIC) {
        mp_msg("mpiexec: warning: name service: %s", text);
    }
    weft_buf_append_str0(&b, opc);
    weft_buf_append_str0(&b, rc == 0 && op == 'L' && found ? found : text);
    mp_send_to(p, WEFT_CTL_NAME_R, conn, rc, b.data, b.len);
    weft_buf_free(&b);
}

/* ---- serving other jobs (-nameserver-file) ---- */

static int ns_on_conn(void *ctx, int fd, unsigned index)
{
    (void)ctx;
    (void)index;
    mp.ns_conns = realloc(mp.ns_conns, sizeof(*mp.ns_conns) * (size_t)(mp.ns_nconns + 1));
    if (mp.ns_conns == NULL) {
        return -1;
    }
    weft_fd_set_nonblock(fd);
    mp.ns_conns[mp.ns_nconns] = (mp_ns_conn_t){.fd = fd};
    mp.ns_nconns++;
    return 0;
}

static void ns_on_refused(void *ctx, const char *text)
{
    (void)ctx;
    mp_msg("mpiexec: warning: name server: %s", text);
}

void mp_ns_open(void)
{
    char err[512], secret_hex[2 * WEFT_AUTH_SECRET_LEN + 1], line[600];
    int  fd, n;

    if (mp.ns_remote == NULL && weft_tunables.NAMESERVER && weft_tunables.NAMESERVER[0]) {
        mp.ns_remote = weft_tunables.NAMESERVER;
    }
    if (mp.ns_remote != NULL) {
        char          host[256];
        int           port;
        weft_secret_t secret;
        if (ns_parse_addr(mp.ns_remote, host, sizeof(host), &port, &secret, err, sizeof(err)) !=
            0) {
            mp_die(MP_EXIT_USAGE, "%s", err);
        }
        memset(&secret, 0, sizeof(secret));
    }
    if (mp.ns_file == NULL) {
        return; /* listen only when asked to serve other jobs */
    }
    if (mp.ns_remote != NULL) {
        mp_die(MP_EXIT_USAGE, "-nameserver-file and -nameserver (or WEFT_NAMESERVER) exclude each "
                              "other: a job serves names or uses another job's server");
    }
    if (weft_secret_new(&mp.ns_secret) != 0) {
        mp_die(1, "cannot create the name server secret: no randomness available");
    }
    if (weft_listener_open(&mp.ns_listener, mp.iface ? mp.iface : weft_tunables.IFACE,
                           &mp.ns_secret, err, sizeof(err)) != 0) {
        mp_die(1, "name server: %s", err);
    }
    weft_secret_to_hex(&mp.ns_secret, secret_hex);
    n  = snprintf(line, sizeof(line), "%s:%d:%s\n", mp.ns_listener.addr, mp.ns_listener.port,
                  secret_hex);
    fd = open(mp.ns_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0 || fchmod(fd, 0600) != 0 || write(fd, line, (size_t)n) != n) {
        mp_die(1, "cannot write the name server address file %s: %s", mp.ns_file,
               strerror(errno));
    }
    close(fd);
    memset(line, 0, sizeof(line));
    memset(secret_hex, 0, sizeof(secret_hex));
    mp.ns_file_written = 1;
    if (mp.verbose) {
        mp_msg("mpiexec: name server listening on %s:%d, address in %s", mp.ns_listener.addr,
               mp.ns_listener.port, mp.ns_file);
    }
}

void mp_ns_close(void)
{
    if (mp.ns_file_written) {
        unlink(mp.ns_file);
        mp.ns_file_written = 0;
    }
    for (int k = 0; k < mp.ns_nconns; k++) {
        if (mp.ns_conns[k].fd >= 0) {
            close(mp.ns_conns[k].fd);
        }
        weft_buf_free(&mp.ns_conns[k].in);
    }
    mp.ns_nconns = 0;
    if (mp.ns_listener.fd >= 0) {
        weft_listener_close(&mp.ns_listener);
    }
}

int mp_ns_nfds(void)
{
    return weft_listener_nfds(&mp.ns_listener) + mp.ns_nconns;
}

void mp_ns_fill(struct pollfd *pfds)
{
    int nl = weft_listener_nfds(&mp.ns_listener);

    weft_listener_fill(&mp.ns_listener, pfds);
    for (int k = 0; k < mp.ns_nconns; k++) {
        pfds[nl + k] = (struct pollfd){.fd = mp.ns_conns[k].fd, .events = POLLIN};
    }
}

/* Answer what a client connection has sent; 0 keep, -1 drop. */
static int ns_serve(mp_ns_conn_t *c)
{
    char chunk[4096], err[256], out[WEFT_PMI_WIRE_MAX];

    for (;;) {
        ssize_t n = read(c->fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && errno == EAGAIN) {
            break;
        }
        if (n <= 0) {
            return -1;
        }
        weft_buf_append(&c->in, chunk, (size_t)n);
    }
    for (;;) {
        weft_pmi_msg_t q, r;
        size_t         flen;
        const char    *found = NULL;
        int            op, rc, len;

        rc = weft_pmi_frame(c->in.data, c->in.len, 1, &flen);
        if (rc == 0) {
            return 0;
        }
        if (rc < 0 || weft_pmi_msg_decode(c->in.data, flen, 1, WEFT_PMI_DIR_Q, &q, err,
                                          sizeof(err)) != 0) {
            return -1;
        }
        weft_buf_consume(&c->in, flen);
        op = q.id == WEFT_PMI_MSG_PUBLISH ? 'P' : q.id == WEFT_PMI_MSG_LOOKUP ? 'L'
             : q.id == WEFT_PMI_MSG_UNPUBLISH ? 'U' : 0;
        if (op == 0) {
            return -1;
        }
        rc = ns_local(op, weft_pmi_msg_get(&q, "service"), weft_pmi_msg_get(&q, "port"), &found);
        ns_reply_msg(&r, op, rc, found);
        len = weft_pmi_msg_encode(&r, out, sizeof(out));
        if (len < 0 || send(c->fd, out, (size_t)len, MSG_NOSIGNAL) != len) {
            return -1;
        }
    }
}

void mp_ns_service(const struct pollfd *pfds)
{
    int nl = weft_listener_nfds(&mp.ns_listener), k, w;
    int nconns = mp.ns_nconns; /* new connections are polled next round */

    for (k = 0; k < nconns; k++) {
        if (pfds[nl + k].revents && ns_serve(&mp.ns_conns[k]) != 0) {
            close(mp.ns_conns[k].fd);
            mp.ns_conns[k].fd = -1;
            weft_buf_free(&mp.ns_conns[k].in);
        }
    }
    for (k = 0, w = 0; k < mp.ns_nconns; k++) {
        if (mp.ns_conns[k].fd >= 0) {
            mp.ns_conns[w++] = mp.ns_conns[k];
        }
    }
    mp.ns_nconns = w;
    if (nl > 0) {
        weft_listener_service(&mp.ns_listener, pfds, ns_on_conn, ns_on_refused, NULL);
    }
}

/* ---- spawn (parent side) ---- */

static char *mp_host_list(void)
{
    weft_buf_t b = {0};
    char       item[300];

    if (mp.nhosts == 0) {
        return NULL;
    }
    for (int h = 0; h < mp.nhosts; h++) {
        snprintf(item, sizeof(item), "%s%s:%d", h ? "," : "", mp.hosts[h].name,
                 mp.hosts[h].slots);
        weft_buf_append(&b, item, strlen(item));
    }
    weft_buf_append(&b, "", 1);
    return b.data;
}

void mp_spawn_request(int p, int conn, const char *data, size_t len)
{
    weft_pmi_spawn_req_t req;
    char                 msg[1024] = "", self[PATH_MAX];
    int                  rc, pid = -1, *codes = NULL;
    const char          *extra[8];
    int                  nextra = 0;
    weft_buf_t           reply  = {0};
    char                *hosts  = NULL;
    ssize_t              n;

    if (weft_pmi_spawn_unpack(data, len, &req) != 0) {
        snprintf(msg, sizeof(msg), "malformed spawn request");
        mp_send_to(p, WEFT_CTL_SPAWN_R, conn, WEFT_PMI_ERR_SPAWN, "\0malformed spawn request",
                   strlen(msg) + 2);
        return;
    }
    codes = calloc((size_t)req.nchildren, sizeof(int));
    n     = readlink("/proc/self/exe", self, sizeof(self) - 1);
    if (codes == NULL || n <= 0) {
        rc = WEFT_PMI_ERR_GENERIC;
        snprintf(msg, sizeof(msg), "cannot find mpiexec itself to start the spawned job");
    } else {
        self[n] = '\0';
        if (mp.launcher != NULL && !mp.slurm_boot) {
            extra[nextra++] = "-launcher-exec";
            extra[nextra++] = mp.launcher;
        }
        if (mp.iface != NULL) {
            extra[nextra++] = "-iface";
            extra[nextra++] = mp.iface;
        }
        if (mp.prepend) {
            extra[nextra++] = "-l";
        }
        extra[nextra] = NULL;
        hosts         = mp_host_list();
        rc = weft_pmi_spawn_start(self, &req, hosts, mp.universe, extra,
                                  weft_tunables.SPAWN_TIMEOUT * 1000, &pid, codes, msg,
                                  sizeof(msg));
        free(hosts);
    }
    if (pid > 0) {
        mp.agents = realloc(mp.agents, sizeof(*mp.agents) * (size_t)(mp.nagents + 1));
        if (mp.agents == NULL) {
            mp_die(1, "out of memory");
        }
        mp.agents[mp.nagents++] = (mp_agent_t){.pid = pid};
    }
    if (mp.verbose) {
        mp_msg("mpiexec: spawn of %d process(es) by proxy %d: %s%s", req.nchildren, p,
               rc == 0 ? "started" : "failed: ", rc == 0 ? "" : msg);
    }
    for (int k = 0; k < req.nchildren; k++) {
        char t[16];
        snprintf(t, sizeof(t), "%s%d", k ? "," : "", codes ? codes[k] : 1);
        weft_buf_append(&reply, t, strlen(t));
    }
    weft_buf_append(&reply, "", 1);
    weft_buf_append_str0(&reply, msg);
    mp_send_to(p, WEFT_CTL_SPAWN_R, conn, rc, reply.data, reply.len);
    weft_buf_free(&reply);
    free(codes);
    weft_pmi_spawn_req_free(&req);
}

/* Reap spawn agents that ended; a failed one ends this job only when asked. */
void mp_reap_agents(void)
{
    for (int a = 0; a < mp.nagents; a++) {
        mp_agent_t *ag = &mp.agents[a];
        int         status;

        if (ag->reaped || weft_bootstrap_wait(ag->pid, &status, 1) != 1) {
            continue;
        }
        ag->reaped = 1;
        if (mp.verbose) {
            mp_msg("mpiexec: spawned job (mpiexec pid %d) ended, wait status 0x%x", (int)ag->pid,
                   status);
        }
        if (mp.kill_on_child_failure && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
            mp_fail(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), SIGKILL,
                    "mpiexec: error: a spawned job (mpiexec pid %d) failed; "
                    "-kill-on-child-failure ends this job too",
                    (int)ag->pid);
        }
    }
}

int mp_agents_done(void)
{
    for (int a = 0; a < mp.nagents; a++) {
        if (!mp.agents[a].reaped) {
            return 0;
        }
    }
    return 1;
}

/* Pass a signal on to the spawned jobs' mpiexecs (they forward it). */
void mp_signal_agents(int sig)
{
    for (int a = 0; a < mp.nagents; a++) {
        if (!mp.agents[a].reaped) {
            kill(mp.agents[a].pid, sig == SIGKILL ? SIGTERM : sig);
        }
    }
}

/* ---- spawn (agent side: this mpiexec runs a spawned job) ---- */

void mp_agent_setup(void)
{
    const char *pp = getenv("WEFT_SPAWN_PREPUT");

    if (mp.spawn_fd < 0) {
        return;
    }
    weft_fd_set_cloexec(mp.spawn_fd, 1);
    mp.noexec = calloc((size_t)mp.np, sizeof(int));
    if (mp.noexec == NULL) {
        mp_die(1, "out of memory");
    }
    mp_add_env("PMI_SPAWNED", "1");
    if (pp != NULL) {
        mp_add_env("WEFT_PMI_PREPUT", pp);
        unsetenv("WEFT_SPAWN_PREPUT");
    }
}

static void agent_write(const char *line)
{
    if (mp.spawn_fd >= 0) {
        mp_write_all(mp.spawn_fd, line, strlen(line));
        close(mp.spawn_fd);
        mp.spawn_fd = -1;
    }
}

/* A rank started (a1 < 0: its exec failed with errno -a1). */
void mp_agent_started(int rank, int exec_errno)
{
    if (mp.spawn_fd < 0 || rank < 0 || rank >= mp.np) {
        return;
    }
    if (exec_errno != 0) {
        mp.noexec[rank] = exec_errno;
        if (mp.noexec_first < 0) {
            mp.noexec_first = rank;
        }
        return;
    }
    if (++mp.nstarted == mp.np && mp.noexec_first < 0 && !mp.failed) {
        agent_write("ok\n");
    }
}

/* At the end of a spawned job that never reported success: say why. Every
 * child is gone by now. */
void mp_agent_final(const char *why)
{
    weft_buf_t b = {0};
    char       t[600];

    if (mp.spawn_fd < 0) {
        return;
    }
    weft_buf_append(&b, "fail ", 5);
    for (int r = 0; r < mp.np; r++) {
        snprintf(t, sizeof(t), "%s%d", r ? "," : "",
                 mp.noexec && mp.noexec[r] ? 1 : (mp.ranks && mp.ranks[r].pid > 0 ? 0 : 1));
        weft_buf_append(&b, t, strlen(t));
    }
    if (mp.np == 0) {
        weft_buf_append(&b, "-", 1);
    }
    if (why != NULL) {
        snprintf(t, sizeof(t), " %s\n", why);
    } else if (mp.noexec_first >= 0) {
        snprintf(t, sizeof(t), " rank %d: cannot execute %.400s: %s\n", mp.noexec_first,
                 mp.prog_path, strerror(mp.noexec[mp.noexec_first]));
    } else {
        snprintf(t, sizeof(t), " the spawned job failed before all its processes started\n");
    }
    weft_buf_append(&b, t, strlen(t) + 1);
    agent_write(b.data);
    weft_buf_free(&b);
}
