/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "pmi_server.h"

#include "pmi/pmi.h"
#include "pmi/pmi_shm.h"
#include "pmi/pmi_wire.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

int weft_pmi_server_init(weft_pmi_server_t *srv, int nconns)
{
    memset(srv, 0, sizeof(*srv));
    srv->nconns = nconns;
    srv->conns  = calloc((size_t)nconns, sizeof(*srv->conns));
    if (srv->conns == NULL || weft_kvs_init(&srv->kvs) != 0) {
        return -1;
    }
    for (int i = 0; i < nconns; i++) {
        srv->conns[i].fd = -1;
    }
    return 0;
}

static void srv_shm_name(const weft_pmi_server_t *srv, unsigned fence, char *name, size_t len);

void weft_pmi_server_fini(weft_pmi_server_t *srv)
{
    for (int i = 0; i < srv->nconns; i++) {
        if (srv->conns[i].fd >= 0) {
            close(srv->conns[i].fd);
        }
        weft_buf_free(&srv->conns[i].in);
        weft_buf_free(&srv->conns[i].out);
    }
    free(srv->conns);
    if (srv->shm_prefix != NULL && srv->shm_fence > 0) {
        char name[256];
        srv_shm_name(srv, srv->shm_fence, name, sizeof(name));
        shm_unlink(name);
    }
    weft_buf_free(&srv->pending);
    weft_kvs_fini(&srv->kvs);
}

void weft_pmi_server_flush(weft_pmi_server_t *srv, int i)
{
    weft_pmi_sconn_t *c = &srv->conns[i];

    while (c->out.len > 0 && c->fd >= 0) {
        ssize_t n = send(c->fd, c->out.data, c->out.len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
                c->out.len = 0; /* peer gone: drop */
            }
            return;
        }
        weft_buf_consume(&c->out, (size_t)n);
    }
}

static void srv_error(weft_pmi_server_t *srv, int rank, const char *what)
{
    if (srv->on_error != NULL) {
        srv->on_error(srv->ctx, rank, what);
    }
}

static void srv_reply(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *msg)
{
    char out[WEFT_PMI_WIRE_MAX];
    int  n = weft_pmi_msg_encode(msg, out, sizeof(out));

    if (n < 0) {
        srv_error(srv, srv->conns[i].rank, "PMI reply too large to encode");
        return;
    }
    weft_buf_append(&srv->conns[i].out, out, (size_t)n);
    weft_pmi_server_flush(srv, i);
}

static void reply_simple(weft_pmi_server_t *srv, int i, weft_pmi_msg_id_t id)
{
    weft_pmi_msg_t r;

    weft_pmi_msg_init(&r, id);
    weft_pmi_msg_add(&r, "rc", "0");
    srv_reply(srv, i, &r);
}

static void reply_error(weft_pmi_server_t *srv, int i, weft_pmi_msg_id_t id, const char *cmd,
                        const char *why)
{
    weft_pmi_msg_t r;
    char           word[256];
    int            wire = srv->conns[i].wire ? srv->conns[i].wire : 1;

    if (id != WEFT_PMI_MSG_NONE) {
        weft_pmi_msg_init(&r, id);
    } else {
        char name[160];
        snprintf(name, sizeof(name), wire == 2 ? "%s-response" : "%s_result", cmd);
        weft_pmi_msg_init_raw(&r, wire, name);
    }
    weft_pmi_msg_add(&r, "rc", "1");
    /* PMI-1 values cannot hold spaces. */
    snprintf(word, sizeof(word), "%s", why);
    for (char *p = word; wire == 1 && *p; p++) {
        if (*p == ' ') {
            *p = '_';
        }
    }
    weft_pmi_msg_add(&r, wire == 2 ? "errmsg" : "msg", word);
    srv_reply(srv, i, &r);
}

static void srv_put(weft_pmi_server_t *srv, const char *key, const char *val)
{
    weft_buf_append_str0(&srv->pending, key);
    weft_buf_append_str0(&srv->pending, val);
}

static void srv_enter_fence(weft_pmi_server_t *srv, int i)
{
    if (srv->conns[i].in_fence) {
        return;
    }
    srv->conns[i].in_fence = 1;
    if (++srv->nfence == srv->nconns && srv->on_fence != NULL) {
        srv->on_fence(srv->ctx, srv->pending.data ? srv->pending.data : "", srv->pending.len);
        srv->pending.len = 0;
    }
}

typedef struct {
    const char **keys, **vals;
    size_t       n;
} srv_snap_t;

static void snap_add(void *arg, const char *key, const char *val)
{
    srv_snap_t *s = arg;
    s->keys[s->n] = key;
    s->vals[s->n] = val;
    s->n++;
}

