/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ports and the connect/accept handshake (MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_disconnect).
 *
 * A port name carries the opener's identity (uid, job key, job rank), its
 * netmod address, a port tag and a random 128-bit token: printable,
 * "weft-port:<tag>:<token>:<uid>:<jobkey>:<rank>:<node>:<address>" (hex
 * fields but rank and node).
 *
 * Handshake (roots only; every member first publishes its own descriptor
 * within its communicator and ANDs the context-id masks there):
 *   connect root -> accept root: CONNECT {tag, token, mask, members}
 *       (unsequenced: the acceptor may not know the sender yet; it only
 *       queues the request on the port; a wrong token or closed port gets
 *       an immediate REJECT when the sender is known to it, else silence)
 *   accept root (inside MPI_Comm_accept) -> connect root: REPLY {status,
 *       two context ids free on both sides, members}
 *   each root broadcasts the outcome and the remote members in its
 *   communicator; everyone maps the remote members to process ids (their
 *   world rank when they are of the same job) and builds the intercomm.
 * The connect root gives up after WEFT_CONNECT_TIMEOUT seconds without an
 * answer (MPI_ERR_PORT).
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/dev/peer.h"
#include "core/dynproc/dynproc.h"
#include "core/errors.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "transport/shm/shm.h"
#include "util/tunables.h"

enum {
    AM_CONNECT = WEFT_AM_DYNPROC_CONNECT,
    AM_REPLY   = WEFT_AM_DYNPROC_CONNECT + 1,
};

#define PORT_MAGIC   0x57445043u /* "WDPC" */
#define ADDR_MAX     64
#define STATUS_QUEUE 1 /* not a final answer */

/* What a process tells the other job about itself. */
typedef struct {
    uint64_t      uid, jobkey;
    int32_t       rank;
    int32_t       node; /* node id in its job (collectives' layout) */
    uint32_t      addrlen;
    uint32_t      pad;
    unsigned char addr[ADDR_MAX];
} member_t;

typedef struct {
    uint32_t        magic, tag;
    unsigned char   token[16];
    uint32_t        cookie;
    int32_t         root;     /* index of the sender in members */
    int32_t         nmembers;
    int32_t         pad;
    weft_ctx_mask_t mask;
    /* member_t members[nmembers] */
} connect_msg_t;

typedef struct {
    uint32_t magic, cookie;
    int32_t  status; /* MPI_SUCCESS, or MPI_ERR_PORT */
    int32_t  nmembers;
    uint32_t ids[2];
    /* member_t members[nmembers] */
} reply_msg_t;

typedef struct pending {
    struct pending *next;
    size_t          len;
    connect_msg_t   msg; /* followed by the members */
} pending_t;

typedef struct port {
    struct port  *next;
    uint32_t      tag;
    unsigned char token[16];
    pending_t    *queue;
} port_t;

static struct {
    int         ready;
    port_t     *ports;
    uint32_t    next_tag, next_cookie;
    /* The connect in progress at this process (its root). */
    uint32_t    cookie;
    int         answered;
    reply_msg_t *reply;
} dp;

/* ---- small helpers ---------------------------------------------------- */

static int random_bytes(void *buf, size_t len)
{
    int     fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    ssize_t n  = fd >= 0 ? read(fd, buf, len) : -1;

    if (fd >= 0) {
        close(fd);
    }
    return n == (ssize_t)len ? 0 : -1;
}

static void hex(const void *data, size_t len, char *out)
{
    weft_pmi_encode(data, len, out);
}

/* Send one handshake AM to process id (shm or netmod); from a handler only
 * one try (once = 1), else retry while progressing. */
