/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Deprecated active-set collectives and complex reductions, against a serial
 * reference: shmem_barrier/sync, broadcast32/64 (the root's dest is left
 * alone), collect32 (varying counts), fcollect64, alltoall32, alltoalls64
 * over all PEs and over the even PEs (logPE_stride 1), the _to_all
 * reductions of several types (complex included), and the team
 * complexd/complexf sum/prod reductions. pSync arrays are static globals,
 * as old SHMEM programs have them; their contents must stay SHMEM_SYNC_VALUE. */
#include "shmemtest.h"

#include <complex.h>

#define M 6
static long pSync[SHMEM_BCAST_SYNC_SIZE > SHMEM_REDUCE_SYNC_SIZE ? SHMEM_BCAST_SYNC_SIZE : SHMEM_REDUCE_SYNC_SIZE];
static long pSync2[SHMEM_COLLECT_SYNC_SIZE];
static double pWrk[SHMEM_REDUCE_MIN_WRKDATA_SIZE + M];

/* Symmetric buffers, allocated by every PE (the heap calls are collective
 * over the world), then used by the active set's members only. */
static int64_t *b64, *fc, *s_src, *s_dst;
static int32_t *b32, *coll, *a_src, *a_dst;
static int *ri, *si;
static long *rl, *sl;
static short *rs, *ss;
static double *rd, *sd;
static long double *rld, *sld;
static double _Complex *rz, *sz;
static float _Complex *rc, *sc;

static void alloc_all(void)
{
    b64 = shmem_malloc(M * sizeof(int64_t));
    b32 = shmem_malloc(M * sizeof(int32_t));
    coll = shmem_malloc(64 * M * sizeof(int32_t));
    fc = shmem_malloc(64 * M * sizeof(int64_t));
    a_src = shmem_malloc(64 * 2 * sizeof(int32_t));
    a_dst = shmem_malloc(64 * 2 * sizeof(int32_t));
    s_src = shmem_calloc(64 * 2, sizeof(int64_t));
    s_dst = shmem_calloc(64 * 3, sizeof(int64_t));
    ri = shmem_malloc(M * sizeof(int)), si = shmem_malloc(M * sizeof(int));
    rl = shmem_malloc(M * sizeof(long)), sl = shmem_malloc(M * sizeof(long));
    rs = shmem_malloc(M * sizeof(short)), ss = shmem_malloc(M * sizeof(short));
    rd = shmem_malloc(M * sizeof(double)), sd = shmem_malloc(M * sizeof(double));
    rld = shmem_malloc(M * sizeof(long double)), sld = shmem_malloc(M * sizeof(long double));
    rz = shmem_malloc(M * sizeof(double _Complex)), sz = shmem_malloc(M * sizeof(double _Complex));
    rc = shmem_malloc(M * sizeof(float _Complex)), sc = shmem_malloc(M * sizeof(float _Complex));
}

