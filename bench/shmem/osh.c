/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM benchmarks in weft-bench form (columns, -c validation, CSV/JSON).
 * One source, one benchmark per define:
 *   WB_OSH_PUT      osh_put_latency: PE 0 shmem_putmem + shmem_quiet to PE 1
 *   WB_OSH_GET      osh_get_latency: PE 0 shmem_getmem from PE 1
 *   WB_OSH_PUT_BW   osh_put_bw: a window (-W) of putmem_nbi then one quiet
 *   WB_OSH_ATOMIC   osh_atomic_latency: 8-byte fetch_add, add, compare_swap,
 *                   swap, fetch, set on PE 1 (one column each, microseconds)
 *   WB_OSH_BARRIER  osh_barrier: shmem_barrier_all, all PEs
 *   WB_OSH_BCAST    osh_broadcast: shmem_broadcastmem from PE 0, all PEs
 *   WB_OSH_REDUCE   osh_reduce: shmem_long_sum_reduce, all PEs
 *   WB_OSH_FCOLLECT osh_fcollect: shmem_fcollectmem, all PEs
 * MPI is initialised first by wb_init and OpenSHMEM joins it (one runtime). */
#include "wb.h"

#include <shmem.h>
#include <string.h>

#if defined(WB_OSH_PUT)
#define NAME "osh_put_latency"
#define TITLE "OpenSHMEM Put Latency Test (putmem + quiet)"
#elif defined(WB_OSH_GET)
#define NAME "osh_get_latency"
#define TITLE "OpenSHMEM Get Latency Test"
#elif defined(WB_OSH_PUT_BW)
#define NAME "osh_put_bw"
#define TITLE "OpenSHMEM Put Bandwidth Test (putmem_nbi window + quiet)"
#elif defined(WB_OSH_ATOMIC)
#define NAME "osh_atomic_latency"
#define TITLE "OpenSHMEM Atomic Latency Test (8 bytes)"
#elif defined(WB_OSH_BARRIER)
#define NAME "osh_barrier"
#define TITLE "OpenSHMEM Barrier Latency Test"
#elif defined(WB_OSH_BCAST)
#define NAME "osh_broadcast"
#define TITLE "OpenSHMEM Broadcast Latency Test"
#elif defined(WB_OSH_REDUCE)
#define NAME "osh_reduce"
#define TITLE "OpenSHMEM Sum Reduce Latency Test (long)"
#else
#define WB_OSH_FCOLLECT 1
#define NAME "osh_fcollect"
#define TITLE "OpenSHMEM Fcollect Latency Test"
#endif

#if defined(WB_OSH_PUT) || defined(WB_OSH_GET) || defined(WB_OSH_PUT_BW) || defined(WB_OSH_ATOMIC)
#define PAIR 1
#endif

#ifndef WB_OSH_ATOMIC
/* One timed loop of n operations of 'size' bytes; returns seconds. */
static double timed(wb_ctx_t *c, char *sym, char *loc, char *sym2, size_t size, int n)
{
    int me = c->rank;
    (void)sym, (void)sym2, (void)me, (void)loc;
    shmem_barrier_all();
    double t0 = wb_now();
#if defined(WB_OSH_PUT)
    if (me == 0) {
        for (int i = 0; i < n; i++) {
            shmem_putmem(sym, loc, size, 1);
            shmem_quiet();
        }
    }
#elif defined(WB_OSH_GET)
    if (me == 0) {
        for (int i = 0; i < n; i++) {
            shmem_getmem(loc, sym, size, 1);
        }
    }
#elif defined(WB_OSH_PUT_BW)
    if (me == 0) {
        for (int i = 0; i < n; i++) {
            for (int w = 0; w < c->o.window; w++) {
                shmem_putmem_nbi(sym, loc, size, 1);
            }
            shmem_quiet();
        }
    }
#elif defined(WB_OSH_BARRIER)
    (void)size;
    for (int i = 0; i < n; i++) {
        shmem_barrier_all();
    }
#elif defined(WB_OSH_BCAST)
    for (int i = 0; i < n; i++) {
        shmem_broadcastmem(SHMEM_TEAM_WORLD, sym, loc, size, 0);
    }
#elif defined(WB_OSH_REDUCE)
    for (int i = 0; i < n; i++) {
        shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)sym, (const long *)sym2, size / sizeof(long));
    }
