/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ports and the connect/accept handshake (MPI_Open_port, MPI_Close_port,
 * MPI_Comm_accept, MPI_Comm_connect, MPI_Comm_disconnect).
 *
 * A port name carries the opener's identity (uid, job key, job rank, host
 * key, job id), a port tag, a random 128-bit token and, when the opener
 * has the netmod open, its address: printable,
 * "weft-port:<tag>:<token>:<uid>:<jobkey>:<rank>:<node>:<hostkey>:<flags>:
 * <jobid>:<address>" (hex fields but rank and node; the job id hex-encoded;
 * address "-" when there is none).
 *
 * Processes of two jobs on one host talk through shared-memory bridges
 * (weft_dev_add_process); the netmod is opened only by processes that have
 * a peer on another host. So a descriptor carries a netmod address only
 * when its process opened the netmod: the connecting side opens it when
 * the port says its owner's group may span hosts or the member is on
 * another host than the owner; the accepting side, once it has seen the
 * connecting members, regathers its descriptors with the netmod open when
 * a pair on different hosts lacks an address on its side. A connect root on
 * the owner's host sends its CONNECT through the bridge and knocks on the
 * owner's door (transport/shm) with its descriptor, so the owner, polling
 * its door while it accepts, attaches the bridge and reads the CONNECT.
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

#define PORT_MAGIC   0x57445044u /* "WDPD" */
#define ADDR_MAX     64
#define STATUS_QUEUE 1 /* not a final answer */

/* Port flags. */
#define PORT_HAS_ADDR 1u /* the owner's netmod address is in the name */
#define PORT_SPANS    2u /* the owner had the netmod open before: its group may span hosts */

/* What a process tells the other job about itself. */
typedef struct {
    uint64_t      uid, jobkey;
    int32_t       rank;
    int32_t       node; /* node id in its job (collectives' layout) */
    uint64_t      hostkey, shm_layout;
    int32_t       cma;
    uint32_t      addrlen; /* 0: no netmod address */
    char          jobid[WEFT_DEV_JOBID_MAX + 1];
    unsigned char addr[ADDR_MAX];
} member_t;

_Static_assert(sizeof(member_t) <= WEFT_SHM_DOOR_RECORD, "a descriptor fits a door record");

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

static int add_member(const member_t *m, int *id_p)
{
    char             jobid[sizeof(m->jobid)];
    weft_dev_proc_t  p;

    memcpy(jobid, m->jobid, sizeof(jobid));
    jobid[sizeof(jobid) - 1] = '\0';
    p.uid        = m->uid;
    p.jobkey     = m->jobkey;
    p.job_rank   = m->rank;
    p.node       = m->node;
    p.hostkey    = m->hostkey;
    p.shm_layout = m->shm_layout;
    p.cma        = m->cma;
    p.jobid      = jobid;
    p.addr       = m->addr;
    p.addrlen    = m->addrlen <= ADDR_MAX ? m->addrlen : 0;
    return weft_dev_add_process(&p, id_p);
}

/* The pair would talk through the netmod (not one host, or no shared
 * memory offered by either). */
static int pair_needs_net(const member_t *a, const member_t *b)
{
    return a->hostkey == 0 || a->hostkey != b->hostkey || a->shm_layout != b->shm_layout;
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
    uint32_t      tag, flags;
    unsigned char token[16];
    member_t      owner;
} port_name_t;

static int parse_port(const char *name, port_name_t *pn)
{
    char               tok[33], addr[2 * ADDR_MAX + 1], job[2 * WEFT_DEV_JOBID_MAX + 1];
    unsigned long long uid, key, hostkey, layout;
    unsigned           tag, flags;
    int                rank, node, cma, n = 0;

    if (name == NULL ||
        sscanf(name, "weft-port:%x:%32[0-9a-f]:%llx:%llx:%d:%d:%llx:%llx:%d:%x:%126[0-9a-f]:"
                     "%128[-0-9a-f]%n",
               &tag, tok, &uid, &key, &rank, &node, &hostkey, &layout, &cma, &flags, job, addr,
               &n) != 12 ||
        name[n] != '\0' || strlen(tok) != 32 || strlen(job) % 2 != 0 || rank < 0) {
        return -1;
    }
    if (strcmp(addr, "-") == 0) {
        addr[0] = '\0';
    }
    if (strlen(addr) % 2 != 0) {
        return -1;
    }
    memset(pn, 0, sizeof(*pn));
    pn->tag              = tag;
    pn->flags            = flags;
    pn->owner.uid        = uid;
    pn->owner.jobkey     = key;
    pn->owner.rank       = rank;
    pn->owner.node       = node;
    pn->owner.hostkey    = hostkey;
    pn->owner.shm_layout = layout;
    pn->owner.cma        = cma;
    pn->owner.addrlen    = (uint32_t)(strlen(addr) / 2);
    if (weft_pmi_decode(tok, pn->token, 16) != 0 ||
        weft_pmi_decode(job, pn->owner.jobid, strlen(job) / 2) != 0 ||
        weft_pmi_decode(addr, pn->owner.addr, pn->owner.addrlen) != 0) {
        return -1;
    }
    return 0;
}

