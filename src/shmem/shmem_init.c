/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM setup and the symmetric heap. The heap is one MPI shared-memory
 * window over the node (WEFT_SYMMETRIC_SIZE bytes per PE); every PE maps the
 * slices of its node's PEs, so puts/gets to them are loads and stores and
 * shmem_ptr is a plain pointer. PEs on other nodes are reached by messages
 * (shmem_net.c) at the same offset in their slice.
 * The allocator is deterministic: every PE runs the same first-fit over the
 * same sequence of collective calls, so every PE gets the same offset. */
#include "shmem/shmem_internal.h"
#include "core/runtime.h"
#include "util/tunables.h"

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct weft_shmem_state weft_shmem;
static struct weft_shmem_team team_world, team_shared;
shmem_team_t SHMEM_TEAM_WORLD = &team_world;
shmem_team_t SHMEM_TEAM_SHARED = &team_shared;
struct weft_shmem_ctx weft_shmem_ctx_default = {WEFT_SHMEM_CTX_MAGIC, 0, &team_world, 0};
shmem_ctx_t SHMEM_CTX_DEFAULT = &weft_shmem_ctx_default;

void weft_shmem_fail(const char *call, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "shmem: PE %d: %s: %s\n", weft_shmem.initialized ? weft_shmem.my_pe : -1, call, msg);
    fflush(stderr);
    int mpi_up = 0, mpi_down = 0;
    PMPI_Initialized(&mpi_up);
    PMPI_Finalized(&mpi_down);
    if (mpi_up && !mpi_down) {
        PMPI_Abort(MPI_COMM_WORLD, 1);
    }
    abort();
}

/* With PEs on other nodes a waiting PE also runs the progress engine, so
 * their requests on its memory (the put it waits for, a lock) are applied. */
void weft_shmem_backoff(unsigned *spins)
{
    if (weft_shmem.net) {
        weft_shmem_net_progress();
    }
    if (++*spins > 64) {
        sched_yield();
    } else {
        __builtin_ia32_pause();
    }
}

void *weft_shmem_locate_slow(const char *call, const void *addr, size_t bytes, int pe,
                             struct weft_shmem_where *where)
{
    weft_shmem_check_init(call);
    if (pe < 0 || pe >= weft_shmem.n_pes) {
        weft_shmem_fail(call, "PE %d out of range (0..%d)", pe, weft_shmem.n_pes - 1);
    }
    const char *base = weft_shmem.heap_base[weft_shmem.my_pe];
    const char *p = addr;
    int seg = WEFT_SHMEM_SEG_HEAP;
    uint64_t off;
    if (p >= base && p <= base + weft_shmem.heap_size && bytes <= (size_t)(base + weft_shmem.heap_size - p)) {
        if (weft_shmem.heap_base[pe]) {
            return weft_shmem.heap_base[pe] + (p - base);
        }
        off = (uint64_t)(p - base);
    } else if (weft_shmem_data_offset(addr, bytes, &off)) {
        void *global = weft_shmem_data_remote(addr, bytes, pe);
        if (global) {
            return global;
        }
        seg = WEFT_SHMEM_SEG_DATA;
    } else {
        const char *why = weft_shmem_data_why_not();
        weft_shmem_fail(call,
                        "address %p (+%zu bytes) is not in the symmetric heap nor in global/static data%s%s%s",
                        addr, bytes, why ? " (global data is not symmetric: " : "", why ? why : "",
                        why ? ")" : "");
    }
    if (where) {
        *where = (struct weft_shmem_where){pe, seg, off};
    }
    return NULL; /* pe is on another node */
}

/* --- deterministic heap allocator ---------------------------------------------- */
struct heap_block {
    size_t off, len;
    bool used;
};
static struct heap_block *blocks;
static size_t nblocks, blocks_cap;

static void heap_reset(size_t size)
{
    free(blocks);
    blocks_cap = 64;
    blocks = malloc(blocks_cap * sizeof *blocks);
    if (!blocks) {
        weft_shmem_fail("shmem_init", "out of memory for the heap index");
    }
    nblocks = 1;
    blocks[0] = (struct heap_block){0, size, false};
}

static void heap_insert(size_t at, struct heap_block b)
{
    if (nblocks == blocks_cap) {
        blocks_cap *= 2;
        struct heap_block *nb = realloc(blocks, blocks_cap * sizeof *blocks);
        if (!nb) {
            weft_shmem_fail("shmem_malloc", "out of memory for the heap index");
        }
        blocks = nb;
    }
    memmove(&blocks[at + 1], &blocks[at], (nblocks - at) * sizeof *blocks);
    blocks[at] = b;
    nblocks++;
}

