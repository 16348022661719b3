/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM RMA, atomics, point-to-point synchronisation, ordering and locks.
 * Within a node the peer's heap slice is mapped here: puts and gets are
 * memcpy, atomics are __atomic builtins on the peer's word, and every
 * operation is complete when it returns. PEs on other nodes get requests
 * (shmem_net.c): _nbi forms and non-fetching atomics complete at quiet. */
#include "shmem/shmem_internal.h"

#include <string.h>

#include "util/fence.h"

#define LOCATE(addr, bytes, w) weft_shmem_locate_ctx(call, ctx, addr, bytes, pe, w)

/* Each operation: the mapped address when pe is on this node (loads,
 * stores, CPU atomics: the fast path), else a request to pe (shmem_net.c). */
/* Inlined into every entry point, like the memcpy they were before PEs of
 * other nodes existed: the node-local path stays a few instructions. */
#define HOT static inline __attribute__((always_inline))

HOT void put_bytes(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe,
                   bool nbi)
{
    struct weft_shmem_where w;
    void *t = LOCATE(dest, bytes, &w);
    if (__builtin_expect(t != NULL, 1)) {
        memcpy(t, src, bytes); /* streaming stores measured slower here (docs/performance.md) */
    } else {
        weft_shmem_net_put(call, &w, src, bytes, 1, 0, 0, nbi, NULL);
    }
}

HOT void get_bytes(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe,
                   bool nbi)
{
    struct weft_shmem_where w;
    const void *t = LOCATE(src, bytes, &w);
    if (__builtin_expect(t != NULL, 1)) {
        memcpy(dest, t, bytes);
    } else {
        weft_shmem_net_get(call, &w, dest, bytes, 1, 0, 0, nbi);
    }
}

/* The symmetric range covered by nelems elements stride bytes apart from
 * first: its lowest address and length (the whole range is checked). */
static const char *strided_span(const char *first, ptrdiff_t stride, size_t nelems, size_t esize, size_t *len)
{
    const char *last = first + (ptrdiff_t)(nelems - 1) * stride;
    const char *lo = stride < 0 ? last : first, *hi = (stride < 0 ? first : last) + esize;
    *len = (size_t)(hi - lo);
    return lo;
}

static void strided_put(const char *call, shmem_ctx_t ctx, char *dest, const char *src, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    if (nelems == 0) {
        return;
    }
    ptrdiff_t tstride = dst * (ptrdiff_t)esize, sstride = sst * (ptrdiff_t)esize;
    size_t len;
    const char *lo = strided_span(dest, tstride, nelems, esize, &len);
    struct weft_shmem_where w;
    char *t = LOCATE(lo, len, &w);
    if (t) {
        t += dest - lo;
        for (size_t i = 0; i < nelems; i++) {
            memcpy(t + (ptrdiff_t)i * tstride, src + (ptrdiff_t)i * sstride, esize);
        }
    } else {
        w.off += (uint64_t)(dest - lo);
        weft_shmem_net_put(call, &w, src, esize, nelems, sstride, tstride, false, NULL);
    }
}

static void strided_get(const char *call, shmem_ctx_t ctx, char *dest, const char *src, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    if (nelems == 0) {
        return;
    }
    ptrdiff_t tstride = sst * (ptrdiff_t)esize, dstride = dst * (ptrdiff_t)esize;
    size_t len;
    const char *lo = strided_span(src, tstride, nelems, esize, &len);
    struct weft_shmem_where w;
    const char *t = LOCATE(lo, len, &w);
    if (t) {
        t += src - lo;
        for (size_t i = 0; i < nelems; i++) {
            memcpy(dest + (ptrdiff_t)i * dstride, t + (ptrdiff_t)i * tstride, esize);
        }
    } else {
        w.off += (uint64_t)(src - lo);
        weft_shmem_net_get(call, &w, dest, esize, nelems, dstride, tstride, false);
    }
}

