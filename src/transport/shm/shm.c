/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Segment layout (one per node, created by local rank 0, unlinked as soon as
 * every local rank has mapped it):
 *   [rank_ctl x n] [ring (s->r) x n*n] [pipe (s->r) x n*n]
 * A ring is a control line (the receiver's consumed counter) followed by
 * units of WEFT_SHM_UNIT bytes (shm.h: tiny messages take one, longer ones
 * whole lines). A message occupies consecutive units and never wraps: when it
 * would not fit before the end, the sender writes a SKIP marker and starts
 * over at unit 0. A message is visible when its header's seq word equals its
 * unit position + 1 (written last, with release ordering). The receiver
 * always knows where the next header is; what it must never see there is a
 * stale word from an earlier lap, and since earlier laps put *payload* (user
 * data) in that unit, any value could be there. So before publishing a
 * message the sender poisons the seq word of the unit right after it with a
 * value that cannot be expected at that position (the expected value with
 * its top bit flipped): the receiver's next header position holds either
 * poison or the real header.
 */
#include "transport/shm/shm.h"
#include "transport/shm/shm_coll.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "util/cache.h"
#include "util/fence.h"
#include "util/log.h"

#include "transport/shm/shm_internal.h"

shm_state_t weft_shm_state;

static volatile uint64_t cma_probe_word;
static char cost_probe_area[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
static weft_shm_costs_t costs;

static long futex_op(uint32_t *addr, int op, uint32_t val, const struct timespec *ts)
{
    return syscall(SYS_futex, addr, op, val, ts, NULL, 0);
}

static socklen_t bell_address(int local, struct sockaddr_un *a)
{
    int n;

    memset(a, 0, sizeof(*a));
    a->sun_family = AF_UNIX;
    if (local < shm.n) {
        n = snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1, "%s-%d", shm.bell_name, local);
    } else { /* a process of another job: the name it wrote into the bridge */
        struct shm_dyn *d    = &shm.dyn[local - shm.n];
        const char     *name = d->hdr->bell[1 - d->side];
        n = (int)strnlen(name, sizeof(d->hdr->bell[0]) - 1);
        if (n == 0) {
            return 0;
        }
        memcpy(a->sun_path + 1, name, (size_t)n);
    }
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)n);
}

static void wake_peer(int peer)
{
    shm_rank_ctl_t *c = peer_ctl(peer);

    weft_full_fence();
    uint32_t how = __atomic_load_n(&c->sleeping, __ATOMIC_RELAXED);
    if (how == SLEEP_FUTEX) {
        __atomic_fetch_add(&c->futex, 1, __ATOMIC_SEQ_CST);
        futex_op(&c->futex, FUTEX_WAKE, 1, NULL);
    } else if (how == SLEEP_FD) {
        struct sockaddr_un a;
        socklen_t          alen = bell_address(peer, &a);
        if (alen == 0) {
            return;
        }
        char               byte = 0;
        if (shm.bell_out < 0) {
            shm.bell_out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        }
        /* A full socket already holds a wake; a failure leaves the sleeper
         * to its timeout. */
        (void)sendto(shm.bell_out, &byte, 1, MSG_DONTWAIT, (struct sockaddr *)&a, alen);
    }
}

