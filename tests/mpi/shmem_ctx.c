/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM contexts: shmem_ctx_create with every option, ctx RMA (put/get/
 * p/g/iput/iget/nbi/put_signal, sized and mem forms) checked byte for byte,
 * ctx atomics under contention (exact sum), ctx_quiet/fence, a team context
 * addressing PEs by team index (even PEs), ctx_get_team, the failure results
 * for SHMEM_TEAM_INVALID/SHMEM_CTX_INVALID, and private contexts used by two
 * threads per PE at SHMEM_THREAD_MULTIPLE. */
#include "shmemtest.h"

#include <pthread.h>

#define N      41
#define ITERS  2000
#define NTHR   2

static long *counter; /* on PE 0: every ctx fetch_add lands here */

static void *thread_adds(void *arg)
{
    long *sum = arg;
    shmem_ctx_t ctx;
    if (shmem_ctx_create(SHMEM_CTX_PRIVATE | SHMEM_CTX_SERIALIZED, &ctx) != 0) {
        *sum = -1;
        return NULL;
    }
    for (int i = 0; i < ITERS; i++) {
        *sum += shmem_ctx_long_atomic_fetch_add(ctx, counter, 1, 0) >= 0;
    }
    shmem_ctx_quiet(ctx);
    shmem_ctx_destroy(ctx);
    return NULL;
}