static void put_signal(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes,
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    if (sig_op != SHMEM_SIGNAL_SET && sig_op != SHMEM_SIGNAL_ADD) {
        weft_shmem_fail(call, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    }
    struct weft_shmem_signal sg = {.value = signal, .op = sig_op};
    uint64_t *sig = LOCATE(sig_addr, sizeof *sig, &sg.where);
    if (!sig) { /* pe is on another node: data and signal in one request, applied in order */
        struct weft_shmem_where w;
        LOCATE(dest, bytes, &w);
        weft_shmem_net_put(call, &w, src, bytes, 1, 0, 0, false, &sg);
        return;
    }
    memcpy(LOCATE(dest, bytes, NULL), src, bytes);
    weft_release_fence(); /* the data is visible before the signal */
    if (sig_op == SHMEM_SIGNAL_SET) {
        __atomic_store_n(sig, signal, __ATOMIC_SEQ_CST);
    } else {
        __atomic_fetch_add(sig, signal, __ATOMIC_SEQ_CST);
    }
}

uint64_t shmem_signal_fetch(const uint64_t *sig_addr)
{
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* Every call exists twice: shmem_ctx_X(ctx, ...) and shmem_X(...) on
 * SHMEM_CTX_DEFAULT. CTX_PAIR defines both from one body; the body sees ctx
 * and call (the name the program used, for messages). */
#define CTX_PAIR(RET, NAME, PARAMS, ARGS, BODY)                                                     \
    static inline RET NAME##_impl(const char *call, shmem_ctx_t ctx, WEFT_UNPAREN PARAMS) BODY      \
    RET shmem_ctx_##NAME(shmem_ctx_t ctx, WEFT_UNPAREN PARAMS)                                     \
    {                                                                                             \
        return NAME##_impl("shmem_ctx_" #NAME, ctx, WEFT_UNPAREN ARGS);                            \
    }                                                                                             \
    RET shmem_##NAME(WEFT_UNPAREN PARAMS)                                                         \
    {                                                                                             \
        return NAME##_impl("shmem_" #NAME, SHMEM_CTX_DEFAULT, WEFT_UNPAREN ARGS);                  \
    }
#define WEFT_UNPAREN(...) __VA_ARGS__

#define DEF_RMA(N, T)                                                                              \
    CTX_PAIR(void, N##_put, (T * dest, const T *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { put_bytes(call, ctx, dest, src, nelems * sizeof(T), pe, false); })                  \
    CTX_PAIR(void, N##_get, (T * dest, const T *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { get_bytes(call, ctx, dest, src, nelems * sizeof(T), pe, false); })                  \
    CTX_PAIR(void, N##_put_nbi, (T * dest, const T *src, size_t nelems, int pe),                   \
             (dest, src, nelems, pe), { put_bytes(call, ctx, dest, src, nelems * sizeof(T), pe, true); }) \
    CTX_PAIR(void, N##_get_nbi, (T * dest, const T *src, size_t nelems, int pe),                   \
             (dest, src, nelems, pe), { get_bytes(call, ctx, dest, src, nelems * sizeof(T), pe, true); }) \
    CTX_PAIR(void, N##_p, (T * dest, T value, int pe), (dest, value, pe), {                        \
        struct weft_shmem_where w_;                                                               \
        T *t_ = LOCATE(dest, sizeof(T), &w_);                                                     \
        if (t_) {                                                                                 \
            *t_ = value;                                                                          \
        } else {                                                                                  \
            weft_shmem_net_put(call, &w_, &value, sizeof(T), 1, 0, 0, false, NULL);               \
        }                                                                                         \
    })                                                                                            \
    CTX_PAIR(T, N##_g, (const T *src, int pe), (src, pe), {                                        \
        struct weft_shmem_where w_;                                                               \
        const T *t_ = LOCATE(src, sizeof(T), &w_);                                                \
        T r_;                                                                                     \
        if (t_) {                                                                                 \
            return *t_;                                                                           \
        }                                                                                         \
        weft_shmem_net_get(call, &w_, &r_, sizeof(T), 1, 0, 0, false);                            \
        return r_;                                                                                \
    })                                                                                            \
    CTX_PAIR(void, N##_iput, (T * dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
             (dest, src, dst, sst, nelems, pe),                                                    \
             { strided_put(call, ctx, (char *)dest, (const char *)src, dst, sst, nelems, sizeof(T), pe); }) \
    CTX_PAIR(void, N##_iget, (T * dest, const T *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
             (dest, src, dst, sst, nelems, pe),                                                    \
             { strided_get(call, ctx, (char *)dest, (const char *)src, dst, sst, nelems, sizeof(T), pe); }) \
    CTX_PAIR(void, N##_put_signal,                                                                 \
             (T * dest, const T *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe), \
             (dest, src, nelems, sig_addr, signal, sig_op, pe),                                    \
             { put_signal(call, ctx, dest, src, nelems * sizeof(T), sig_addr, signal, sig_op, pe); }) \
    CTX_PAIR(void, N##_put_signal_nbi,                                                             \
             (T * dest, const T *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe), \
             (dest, src, nelems, sig_addr, signal, sig_op, pe),                                    \
             { put_signal(call, ctx, dest, src, nelems * sizeof(T), sig_addr, signal, sig_op, pe); })
WEFT_SHMEM_RMA_TYPES(DEF_RMA)

#define DEF_SIZED(B, S)                                                                            \
    CTX_PAIR(void, put##B, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { put_bytes(call, ctx, dest, src, nelems * (S), pe, false); })                        \
    CTX_PAIR(void, get##B, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { get_bytes(call, ctx, dest, src, nelems * (S), pe, false); })                        \
    CTX_PAIR(void, put##B##_nbi, (void *dest, const void *src, size_t nelems, int pe),             \
             (dest, src, nelems, pe), { put_bytes(call, ctx, dest, src, nelems * (S), pe, true); }) \
    CTX_PAIR(void, get##B##_nbi, (void *dest, const void *src, size_t nelems, int pe),             \
             (dest, src, nelems, pe), { get_bytes(call, ctx, dest, src, nelems * (S), pe, true); }) \
    CTX_PAIR(void, iput##B, (void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
             (dest, src, dst, sst, nelems, pe), { strided_put(call, ctx, dest, src, dst, sst, nelems, (S), pe); }) \
    CTX_PAIR(void, iget##B, (void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst, size_t nelems, int pe), \
             (dest, src, dst, sst, nelems, pe), { strided_get(call, ctx, dest, src, dst, sst, nelems, (S), pe); }) \
    CTX_PAIR(void, put##B##_signal,                                                                \
             (void *dest, const void *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe), \
             (dest, src, nelems, sig_addr, signal, sig_op, pe),                                    \
             { put_signal(call, ctx, dest, src, nelems * (S), sig_addr, signal, sig_op, pe); })    \
    CTX_PAIR(void, put##B##_signal_nbi,                                                            \
             (void *dest, const void *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe), \
             (dest, src, nelems, sig_addr, signal, sig_op, pe),                                    \
             { put_signal(call, ctx, dest, src, nelems * (S), sig_addr, signal, sig_op, pe); })
WEFT_SHMEM_SIZES(DEF_SIZED)
CTX_PAIR(void, putmem, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { put_bytes(call, ctx, dest, src, nelems, pe, false); })
CTX_PAIR(void, getmem, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { get_bytes(call, ctx, dest, src, nelems, pe, false); })
CTX_PAIR(void, putmem_nbi, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { put_bytes(call, ctx, dest, src, nelems, pe, true); })
CTX_PAIR(void, getmem_nbi, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { get_bytes(call, ctx, dest, src, nelems, pe, true); })
CTX_PAIR(void, putmem_signal,
         (void *dest, const void *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe),
         (dest, src, nelems, sig_addr, signal, sig_op, pe),
         { put_signal(call, ctx, dest, src, nelems, sig_addr, signal, sig_op, pe); })
CTX_PAIR(void, putmem_signal_nbi,
         (void *dest, const void *src, size_t nelems, uint64_t *sig_addr, uint64_t signal, int sig_op, int pe),
         (dest, src, nelems, sig_addr, signal, sig_op, pe),
         { put_signal(call, ctx, dest, src, nelems, sig_addr, signal, sig_op, pe); })

/* --- atomics --------------------------------------------------------------------- */
#define SC __ATOMIC_SEQ_CST

static inline uint64_t bits_of(const void *v, size_t n)
{
    uint64_t b = 0;
    memcpy(&b, v, n); /* little-endian: the value in the low n bytes */
    return b;
}
#define BITS(T, v) bits_of(&(T){v}, sizeof(T))

/* LOCAL runs on t_ (the mapped word) when pe is on this node; otherwise the
 * request (op, value, compare bits) goes to pe, fetching into FETCHP if not NULL. */
#define AMO(T, ADDR, LOCAL, OP, V, C, FETCHP, NBI)                                                 \
    struct weft_shmem_where w_;                                                                   \
    T *t_ = (T *)LOCATE(ADDR, sizeof(T), &w_);                                                    \
    if (__builtin_expect(t_ != NULL, 1)) {                                                        \
        LOCAL;                                                                                    \
    } else {                                                                                      \
        weft_shmem_net_amo(call, &w_, sizeof(T), WEFT_SHMEM_AMO_##OP, V, C, FETCHP, NBI);         \
    }

#define DEF_AMO_EXT(N, T)                                                                          \
    CTX_PAIR(T, N##_atomic_fetch, (const T *source, int pe), (source, pe), {                       \
        T r;                                                                                      \
        AMO(T, source, __atomic_load(t_, &r, SC), FETCH, 0, 0, &r, false);                        \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_set, (T * dest, T value, int pe), (dest, value, pe),                 \
             { AMO(T, dest, __atomic_store(t_, &value, SC), SET, BITS(T, value), 0, NULL, false); }) \
    CTX_PAIR(T, N##_atomic_swap, (T * dest, T value, int pe), (dest, value, pe), {                 \
        T r;                                                                                      \
        AMO(T, dest, __atomic_exchange(t_, &value, &r, SC), SWAP, BITS(T, value), 0, &r, false);  \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_fetch_nbi, (T * fetch, const T *source, int pe), (fetch, source, pe), \
             { AMO(T, source, __atomic_load(t_, fetch, SC), FETCH, 0, 0, fetch, true); })           \
    CTX_PAIR(void, N##_atomic_swap_nbi, (T * fetch, T * dest, T value, int pe), (fetch, dest, value, pe), \
             { AMO(T, dest, __atomic_exchange(t_, &value, fetch, SC), SWAP, BITS(T, value), 0, fetch, true); })
WEFT_SHMEM_AMO_EXT_TYPES(DEF_AMO_EXT)

#define DEF_AMO_STD(N, T)                                                                          \
    CTX_PAIR(T, N##_atomic_compare_swap, (T * dest, T cond, T value, int pe), (dest, cond, value, pe), { \
        T r = cond;                                                                               \
        AMO(T, dest, __atomic_compare_exchange_n(t_, &r, value, 0, SC, SC), CSWAP, BITS(T, value), \
            BITS(T, cond), &r, false);                                                            \
        return r; /* the old value either way */                                                  \
    })                                                                                            \
    CTX_PAIR(T, N##_atomic_fetch_inc, (T * dest, int pe), (dest, pe), {                            \
        T r;                                                                                      \
        AMO(T, dest, r = __atomic_fetch_add(t_, (T)1, SC), ADD, 1, 0, &r, false);                 \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_inc, (T * dest, int pe), (dest, pe),                                 \
             { AMO(T, dest, __atomic_fetch_add(t_, (T)1, SC), ADD, 1, 0, NULL, false); })         \
    CTX_PAIR(T, N##_atomic_fetch_add, (T * dest, T value, int pe), (dest, value, pe), {            \
        T r;                                                                                      \
        AMO(T, dest, r = __atomic_fetch_add(t_, value, SC), ADD, BITS(T, value), 0, &r, false);   \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_add, (T * dest, T value, int pe), (dest, value, pe),                 \
             { AMO(T, dest, __atomic_fetch_add(t_, value, SC), ADD, BITS(T, value), 0, NULL, false); }) \
    CTX_PAIR(void, N##_atomic_compare_swap_nbi, (T * fetch, T * dest, T cond, T value, int pe),    \
             (fetch, dest, cond, value, pe), {                                                     \
                 AMO(T, dest, (__atomic_compare_exchange_n(t_, &cond, value, 0, SC, SC), *fetch = cond), \
                     CSWAP, BITS(T, value), BITS(T, cond), fetch, true);                           \
             })                                                                                   \
    CTX_PAIR(void, N##_atomic_fetch_inc_nbi, (T * fetch, T * dest, int pe), (fetch, dest, pe),     \
             { AMO(T, dest, *fetch = __atomic_fetch_add(t_, (T)1, SC), ADD, 1, 0, fetch, true); }) \
    CTX_PAIR(void, N##_atomic_fetch_add_nbi, (T * fetch, T * dest, T value, int pe),               \
             (fetch, dest, value, pe),                                                             \
             { AMO(T, dest, *fetch = __atomic_fetch_add(t_, value, SC), ADD, BITS(T, value), 0, fetch, true); })
WEFT_SHMEM_AMO_STD_TYPES(DEF_AMO_STD)

#define DEF_AMO_BIT_OP(N, T, OP, UOP)                                                              \
    CTX_PAIR(T, N##_atomic_fetch_##OP, (T * dest, T value, int pe), (dest, value, pe), {           \
        T r;                                                                                      \
        AMO(T, dest, r = __atomic_fetch_##OP(t_, value, SC), UOP, BITS(T, value), 0, &r, false);  \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_##OP, (T * dest, T value, int pe), (dest, value, pe),                \
             { AMO(T, dest, __atomic_fetch_##OP(t_, value, SC), UOP, BITS(T, value), 0, NULL, false); }) \
    CTX_PAIR(void, N##_atomic_fetch_##OP##_nbi, (T * fetch, T * dest, T value, int pe),            \
             (fetch, dest, value, pe),                                                             \
             { AMO(T, dest, *fetch = __atomic_fetch_##OP(t_, value, SC), UOP, BITS(T, value), 0, fetch, true); })
#define DEF_AMO_BIT(N, T)                                                                          \
    DEF_AMO_BIT_OP(N, T, and, AND) DEF_AMO_BIT_OP(N, T, or, OR) DEF_AMO_BIT_OP(N, T, xor, XOR)
WEFT_SHMEM_AMO_BIT_TYPES(DEF_AMO_BIT)

/* --- point-to-point synchronisation ------------------------------------------------ */
static void check_cmp(const char *call, int cmp)
{
    if (cmp < SHMEM_CMP_EQ || cmp > SHMEM_CMP_LE) {
        weft_shmem_fail(call, "cmp %d is not a SHMEM_CMP_* value", cmp);
    }
}

#define CMP_HOLDS(v, cmp, c)                                                                       \
    ((cmp) == SHMEM_CMP_EQ   ? (v) == (c)                                                         \
     : (cmp) == SHMEM_CMP_NE ? (v) != (c)                                                         \
     : (cmp) == SHMEM_CMP_GT ? (v) > (c)                                                          \
     : (cmp) == SHMEM_CMP_GE ? (v) >= (c)                                                         \
     : (cmp) == SHMEM_CMP_LT ? (v) < (c)                                                          \
                             : (v) <= (c))

/* The _all/_any/_some and vector forms share one scan per type: cmp_values
 * is NULL for the scalar-value forms. */
#define DEF_P2P(N, T)                                                                              \
    static int N##_holds(T *ivar, int cmp, T c)                                                   \
    {                                                                                             \
        T v = __atomic_load_n(ivar, __ATOMIC_ACQUIRE);                                            \
        return CMP_HOLDS(v, cmp, c);                                                              \
    }                                                                                             \
    /* mode 0: all, 1: any (first index not yet reported), 2: some. Returns the count met. */     \
    static size_t N##_scan(T *ivars, size_t nelems, size_t *indices, const int *status, int cmp,  \
                           T c, const T *cvals, int mode)                                         \
    {                                                                                             \
        size_t met = 0, active = 0;                                                               \
        for (size_t i = 0; i < nelems; i++) {                                                     \
            if (status && status[i]) {                                                            \
                continue;                                                                         \
            }                                                                                     \
            active++;                                                                             \
            if (N##_holds(&ivars[i], cmp, cvals ? cvals[i] : c)) {                                \
                if (mode == 1) {                                                                  \
                    indices[0] = i;                                                               \
                    return 1;                                                                     \
                }                                                                                 \
                if (mode == 2) {                                                                  \
                    indices[met] = i;                                                             \
                }                                                                                 \
                met++;                                                                            \
            }                                                                                     \
        }                                                                                         \
        return mode == 0 ? (met == active) : met;                                                 \
    }                                                                                             \
    static size_t N##_wait(const char *call, T *ivars, size_t nelems, size_t *indices,            \
                           const int *status, int cmp, T c, const T *cvals, int mode, int block)  \
    {                                                                                             \
        weft_shmem_check_init(call);                                                              \
        check_cmp(call, cmp);                                                                     \
        size_t active = 0, any_index = SIZE_MAX, r;                                               \
        for (size_t i = 0; i < nelems; i++) {                                                     \
            active += !(status && status[i]);                                                     \
        }                                                                                         \
        if (active == 0) {                                                                        \
            return mode == 1 ? SIZE_MAX : (mode == 0 ? 1 : 0);                                    \
        }                                                                                         \
        unsigned spins = 0;                                                                       \
        while (!(r = N##_scan(ivars, nelems, mode == 1 ? &any_index : indices, status, cmp, c,    \
                              cvals, mode))) {                                                    \
            if (!block) {                                                                         \
                return mode == 1 ? SIZE_MAX : 0;                                                  \
            }                                                                                     \
            weft_shmem_backoff(&spins);                                                           \
        }                                                                                         \
        weft_acquire_fence();                                                  \
        return mode == 1 ? any_index : r;                                                         \
    }                                                                                             \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value)                                    \
    {                                                                                             \
        N##_wait("shmem_" #N "_wait_until", ivar, 1, NULL, NULL, cmp, cmp_value, NULL, 0, 1);     \
    }                                                                                             \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,          \
                                    T cmp_value)                                                  \
    {                                                                                             \
        N##_wait("shmem_" #N "_wait_until_all", ivars, nelems, NULL, status, cmp, cmp_value,      \
                 NULL, 0, 1);                                                                     \
    }                                                                                             \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,        \
                                      T cmp_value)                                                \
    {                                                                                             \
        return N##_wait("shmem_" #N "_wait_until_any", ivars, nelems, NULL, status, cmp,          \
                        cmp_value, NULL, 1, 1);                                                   \
    }                                                                                             \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                  \
                                       const int *status, int cmp, T cmp_value)                   \
    {                                                                                             \
        return N##_wait("shmem_" #N "_wait_until_some", ivars, nelems, indices, status, cmp,      \
                        cmp_value, NULL, 2, 1);                                                   \
    }                                                                                             \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
                                           T *cmp_values)                                         \
    {                                                                                             \
        N##_wait("shmem_" #N "_wait_until_all_vector", ivars, nelems, NULL, status, cmp, 0,       \
                 cmp_values, 0, 1);                                                               \
    }                                                                                             \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,          \
                                             int cmp, T *cmp_values)                              \
    {                                                                                             \
        return N##_wait("shmem_" #N "_wait_until_any_vector", ivars, nelems, NULL, status, cmp,   \
                        0, cmp_values, 1, 1);                                                     \
    }                                                                                             \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,           \
                                              const int *status, int cmp, T *cmp_values)          \
    {                                                                                             \
        return N##_wait("shmem_" #N "_wait_until_some_vector", ivars, nelems, indices, status,    \
                        cmp, 0, cmp_values, 2, 1);                                                \
    }                                                                                             \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value)                                           \
    {                                                                                             \
        return (int)N##_wait("shmem_" #N "_test", ivar, 1, NULL, NULL, cmp, cmp_value, NULL, 0,   \
                             0);                                                                  \
    }                                                                                             \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value)    \
    {                                                                                             \
        return (int)N##_wait("shmem_" #N "_test_all", ivars, nelems, NULL, status, cmp,           \
                             cmp_value, NULL, 0, 0);                                              \
    }                                                                                             \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,              \
                                T cmp_value)                                                      \
    {                                                                                             \
        return N##_wait("shmem_" #N "_test_any", ivars, nelems, NULL, status, cmp, cmp_value,     \
                        NULL, 1, 0);                                                              \
    }                                                                                             \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,     \
                                 int cmp, T cmp_value)                                            \
    {                                                                                             \
        return N##_wait("shmem_" #N "_test_some", ivars, nelems, indices, status, cmp, cmp_value, \
                        NULL, 2, 0);                                                              \
    }                                                                                             \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,          \
                                    T *cmp_values)                                                \
    {                                                                                             \
        return (int)N##_wait("shmem_" #N "_test_all_vector", ivars, nelems, NULL, status, cmp, 0, \
                             cmp_values, 0, 0);                                                   \
    }                                                                                             \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,       \
                                       T *cmp_values)                                             \
    {                                                                                             \
        return N##_wait("shmem_" #N "_test_any_vector", ivars, nelems, NULL, status, cmp, 0,      \
                        cmp_values, 1, 0);                                                        \
    }                                                                                             \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                 \
                                        const int *status, int cmp, T *cmp_values)                \
    {                                                                                             \
        return N##_wait("shmem_" #N "_test_some_vector", ivars, nelems, indices, status, cmp, 0,  \
                        cmp_values, 2, 0);                                                        \
    }
