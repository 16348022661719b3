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
};

struct weft_shmem_state {
    bool initialized;
    bool owns_mpi; /* shmem_init initialised MPI, so shmem_finalize finalizes it */
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

/* Wait-policy backoff for polling loops: spins a little, then yields the CPU
 * (8 PEs on 2 cores must make progress). */
void weft_shmem_backoff(unsigned *spins);

static inline void weft_shmem_check_init(const char *call)
{
    if (!weft_shmem.initialized) {
        weft_shmem_fail(call, "called before shmem_init (or after shmem_finalize)");
    }
}

#endif