/* No shared memory with other jobs here: every dynamic peer is a network one. */
static int me_needs_net(void)
{
    return weft_dev_hostkey() == 0;
}

/* Our descriptor; with want_net the netmod is opened first (else the
 * address is there only if it is open already). */
static int describe_me(member_t *me, int want_net)
{
    size_t len = ADDR_MAX;
    int    rc  = want_net ? weft_dev_dyn_open() : MPI_SUCCESS;

    memset(me, 0, sizeof(*me));
    if (rc == MPI_SUCCESS && weft_dev.netmod != NULL) {
        rc = weft_dev_dyn_name(me->addr, &len);
        me->addrlen = (uint32_t)len;
    }
    me->uid        = weft_dev_uid();
    me->jobkey     = weft_dev_jobkey();
    me->rank       = weft_runtime.pmi.rank;
    me->node       = weft_dev_host_of(weft_runtime.pmi.rank);
    me->hostkey    = weft_dev_hostkey();
    me->shm_layout = weft_shm_layout_key();
    me->cma        = weft_dev_dyn_cma();
    snprintf(me->jobid, sizeof(me->jobid), "%.*s", WEFT_DEV_JOBID_MAX, weft_runtime.jobid);
    return rc;
}

static void door_name(char *name, size_t len, const char *jobid, uint64_t uid)
{
    snprintf(name, len, "/weft-%.*s-door-%llx", WEFT_DEV_JOBID_MAX, jobid, (unsigned long long)uid);
    for (char *c = name + 1; *c; c++) {
        if (*c == '/') {
            *c = '_';
        }
    }
}

static void door_fini(void)
{
    weft_shm_door_close();
}

int weft_open_port_impl(weft_info_t *info, char *port_name)
{
    (void)info;
    if (port_name == NULL) {
        return weft_error(MPI_ERR_ARG, "argument port_name: NULL pointer");
    }
    return weft_dynproc_open_port(port_name, weft_tunables.PORT_NETMOD != 0);
}

