/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Small OpenSHMEM latency probe, portable across implementations (built by
 * each one's oshcc; not part of the CMake build): PE 0 times 8-byte put
 * (+quiet), get and fetch_add on PE 1, and barrier_all. Prints median ns per
 * op over 11 rounds of 20000 ops. Run at np 2. */
#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

#define ROUNDS 11
#define ITERS  20000
int main(void)
{
    shmem_init();
    int me = shmem_my_pe();
    long *sym = shmem_calloc(16, sizeof(long)), v = 0;
    const char *names[] = {"put8+quiet", "get8", "fetch_add8", "barrier_all"};
    for (int op = 0; op < 4; op++) {
        double t[ROUNDS];
        for (int r = 0; r < ROUNDS; r++) {
            shmem_barrier_all();
            double t0 = now_ns();
            if (op == 3) {
                for (int i = 0; i < ITERS / 10; i++) shmem_barrier_all();
                t[r] = (now_ns() - t0) / (ITERS / 10);
                continue;
            }
            if (me == 0) {
                for (int i = 0; i < ITERS; i++) {
                    if (op == 0) {
                        shmem_long_put(sym, &v, 1, 1);
                        shmem_quiet();
                    } else if (op == 1) {
                        shmem_long_get(&v, sym, 1, 1);
                    } else {
                        v += shmem_long_atomic_fetch_add(sym + 8, 1, 1);
                    }
                }
            }
            t[r] = (now_ns() - t0) / ITERS;
        }
        qsort(t, ROUNDS, sizeof t[0], cmpd);
        if (me == 0) printf("%-12s %8.1f ns\n", names[op], t[ROUNDS / 2]);
    }
    shmem_barrier_all();
    if (me == 0 && v == 42) printf(" \n");
    shmem_finalize();
    return 0;
}
