/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Peer table, active-message table and the core side of the netmod.
 */
#include "core/dev/peer.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/errors.h"
#include "core/mpit/pvar.h"
#include "core/progress.h"
#include "core/runtime.h"
#include "pmi/pmi_shm.h"
#include "transport/shm/shm.h"
#include "util/log.h"
#include "util/tunables.h"

weft_dev_t           weft_dev;
weft_am_handler_fn_t weft_am_handlers[WEFT_AM_TABLE_SIZE];

static unsigned char *uses_netmod;

/* Processes of other jobs: identity per id >= size (index id - size). */
typedef struct {
    uint64_t uid, jobkey;
    int      job_rank, node;
} dyn_ident_t;

static struct {
    uint64_t     uid, jobkey, hostkey;
    dyn_ident_t *ident;
    size_t       max_payload; /* what the netmod was (or would be) started with */
    size_t       eager_limit;
    int          want_rma;
    void       (*rma_done)(void *cookie, size_t len, int err);
    int        (*grow)(int nprocs);
} dyn;

/* The host of a job rank: the PMI node id, or for namespace tests
 * (WEFT_TEST_HOST_BLOCK=N) blocks of N consecutive ranks. */
static int host_of(const weft_pmi_info_t *pmi, int world)
{
    if (weft_tunables.TEST_HOST_BLOCK > 0) {
        return world / (int)weft_tunables.TEST_HOST_BLOCK;
    }
    return pmi->node_of_rank ? pmi->node_of_rank[world] : 0;
}

static void am_corrupt(int world, const weft_am_t *msg)
{
    char why[160];

    snprintf(why, sizeof(why), "corrupt message (unknown type %u) from rank %d on host %d",
             msg->type, world, weft_dev_host_of(world));
    weft_runtime_abort(MPI_ERR_INTERN, why);
}

void weft_am_register(int id, weft_am_handler_fn_t fn)
{
    weft_am_handlers[id] = fn ? fn : am_corrupt;
}

int weft_dev_host_of(int world)
{
    return weft_dev.peers[world].node_id;
}

/* ---- lost processes ---------------------------------------------------- */

#define MAX_LOSS_HOOKS 4

static struct {
    weft_peer_lost_fn_t hooks[MAX_LOSS_HOOKS];
    int                 nhooks;
    char              **why;       /* per process id: the evidence, NULL while alive */
    int                 why_len;
    unsigned char      *done;      /* per process id: hooks have run */
    int                 done_len;
    /* Processes on this host watched for their exit, by pidfd (or by
     * kill(pid, 0) without pidfds): the job's local peers from init, and
     * processes of other jobs from their bridge's attach until disconnect.
     * fds[i] goes with watched[i]; a pid of 0 is not known yet (a bridge
     * peer that has not attached), read again at each check. */
    struct pollfd      *fds;
    struct {
        int   id, shm_index;
        pid_t pid;
    }                  *watched;
    int                 nwatched, watch_cap;
    int64_t             next_check_ms;
} loss;

void weft_dev_on_peer_lost(weft_peer_lost_fn_t fn)
{
    if (loss.nhooks < MAX_LOSS_HOOKS) {
        loss.hooks[loss.nhooks++] = fn;
    }
}

static int grow_bytes(void **arr, int *len, int want, size_t elem)
{
    if (want <= *len) {
        return 0;
    }
    void *p = realloc(*arr, (size_t)want * elem);
    if (p == NULL) {
        return -1;
    }
    memset((char *)p + (size_t)*len * elem, 0, (size_t)(want - *len) * elem);
    *arr = p;
    *len = want;
    return 0;
}

void weft_dev_peer_lost(int world, const char *why)
{
    if (world == weft_dev.me) {
        /* Our own endpoint broke: nothing can be reached any more. */
        char msg[512];
        snprintf(msg, sizeof(msg), "the network module failed on rank %d: %s", world, why);
        weft_runtime_abort(MPI_ERR_OTHER, msg);
    }
    if (world < 0 || world >= weft_dev.nprocs || weft_dev.peers[world].failed) {
        return;
    }
    weft_dev.peers[world].failed = 1;
    weft_dev.nfailed++;
    weft_dev.nfailed_job += world < weft_dev.size;
    weft_dev.loss_due = 1;
    if (grow_bytes((void **)&loss.why, &loss.why_len, weft_dev.nprocs, sizeof(char *)) == 0) {
        loss.why[world] = strdup(why);
    }
    if (world >= weft_dev.size) {
        weft_log_warn("lost contact with a process of another job (rank %d of that job): %s",
                      dyn.ident[world - weft_dev.size].job_rank, why);
    } else {
        weft_log_warn("lost contact with rank %d on host %d: %s", world, weft_dev_host_of(world),
                      why);
    }
}

