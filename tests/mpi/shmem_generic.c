/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The C11 type-generic interfaces: shmem_put/p/g/get with and without a
 * context, generic atomics (add, fetch_inc, or, set, fetch), wait_until/test,
 * and the generic team collectives and reductions (complex included), each
 * with values checked. */
#include "shmemtest.h"

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes(), right = (me + 1) % n, left = (me + n - 1) % n;
    long *l = shmem_calloc(8, sizeof(long));
    double *d = shmem_calloc(4, sizeof(double));
    int *iv = shmem_calloc(4, sizeof(int));
    unsigned long *u = shmem_calloc(2, sizeof(unsigned long));
    float _Complex *z = shmem_calloc(2, sizeof(float _Complex));
    long *all = shmem_calloc((size_t)n, sizeof(long));
    long lv[2] = {me, me * 2L}, back[2] = {0, 0};
    double dv = me + 0.5;

    shmem_put(l, lv, 2, right);
    shmem_p(d, dv, right);
    shmem_ctx_t ctx;
    CHECK(shmem_ctx_create(0, &ctx) == 0, "ctx_create");
    shmem_put(ctx, l + 2, lv, 2, right);
    shmem_p(ctx, iv, 7 * me, right);
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    CHECK(l[0] == left && l[1] == 2L * left, "generic put");
    CHECK(l[2] == left && l[3] == 2L * left, "generic ctx put");
    CHECK(d[0] == left + 0.5 && iv[0] == 7 * left, "generic p / ctx p");
    const long *cl = l;
    CHECK(shmem_g(l, right) == me && shmem_g(ctx, cl + 1, right) == 2L * me, "generic g (const source too)");
    shmem_get(back, l, 2, right);
    CHECK(back[0] == me && back[1] == 2L * me, "generic get");
    shmem_barrier_all();

    shmem_atomic_add(l + 4, 3L, 0);
    shmem_atomic_fetch_inc(ctx, l + 5, 0);
    shmem_atomic_or(u, 1UL << (me % 64), 0);
    if (me == n - 1) {
        shmem_atomic_set(d + 1, 2.0, 0);
    }
    shmem_ctx_quiet(ctx);
    shmem_barrier_all();
    if (me == 0) {
        unsigned long bits = 0;
        for (int p = 0; p < n; p++) {
            bits |= 1UL << (p % 64);
        }
        CHECK(l[4] == 3L * n && l[5] == n && *u == bits && d[1] == 2.0, "generic atomics");
    }
    CHECK(shmem_atomic_fetch(l + 5, 0) == n, "generic atomic_fetch");
    shmem_barrier_all();

    shmem_p(iv + 1, 1, right);
    shmem_wait_until(iv + 1, SHMEM_CMP_EQ, 1);
    CHECK(shmem_test(iv + 1, SHMEM_CMP_EQ, 1), "generic test");

    z[0] = 1.0f + (float)me * 1.0fi;
    shmem_sum_reduce(SHMEM_TEAM_WORLD, z + 1, z, 1);
    shmem_max_reduce(SHMEM_TEAM_WORLD, l + 6, l + 2, 1); /* l[2] holds left */
    l[7] = 10L * me;
    shmem_fcollect(SHMEM_TEAM_WORLD, all, l + 7, 1);
    d[2] = -1;
    d[3] = 40.0 + me;
    shmem_broadcast(SHMEM_TEAM_WORLD, d + 2, d + 3, 1, 0);
    CHECK(__real__ z[1] == (float)n && __imag__ z[1] == (float)(n * (n - 1) / 2), "generic complex sum_reduce");
    CHECK(l[6] == n - 1, "generic max_reduce %ld", l[6]);
    for (int p = 0; p < n; p++) {
        CHECK(all[p] == 10L * p, "generic fcollect[%d]", p);
    }
    CHECK(d[2] == 40.0, "generic broadcast");
    shmem_ctx_destroy(ctx);
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