WEFT_SHMEM_P2P_TYPES(DEF_P2P)

uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value)
{
    shmem_uint64_wait_until(sig_addr, cmp, cmp_value);
    return __atomic_load_n(sig_addr, __ATOMIC_ACQUIRE);
}

/* --- ordering and barriers ---------------------------------------------------------
 * Within a node every operation is complete on return. To other nodes, quiet
 * waits until every target confirmed our requests; fence needs nothing more
 * than a memory fence, because a target applies one origin's requests in
 * the order they were sent (shmem_net.c), unless large puts/gets went by
 * libfabric RMA (weft_shmem_net_fence). Contexts share one completion
 * domain: quiet on any context completes them all. */
void shmem_quiet(void)
{
    weft_shmem_check_init("shmem_quiet");
    if (weft_shmem.net) {
        weft_shmem_net_quiet();
    }
    weft_full_fence();
}

void shmem_fence(void)
{
    weft_shmem_check_init("shmem_fence");
    if (weft_shmem.net) {
        weft_shmem_net_fence();
    }
    weft_full_fence();
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    weft_shmem_ctx_check("shmem_ctx_quiet", ctx);
    weft_shmem_net_quiet();
    weft_full_fence(); /* publish the stores */
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    weft_shmem_ctx_check("shmem_ctx_fence", ctx);
    if (weft_shmem.net) {
        weft_shmem_net_fence();
    }
    weft_full_fence();
}