static void peer_lost(int world, const char *why)
{
    weft_dev_peer_lost(world, why);
}

void weft_dev_handle_losses(void)
{
    weft_dev.loss_due = 0;
    if (grow_bytes((void **)&loss.done, &loss.done_len, weft_dev.nprocs, 1) != 0) {
        weft_dev.loss_due = 1; /* no memory: try again next poll */
        return;
    }
    for (int w = 0; w < weft_dev.nprocs; w++) {
        if (weft_dev.peers[w].failed && !loss.done[w]) {
            loss.done[w] = 1;
            if (weft_dev.netmod != NULL) {
                weft_dev.netmod->dyn_forget(w); /* nothing more to or from it */
            }
            for (int h = 0; h < loss.nhooks; h++) {
                loss.hooks[h](w);
            }
        }
    }
}

int weft_dev_lost_error(int world, int comm_rank)
{
    const char *why = world >= 0 && world < loss.why_len && loss.why[world] ? loss.why[world]
                                                                            : "lost";
    char        who[96];

    if (world >= weft_dev.size && world < weft_dev.nprocs) {
        snprintf(who, sizeof(who), "rank %d of another job (host %d of that job)",
                 dyn.ident[world - weft_dev.size].job_rank, dyn.ident[world - weft_dev.size].node);
    } else {
        snprintf(who, sizeof(who), "rank %d on host %d", world, weft_dev_host_of(world));
    }
    if (comm_rank >= 0) {
        return weft_error(WEFT_ERR_PROC_LOST, "lost contact with %s (rank %d in this "
                          "communicator): %s", who, comm_rank, why);
    }
    return weft_error(WEFT_ERR_PROC_LOST, "lost contact with %s: %s", who, why);
}

static int pidfd_open_of(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

int weft_dev_watch_add(int id, int shm_index)
{
    if (loss.nwatched == loss.watch_cap) {
        int   cap = loss.watch_cap ? 2 * loss.watch_cap : 8;
        void *f   = realloc(loss.fds, sizeof(*loss.fds) * (size_t)cap);
        if (f == NULL) {
            return -1;
        }
        loss.fds = f;
        void *w  = realloc(loss.watched, sizeof(*loss.watched) * (size_t)cap);
        if (w == NULL) {
            return -1;
        }
        loss.watched   = w;
        loss.watch_cap = cap;
    }
    int i = loss.nwatched++;
    loss.watched[i].id        = id;
    loss.watched[i].shm_index = shm_index;
    loss.watched[i].pid       = 0;
    loss.fds[i].fd            = -1;
    loss.fds[i].events        = POLLIN;
    loss.fds[i].revents       = 0;
    return 0;
}

void weft_dev_watch_remove(int id)
{
    for (int i = 0; i < loss.nwatched; i++) {
        if (loss.watched[i].id == id) {
            if (loss.fds[i].fd >= 0) {
                close(loss.fds[i].fd);
            }
            loss.nwatched--;
            loss.fds[i]     = loss.fds[loss.nwatched];
            loss.watched[i] = loss.watched[loss.nwatched];
            return;
        }
    }
}

void weft_dev_watch_init(void)
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;

    for (int i = 0; i < pmi->local_size; i++) {
        if (pmi->local_ranks[i] != pmi->rank && weft_dev_watch_add(pmi->local_ranks[i], i) != 0) {
            return; /* unwatched: only the netmod and the launcher notice losses */
        }
    }
}

/* Learn a watched process's pid once it is known: a process of another job
 * writes its pid into the bridge when it attaches. Returns 0 while unknown. */
static pid_t watched_pid(int i)
{
    if (loss.watched[i].pid == 0) {
        pid_t pid = weft_shm_peer_pid(loss.watched[i].shm_index);
        if (pid <= 0) {
            return 0;
        }
        loss.watched[i].pid = pid;
        loss.fds[i].fd      = pidfd_open_of(pid); /* -1: poll skips it; kill() checks */
        if (loss.fds[i].fd < 0 && errno == ESRCH) {
            loss.fds[i].revents = POLLHUP; /* gone already */
        }
    }
    return loss.watched[i].pid;
}

