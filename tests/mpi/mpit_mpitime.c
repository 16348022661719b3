/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Known time inside and outside MPI for the job report's "time in MPI"
 * (tests/mpi/test_mpit_report.py checks the numbers):
 *   phase 1: rank 0 sleeps OUTSIDE_S outside MPI, then enters MPI_Barrier;
 *            the other ranks wait for it inside MPI_Barrier (class coll);
 *   phase 2: ranks > 0 sleep INSIDE_S outside MPI, then send to rank 0,
 *            which waits for them inside MPI_Recv (class pt2pt).
 * So rank 0 spends >= OUTSIDE_S outside and about INSIDE_S inside MPI; the
 * others spend >= INSIDE_S outside and about OUTSIDE_S inside.
 * With the argument "mismatch", rank 0 alone switches WEFT_REPORT to 1 through
 * MPI_T after MPI_Init: finalize must still end, with a report.
 */
#include <string.h>
#include <time.h>

#include "mpitest.h"

#define OUTSIDE_S 0.5
#define INSIDE_S  0.4

static void sleep_outside(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static void set_report_level(int level)
{
    MPI_T_cvar_handle h;
    int               provided, index, n;
    CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
    CHECK(MPI_T_cvar_get_index("WEFT_REPORT", &index) == MPI_SUCCESS, "no WEFT_REPORT");
    CHECK(MPI_T_cvar_handle_alloc(index, NULL, &h, &n) == MPI_SUCCESS, "handle");
    CHECK(MPI_T_cvar_write(h, &level) == MPI_SUCCESS, "write WEFT_REPORT=%d", level);
    MPI_T_cvar_handle_free(&h);
    MPI_T_finalize();
}

int main(int argc, char **argv)
{
    int rank, size, token = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && strcmp(argv[1], "mismatch") == 0) {
        if (rank == 0) {
            set_report_level(1);
        }
    } else {
        if (rank == 0) {
            sleep_outside(OUTSIDE_S);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int r = 1; r < size; r++) {
                MPI_Recv(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(token == r, "token %d from rank %d", token, r);
            }
        } else {
            sleep_outside(INSIDE_S);
            token = rank;
            MPI_Send(&token, 1, MPI_INT, 0, 7, MPI_COMM_WORLD);
        }
    }
    if (rank == 0 && mpitest_errors == 0) {
        printf("No Errors\n");
    }
    fflush(stdout);
    MPI_Finalize();
    return mpitest_errors ? 1 : 0;
}
