/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMI client (pmi.h) over the shared wire codec. One connection, one request
 * in flight at a time: every query waits for its reply before returning.
 */
#include "pmi.h"
#include "pmi_pmix.h"
#include "pmi_shm.h"
#include "pmi_wire.h"
#include "util/tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* Keys are stored as "<key>-<rank>", so callers get 64 minus this many chars. */
#define PMI_KEY_SUFFIX_MAX 12
/* Raw bytes per KVS value in allgather (hex doubles them). */
#define PMI_AG_CHUNK 400

typedef struct {
    char *key;
    char *val;
} pmi_local_kv_t;

static struct {
    int             initialized;
    int             singleton;
    int             fd;
    int             wire; /* 1 or 2 */
    int             pmix; /* the PMIx backend (pmi_pmix.c) answers everything */
    unsigned        nfences; /* completed, to name the proxy's snapshot (pmi_shm.h) */
    int             rank;
    int             size;
    int             appnum;
    int             ag_seq; /* allgather calls so far: keeps their keys apart */
    char            kvsname[256];
    const char     *env_mapping; /* PMI_process_mapping from WEFT_PMI_JOB, or NULL */
    char            rbuf[2 * WEFT_PMI_WIRE_MAX];
    size_t          rlen;
    int             init_reply_due; /* PMI-1 version of the "init" reply, not read yet */
    pmi_local_kv_t *local; /* singleton KVS */
    int             nlocal;
} pmi = {.fd = -1};

static void pmi_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void pmi_error(const char *fmt, ...)
{
    char    line[512];
    int     n;
    va_list ap;

    n = snprintf(line, sizeof(line), "weft: pmi error (rank %d): ", pmi.rank);
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof(line) - (size_t)n - 1, fmt, ap);
    va_end(ap);
    n = (int)strlen(line);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing else to do */
    }
}

