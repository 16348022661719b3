/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM where PEs are on several nodes (run with WEFT_SHMEM_FAKE_PPN, or
 * across hosts; on one node it checks the same values through shared memory):
 * puts and gets around the inline limit and up to 1 MiB byte for byte,
 * many outstanding get_nbi of mixed sizes to one PE completed by one quiet,
 * fence ordering a large put before a flag and a small put before a large
 * one (messages and libfabric RMA), put_signal with a large payload,
 * strided iput/iget past the inline limit, globals as remote targets, and
 * atomic contention: 10^4 fetch_add per PE on PE 0's int and 10^4 add per PE
 * on the last PE's long, mixing PEs of the target's node (CPU atomics) with
 * PEs of other nodes (requests), totals and fetched values exact. */
#include "shmemtest.h"

#include <stdint.h>

#define BIG (1 << 20)

static long global_words[4096];
static int global_counter;

static unsigned char pattern(size_t i, int pe, int salt)
{
    return (unsigned char)(i * 13 + (size_t)pe * 101 + (size_t)salt * 7 + 3);
}

static void fill(unsigned char *b, size_t n, int pe, int salt)
{
    for (size_t i = 0; i < n; i++) {
        b[i] = pattern(i, pe, salt);
    }
}

static int same(const unsigned char *b, size_t n, int pe, int salt)
{
    for (size_t i = 0; i < n; i++) {
        if (b[i] != pattern(i, pe, salt)) {
            return 0;
        }
    }
    return 1;
}