static void srv_shm_name(const weft_pmi_server_t *srv, unsigned fence, char *name, size_t len)
{
    snprintf(name, len, "%s.%u", srv->shm_prefix, fence);
}

/* Replace the previous fence's snapshot by this one's. A failure only costs
 * speed: ranks then ask over the socket. */
static void srv_write_snapshot(weft_pmi_server_t *srv)
{
    char       name[256];
    srv_snap_t s = {0};

    if (srv->shm_prefix == NULL) {
        return;
    }
    if (srv->shm_fence > 0) {
        srv_shm_name(srv, srv->shm_fence, name, sizeof(name));
        shm_unlink(name);
    }
    srv->shm_fence++;
    s.keys = malloc(sizeof(char *) * (srv->kvs.count + 1));
    s.vals = malloc(sizeof(char *) * (srv->kvs.count + 1));
    if (s.keys != NULL && s.vals != NULL) {
        weft_kvs_each(&srv->kvs, snap_add, &s);
        srv_shm_name(srv, srv->shm_fence, name, sizeof(name));
        if (weft_pmi_shm_write(name, srv->shm_fence, s.n, s.keys, s.vals) != 0 &&
            srv->on_error != NULL) {
            srv->on_error(srv->ctx, -1, "cannot write the shared-memory PMI snapshot");
        }
    }
    free(s.keys);
    free(s.vals);
}

void weft_pmi_server_fence_done(weft_pmi_server_t *srv, const char *puts, size_t len)
{
    const char *p = puts, *end = puts + len;

    while (p < end) {
        const char *key = p;
        const char *val = key + strnlen(key, (size_t)(end - key)) + 1;
        if (val >= end) {
            break;
        }
        weft_kvs_put(&srv->kvs, key, val);
        p = val + strnlen(val, (size_t)(end - val)) + 1;
    }
    /* Before the ranks are released: they look for it when the fence returns. */
    srv_write_snapshot(srv);
    srv->nfence = 0;
    for (int i = 0; i < srv->nconns; i++) {
        weft_pmi_sconn_t *c = &srv->conns[i];
        if (!c->in_fence) {
            continue;
        }
        c->in_fence = 0;
        reply_simple(srv, i, c->wire == 2 ? WEFT_PMI_MSG_KVS_FENCE_R : WEFT_PMI_MSG_BARRIER_R);
    }
}

static const char *job_attr(weft_pmi_server_t *srv, const char *key, char *tmp, size_t len)
{
    if (strcmp(key, "PMI_process_mapping") == 0) {
        return srv->mapping && srv->mapping[0] ? srv->mapping : NULL;
    }
    if (strcmp(key, "universeSize") == 0) {
        snprintf(tmp, len, "%d", srv->universe > 0 ? srv->universe : srv->size);
        return tmp;
    }
    return NULL;
}

static void handle_v1(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *q)
{
    weft_pmi_sconn_t *c = &srv->conns[i];
    weft_pmi_msg_t    r;
    const char       *v;
    char              tmp[64];
    int               code;

    switch (q->id) {
    case WEFT_PMI_MSG_MAXES:
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_MAXES_R);
        weft_pmi_msg_add(&r, "rc", "0");
        weft_pmi_msg_addf(&r, "kvsname_max", "%d", 256);
        weft_pmi_msg_addf(&r, "keylen_max", "%d", WEFT_PMI_MAX_KEY);
        weft_pmi_msg_addf(&r, "vallen_max", "%d", WEFT_PMI_MAX_VAL);
        break;
    case WEFT_PMI_MSG_APPNUM:
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_APPNUM_R);
        weft_pmi_msg_add(&r, "rc", "0");
        weft_pmi_msg_add(&r, "appnum", "0");
        break;
    case WEFT_PMI_MSG_KVSNAME:
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_KVSNAME_R);
        weft_pmi_msg_add(&r, "rc", "0");
        weft_pmi_msg_add(&r, "kvsname", srv->kvsname);
        break;
    case WEFT_PMI_MSG_UNIVERSE:
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_UNIVERSE_R);
        weft_pmi_msg_add(&r, "rc", "0");
        weft_pmi_msg_addf(&r, "size", "%d", srv->universe > 0 ? srv->universe : srv->size);
        break;
    case WEFT_PMI_MSG_PUT:
        srv_put(srv, weft_pmi_msg_get(q, "key"), weft_pmi_msg_get(q, "value"));
        reply_simple(srv, i, WEFT_PMI_MSG_PUT_R);
        return;
    case WEFT_PMI_MSG_GET:
        v = weft_kvs_get(&srv->kvs, weft_pmi_msg_get(q, "key"));
        if (v == NULL) {
            v = job_attr(srv, weft_pmi_msg_get(q, "key"), tmp, sizeof(tmp));
        }
        if (v == NULL) {
            weft_pmi_msg_init(&r, WEFT_PMI_MSG_GET_R);
            weft_pmi_msg_add(&r, "rc", "1");
            weft_pmi_msg_add(&r, "msg", "key_not_found");
            weft_pmi_msg_add(&r, "found", "false");
            break;
        }
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_GET_R);
        weft_pmi_msg_add(&r, "rc", "0");
        weft_pmi_msg_add(&r, "value", v);
        break;
    case WEFT_PMI_MSG_BARRIER:
        srv_enter_fence(srv, i);
        return;
    case WEFT_PMI_MSG_ABORT:
        c->aborted = 1;
        if (weft_pmi_msg_get_int(q, "exitcode", &code) != 0) {
            code = 1;
        }
        if (srv->on_abort != NULL) {
            v = weft_pmi_msg_get(q, "message");
            srv->on_abort(srv->ctx, c->rank, code, v ? v : "");
        }
        return;
    case WEFT_PMI_MSG_FINALIZE:
        c->finalized = 1;
        reply_simple(srv, i, WEFT_PMI_MSG_FINALIZE_R);
        return;
    default:
        snprintf(tmp, sizeof(tmp), "unsupported PMI-1 command '%.32s'", q->cmd);
        srv_error(srv, c->rank, tmp);
        reply_error(srv, i, weft_pmi_msg_reply(q->id), q->cmd, "unsupported command");
        return;
    }
    srv_reply(srv, i, &r);
}

