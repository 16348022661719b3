/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Hybrid MPI + OpenSHMEM in one program, in both init orders (argv[1]:
 * "mpi-first" or "shmem-first"). Checks MPI_COMM_WORLD rank == shmem_my_pe,
 * a SHMEM put ring followed by an MPI ring on the same data, and (mpi-first)
 * that MPI stays usable after shmem_finalize. */
#include <mpi.h>
#include <shmem.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int mpi_first = argc > 1 && !strcmp(argv[1], "mpi-first");
    int errs = 0, flag = 0;
    if (mpi_first) {
        MPI_Init(&argc, &argv);
    }
    shmem_init();
    MPI_Initialized(&flag); /* shmem_init brought MPI up if the program had not */
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (!flag || rank != shmem_my_pe() || size != shmem_n_pes()) {
        errs++;
        fprintf(stderr, "rank %d/%d vs pe %d/%d, MPI initialized %d\n", rank, size, shmem_my_pe(), shmem_n_pes(), flag);
    }
    int *buf = shmem_calloc(4, sizeof(int));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int v[4] = {rank, rank * 2, rank * 3, -rank};
    shmem_int_put(buf, v, 4, right);
    shmem_barrier_all();
    if (buf[0] != left || buf[3] != -left) {
        errs++;
        fprintf(stderr, "rank %d: shmem ring got %d\n", rank, buf[0]);
    }
    int got[4];
    MPI_Sendrecv(buf, 4, MPI_INT, right, 7, got, 4, MPI_INT, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    int from2 = (left + size - 1) % size;
    if (got[0] != from2 || got[2] != from2 * 3) {
        errs++;
        fprintf(stderr, "rank %d: MPI ring got %d want %d\n", rank, got[0], from2);
    }
    shmem_free(buf);
    int total = 0;
    MPI_Allreduce(&errs, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    shmem_finalize();
    if (mpi_first) { /* MPI outlives SHMEM */
        int one = 1, n = 0;
        MPI_Allreduce(&one, &n, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (n != size) {
            total++;
        }
        if (rank == 0 && total == 0) printf("No Errors\n");
        MPI_Finalize();
    } else if (rank == 0 && total == 0) {
        printf("No Errors\n");
    }
    return total != 0;
}