static int am_to(int id, uint8_t type, const void *payload, size_t len, int once)
{
    const weft_peer_t *pe = weft_peer(id);
    weft_wait_t        w  = {0};

    for (;;) {
        int r = pe->is_local ? weft_shm_send(pe->shm_index, type, 0, 0, 0, payload, len)
                             : weft_dev_net_send(id, type, 0, 0, 0, payload, len);
        if (r == 0) {
            return MPI_SUCCESS;
        }
        if (once) {
            return MPI_ERR_OTHER;
        }
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
}

static size_t max_message(void)
{
    size_t m = weft_shm_max_payload();

    if (weft_dev.netmod != NULL && weft_dev.netmod->max_payload() < m) {
        m = weft_dev.netmod->max_payload();
    }
    return m;
}

static port_t *port_find(uint32_t tag, const unsigned char *token)
{
    for (port_t *p = dp.ports; p != NULL; p = p->next) {
        if (p->tag == tag && (token == NULL || memcmp(p->token, token, 16) == 0)) {
            return p;
        }
    }
    return NULL;
}

/* ---- handlers (run inside progress: no table growth here) ------------- */

static void reject(int src, uint32_t cookie)
{
    reply_msg_t r = {PORT_MAGIC, cookie, MPI_ERR_PORT, 0, {0, 0}};

    if (src >= 0) { /* an unknown sender learns it by its timeout */
        am_to(src, AM_REPLY, &r, sizeof(r), 1);
    }
}

/* AM payloads carry no alignment promise: the fixed headers are copied out
 * before their 8-byte fields are read; the whole message is kept in an
 * aligned copy. */
static void on_connect(int src, const weft_am_t *msg)
{
    connect_msg_t c;
    port_t       *p;
    pending_t    *q, **at;

    if (msg->len < sizeof(c)) {
        return; /* not ours: ignore */
    }
    memcpy(&c, msg->payload, sizeof(c));
    if (c.magic != PORT_MAGIC || c.nmembers <= 0 ||
        msg->len != sizeof(c) + (size_t)c.nmembers * sizeof(member_t) || c.root < 0 ||
        c.root >= c.nmembers) {
        return;
    }
    p = port_find(c.tag, c.token);
    if (p == NULL) {
        reject(src, c.cookie);
        return;
    }
    q = malloc(sizeof(*q) - sizeof(q->msg) + msg->len);
    if (q == NULL) {
        reject(src, c.cookie);
        return;
    }
    q->next = NULL;
    q->len  = msg->len;
    memcpy(&q->msg, msg->payload, msg->len);
    for (at = &p->queue; *at; at = &(*at)->next) {
    }
    *at = q;
}

static void on_reply(int src, const weft_am_t *msg)
{
    reply_msg_t r;

    (void)src;
    if (msg->len < sizeof(r)) {
        return; /* late or stray: ignore */
    }
    memcpy(&r, msg->payload, sizeof(r));
    if (r.magic != PORT_MAGIC || r.cookie != dp.cookie || dp.answered || r.nmembers < 0 ||
        msg->len != sizeof(r) + (size_t)r.nmembers * sizeof(member_t)) {
        return;
    }
    dp.reply = malloc(msg->len);
    if (dp.reply != NULL) {
        memcpy(dp.reply, msg->payload, msg->len);
    }
    dp.answered = 1;
}

static void setup(void)
{
    if (!dp.ready) {
        weft_am_register(AM_CONNECT, on_connect);
        weft_am_register(AM_REPLY, on_reply);
        dp.ready = 1;
    }
}

/* ---- port names -------------------------------------------------------- */

typedef struct {
    uint32_t      tag;
    unsigned char token[16];
    member_t      owner;
} port_name_t;

static int parse_port(const char *name, port_name_t *pn)
{
    char          tok[33], addr[2 * ADDR_MAX + 1];
    unsigned long long uid, key;
    unsigned      tag;
    int           rank, node, n = 0;

    if (name == NULL ||
        sscanf(name, "weft-port:%x:%32[0-9a-f]:%llx:%llx:%d:%d:%128[0-9a-f]%n", &tag, tok,
               &uid, &key, &rank, &node, addr, &n) != 7 ||
        name[n] != '\0' || strlen(tok) != 32 || strlen(addr) % 2 != 0 || rank < 0) {
        return -1;
    }
    memset(pn, 0, sizeof(*pn));
    pn->tag             = tag;
    pn->owner.uid       = uid;
    pn->owner.jobkey    = key;
    pn->owner.rank      = rank;
    pn->owner.node      = node;
    pn->owner.addrlen   = (uint32_t)(strlen(addr) / 2);
    if (weft_pmi_decode(tok, pn->token, 16) != 0 ||
        weft_pmi_decode(addr, pn->owner.addr, pn->owner.addrlen) != 0) {
        return -1;
    }
    return 0;
}

static int describe_me(member_t *me)
{
    size_t len = ADDR_MAX;
    int    rc  = weft_dev_dyn_open();

    memset(me, 0, sizeof(*me));
    if (rc == MPI_SUCCESS) {
        rc = weft_dev_dyn_name(me->addr, &len);
    }
    me->uid     = weft_dev_uid();
    me->jobkey  = weft_dev_jobkey();
    me->rank    = weft_runtime.pmi.rank;
    me->node    = weft_dev_host_of(weft_runtime.pmi.rank);
    me->addrlen = (uint32_t)len;
    return rc;
}

int weft_open_port_impl(weft_info_t *info, char *port_name)
{
    port_t  *p;
    member_t me;
    char     tok[33], addr[2 * ADDR_MAX + 1];
    int      rc;

    (void)info;
    if (port_name == NULL) {
        return weft_error(MPI_ERR_ARG, "argument port_name: NULL pointer");
    }
    setup();
    rc = describe_me(&me);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a port");
    }
    if (random_bytes(p->token, sizeof(p->token)) != 0) {
        free(p);
        return weft_error(MPI_ERR_OTHER, "cannot read /dev/urandom for the port's secret token");
    }
    p->tag = ++dp.next_tag;
    hex(p->token, 16, tok);
    hex(me.addr, me.addrlen, addr);
    snprintf(port_name, MPI_MAX_PORT_NAME, "weft-port:%x:%s:%llx:%llx:%d:%d:%s", p->tag, tok,
             (unsigned long long)me.uid, (unsigned long long)me.jobkey, (int)me.rank,
             (int)me.node, addr);
    p->next  = dp.ports;
    dp.ports = p;
    return MPI_SUCCESS;
}