#elif defined(WB_OSH_FCOLLECT)
    for (int i = 0; i < n; i++) {
        shmem_fcollectmem(SHMEM_TEAM_WORLD, sym, sym2, size);
    }
#endif
    return wb_now() - t0;
}
#endif

#ifdef WB_OSH_ATOMIC
#define NATOMIC 6
static double atomic_loop(int op, long *target, int n)
{
    long v = 0;
    double t0 = wb_now();
    for (int i = 0; i < n; i++) {
        switch (op) {
        case 0: v += shmem_long_atomic_fetch_add(target, 1, 1); break;
        case 1: shmem_long_atomic_add(target, 1, 1); break;
        case 2: v += shmem_long_atomic_compare_swap(target, v, v + 1, 1); break;
        case 3: v += shmem_long_atomic_swap(target + 1, (long)i, 1); break;
        case 4: v += shmem_long_atomic_fetch(target, 1); break;
        default: shmem_long_atomic_set(target + 1, (long)i, 1); break;
        }
    }
    shmem_quiet();
    target[2] = v; /* keep v live */
    return wb_now() - t0;
}
#endif

#ifndef WB_OSH_ATOMIC
/* -c: one operation with a known pattern, checked where it lands. */
static int validate(wb_ctx_t *c, char *sym, char *loc, char *sym2, size_t size)
{
    int me = c->rank, np = c->np, ok = 1;
    unsigned seed = wb_seed(0, 1, (int)size);
    (void)np, (void)sym2, (void)seed, (void)loc;
#if defined(WB_OSH_PUT) || defined(WB_OSH_PUT_BW)
    memset(sym, 0, size);
    wb_fill(loc, size, seed);
    shmem_barrier_all();
    if (me == 0) {
        shmem_putmem_nbi(sym, loc, size, 1);
        shmem_quiet();
    }
    shmem_barrier_all();
    if (me == 1) {
        ok = !wb_verify(c, sym, size, seed, "PE 1 memory after putmem");
    }
#elif defined(WB_OSH_GET)
    if (me == 1) {
        wb_fill(sym, size, seed);
    }
    memset(loc, 0, size);
    shmem_barrier_all();
    if (me == 0) {
        shmem_getmem(loc, sym, size, 1);
        ok = !wb_verify(c, loc, size, seed, "data read by getmem");
    }
#elif defined(WB_OSH_BCAST)
    if (me == 0) {
        wb_fill(loc, size, seed);
    }
    memset(sym, 0, size);
    shmem_broadcastmem(SHMEM_TEAM_WORLD, sym, loc, size, 0);
    ok = !wb_verify(c, sym, size, seed, "broadcast dest");
#elif defined(WB_OSH_REDUCE)
    size_t n = size / sizeof(long);
    for (size_t i = 0; i < n; i++) {
        ((long *)sym2)[i] = (long)(me + 1) * (long)(i + 1);
    }
    shmem_long_sum_reduce(SHMEM_TEAM_WORLD, (long *)sym, (const long *)sym2, n);
    for (size_t i = 0; i < n && ok; i++) {
        ok = ((long *)sym)[i] == (long)np * (np + 1) / 2 * (long)(i + 1);
    }
#elif defined(WB_OSH_FCOLLECT)
    wb_fill(sym2, size, wb_seed(me, 0, (int)size));
    shmem_fcollectmem(SHMEM_TEAM_WORLD, sym, sym2, size);
    for (int p = 0; p < np && ok; p++) {
        ok = !wb_verify(c, sym + (size_t)p * size, size, wb_seed(p, 0, (int)size), "fcollect block");
    }
#else
    (void)sym, (void)size, (void)me;
#endif
    shmem_barrier_all();
    return wb_agree(c, ok);
}
#endif

