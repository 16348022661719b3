/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Time of MPI_Comm_spawn: one parent spawns N copies of this program (N
 * from the arguments, default 1 4 16), REPS times each; the time is from
 * the call until a barrier over the intercommunicator returns (every child
 * is in MPI and connected), then both sides disconnect. Prints
 * "spawn N children: min X s, median Y s". Runs on any MPI-5 ABI library.
 *
 * "spawn_time pingpong" instead spawns one child and measures the parent <->
 * child ping-pong (half the round trip, min and median of 5 runs of 1000) at 8 B,
 * 4 KiB, 64 KiB and 1 MiB.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REPS 3

static const int pp_sizes[] = {8, 4096, 65536, 1 << 20};
#define PP_ITERS 1000
#define PP_RUNS  5

static int cmp_double(const void *a, const void *b);

/* Ping-pong over inter with remote rank 0; the parent prints. */
static void pingpong(MPI_Comm inter, int is_parent)
{
    char *buf = calloc(1, 1 << 20);

    for (size_t k = 0; k < sizeof(pp_sizes) / sizeof(pp_sizes[0]); k++) {
        double t[PP_RUNS];
        for (int r = 0; r < PP_RUNS; r++) {
            MPI_Barrier(inter);
            double t0 = MPI_Wtime();
            for (int i = 0; i < PP_ITERS; i++) {
                if (is_parent) {
                    MPI_Send(buf, pp_sizes[k], MPI_BYTE, 0, 1, inter);
                    MPI_Recv(buf, pp_sizes[k], MPI_BYTE, 0, 1, inter, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, pp_sizes[k], MPI_BYTE, 0, 1, inter, MPI_STATUS_IGNORE);
                    MPI_Send(buf, pp_sizes[k], MPI_BYTE, 0, 1, inter);
                }
            }
            t[r] = (MPI_Wtime() - t0) / PP_ITERS / 2;
        }
        qsort(t, PP_RUNS, sizeof(double), cmp_double);
        if (is_parent) {
            printf("parent<->child %d B: min %.2f us, median %.2f us\n", pp_sizes[k], t[0] * 1e6,
                   t[PP_RUNS / 2] * 1e6);
            fflush(stdout);
        }
    }
    free(buf);
}

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
    if (parent != MPI_COMM_NULL && argc > 1 && strcmp(argv[1], "pingpong") == 0) {
        pingpong(parent, 0);
        MPI_Comm_disconnect(&parent);
        MPI_Finalize();
        return 0;
    }
    if (parent == MPI_COMM_NULL && argc > 1 && strcmp(argv[1], "pingpong") == 0) {
        char *args[] = {"pingpong", NULL};
        MPI_Comm_spawn(argv[0], args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter,
                       MPI_ERRCODES_IGNORE);
        pingpong(inter, 1);
        MPI_Comm_disconnect(&inter);
        MPI_Finalize();
        return 0;
    }
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