static void handle_v2(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *q)
{
    weft_pmi_sconn_t *c = &srv->conns[i];
    weft_pmi_msg_t    r;
    const char       *v;
    char              tmp[160];
    int               n;

    switch (q->id) {
    case WEFT_PMI_MSG_FULLINIT:
        if (weft_pmi_msg_get_int(q, "pmirank", &n) == 0 && n != c->rank) {
            snprintf(tmp, sizeof(tmp), "fullinit claims rank %d on the connection of rank %d", n,
                     c->rank);
            srv_error(srv, c->rank, tmp);
            reply_error(srv, i, WEFT_PMI_MSG_FULLINIT_R, q->cmd, "wrong pmirank");
            return;
        }
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_FULLINIT_R);
        weft_pmi_msg_add(&r, "pmi-version", "2");
        weft_pmi_msg_add(&r, "pmi-subversion", "0");
        weft_pmi_msg_addf(&r, "rank", "%d", c->rank);
        weft_pmi_msg_addf(&r, "size", "%d", srv->size);
        weft_pmi_msg_add(&r, "appnum", "0");
        weft_pmi_msg_add(&r, "debugged", "FALSE");
        weft_pmi_msg_add(&r, "pmiverbose", "FALSE");
        weft_pmi_msg_add(&r, "rc", "0");
        break;
    case WEFT_PMI_MSG_JOBID:
        weft_pmi_msg_init(&r, WEFT_PMI_MSG_JOBID_R);
        weft_pmi_msg_add(&r, "jobid", srv->kvsname);
        weft_pmi_msg_add(&r, "rc", "0");
        break;
    case WEFT_PMI_MSG_JOBATTR:
    case WEFT_PMI_MSG_GETNODEATTR:
    case WEFT_PMI_MSG_KVS_GET:
        if (q->id == WEFT_PMI_MSG_JOBATTR) {
            v = job_attr(srv, weft_pmi_msg_get(q, "key"), tmp, sizeof(tmp));
        } else if (q->id == WEFT_PMI_MSG_GETNODEATTR) {
            snprintf(tmp, sizeof(tmp), "node:%.128s", weft_pmi_msg_get(q, "key"));
            v = weft_kvs_get(&srv->kvs, tmp);
        } else {
            v = weft_kvs_get(&srv->kvs, weft_pmi_msg_get(q, "key"));
        }
        weft_pmi_msg_init(&r, weft_pmi_msg_reply(q->id));
        weft_pmi_msg_add(&r, "found", v ? "TRUE" : "FALSE");
        if (v != NULL) {
            weft_pmi_msg_add(&r, "value", v);
        }
        weft_pmi_msg_add(&r, "rc", "0");
        break;
    case WEFT_PMI_MSG_PUTNODEATTR:
        /* Node attributes are local to this proxy and visible at once. */
        snprintf(tmp, sizeof(tmp), "node:%.128s", weft_pmi_msg_get(q, "key"));
        weft_kvs_put(&srv->kvs, tmp, weft_pmi_msg_get(q, "value"));
        reply_simple(srv, i, WEFT_PMI_MSG_PUTNODEATTR_R);
        return;
    case WEFT_PMI_MSG_KVS_PUT:
        srv_put(srv, weft_pmi_msg_get(q, "key"), weft_pmi_msg_get(q, "value"));
        reply_simple(srv, i, WEFT_PMI_MSG_KVS_PUT_R);
        return;
    case WEFT_PMI_MSG_KVS_FENCE:
        srv_enter_fence(srv, i);
        return;
    case WEFT_PMI_MSG_ABORT2:
        c->aborted = 1;
        if (weft_pmi_msg_get_int(q, "exitcode", &n) != 0) {
            n = 1;
        }
        v = weft_pmi_msg_get(q, "message");
        if (v == NULL) {
            v = weft_pmi_msg_get(q, "msg");
        }
        if (srv->on_abort != NULL) {
            srv->on_abort(srv->ctx, c->rank, n, v ? v : "");
        }
        return;
    case WEFT_PMI_MSG_FINALIZE2:
        c->finalized = 1;
        reply_simple(srv, i, WEFT_PMI_MSG_FINALIZE2_R);
        return;
    default:
        snprintf(tmp, sizeof(tmp), "unsupported PMI-2 command '%.32s'", q->cmd);
        srv_error(srv, c->rank, tmp);
        reply_error(srv, i, weft_pmi_msg_reply(q->id), q->cmd, "unsupported command");
        return;
    }
    srv_reply(srv, i, &r);
}