int main(void)
{
    shmem_init();
    int me = shmem_my_pe(), npes = shmem_n_pes();
    int right = (me + 1) % npes, left = (me + npes - 1) % npes;
    unsigned char *sym = shmem_malloc(BIG), *loc = malloc(BIG);
    CHECK(sym && loc, "allocation");

    /* blocking put/get, sizes around the 4 KiB inline limit and large */
    static const size_t sizes[] = {1, 8, 4095, 4096, 4097, 65536, BIG};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        size_t n = sizes[k];
        fill(loc, n, me, (int)k);
        shmem_putmem(sym, loc, n, right);
        shmem_barrier_all();
        CHECK(same(sym, n, left, (int)k), "putmem %zu bytes from PE %d", n, left);
        memset(loc, 0, n);
        shmem_getmem(loc, sym, n, right); /* right holds my pattern */
        CHECK(same(loc, n, me, (int)k), "getmem %zu bytes from PE %d", n, right);
        shmem_barrier_all();
    }

    /* many get_nbi of mixed sizes to one PE, replies land in the right buffers */
    {
        fill(sym, BIG, me, 9);
        shmem_barrier_all();
        size_t off = 0;
        unsigned char *dst = calloc(1, BIG);
        for (int i = 0; off < BIG / 2; i++) {
            size_t n = (size_t)(i % 3 == 0 ? 20000 : i % 3 == 1 ? 8 : 3000);
            shmem_getmem_nbi(dst + off, sym + off, n, right);
            off += n;
        }
        shmem_quiet();
        int ok = 1;
        for (size_t i = 0; i < off; i++) {
            ok &= dst[i] == pattern(i, right, 9);
        }
        CHECK(ok, "get_nbi of mixed sizes from PE %d", right);
        free(dst);
        shmem_barrier_all();
    }

    /* fence: a large put_nbi reaches the target before the flag put after it */
    {
        int *flag = shmem_calloc(1, sizeof *flag);
        fill(loc, BIG, me, 11);
        shmem_barrier_all();
        shmem_putmem_nbi(sym, loc, BIG, right);
        shmem_fence();
        shmem_int_p(flag, 1, right);
        shmem_int_wait_until(flag, SHMEM_CMP_EQ, 1);
        CHECK(same(sym, BIG, left, 11), "data before the fenced flag from PE %d", left);
        shmem_barrier_all();
        shmem_free(flag);
    }

    /* fence: a small put (a message) reaches the target before a large put after it
     * (by libfabric RMA across nodes, unless WEFT_SHMEM_NET_RMA says otherwise) */
    {
        int *small = shmem_calloc(1, sizeof *small);
        long *big = shmem_calloc(8192, sizeof *big), *ones = malloc(8192 * sizeof *ones);
        for (int i = 0; i < 8192; i++) {
            ones[i] = 1;
        }
        shmem_barrier_all();
        shmem_int_p(small, 7, right);
        shmem_fence();
        shmem_long_put(big, ones, 8192, right);
        shmem_long_wait_until(&big[8191], SHMEM_CMP_EQ, 1);
        CHECK(*small == 7, "small put before the fenced large one from PE %d (got %d)", left, *small);
        shmem_barrier_all();
        shmem_free(small);
        shmem_free(big);
        free(ones);
    }

    /* put_signal with a payload past the inline limit; signal_wait_until */
    {
        uint64_t *sig = shmem_calloc(1, sizeof *sig);
        fill(loc, 65536, me, 12);
        shmem_barrier_all();
        shmem_putmem_signal(sym, loc, 65536, sig, 5, SHMEM_SIGNAL_ADD, right);
        uint64_t v = shmem_signal_wait_until(sig, SHMEM_CMP_EQ, 5);
        CHECK(v == 5 && same(sym, 65536, left, 12), "put_signal from PE %d (signal %llu)", left,
              (unsigned long long)v);
        shmem_barrier_all();
        shmem_free(sig);
    }

    /* strided: 3000 longs, every 3rd of mine to every 2nd of right's (24 KB of data) */
    {
        long *src = malloc(3 * 3000 * sizeof(long)), *got = calloc(3 * 3000, sizeof(long));
        long *tgt = shmem_calloc(2 * 3000, sizeof(long));
        for (int i = 0; i < 3 * 3000; i++) {
            src[i] = (long)me * 1000000 + i;
        }
        shmem_barrier_all();
        shmem_long_iput(tgt, src, 2, 3, 3000, right);
        shmem_barrier_all();
        int ok = 1;
        for (int i = 0; i < 3000; i++) {
            ok &= tgt[2 * i] == (long)left * 1000000 + 3 * i && tgt[2 * i + 1] == 0;
        }
        CHECK(ok, "iput from PE %d", left);
        shmem_long_iget(got, tgt, 3, 2, 3000, right); /* right's holds mine */
        ok = 1;
        for (int i = 0; i < 3000; i++) {
            ok &= got[3 * i] == (long)me * 1000000 + 3 * i;
        }
        CHECK(ok, "iget from PE %d", right);
        shmem_barrier_all();
        shmem_free(tgt);
        free(src);
        free(got);
    }

    /* globals as remote targets: put, get, atomics */
    {
        long words[4096];
        for (int i = 0; i < 4096; i++) {
            words[i] = (long)me << 20 | i;
        }
        shmem_long_put(global_words, words, 4096, right);
        shmem_int_atomic_add(&global_counter, me + 1, 0);
        shmem_barrier_all();
        int ok = 1;
        for (int i = 0; i < 4096; i++) {
            ok &= global_words[i] == ((long)left << 20 | i);
        }
        CHECK(ok, "global array put from PE %d", left);
        long g = shmem_long_g(&global_words[77], right);
        CHECK(g == ((long)me << 20 | 77), "global g from PE %d", right);
        CHECK(shmem_int_atomic_fetch(&global_counter, 0) == npes * (npes + 1) / 2, "global atomic add");
        shmem_barrier_all();
    }

    /* contention: CPU atomics (PEs on the target's node) and requests (others) on one word */
    {
        int *ictr = shmem_calloc(1, sizeof *ictr);
        long *lctr = shmem_calloc(1, sizeof *lctr);
        shmem_barrier_all();
        long fetched = 0;
        int step = me % 3 + 1, mono = 1, prev = -1;
        for (int i = 0; i < 10000; i++) {
            int old = shmem_int_atomic_fetch_add(ictr, step, 0);
            mono &= old > prev;
            prev = old;
            fetched += old;
            shmem_long_atomic_add(lctr, 2, npes - 1);
        }
        shmem_quiet();
        shmem_barrier_all();
        long want = 0;
        for (int p = 0; p < npes; p++) {
            want += 10000L * (p % 3 + 1);
        }
        int total = shmem_int_atomic_fetch(ictr, 0);
        long ltotal = shmem_long_atomic_fetch(lctr, npes - 1);
        CHECK(total == want && mono, "fetch_add total %d, expected %ld", total, want);
        CHECK(ltotal == 20000L * npes, "add total %ld, expected %ld", ltotal, 20000L * npes);
        (void)fetched;
        shmem_barrier_all();
        shmem_free(ictr);
        shmem_free(lctr);
    }

    shmem_free(sym);
    free(loc);
    int rc = shmemtest_finish();
    shmem_finalize();
    return rc;
}
