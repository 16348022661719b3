/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM within a node: symmetric heap, put/get/p/g/iput/iget/nbi of every
 * RMA type checked byte for byte, sized and mem forms, put_signal +
 * signal_wait_until, atomics of every type (values checked) and 10^4
 * fetch_inc per PE on one word (exact), wait_until woken by a remote put,
 * the ticket lock (a counter updated under it is exact), shmem_ptr. */
#include "shmemtest.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define N 37
/* Value for element i written by PE pe, as bytes so every type gets distinct patterns. */
static void fill(void *buf, size_t bytes, int pe, int salt)
{
    unsigned char *b = buf;
    for (size_t i = 0; i < bytes; i++) {
        b[i] = (unsigned char)(i * 7 + pe * 31 + salt * 13 + 1);
    }
}

#define TEST_RMA(NAME, T)                                                                          \
    {                                                                                             \
        T *sym = shmem_calloc(2 * N, sizeof(T));                                                  \
        T loc[2 * N], expect[2 * N];                                                              \
        fill(loc, sizeof loc, me, 1);                                                             \
        shmem_##NAME##_put(sym, loc, N, right);                                                   \
        shmem_barrier_all();                                                                      \
        fill(expect, sizeof expect, left, 1);                                                     \
        CHECK(!memcmp(sym, expect, N * sizeof(T)), "%s put", #NAME);                              \
        T got[2 * N];                                                                             \
        shmem_##NAME##_get(got, sym, N, right); /* right's data came from me */                   \
        CHECK(!memcmp(got, loc, N * sizeof(T)), "%s get", #NAME);                                 \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_put_nbi(sym + N, loc, N, left);                                            \
        shmem_quiet();                                                                            \
        shmem_barrier_all();                                                                      \
        fill(expect, sizeof expect, right, 1);                                                    \
        CHECK(!memcmp(sym + N, expect, N * sizeof(T)), "%s put_nbi", #NAME);                      \
        memset(got, 0, sizeof got);                                                               \
        shmem_##NAME##_get_nbi(got, sym + N, N, left);                                            \
        shmem_quiet();                                                                            \
        CHECK(!memcmp(got, loc, N * sizeof(T)), "%s get_nbi", #NAME);                             \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_p(&sym[3], loc[5], right);                                                 \
        shmem_barrier_all();                                                                      \
        fill(expect, sizeof expect, left, 1);                                                     \
        CHECK(!memcmp(&sym[3], &expect[5], sizeof(T) > 10 ? 10 : sizeof(T)), "%s p", #NAME);                            \
        T g = shmem_##NAME##_g(&sym[3], right);                                                   \
        CHECK(!memcmp(&g, &loc[5], sizeof(T) > 10 ? 10 : sizeof(T)), "%s g", #NAME);                                    \
        shmem_barrier_all();                                                                      \
        /* strided: every 3rd of mine to every 2nd of right's */                                  \
        memset(sym, 0, 2 * N * sizeof(T));                                                        \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_iput(sym, loc, 2, 3, N / 3, right);                                        \
        shmem_barrier_all();                                                                      \
        for (int i = 0; i < N / 3; i++) {                                                         \
            CHECK(!memcmp(&sym[2 * i], &expect[3 * i], sizeof(T)), "%s iput %d", #NAME, i);       \
        }                                                                                         \
        memset(got, 0, sizeof got);                                                               \
        shmem_##NAME##_iget(got, sym, 3, 2, N / 3, right);                                        \
        for (int i = 0; i < N / 3; i++) {                                                         \
            CHECK(!memcmp(&got[3 * i], &loc[3 * i], sizeof(T)), "%s iget %d", #NAME, i);          \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        shmem_free(sym);                                                                          \
    }

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    int major, minor;
    char name[SHMEM_MAX_NAME_LEN];
    shmem_info_get_version(&major, &minor);
    shmem_info_get_name(name);
    CHECK(major == 1 && minor == 5 && !strcmp(name, "Weft"), "info %d.%d %s", major, minor, name);
    CHECK(shmem_pe_accessible(npes - 1) && !shmem_pe_accessible(npes), "pe_accessible");

    /* heap symmetry: same offsets everywhere, alignment honoured, realloc keeps data */
    char *a = shmem_malloc(100), *b = shmem_align(4096, 10);
    long *offs = shmem_malloc(2 * sizeof(long));
    CHECK(((unsigned long)b & 4095) == 0, "shmem_align");
    offs[0] = a - (char *)offs, offs[1] = b - (char *)offs;
    shmem_barrier_all();
    long roffs[2];
    shmem_long_get(roffs, offs, 2, right);
    CHECK(roffs[0] == offs[0] && roffs[1] == offs[1], "heap offsets differ between PEs");
    memset(a, me, 100);
    a = shmem_realloc(a, 1 << 20);
    CHECK(a[99] == (char)me, "realloc kept data");
    int on_stack = 0;
    CHECK(shmem_addr_accessible(a, right) && !shmem_addr_accessible(&on_stack, right), "addr_accessible");
    int near = shmemtest_same_node(right); /* shmem_ptr is NULL for PEs on other nodes */
    CHECK((shmem_ptr(a, right) != NULL) == near && shmem_ptr(&on_stack, right) == NULL, "shmem_ptr");
    CHECK(shmem_addr_accessible(&errs, right) && (shmem_ptr(&errs, right) != NULL) == near,
          "globals are symmetric");
    shmem_barrier_all();
    CHECK(!near || ((char *)shmem_ptr(a, right))[99] == (char)right, "shmem_ptr load");
    shmem_free(a);
    shmem_free(b);
    shmem_free(offs);

    WEFT_SHMEM_RMA_TYPES(TEST_RMA)

    /* sized + mem forms */
    {
        unsigned char *sym = shmem_calloc(16 * N, 1), loc[16 * N], expect[16 * N];
        fill(loc, sizeof loc, me, 2);
        fill(expect, sizeof expect, left, 2);
#define TEST_SIZED(B, S)                                                                           \
    memset(sym, 0, 16 * N);                                                                       \
    shmem_barrier_all();                                                                          \
    shmem_put##B(sym, loc, N, right);                                                             \
    shmem_barrier_all();                                                                          \
    CHECK(!memcmp(sym, expect, (S) * N), "put%s", #B);                                            \
    shmem_barrier_all();
        WEFT_SHMEM_SIZES(TEST_SIZED)
        memset(sym, 0, 16 * N);
        shmem_barrier_all();
        shmem_putmem(sym, loc, 16 * N - 1, right);
        shmem_barrier_all();
        CHECK(!memcmp(sym, expect, 16 * N - 1) && sym[16 * N - 1] == 0, "putmem");
        shmem_barrier_all();
        shmem_free(sym);
    }

    /* put_signal: the data is there when the signal is seen */
    {
        uint64_t *sig = shmem_calloc(1, sizeof *sig);
        int *data = shmem_calloc(1000, sizeof(int)), loc[1000];
        for (int i = 0; i < 1000; i++) {
            loc[i] = me * 1000 + i;
        }
        shmem_barrier_all();
        shmem_int_put_signal(data, loc, 1000, sig, 1, SHMEM_SIGNAL_ADD, right);
        uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 1);
        CHECK(v == 1 && shmem_signal_fetch(sig) == 1, "signal %lu", (unsigned long)v);
        for (int i = 0; i < 1000; i++) {
            CHECK(data[i] == left * 1000 + i, "put_signal data[%d]=%d", i, data[i]);
            if (data[i] != left * 1000 + i) break;
        }
        shmem_free(data);
        shmem_free(sig);
    }

    /* atomics, every type: values checked (done one PE at a time on PE 0's word) */
#define TEST_AMO_STD(NAME, T)                                                                      \
    {                                                                                             \
        T *w = shmem_calloc(1, sizeof(T));                                                        \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_atomic_add(w, (T)2, 0);                                                    \
        shmem_##NAME##_atomic_inc(w, 0);                                                          \
        T f;                                                                                      \
        shmem_##NAME##_atomic_fetch_add_nbi(&f, w, (T)1, 0);                                      \
        shmem_##NAME##_atomic_fetch_inc(w, 0);                                                    \
        shmem_barrier_all();                                                                      \
        CHECK(shmem_##NAME##_atomic_fetch(w, 0) == (T)(5 * npes), "%s sum", #NAME);               \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            T old = shmem_##NAME##_atomic_compare_swap(w, (T)(5 * npes), (T)7, npes - 1 == 0 ? 0 : 0); \
            CHECK(old == (T)(5 * npes) && *w == 7, "%s cswap", #NAME);                            \
            old = shmem_##NAME##_atomic_compare_swap(w, (T)1, (T)9, 0);                           \
            CHECK(old == 7 && *w == 7, "%s cswap fail", #NAME);                                   \
            CHECK(shmem_##NAME##_atomic_swap(w, (T)11, 0) == 7 && *w == 11, "%s swap", #NAME);    \
            shmem_##NAME##_atomic_set(w, (T)3, 0);                                                \
            CHECK(shmem_##NAME##_atomic_fetch(w, 0) == 3, "%s set", #NAME);                       \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        shmem_free(w);                                                                            \
    }
    WEFT_SHMEM_AMO_STD_TYPES(TEST_AMO_STD)
#define TEST_AMO_BIT(NAME, T)                                                                      \
    {                                                                                             \
        T *w = shmem_calloc(1, sizeof(T));                                                        \
        shmem_barrier_all();                                                                      \
        shmem_##NAME##_atomic_or(w, (T)((T)1 << (me % 31)), 0);                                   \
        shmem_barrier_all();                                                                      \
        T all = 0;                                                                                \
        for (int p = 0; p < npes; p++) all |= (T)((T)1 << (p % 31));                              \
        CHECK(shmem_##NAME##_atomic_fetch(w, 0) == all, "%s or", #NAME);                          \
        shmem_barrier_all();                                                                      \
        if (me == 0) {                                                                            \
            CHECK(shmem_##NAME##_atomic_fetch_and(w, (T)1, 0) == all && *w == 1, "%s and", #NAME);\
            CHECK(shmem_##NAME##_atomic_fetch_xor(w, (T)3, 0) == 1 && *w == 2, "%s xor", #NAME);  \
        }                                                                                         \
        shmem_barrier_all();                                                                      \
        shmem_free(w);                                                                            \
    }
    WEFT_SHMEM_AMO_BIT_TYPES(TEST_AMO_BIT)
    {
        double *d = shmem_calloc(1, sizeof *d);
        shmem_barrier_all();
        if (me == npes - 1) {
            shmem_double_atomic_set(d, 2.5, 0);
        }
        shmem_barrier_all();
        CHECK(shmem_double_atomic_fetch(d, 0) == 2.5, "double set/fetch");
        shmem_barrier_all();
        shmem_free(d);
    }

    /* contention: 10^4 fetch_inc per PE on one word; every returned ticket is unique */
    {
        long *ctr = shmem_calloc(1, sizeof *ctr);
        shmem_barrier_all();
        long prev = -1;
        int mono = 1;
        for (int i = 0; i < 10000; i++) {
            long t = shmem_long_atomic_fetch_inc(ctr, 0);
            mono &= t > prev;
            prev = t;
        }
        shmem_barrier_all();
        CHECK(shmem_long_atomic_fetch(ctr, 0) == 10000L * npes && mono, "fetch_inc total %ld",
              shmem_long_atomic_fetch(ctr, 0));
        shmem_barrier_all();
        shmem_free(ctr);
    }

    /* wait_until woken by a remote put; PE 0 releases everyone in a chain */
    {
        int *flag = shmem_calloc(npes, sizeof(int));
        shmem_barrier_all();
        if (me != 0) {
            shmem_int_wait_until(flag, SHMEM_CMP_EQ, 1);
        }
        shmem_int_p(flag, 1, right == 0 ? 0 : right);
        if (me == 0) {
            shmem_int_wait_until(flag, SHMEM_CMP_EQ, 1);
        }
        /* every PE marks itself in PE 0's vector; PE 0 waits for all, some, any */
        shmem_int_p(&flag[me], 2, 0);
        if (me == 0) {
            size_t idx[64];
            size_t k = shmem_int_wait_until_some(flag, npes, idx, NULL, SHMEM_CMP_EQ, 2);
            CHECK(k >= 1 && flag[idx[0]] == 2, "wait_until_some");
            shmem_int_wait_until_all(flag, npes, NULL, SHMEM_CMP_EQ, 2);
            size_t any = shmem_int_wait_until_any(flag, npes, NULL, SHMEM_CMP_GE, 2);
            CHECK(any < (size_t)npes, "wait_until_any");
            CHECK(shmem_int_test_all(flag, npes, NULL, SHMEM_CMP_EQ, 2) == 1, "test_all");
            CHECK(shmem_int_test(flag, SHMEM_CMP_EQ, 3) == 0, "test false");
            int *cv = malloc(npes * sizeof(int));
            for (int i = 0; i < npes; i++) cv[i] = 2;
            shmem_int_wait_until_all_vector(flag, npes, NULL, SHMEM_CMP_EQ, cv);
            free(cv);
        }
        shmem_barrier_all();
        shmem_free(flag);
    }

    /* lock: a plain (non-atomic) read-modify-write under it is exact */
    {
        long *lock = shmem_calloc(1, sizeof *lock);
        int *count = shmem_calloc(1, sizeof *count);
        shmem_barrier_all();
        for (int i = 0; i < 200; i++) {
            shmem_set_lock(lock);
            int v = shmem_int_g(count, 0);
            shmem_int_p(count, v + 1, 0);
            shmem_clear_lock(lock);
        }
        shmem_barrier_all();
        CHECK(shmem_int_g(count, 0) == 200 * npes, "lock count %d", shmem_int_g(count, 0));
        shmem_barrier_all();
        if (me == 0) {
            CHECK(shmem_test_lock(lock) == 0, "test_lock free");
            CHECK(shmem_test_lock(lock) == 1, "test_lock held");
            shmem_clear_lock(lock);
        }
        shmem_barrier_all();
        shmem_free(lock);
        shmem_free(count);
    }
    shmem_sync_all();
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