void shmem_barrier_all(void)
{
    shmem_quiet();
    PMPI_Barrier(SHMEM_TEAM_WORLD->comm);
}

void shmem_sync_all(void)
{
    weft_shmem_check_init("shmem_sync_all");
    PMPI_Barrier(SHMEM_TEAM_WORLD->comm);
}

/* --- locks: a ticket lock in PE 0's copy of the lock word (fair, FIFO) -------------
 * The long is two 32-bit halves: [0] now serving, [1] next ticket. PEs on
 * PE 0's node use CPU atomics on it; the others send the same atomics to PE 0. */
struct lock_word {
    uint32_t *h; /* mapped, or NULL: at w on PE 0 */
    struct weft_shmem_where w;
};

static struct lock_word lock_word(const char *call, long *lock)
{
    _Static_assert(sizeof(long) == 8, "ticket lock assumes a 64-bit long");
    struct lock_word l = {0};
    l.h = weft_shmem_locate(call, lock, sizeof *lock, 0, &l.w);
    return l;
}

/* fetch_add on half i of the lock word (add 0: a read). */
static uint32_t lock_half_add(const char *call, const struct lock_word *l, int i, uint32_t add, int order)
{
    if (l->h) {
        return add ? __atomic_fetch_add(&l->h[i], add, order) : __atomic_load_n(&l->h[i], order);
    }
    struct weft_shmem_where w = l->w;
    uint32_t old = 0;
    w.off += (uint64_t)i * sizeof(uint32_t);
    weft_shmem_net_amo(call, &w, sizeof old, add ? WEFT_SHMEM_AMO_ADD : WEFT_SHMEM_AMO_FETCH, add, 0, &old,
                       false);
    return old;
}

