/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * A receiver blocked in MPI_Recv (and then in MPI_Wait) while the sender
 * sleeps: with WEFT_WAIT_POLICY=blocking its CPU time (getrusage, user+sys)
 * during the wait must stay under 5% of the wall time waited, and the
 * wake-up latency (receive time - send timestamp, CLOCK_MONOTONIC) is printed
 * and checked against a 50 ms sanity bound. With other policies only the
 * data is checked. WEFT_TEST_MAX_WAKEUPS_PER_S=N also bounds the receiver's
 * voluntary context switches per second waited (sleeping on the fabric's
 * wait fd instead of 2 ms naps: a few per second, not ~500). Ranks 0 (sender) and 1 (receiver); others idle; needs 2.
 */
#include "mpitest.h"

#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long wakeups(void)
{
    struct rusage ru;
    getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec * 1e-6 + (double)ru.ru_stime.tv_sec +
           (double)ru.ru_stime.tv_usec * 1e-6;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *pol = getenv("WEFT_WAIT_POLICY");
    int blocking = pol && strcmp(pol, "blocking") == 0;
    const char *max_wake_env = getenv("WEFT_TEST_MAX_WAKEUPS_PER_S");
    double      max_wake     = max_wake_env ? atof(max_wake_env) : 0;
    if (size < 2) {
        printf("p2p_blocking_wait: needs 2 ranks, skipping\n");
        return mpitest_finish();
    }
    double sleeps[2] = {2.0, 1.0};
    for (int round = 0; round < 2 && rank < 2; round++) {
        if (rank == 0) {
            int ready = 0;
            MPI_Recv(&ready, 1, MPI_INT, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            usleep((useconds_t)(sleeps[round] * 1e6));
            double ts = mpitest_now();
            CHECK_OK(MPI_Send(&ts, 1, MPI_DOUBLE, 1, 2, MPI_COMM_WORLD));
        } else {
            int         ready = 1;
            double      ts = 0;
            MPI_Request r;
            CHECK_OK(MPI_Send(&ready, 1, MPI_INT, 0, 1, MPI_COMM_WORLD));
            long   v0 = wakeups();
            double c0 = cpu(), w0 = mpitest_now();
            if (round == 0) {
                CHECK_OK(MPI_Recv(&ts, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            } else {
                CHECK_OK(MPI_Irecv(&ts, 1, MPI_DOUBLE, 0, 2, MPI_COMM_WORLD, &r));
                CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
            double w1 = mpitest_now(), c1 = cpu();
            long   v1 = wakeups();
            double wall = w1 - w0, used = c1 - c0, lat = w1 - ts;
            printf("p2p_blocking_wait: %s policy %s: waited %.3f s, cpu %.4f s (%.2f%%), wake-up latency %.3f ms, "
                   "%ld voluntary switches\n",
                   round == 0 ? "Recv" : "Irecv+Wait", pol ? pol : "(default)", wall, used,
                   100.0 * used / wall, lat * 1e3, v1 - v0);
            if (max_wake > 0) {
                CHECK((double)(v1 - v0) <= max_wake * wall, "round %d: %ld wake-ups in %.3f s (> %.0f/s)", round,
                      v1 - v0, wall, max_wake);
            }
            fflush(stdout);
            CHECK(ts > 0 && wall >= sleeps[round] * 0.8, "round %d: timestamp %f, waited only %.3f s", round, ts, wall);
            if (blocking) {
                CHECK(used < 0.05 * wall, "round %d: blocking wait used %.4f s CPU over %.3f s (>= 5%%)", round, used, wall);
                CHECK(lat < 0.050, "round %d: wake-up latency %.3f ms >= 50 ms", round, lat * 1e3);
            }
        }
    }
    int t = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MPI_Recv(&t, 1, MPI_INT, r, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, 3, MPI_COMM_WORLD);
    }
    return mpitest_finish();
}
