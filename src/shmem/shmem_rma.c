/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM RMA, atomics, point-to-point synchronisation, ordering and locks.
 * Within a node the peer's heap slice is mapped here: puts and gets are
 * memcpy, atomics are __atomic builtins on the peer's word. Every operation
 * is complete when it returns, so the _nbi forms are the blocking ones and
 * quiet/fence are memory fences. */
#include "shmem/shmem_internal.h"

#include <string.h>

#include "util/fence.h"

#define REMOTE(call, ctx, addr, bytes, pe) weft_shmem_remote_ctx(call, ctx, addr, bytes, pe)

static void put_bytes(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe)
{
    memcpy(REMOTE(call, ctx, dest, bytes, pe), src, bytes);
}

static void get_bytes(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes, int pe)
{
    memcpy(dest, REMOTE(call, ctx, src, bytes, pe), bytes);
}

static void strided_put(const char *call, shmem_ctx_t ctx, char *dest, const char *src, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    for (size_t i = 0; i < nelems; i++) {
        put_bytes(call, ctx, dest + (ptrdiff_t)i * dst * (ptrdiff_t)esize,
                  src + (ptrdiff_t)i * sst * (ptrdiff_t)esize, esize, pe);
    }
}

static void strided_get(const char *call, shmem_ctx_t ctx, char *dest, const char *src, ptrdiff_t dst,
                        ptrdiff_t sst, size_t nelems, size_t esize, int pe)
{
    for (size_t i = 0; i < nelems; i++) {
        get_bytes(call, ctx, dest + (ptrdiff_t)i * dst * (ptrdiff_t)esize,
                  src + (ptrdiff_t)i * sst * (ptrdiff_t)esize, esize, pe);
    }
}

static void signal_update(const char *call, shmem_ctx_t ctx, uint64_t *sig_addr, uint64_t signal, int sig_op,
                          int pe)
{
    uint64_t *sig = REMOTE(call, ctx, sig_addr, sizeof *sig, pe);
    weft_release_fence(); /* the data is visible before the signal */
    if (sig_op == SHMEM_SIGNAL_SET) {
        __atomic_store_n(sig, signal, __ATOMIC_SEQ_CST);
    } else if (sig_op == SHMEM_SIGNAL_ADD) {
        __atomic_fetch_add(sig, signal, __ATOMIC_SEQ_CST);
    } else {
        weft_shmem_fail(call, "sig_op %d is neither SHMEM_SIGNAL_SET nor SHMEM_SIGNAL_ADD", sig_op);
    }
}

static void put_signal(const char *call, shmem_ctx_t ctx, void *dest, const void *src, size_t bytes,
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
{
    put_bytes(call, ctx, dest, src, bytes, pe);
    signal_update(call, ctx, sig_addr, signal, sig_op, pe);
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
             { put_bytes(call, ctx, dest, src, nelems * sizeof(T), pe); })                         \
    CTX_PAIR(void, N##_get, (T * dest, const T *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { get_bytes(call, ctx, dest, src, nelems * sizeof(T), pe); })                         \
    CTX_PAIR(void, N##_put_nbi, (T * dest, const T *src, size_t nelems, int pe),                   \
             (dest, src, nelems, pe), { put_bytes(call, ctx, dest, src, nelems * sizeof(T), pe); }) \
    CTX_PAIR(void, N##_get_nbi, (T * dest, const T *src, size_t nelems, int pe),                   \
             (dest, src, nelems, pe), { get_bytes(call, ctx, dest, src, nelems * sizeof(T), pe); }) \
    CTX_PAIR(void, N##_p, (T * dest, T value, int pe), (dest, value, pe),                          \
             { *(T *)REMOTE(call, ctx, dest, sizeof(T), pe) = value; })                            \
    CTX_PAIR(T, N##_g, (const T *src, int pe), (src, pe),                                          \
             { return *(const T *)REMOTE(call, ctx, src, sizeof(T), pe); })                        \
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
             { put_bytes(call, ctx, dest, src, nelems * (S), pe); })                               \
    CTX_PAIR(void, get##B, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe), \
             { get_bytes(call, ctx, dest, src, nelems * (S), pe); })                               \
    CTX_PAIR(void, put##B##_nbi, (void *dest, const void *src, size_t nelems, int pe),             \
             (dest, src, nelems, pe), { put_bytes(call, ctx, dest, src, nelems * (S), pe); })       \
    CTX_PAIR(void, get##B##_nbi, (void *dest, const void *src, size_t nelems, int pe),             \
             (dest, src, nelems, pe), { get_bytes(call, ctx, dest, src, nelems * (S), pe); })       \
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
         { put_bytes(call, ctx, dest, src, nelems, pe); })