static void launcher_reported(int rank)
{
    if (rank >= 0 && rank < weft_dev.size && rank != weft_dev.me) {
        weft_dev_peer_lost(rank, "its process ended without finalizing (reported by the launcher)");
    }
}

void weft_dev_watch_peers(void)
{
    struct timespec ts;
    int64_t         now;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    now = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
    if (now < loss.next_check_ms) {
        return;
    }
    loss.next_check_ms = now + (weft_tunables.PEER_CHECK_INTERVAL > 0
                                    ? weft_tunables.PEER_CHECK_INTERVAL : 100);
    weft_pmi_lost_poll(launcher_reported);
    if (loss.nwatched == 0) {
        return;
    }
    for (int i = 0; i < loss.nwatched; i++) {
        loss.fds[i].revents = 0;
        (void)watched_pid(i);
    }
    if (poll(loss.fds, (nfds_t)loss.nwatched, 0) < 0) {
        return;
    }
    for (int i = 0; i < loss.nwatched; i++) {
        int   w   = loss.watched[i].id;
        pid_t pid = loss.watched[i].pid;
        char  why[96];

        if (pid == 0 || weft_dev.peers[w].failed) {
            continue;
        }
        /* A pidfd is readable once the process has exited; without one, a
         * reaped process is gone for kill(). */
        if ((loss.fds[i].revents & (POLLIN | POLLHUP)) ||
            (loss.fds[i].fd < 0 && kill(pid, 0) != 0 && errno == ESRCH)) {
            snprintf(why, sizeof(why), "its process (pid %d) exited", (int)pid);
            weft_dev_peer_lost(w, why);
        }
    }
}

static void watch_fini(void)
{
    for (int i = 0; i < loss.nwatched; i++) {
        if (loss.fds[i].fd >= 0) {
            close(loss.fds[i].fd);
        }
    }
    for (int i = 0; i < loss.why_len; i++) {
        free(loss.why[i]);
    }
    free(loss.why);
    free(loss.done);
    free(loss.fds);
    free(loss.watched);
    memset(&loss, 0, sizeof(loss));
}

int weft_dev_peers_init(void)
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;

    for (int i = 0; i < WEFT_AM_TABLE_SIZE; i++) {
        weft_am_handlers[i] = am_corrupt;
    }
    weft_dev.me     = pmi->rank;
    weft_dev.size   = pmi->size;
    weft_dev.nprocs = pmi->size;
    weft_dev.peers  = calloc((size_t)pmi->size, sizeof(weft_peer_t));
    uses_netmod     = calloc((size_t)pmi->size, 1);
    if (weft_dev.peers == NULL || uses_netmod == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the peer table");
    }
    int my_host = host_of(pmi, pmi->rank);
    for (int w = 0; w < pmi->size; w++) {
        weft_dev.peers[w].shm_index = -1;
        weft_dev.peers[w].node_id   = host_of(pmi, w);
        uses_netmod[w] = w != pmi->rank &&
                         (weft_tunables.NETMOD_ONLY || weft_dev.peers[w].node_id != my_host);
    }
    for (int i = 0; i < pmi->local_size; i++) {
        weft_peer_t *p = &weft_dev.peers[pmi->local_ranks[i]];
        p->shm_index   = i;
        /* Ourselves: neither (self-sends are matched directly). */
        p->is_local    = !uses_netmod[pmi->local_ranks[i]] && pmi->local_ranks[i] != pmi->rank;
    }
    return MPI_SUCCESS;
}

