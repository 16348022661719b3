/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM teams and team collectives against a serial reference: world and
 * shared teams, split_strided (even PEs), split_2d, translate_pe, team_sync,
 * broadcast/collect/fcollect/alltoall/alltoalls and sum/max/xor reductions. */
#include "shmemtest.h"
#include <stdlib.h>
#include <stdio.h>
#include <string.h>


#define M 5
/* Run every collective on team t (this PE is a member) and check the results. */
static void check_team(shmem_team_t t, const char *what)
{
    int me = shmem_team_my_pe(t), n = shmem_team_n_pes(t);
    int wpe = shmem_team_translate_pe(t, me, SHMEM_TEAM_WORLD);
    CHECK(wpe == shmem_my_pe(), "%s translate to world %d", what, wpe);
    long *src = shmem_malloc(8 * M * sizeof(long)), *dst = shmem_malloc(8 * 8 * M * sizeof(long));
    shmem_team_sync(t);
    for (int root = 0; root < n; root++) {
        for (int i = 0; i < M; i++) src[i] = root * 100 + i + (me == root ? 0 : 999);
        memset(dst, 0, M * sizeof(long));
        CHECK(shmem_long_broadcast(t, dst, src, M, root) == 0, "%s broadcast rc", what);
        for (int i = 0; i < M; i++) CHECK(dst[i] == root * 100 + i, "%s bcast root %d [%d]=%ld", what, root, i, dst[i]);
    }
    for (int i = 0; i < M; i++) src[i] = me * 10 + i;
    shmem_long_fcollect(t, dst, src, M);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < M; i++) CHECK(dst[p * M + i] == p * 10 + i, "%s fcollect", what);
    /* collect: PE p contributes p % 3 + 1 elements */
    shmem_long_collect(t, dst, src, me % 3 + 1);
    for (int p = 0, k = 0; p < n; p++)
        for (int i = 0; i < p % 3 + 1; i++, k++) CHECK(dst[k] == p * 10 + i, "%s collect", what);
    /* alltoall: element for PE p is me*1000 + p*10 + i */
    long *a2a = shmem_malloc(8 * M * sizeof(long));
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 2; i++) a2a[p * 2 + i] = me * 1000 + p * 10 + i;
    shmem_long_alltoall(t, dst, a2a, 2);
    for (int p = 0; p < n; p++)
        for (int i = 0; i < 2; i++) CHECK(dst[p * 2 + i] == p * 1000 + me * 10 + i, "%s alltoall", what);
    shmem_long_alltoalls(t, dst, a2a, 2, 1, 1); /* one element each, written to every 2nd slot */
    for (int p = 0; p < n; p++)
        CHECK(dst[p * 2] == p * 1000 + (me / 2) * 10 + me % 2, "%s alltoalls from %d: %ld", what, p, dst[p * 2]);
    shmem_free(a2a);
    /* reductions */
    for (int i = 0; i < M; i++) src[i] = me + i;
    shmem_long_sum_reduce(t, dst, src, M);
    for (int i = 0; i < M; i++) CHECK(dst[i] == (long)n * (n - 1) / 2 + (long)n * i, "%s sum", what);
    shmem_long_max_reduce(t, dst, src, M);
    for (int i = 0; i < M; i++) CHECK(dst[i] == n - 1 + i, "%s max", what);
    shmem_int64_xor_reduce(t, (int64_t *)src, (int64_t *)src, M); /* in place */
    for (int i = 0; i < M; i++) {
        long x = 0;
        for (int p = 0; p < n; p++) x ^= p + i;
        CHECK(src[i] == x, "%s xor in place", what);
    }
    double *d = shmem_malloc(sizeof(double)), *dr = shmem_malloc(sizeof(double));
    *d = 0.5 * (me + 1);
    shmem_double_prod_reduce(t, dr, d, 1);
    double ref = 1;
    for (int p = 0; p < n; p++) ref *= 0.5 * (p + 1);
    CHECK(*dr == ref, "%s double prod %g vs %g", what, *dr, ref);
    shmem_free(d);
    shmem_free(dr);
    shmem_free(src);
    shmem_free(dst);
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    CHECK(shmem_team_n_pes(SHMEM_TEAM_WORLD) == npes && shmem_team_my_pe(SHMEM_TEAM_WORLD) == me, "world");
    /* SHMEM_TEAM_SHARED: exactly the PEs whose memory shmem_ptr reaches (all of
     * them unless WEFT_SHMEM_FAKE_PPN makes blocks of PEs play nodes) */
    const char *ppn_env = getenv("WEFT_SHMEM_FAKE_PPN");
    int ppn = ppn_env && atoi(ppn_env) > 0 ? atoi(ppn_env) : npes, node0 = me / ppn * ppn;
    int expect_shared = node0 + ppn > npes ? npes - node0 : ppn;
    CHECK(shmem_team_n_pes(SHMEM_TEAM_SHARED) == expect_shared, "shared team has %d PEs, expected %d",
          shmem_team_n_pes(SHMEM_TEAM_SHARED), expect_shared);
    int *probe = shmem_malloc(sizeof(int));
    for (int pe = 0; pe < npes; pe++) {
        int shared_idx = shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED);
        CHECK((shmem_ptr(probe, pe) != NULL) == (shared_idx >= 0) && (shared_idx >= 0) == (pe / ppn == me / ppn),
              "PE %d: shmem_ptr and SHMEM_TEAM_SHARED disagree", pe);
    }
    shmem_free(probe);
    /* team collectives need symmetric allocation by the whole world first */
    check_team(SHMEM_TEAM_WORLD, "world");

    shmem_team_t even;
    int rc = shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 2, (npes + 1) / 2, NULL, 0, &even);
    CHECK(rc == 0, "split_strided rc %d", rc);
    CHECK((me % 2 == 0) == (even != SHMEM_TEAM_INVALID), "even membership");
    /* The team collectives allocate from the symmetric heap, which is collective
     * over the world; so every PE runs them on its own axis team below, and
     * here only the even PEs check their team's basic queries. */
    if (even != SHMEM_TEAM_INVALID) {
        CHECK(shmem_team_my_pe(even) == me / 2 && shmem_team_n_pes(even) == (npes + 1) / 2, "even team shape");
        CHECK(shmem_team_translate_pe(even, shmem_team_n_pes(even) - 1, SHMEM_TEAM_WORLD) ==
                  2 * (shmem_team_n_pes(even) - 1), "translate even -> world");
        CHECK(shmem_team_sync(even) == 0, "sync even");
    }
    if (npes > 1) {
        CHECK(shmem_team_translate_pe(SHMEM_TEAM_WORLD, 1, even) == -1, "odd PE not in even team");
    }
    shmem_team_destroy(even);
    shmem_team_t bad;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes + 1, NULL, 0, &bad) != 0 && bad == SHMEM_TEAM_INVALID,
          "oversized split fails");

    /* the creation config comes back from get_config, field by mask */
    shmem_team_config_t cfg = {.num_contexts = 3}, got = {.num_contexts = -7};
    CHECK(shmem_team_get_config(SHMEM_TEAM_WORLD, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
              got.num_contexts == 0, "world config: %d contexts", got.num_contexts);
    CHECK(shmem_team_get_config(SHMEM_TEAM_INVALID, SHMEM_TEAM_NUM_CONTEXTS, &got) != 0,
          "get_config of SHMEM_TEAM_INVALID fails");
    shmem_team_t all;
    CHECK(shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, npes, &cfg, SHMEM_TEAM_NUM_CONTEXTS,
                                   &all) == 0 && all != SHMEM_TEAM_INVALID, "split with config");
    got.num_contexts = -7;
    CHECK(shmem_team_get_config(all, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 3,
          "config kept: %d contexts", got.num_contexts);
    got.num_contexts = -7;
    CHECK(shmem_team_get_config(all, 0, &got) == 0 && got.num_contexts == -7,
          "fields outside the mask untouched");
    shmem_ctx_t ctxs[3];
    for (int i = 0; i < 3; i++) {
        CHECK(shmem_team_create_ctx(all, 0, &ctxs[i]) == 0, "context %d of the configured 3", i);
    }
    for (int i = 0; i < 3; i++) {
        shmem_ctx_destroy(ctxs[i]);
    }
    shmem_team_destroy(all);

    int xr = npes >= 4 ? 2 : 1;
    shmem_team_t xt, yt;
    shmem_team_config_t ycfg = {.num_contexts = 5};
    CHECK(shmem_team_split_2d(SHMEM_TEAM_WORLD, xr, NULL, 0, &xt, &ycfg, SHMEM_TEAM_NUM_CONTEXTS,
                              &yt) == 0, "split_2d");
    CHECK(shmem_team_get_config(xt, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 && got.num_contexts == 0 &&
              shmem_team_get_config(yt, SHMEM_TEAM_NUM_CONTEXTS, &got) == 0 &&
              got.num_contexts == 5, "2d configs per axis");
    CHECK(shmem_team_my_pe(xt) == me % xr && shmem_team_my_pe(yt) == me / xr, "2d coords");
    check_team(xt, "xaxis"); /* every PE is in exactly one x team and one y team */
    check_team(yt, "yaxis");
    shmem_team_destroy(xt);
    shmem_team_destroy(yt);

    rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