CTX_PAIR(void, getmem, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { get_bytes(call, ctx, dest, src, nelems, pe); })
CTX_PAIR(void, putmem_nbi, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { put_bytes(call, ctx, dest, src, nelems, pe); })
CTX_PAIR(void, getmem_nbi, (void *dest, const void *src, size_t nelems, int pe), (dest, src, nelems, pe),
         { get_bytes(call, ctx, dest, src, nelems, pe); })
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
#define AMO_TARGET(T, dest, pe) ((T *)REMOTE(call, ctx, dest, sizeof(T), pe))

#define DEF_AMO_EXT(N, T)                                                                          \
    CTX_PAIR(T, N##_atomic_fetch, (const T *source, int pe), (source, pe), {                       \
        T r;                                                                                      \
        __atomic_load(AMO_TARGET(T, source, pe), &r, SC);                                         \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_set, (T * dest, T value, int pe), (dest, value, pe),                 \
             { __atomic_store(AMO_TARGET(T, dest, pe), &value, SC); })                             \
    CTX_PAIR(T, N##_atomic_swap, (T * dest, T value, int pe), (dest, value, pe), {                 \
        T r;                                                                                      \
        __atomic_exchange(AMO_TARGET(T, dest, pe), &value, &r, SC);                               \
        return r;                                                                                 \
    })                                                                                            \
    CTX_PAIR(void, N##_atomic_fetch_nbi, (T * fetch, const T *source, int pe), (fetch, source, pe), \
             { __atomic_load(AMO_TARGET(T, source, pe), fetch, SC); })                             \
    CTX_PAIR(void, N##_atomic_swap_nbi, (T * fetch, T * dest, T value, int pe), (fetch, dest, value, pe), \
             { __atomic_exchange(AMO_TARGET(T, dest, pe), &value, fetch, SC); })
WEFT_SHMEM_AMO_EXT_TYPES(DEF_AMO_EXT)

#define DEF_AMO_STD(N, T)                                                                          \
    CTX_PAIR(T, N##_atomic_compare_swap, (T * dest, T cond, T value, int pe), (dest, cond, value, pe), { \
        __atomic_compare_exchange_n(AMO_TARGET(T, dest, pe), &cond, value, 0, SC, SC);            \
        return cond; /* the old value either way */                                               \
    })                                                                                            \
    CTX_PAIR(T, N##_atomic_fetch_inc, (T * dest, int pe), (dest, pe),                              \
             { return __atomic_fetch_add(AMO_TARGET(T, dest, pe), (T)1, SC); })                    \
    CTX_PAIR(void, N##_atomic_inc, (T * dest, int pe), (dest, pe),                                 \
             { __atomic_fetch_add(AMO_TARGET(T, dest, pe), (T)1, SC); })                           \
    CTX_PAIR(T, N##_atomic_fetch_add, (T * dest, T value, int pe), (dest, value, pe),              \
             { return __atomic_fetch_add(AMO_TARGET(T, dest, pe), value, SC); })                   \
    CTX_PAIR(void, N##_atomic_add, (T * dest, T value, int pe), (dest, value, pe),                 \
             { __atomic_fetch_add(AMO_TARGET(T, dest, pe), value, SC); })                          \
    CTX_PAIR(void, N##_atomic_compare_swap_nbi, (T * fetch, T * dest, T cond, T value, int pe),    \
             (fetch, dest, cond, value, pe), {                                                     \
                 __atomic_compare_exchange_n(AMO_TARGET(T, dest, pe), &cond, value, 0, SC, SC);    \
                 *fetch = cond;                                                                   \
             })                                                                                   \
    CTX_PAIR(void, N##_atomic_fetch_inc_nbi, (T * fetch, T * dest, int pe), (fetch, dest, pe),     \
             { *fetch = __atomic_fetch_add(AMO_TARGET(T, dest, pe), (T)1, SC); })                  \
    CTX_PAIR(void, N##_atomic_fetch_add_nbi, (T * fetch, T * dest, T value, int pe),               \
             (fetch, dest, value, pe), { *fetch = __atomic_fetch_add(AMO_TARGET(T, dest, pe), value, SC); })
