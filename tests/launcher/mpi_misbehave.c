/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * mpi_misbehave MODE: an MPI program for tests/launcher (built by the test
 * with the installed mpicc, needs only MPI_Init/rank/size/Abort/Finalize).
 *   hello  every rank prints "hello R of N" and finalizes
 *   abort  rank 1 calls MPI_Abort(MPI_COMM_WORLD, 5); the others sleep
 *   crash  rank 1 segfaults; the others sleep
 *   early-abort  local rank 0 calls MPI_Abort(MPI_COMM_WORLD, 3) right after
 *          MPI_Init while local ranks from 2 on sleep 3 s before MPI_Init
 *          (they have not mapped the node's shared memory yet; local rank 1
 *          starts at once: rank 0's init measures costs with a partner)
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    int rank, size;

    if (argc > 1 && strcmp(argv[1], "early-abort") == 0) {
        const char *local = getenv("MPI_LOCALRANKID"); /* set by weft-proxy */
        if (local == NULL) {
            local = getenv("SLURM_LOCALID"); /* srun */
        }
        int lr = local != NULL ? atoi(local) : 0;
        if (lr >= 2) {
            sleep(3);
        }
        MPI_Init(&argc, &argv);
        if (lr == 0) {
            MPI_Abort(MPI_COMM_WORLD, 3);
        }
        sleep(60); /* killed by the abort */
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "abort") == 0) {
        if (rank == 1) {
            MPI_Abort(MPI_COMM_WORLD, 5);
        }
        sleep(60);
    } else if (argc > 1 && strcmp(argv[1], "crash") == 0) {
        if (rank == 1) {
            usleep(200000);
            raise(SIGSEGV);
        }
        sleep(60);
    } else {
        printf("hello %d of %d\n", rank, size);
    }
    MPI_Finalize();
    return 0;
}