/* First fit; returns the offset or SIZE_MAX when the heap is exhausted. */
static size_t heap_alloc(size_t align, size_t len)
{
    if (len == 0) {
        len = 1;
    }
    len = (len + 63) & ~(size_t)63;
    for (size_t i = 0; i < nblocks; i++) {
        struct heap_block *b = &blocks[i];
        if (b->used) {
            continue;
        }
        size_t start = (b->off + align - 1) / align * align;
        if (start - b->off > b->len || b->len - (start - b->off) < len) {
            continue;
        }
        size_t end = start + len, bend = b->off + b->len;
        if (start > b->off) { /* leading gap stays free */
            b->len = start - b->off;
            heap_insert(++i, (struct heap_block){start, len, true});
        } else {
            b->len = len;
            b->used = true;
        }
        if (end < bend) {
            heap_insert(i + 1, (struct heap_block){end, bend - end, false});
        }
        return start;
    }
    return SIZE_MAX;
}

static size_t heap_find(size_t off)
{
    for (size_t i = 0; i < nblocks; i++) {
        if (blocks[i].off == off && blocks[i].used) {
            return i;
        }
    }
    return SIZE_MAX;
}

static void heap_release(size_t i)
{
    blocks[i].used = false;
    if (i + 1 < nblocks && !blocks[i + 1].used) {
        blocks[i].len += blocks[i + 1].len;
        memmove(&blocks[i + 1], &blocks[i + 2], (nblocks - i - 2) * sizeof *blocks);
        nblocks--;
    }
    if (i > 0 && !blocks[i - 1].used) {
        blocks[i - 1].len += blocks[i].len;
        memmove(&blocks[i], &blocks[i + 1], (nblocks - i - 1) * sizeof *blocks);
        nblocks--;
    }
}

/* Every heap call is collective: check every PE passed the same arguments
 * (an asymmetric heap would corrupt silently) and synchronise, as the
 * standard's implied barrier requires. */
