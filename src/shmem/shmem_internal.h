/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM layer, private state. Built on the MPI interface of the same
 * library (PMPI_* entry points), so MPI and SHMEM share one runtime: one set of
 * connections, one progress engine, MPI_COMM_WORLD rank == shmem_my_pe. */
#ifndef WEFT_SHMEM_INTERNAL_H
#define WEFT_SHMEM_INTERNAL_H

#pragma GCC visibility push(default)
#include <shmem.h>
#pragma GCC visibility pop
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct weft_shmem_team {
    MPI_Comm comm;
    int my_pe, n_pes;
    int *world_pe; /* team PE index -> PE number in SHMEM_TEAM_WORLD */
    int n_contexts; /* live contexts made from this team */
    int config_num_contexts; /* num_contexts of the creation config (0 when not given) */
};

/* A context: its own ordering/completion domain. Within a node every
 * operation is complete when it returns, and across nodes all contexts
 * share one completion state, so a context needs no queue of its own; it
 * carries the team whose PE numbering its operations use and the creation
 * options (SHMEM_CTX_PRIVATE binds it to the creating thread). */
struct weft_shmem_ctx {
    unsigned magic; /* WEFT_SHMEM_CTX_MAGIC while alive: catches destroyed or stray handles */
    long options;
    struct weft_shmem_team *team;
    unsigned long owner; /* pthread_self() of the creator, checked for SHMEM_CTX_PRIVATE */
};
#define WEFT_SHMEM_CTX_MAGIC 0x5eedc7c7u
extern struct weft_shmem_ctx weft_shmem_ctx_default;

struct weft_shmem_state {
    bool initialized;
    int my_pe, n_pes;
    MPI_Win heap_win;   /* the node segment: one slice per PE of this node */
    char **heap_base;   /* heap_base[pe]: PE pe's slice mapped here; NULL for PEs on other nodes */
    size_t heap_size;   /* bytes per PE */
    bool net;           /* some PEs are on other nodes: shmem_net.c serves and sends */
};
extern struct weft_shmem_state weft_shmem;

