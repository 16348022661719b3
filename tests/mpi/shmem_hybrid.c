/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Hybrid MPI + OpenSHMEM in one program on one runtime. argv[1] is the order:
 *   mpi-first    MPI_Init, shmem_init, shmem_finalize, MPI still works, MPI_Finalize
 *   shmem-first  shmem_init (MPI_Initialized is then true), shmem_finalize
 *   shmem-mpi    shmem_init, MPI_Init (joins the runtime: MPI_SUCCESS),
 *                MPI_Finalize, SHMEM still works, shmem_finalize
 *   mpi-shmem-mpi-out  MPI_Init, shmem_init, MPI_Finalize (MPI_Finalized is
 *                then true), SHMEM still works, shmem_finalize
 * Each checks MPI_COMM_WORLD rank == shmem_my_pe, a SHMEM put ring and an MPI
 * ring on the same data, and which model outlives the other. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static int errs;
#define FAIL(...) (errs++, fprintf(stderr, __VA_ARGS__), fputc('\n', stderr))

/* A put ring through SHMEM alone: still works after the other model ended. */
static void shmem_ring(int me, int n, const char *when)
{
    long *slot = shmem_calloc(1, sizeof(long));
    shmem_long_p(slot, 1000 + me, (me + 1) % n);
    shmem_barrier_all();
    if (*slot != 1000 + (me + n - 1) % n) {
        FAIL("PE %d: shmem ring %s got %ld", me, when, *slot);
    }
    shmem_free(slot);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int mpi_first = !strcmp(mode, "mpi-first") || !strcmp(mode, "mpi-shmem-mpi-out");
    int flag = 0;
    if (mpi_first) {
        MPI_Init(&argc, &argv);
    }
    shmem_init();
    MPI_Initialized(&flag); /* shmem_init brought MPI up if the program had not */
    if (!flag) {
        FAIL("MPI_Initialized false after shmem_init");
    }
    if (!strcmp(mode, "shmem-mpi")) {
        int provided = -1, rc = MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
        if (rc != MPI_SUCCESS || provided < MPI_THREAD_SINGLE) {
            FAIL("MPI_Init_thread after shmem_init: rc %d provided %d", rc, provided);
        }
    }
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank != shmem_my_pe() || size != shmem_n_pes()) {
        FAIL("rank %d/%d vs pe %d/%d", rank, size, shmem_my_pe(), shmem_n_pes());
    }
    int *buf = shmem_calloc(4, sizeof(int));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[4] = {rank, rank * 2, rank * 3, -rank};
    shmem_int_put(buf, v, 4, right);
    shmem_barrier_all();
    if (buf[0] != left || buf[3] != -left) {
        FAIL("rank %d: shmem ring got %d", rank, buf[0]);
    }
    int got[4];
    MPI_Sendrecv(buf, 4, MPI_INT, right, 7, got, 4, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int from2 = (left + size - 1) % size;
    if (got[0] != from2 || got[2] != from2 * 3) {
        FAIL("rank %d: MPI ring got %d want %d", rank, got[0], from2);
    }
    shmem_free(buf);

    int total = 0;
    if (!strcmp(mode, "shmem-mpi") || !strcmp(mode, "mpi-shmem-mpi-out")) {
        /* MPI ends first; SHMEM keeps the runtime */
        MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (MPI_Finalize() != MPI_SUCCESS) {
            FAIL("MPI_Finalize with SHMEM up");
        }
        MPI_Finalized(&flag);
        if (!flag) {
            FAIL("MPI_Finalized false after MPI_Finalize");
        }
        shmem_ring(rank, size, "after MPI_Finalize");
        int *e = shmem_malloc(sizeof(int)), *t = shmem_malloc(sizeof(int));
        *e = errs;
        shmem_int_sum_reduce(SHMEM_TEAM_WORLD, t, e, 1);
        total = *t;
        shmem_finalize();
        if (rank == 0 && total == 0) {
            printf("No Errors\n");
        }
        return total != 0;
    }
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    shmem_finalize();
    MPI_Finalized(&flag);
    if (mpi_first) { /* MPI outlives SHMEM */
        int one = 1, n = 0;
        if (flag) {
            total++, fprintf(stderr, "MPI_Finalized true after shmem_finalize\n");
        }
        MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (n != size) {
            total++;
        }
        if (rank == 0 && total == 0) printf("No Errors\n");
        MPI_Finalize();
    } else {
        if (!flag) { /* shmem_init started MPI, so shmem_finalize ended it */
            total++, fprintf(stderr, "MPI_Finalized false after shmem_finalize\n");
        }
        if (rank == 0 && total == 0) printf("No Errors\n");
    }
    return total != 0;
}
