/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Time of MPI_Comm_spawn: one parent spawns N copies of this program (N
 * from the arguments, default 1 4 16), REPS times each; the time is from
 * the call until a barrier over the intercommunicator returns (every child
 * is in MPI and connected), then both sides disconnect. Prints
 * "spawn N children: min X s, median Y s". Runs on any MPI-5 ABI library.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 3

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int      counts[16] = {1, 4, 16}, ncounts = 3;

    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        MPI_Barrier(parent);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1) {
        ncounts = 0;
        for (int i = 1; i < argc && ncounts < 16; i++) {
            counts[ncounts++] = atoi(argv[i]);
        }
    }
    for (int c = 0; c < ncounts; c++) {
        double t[REPS];
        for (int r = 0; r < REPS; r++) {
            double t0 = MPI_Wtime();
            if (MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, counts[c], MPI_INFO_NULL, 0, MPI_COMM_SELF,
                               &inter, MPI_ERRCODES_IGNORE) != MPI_SUCCESS) {
                fprintf(stderr, "spawn of %d failed\n", counts[c]);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
            MPI_Barrier(inter);
            t[r] = MPI_Wtime() - t0;
            MPI_Comm_disconnect(&inter);
        }
        qsort(t, REPS, sizeof(double), cmp_double);
        printf("spawn %d children: min %.3f s, median %.3f s\n", counts[c], t[0], t[REPS / 2]);
        fflush(stdout);
    }
    MPI_Finalize();
    return 0;
}
