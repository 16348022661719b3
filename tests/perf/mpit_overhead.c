/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Cost of the MPI_T performance variables (docs/performance.md, "MPI_T
 * overhead"): ping-pong latency 0, 1, 8, 64 B and 8 B allreduce at np 2, as
 * 60 batches of 500 iterations; prints "<metric> <best batch> <median batch>"
 * in microseconds. Argument: 0 no MPI_T, 1 a session with a started handle on
 * every pvar except the watermarks, 2 every pvar; with a session every handle
 * is read after every batch. Run by tests/perf/mpit_overhead.sh. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static MPI_T_pvar_session s;
static MPI_T_pvar_handle  h[64];
static int                nh;

static void open_session(int watermarks)
{
    int prov, n, cls, count, ro, cont;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_get_num(&n);
    for (int i = 0; i < n && nh < 64; i++) {
        MPI_T_pvar_get_info(i, NULL, NULL, NULL, &cls, NULL, NULL, NULL, NULL, NULL, &ro, &cont, NULL);
        if (!watermarks && (cls == MPI_T_PVAR_CLASS_HIGHWATERMARK || cls == MPI_T_PVAR_CLASS_LOWWATERMARK))
            continue;
        MPI_T_pvar_handle_alloc(s, i, NULL, &h[nh], &count);
        if (!cont) MPI_T_pvar_start(s, h[nh]);
        nh++;
    }
}

static void read_all(void)
{
    static unsigned long long buf[1024];
    for (int i = 0; i < nh; i++) MPI_T_pvar_read(s, h[i], buf);
}

int main(int argc, char **argv)
{
    int session = argc > 1 ? atoi(argv[1]) : 0; /* 0 none, 1 counters, 2 all incl. watermarks */
    int iters = 20000, warm = 2000, rank;
    char buf[64] = {0};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (session) open_session(session == 2);
    int sizes[] = {0, 1, 8, 64};
    enum { NB = 60, BI = 500 };
    double lat[NB];
    for (int k = 0; k < 5; k++) {
        int n = k < 4 ? sizes[k] : 8;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int b = -2; b < NB; b++) { /* two warm-up batches */
            double t0 = MPI_Wtime();
            for (int i = 0; i < BI; i++) {
                if (k == 4) {
                    double a = 1, r;
                    MPI_Allreduce(&a, &r, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
                } else if (rank == 0) {
                    MPI_Send(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
                    MPI_Recv(buf, n, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                } else {
                    MPI_Recv(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    MPI_Send(buf, n, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
                }
            }
            if (b >= 0) lat[b] = (MPI_Wtime() - t0) * 1e6 / BI / (k == 4 ? 1 : 2);
            if (session) read_all(); /* the tool reads every pvar after every batch */
        }
        /* sort */
        for (int i = 1; i < NB; i++) for (int j = i; j > 0 && lat[j] < lat[j-1]; j--) { double x = lat[j]; lat[j] = lat[j-1]; lat[j-1] = x; }
        if (rank == 0) printf("%s%d %.4f %.4f\n", k == 4 ? "allreduce" : "lat", n, lat[0], lat[NB / 2]);
    }
    MPI_Finalize();
    if (session) MPI_T_finalize();
    return 0;
}