static int cma_probe(int peer)
{
    uint64_t     value = 0;
    struct iovec l = {&value, sizeof(value)};
    struct iovec r = {(void *)(uintptr_t)shm.ctl[peer].probe_addr, sizeof(value)};

    if (process_vm_readv(shm.ctl[peer].pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(value)) {
        return 0;
    }
    return value == (0x5765667400000000ull | (uint32_t)shm.ctl[peer].pid);
}

/* The first pass through a ring allocates its pages one fault at a time,
 * ~2.5 us each on the KVM machines here (1 MiB takes 0.7 ms), and that
 * lands on the first few thousand small messages a job sends: np 2 bw at
 * 256 B measured 1.0 GB/s with 1 MiB rings in a short run against 2.2 warm.
 * A thread allocates this rank's outgoing rings at once instead, beside the
 * job's start, and ends (fini stops it and waits). Not where local ranks
 * outnumber the CPUs (config->prefault_rings): there it delays the ranks
 * still starting. */
typedef struct {
    char  *rings;  /* this rank's outgoing rings, one per local rank */
    size_t stride;
    int    n, me;
} prefault_job_t;

/* Map the whole pages of [start, start + bytes) in page-aligned pieces, so
 * that fini can stop it: a job that ends early does not wait for rings it
 * never used. */
static void prefault_range(char *start, size_t bytes)
{
    const uintptr_t piece = 64 << 10;
    uintptr_t       page  = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t       from  = ((uintptr_t)start + page - 1) & ~(page - 1);
    uintptr_t       to    = ((uintptr_t)start + bytes) & ~(page - 1);

    for (; from < to && !__atomic_load_n(&shm.prefault_stop, __ATOMIC_ACQUIRE); from += piece) {
        weft_shm_region_prefault((void *)from, to - from > piece ? piece : to - from);
    }
}

static void *prefault_rings(void *arg)
{
    prefault_job_t *j = arg;
    for (int p = 0; p < j->n; p++) {
        if (p != j->me) { /* messages to self do not use the ring */
            prefault_range(j->rings + j->stride * (size_t)p, j->stride);
        }
    }
    free(j);
    __atomic_store_n(&shm.prefault_done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void prefault_start(char *rings, size_t stride)
{
    prefault_job_t *j = malloc(sizeof(*j));

    if (j == NULL) {
        return;
    }
    pthread_t      t;
    pthread_attr_t attr;

    *j                = (prefault_job_t){rings, stride, shm.n, shm.me};
    shm.prefault_done = 0;
    shm.prefault_stop = 0;
    /* Detached: nobody needs its result, only to know it is done before the
     * rings go (fini); a joinable thread still unjoined when the
     * application forks counts as leaked in the child (ThreadSanitizer
     * reports it there). */
    shm.prefaulting = pthread_attr_init(&attr) == 0;
    if (shm.prefaulting) {
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        shm.prefaulting = pthread_create(&t, &attr, prefault_rings, j) == 0;
        pthread_attr_destroy(&attr);
    }
    if (!shm.prefaulting) {
        free(j);
    }
}

/* ---- start-up without a job-wide barrier ---------------------------------
 *
 * A rank waits at init only for what it uses: local rank 0's segment, and
 * the costs local rank 0 measures with a partner (attach). It does not wait for
 * the other local ranks: on a node with more ranks than cores they are
 * started one after another, and a barrier made every MPI_Init last until
 * the last one ran (2 ms at 2 ranks, 13-18 ms at 16 on 2 cores). Nothing
 * needs them there: rings and doorbells start zeroed (an empty ring), a
 * message sent to a rank not yet attached waits in its ring, a sleeping
 * flag that is not set yet wakes nobody, and peer watching learns a pid
 * once it is written (weft_shm_peer_pid). */

/* Sleep while *word == old: these waits are for another process's start-up,
 * which on an oversubscribed node needs our CPU. */
static void wait_word_change(uint32_t *word, uint32_t old)
{
    for (int spins = 0; __atomic_load_n(word, __ATOMIC_ACQUIRE) == old; spins++) {
        if (spins < 4) { /* yielding keeps us runnable, beside the rank we wait for */
            sched_yield();
            continue;
        }
        /* Woken by wake_word; the timeout only bounds a missed wake-up. */
        struct timespec ts = {0, 1000000};
        futex_op(word, FUTEX_WAIT, old, &ts);
    }
}

static void wake_word(uint32_t *word, uint32_t value)
{
    __atomic_store_n(word, value, __ATOMIC_RELEASE);
    futex_op(word, FUTEX_WAKE, INT32_MAX, NULL);
}

/* Map the node segment open on fd and close fd; MAP_FAILED with a message. */
static void *map_fd(int fd, const char *name)
{
    void *base = mmap(NULL, shm.bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

    close(fd);
    if (base == MAP_FAILED) {
        weft_log_error("cannot map shared memory segment %s (%zu bytes): %s", name, shm.bytes,
                       strerror(errno));
    }
    return base;
}

/* The inode the segment's name refers to now; 0 when there is none. */
static ino_t segment_inode(const char *name)
{
    struct stat st;
    int         fd = shm_open(name, O_RDONLY, 0600);
    ino_t       ino = 0;

    if (fd >= 0) {
        ino = fstat(fd, &st) == 0 ? st.st_ino : 0;
        close(fd);
    }
    return ino;
}

/* Local ranks other than 0: map the segment local rank 0 created, once it
 * has published itself there (it may not have started yet). A segment
 * with our name from a killed job (the same job id again: launchers make
 * ids unique, so only in theory) is told apart by its creator being gone,
 * or by the name coming to refer to another file, which our rank 0 makes
 * when it replaces it. Returns the mapping or MAP_FAILED (message printed). */
static void *map_segment(const char *name)
{
    struct stat st;

    for (long nap_ns = 10000;; nap_ns = nap_ns < 200000 ? nap_ns * 2 : nap_ns) {
        struct timespec nap = {0, nap_ns};
        int             fd  = shm_open(name, O_RDWR, 0600);
        if (fd < 0) {
            if (errno != ENOENT) {
                weft_log_error("cannot open shared memory segment %s: %s", name, strerror(errno));
                return MAP_FAILED;
            }
            nanosleep(&nap, NULL);
            continue;
        }
        if (fstat(fd, &st) != 0 || (size_t)st.st_size < shm.bytes) {
            close(fd); /* created, not yet sized */
            nanosleep(&nap, NULL);
            continue;
        }
        void *base = map_fd(fd, name);
        if (base == MAP_FAILED) {
            return MAP_FAILED;
        }
        shm_rank_ctl_t *creator = base;
        int             stale   = 0;
        for (unsigned waits = 0; !stale && !__atomic_load_n(&creator->attached, __ATOMIC_ACQUIRE);
             waits++) {
            struct timespec ms = {0, 1000000}; /* woken by rank 0's wake_word */
            futex_op(&creator->attached, FUTEX_WAIT, 0, &ms);
            stale = (waits & 63) == 63 && segment_inode(name) != st.st_ino;
        }
        int32_t pid = __atomic_load_n(&creator->pid, __ATOMIC_ACQUIRE);
        if (!stale && kill(pid, 0) != 0 && errno == ESRCH) {
            while (segment_inode(name) == st.st_ino) { /* until rank 0 replaces it */
                nanosleep(&nap, NULL);
            }
            stale = 1;
        }
        if (!stale) {
            return base;
        }
        munmap(base, shm.bytes);
    }
}

/* Publish this rank in the segment, agree on CMA and read the node's costs.
 * Local rank 0 measures them with a partner: the first other rank to attach
 * (on a loaded node, local rank 1 may start well after others). The two
 * probe CMA on each other; every other rank checks that it can read rank 0
 * too. */
static int attach(const char *name, const weft_shm_config_t *config, weft_shm_xcopy_area_t *xcopy)
{
    shm_rank_ctl_t *node = &shm.ctl[0];
    shm_rank_ctl_t *mine = &shm.ctl[shm.me];
    uint32_t        none = 0, state;

    cma_probe_word   = 0x5765667400000000ull | (uint32_t)getpid();
    mine->probe_addr = (uint64_t)(uintptr_t)&cma_probe_word;
    mine->probe_area = (uint64_t)(uintptr_t)cost_probe_area;
    __atomic_store_n(&mine->pid, (int32_t)getpid(), __ATOMIC_RELEASE);
    if (shm.me != 0) { /* rank 0 has published itself (map_segment) */
        mine->cma_ok = config->use_cma && cma_probe(0);
    }
    wake_word(&mine->attached, 1);
    if (__atomic_add_fetch(&node->attach_count, 1, __ATOMIC_ACQ_REL) == (uint32_t)shm.n) {
        shm_unlink(name); /* everyone has it mapped: a crash now leaves nothing behind */
    }
    if (shm.n < 2) { /* only bridges to other jobs' processes: see weft_dev_dyn_cma */
        costs   = (weft_shm_costs_t){0};
        shm.cma = config->use_cma && cma_probe(0);
        return 0;
    }
    if (shm.me == 0) {
        weft_shm_costs_t measured = {0};
        if (config->node_facts != NULL) {
            config->node_facts(&measured);
        }
        wait_word_change(&node->partner, 0); /* the first other rank to attach */
        int partner  = (int)__atomic_load_n(&node->partner, __ATOMIC_ACQUIRE);
        mine->cma_ok = config->use_cma && cma_probe(partner);
        int cma      = mine->cma_ok && shm.ctl[partner].cma_ok;
        weft_shm_measure_costs(shm.ctl[partner].pid,
                               (const void *)(uintptr_t)shm.ctl[partner].probe_area,
                               cost_probe_area, cma, config->cma_extra_ns, &measured);
        measured.xcopy_ns = config->time_xcopy ? weft_shm_xcopy_lead(xcopy, &measured.xcopy_step_ns) : 0;
        node->costs       = measured;
        wake_word(&node->costs_ready, 1u + (uint32_t)cma);
    } else if (__atomic_compare_exchange_n(&node->partner, &none, (uint32_t)shm.me, 0,
                                           __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        futex_op(&node->partner, FUTEX_WAKE, INT32_MAX, NULL);
        if (config->time_xcopy) {
            weft_shm_xcopy_follow(xcopy); /* rank 0 times copies of what this rank writes */
        }
    }
    wait_word_change(&node->costs_ready, 0);
    state = __atomic_load_n(&node->costs_ready, __ATOMIC_ACQUIRE);
    shm.cma = state == 2;
    costs   = node->costs;
    if (!shm.cma) {
        costs.cma_ns = costs.cma_page_ns = 0;
    } else if (!mine->cma_ok) {
        /* Rank 0 and its partner chose CMA for the node and may be using it. */
        weft_log_error(config->use_cma
                           ? "CMA (process_vm_readv) works between local rank 0 and local rank "
                             "%d but not from local rank %d: set WEFT_SMP_USE_CMA=0 for the "
                             "whole job"
                           : "WEFT_SMP_USE_CMA=0 on local rank %2$d but not on local ranks 0 "
                             "and %1$d: set it for the whole job",
                       (int)node->partner, shm.me);
        return -1;
    }
    return 0;
}

void weft_shm_abandon(void)
{
    if (shm.base != NULL && shm.name[0] != '\0' && /* mapped, and not finalized */
        __atomic_load_n(&shm.ctl[0].attach_count, __ATOMIC_ACQUIRE) < (uint32_t)shm.n) {
        shm_unlink(shm.name);
    }
}

int weft_shm_init(const weft_pmi_info_t *pmi, const char *jobid, const weft_shm_config_t *config,
                  const weft_am_handler_fn_t *handlers)
{
    char  *name = shm.name; /* kept for weft_shm_abandon */
    size_t ring_stride, pipe_stride, off_rings, off_pipes, off_coop, coop_stride, off_xcopy;
    int    fd = -1;

    shm.me          = pmi->local_rank;
    shm.n           = pmi->local_size;
    shm.handlers    = handlers;
    shm.world = malloc(sizeof(int) * (size_t)(pmi->local_size > 0 ? pmi->local_size : 1));
    if (shm.world == NULL) {
        weft_log_error("shm: no memory for the peer table");
        return -1;
    }
    memcpy(shm.world, pmi->local_ranks, sizeof(int) * (size_t)pmi->local_size);
    shm.ndyn = 0;
    shm.dyn  = NULL;
    shm.ring_units  = align_up(config->ring_bytes, WEFT_SHM_CELL) / WEFT_SHM_UNIT;
    if (shm.ring_units < 64 * UNITS_PER_LINE) { /* at least 4 KiB */
        shm.ring_units = 64 * UNITS_PER_LINE;
    }
    while (shm.ring_units & (shm.ring_units - 1)) { /* round up to a power of two */
        shm.ring_units += shm.ring_units & -shm.ring_units;
    }
    shm.slot_bytes  = align_up(config->pipe_slot_bytes, WEFT_SHM_CELL);
    shm.slot_stride = shm.slot_bytes + sizeof(shm_slot_hdr_t);
    shm.slots       = config->pipe_slots > 0 ? config->pipe_slots : 1;
    shm.wake_on_send = config->wake_on_send;
    ring_stride     = sizeof(shm_ring_ctl_t) + shm.ring_units * WEFT_SHM_UNIT;
    pipe_stride     = shm.slot_stride * (size_t)shm.slots;
    if (shm.n > SHM_BELL_WORDS * 64) {
        weft_log_error("%d ranks on one node: at most %d are supported", shm.n, SHM_BELL_WORDS * 64);
        return -1;
    }
    shm.use_bells   = shm.n > SHM_POLL_ALL_MAX;
    off_rings       = align_up(sizeof(shm_rank_ctl_t) * (size_t)shm.n + sizeof(shm_bell_t) * (size_t)shm.n,
                               4096);
    off_pipes       = off_rings + ring_stride * (size_t)shm.n * (size_t)shm.n;
    coop_stride     = sizeof(shm_coop_t) * SHM_COOP_SLOTS;
    off_coop        = align_up(off_pipes + pipe_stride * (size_t)shm.n * (size_t)shm.n, 4096);
    off_xcopy       = align_up(off_coop + coop_stride * (size_t)shm.n * (size_t)shm.n, 4096);
    shm.bytes       = align_up(off_xcopy + (shm.n >= 2 ? sizeof(weft_shm_xcopy_area_t) : 0), 4096);

    weft_shm_region_set_job(jobid);
    snprintf(name, sizeof(shm.name), "/weft-%s-%d-shm", jobid, pmi->node_id);
    for (char *p = name + 1; *p; p++) {
        if (*p == '/') {
            *p = '_';
        }
    }
    if (shm.me == 0) {
        fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        if (fd < 0 && errno == EEXIST) { /* leftover of a killed job with our id */
            shm_unlink(name);
            fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
        }
        if (fd < 0 || ftruncate(fd, (off_t)shm.bytes) != 0) {
            weft_log_error("cannot create shared memory segment %s (%zu bytes): %s", name,
                           shm.bytes, strerror(errno));
            return -1;
        }
        if ((shm.base = map_fd(fd, name)) == MAP_FAILED) {
            return -1;
        }
    } else if ((shm.base = map_segment(name)) == MAP_FAILED) {
        return -1;
    }
    snprintf(shm.bell_name, sizeof(shm.bell_name), "%.80s-bell", name + 1);
    shm.bell_in  = -1;
    shm.bell_out = -1;
    shm.ctl   = (shm_rank_ctl_t *)shm.base;
    shm.bells = (shm_bell_t *)((char *)shm.base + sizeof(shm_rank_ctl_t) * (size_t)shm.n);
    shm.out = calloc((size_t)shm.n, sizeof(*shm.out));
    shm.in  = calloc((size_t)shm.n, sizeof(*shm.in));
    if (shm.out == NULL || shm.in == NULL) {
        return -1;
    }
    for (int p = 0; p < shm.n; p++) {
        char *to   = (char *)shm.base + off_rings + ring_stride * ((size_t)shm.me * shm.n + p);
        char *from = (char *)shm.base + off_rings + ring_stride * ((size_t)p * shm.n + shm.me);
        shm.out[p].ctl   = (shm_ring_ctl_t *)to;
        shm.out[p].cells = to + sizeof(shm_ring_ctl_t);
        shm.in[p].ctl    = (shm_ring_ctl_t *)from;
        shm.in[p].cells  = from + sizeof(shm_ring_ctl_t);
        shm.out[p].pipe  = (char *)shm.base + off_pipes + pipe_stride * ((size_t)shm.me * shm.n + p);
        shm.in[p].pipe   = (char *)shm.base + off_pipes + pipe_stride * ((size_t)p * shm.n + shm.me);
        shm.out[p].coop  = (shm_coop_t *)((char *)shm.base + off_coop +
                                          coop_stride * ((size_t)shm.me * shm.n + p));
        shm.in[p].coop   = (shm_coop_t *)((char *)shm.base + off_coop +
                                          coop_stride * ((size_t)p * shm.n + shm.me));
    }
    if (attach(name, config, (weft_shm_xcopy_area_t *)((char *)shm.base + off_xcopy)) != 0) {
        return -1;
    }
    if (shm.n >= 2 && config->prefault_rings) { /* after the cost probe, which it would disturb */
        prefault_start((char *)shm.base + off_rings + ring_stride * (size_t)shm.me * (size_t)shm.n,
                       ring_stride);
    }
    return 0;
}

void weft_shm_fini(void)
{
    __atomic_store_n(&shm.prefault_stop, 1, __ATOMIC_RELEASE);
    while (shm.prefaulting && !__atomic_load_n(&shm.prefault_done, __ATOMIC_ACQUIRE)) {
        usleep(100); /* at most one 64 KiB piece */
    }
    shm.prefaulting = 0;
    if (shm.base != NULL) {
        munmap(shm.base, shm.bytes);
        shm.base = NULL;
    }
    if (shm.bell_name[0] != '\0') { /* the wake sockets were set up (-1: none) */
        if (shm.bell_in >= 0) {
            close(shm.bell_in);
        }
        if (shm.bell_out >= 0) {
            close(shm.bell_out);
        }
        shm.bell_name[0] = '\0';
    }
    for (int i = 0; i < shm.ndyn; i++) {
        munmap(shm.dyn[i].base, shm.dyn[i].bytes);
    }
    free(shm.dyn);
    free(shm.world);
    free(shm.out);
    free(shm.in);
    shm.dyn   = NULL;
    shm.ndyn  = 0;
    shm.world = NULL;
    shm.out   = NULL;
    shm.in    = NULL;
}

int weft_shm_cma_enabled(void)
{
    return shm.cma;
}

void weft_shm_costs(weft_shm_costs_t *out)
{
    *out = costs;
}

size_t weft_shm_max_payload(void)
{
    /* Half the ring, so a wrap (SKIP) plus one message always fits. */
    return shm.ring_units / 2 * WEFT_SHM_UNIT - WEFT_SHM_HDR_SIZE;
}

void weft_shm_set_held_back(int peer, int on)
{
    __atomic_store_n(&shm.in[peer].ctl->held_back, (uint64_t)on, __ATOMIC_RELAXED);
}

int weft_shm_held_back(int peer)
{
    return __atomic_load_n(&shm.out[peer].ctl->held_back, __ATOMIC_RELAXED) != 0;
}

pid_t weft_shm_peer_pid(int peer)
{
    return __atomic_load_n(&peer_ctl(peer)->pid, __ATOMIC_ACQUIRE); /* a bridge peer writes it at attach */
}

static inline shm_hdr_t *unit_at(char *cells, uint64_t pos)
{
    /* ring_units is a power of two (init rounds it up): mask, not divide */
    return (shm_hdr_t *)(cells + (pos & (shm.ring_units - 1)) * WEFT_SHM_UNIT);
}

/* Units a message of len payload bytes takes: one, or whole lines (so
 * that a run of longer messages stays on line boundaries with no SKIP
 * between them). */
static inline uint32_t msg_units(size_t len)
{
    uint32_t units = (uint32_t)((WEFT_SHM_HDR_SIZE + len + WEFT_SHM_UNIT - 1) / WEFT_SHM_UNIT);

    return units == 1 ? 1 : (units + UNITS_PER_LINE - 1) / UNITS_PER_LINE * UNITS_PER_LINE;
}

static int ring_room(shm_out_t *o, uint64_t need)
{
    if (shm.ring_units - (o->wpos - o->consumed) >= need) {
        return 1;
    }
    o->consumed = __atomic_load_n(&o->ctl->consumed, __ATOMIC_ACQUIRE);
    return shm.ring_units - (o->wpos - o->consumed) >= need;
}

/* Make the header word at position pos impossible to mistake for a message
 * until the sender writes one there (ordered before the publish that follows
 * by that publish's release store). */
static inline void poison(shm_out_t *o, uint64_t pos)
{
    __atomic_store_n(&unit_at(o->cells, pos)->seq, (uint32_t)(pos + 1) ^ 0x80000000u,
                     __ATOMIC_RELAXED);
}

/* Mark the next units units as skipped (the receiver steps over them). */
static void skip_units(shm_out_t *o, uint64_t units)
{
    shm_hdr_t *skip = unit_at(o->cells, o->wpos);
    skip->len_type  = (SHM_TYPE_SKIP << 24) | (uint32_t)units;
    poison(o, o->wpos + units);
    __atomic_store_n(&skip->seq, (uint32_t)(o->wpos + 1), __ATOMIC_RELEASE);
    o->wpos += units;
}

void *weft_shm_reserve(int peer, size_t len)
{
    shm_out_t *o      = &shm.out[peer];
    uint32_t   units  = msg_units(len);
    uint64_t   at_end = shm.ring_units - (o->wpos & (shm.ring_units - 1));
    /* A message of more than one unit starts on a line (see WEFT_SHM_UNIT). */
    uint64_t   align  = units > 1 ? (UNITS_PER_LINE - o->wpos % UNITS_PER_LINE) % UNITS_PER_LINE : 0;

    /* One unit more than the message: the poisoned next header (see top). */
    if (align + units > at_end) {
        /* Would wrap: mark the tail as skipped and start at unit 0. */
        if (!ring_room(o, at_end + units + 1)) {
            return NULL;
        }
        skip_units(o, at_end);
    } else if (!ring_room(o, align + units + 1)) {
        return NULL;
    } else if (align > 0) {
        skip_units(o, align);
    }
    o->reserved       = (char *)unit_at(o->cells, o->wpos);
    o->reserved_units = units;
    /* The caller's copy would take the message's further lines one store
     * miss after another; asking for all of them now overlaps those round
     * trips (np 2 latency 1-4 KiB 0.51-0.96 us -> 0.38-0.82). */
    if (units > UNITS_PER_LINE) {
        weft_prefetch_for_write(o->reserved + WEFT_SHM_CELL,
                                (size_t)(units - UNITS_PER_LINE) * WEFT_SHM_UNIT);
    }
    return o->reserved + WEFT_SHM_HDR_SIZE;
}

void weft_shm_commit(int peer, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                     size_t len)
{
    shm_out_t *o = &shm.out[peer];
    shm_hdr_t *h = (shm_hdr_t *)o->reserved;

    h->len_type = ((uint32_t)type << 24) | (uint32_t)len;
    h->tag      = tag;
    h->context  = context;
    h->src      = src;
    poison(o, o->wpos + o->reserved_units);
    __atomic_store_n(&h->seq, (uint32_t)(o->wpos + 1), __ATOMIC_RELEASE);
    o->wpos += o->reserved_units;
    /* The next message will poison the unit after the one it fills, in
     * this line or the next. The receiver still holds the next line from
     * the ring's previous lap, and taking it back then (before the
     * publish, which x86 orders after the poison store) would cost a
     * cross-core round trip on the critical path; take it now while
     * nobody waits. */
    weft_prefetch_for_write((char *)unit_at(o->cells, o->wpos) + WEFT_SHM_CELL, WEFT_SHM_CELL);
    if (shm.use_bells && peer < shm.n) { /* bridges have no doorbell: always polled */
        uint64_t *w   = &shm.bells[peer].word[shm.me / 64];
        uint64_t  bit = 1ull << (shm.me % 64);
        /* Read first: when the bit is still set no write is needed. The
         * fence keeps the publish above from being ordered after this load
         * (x86 store buffering): otherwise we could read the bit the
         * receiver is just clearing, skip setting it, and the receiver,
         * not yet seeing the message, would not look at this ring again
         * (issue 19 bug 3: non-blocking collectives hung at 9+ ranks). The
         * receiver pairs it with a fence after clearing (poll_bells). */
        weft_full_fence();
        if (!(__atomic_load_n(w, __ATOMIC_RELAXED) & bit)) {
            __atomic_fetch_or(w, bit, __ATOMIC_RELEASE);
        }
    }
    /* A process of another job may run the blocking wait policy even when
     * our job does not: always check whether it sleeps. */
    if (shm.wake_on_send || peer >= shm.n) {
        wake_peer(peer);
    }
}

int weft_shm_send(int peer, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                  const void *payload, size_t len)
{
    void *p = weft_shm_reserve(peer, len);

    if (p == NULL) {
        return -1;
    }
    if (len) {
        memcpy(p, payload, len);
    }
    weft_shm_commit(peer, type, tag, context, src, len);
    return 0;
}

/* Handle the message at the head of the ring from peer, if any. */
static int poll_peer(int peer)
{
    shm_in_t  *in = &shm.in[peer];
    shm_hdr_t *h  = unit_at(in->cells, in->rpos);

    if (__atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) != (uint32_t)(in->rpos + 1)) {
        return 0;
    }
    uint32_t type = h->len_type >> 24;
    uint32_t len  = h->len_type & 0xffffffu;
    if (type == SHM_TYPE_SKIP) {
        in->rpos += len;
    } else {
        /* A message of up to 6 lines: fetch its further lines together
         * before the handler's memcpy asks for them. Its few wide loads
         * otherwise waited on the sender's core one after another: np 2
         * latency at 112-204 B was 0.33-0.37 us against 0.20 at 108 and
         * 140 B, and is 0.21-0.26 with this. Longer copies overlap their
         * own misses (no gain measured at 512 B-4 KiB). */
        if (len > WEFT_SHM_INLINE && WEFT_SHM_HDR_SIZE + (size_t)len <= 6 * WEFT_SHM_CELL) {
            weft_prefetch_for_read((const char *)h + WEFT_SHM_CELL,
                                   WEFT_SHM_HDR_SIZE + (size_t)len - WEFT_SHM_CELL);
        }
        weft_shm_msg_t msg = {(uint8_t)type, h->tag, h->context, h->src, len,
                              (const char *)h + WEFT_SHM_HDR_SIZE};
        shm.handlers[type](shm.world[peer], &msg);
        in->rpos += msg_units(len);
    }
    __atomic_store_n(&in->ctl->consumed, in->rpos, __ATOMIC_RELEASE);
    return 1;
}

/* Doorbell mode: take the set bits (clearing them), then drain those rings.
 * A ring left non-empty by the batch limit stays in shm.ready. */
static int poll_bells(void)
{
    int events = 0;

    for (int w = 0; w < (shm.n + 63) / 64; w++) {
        uint64_t bits = shm.ready[w];
        if (__atomic_load_n(&shm.bells[shm.me].word[w], __ATOMIC_RELAXED)) {
            bits |= __atomic_exchange_n(&shm.bells[shm.me].word[w], 0, __ATOMIC_SEQ_CST);
            /* clear the bits before reading the rings (see weft_shm_commit) */
            weft_full_fence();
        }
        shm.ready[w] = 0;
        while (bits) {
            int peer = w * 64 + __builtin_ctzll(bits);
            int got  = 0;
            bits &= bits - 1;
            while (got < SHM_POLL_BATCH && poll_peer(peer)) {
                got++;
            }
            if (got == SHM_POLL_BATCH) {
                shm.ready[w] |= 1ull << (peer % 64);
            }
            events += got;
        }
    }
    return events;
}

/* Rings from processes of other jobs (few; looked at only once one exists). */
static int poll_dyn(void)
{
    int events = 0;

    for (int peer = shm.n; peer < shm.n + shm.ndyn; peer++) {
        for (int got = 0; got < SHM_POLL_BATCH && poll_peer(peer); got++) {
            events++;
        }
    }
    return events;
}

int weft_shm_poll(void)
{
    int events = shm.ndyn ? poll_dyn() : 0;

    if (shm.use_bells) {
        return events + poll_bells();
    }

    /* Drain each peer's ring up to a batch, starting after the peer served
     * first last time so no sender can starve the others. */
    int peer = shm.poll_start;
    for (int i = 0; i < shm.n; i++) {
        int got = 0;
        while (got < SHM_POLL_BATCH && poll_peer(peer)) {
            got++;
        }
        events += got;
        if (++peer == shm.n) {
            peer = 0;
        }
    }
    if (++shm.poll_start >= shm.n) {
        shm.poll_start = 0;
    }
    return events;
}

static int ring_has_message(int peer)
{
    shm_in_t  *in = &shm.in[peer];
    shm_hdr_t *h  = unit_at(in->cells, in->rpos);
    return __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE) == (uint32_t)(in->rpos + 1);
}

/* A message is waiting in one of our rings (or one we know still holds more). */
static int shm_has_arrival(void)
{
    for (int p = 0; p < shm.n + shm.ndyn; p++) {
        if (ring_has_message(p)) {
            return 1;
        }
    }
    for (int w = 0; shm.use_bells && w < SHM_BELL_WORDS; w++) {
        if (shm.ready[w]) {
            return 1;
        }
    }
    return 0;
}

/* Tell every bridge how we sleep (processes of other jobs read it there). */
static void dyn_set_sleeping(uint32_t how)
{
    for (int i = 0; i < shm.ndyn; i++) {
        struct shm_dyn *d = &shm.dyn[i];
        __atomic_store_n(&d->hdr->side[d->side].sleeping, how, __ATOMIC_SEQ_CST);
    }
}

void weft_shm_sleep(long timeout_us)
{
    shm_rank_ctl_t *c = &shm.ctl[shm.me];

    /* Processes of other jobs cannot reach our futex (it is in our node
     * segment): with bridges, sleep on the wake socket they can reach. */
    if (shm.ndyn > 0 && shm.bell_in >= 0) { /* made at the first attach */
        weft_shm_sleep_fd(-1, timeout_us);
        return;
    }
    uint32_t        v = __atomic_load_n(&c->futex, __ATOMIC_SEQ_CST);
    struct timespec ts = {timeout_us / 1000000, (timeout_us % 1000000) * 1000};

    __atomic_store_n(&c->sleeping, SLEEP_FUTEX, __ATOMIC_SEQ_CST);
    weft_full_fence();
    if (!shm_has_arrival()) {
        futex_op(&c->futex, FUTEX_WAIT, v, &ts);
    }
    __atomic_store_n(&c->sleeping, SLEEP_AWAKE, __ATOMIC_RELAXED);
}

int weft_shm_sleep_fd_prepare(void)
{
    if (shm.bell_in == -2) {
        return -1; /* could not make the socket: said so once */
    }
    if (shm.bell_in < 0) {
        struct sockaddr_un a;
        socklen_t          alen = bell_address(shm.me, &a);
        shm.bell_in = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (shm.bell_in < 0 || bind(shm.bell_in, (struct sockaddr *)&a, alen) != 0) {
            weft_log_error("shm: cannot make the wake socket for blocking waits: %s",
                           strerror(errno));
            if (shm.bell_in >= 0) {
                close(shm.bell_in);
            }
            shm.bell_in = -2;
            return -1;
        }
    }
    return 0;
}

int weft_shm_sleep_fd(int fd, long timeout_us)
{
    shm_rank_ctl_t *c = &shm.ctl[shm.me];
    struct pollfd   pfd[2];
    char            drain[64];
    int             rc;

    pfd[0].fd     = shm.bell_in;
    pfd[0].events = POLLIN;
    pfd[1].fd     = fd; /* < 0: ignored by poll */
    pfd[1].events = POLLIN;
    __atomic_store_n(&c->sleeping, SLEEP_FD, __ATOMIC_SEQ_CST);
    dyn_set_sleeping(SLEEP_FD);
    weft_full_fence();
    rc = shm_has_arrival() ? 1 : poll(pfd, 2, (int)((timeout_us + 999) / 1000));
    __atomic_store_n(&c->sleeping, SLEEP_AWAKE, __ATOMIC_RELAXED);
    dyn_set_sleeping(SLEEP_AWAKE);
    while (recv(shm.bell_in, drain, sizeof(drain), MSG_DONTWAIT) > 0) {
    }
    return rc;
}

/* Shorten an iovec list to at most cap bytes; returns the new length. */
static int trim_iov(struct iovec *iov, int n, size_t cap)
{
    size_t acc = 0;

    for (int k = 0; k < n; k++) {
        if (acc + iov[k].iov_len >= cap) {
            iov[k].iov_len = cap - acc;
            return k + 1;
        }
        acc += iov[k].iov_len;
    }
    return n;
}

int weft_shm_cma_read(int peer, const struct iovec *local, int nlocal, const struct iovec *remote,
                      int nremote)
{
    /* process_vm_readv takes at most IOV_MAX entries per side and may stop
     * early; walk both lists, consuming whatever each call moved. */
    struct iovec l[64], r[64];
    int          li = 0, ri = 0;
    size_t       loff = 0, roff = 0;
    pid_t        pid = peer_ctl(peer)->pid;

    while (li < nlocal && ri < nremote) {
        int    nl = 0, nr = 0;
        size_t lbytes = 0, rbytes = 0;
        for (int i = li; i < nlocal && nl < 64; i++, nl++) {
            size_t skip = i == li ? loff : 0;
            l[nl].iov_base = (char *)local[i].iov_base + skip;
            l[nl].iov_len  = local[i].iov_len - skip;
            lbytes += l[nl].iov_len;
        }
        for (int i = ri; i < nremote && nr < 64; i++, nr++) {
            size_t skip = i == ri ? roff : 0;
            r[nr].iov_base = (char *)remote[i].iov_base + skip;
            r[nr].iov_len  = remote[i].iov_len - skip;
            rbytes += r[nr].iov_len;
        }
        if (lbytes == 0 || rbytes == 0) {
            /* zero-length entries only: skip them */
            if (lbytes == 0) { li += nl; loff = 0; }
            if (rbytes == 0) { ri += nr; roff = 0; }
            continue;
        }
        nl = trim_iov(l, nl, SHM_CMA_CHUNK);
        nr = trim_iov(r, nr, SHM_CMA_CHUNK);
        ssize_t got = process_vm_readv(pid, l, (unsigned long)nl, r, (unsigned long)nr, 0);
        if (got < 0) {
            if (errno == EINTR) {
                continue;
            }
            return -1;
        }
        if (got == 0) {
            errno = EFAULT;
            return -1;
        }
        /* Advance both lists by got bytes. */
        for (size_t left = (size_t)got; left > 0;) {
            size_t avail = local[li].iov_len - loff;
            if (left < avail) { loff += left; left = 0; } else { left -= avail; li++; loff = 0; }
        }
        for (size_t left = (size_t)got; left > 0;) {
            size_t avail = remote[ri].iov_len - roff;
            if (left < avail) { roff += left; left = 0; } else { left -= avail; ri++; roff = 0; }
        }
        while (li < nlocal && local[li].iov_len == loff) { li++; loff = 0; }
        while (ri < nremote && remote[ri].iov_len == roff) { ri++; roff = 0; }
    }
    return 0;
}

void *weft_shm_pipe_acquire(int peer, size_t *cap_p)
{
    shm_out_t      *o = &shm.out[peer];
    shm_slot_hdr_t *s = (shm_slot_hdr_t *)(o->pipe + (o->pipe_w % (uint64_t)shm.slots) * shm.slot_stride);

    if (__atomic_load_n(&s->full, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    *cap_p = shm.slot_bytes;
    return (char *)s + sizeof(*s);
}

void weft_shm_pipe_publish(int peer, size_t len)
{
    shm_out_t      *o = &shm.out[peer];
    shm_slot_hdr_t *s = (shm_slot_hdr_t *)(o->pipe + (o->pipe_w % (uint64_t)shm.slots) * shm.slot_stride);

    s->len = (uint32_t)len;
    __atomic_store_n(&s->full, 1, __ATOMIC_RELEASE);
    o->pipe_w++;
    if (shm.wake_on_send || peer >= shm.n) {
        wake_peer(peer);
    }
}

const void *weft_shm_pipe_peek(int peer, size_t *len_p)
{
    shm_in_t       *in = &shm.in[peer];
    shm_slot_hdr_t *s  = (shm_slot_hdr_t *)(in->pipe + (in->pipe_r % (uint64_t)shm.slots) * shm.slot_stride);

    if (!__atomic_load_n(&s->full, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    *len_p = s->len;
    return (const char *)s + sizeof(*s);
}

void weft_shm_pipe_release(int peer)
{
    shm_in_t       *in = &shm.in[peer];
    shm_slot_hdr_t *s  = (shm_slot_hdr_t *)(in->pipe + (in->pipe_r % (uint64_t)shm.slots) * shm.slot_stride);

    __atomic_store_n(&s->full, 0, __ATOMIC_RELEASE);
    in->pipe_r++;
    if (shm.wake_on_send || peer >= shm.n) {
        wake_peer(peer);
    }
}
