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

struct weft_shmem_team {
    MPI_Comm comm;
    int my_pe, n_pes;
    int *world_pe; /* team PE index -> PE number in SHMEM_TEAM_WORLD */
    int n_contexts; /* live contexts made from this team */
    int config_num_contexts; /* num_contexts of the creation config (0 when not given) */
};

/* A context: its own ordering/completion domain. Within a node every
 * operation is complete when it returns, so a context needs no queue of its
 * own; it carries the team whose PE numbering its operations use and the
 * creation options (SHMEM_CTX_PRIVATE binds it to the creating thread). */
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
    MPI_Win heap_win;   /* the node segment: one slice per PE */
    char **heap_base;   /* heap_base[pe]: PE pe's slice, mapped in this process */
    size_t heap_size;   /* bytes per PE */
};
extern struct weft_shmem_state weft_shmem;

/* Print "shmem: <call>: <message>" and abort the job (OpenSHMEM has no error returns). */
_Noreturn void weft_shmem_fail(const char *call, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Address of the symmetric object addr (a local address) in PE pe's memory;
 * aborts naming call when addr is not symmetric or pe is out of range. */
void *weft_shmem_remote(const char *call, const void *addr, size_t bytes, int pe);

/* Global/static data (shmem_data.c): set up at init, torn down at finalize.
 * weft_shmem_data_remote returns NULL when addr..addr+bytes is not global data
 * (or global data is not symmetric: weft_shmem_data_why_not says why). */
void weft_shmem_data_setup(MPI_Comm world);
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

static inline void *weft_shmem_remote_ctx(const char *call, shmem_ctx_t ctx, const void *addr, size_t bytes,
                                          int pe)
{
    if (ctx != &weft_shmem_ctx_default) {
        pe = weft_shmem_ctx_pe(call, ctx, pe);
    }
    return weft_shmem_remote(call, addr, bytes, pe);
}

static inline void weft_shmem_check_init(const char *call)
{
    if (!weft_shmem.initialized) {
        weft_shmem_fail(call, "called before shmem_init (or after shmem_finalize)");
    }
}

#endif