static int pmi_write_all(const char *buf, size_t len)
{
    while (len > 0) {
        ssize_t n = write(pmi.fd, buf, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            pmi_error("write to PMI server failed: %s", strerror(errno));
            return -1;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

static int pmi_send(const weft_pmi_msg_t *msg)
{
    char out[WEFT_PMI_WIRE_MAX];
    int  n = weft_pmi_msg_encode(msg, out, sizeof(out));

    if (n < 0) {
        pmi_error("cannot encode PMI '%s' (too long, or a value with spaces)", msg->cmd);
        return -1;
    }
    return pmi_write_all(out, (size_t)n);
}

/* Wait for one reply frame (in the connection's current wire) and decode it.
 * Blocks without spinning; a closed connection is an error. */
static int pmi_recv(weft_pmi_msg_t *msg, int wire, weft_pmi_msg_id_t expect)
{
    char   err[256];
    size_t flen;
    int    rc;

    if (pmi.init_reply_due) { /* replies come in order: the handshake's first */
        weft_pmi_msg_t init_r;
        int            version = pmi.init_reply_due, v;
        pmi.init_reply_due = 0;
        if (pmi_recv(&init_r, 1, weft_pmi_msg_reply(WEFT_PMI_MSG_INIT)) != 0) {
            return -1;
        }
        if (weft_pmi_msg_rc(&init_r) != 0) {
            pmi_error("PMI 'init' failed: rc=%d", weft_pmi_msg_rc(&init_r));
            return -1;
        }
        if (weft_pmi_msg_get_int(&init_r, "pmi_version", &v) == 0 && v != version) {
            pmi_error("the PMI server speaks PMI-%d, not PMI-%d (set WEFT_PMI_VERSION=%d)", v,
                      version, v);
            return -1;
        }
    }
    for (;;) {
        rc = weft_pmi_frame(pmi.rbuf, pmi.rlen, wire, &flen);
        if (rc < 0) {
            pmi_error("malformed data from the PMI server");
            return -1;
        }
        if (rc == 1) {
            break;
        }
        struct pollfd pfd = {.fd = pmi.fd, .events = POLLIN};
        if (poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            pmi_error("poll on the PMI connection failed: %s", strerror(errno));
            return -1;
        }
        ssize_t n = read(pmi.fd, pmi.rbuf + pmi.rlen, sizeof(pmi.rbuf) - pmi.rlen);
        if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
            continue;
        }
        if (n <= 0) {
            pmi_error("the PMI server closed the connection (launcher gone?)");
            return -1;
        }
        pmi.rlen += (size_t)n;
    }
    rc = weft_pmi_msg_decode(pmi.rbuf, flen, wire, WEFT_PMI_DIR_R, msg, err, sizeof(err));
    memmove(pmi.rbuf, pmi.rbuf + flen, pmi.rlen - flen);
    pmi.rlen -= flen;
    if (rc != 0) {
        pmi_error("%s", err);
        return -1;
    }
    if (expect != WEFT_PMI_MSG_NONE && msg->id != expect) {
        pmi_error("expected PMI reply '%s', got '%s'", weft_pmi_msg_name(expect), msg->cmd);
        return -1;
    }
    return 0;
}

/* Send q, wait for the reply the table names, fail on rc != 0 unless the
 * caller handles rc itself (check_rc == 0). */
static int pmi_call(const weft_pmi_msg_t *q, weft_pmi_msg_t *r, int check_rc)
{
    if (pmi_send(q) != 0 || pmi_recv(r, q->wire, weft_pmi_msg_reply(q->id)) != 0) {
        return -1;
    }
    if (check_rc && weft_pmi_msg_rc(r) != 0) {
        const char *why = weft_pmi_msg_get(r, q->wire == 2 ? "errmsg" : "msg");
        pmi_error("PMI '%s' failed: rc=%d%s%s", q->cmd, weft_pmi_msg_rc(r), why ? ": " : "",
                  why ? why : "");
        return -1;
    }
    return 0;
}

static int env_int(const char *name, int *value_p)
{
    const char *text = getenv(name);
    char       *end;
    long        v;

    if (text == NULL || *text == '\0') {
        return -1;
    }
    v = strtol(text, &end, 10);
    if (*end != '\0' || v < 0 || v > 1 << 30) {
        return -1;
    }
    *value_p = (int)v;
    return 0;
}

static int pmi_connect_port(const char *port)
{
    char             host[256];
    const char      *colon = strrchr(port, ':');
    struct addrinfo  hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    int              fd    = -1;

    if (colon == NULL || (size_t)(colon - port) >= sizeof(host)) {
        pmi_error("PMI_PORT '%s' is not host:port", port);
        return -1;
    }
    memcpy(host, port, (size_t)(colon - port));
    host[colon - port] = '\0';
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
        pmi_error("cannot resolve PMI_PORT '%s'", port);
        return -1;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
            int on = 1; /* a request is several small writes: no Nagle wait for the ACK */
            (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
            break;
        }
        if (fd >= 0) {
            close(fd);
        }
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        pmi_error("cannot connect to PMI_PORT '%s'", port);
    }
    return fd;
}

static int pmi_choose_version(void)
{
    const char *v = getenv("PMI_VERSION");

    switch (weft_tunables.PMI_VERSION) {
    case 1: return 1;
    case 2: return 2;
    default: break;
    }
    if (v != NULL && strcmp(v, "2") == 0) {
        return 2;
    }
    if (getenv("SLURM_JOB_ID") != NULL && getenv("PMI_FD") != NULL) {
        return 2;
    }
    return 1;
}

/* WEFT_PMI_JOB="INODE:APPNUM:KVSNAME:MAPPING", put in our environment by
 * weft-proxy with the answers to what we would ask before the first fence.
 * Used only if INODE is that of our PMI socket: a copy inherited from
 * another job names another. Returns 1 and the fields (mapping may be ""),
 * or 0. */
static int pmi_job_env(int *appnum, char *kvsname, size_t kvslen, const char **mapping)
{
    const char        *v = getenv("WEFT_PMI_JOB"), *kvs, *map;
    struct stat        st;
    unsigned long long ino;
    char              *end;

    if (v == NULL || pmi.fd < 0 || fstat(pmi.fd, &st) != 0 || st.st_ino == 0) {
        return 0;
    }
    ino = strtoull(v, &end, 10);
    if (*end != ':' || ino != (unsigned long long)st.st_ino) {
        return 0;
    }
    *appnum = (int)strtol(end + 1, &end, 10);
    kvs     = end + 1;
    map     = *end == ':' ? strchr(kvs, ':') : NULL;
    if (map == NULL || (size_t)(map - kvs) >= kvslen) {
        return 0;
    }
    snprintf(kvsname, kvslen, "%.*s", (int)(map - kvs), kvs);
    *mapping = map + 1;
    return 1;
}

/* Handshake: "init" in wire 1 for either version, then the version's own setup. */
static int pmi_handshake(int version)
{
    weft_pmi_msg_t q, r;
    int            v;

    weft_pmi_msg_init(&q, WEFT_PMI_MSG_INIT);
    weft_pmi_msg_addf(&q, "pmi_version", "%d", version);
    weft_pmi_msg_addf(&q, "pmi_subversion", "%d", version == 2 ? 0 : 1);
    if (version == 1 && getenv("PMI_ID") == NULL && env_int("PMI_RANK", &pmi.rank) == 0 &&
        env_int("PMI_SIZE", &pmi.size) == 0 &&
        pmi_job_env(&pmi.appnum, pmi.kvsname, sizeof(pmi.kvsname), &pmi.env_mapping)) {
        /* Started by weft-proxy, which gave us every answer we would wait
         * for: do not wait for it now. While it is still starting the
         * node's other ranks, that reply would come only after the last
         * of them (7 ms of a 16-rank start on 2 cores); the next call
         * reads it first (pmi_recv). */
        if (pmi_send(&q) != 0) {
            return -1;
        }
        pmi.init_reply_due = version;
        pmi.wire           = version;
        return 0;
    }
    if (pmi_call(&q, &r, 1) != 0) {
        return -1;
    }
    if (weft_pmi_msg_get_int(&r, "pmi_version", &v) == 0 && v != version) {
        pmi_error("the PMI server speaks PMI-%d, not PMI-%d (set WEFT_PMI_VERSION=%d)", v, version,
                  v);
        return -1;
    }
    pmi.wire = version;

    if (version == 1) {
        if (getenv("PMI_ID") != NULL && getenv("PMI_RANK") == NULL) {
            /* PMI_PORT-style start: the server tells rank and size after initack. */
            weft_pmi_msg_init(&q, WEFT_PMI_MSG_INITACK);
            weft_pmi_msg_add(&q, "pmiid", getenv("PMI_ID"));
            if (pmi_call(&q, &r, 1) != 0) {
                return -1;
            }
            for (int i = 0; i < 3; i++) {
                if (pmi_recv(&r, 1, WEFT_PMI_MSG_SET_R) != 0) {
                    return -1;
                }
                weft_pmi_msg_get_int(&r, "size", &pmi.size);
                weft_pmi_msg_get_int(&r, "rank", &pmi.rank);
            }
        } else if (env_int("PMI_RANK", &pmi.rank) != 0 || env_int("PMI_SIZE", &pmi.size) != 0) {
            pmi_error("PMI_FD is set but PMI_RANK/PMI_SIZE are missing or invalid");
            return -1;
        }
        if (pmi_job_env(&pmi.appnum, pmi.kvsname, sizeof(pmi.kvsname), &pmi.env_mapping)) {
            /* Started by weft-proxy: two round trips fewer before the first fence. */
            return 0;
        }
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_KVSNAME);
        if (pmi_call(&q, &r, 1) != 0) {
            return -1;
        }
        snprintf(pmi.kvsname, sizeof(pmi.kvsname), "%s", weft_pmi_msg_get(&r, "kvsname"));
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_APPNUM);
        if (pmi_call(&q, &r, 1) != 0) {
            return -1;
        }
        weft_pmi_msg_get_int(&r, "appnum", &pmi.appnum);
        return 0;
    }

    weft_pmi_msg_init(&q, WEFT_PMI_MSG_FULLINIT);
    if (env_int("PMI_RANK", &v) == 0 || env_int("SLURM_PROCID", &v) == 0) {
        weft_pmi_msg_addf(&q, "pmirank", "%d", v);
    } else if (getenv("PMI_ID") != NULL) {
        weft_pmi_msg_add(&q, "pmiid", getenv("PMI_ID"));
    } else {
        pmi_error("PMI-2: neither PMI_RANK nor PMI_ID is set");
        return -1;
    }
    if (getenv("PMI_JOBID") != NULL) {
        /* Slurm's PMI-2 server refuses a fullinit without it. */
        weft_pmi_msg_add(&q, "pmijobid", getenv("PMI_JOBID"));
    }
    weft_pmi_msg_add(&q, "threaded", "FALSE");
    if (pmi_call(&q, &r, 1) != 0) {
        return -1;
    }
    if (weft_pmi_msg_get_int(&r, "rank", &pmi.rank) != 0 ||
        weft_pmi_msg_get_int(&r, "size", &pmi.size) != 0) {
        pmi_error("PMI-2 fullinit reply lacks rank/size");
        return -1;
    }
    weft_pmi_msg_get_int(&r, "appnum", &pmi.appnum);
    weft_pmi_msg_init(&q, WEFT_PMI_MSG_JOBID);
    if (pmi_call(&q, &r, 1) != 0) {
        return -1;
    }
    snprintf(pmi.kvsname, sizeof(pmi.kvsname), "%s",
             weft_pmi_msg_get(&r, "jobid") ? weft_pmi_msg_get(&r, "jobid") : "");
    return 0;
}