/* The handshake: "cmd=init pmi_version=N" in wire 1 on either kind of client. */
static void handle_init(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *q)
{
    weft_pmi_sconn_t *c = &srv->conns[i];
    weft_pmi_msg_t    r;
    int               v = 0;

    weft_pmi_msg_get_int(q, "pmi_version", &v);
    weft_pmi_msg_init(&r, WEFT_PMI_MSG_INIT_R);
    if (v != 1 && v != 2) {
        weft_pmi_msg_add(&r, "rc", "1");
        weft_pmi_msg_add(&r, "msg", "only_PMI-1_and_PMI-2_are_supported");
        weft_pmi_msg_add(&r, "pmi_version", "2");
        weft_pmi_msg_add(&r, "pmi_subversion", "0");
        srv_reply(srv, i, &r);
        return;
    }
    weft_pmi_msg_add(&r, "rc", "0");
    weft_pmi_msg_addf(&r, "pmi_version", "%d", v);
    weft_pmi_msg_add(&r, "pmi_subversion", v == 1 ? "1" : "0");
    srv_reply(srv, i, &r);
    c->wire        = v;
    c->initialized = 1;
}

int weft_pmi_server_input(weft_pmi_server_t *srv, int i)
{
    weft_pmi_sconn_t *c = &srv->conns[i];
    char              chunk[8192], err[256];
    int               open = 1;

    for (;;) {
        ssize_t n = recv(c->fd, chunk, sizeof(chunk), MSG_DONTWAIT);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            break;
        }
        if (n <= 0) {
            open = 0;
            break;
        }
        weft_buf_append(&c->in, chunk, (size_t)n);
    }
    for (;;) {
        weft_pmi_msg_t q;
        size_t         flen;
        int            wire = c->wire;

        if (wire == 0) {
            wire = weft_pmi_wire_detect(c->in.data, c->in.len);
            if (wire == 0) {
                break;
            }
            if (wire < 0) {
                srv_error(srv, c->rank, "the PMI connection does not speak PMI-1 or PMI-2");
                return -1;
            }
        }
        /* Until "init" is answered, a PMI-2 client also speaks wire 1. */
        if (!c->initialized && wire == 2 && c->in.len > 0 && c->in.data[0] == 'c') {
            wire = 1;
        }
        int rc = weft_pmi_frame(c->in.data, c->in.len, wire, &flen);
        if (rc == 0) {
            break;
        }
        if (rc < 0 || weft_pmi_msg_decode(c->in.data, flen, wire, WEFT_PMI_DIR_Q, &q, err,
                                          sizeof(err)) != 0) {
            srv_error(srv, c->rank, rc < 0 ? "malformed PMI frame" : err);
            return -1;
        }
        weft_buf_consume(&c->in, flen);
        if (q.id == WEFT_PMI_MSG_INIT) {
            handle_init(srv, i, &q);
        } else if (!c->initialized) {
            /* Some clients skip init; assume the wire they speak. */
            c->wire        = wire;
            c->initialized = 1;
            if (wire == 2) {
                handle_v2(srv, i, &q);
            } else {
                handle_v1(srv, i, &q);
            }
        } else if (c->wire == 2) {
            handle_v2(srv, i, &q);
        } else {
            handle_v1(srv, i, &q);
        }
    }
    return open;
}