int weft_dynproc_open_port(char *port_name, int want_net)
{
    port_t  *p;
    member_t me;
    char     tok[33], addr[2 * ADDR_MAX + 1], job[2 * WEFT_DEV_JOBID_MAX + 1], door[400];
    unsigned flags = weft_dev.netmod != NULL ? PORT_SPANS : 0;
    int      rc;

    setup();
    rc = describe_me(&me, want_net || me_needs_net());
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (me.hostkey != 0) { /* processes of other jobs on this host knock here */
        door_name(door, sizeof(door), weft_runtime.jobid, me.uid);
        if (weft_shm_door_open(door) != 0) {
            return weft_error(MPI_ERR_OTHER, "cannot create this process's door for "
                                             "connections from this host (%s)", door);
        }
        weft_finalize_register(door_fini);
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
    flags |= me.addrlen > 0 ? PORT_HAS_ADDR : 0;
    hex(p->token, 16, tok);
    hex(me.jobid, strlen(me.jobid), job);
    if (me.addrlen > 0) {
        hex(me.addr, me.addrlen, addr);
    } else {
        strcpy(addr, "-");
    }
    snprintf(port_name, MPI_MAX_PORT_NAME, "weft-port:%x:%s:%llx:%llx:%d:%d:%llx:%llx:%d:%x:%s:%s",
             p->tag, tok, (unsigned long long)me.uid, (unsigned long long)me.jobkey,
             (int)me.rank, (int)me.node, (unsigned long long)me.hostkey,
             (unsigned long long)me.shm_layout, (int)me.cma, flags, job, addr);
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

/* Every member's descriptor, in comm rank order (collective); want_net:
 * this member opens the netmod first. */
static int gather_members(weft_comm_t *comm, int want_net, member_t **all_p)
{
    weft_xgroup_t x;
    member_t      me;
    member_t     *all = malloc(sizeof(member_t) * (size_t)comm->size);
    int           rc;

    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a process table");
    }
    rc = describe_me(&me, want_net || me_needs_net());
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
    int32_t  regather; /* accept side: gather the descriptors again with the netmod open */
    int32_t  pad;
} outcome_t;

/* Share the root's outcome. */
static int share_outcome(weft_comm_t *comm, int root, outcome_t *out)
{
    weft_xgroup_t x;
    int           rc;

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
    return MPI_SUCCESS;
}

/* Map the remote members the root shares, build the intercomm. */
static int finish(weft_comm_t *comm, int root, outcome_t *out, member_t *remote, MPI_Comm *newcomm)
{
    weft_xgroup_t x;
    weft_group_t *rg;
    weft_comm_t  *nc;
    int          *ids = NULL, rc = MPI_SUCCESS;

    weft_xgroup_of_comm(&x, comm);
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
        rc = add_member(&remote[i], &ids[i]);
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

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Accept root: attach the processes that knocked on our door (they sent
 * or will send their CONNECT through the bridge). */
static void door_answer(void)
{
    member_t m;
    int      id;

    while (weft_shm_door_take(&m) == sizeof(m)) {
        /* A failure is printed; that connect then times out. */
        (void)add_member(&m, &id);
    }
}

/* Accept root: some pair of (our members, theirs) needs the netmod where one
 * of ours has no address. */
static int accept_needs_regather(const member_t *mine, int nmine, const member_t *theirs,
                                 int ntheirs)
{
    for (int a = 0; a < nmine; a++) {
        for (int c = 0; mine[a].addrlen == 0 && c < ntheirs; c++) {
            if (pair_needs_net(&mine[a], &theirs[c])) {
                return 1;
            }
        }
    }
    return 0;
}

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
    outcome_t       out  = {MPI_SUCCESS, 0, {0, 0}, 0, 0};
    pending_t      *q    = NULL;
    int             rc, croot = -1;

    (void)info;
    setup();
    if ((rc = gather_members(comm, 0, &mine)) != MPI_SUCCESS ||
        (rc = local_mask(comm, &mask)) != MPI_SUCCESS) {
        free(mine);
        return rc;
    }
    if (comm->rank == root) {
        port_name_t pn;
        port_t     *p  = NULL;
        weft_wait_t w  = {0};

        if (port_name == NULL || parse_port(port_name, &pn) != 0 ||
            pn.owner.uid != weft_dev_uid() || (p = port_find(pn.tag, pn.token)) == NULL) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: \"%.80s\" is not a port "
                                    "open at this process (the root)",
                                    port_name ? port_name : "(null)");
        }
        double deadline = now_s() + timeout;
        while (out.status == MPI_SUCCESS && (q = p->queue) == NULL) {
            door_answer();
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

            p->queue    = q->next;
            out.nremote = q->msg.nmembers;
            remote      = (member_t *)(&q->msg + 1);
            for (int i = 0; i < WEFT_CTX_WORDS; i++) {
                both.w[i] &= mask.w[i];
            }
            out.status = weft_ctx_pick(&both, 2, out.ids);
            if (out.status == MPI_SUCCESS) {
                out.status = add_member(&remote[q->msg.root], &croot);
            }
            if (out.status == MPI_SUCCESS &&
                sizeof(reply_msg_t) + sizeof(member_t) * (size_t)comm->size > max_message()) {
                out.status = weft_error(MPI_ERR_OTHER, "MPI_Comm_accept: a group of %d processes "
                                        "does not fit one handshake message (%zu bytes)",
                                        comm->size, max_message());
            }
            out.regather = out.status == MPI_SUCCESS &&
                           accept_needs_regather(mine, comm->size, remote, out.nremote);
            if (out.status != MPI_SUCCESS && croot >= 0) {
                reject(croot, q->msg.cookie);
            }
        }
    }
    rc = share_outcome(comm, root, &out);
    if (rc == MPI_SUCCESS && out.regather) {
        /* Some pair spans hosts where we had no address: open the netmod. */
        free(mine);
        mine = NULL;
        rc   = gather_members(comm, 1, &mine);
    }
    if (comm->rank == root && rc == MPI_SUCCESS) {
        size_t       nrep = sizeof(reply_msg_t) + sizeof(member_t) * (size_t)comm->size;
        reply_msg_t *rep  = malloc(nrep);

        if (rep == NULL) {
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a handshake reply");
        } else {
            rep->magic    = PORT_MAGIC;
            rep->cookie   = q->msg.cookie;
            rep->status   = MPI_SUCCESS;
            rep->nmembers = comm->size;
            rep->ids[0]   = out.ids[0];
            rep->ids[1]   = out.ids[1];
            memcpy(rep + 1, mine, sizeof(member_t) * (size_t)comm->size);
            rc = am_to(croot, AM_REPLY, rep, nrep, 0);
            free(rep);
        }
    }
    /* A failure after the outcome was shared leaves the others to find the
     * intercomm unusable (the connect side times out). */
    if (rc == MPI_SUCCESS) {
        rc = finish(comm, root, &out, remote, newcomm);
    }
    free(q);
    free(mine);
    return rc;
}