/* A job attribute the server may know (PMI_process_mapping, universeSize).
 * Returns 1 found, 0 not found, -1 on a transport error. */
static int pmi_job_attr(const char *key, char *value, size_t len)
{
    weft_pmi_msg_t q, r;
    const char    *v;

    if (strcmp(key, "PMI_process_mapping") == 0 && pmi.env_mapping != NULL &&
        *pmi.env_mapping != '\0') {
        snprintf(value, len, "%s", pmi.env_mapping); /* weft-proxy's answer, given at start */
        return 1;
    }
    if (pmi.wire == 2) {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_JOBATTR);
        weft_pmi_msg_add(&q, "key", key);
        if (pmi_call(&q, &r, 0) != 0) {
            return -1;
        }
        v = weft_pmi_msg_get(&r, "found");
        if (weft_pmi_msg_rc(&r) != 0 || v == NULL || strcmp(v, "TRUE") != 0) {
            return 0;
        }
    } else {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_GET);
        weft_pmi_msg_add(&q, "kvsname", pmi.kvsname);
        weft_pmi_msg_add(&q, "key", key);
        if (pmi_call(&q, &r, 0) != 0) {
            return -1;
        }
        if (weft_pmi_msg_rc(&r) != 0) {
            return 0;
        }
    }
    v = weft_pmi_msg_get(&r, "value");
    if (v == NULL) {
        return 0;
    }
    snprintf(value, len, "%s", v);
    return 1;
}