/* Everything over the active set (start, logstride, size); me is in it at index idx. */
static void check_set(int start, int logstride, int size, int idx)
{
    int me = shmem_my_pe();
    const char *what = logstride ? "even PEs" : "all PEs";
    int world_of[64];
    for (int i = 0; i < size; i++) {
        world_of[i] = start + (i << logstride);
    }
    shmem_barrier(start, logstride, size, pSync);

    /* broadcast: root is active-set index size-1 */
    int64_t src64[M];
    for (int i = 0; i < M; i++) {
        src64[i] = 1000 * me + i;
        b64[i] = -1;
    }
    int root = size - 1;
    shmem_sync(start, logstride, size, pSync);
    shmem_broadcast64(b64, src64, M, root, start, logstride, size, pSync);
    for (int i = 0; i < M; i++) {
        int64_t want = idx == root ? -1 : 1000 * world_of[root] + i;
        CHECK(b64[i] == want, "%s broadcast64[%d] = %ld, want %ld", what, i, (long)b64[i], (long)want);
    }
    int32_t s32[M];
    for (int i = 0; i < M; i++) {
        s32[i] = me * 10 + i;
    }
    shmem_broadcast32(b32, s32, M, 0, start, logstride, size, pSync);
    if (idx != 0) {
        CHECK(b32[M - 1] == world_of[0] * 10 + M - 1, "%s broadcast32", what);
    }

    /* collect32: PE at index k contributes k % M + 1 elements */
    shmem_collect32(coll, s32, (size_t)(idx % M) + 1, start, logstride, size, pSync2);
    int pos = 0;
    for (int k = 0; k < size; k++) {
        for (int j = 0; j <= k % M; j++, pos++) {
            CHECK(coll[pos] == world_of[k] * 10 + j, "%s collect32[%d]", what, pos);
        }
    }
    /* fcollect64 */
    shmem_fcollect64(fc, src64, M, start, logstride, size, pSync2);
    for (int k = 0; k < size; k++) {
        CHECK(fc[k * M + 2] == 1000 * world_of[k] + 2, "%s fcollect64 block %d", what, k);
    }
    /* alltoall32: element j of block k goes to index k */
    for (int k = 0; k < size; k++) {
        a_src[2 * k] = me * 100 + k, a_src[2 * k + 1] = -(me * 100 + k);
    }
    shmem_alltoall32(a_dst, a_src, 2, start, logstride, size, pSync);
    for (int k = 0; k < size; k++) {
        CHECK(a_dst[2 * k] == world_of[k] * 100 + idx && a_dst[2 * k + 1] == -(world_of[k] * 100 + idx),
              "%s alltoall32 from %d", what, k);
    }
    /* alltoalls64: source stride 2, dest stride 3 */
    memset(s_dst, 0, 64 * 3 * sizeof(int64_t));
    for (int k = 0; k < size; k++) {
        s_src[2 * k] = me * 7 + k;
    }
    shmem_alltoalls64(s_dst, s_src, 3, 2, 1, start, logstride, size, pSync);
    for (int k = 0; k < size; k++) {
        CHECK(s_dst[3 * k] == world_of[k] * 7 + idx && s_dst[3 * k + 1] == 0, "%s alltoalls64 from %d", what, k);
    }

    /* reductions */
    for (int i = 0; i < M; i++) {
        si[i] = me + i, sl[i] = (long)me * i - 3, ss[i] = (short)(1 << ((me + i) % 15));
        sd[i] = 1.0 + (me % 3) * 0.5, sld[i] = (long double)(me - i);
        sz[i] = (me + 1) + i * I, sc[i] = (float)(1 + (me % 2)) + 1.0f * I;
    }
    shmem_int_sum_to_all(ri, si, M, start, logstride, size, (int *)pWrk, pSync);
    shmem_long_max_to_all(rl, sl, M, start, logstride, size, (long *)pWrk, pSync);
    shmem_short_xor_to_all(rs, ss, M, start, logstride, size, (short *)pWrk, pSync);
    shmem_double_prod_to_all(rd, sd, M, start, logstride, size, pWrk, pSync);
    shmem_longdouble_min_to_all(rld, sld, M, start, logstride, size, (long double *)pWrk, pSync);
    shmem_complexd_sum_to_all(rz, sz, M, start, logstride, size, (double _Complex *)pWrk, pSync);
    shmem_complexf_prod_to_all(rc, sc, M, start, logstride, size, (float _Complex *)pWrk, pSync);
    for (int i = 0; i < M; i++) {
        int isum = 0;
        long lmax = -1000000;
        short sx = 0;
        double dp = 1;
        long double ldmin = 1e9;
        double _Complex zs = 0;
        float _Complex cp = 1;
        for (int k = 0; k < size; k++) {
            int p = world_of[k];
            isum += p + i;
            lmax = (long)p * i - 3 > lmax ? (long)p * i - 3 : lmax;
            sx ^= (short)(1 << ((p + i) % 15));
            dp *= 1.0 + (p % 3) * 0.5;
            ldmin = (long double)(p - i) < ldmin ? (long double)(p - i) : ldmin;
            zs += (p + 1) + i * I;
            cp *= (float)(1 + (p % 2)) + 1.0f * I;
        }
        CHECK(ri[i] == isum, "%s int_sum_to_all[%d] %d want %d", what, i, ri[i], isum);
        CHECK(rl[i] == lmax, "%s long_max_to_all[%d]", what, i);
        CHECK(rs[i] == sx, "%s short_xor_to_all[%d]", what, i);
        CHECK(rd[i] == dp, "%s double_prod_to_all[%d] %g want %g", what, i, rd[i], dp);
        CHECK(rld[i] == ldmin, "%s longdouble_min_to_all[%d]", what, i);
        CHECK(rz[i] == zs, "%s complexd_sum_to_all[%d] %g%+gi want %g%+gi", what, i, creal(rz[i]), cimag(rz[i]),
              creal(zs), cimag(zs));
        CHECK(cabsf(rc[i] - cp) <= 1e-5f * cabsf(cp), "%s complexf_prod_to_all[%d]", what, i);
    }
    shmem_barrier(start, logstride, size, pSync);
}

int main(void)
{
    for (size_t i = 0; i < sizeof pSync / sizeof pSync[0]; i++) {
        pSync[i] = SHMEM_SYNC_VALUE;
    }
    pSync2[0] = SHMEM_SYNC_VALUE;
    shmem_init();
    int me = shmem_my_pe(), n = shmem_n_pes();
    if (n > 64) {
        if (me == 0) printf("No Errors\n(skipped: more than 64 PEs)\n");
        shmem_finalize();
        return 0;
    }
    /* The heap is collective over the world, but active-set calls are made by
     * members only: allocate everywhere, then let the set's members run. */
    alloc_all();
    check_set(0, 0, n, me);
    shmem_barrier_all();
    if (me % 2 == 0) { /* the even PEs only: logPE_stride 1 */
        check_set(0, 1, (n + 1) / 2, me / 2);
    }
    shmem_barrier_all();
    CHECK(pSync[0] == SHMEM_SYNC_VALUE && pSync2[0] == SHMEM_SYNC_VALUE, "pSync restored");

    /* team complex reductions */
    double _Complex *z = shmem_malloc(2 * sizeof(double _Complex));
    float _Complex *f = shmem_malloc(2 * sizeof(float _Complex));
    z[0] = me + 2.0 * me * I, z[1] = 1.0 + 0.0 * I;
    f[0] = 1.0f + (float)(me % 2) * I;
    shmem_complexd_sum_reduce(SHMEM_TEAM_WORLD, z + 1, z, 1);
    shmem_complexf_prod_reduce(SHMEM_TEAM_WORLD, f + 1, f, 1);
    double _Complex zs = 0;
    float _Complex fp = 1;
    for (int p = 0; p < n; p++) {
        zs += p + 2.0 * p * I;
        fp *= 1.0f + (float)(p % 2) * I;
    }
    CHECK(z[1] == zs, "complexd_sum_reduce");
    CHECK(cabsf(f[1] - fp) <= 1e-5f * cabsf(fp), "complexf_prod_reduce");
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