int weft_dev_netmod_init(size_t max_payload, size_t eager_limit, int want_rma,
                         void (*rma_done)(void *cookie, size_t len, int err))
{
    const weft_pmi_info_t *pmi = &weft_runtime.pmi;
    weft_transport_init_t  args;

    dyn.max_payload = max_payload;
    dyn.eager_limit = eager_limit;
    dyn.want_rma    = want_rma;
    dyn.rma_done    = rma_done;
    /* Every rank must take part in the netmod's PMI exchange, or none:
     * decide from job-wide facts only (is any rank on another host than
     * rank 0?). */
    int hosts = 0;
    for (int w = 1; w < pmi->size && !hosts; w++) {
        hosts = host_of(pmi, w) != host_of(pmi, 0);
    }
    if (!weft_tunables.NETMOD_ONLY && !hosts) {
        return MPI_SUCCESS;
    }
    if (weft_ofi_ops.size != sizeof(weft_transport_ops_t)) {
        return weft_error(MPI_ERR_INTERN, "netmod %s was built against another transport.h",
                          weft_ofi_ops.name);
    }
    args.pmi         = pmi;
    args.handlers    = weft_am_handlers;
    args.uses_netmod = uses_netmod;
    args.provider    = weft_tunables.OFI_PROVIDER;
    args.max_payload = max_payload;
    args.eager_limit = eager_limit;
    args.peer_lost   = peer_lost;
    args.want_rma    = want_rma;
    /* blocking waits and the progress thread sleep on the fabric's fd */
    args.want_wait   = weft_tunables.WAIT_POLICY == 3 || weft_tunables.ASYNC_PROGRESS;
    args.rma_done    = rma_done;
    args.uid         = weft_dev_uid();
    if (weft_ofi_ops.init(&args) != WEFT_OK) {
        return weft_error(MPI_ERR_OTHER, "the network module (libfabric) failed to start");
    }
    weft_dev.netmod = &weft_ofi_ops;
    return MPI_SUCCESS;
}

void weft_dev_fini(void)
{
    if (weft_dev.netmod) {
        weft_dev.netmod->fini();
        weft_dev.netmod = NULL;
    }
    watch_fini();
    weft_dev.nfailed     = 0;
    weft_dev.nfailed_job = 0;
    weft_dev.loss_due    = 0;
    free(weft_dev.peers);
    free(uses_netmod);
    free(dyn.ident);
    dyn.ident      = NULL;
    weft_dev.peers = NULL;
    uses_netmod    = NULL;
}

static void net_failed(int world, weft_status_t st)
{
    peer_lost(world, st == WEFT_UNREACHABLE ? "unreachable" : "network send failed");
}

void *weft_dev_net_reserve(int world, size_t len)
{
    return weft_dev.netmod->am_reserve(world, len);
}

void weft_dev_net_commit(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                         size_t len)
{
    weft_status_t st = weft_dev.netmod->am_commit(world, type, tag, context, src, len);

    WEFT_PVAR_INC(NETMOD_AMS_SENT);
    WEFT_PVAR_ADD(NETMOD_BYTES_SENT, len);

    if (st != WEFT_OK) {
        net_failed(world, st);
    }
}

int weft_dev_net_send(int world, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                      const void *payload, size_t len)
{
    void *p = weft_dev.netmod->am_reserve(world, len);

    if (p == NULL) {
        return -1;
    }
    if (len) {
        memcpy(p, payload, len);
    }
    weft_dev_net_commit(world, type, tag, context, src, len);
    return 0;
}

/* ---- processes of other jobs ----------------------------------------- */

uint64_t weft_dev_uid(void)
{
    while (dyn.uid == 0) {
        int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, &dyn.uid, sizeof(dyn.uid)) != (ssize_t)sizeof(dyn.uid)) {
            /* No urandom: uniqueness (not secrecy) is all a uid needs. */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            dyn.uid = ((uint64_t)getpid() << 40) ^ (uint64_t)ts.tv_nsec ^
                      ((uint64_t)ts.tv_sec << 20);
        }
        if (fd >= 0) {
            close(fd);
        }
    }
    return dyn.uid;
}

uint64_t weft_dev_jobkey(void)
{
    if (dyn.jobkey == 0) {
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
        for (const char *c = weft_runtime.jobid; *c; c++) {
            h = (h ^ (unsigned char)*c) * 0x100000001b3ull;
        }
        dyn.jobkey = h ? h : 1;
    }
    return dyn.jobkey;
}

int weft_dev_dyn_open(void)
{
    const weft_transport_ops_t *ops = &weft_ofi_ops;
    weft_transport_init_t       args;

    if (weft_dev.netmod != NULL) {
        return MPI_SUCCESS;
    }
    if (ops->size != sizeof(weft_transport_ops_t)) {
        return weft_error(MPI_ERR_INTERN, "netmod %s was built against another transport.h",
                          ops->name);
    }
    memset(&args, 0, sizeof(args));
    args.pmi         = &weft_runtime.pmi;
    args.handlers    = weft_am_handlers;
    args.uses_netmod = uses_netmod; /* all 0: the job's ranks stay on shm */
    args.provider    = weft_tunables.OFI_PROVIDER;
    args.max_payload = dyn.max_payload;
    args.eager_limit = dyn.eager_limit;
    args.peer_lost   = peer_lost;
    args.want_rma    = dyn.want_rma;
    args.rma_done    = dyn.rma_done;
    args.uid         = weft_dev_uid();
    if (ops->dyn_open(&args) != WEFT_OK) {
        return weft_error(MPI_ERR_OTHER, "the network module (libfabric) failed to start: it is "
                                         "needed to reach processes of other jobs");
    }
    weft_dev.netmod = ops;
    return MPI_SUCCESS;
}