/* "(vector,(start,nodes,ppn),...)": the vector repeats until every rank has
 * a node. Fills node_of_rank (raw node ids). Returns 0 or -1 if malformed. */
static int pmi_parse_mapping(const char *text, int size, int *node_of_rank)
{
    int blocks[64][3];
    int nblocks = 0, rank = 0;

    while (*text == ' ') {
        text++;
    }
    if (strncmp(text, "(vector", 7) != 0) {
        return -1;
    }
    text += 7;
    while (*text == ',') {
        int a, b, c, n = 0;
        if (sscanf(text, ",(%d,%d,%d)%n", &a, &b, &c, &n) != 3 || n == 0 || nblocks == 64 ||
            a < 0 || b <= 0 || c <= 0) {
            return -1;
        }
        blocks[nblocks][0] = a;
        blocks[nblocks][1] = b;
        blocks[nblocks][2] = c;
        nblocks++;
        text += n;
    }
    if (*text != ')' || nblocks == 0) {
        return -1;
    }
    while (rank < size) {
        for (int i = 0; i < nblocks && rank < size; i++) {
            for (int node = blocks[i][0]; node < blocks[i][0] + blocks[i][1] && rank < size;
                 node++) {
                for (int k = 0; k < blocks[i][2] && rank < size; k++) {
                    node_of_rank[rank++] = node;
                }
            }
        }
    }
    return 0;
}

/* Node layout from host names: one put/fence/get round. */
static int pmi_hosts_layout(int *node_of_rank)
{
    char   host[256], other[WEFT_PMI_MAX_VAL];
    char **names;
    int    rc = -1;

    if (gethostname(host, sizeof(host)) != 0) {
        snprintf(host, sizeof(host), "unknown");
    }
    host[sizeof(host) - 1] = '\0';
    if (weft_pmi_put("weft-host", host) != 0 || weft_pmi_fence() != 0) {
        return -1;
    }
    names = calloc((size_t)pmi.size, sizeof(char *));
    if (names == NULL) {
        return -1;
    }
    for (int r = 0; r < pmi.size; r++) {
        if (weft_pmi_get(r, "weft-host", other, sizeof(other)) != 0) {
            goto out;
        }
        names[r]        = strdup(other);
        node_of_rank[r] = r;
        for (int s = 0; s < r; s++) {
            if (names[r] && names[s] && strcmp(names[r], names[s]) == 0) {
                node_of_rank[r] = node_of_rank[s];
                break;
            }
        }
    }
    rc = 0;
out:
    for (int r = 0; r < pmi.size; r++) {
        free(names[r]);
    }
    free(names);
    return rc;
}