static void heap_collective_check(const char *call, size_t a, size_t b)
{
    weft_shmem_check_init(call);
    unsigned long v[4] = {a, b, ~(unsigned long)a, ~(unsigned long)b}, r[4];
    PMPI_Allreduce(v, r, 4, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (r[0] != a || r[1] != b || r[2] != ~(unsigned long)a || r[3] != ~(unsigned long)b) {
        weft_shmem_fail(call, "PEs passed different arguments (%zu, %zu here) to a collective heap call", a,
                        b);
    }
}

static void *heap_alloc_checked(const char *call, size_t align, size_t size)
{
    if (align == 0 || (align & (align - 1))) {
        weft_shmem_fail(call, "alignment %zu is not a power of two", align);
    }
    size_t off = heap_alloc(align < 64 ? 64 : align, size);
    if (off == SIZE_MAX) {
        weft_shmem_fail(call,
                        "symmetric heap exhausted: %zu bytes requested, heap is %zu bytes per PE "
                        "(set SHMEM_SYMMETRIC_SIZE or WEFT_SYMMETRIC_SIZE)",
                        size, weft_shmem.heap_size);
    }
    return weft_shmem.heap_base[weft_shmem.my_pe] + off;
}

void *shmem_malloc(size_t size)
{
    heap_collective_check("shmem_malloc", size, 0);
    return heap_alloc_checked("shmem_malloc", 64, size);
}

void *shmem_malloc_with_hints(size_t size, long hints)
{
    heap_collective_check("shmem_malloc_with_hints", size, (size_t)hints);
    return heap_alloc_checked("shmem_malloc_with_hints", 64, size); /* hints are advice only */
}

void *shmem_align(size_t alignment, size_t size)
{
    heap_collective_check("shmem_align", size, alignment);
    return heap_alloc_checked("shmem_align", alignment, size);
}

void *shmem_calloc(size_t count, size_t size)
{
    heap_collective_check("shmem_calloc", count, size);
    if (size && count > SIZE_MAX / size) {
        weft_shmem_fail("shmem_calloc", "count %zu x size %zu overflows", count, size);
    }
    void *p = heap_alloc_checked("shmem_calloc", 64, count * size);
    memset(p, 0, count * size);
    PMPI_Barrier(MPI_COMM_WORLD); /* no peer writes into the block before it is zeroed */
    return p;
}

static size_t heap_index_of(const char *call, const void *ptr)
{
    const char *base = weft_shmem.heap_base[weft_shmem.my_pe];
    size_t i = SIZE_MAX;
    if ((const char *)ptr >= base && (const char *)ptr < base + weft_shmem.heap_size) {
        i = heap_find((size_t)((const char *)ptr - base));
    }
    if (i == SIZE_MAX) {
        weft_shmem_fail(call, "%p was not returned by shmem_malloc (or was already freed)", ptr);
    }
    return i;
}

void shmem_free(void *ptr)
{
    heap_collective_check("shmem_free", (size_t)(ptr ? (char *)ptr - weft_shmem.heap_base[weft_shmem.my_pe] : -1), 0);
    if (ptr) {
        heap_release(heap_index_of("shmem_free", ptr));
    }
}

void *shmem_realloc(void *ptr, size_t size)
{
    if (!ptr) {
        return shmem_malloc(size);
    }
    heap_collective_check("shmem_realloc", (size_t)((char *)ptr - weft_shmem.heap_base[weft_shmem.my_pe]),
                          size);
    size_t i = heap_index_of("shmem_realloc", ptr);
    size_t old = blocks[i].len;
    if (size == 0) {
        heap_release(i);
        return NULL;
    }
    void *np = heap_alloc_checked("shmem_realloc", 64, size);
    memcpy(np, ptr, old < size ? old : size);
    heap_release(heap_index_of("shmem_realloc", ptr));
    PMPI_Barrier(MPI_COMM_WORLD); /* peers may read the new block once everyone copied */
    return np;
}

/* --- setup ----------------------------------------------------------------------- */
int weft_shmem_team_fill(struct weft_shmem_team *t, MPI_Comm comm);

int weft_shmem_team_fill(struct weft_shmem_team *t, MPI_Comm comm)
{
    t->comm = comm;
    PMPI_Comm_rank(comm, &t->my_pe);
    PMPI_Comm_size(comm, &t->n_pes);
    t->world_pe = malloc((size_t)t->n_pes * sizeof(int));
    if (!t->world_pe) {
        return -1;
    }
    PMPI_Allgather(&weft_shmem.my_pe, 1, MPI_INT, t->world_pe, 1, MPI_INT, comm);
    return 0;
}

static const int thread_to_mpi[] = {MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
                                    MPI_THREAD_MULTIPLE};
static int provided_level = SHMEM_THREAD_SINGLE;

int shmem_init_thread(int requested, int *provided)
{
    if (weft_shmem.initialized) {
        if (provided) {
            *provided = provided_level;
        }
        return 0;
    }
    if (requested < SHMEM_THREAD_SINGLE || requested > SHMEM_THREAD_MULTIPLE) {
        weft_shmem_fail("shmem_init_thread", "requested thread level %d is not a SHMEM_THREAD_* value",
                        requested);
    }
    int mpi_provided = MPI_THREAD_SINGLE;
    if (weft_runtime.state == WEFT_STATE_FINALIZED || weft_runtime.mpi_finalize_deferred) {
        weft_shmem_fail("shmem_init", "called after MPI_Finalize: the shared runtime is down");
    }
    if (weft_runtime.state == WEFT_STATE_UNINITIALIZED) {
        if (weft_runtime_init(thread_to_mpi[requested], &mpi_provided) != MPI_SUCCESS) {
            weft_shmem_fail("shmem_init", "MPI initialisation underneath failed");
        }
        weft_runtime.world_by_shmem = 1; /* a later MPI_Init joins this runtime */
    } else {
        PMPI_Query_thread(&mpi_provided);
    }
    weft_runtime.shmem_up = 1;
    provided_level = SHMEM_THREAD_SINGLE;
    for (int i = 0; i < 4; i++) {
        if (thread_to_mpi[i] == mpi_provided) {
            provided_level = i;
        }
    }
    MPI_Comm world, shared;
    PMPI_Comm_dup(MPI_COMM_WORLD, &world);
    PMPI_Comm_rank(world, &weft_shmem.my_pe);
    PMPI_Comm_size(world, &weft_shmem.n_pes);
    if (weft_tunables.SHMEM_FAKE_PPN > 0) { /* testing: blocks of PEs play nodes */
        PMPI_Comm_split(world, weft_shmem.my_pe / (int)weft_tunables.SHMEM_FAKE_PPN, 0, &shared);
    } else {
        PMPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
    }
    int shared_size;
    PMPI_Comm_size(shared, &shared_size);
    weft_shmem.initialized = true; /* for messages */
    weft_shmem.net = shared_size != weft_shmem.n_pes; /* the same answer on every PE */
    weft_shmem.heap_size = (weft_tunables.SYMMETRIC_SIZE + 4095) & ~(size_t)4095;
    char *mine = NULL;
    MPI_Info info;
    PMPI_Info_create(&info);
    PMPI_Info_set(info, "alloc_shared_noncontig", "true");
    int rc = PMPI_Win_allocate_shared((MPI_Aint)weft_shmem.heap_size, 1, info, shared, &mine,
                                      &weft_shmem.heap_win);
    PMPI_Info_free(&info);
    if (rc != MPI_SUCCESS) {
        weft_shmem_fail("shmem_init", "cannot allocate a %zu-byte symmetric heap per PE", weft_shmem.heap_size);
    }
    weft_shmem.heap_base = calloc((size_t)weft_shmem.n_pes, sizeof(char *));
    if (!weft_shmem.heap_base || weft_shmem_team_fill(&team_world, world) ||
        weft_shmem_team_fill(&team_shared, shared)) {
        weft_shmem_fail("shmem_init", "out of memory");
    }
    for (int i = 0; i < team_shared.n_pes; i++) { /* PEs of other nodes stay NULL */
        MPI_Aint sz;
        int disp;
        PMPI_Win_shared_query(weft_shmem.heap_win, i, &sz, &disp, &weft_shmem.heap_base[team_shared.world_pe[i]]);
    }
    heap_reset(weft_shmem.heap_size);
    weft_shmem_data_setup(world);
    if (weft_shmem.net) {
        weft_shmem_net_setup(world);
    }
    PMPI_Barrier(world);
    if (provided) {
        *provided = provided_level;
    }
    return 0;
}

void shmem_init(void)
{
    shmem_init_thread(SHMEM_THREAD_SINGLE, NULL);
}

void start_pes(int npes)
{
    (void)npes; /* ignored, as the standard says */
    shmem_init();
}

void shmem_query_thread(int *provided)
{
    weft_shmem_check_init("shmem_query_thread");
    *provided = provided_level;
}

static void team_release(struct weft_shmem_team *t)
{
    PMPI_Comm_free(&t->comm);
    free(t->world_pe);
    t->world_pe = NULL;
}

void shmem_finalize(void)
{
    if (!weft_shmem.initialized) {
        return;
    }
    shmem_barrier_all();
    weft_shmem_net_teardown();
    PMPI_Win_free(&weft_shmem.heap_win);
    weft_shmem_data_teardown();
    weft_shmem_active_sets_free();
    team_release(&team_shared);
    team_release(&team_world);
    free(weft_shmem.heap_base);
    weft_shmem.heap_base = NULL;
    free(blocks);
    blocks = NULL;
    weft_shmem.initialized = false;
    weft_runtime.shmem_up = 0;
    if (weft_runtime.world_by_shmem || weft_runtime.mpi_finalize_deferred) {
        /* the program's MPI has ended (or never started): the last model out
         * takes the runtime down */
        weft_runtime.world_by_shmem = 0;
        weft_runtime.mpi_finalize_deferred = 0;
        PMPI_Finalize();
    }
}

void shmem_global_exit(int status)
{
    fflush(stdout);
    PMPI_Abort(MPI_COMM_WORLD, status);
    exit(status);
}

int shmem_my_pe(void)
{
    weft_shmem_check_init("shmem_my_pe");
    return weft_shmem.my_pe;
}

int shmem_n_pes(void)
{
    weft_shmem_check_init("shmem_n_pes");
    return weft_shmem.n_pes;
}

int _my_pe(void)
{
    return shmem_my_pe();
}

int _num_pes(void)
{
    return shmem_n_pes();
}

int shmem_pe_accessible(int pe)
{
    weft_shmem_check_init("shmem_pe_accessible");
    return pe >= 0 && pe < weft_shmem.n_pes;
}

int shmem_addr_accessible(const void *addr, int pe)
{
    weft_shmem_check_init("shmem_addr_accessible");
    const char *base = weft_shmem.heap_base[weft_shmem.my_pe];
    uint64_t off;
    if (!shmem_pe_accessible(pe)) {
        return 0;
    }
    return ((const char *)addr >= base && (const char *)addr < base + weft_shmem.heap_size) ||
           weft_shmem_data_offset(addr, 1, &off);
}

/* NULL for PEs on other nodes: their memory is not mapped here. */
void *shmem_ptr(const void *dest, int pe)
{
    return shmem_addr_accessible(dest, pe) ? weft_shmem_remote("shmem_ptr", dest, 0, pe) : NULL;
}

void shmem_info_get_version(int *major, int *minor)
{
    *major = SHMEM_MAJOR_VERSION;
    *minor = SHMEM_MINOR_VERSION;
}

void shmem_info_get_name(char *name)
{
    snprintf(name, SHMEM_MAX_NAME_LEN, "%s", SHMEM_VENDOR_STRING);
}

void shmem_pcontrol(int level, ...)
{
    (void)level; /* profiling hint: Weft has no SHMEM profiling levels */
}