int weft_close_port_impl(const char *port_name)
{
    port_name_t pn;
    port_t    **at;

    if (port_name == NULL || parse_port(port_name, &pn) != 0 || pn.owner.uid != weft_dev_uid()) {
        return weft_error(MPI_ERR_PORT, "argument port_name: \"%.80s\" is not a port opened "
                                        "by this process", port_name ? port_name : "(null)");
    }
    for (at = &dp.ports; *at; at = &(*at)->next) {
        port_t *p = *at;
        if (p->tag == pn.tag && memcmp(p->token, pn.token, 16) == 0) {
            *at = p->next;
            while (p->queue) {
                pending_t *q = p->queue;
                p->queue     = q->next;
                free(q); /* its connect times out: the sender may be unknown here */
            }
            free(p);
            return MPI_SUCCESS;
        }
    }
    return weft_error(MPI_ERR_PORT, "argument port_name: the port is not open (closed already?)");
}

/* ---- connect / accept ------------------------------------------------- */

/* Every member's descriptor, in comm rank order (collective). */
static int gather_members(weft_comm_t *comm, member_t **all_p)
{
    weft_xgroup_t x;
    member_t      me;
    member_t     *all = malloc(sizeof(member_t) * (size_t)comm->size);
    int           rc;

    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a process table");
    }
    rc = describe_me(&me);
    weft_xgroup_of_comm(&x, comm);
    if (rc == MPI_SUCCESS) {
        rc = weft_x_allgather(&x, &me, sizeof(me), all, WEFT_XTAG_DYNPROC);
    }
    if (rc != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    *all_p = all;
    return MPI_SUCCESS;
}

/* Outcome a root broadcasts in its communicator. */
typedef struct {
    int32_t  status;
    int32_t  nremote;
    uint32_t ids[2];
} outcome_t;