int weft_comm_connect_impl(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                           MPI_Comm *newcomm)
{
    return weft_dynproc_connect(port_name, info, root, comm, (double)weft_tunables.CONNECT_TIMEOUT,
                                newcomm);
}

/* What the connect root tells its group about the port before they
 * describe themselves. */
typedef struct {
    int32_t  ok;      /* the name parsed */
    uint32_t flags;   /* PORT_* */
    uint64_t hostkey; /* the owner's */
    uint64_t layout;
} port_facts_t;

/* Connect root on the owner's host: hand it our descriptor through its
 * door, so it attaches our bridge (retried while the door is full). */
static int knock(const port_name_t *pn, const member_t *me, double deadline)
{
    char        door[400], jobid[sizeof(pn->owner.jobid)];
    weft_wait_t w = {0};

    memcpy(jobid, pn->owner.jobid, sizeof(jobid));
    jobid[sizeof(jobid) - 1] = '\0';
    door_name(door, sizeof(door), jobid, pn->owner.uid);
    while (weft_shm_door_knock(door, me, sizeof(*me)) != 0) {
        if (now_s() > deadline) {
            return weft_error(MPI_ERR_PORT, "the port's process has no door open on this host "
                              "(%s): port closed or process gone", door);
        }
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    return MPI_SUCCESS;
}

int weft_dynproc_connect(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                         double timeout, MPI_Comm *newcomm)
{
    weft_ctx_mask_t mask;
    weft_xgroup_t   x;
    member_t       *mine = NULL, *remote = NULL;
    outcome_t       out  = {MPI_SUCCESS, 0, {0, 0}, 0, 0};
    port_facts_t    facts = {0, 0, 0, 0};
    port_name_t     pn;
    int             rc, want_net;

    (void)info;
    setup();
    if (comm->rank == root && port_name != NULL && parse_port(port_name, &pn) == 0) {
        facts.ok      = 1;
        facts.flags   = pn.flags;
        facts.hostkey = pn.owner.hostkey;
        facts.layout  = pn.owner.shm_layout;
    }
    weft_xgroup_of_comm(&x, comm);
    rc = weft_x_bcast(&x, &facts, sizeof(facts), root, WEFT_XTAG_DYNPROC + 6);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    /* We need an address when the owner's side may have members elsewhere,
     * or when we are not on the owner's host. */
    want_net = (facts.flags & PORT_HAS_ADDR) &&
               ((facts.flags & PORT_SPANS) || facts.hostkey == 0 ||
                facts.hostkey != weft_dev_hostkey() || facts.layout != weft_shm_layout_key());
    if ((rc = gather_members(comm, want_net, &mine)) != MPI_SUCCESS ||
        (rc = local_mask(comm, &mask)) != MPI_SUCCESS) {
        free(mine);
        return rc;
    }
    if (comm->rank == root) {
        int            aroot = -1;
        size_t         len   = sizeof(connect_msg_t) + sizeof(member_t) * (size_t)comm->size;
        connect_msg_t *c     = NULL;
        double         deadline = now_s() + timeout;

        if (!facts.ok) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: \"%.80s\" is not a port "
                                    "name", port_name ? port_name : "(null)");
        } else if (len > max_message()) {
            out.status = weft_error(MPI_ERR_OTHER, "MPI_Comm_connect: a group of %d processes "
                                    "does not fit one handshake message (%zu bytes)", comm->size,
                                    max_message());
        } else if ((c = malloc(len)) == NULL) {
            out.status = weft_error(MPI_ERR_NO_MEM, "no memory for a handshake message");
        } else if (pn.owner.uid == weft_dev_uid()) {
            out.status = weft_error(MPI_ERR_PORT, "argument port_name: the port is this "
                                    "process's own (connect and accept need two processes)");
        } else {
            /* Another job's process on this host: knock first, so a port
             * whose process is gone fails before any bridge is made. */
            if (pn.owner.jobkey != weft_dev_jobkey() && !pair_needs_net(&mine[root], &pn.owner)) {
                out.status = knock(&pn, &mine[root], deadline);
            }
            if (out.status == MPI_SUCCESS) {
                out.status = add_member(&pn.owner, &aroot);
            }
        }
        if (out.status == MPI_SUCCESS) {
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
    }
    rc = share_outcome(comm, root, &out);
    if (rc == MPI_SUCCESS) {
        rc = finish(comm, root, &out, remote, newcomm);
    }
    free(dp.reply);
    dp.reply = NULL;
    free(mine);
    return rc;
}

/* ---- disconnect -------------------------------------------------------- */

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
            if (rc == WEFT_ERR_PROC_LOST && weft_comm_first_lost(c) >= 0) {
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