static int pmi_fill_layout(weft_pmi_info_t *info)
{
    char mapping[WEFT_PMI_MAX_VAL];
    int *raw, *renum;
    int  found;

    info->node_of_rank = calloc((size_t)info->size, sizeof(int));
    info->local_ranks  = calloc((size_t)info->size, sizeof(int));
    raw                = calloc((size_t)info->size, sizeof(int));
    renum              = calloc((size_t)info->size + 1, sizeof(int));
    if (!info->node_of_rank || !info->local_ranks || !raw || !renum) {
        pmi_error("out of memory");
        goto err_free;
    }
    if (info->is_singleton) {
        raw[0] = 0;
    } else if (pmi.pmix) {
        if (weft_pmix_node_ids(info->size, raw) != 0 && pmi_hosts_layout(raw) != 0) {
            goto err_free;
        }
    } else {
        found = pmi_job_attr("PMI_process_mapping", mapping, sizeof(mapping));
        if (found < 0) {
            goto err_free;
        }
        /* Every rank sees the same answer, so all take the same branch. */
        if (found == 0 || pmi_parse_mapping(mapping, info->size, raw) != 0) {
            if (pmi_hosts_layout(raw) != 0) {
                goto err_free;
            }
        }
    }
    /* Renumber nodes by their lowest rank. Raw ids are < size for host
     * layouts; mapping ids may be anything, so compare values. */
    info->node_count = 0;
    for (int r = 0; r < info->size; r++) {
        int id = -1;
        for (int s = 0; s < r; s++) {
            if (raw[s] == raw[r]) {
                id = info->node_of_rank[s];
                break;
            }
        }
        info->node_of_rank[r] = id >= 0 ? id : info->node_count++;
    }
    info->node_id    = info->node_of_rank[info->rank];
    info->local_size = 0;
    for (int r = 0; r < info->size; r++) {
        if (info->node_of_rank[r] == info->node_id) {
            if (r == info->rank) {
                info->local_rank = info->local_size;
            }
            info->local_ranks[info->local_size++] = r;
        }
    }
    free(raw);
    free(renum);
    return 0;

err_free:
    free(info->node_of_rank);
    free(info->local_ranks);
    info->node_of_rank = info->local_ranks = NULL;
    free(raw);
    free(renum);
    return -1;
}

int weft_pmi_init(weft_pmi_info_t *info)
{
    const char *fdtext = getenv("PMI_FD");
    const char *port   = getenv("PMI_PORT");
    int         version;

    memset(info, 0, sizeof(*info));
    if (pmi.initialized) {
        pmi_error("weft_pmi_init called twice");
        return -1;
    }
    pmi.rank = 0;
    pmi.size = 1;
    if (weft_tunables.PMI_VERSION == 3 ||
        (weft_tunables.PMI_VERSION == 0 && weft_pmix_offered())) {
        if (weft_pmix_init(&pmi.rank, &pmi.size, &pmi.appnum, pmi.kvsname,
                           sizeof(pmi.kvsname)) != 0) {
            return -1;
        }
        pmi.pmix = 1;
        version  = 3;
    } else if ((fdtext == NULL || *fdtext == '\0') && (port == NULL || *port == '\0')) {
        pmi.singleton = 1;
        snprintf(pmi.kvsname, sizeof(pmi.kvsname), "singleton_%d", (int)getpid());
        version = 0;
    } else {
        version = pmi_choose_version();
        if (fdtext != NULL && *fdtext != '\0') {
            if (env_int("PMI_FD", &pmi.fd) != 0 || fcntl(pmi.fd, F_GETFD) < 0) {
                pmi_error("PMI_FD='%s' is not an open file descriptor", fdtext);
                return -1;
            }
        } else if ((pmi.fd = pmi_connect_port(port)) < 0) {
            return -1;
        }
        /* Children the application starts must not talk on our connection. */
        fcntl(pmi.fd, F_SETFD, fcntl(pmi.fd, F_GETFD) | FD_CLOEXEC);
        if (pmi_handshake(version) != 0) {
            close(pmi.fd);
            pmi.fd = -1;
            return -1;
        }
        if (pmi.rank < 0 || pmi.size <= 0 || pmi.rank >= pmi.size) {
            pmi_error("invalid rank %d / size %d from the PMI server", pmi.rank, pmi.size);
            return -1;
        }
    }
    pmi.initialized    = 1;
    info->rank         = pmi.rank;
    info->size         = pmi.size;
    info->appnum       = pmi.appnum;
    info->is_singleton = pmi.singleton;
    info->pmi_version  = version;
    snprintf(info->kvsname, sizeof(info->kvsname), "%s", pmi.kvsname);
    if (pmi_fill_layout(info) != 0) {
        return -1;
    }
    return 0;
}