void shmem_set_lock(long *lock)
{
    struct lock_word l = lock_word("shmem_set_lock", lock);
    uint32_t ticket = lock_half_add("shmem_set_lock", &l, 1, 1, SC);
    unsigned spins = 0;
    while (lock_half_add("shmem_set_lock", &l, 0, 0, __ATOMIC_ACQUIRE) != ticket) {
        weft_shmem_backoff(&spins);
    }
}

void shmem_clear_lock(long *lock)
{
    struct lock_word l = lock_word("shmem_clear_lock", lock);
    shmem_quiet(); /* updates made under the lock are visible to the next holder */
    lock_half_add("shmem_clear_lock", &l, 0, 1, __ATOMIC_RELEASE);
}

int shmem_test_lock(long *lock)
{
    struct lock_word l = lock_word("shmem_test_lock", lock);
    uint64_t cur;
    if (l.h) {
        cur = __atomic_load_n((uint64_t *)(void *)l.h, SC);
    } else {
        weft_shmem_net_amo("shmem_test_lock", &l.w, sizeof cur, WEFT_SHMEM_AMO_FETCH, 0, 0, &cur, false);
    }
    uint32_t serving = (uint32_t)cur, next = (uint32_t)(cur >> 32);
    if (serving != next) {
        return 1; /* held */
    }
    uint64_t want = ((uint64_t)(uint32_t)(next + 1) << 32) | serving, old = cur;
    if (l.h) {
        return __atomic_compare_exchange_n((uint64_t *)(void *)l.h, &old, want, 0, SC, SC) ? 0 : 1;
    }
    weft_shmem_net_amo("shmem_test_lock", &l.w, sizeof old, WEFT_SHMEM_AMO_CSWAP, want, cur, &old, false);
    return old == cur ? 0 : 1;
}
