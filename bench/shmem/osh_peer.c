/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM put bandwidth and broadcast, portable across implementations
 * (OpenSHMEM 1.4 calls only, so Open MPI 4.1's oshmem builds it too; built
 * by each one's oshcc, not part of the CMake build), the companion of
 * osh_latency.c. Run at np 2 (broadcast also at more PEs).
 *   put_bw    PE 0 issues a window of 16 putmem_nbi of SIZE to PE 1, then
 *             quiet; MB/s (10^6 bytes) over the window, median of 11 rounds.
 *   broadcast shmem_broadcast64 from PE 0 over all PEs (the active-set form:
 *             1.4 has no teams) after a barrier_all each call, as OSU-style
 *             harnesses do; microseconds per call on PE 0 minus the
 *             barrier's own time, median of 11 rounds. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROUNDS 11
#define WINDOW 16
#define MAXBW  (4 << 20)
#define MAXBC  (1 << 20)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static long psync[SHMEM_BCAST_SYNC_SIZE];

static double barrier_us(int iters)
{
    double t0 = now_us();
    for (int i = 0; i < iters; i++) {
        shmem_barrier_all();
    }
    return (now_us() - t0) / iters;
}

int main(void)
{
    shmem_init();
    int   me = shmem_my_pe(), npes = shmem_n_pes();
    char *dst = shmem_malloc(MAXBW), *src = malloc(MAXBW);
    long *bdst = shmem_malloc(MAXBC), *bsrc = shmem_malloc(MAXBC);
    if (dst == NULL || src == NULL || bdst == NULL || bsrc == NULL) {
        fprintf(stderr, "osh_peer: no memory\n");
        shmem_global_exit(1);
    }
    memset(src, 1, MAXBW);
    memset(bsrc, 2, MAXBC);
    for (int i = 0; i < SHMEM_BCAST_SYNC_SIZE; i++) {
        psync[i] = SHMEM_SYNC_VALUE;
    }
    shmem_barrier_all();
    if (npes >= 2) {
        for (size_t size = 64 << 10; size <= MAXBW; size *= 4) {
            double mbs[ROUNDS];
            int    iters = size >= (1 << 20) ? 4 : 20;
            for (int r = 0; r < ROUNDS; r++) {
                shmem_barrier_all();
                double t0 = now_us();
                if (me == 0) {
                    for (int i = 0; i < iters; i++) {
                        for (int w = 0; w < WINDOW; w++) {
                            shmem_putmem_nbi(dst, src, size, 1);
                        }
                        shmem_quiet();
                    }
                }
                mbs[r] = (double)size * WINDOW * iters / (now_us() - t0);
            }
            qsort(mbs, ROUNDS, sizeof mbs[0], cmpd);
            if (me == 0) {
                printf("put_bw     %8zu B %10.0f MB/s\n", size, mbs[ROUNDS / 2]);
            }
        }
    }
    for (size_t size = 8; size <= MAXBC; size *= 8) {
        double us[ROUNDS];
        int    iters = size >= (64 << 10) ? 50 : 500;
        for (int r = 0; r < ROUNDS; r++) {
            double bar = barrier_us(iters);
            double t0  = now_us();
            for (int i = 0; i < iters; i++) {
                shmem_barrier_all();
                shmem_broadcast64(bdst, bsrc, size / 8, 0, 0, 0, npes, psync);
            }
            us[r] = (now_us() - t0) / iters - bar;
        }
        qsort(us, ROUNDS, sizeof us[0], cmpd);
        if (me == 0) {
            printf("broadcast  %8zu B %10.2f us (np %d)\n", size, us[ROUNDS / 2], npes);
        }
    }
    shmem_barrier_all();
    shmem_free(bsrc);
    shmem_free(bdst);
    shmem_free(dst);
    free(src);
    shmem_finalize();
    return 0;
}