static int pmi_wire_key(char *out, size_t len, const char *key, int rank)
{
    int n = snprintf(out, len, "%s-%d", key, rank);

    if (n < 0 || (size_t)n >= len || n >= WEFT_PMI_MAX_KEY) {
        pmi_error("PMI key '%s' is too long (max %d chars)", key,
                  WEFT_PMI_MAX_KEY - PMI_KEY_SUFFIX_MAX);
        return -1;
    }
    return 0;
}

int weft_pmi_put(const char *key, const char *value)
{
    char           wkey[WEFT_PMI_MAX_KEY + 16];
    weft_pmi_msg_t q, r;

    if (!pmi.initialized && !pmi.singleton) {
        pmi_error("weft_pmi_put before weft_pmi_init");
        return -1;
    }
    if (pmi_wire_key(wkey, sizeof(wkey), key, pmi.rank) != 0) {
        return -1;
    }
    if (strlen(value) >= WEFT_PMI_MAX_VAL || strpbrk(value, " \n;") != NULL) {
        pmi_error("PMI value for '%s' is too long or contains space, newline or ';'", key);
        return -1;
    }
    if (pmi.singleton) {
        for (int i = 0; i < pmi.nlocal; i++) {
            if (strcmp(pmi.local[i].key, wkey) == 0) {
                free(pmi.local[i].val);
                pmi.local[i].val = strdup(value);
                return pmi.local[i].val ? 0 : -1;
            }
        }
        pmi_local_kv_t *grown = realloc(pmi.local, sizeof(*grown) * (size_t)(pmi.nlocal + 1));
        if (grown == NULL) {
            return -1;
        }
        pmi.local                  = grown;
        pmi.local[pmi.nlocal].key  = strdup(wkey);
        pmi.local[pmi.nlocal].val  = strdup(value);
        pmi.nlocal++;
        return 0;
    }
    if (pmi.pmix) {
        return weft_pmix_put(wkey, value);
    }
    if (pmi.wire == 2) {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_KVS_PUT);
    } else {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_PUT);
        weft_pmi_msg_add(&q, "kvsname", pmi.kvsname);
    }
    weft_pmi_msg_add(&q, "key", wkey);
    weft_pmi_msg_add(&q, "value", value);
    return pmi_call(&q, &r, 1);
}

int weft_pmi_fence(void)
{
    weft_pmi_msg_t q, r;

    if (pmi.singleton) {
        return 0;
    }
    if (pmi.pmix) {
        return weft_pmix_fence();
    }
    weft_pmi_msg_init(&q, pmi.wire == 2 ? WEFT_PMI_MSG_KVS_FENCE : WEFT_PMI_MSG_BARRIER);
    if (pmi_call(&q, &r, 1) != 0) {
        return -1;
    }
    weft_pmi_shm_attach(++pmi.nfences);
    return 0;
}