int main(void)
{
    int provided;
    shmem_init_thread(SHMEM_THREAD_MULTIPLE, &provided);
    int me = shmem_my_pe(), n = shmem_n_pes();
    int right = (me + 1) % n, left = (me + n - 1) % n;

    /* every option combination makes a context; each one's RMA works */
    static const long opts[] = {0, SHMEM_CTX_SERIALIZED, SHMEM_CTX_PRIVATE, SHMEM_CTX_NOSTORE,
                                SHMEM_CTX_SERIALIZED | SHMEM_CTX_PRIVATE | SHMEM_CTX_NOSTORE};
    int *sym = shmem_calloc(4 * N, sizeof(int));
    uint64_t *sig = shmem_calloc(1, sizeof(uint64_t));
    for (size_t o = 0; o < sizeof opts / sizeof opts[0]; o++) {
        shmem_ctx_t ctx = SHMEM_CTX_INVALID;
        CHECK(shmem_ctx_create(opts[o], &ctx) == 0 && ctx != SHMEM_CTX_INVALID, "ctx_create(%ld)", opts[o]);
        shmem_team_t team = SHMEM_TEAM_INVALID;
        CHECK(shmem_ctx_get_team(ctx, &team) == 0 && team == SHMEM_TEAM_WORLD, "ctx_get_team");
        int loc[N], got[N], expect[N];
        for (int i = 0; i < N; i++) {
            loc[i] = me * 1000 + i * 7 + (int)o;
            expect[i] = left * 1000 + i * 7 + (int)o;
        }
        shmem_ctx_int_put(ctx, sym, loc, N, right);
        shmem_ctx_int_put_nbi(ctx, sym + N, loc, N, right);
        shmem_ctx_putmem(ctx, sym + 2 * N, loc, sizeof loc, right);
        shmem_ctx_int_iput(ctx, sym + 3 * N, loc, 1, 2, (N + 1) / 2, right); /* every other element */
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        CHECK(!memcmp(sym, expect, sizeof expect), "ctx put (opts %ld)", opts[o]);
        CHECK(!memcmp(sym + N, expect, sizeof expect), "ctx put_nbi");
        CHECK(!memcmp(sym + 2 * N, expect, sizeof expect), "ctx putmem");
        for (int i = 0; i < (N + 1) / 2; i++) {
            CHECK(sym[3 * N + i] == expect[2 * i], "ctx iput element %d", i);
        }
        memset(got, 0, sizeof got);
        shmem_ctx_int_get(ctx, got, sym, N, right); /* right holds my data */
        CHECK(!memcmp(got, loc, sizeof loc), "ctx get");
        memset(got, 0, sizeof got);
        shmem_ctx_int_get_nbi(ctx, got, sym + N, N, right);
        shmem_ctx_quiet(ctx);
        CHECK(!memcmp(got, loc, sizeof loc), "ctx get_nbi");
        memset(got, 0, sizeof got);
        shmem_ctx_get32(ctx, got, sym + 2 * N, N, right);
        CHECK(!memcmp(got, loc, sizeof loc), "ctx get32");
        memset(got, 0, sizeof got);
        shmem_ctx_int_iget(ctx, got, sym, 2, 1, (N + 1) / 2, right);
        for (int i = 0; i < (N + 1) / 2; i++) {
            CHECK(got[2 * i] == loc[i], "ctx iget element %d", i);
        }
        CHECK(shmem_ctx_int_g(ctx, &sym[5], right) == loc[5], "ctx g");
        shmem_barrier_all();
        /* put_signal: the data is there once the signal is */
        shmem_ctx_int_put_signal(ctx, sym, loc, N, sig, (uint64_t)o + 1, SHMEM_SIGNAL_SET, right);
        shmem_signal_wait_until(sig, SHMEM_CMP_EQ, (uint64_t)o + 1);
        CHECK(!memcmp(sym, expect, sizeof expect), "ctx put_signal data");
        shmem_barrier_all(); /* everyone checked before the next writes */
        shmem_ctx_int_p(ctx, &sym[0], -me, right);
        shmem_ctx_fence(ctx);
        shmem_ctx_int_atomic_add(ctx, &sym[1], 5, right);
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        CHECK(sym[0] == -left && sym[1] == expect[1] + 5, "ctx p + atomic_add: %d %d", sym[0], sym[1]);
        shmem_barrier_all();
        shmem_ctx_destroy(ctx);
    }

    /* ctx atomics of several types */
    {
        shmem_ctx_t ctx;
        CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
        uint64_t *u = shmem_calloc(2, sizeof(uint64_t));
        double *d = shmem_calloc(1, sizeof(double));
        shmem_barrier_all();
        shmem_ctx_uint64_atomic_or(ctx, &u[0], (uint64_t)1 << me % 64, 0);
        shmem_ctx_uint64_atomic_fetch_inc(ctx, &u[1], 0);
        if (me == n - 1) {
            shmem_ctx_double_atomic_set(ctx, d, 2.5, 0);
        }
        shmem_ctx_quiet(ctx);
        shmem_barrier_all();
        if (me == 0) {
            uint64_t bits = 0;
            for (int p = 0; p < n; p++) {
                bits |= (uint64_t)1 << p % 64;
            }
            CHECK(u[0] == bits && u[1] == (uint64_t)n && *d == 2.5, "ctx atomics on PE 0");
        }
        shmem_barrier_all(); /* PE 0 checked before the swaps below */
        CHECK(shmem_ctx_uint64_atomic_fetch(ctx, &u[1], 0) == (uint64_t)n, "ctx atomic_fetch");
        CHECK(shmem_ctx_double_atomic_swap(ctx, d, 1.0, 0) != 0.0, "ctx swap");
        shmem_barrier_all();
        uint64_t old = shmem_ctx_uint64_atomic_compare_swap(ctx, &u[1], (uint64_t)n, 99, 0);
        shmem_barrier_all();
        CHECK(shmem_ctx_uint64_atomic_fetch(ctx, &u[1], 0) == 99, "ctx compare_swap result");
        CHECK(old == (uint64_t)n || old == 99, "ctx compare_swap old value %lu", (unsigned long)old);
        shmem_barrier_all();
        shmem_ctx_destroy(ctx);
        shmem_free(u);
        shmem_free(d);
    }

    /* a team context numbers PEs by their index in the team (even PEs here) */
    {
        shmem_team_t even = SHMEM_TEAM_INVALID;
        int neven = (n + 1) / 2;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, neven, NULL, 0, &even);
        int *slot = shmem_calloc(1, sizeof(int));
        shmem_barrier_all();
        if (even != SHMEM_TEAM_INVALID) {
            shmem_ctx_t tctx;
            CHECK(shmem_team_create_ctx(even, 0, &tctx) == 0, "team_create_ctx");
            shmem_team_t got_team;
            CHECK(shmem_ctx_get_team(tctx, &got_team) == 0 && got_team == even, "ctx_get_team(team ctx)");
            int tme = shmem_team_my_pe(even), tright = (tme + 1) % neven;
            shmem_ctx_int_p(tctx, slot, 100 + me, tright); /* lands on world PE 2 * tright */
            shmem_ctx_quiet(tctx);
            shmem_team_sync(even);
            int tleft = (tme + neven - 1) % neven;
            CHECK(*slot == 100 + 2 * tleft, "team ctx put landed from world PE %d: %d", 2 * tleft, *slot);
            CHECK(shmem_ctx_int_g(tctx, slot, tright) == 100 + me, "team ctx g");
            shmem_ctx_destroy(tctx);
            shmem_team_destroy(even);
        } else {
            shmem_ctx_t bad = SHMEM_CTX_DEFAULT;
            CHECK(shmem_team_create_ctx(SHMEM_TEAM_INVALID, 0, &bad) != 0 && bad == SHMEM_CTX_INVALID,
                  "team_create_ctx(SHMEM_TEAM_INVALID) fails");
            CHECK(*slot == 0, "odd PE untouched");
        }
        shmem_team_t t = SHMEM_TEAM_WORLD;
        CHECK(shmem_ctx_get_team(SHMEM_CTX_INVALID, &t) != 0 && t == SHMEM_TEAM_INVALID,
              "ctx_get_team(SHMEM_CTX_INVALID)");
        CHECK(shmem_ctx_get_team(SHMEM_CTX_DEFAULT, &t) == 0 && t == SHMEM_TEAM_WORLD, "default ctx team");
        shmem_ctx_destroy(SHMEM_CTX_INVALID); /* a no-op by the standard */
        shmem_barrier_all();
        shmem_free(slot);
    }

    /* private contexts from two threads per PE: the total is exact */
    counter = shmem_calloc(1, sizeof(long));
    shmem_barrier_all();
    if (provided == SHMEM_THREAD_MULTIPLE) {
        pthread_t th[NTHR];
        long sums[NTHR] = {0};
        for (int i = 0; i < NTHR; i++) {
            pthread_create(&th[i], NULL, thread_adds, &sums[i]);
        }
        for (int i = 0; i < NTHR; i++) {
            pthread_join(th[i], NULL);
            CHECK(sums[i] == ITERS, "thread %d did %ld adds", i, sums[i]);
        }
        shmem_barrier_all();
        if (me == 0) {
            CHECK(*counter == (long)n * NTHR * ITERS, "counter %ld, want %ld", *counter, (long)n * NTHR * ITERS);
        }
    } else if (me == 0) {
        printf("thread part skipped: SHMEM_THREAD_MULTIPLE not provided (%d)\n", provided);
    }
    shmem_barrier_all();
    shmem_free(counter);
    shmem_free(sym);
    shmem_free(sig);
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