/* Print "shmem: <call>: <message>" and abort the job (OpenSHMEM has no error returns). */
_Noreturn void weft_shmem_fail(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Where a symmetric object is, for PEs on other nodes: the segment (heap or
 * global data) and the offset in it, the same on every PE. */
enum { WEFT_SHMEM_SEG_HEAP = 0, WEFT_SHMEM_SEG_DATA = 1 };
struct weft_shmem_where {
    int pe; /* in SHMEM_TEAM_WORLD */
    int seg;
    uint64_t off;
};

/* Address of the symmetric object addr (a local address) in PE pe's memory
 * when pe is on this node (mapped here); NULL when pe is on another node,
 * and *where (if not NULL) then says how to reach it. Aborts naming call when
 * addr..addr+bytes is not symmetric or pe is out of range. */
void *weft_shmem_locate_slow(const char *call, const void *addr, size_t bytes, int pe,
                             struct weft_shmem_where *where);
static inline __attribute__((always_inline)) void *weft_shmem_locate(const char *call, const void *addr, size_t bytes, int pe,
                                      struct weft_shmem_where *where)
{
    /* inline fast path: a heap object of a PE on this node */
    if (__builtin_expect(weft_shmem.initialized && (unsigned)pe < (unsigned)weft_shmem.n_pes, 1)) {
        const char *base = weft_shmem.heap_base[weft_shmem.my_pe], *p = addr;
        char *peer = weft_shmem.heap_base[pe];
        if (peer && p >= base && bytes <= weft_shmem.heap_size &&
            (size_t)(p - base) <= weft_shmem.heap_size - bytes) {
            return peer + (p - base);
        }
    }
    return weft_shmem_locate_slow(call, addr, bytes, pe, where);
}
static inline void *weft_shmem_remote(const char *call, const void *addr, size_t bytes, int pe)
{
    return weft_shmem_locate(call, addr, bytes, pe, NULL);
}

/* Global/static data (shmem_data.c): set up at init, torn down at finalize.
 * weft_shmem_data_remote returns NULL when addr..addr+bytes is not global data
 * (or global data is not symmetric: weft_shmem_data_why_not says why). */
void weft_shmem_data_setup(MPI_Comm world);
/* Offset of addr..addr+bytes in the global data (false: not global data). */
bool weft_shmem_data_offset(const void *addr, size_t bytes, uint64_t *off);
/* This PE's global data at off (NULL when off..off+bytes is outside it). */
void *weft_shmem_data_at(uint64_t off, size_t bytes);
/* This PE's global data: its start and *len (NULL, 0 when not symmetric). */
void *weft_shmem_data_range(size_t *len);
void weft_shmem_data_teardown(void);
void *weft_shmem_data_remote(const void *addr, size_t bytes, int pe);
const char *weft_shmem_data_why_not(void);

/* Frees the cached teams of the deprecated active-set collectives (finalize). */
void weft_shmem_active_sets_free(void);

/* Wait-policy backoff for polling loops: spins a little, then yields the CPU
 * (8 PEs on 2 cores must make progress). */
void weft_shmem_backoff(unsigned *spins);

/* Checks ctx (valid handle, owning thread for SHMEM_CTX_PRIVATE) and returns
 * pe, numbered in ctx's team, as a PE number in SHMEM_TEAM_WORLD. */
int weft_shmem_ctx_pe(const char *call, shmem_ctx_t ctx, int pe);
void weft_shmem_ctx_check(const char *call, shmem_ctx_t ctx);

static inline __attribute__((always_inline)) void *weft_shmem_locate_ctx(const char *call, shmem_ctx_t ctx, const void *addr, size_t bytes,
                                          int pe, struct weft_shmem_where *where)
{
    if (ctx != &weft_shmem_ctx_default) {
        pe = weft_shmem_ctx_pe(call, ctx, pe);
    }
    return weft_shmem_locate(call, addr, bytes, pe, where);
}

/* --- PEs on other nodes (shmem_net.c) ----------------------------------------------
 * Operations travel as messages on a private communicator; the target PE's
 * progress hook applies them, in arrival order per origin, with the same CPU
 * atomics its node's PEs use (docs/design.md "OpenSHMEM"). */
enum {
    WEFT_SHMEM_AMO_FETCH = 1, WEFT_SHMEM_AMO_SET, WEFT_SHMEM_AMO_SWAP, WEFT_SHMEM_AMO_CSWAP,
    WEFT_SHMEM_AMO_ADD, WEFT_SHMEM_AMO_AND, WEFT_SHMEM_AMO_OR, WEFT_SHMEM_AMO_XOR
};
void weft_shmem_net_setup(MPI_Comm world);
void weft_shmem_net_teardown(void);
/* Put count elements of esize bytes, stride source / target stride bytes apart
 * (contiguous: count 1). nbi: src may be read until quiet. signal: NULL or
 * the signal update applied after the data. */
struct weft_shmem_signal {
    struct weft_shmem_where where;
    uint64_t value;
    int op;
};
void weft_shmem_net_put(const char *call, const struct weft_shmem_where *w, const void *src, size_t esize,
                        size_t count, ptrdiff_t sstride, ptrdiff_t tstride, bool nbi,
                        const struct weft_shmem_signal *signal);
/* Get: blocking unless nbi (then dest is filled by quiet). */
void weft_shmem_net_get(const char *call, const struct weft_shmem_where *w, void *dest, size_t esize,
                        size_t count, ptrdiff_t dstride, ptrdiff_t tstride, bool nbi);
/* Atomic op on size (4 or 8) bytes; value/compare as bits. fetch: NULL for
 * the non-fetching forms (complete at quiet); with nbi the old value lands in
 * *fetch at quiet, else the call waits and also returns it. */
uint64_t weft_shmem_net_amo(const char *call, const struct weft_shmem_where *w, size_t size, int op,
                            uint64_t value, uint64_t compare, void *fetch, bool nbi);
/* Complete every operation this PE issued to other nodes. */
void weft_shmem_net_quiet(void);
/* Order this PE's earlier operations to other nodes before its later ones. */
void weft_shmem_net_fence(void);
/* One pass of the progress engine (serves other nodes' operations on this PE). */
void weft_shmem_net_progress(void);

static inline void weft_shmem_check_init(const char *call)
{
    if (!weft_shmem.initialized) {
        weft_shmem_fail(call, "called before shmem_init (or after shmem_finalize)");
    }
}

#endif