/* Share the root's outcome, map the remote members, build the intercomm. */
static int finish(weft_comm_t *comm, int root, outcome_t *out, member_t *remote, MPI_Comm *newcomm)
{
    weft_xgroup_t x;
    weft_group_t *rg;
    weft_comm_t  *nc;
    int          *ids = NULL, rc;

    weft_xgroup_of_comm(&x, comm);
    rc = weft_x_bcast(&x, out, sizeof(*out), root, WEFT_XTAG_DYNPROC + 1);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (out->status != MPI_SUCCESS) {
        return comm->rank == root ? out->status
                                  : weft_error(out->status, "the root could not connect (see its "
                                                            "error)");
    }
    if (comm->rank != root &&
        (remote = malloc(sizeof(member_t) * (size_t)out->nremote)) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the remote process table");
    }
    rc = weft_x_bcast(&x, remote, sizeof(member_t) * (size_t)out->nremote, root,
                      WEFT_XTAG_DYNPROC + 2);
    if (rc == MPI_SUCCESS && (ids = malloc(sizeof(int) * (size_t)out->nremote)) == NULL) {
        rc = weft_error(MPI_ERR_NO_MEM, "no memory for the remote group");
    }
    for (int i = 0; rc == MPI_SUCCESS && i < out->nremote; i++) {
        rc = weft_dev_add_process(remote[i].uid, remote[i].jobkey, remote[i].rank, remote[i].node,
                                  remote[i].addr,
                                  remote[i].addrlen, &ids[i]);
    }
    if (comm->rank != root) {
        free(remote);
    }
    if (rc != MPI_SUCCESS) {
        free(ids);
        return rc;
    }
    rg = weft_group_create(out->nremote, ids);
    free(ids);
    if (rg == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the remote group");
    }
    nc = weft_comm_derive(comm, comm->group, rg, out->ids[0], out->ids[1]);
    weft_group_release(rg);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an intercommunicator");
    }
    *newcomm = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

/* Free context ids of every member of comm (collective). */
static int local_mask(weft_comm_t *comm, weft_ctx_mask_t *mask)
{
    weft_xgroup_t x;

    weft_xgroup_of_comm(&x, comm);
    weft_ctx_mask_local(mask);
    return weft_x_allreduce_band(&x, mask, sizeof(*mask), WEFT_XTAG_DYNPROC + 3);
}

static double now_s(void);

int weft_comm_accept_impl(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                          MPI_Comm *newcomm)
{
    return weft_dynproc_accept(port_name, info, root, comm, 0, newcomm);
}

int weft_dynproc_accept(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                        double timeout, MPI_Comm *newcomm)
{
    weft_ctx_mask_t mask;
    member_t       *mine = NULL, *remote = NULL;
    outcome_t       out  = {MPI_SUCCESS, 0, {0, 0}};
    int             rc;

    (void)info;
    setup();
    if ((rc = gather_members(comm, &mine)) != MPI_SUCCESS ||
        (rc = local_mask(comm, &mask)) != MPI_SUCCESS) {
        free(mine);
        return rc;
    }
    if (comm->rank == root) {
        port_name_t pn;
        port_t     *p  = NULL;
        pending_t  *q  = NULL;
        weft_wait_t w  = {0};
        int         croot = -1;

        if (port_name == NULL || parse_port(port_name, &pn) != 0 ||
            pn.owner.uid != weft_dev_uid() || (p = port_find(pn.tag, pn.token)) == NULL) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: \"%.80s\" is not a port "
                                    "open at this process (the root)",
                                    port_name ? port_name : "(null)");
        }
        double deadline = now_s() + timeout;
        while (out.status == MPI_SUCCESS && (q = p->queue) == NULL) {
            if (weft_progress_poll() == 0) {
                if (timeout > 0 && now_s() > deadline) {
                    out.status = weft_error(MPI_ERR_OTHER, "nobody connected within %.0f s",
                                            timeout);
                }
                weft_wait_step(&w);
            }
        }
        if (q != NULL) {
            weft_ctx_mask_t both = q->msg.mask;
            size_t          nrep = sizeof(reply_msg_t) + sizeof(member_t) * (size_t)comm->size;
            reply_msg_t    *rep;

            p->queue   = q->next;
            out.nremote = q->msg.nmembers;
            remote      = (member_t *)(&q->msg + 1);
            for (int i = 0; i < WEFT_CTX_WORDS; i++) {
                both.w[i] &= mask.w[i];
            }
            out.status = weft_ctx_pick(&both, 2, out.ids);
            if (out.status == MPI_SUCCESS) {
                const member_t *cr = &remote[q->msg.root];
                out.status = weft_dev_add_process(cr->uid, cr->jobkey, cr->rank, cr->node, cr->addr,
                                                  cr->addrlen, &croot);
            }
            if (out.status == MPI_SUCCESS && nrep > max_message()) {
                out.status = weft_error(MPI_ERR_OTHER, "MPI_Comm_accept: a group of %d processes "
                                        "does not fit one handshake message (%zu bytes)",
                                        comm->size, max_message());
            }
            if (out.status == MPI_SUCCESS && (rep = malloc(nrep)) != NULL) {
                rep->magic    = PORT_MAGIC;
                rep->cookie   = q->msg.cookie;
                rep->status   = MPI_SUCCESS;
                rep->nmembers = comm->size;
                rep->ids[0]   = out.ids[0];
                rep->ids[1]   = out.ids[1];
                memcpy(rep + 1, mine, sizeof(member_t) * (size_t)comm->size);
                out.status = am_to(croot, AM_REPLY, rep, nrep, 0);
                free(rep);
            } else if (out.status == MPI_SUCCESS) {
                out.status = weft_error(MPI_ERR_NO_MEM, "no memory for a handshake reply");
            } else if (croot >= 0) {
                reject(croot, q->msg.cookie);
            }
        }
        rc = finish(comm, root, &out, remote, newcomm);
        free(q);
    } else {
        rc = finish(comm, root, &out, NULL, newcomm);
    }
    free(mine);
    return rc;
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int weft_comm_connect_impl(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                           MPI_Comm *newcomm)
{
    return weft_dynproc_connect(port_name, info, root, comm, (double)weft_tunables.CONNECT_TIMEOUT,
                                newcomm);
}