int weft_dev_dyn_name(void *name, size_t *len)
{
    if (weft_dev.netmod == NULL || weft_dev.netmod->dyn_name(name, len) != WEFT_OK) {
        return weft_error(MPI_ERR_OTHER, "cannot read this process's network address");
    }
    return MPI_SUCCESS;
}

void weft_dev_identity(int id, uint64_t *jobkey_p, int *job_rank_p)
{
    if (id < weft_dev.size) {
        *jobkey_p   = weft_dev_jobkey();
        *job_rank_p = id;
    } else {
        *jobkey_p   = dyn.ident[id - weft_dev.size].jobkey;
        *job_rank_p = dyn.ident[id - weft_dev.size].job_rank;
    }
}

int weft_dev_process_cmp(int a, int b)
{
    uint64_t ka, kb;
    int      ra, rb;

    weft_dev_identity(a, &ka, &ra);
    weft_dev_identity(b, &kb, &rb);
    if (ka != kb) {
        return ka < kb ? -1 : 1;
    }
    return ra < rb ? -1 : ra > rb;
}

void weft_dev_set_grow_hook(int (*fn)(int nprocs))
{
    dyn.grow = fn;
}

/* Node number for node `node` of another job: shared by the processes of
 * that job on that node, distinct from our own node ids. */
static int foreign_node(uint64_t jobkey, int node)
{
    int next = 1 << 24;

    for (int i = 0; i < weft_dev.nprocs - weft_dev.size; i++) {
        if (dyn.ident[i].jobkey == jobkey && dyn.ident[i].node == node) {
            return weft_dev.peers[weft_dev.size + i].node_id;
        }
        if (weft_dev.peers[weft_dev.size + i].node_id >= next) {
            next = weft_dev.peers[weft_dev.size + i].node_id + 1;
        }
    }
    return next;
}

/* Hash of the facts that make two processes share memory and pids. */
static void hash_in(uint64_t *h, const void *data, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        *h = (*h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
    }
}

uint64_t weft_dev_hostkey(void)
{
    static const char *const paths[] = {"/dev/shm", "/proc/self/ns/net", "/proc/self/ns/pid",
                                        "/proc/self/ns/ipc"};
    char                     boot[64] = "";
    uid_t                    me       = getuid();
    struct stat              st;
    uint64_t                 h        = 0xcbf29ce484222325ull;
    int                      fd;

    if (weft_tunables.NETMOD_ONLY || !weft_tunables.DYN_SHM ||
        strlen(weft_runtime.jobid) > WEFT_DEV_JOBID_MAX) {
        return 0;
    }
    if (dyn.hostkey != 0) {
        return dyn.hostkey;
    }
    fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot, sizeof(boot) - 1);
        boot[n > 0 ? n : 0] = '\0';
        close(fd);
    }
    hash_in(&h, boot, strlen(boot));
    hash_in(&h, weft_runtime.processor_name, strlen(weft_runtime.processor_name));
    hash_in(&h, &me, sizeof(me));
    for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
        if (stat(paths[i], &st) == 0) {
            hash_in(&h, &st.st_dev, sizeof(st.st_dev));
            hash_in(&h, &st.st_ino, sizeof(st.st_ino));
        }
    }
    dyn.hostkey = h ? h : 1;
    return dyn.hostkey;
}

int weft_dev_dyn_cma(void)
{
    /* Our job's probe says whether single copy works between its ranks;
     * Yama's ptrace_scope >= 1 also refuses it between unrelated processes
     * (the ranks of two jobs), which a lone rank's probe of itself misses. */
    char c   = '0';
    int  fd  = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);

    if (fd >= 0) {
        if (read(fd, &c, 1) != 1) {
            c = '1';
        }
        close(fd);
    }
    return weft_tunables.SMP_USE_CMA && weft_shm_cma_enabled() && c == '0';
}