int weft_pmi_get(int src_rank, const char *key, char *value, size_t len)
{
    char           wkey[WEFT_PMI_MAX_KEY + 16];
    weft_pmi_msg_t q, r;
    const char    *v;

    if (src_rank < 0 || src_rank >= pmi.size) {
        pmi_error("weft_pmi_get: rank %d out of range", src_rank);
        return -1;
    }
    if (pmi_wire_key(wkey, sizeof(wkey), key, src_rank) != 0) {
        return -1;
    }
    if (pmi.singleton) {
        for (int i = 0; i < pmi.nlocal; i++) {
            if (strcmp(pmi.local[i].key, wkey) == 0) {
                snprintf(value, len, "%s", pmi.local[i].val);
                return 0;
            }
        }
        pmi_error("key '%s' of rank %d not found", key, src_rank);
        return -1;
    }
    if (pmi.pmix) {
        if (weft_pmix_get(src_rank, wkey, value, len) != 0) {
            pmi_error("key '%s' of rank %d not found (put before the last fence?)", key,
                      src_rank);
            return -1;
        }
        return 0;
    }
    if ((v = weft_pmi_shm_lookup(wkey)) != NULL) {
        if (strlen(v) >= len) {
            pmi_error("value of key '%s' does not fit the caller's %zu bytes", key, len);
            return -1;
        }
        memcpy(value, v, strlen(v) + 1);
        return 0;
    }
    if (pmi.wire == 2) {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_KVS_GET);
        weft_pmi_msg_add(&q, "jobid", pmi.kvsname);
        weft_pmi_msg_addf(&q, "srcid", "%d", src_rank);
    } else {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_GET);
        weft_pmi_msg_add(&q, "kvsname", pmi.kvsname);
    }
    weft_pmi_msg_add(&q, "key", wkey);
    if (pmi_call(&q, &r, 0) != 0) {
        return -1;
    }
    v = weft_pmi_msg_get(&r, "value");
    if (weft_pmi_msg_rc(&r) != 0 || v == NULL ||
        (pmi.wire == 2 && weft_pmi_msg_get(&r, "found") != NULL &&
         strcmp(weft_pmi_msg_get(&r, "found"), "TRUE") != 0)) {
        pmi_error("key '%s' of rank %d not found (put before the last fence?)", key, src_rank);
        return -1;
    }
    if (strlen(v) >= len) {
        pmi_error("value of key '%s' does not fit the caller's %zu bytes", key, len);
        return -1;
    }
    memcpy(value, v, strlen(v) + 1);
    return 0;
}

void weft_pmi_abort(int exitcode, const char *msg)
{
    weft_pmi_msg_t q;
    char           text[512];

    snprintf(text, sizeof(text), "%s", msg ? msg : "");
    for (char *p = text; *p; p++) {
        if (*p == '\n' || *p == ';') {
            *p = ' ';
        }
    }
    if (pmi.pmix) {
        weft_pmix_abort(exitcode, text);
    } else if (pmi.fd >= 0) {
        weft_pmi_msg_init(&q, pmi.wire == 2 ? WEFT_PMI_MSG_ABORT2 : WEFT_PMI_MSG_ABORT);
        if (pmi.wire == 2) {
            weft_pmi_msg_add(&q, "isworld", "TRUE");
        }
        weft_pmi_msg_addf(&q, "exitcode", "%d", exitcode);
        weft_pmi_msg_add(&q, "message", text);
        if (pmi_send(&q) == 0) {
            /* Give the launcher a moment to kill the job with our code and
             * message; if it does not, exit on our own. */
            struct pollfd pfd = {.fd = pmi.fd, .events = POLLIN};
            poll(&pfd, 1, 2000);
        }
    } else {
        char line[600];
        int  n = snprintf(line, sizeof(line), "weft: rank %d aborted with code %d: %s\n", pmi.rank,
                          exitcode, text);
        if (n > 0 && write(STDERR_FILENO, line, (size_t)n) < 0) {
            /* ignore */
        }
    }
    _exit(exitcode);
}

int weft_pmi_finalize(void)
{
    weft_pmi_msg_t q, r;
    int            rc = 0;

    if (!pmi.initialized) {
        return 0;
    }
    if (pmi.pmix) {
        rc       = weft_pmix_finalize();
        pmi.pmix = 0;
    } else if (pmi.fd >= 0) {
        weft_pmi_msg_init(&q, pmi.wire == 2 ? WEFT_PMI_MSG_FINALIZE2 : WEFT_PMI_MSG_FINALIZE);
        rc = pmi_call(&q, &r, 1);
        close(pmi.fd);
        pmi.fd = -1;
    }
    weft_pmi_shm_detach();
    pmi.nfences = 0;
    for (int i = 0; i < pmi.nlocal; i++) {
        free(pmi.local[i].key);
        free(pmi.local[i].val);
    }
    free(pmi.local);
    pmi.local       = NULL;
    pmi.nlocal      = 0;
    pmi.env_mapping = NULL; /* a restart's handshake checks WEFT_PMI_JOB again */
    pmi.initialized = 0;
    return rc;
}