int weft_dynproc_connect(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                         double timeout, MPI_Comm *newcomm)
{
    weft_ctx_mask_t mask;
    member_t       *mine = NULL, *remote = NULL;
    outcome_t       out  = {MPI_SUCCESS, 0, {0, 0}};
    int             rc;

    (void)info;
    setup();
    if ((rc = gather_members(comm, &mine)) != MPI_SUCCESS ||
        (rc = local_mask(comm, &mask)) != MPI_SUCCESS) {
        free(mine);
        return rc;
    }
    if (comm->rank == root) {
        port_name_t    pn;
        int            aroot = -1;
        size_t         len   = sizeof(connect_msg_t) + sizeof(member_t) * (size_t)comm->size;
        connect_msg_t *c     = NULL;

        if (port_name == NULL || parse_port(port_name, &pn) != 0) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: \"%.80s\" is not a port "
                                    "name", port_name ? port_name : "(null)");
        } else if (len > max_message()) {
            out.status = weft_error(MPI_ERR_OTHER, "MPI_Comm_connect: a group of %d processes "
                                    "does not fit one handshake message (%zu bytes)", comm->size,
                                    max_message());
        } else if ((c = malloc(len)) == NULL) {
            out.status = weft_error(MPI_ERR_NO_MEM, "no memory for a handshake message");
        } else {
            out.status = weft_dev_add_process(pn.owner.uid, pn.owner.jobkey, pn.owner.rank,
                                              pn.owner.node, pn.owner.addr, pn.owner.addrlen, &aroot);
        }
        if (out.status == MPI_SUCCESS && aroot == weft_runtime.pmi.rank) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: the port is this "
                                    "process's own (connect and accept need two processes)");
        }
        if (out.status == MPI_SUCCESS) {
            double      deadline = now_s() + timeout;
            weft_wait_t w        = {0};

            memset(c, 0, sizeof(*c));
            c->magic    = PORT_MAGIC;
            c->tag      = pn.tag;
            memcpy(c->token, pn.token, 16);
            c->cookie   = dp.cookie = (uint32_t)weft_dev_uid() + ++dp.next_cookie;
            c->root     = root;
            c->nmembers = comm->size;
            c->mask     = mask;
            memcpy(c + 1, mine, sizeof(member_t) * (size_t)comm->size);
            dp.answered = 0;
            dp.reply    = NULL;
            out.status  = am_to(aroot, AM_CONNECT, c, len, 0);
            while (out.status == MPI_SUCCESS && !dp.answered) {
                if (weft_progress_poll() == 0) {
                    if (now_s() > deadline) {
                        break;
                    }
                    weft_wait_step(&w);
                }
            }
            dp.cookie = 0; /* a late answer is ignored */
            if (!dp.answered) {
                weft_dev_forget_process(aroot); /* do not wait for it at finalize */
            }
            if (out.status != MPI_SUCCESS) {
            } else if (!dp.answered) {
                out.status = weft_error(MPI_ERR_PORT, "no answer from the port's process within "
                                        "%.0f s (port closed, process gone, or no "
                                        "MPI_Comm_accept; WEFT_CONNECT_TIMEOUT)", timeout);
            } else if (dp.reply == NULL) {
                out.status = weft_error(MPI_ERR_NO_MEM, "no memory for a handshake reply");
            } else if (dp.reply->status != MPI_SUCCESS) {
                out.status = weft_error(MPI_ERR_PORT, "the port rejected the connection (closed "
                                        "port or wrong token)");
            } else {
                out.nremote = dp.reply->nmembers;
                out.ids[0]  = dp.reply->ids[0];
                out.ids[1]  = dp.reply->ids[1];
                remote      = (member_t *)(dp.reply + 1);
            }
        }
        free(c);
        rc = finish(comm, root, &out, remote, newcomm);
        free(dp.reply);
        dp.reply = NULL;
    } else {
        rc = finish(comm, root, &out, NULL, newcomm);
    }
    free(mine);
    return rc;
}

