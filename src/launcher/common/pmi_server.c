/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "pmi_server.h"

#include "pmi/pmi.h"
#include "pmi/pmi_shm.h"
#include "pmi/pmi_spawn.h"
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
        weft_buf_free(&srv->conns[i].spawn_acc);
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
        if (c->dead) {
            srv->nfence++; /* already in the next one */
            continue;
        }
        if (!c->in_fence) {
            continue;
        }
        c->in_fence = 0;
        reply_simple(srv, i, c->wire == 2 ? WEFT_PMI_MSG_KVS_FENCE_R : WEFT_PMI_MSG_BARRIER_R);
    }
}

void weft_pmi_server_conn_dead(weft_pmi_server_t *srv, int i)
{
    weft_pmi_sconn_t *c = &srv->conns[i];

    if (c->dead) {
        return;
    }
    c->dead = 1;
    srv_enter_fence(srv, i);
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

/* ---- name service and spawn: answered later, when mpiexec has ---- */

static void srv_name(weft_pmi_server_t *srv, int i, int op, const char *service, const char *port)
{
    if (srv->on_name == NULL) {
        weft_pmi_server_name_done(srv, i, op, WEFT_PMI_ERR_UNSUPPORTED,
                                  "no name service here");
        return;
    }
    srv->on_name(srv->ctx, i, op, service, port);
}

void weft_pmi_server_name_done(weft_pmi_server_t *srv, int i, int op, int rc, const char *text)
{
    weft_pmi_msg_t r;
    int            v2;
    const char    *why;

    if (i < 0 || i >= srv->nconns || srv->conns[i].fd < 0) {
        return;
    }
    v2 = srv->conns[i].wire == 2;
    weft_pmi_msg_init(&r, op == 'P'   ? (v2 ? WEFT_PMI_MSG_NAME_PUBLISH_R : WEFT_PMI_MSG_PUBLISH_R)
                          : op == 'L' ? (v2 ? WEFT_PMI_MSG_NAME_LOOKUP_R : WEFT_PMI_MSG_LOOKUP_R)
                                      : (v2 ? WEFT_PMI_MSG_NAME_UNPUBLISH_R
                                            : WEFT_PMI_MSG_UNPUBLISH_R));
    if (rc == 0) {
        weft_pmi_msg_add(&r, "rc", "0");
        if (op == 'L') {
            if (v2) { /* both spellings PMI-2 clients read */
                weft_pmi_msg_add(&r, "found", "TRUE");
                weft_pmi_msg_add(&r, "value", text);
            }
            weft_pmi_msg_add(&r, "port", text);
        }
        srv_reply(srv, i, &r);
        return;
    }
    /* One word for PMI-1; the client maps it back to the error. */
    why = rc == WEFT_PMI_ERR_DUPLICATE   ? "duplicate_service"
          : rc == WEFT_PMI_ERR_NOT_FOUND ? "service_not_found"
                                         : "name_service_unavailable";
    weft_pmi_msg_add(&r, "rc", "1");
    if (v2 && op == 'L') {
        weft_pmi_msg_add(&r, "found", "FALSE");
    }
    weft_pmi_msg_add(&r, v2 ? "errmsg" : "msg", why);
    srv_reply(srv, i, &r); /* mpiexec printed why */
    (void)text;
}

static int tok_str(weft_buf_t *b, const char *s)
{
    return weft_buf_append_str0(b, s ? s : "");
}

static int tok_int(weft_buf_t *b, int v)
{
    char t[16];
    snprintf(t, sizeof(t), "%d", v);
    return weft_buf_append_str0(b, t);
}

void weft_pmi_server_spawn_done(weft_pmi_server_t *srv, int i, int rc, const char *errcodes,
                                const char *msg)
{
    weft_pmi_msg_t r;
    int            v2;
    char           word[256];

    if (i < 0 || i >= srv->nconns || srv->conns[i].fd < 0) {
        return;
    }
    v2 = srv->conns[i].wire == 2;
    weft_pmi_msg_init(&r, v2 ? WEFT_PMI_MSG_SPAWN2_R : WEFT_PMI_MSG_SPAWN_R);
    weft_pmi_msg_addf(&r, "rc", "%d", rc == 0 ? 0 : 1);
    if (errcodes != NULL && errcodes[0] != '\0') {
        weft_pmi_msg_add(&r, "errcodes", errcodes);
    }
    if (rc != 0) {
        snprintf(word, sizeof(word), "%s", msg ? msg : "spawn failed");
        for (char *p = word; !v2 && *p; p++) {
            *p = *p == ' ' ? '_' : *p;
        }
        weft_pmi_msg_add(&r, v2 ? "errmsg" : "msg", word);
    }
    srv_reply(srv, i, &r);
}

/* Hand a packed request (count, preput pairs, then the commands in cmds) to
 * mpiexec, or refuse it here. */
static void srv_spawn(weft_pmi_server_t *srv, int i, int count, int npreput, const char **pp,
                      const weft_buf_t *cmds)
{
    weft_buf_t req = {0};
    int        bad = tok_int(&req, count) | tok_int(&req, npreput);

    for (int k = 0; k < 2 * npreput; k++) {
        bad |= tok_str(&req, pp[k]);
    }
    bad |= weft_buf_append(&req, cmds->data, cmds->len);
    if (bad) {
        weft_pmi_server_spawn_done(srv, i, WEFT_PMI_ERR_GENERIC, NULL, "out of memory");
    } else if (srv->on_spawn == NULL) {
        weft_pmi_server_spawn_done(srv, i, WEFT_PMI_ERR_UNSUPPORTED, NULL,
                                   "this PMI server cannot spawn");
    } else {
        srv->on_spawn(srv->ctx, i, req.data, req.len);
    }
    weft_buf_free(&req);
}

/* Value of the n-th attribute named key at or after attribute *pos. */
static const char *attr_from(const weft_pmi_msg_t *q, int *pos, const char *key)
{
    for (int a = *pos; a < q->nattrs; a++) {
        if (strcmp(q->attrs[a].key, key) == 0) {
            *pos = a + 1;
            return q->attrs[a].val;
        }
    }
    return NULL;
}

/* PMI-1: one "mcmd=spawn" block per command; answer after the last. */
static void spawn_v1(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *q)
{
    weft_pmi_sconn_t *c = &srv->conns[i];
    int               nprocs, tot, sofar, argc = 0, npp = 0, ninfo = 0;
    char              key[32];
    const char       *pp[2 * 64];
    int               bad;

    if (weft_pmi_msg_get_int(q, "nprocs", &nprocs) || weft_pmi_msg_get_int(q, "totspawns", &tot) ||
        weft_pmi_msg_get_int(q, "spawnssofar", &sofar) || nprocs <= 0 || tot <= 0 ||
        sofar != c->spawn_blocks + 1 || sofar > tot) {
        c->spawn_acc.len = 0;
        c->spawn_blocks  = 0;
        weft_pmi_server_spawn_done(srv, i, WEFT_PMI_ERR_SPAWN, NULL, "malformed spawn request");
        return;
    }
    weft_pmi_msg_get_int(q, "argcnt", &argc);
    weft_pmi_msg_get_int(q, "info_num", &ninfo);
    bad = tok_str(&c->spawn_acc, weft_pmi_msg_get(q, "execname")) | tok_int(&c->spawn_acc, nprocs) |
          tok_int(&c->spawn_acc, argc);
    for (int a = 1; a <= argc; a++) {
        snprintf(key, sizeof(key), "arg%d", a);
        bad |= tok_str(&c->spawn_acc, weft_pmi_msg_get(q, key));
    }
    bad |= tok_int(&c->spawn_acc, ninfo);
    for (int k = 0; k < ninfo; k++) {
        snprintf(key, sizeof(key), "info_key_%d", k);
        bad |= tok_str(&c->spawn_acc, weft_pmi_msg_get(q, key));
        snprintf(key, sizeof(key), "info_val_%d", k);
        bad |= tok_str(&c->spawn_acc, weft_pmi_msg_get(q, key));
    }
    c->spawn_blocks++;
    if (sofar < tot && !bad) {
        return; /* more blocks follow; no reply yet */
    }
    weft_pmi_msg_get_int(q, "preput_num", &npp);
    for (int k = 0; k < npp && k < 64; k++) {
        snprintf(key, sizeof(key), "preput_key_%d", k);
        pp[2 * k] = weft_pmi_msg_get(q, key);
        snprintf(key, sizeof(key), "preput_val_%d", k);
        pp[2 * k + 1] = weft_pmi_msg_get(q, key);
    }
    if (bad || npp > 64) {
        weft_pmi_server_spawn_done(srv, i, WEFT_PMI_ERR_SPAWN, NULL, "spawn request too large");
    } else {
        srv_spawn(srv, i, tot, npp, pp, &c->spawn_acc);
    }
    c->spawn_acc.len = 0;
    c->spawn_blocks  = 0;
}

/* PMI-2: one message; the per-command keys repeat, so read them in order. */
static void spawn_v2(weft_pmi_server_t *srv, int i, const weft_pmi_msg_t *q)
{
    weft_buf_t  cmds = {0};
    int         ncmds = 0, npp = 0, pos = 0, bad = 0;
    const char *pp[2 * 64];
    char        key[32];

    weft_pmi_msg_get_int(q, "ncmds", &ncmds);
    weft_pmi_msg_get_int(q, "preputcount", &npp);
    bad = ncmds <= 0 || npp < 0 || npp > 64;
    for (int k = 0; k < npp && !bad; k++) {
        snprintf(key, sizeof(key), "ppkey%d", k);
        pp[2 * k] = weft_pmi_msg_get(q, key);
        snprintf(key, sizeof(key), "ppval%d", k);
        pp[2 * k + 1] = weft_pmi_msg_get(q, key);
        bad |= pp[2 * k] == NULL || pp[2 * k + 1] == NULL;
    }
    for (int c = 0; c < ncmds && !bad; c++) {
        const char *cmd = attr_from(q, &pos, "subcmd");
        const char *mp  = attr_from(q, &pos, "maxprocs");
        const char *ac  = attr_from(q, &pos, "argc");
        int         argc = ac ? atoi(ac) : 0, ninfo;
        if (cmd == NULL || mp == NULL || atoi(mp) <= 0) {
            bad = 1;
            break;
        }
        bad |= tok_str(&cmds, cmd) | tok_int(&cmds, atoi(mp)) | tok_int(&cmds, argc);
        for (int a = 0; a < argc; a++) {
            int save = pos;
            snprintf(key, sizeof(key), "argv%d", a);
            const char *v = attr_from(q, &pos, key);
            bad |= v == NULL || tok_str(&cmds, v);
            if (v == NULL) {
                pos = save;
            }
        }
        const char *nk = attr_from(q, &pos, "infokeycount");
        ninfo          = nk ? atoi(nk) : 0;
        bad |= tok_int(&cmds, ninfo);
        for (int k = 0; k < ninfo && !bad; k++) {
            snprintf(key, sizeof(key), "infokey%d", k);
            const char *ik = attr_from(q, &pos, key);
            snprintf(key, sizeof(key), "infoval%d", k);
            const char *iv = attr_from(q, &pos, key);
            bad |= ik == NULL || iv == NULL || tok_str(&cmds, ik) || tok_str(&cmds, iv);
        }
    }
    if (bad) {
        weft_pmi_server_spawn_done(srv, i, WEFT_PMI_ERR_SPAWN, NULL, "malformed spawn request");
    } else {
        srv_spawn(srv, i, ncmds, npp, pp, &cmds);
    }
    weft_buf_free(&cmds);
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
        weft_pmi_msg_addf(&r, "appnum", "%d", c->appnum);
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
    case WEFT_PMI_MSG_PUBLISH:
        srv_name(srv, i, 'P', weft_pmi_msg_get(q, "service"), weft_pmi_msg_get(q, "port"));
        return;
    case WEFT_PMI_MSG_LOOKUP:
        srv_name(srv, i, 'L', weft_pmi_msg_get(q, "service"), NULL);
        return;
    case WEFT_PMI_MSG_UNPUBLISH:
        srv_name(srv, i, 'U', weft_pmi_msg_get(q, "service"), NULL);
        return;
    case WEFT_PMI_MSG_SPAWN:
        spawn_v1(srv, i, q);
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
        weft_pmi_msg_addf(&r, "appnum", "%d", c->appnum);
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
    case WEFT_PMI_MSG_NAME_PUBLISH:
        srv_name(srv, i, 'P', weft_pmi_msg_get(q, "name"), weft_pmi_msg_get(q, "port"));
        return;
    case WEFT_PMI_MSG_NAME_LOOKUP:
        srv_name(srv, i, 'L', weft_pmi_msg_get(q, "name"), NULL);
        return;
    case WEFT_PMI_MSG_NAME_UNPUBLISH:
        srv_name(srv, i, 'U', weft_pmi_msg_get(q, "name"), NULL);
        return;
    case WEFT_PMI_MSG_SPAWN2:
        spawn_v2(srv, i, q);
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