int main(int argc, char **argv)
{
#ifdef PAIR
    const unsigned features = WB_F_TWO | WB_F_SIZES | WB_F_WINDOW;
#else
    const unsigned features = WB_F_SIZES;
#endif
    static const wb_defaults_t d = {.min_size = 1, .max_size = 1 << 20, .iters = 10000, .iters_large = 1000,
                                    .warmup = 1000, .warmup_large = 100, .window = 64};
    wb_ctx_t c;
    wb_init(&c, &argc, &argv, NAME, TITLE, features, &d);
    shmem_init();
    if (shmem_my_pe() != c.rank || shmem_n_pes() != c.np) {
        wb_usage_fail(&c, "OpenSHMEM PE numbering differs from MPI_COMM_WORLD");
    }
#if defined(WB_OSH_ATOMIC)
    static const wb_metric_t m[NATOMIC] = {{"fetch_add_us", "fetch_add(us)", 0}, {"add_us", "add(us)", 0},
                                           {"cswap_us", "cswap(us)", 0},         {"swap_us", "swap(us)", 0},
                                           {"fetch_us", "fetch(us)", 0},         {"set_us", "set(us)", 0}};
    wb_columns(&c, 0, NATOMIC, m);
    long *target = shmem_calloc(4, sizeof(long));
    double v[NATOMIC];
    int n = c.o.iters, skip = c.o.warmup;
    for (int op = 0; op < NATOMIC; op++) {
        shmem_barrier_all();
        double t = 0;
        if (c.rank == 0) {
            atomic_loop(op, target, skip);
            t = atomic_loop(op, target, n) * 1e6 / n;
        }
        shmem_barrier_all();
        v[op] = t;
    }
    WB(MPI_Bcast(v, NATOMIC, MPI_DOUBLE, 0, c.comm));
    int valid = -1;
    if (c.o.validate) { /* every PE adds k+1 to PE 1's word n times: the total is exact */
        long *w = shmem_calloc(1, sizeof(long));
        for (int i = 0; i < 100; i++) {
            shmem_long_atomic_add(w, c.rank + 1, 1);
        }
        shmem_barrier_all();
        valid = wb_agree(&c, c.rank != 1 || *w == 100L * c.np * (c.np + 1) / 2);
        shmem_free(w);
    }
    wb_row(&c, -1, v, valid);
    shmem_free(target);
#else
#if defined(WB_OSH_PUT_BW)
    static const wb_metric_t m[] = {{"bandwidth_mbs", "Bandwidth (MB/s)", 0}};
#else
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
#endif
#if defined(WB_OSH_BARRIER)
    wb_columns(&c, 0, 1, m);
    c.o.max_size = c.o.min_size; /* one row */
#else
    wb_columns(&c, 1, 1, m);
#endif
    size_t max = c.o.max_size;
    /* every buffer the collectives need: dest of fcollect holds np blocks */
    char *sym = shmem_malloc(max * (size_t)c.np + 64), *sym2 = shmem_malloc(max + 64);
    char *loc = wb_alloc(max + 64);
    memset(sym2, 1, max);
    memset(loc, 2, max);
    for (size_t size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
#if defined(WB_OSH_REDUCE)
        if (size < sizeof(long)) {
            continue;
        }
#endif
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), valid = -1;
        timed(&c, sym, loc, sym2, size, skip);
        double secs = timed(&c, sym, loc, sym2, size, n);
        shmem_barrier_all();
        double value;
#if defined(WB_OSH_PUT_BW)
        value = (double)size * n * c.o.window / secs / 1e6;
        WB(MPI_Bcast(&value, 1, MPI_DOUBLE, 0, c.comm));
#elif defined(PAIR)
        value = secs * 1e6 / n;
        WB(MPI_Bcast(&value, 1, MPI_DOUBLE, 0, c.comm));
#else
        double avg, mn, mx;
        wb_stats(&c, secs * 1e6 / n, &avg, &mn, &mx);
        value = avg;
        (void)mn, (void)mx;
#endif
        if (c.o.validate) {
            valid = validate(&c, sym, loc, sym2, size);
        }
        wb_row(&c, (long long)size, &value, valid);
#if defined(WB_OSH_BARRIER)
        break;
#endif
    }
    wb_free(loc);
    shmem_free(sym);
    shmem_free(sym2);
#endif
    shmem_finalize();
    return wb_finish(&c);
}
