/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM operations on a PE of another node that computes without
 * SHMEM/MPI calls (WEFT_ASYNC_PROGRESS; run with WEFT_SHMEM_FAKE_PPN=1 or
 * across hosts): the last PE loops watching a flag in its symmetric memory
 * for up to argv[2] seconds (default 20). Every other PE takes a ticket with
 * fetch_inc, adds to a long ROUNDS times, puts a block of BLK bytes (by
 * libfabric RMA above WEFT_SHMEM_NET_RMA) and a small one (by a message),
 * gets both back and quiets; once all have (a sync of their team), PE 0
 * sets the flag with an atomic set. Checked: tickets distinct, the sum,
 * every byte put.
 *
 * argv[1]: "expect" - the flag must arrive while the target computes;
 * "report" - print whether it did (without the thread it arrives once the
 * target calls SHMEM again, and nothing hangs).
 */
#include "shmemtest.h"

#include <time.h>

#define BLK    (64 * 1024)
#define SMALL  64
#define ROUNDS 100

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char pattern(size_t i, int pe)
{
    return (unsigned char)(i * 7 + (size_t)pe * 31 + 1);
}

int main(int argc, char **argv)
{
    int    expect = argc > 1 && strcmp(argv[1], "expect") == 0;
    double limit  = argc > 2 ? atof(argv[2]) : 20.0;

    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes(), target = npes - 1;
    int           *flag    = shmem_calloc(1, sizeof(int));
    int           *tickets = shmem_calloc(1, sizeof(int));
    long          *sum     = shmem_calloc(1, sizeof(long));
    unsigned char *area    = shmem_calloc((size_t)npes, BLK + SMALL);
    unsigned char *mine    = malloc(BLK + SMALL), *back = malloc(BLK + SMALL);
    int           *got     = shmem_calloc((size_t)npes, sizeof(int));
    shmem_team_t   origins = SHMEM_TEAM_INVALID;

    CHECK(flag && tickets && sum && area && mine && back && got, "allocation");
    if (npes > 1) {
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes - 1, NULL, 0, &origins);
    }
    shmem_barrier_all();

    if (npes > 1 && me == target) {
        double t0 = now(), x = 1.0;
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1 && now() - t0 < limit) {
            for (int k = 0; k < 1000; k++) x = x * 1.0000001 + 1e-9; /* compute, no calls */
        }
        double took    = now() - t0;
        int    arrived = __atomic_load_n(flag, __ATOMIC_ACQUIRE) == 1;
        if (expect) {
            CHECK(arrived, "the other PEs' operations did not finish within %.0f s while this PE "
                  "computed (x=%g)", limit, x);
        }
        printf("shmem_async_progress: the other PEs' operations %s while the target computed "
               "(%.3f s)\n", arrived ? "completed" : "did NOT complete", took);
        fflush(stdout);
    } else if (npes > 1) {
        unsigned char *at = area + (size_t)me * (BLK + SMALL);
        for (size_t i = 0; i < BLK + SMALL; i++) mine[i] = pattern(i, me);
        got[me] = shmem_int_atomic_fetch_inc(tickets, target);
        for (int r = 0; r < ROUNDS; r++) {
            shmem_long_atomic_add(sum, me + 1, target);
        }
        shmem_putmem(at, mine, BLK, target);
        shmem_putmem(at + BLK, mine + BLK, SMALL, target);
        shmem_quiet();
        shmem_getmem(back, at, BLK + SMALL, target);
        CHECK(memcmp(back, mine, BLK + SMALL) == 0, "read back from the target differs");
        shmem_team_sync(origins);
        if (me == 0) {
            shmem_int_atomic_set(flag, 1, target);
            shmem_quiet();
        }
    }
    shmem_barrier_all();
    if (npes > 1 && me == target) {
        long want = 0;
        for (int pe = 0; pe < target; pe++) {
            want += ROUNDS * (long)(pe + 1);
            const unsigned char *at = area + (size_t)pe * (BLK + SMALL);
            for (size_t i = 0; i < BLK + SMALL; i++) {
                if (at[i] != pattern(i, pe)) {
                    CHECK(0, "byte %zu from PE %d: %u, want %u", i, pe, at[i], pattern(i, pe));
                    break;
                }
            }
        }
        CHECK(*sum == want, "sum %ld, want %ld", *sum, want);
        CHECK(*tickets == target, "ticket counter %d, want %d", *tickets, target);
    }
    /* tickets are distinct: everyone's to PE 0 */
    if (npes > 1 && me != target) {
        shmem_int_put(&got[me], &got[me], 1, 0);
    }
    shmem_barrier_all();
    if (me == 0 && npes > 1) {
        for (int a = 0; a < target; a++)
            for (int b = a + 1; b < target; b++)
                CHECK(got[a] != got[b], "PEs %d and %d got the same ticket %d", a, b, got[a]);
    }
    if (origins != SHMEM_TEAM_INVALID) {
        shmem_team_destroy(origins);
    }
    free(mine);
    free(back);
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