void weft_pmi_encode(const void *data, size_t len, char *out)
{
    static const char    hex[] = "0123456789abcdef";
    const unsigned char *p     = data;

    for (size_t i = 0; i < len; i++) {
        out[2 * i]     = hex[p[i] >> 4];
        out[2 * i + 1] = hex[p[i] & 15];
    }
    out[2 * len] = '\0';
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

int weft_pmi_decode(const char *text, void *out, size_t len)
{
    unsigned char *p = out;

    if (strlen(text) != 2 * len) {
        return -1;
    }
    for (size_t i = 0; i < len; i++) {
        int hi = hexval(text[2 * i]), lo = hexval(text[2 * i + 1]);
        if (hi < 0 || lo < 0) {
            return -1;
        }
        p[i] = (unsigned char)(hi << 4 | lo);
    }
    return 0;
}

int weft_pmi_allgather(const void *mine, size_t len, void *all)
{
    size_t nchunks = len == 0 ? 0 : (len + PMI_AG_CHUNK - 1) / PMI_AG_CHUNK;
    char   key[WEFT_PMI_MAX_KEY], text[2 * PMI_AG_CHUNK + 1];
    int    seq     = pmi.ag_seq++;

    for (size_t c = 0; c < nchunks; c++) {
        size_t off = c * PMI_AG_CHUNK, n = len - off < PMI_AG_CHUNK ? len - off : PMI_AG_CHUNK;
        snprintf(key, sizeof(key), "ag%d.%zu", seq, c);
        weft_pmi_encode((const char *)mine + off, n, text);
        if (weft_pmi_put(key, text) != 0) {
            return -1;
        }
    }
    if (weft_pmi_fence() != 0) {
        return -1;
    }
    for (int r = 0; r < pmi.size; r++) {
        for (size_t c = 0; c < nchunks; c++) {
            size_t off = c * PMI_AG_CHUNK, n = len - off < PMI_AG_CHUNK ? len - off : PMI_AG_CHUNK;
            char  *dst = (char *)all + (size_t)r * len + off;
            if (r == pmi.rank) {
                memcpy(dst, (const char *)mine + off, n);
                continue;
            }
            snprintf(key, sizeof(key), "ag%d.%zu", seq, c);
            if (weft_pmi_get(r, key, text, sizeof(text)) != 0 ||
                weft_pmi_decode(text, dst, n) != 0) {
                pmi_error("allgather: bad data from rank %d", r);
                return -1;
            }
        }
    }
    return 0;
}

int weft_pmi_universe_size(void)
{
    weft_pmi_msg_t q, r;
    char           text[64];
    int            v;

    if (pmi.pmix) {
        v = weft_pmix_universe_size();
        return v > 0 ? v : pmi.size;
    }
    if (pmi.singleton || pmi.fd < 0) {
        return pmi.size;
    }
    if (pmi.wire == 2) {
        if (pmi_job_attr("universeSize", text, sizeof(text)) == 1 && atoi(text) > 0) {
            return atoi(text);
        }
        return pmi.size;
    }
    weft_pmi_msg_init(&q, WEFT_PMI_MSG_UNIVERSE);
    if (pmi_call(&q, &r, 0) == 0 && weft_pmi_msg_rc(&r) == 0 &&
        weft_pmi_msg_get_int(&r, "size", &v) == 0 && v > 0) {
        return v;
    }
    return pmi.size;
}

/* ---- for pmi_dynproc.c (pmi_client_private.h) ---- */

int weft_pmi_client_wire(void)
{
    if (pmi.pmix) {
        return 3;
    }
    return (pmi.singleton || pmi.fd < 0) ? 0 : pmi.wire;
}

const char *weft_pmi_client_kvsname(void)
{
    return pmi.kvsname;
}

int weft_pmi_client_send(const weft_pmi_msg_t *q)
{
    return pmi_send(q);
}

int weft_pmi_client_call(const weft_pmi_msg_t *q, weft_pmi_msg_t *r)
{
    return pmi_call(q, r, 0);
}