/* Attach the bridge of us and proc as process id; the side with the lower
 * uid names it (under its job's prefix, which its launcher cleans). */
static int bridge_attach(const weft_dev_proc_t *proc, int id)
{
    char     name[200];
    int      side = weft_dev_uid() < proc->uid ? 0 : 1;
    uint64_t u0   = side == 0 ? weft_dev_uid() : proc->uid;
    uint64_t u1   = side == 0 ? proc->uid : weft_dev_uid();

    snprintf(name, sizeof(name), "/weft-%.63s-br-%llx-%llx",
             side == 0 ? weft_runtime.jobid : proc->jobid, (unsigned long long)u0,
             (unsigned long long)u1);
    for (char *c = name + 1; *c; c++) {
        if (*c == '/') {
            *c = '_';
        }
    }
    int k = weft_shm_bridge_attach(name, side, id, proc->cma && weft_dev_dyn_cma());
    if (k < 0) {
        return weft_error(MPI_ERR_OTHER, "cannot set up shared memory with a process of "
                                         "another job on this host");
    }
    if (weft_dev_watch_add(id, k) != 0) {
        return weft_error(MPI_ERR_NO_MEM, "no memory to watch a process of another job");
    }
    return k;
}

int weft_dev_add_process(const weft_dev_proc_t *proc, int *id_p)
{
    int          id = weft_dev.nprocs, rc, local;
    weft_peer_t *peers;
    dyn_ident_t *ident;

    if (proc->jobkey == weft_dev_jobkey() && proc->job_rank >= 0 &&
        proc->job_rank < weft_dev.size) {
        *id_p = proc->job_rank;
        return MPI_SUCCESS;
    }
    for (int i = weft_dev.size; i < weft_dev.nprocs; i++) {
        if (dyn.ident[i - weft_dev.size].uid == proc->uid) {
            *id_p = i;
            return MPI_SUCCESS;
        }
    }
    local = proc->hostkey != 0 && proc->hostkey == weft_dev_hostkey() &&
            proc->shm_layout == weft_shm_layout_key() && proc->jobid != NULL;
    if (!local) {
        if (proc->addrlen == 0) {
            return weft_error(MPI_ERR_OTHER, "a process of another job (rank %d of it) is on "
                              "another host but has no network address: its job opened no "
                              "network module (WEFT_DYN_SHM=0 makes every process of a "
                              "dynamic connection open it)", proc->job_rank);
        }
        rc = weft_dev_dyn_open();
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    peers = realloc(weft_dev.peers, sizeof(*peers) * (size_t)(id + 1));
    if (peers == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the process table");
    }
    weft_dev.peers = peers;
    ident = realloc(dyn.ident, sizeof(*ident) * (size_t)(id + 1 - weft_dev.size));
    if (ident == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for the process table");
    }
    dyn.ident = ident;
    if (dyn.grow != NULL && (rc = dyn.grow(id + 1)) != MPI_SUCCESS) {
        return rc;
    }
    peers[id].is_local  = 0;
    peers[id].shm_index = -1;
    if (local) {
        int k = bridge_attach(proc, id);
        if (k < 0) {
            return k;
        }
        peers[id].is_local  = 1;
        peers[id].shm_index = k;
    } else if (weft_dev.netmod->dyn_add_peer(id, proc->addr, proc->addrlen, proc->uid) !=
               WEFT_OK) {
        return weft_error(MPI_ERR_OTHER, "cannot add the network address of a process of "
                                         "another job");
    }
    peers[id].node_id   = foreign_node(proc->jobkey, proc->node);
    peers[id].failed    = 0;
    ident[id - weft_dev.size].uid      = proc->uid;
    ident[id - weft_dev.size].jobkey   = proc->jobkey;
    ident[id - weft_dev.size].job_rank = proc->job_rank;
    ident[id - weft_dev.size].node     = proc->node;
    weft_dev.nprocs = id + 1;
    *id_p           = id;
    return MPI_SUCCESS;
}

void weft_dev_forget_process(int id)
{
    if (id < weft_dev.size) {
        return;
    }
    if (weft_dev.peers[id].is_local) {
        /* The bridge stays mapped until finalize: the process may be in
         * other communicators still; its exit is no longer news. */
        weft_dev_watch_remove(id);
    } else if (weft_dev.netmod != NULL) {
        weft_dev.netmod->dyn_forget(id);
    }
}