WEFT_SHMEM_AMO_STD_TYPES(DEF_AMO_STD)

#define DEF_AMO_BIT_OP(N, T, OP)                                                                   \
    CTX_PAIR(T, N##_atomic_fetch_##OP, (T * dest, T value, int pe), (dest, value, pe),             \
             { return __atomic_fetch_##OP(AMO_TARGET(T, dest, pe), value, SC); })                  \
    CTX_PAIR(void, N##_atomic_##OP, (T * dest, T value, int pe), (dest, value, pe),                \
             { __atomic_fetch_##OP(AMO_TARGET(T, dest, pe), value, SC); })                         \
    CTX_PAIR(void, N##_atomic_fetch_##OP##_nbi, (T * fetch, T * dest, T value, int pe),            \
             (fetch, dest, value, pe), { *fetch = __atomic_fetch_##OP(AMO_TARGET(T, dest, pe), value, SC); })
#define DEF_AMO_BIT(N, T) DEF_AMO_BIT_OP(N, T, and) DEF_AMO_BIT_OP(N, T, or) DEF_AMO_BIT_OP(N, T, xor)
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

/* --- ordering and barriers --------------------------------------------------------- */
void shmem_quiet(void)
{
    weft_shmem_check_init("shmem_quiet");
    weft_full_fence();
}

void shmem_fence(void)
{
    weft_shmem_check_init("shmem_fence");
    weft_full_fence();
}

void shmem_ctx_quiet(shmem_ctx_t ctx)
{
    weft_shmem_ctx_check("shmem_ctx_quiet", ctx);
    weft_full_fence(); /* every operation completed on return; publish the stores */
}

void shmem_ctx_fence(shmem_ctx_t ctx)
{
    weft_shmem_ctx_check("shmem_ctx_fence", ctx);
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

/* --- locks: a ticket lock in PE 0's copy of the lock word (fair, FIFO) ------------- */
/* The long is two 32-bit halves: [0] now serving, [1] next ticket. */
static uint32_t *lock_halves(const char *call, long *lock)
{
    _Static_assert(sizeof(long) == 8, "ticket lock assumes a 64-bit long");
    return REMOTE(call, SHMEM_CTX_DEFAULT, lock, sizeof *lock, 0);
}

void shmem_set_lock(long *lock)
{
    uint32_t *h = lock_halves("shmem_set_lock", lock);
    uint32_t ticket = __atomic_fetch_add(&h[1], 1, SC);
    unsigned spins = 0;
    while (__atomic_load_n(&h[0], __ATOMIC_ACQUIRE) != ticket) {
        weft_shmem_backoff(&spins);
    }
}

void shmem_clear_lock(long *lock)
{
    uint32_t *h = lock_halves("shmem_clear_lock", lock);
    shmem_quiet(); /* updates made under the lock are visible to the next holder */
    __atomic_fetch_add(&h[0], 1, __ATOMIC_RELEASE);
}

int shmem_test_lock(long *lock)
{
    uint64_t *w = (uint64_t *)lock_halves("shmem_test_lock", lock);
    uint64_t cur = __atomic_load_n(w, SC);
    uint32_t serving = (uint32_t)cur, next = (uint32_t)(cur >> 32);
    if (serving != next) {
        return 1; /* held */
    }
    uint64_t want = ((uint64_t)(uint32_t)(next + 1) << 32) | serving;
    return __atomic_compare_exchange_n(w, &cur, want, 0, SC, SC) ? 0 : 1;
}