/* ---- disconnect -------------------------------------------------------- */

/* Has some process of comm's peer group been lost? */
static int peer_group_lost(const weft_comm_t *comm)
{
    for (int i = 0; weft_dev.nfailed && i < comm->peer_size; i++) {
        if (weft_peer(comm->peer_world[i])->failed) {
            return 1;
        }
    }
    return 0;
}

int weft_comm_disconnect_impl(MPI_Comm *comm)
{
    weft_comm_t  *c;
    weft_xgroup_t x;
    int           rc;

    if (comm == NULL) {
        return weft_error(MPI_ERR_ARG, "argument comm: NULL pointer");
    }
    c = weft_comm_from_handle(*comm);
    if (c == NULL) {
        return weft_error(MPI_ERR_COMM, "argument comm: invalid communicator%s",
                          *comm == MPI_COMM_NULL ? " (null handle)" : "");
    }
    if (c->hdr.handle != 0) {
        return weft_error(MPI_ERR_COMM, "argument comm: %s cannot be disconnected", c->name);
    }
    /* Everyone of both groups has arrived: whatever they sent before has
     * been sent (MPI requires the user to have completed it). */
    if (c->is_inter) {
        void  *in  = NULL;
        size_t nin = 0;
        weft_xgroup_of_comm(&x, c->local_comm);
        rc = weft_x_barrier(&x, WEFT_XTAG_DYNPROC + 4);
        if (rc == MPI_SUCCESS && c->rank == 0) {
            rc = weft_x_exchange(c, 0, "", 0, &in, &nin, WEFT_XTAG_DYNPROC + 5);
            free(in);
            if (rc == WEFT_ERR_PROC_LOST && peer_group_lost(c)) {
                rc = MPI_SUCCESS; /* a lost process has no traffic left to wait for */
            }
        }
        if (rc == MPI_SUCCESS) {
            rc = weft_x_barrier(&x, WEFT_XTAG_DYNPROC + 7);
        }
    } else {
        weft_xgroup_of_comm(&x, c);
        rc = weft_x_barrier(&x, WEFT_XTAG_DYNPROC + 4);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < c->peer_size; i++) {
        weft_dev_forget_process(c->peer_world[i]);
    }
    return weft_comm_free_impl(comm);
}

/* ---- parent ------------------------------------------------------------ */

static weft_comm_t *parent;

void weft_dynproc_set_parent(weft_comm_t *comm)
{
    if (comm != NULL) {
        weft_comm_retain(comm);
    }
    if (parent != NULL) {
        weft_comm_release(parent);
    }
    parent = comm;
}

int weft_comm_get_parent_impl(MPI_Comm *parent_p)
{
    /* A parent freed by the user (disconnect) reads as MPI_COMM_NULL. */
    *parent_p = parent != NULL && !parent->freed ? weft_comm_handle_out(parent) : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
