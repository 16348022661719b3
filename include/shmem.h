/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM 1.5 for Weft. The implementation lives in libmpi_abi.so.1 (one
 * runtime for MPI and SHMEM: docs/design.md "OpenSHMEM"); build with oshcc,
 * run with oshrun. What is not implemented yet: docs/status-notes.md.
 * Type tables are X-macros: X(TYPENAME, TYPE) as in the standard's tables. */
#ifndef WEFT_SHMEM_H
#define WEFT_SHMEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SHMEM_MAJOR_VERSION 1
#define SHMEM_MINOR_VERSION 5
#define SHMEM_MAX_NAME_LEN  256
#define SHMEM_VENDOR_STRING "Weft"
#define _SHMEM_MAJOR_VERSION SHMEM_MAJOR_VERSION
#define _SHMEM_MINOR_VERSION SHMEM_MINOR_VERSION
#define _SHMEM_MAX_NAME_LEN  SHMEM_MAX_NAME_LEN
#define _SHMEM_VENDOR_STRING SHMEM_VENDOR_STRING

enum { SHMEM_THREAD_SINGLE = 0, SHMEM_THREAD_FUNNELED, SHMEM_THREAD_SERIALIZED, SHMEM_THREAD_MULTIPLE };
enum { SHMEM_CMP_EQ = 0, SHMEM_CMP_NE, SHMEM_CMP_GT, SHMEM_CMP_GE, SHMEM_CMP_LT, SHMEM_CMP_LE };
#define _SHMEM_CMP_EQ SHMEM_CMP_EQ
#define _SHMEM_CMP_NE SHMEM_CMP_NE
#define _SHMEM_CMP_GT SHMEM_CMP_GT
#define _SHMEM_CMP_GE SHMEM_CMP_GE
#define _SHMEM_CMP_LT SHMEM_CMP_LT
#define _SHMEM_CMP_LE SHMEM_CMP_LE
enum { SHMEM_SIGNAL_SET = 0, SHMEM_SIGNAL_ADD = 1 };
#define SHMEM_MALLOC_ATOMICS_REMOTE 1L
#define SHMEM_MALLOC_SIGNAL_REMOTE  2L

/* Work arrays of the deprecated active-set collectives (kept for source compatibility). */
#define SHMEM_SYNC_VALUE          (-1L)
#define SHMEM_BCAST_SYNC_SIZE     1
#define SHMEM_COLLECT_SYNC_SIZE   1
#define SHMEM_REDUCE_SYNC_SIZE    1
#define SHMEM_BARRIER_SYNC_SIZE   1
#define SHMEM_ALLTOALL_SYNC_SIZE  1
#define SHMEM_ALLTOALLS_SYNC_SIZE 1
#define SHMEM_SYNC_SIZE           1
#define SHMEM_REDUCE_MIN_WRKDATA_SIZE 1
#define _SHMEM_SYNC_VALUE          SHMEM_SYNC_VALUE
#define _SHMEM_BCAST_SYNC_SIZE     SHMEM_BCAST_SYNC_SIZE
#define _SHMEM_COLLECT_SYNC_SIZE   SHMEM_COLLECT_SYNC_SIZE
#define _SHMEM_REDUCE_SYNC_SIZE    SHMEM_REDUCE_SYNC_SIZE
#define _SHMEM_BARRIER_SYNC_SIZE   SHMEM_BARRIER_SYNC_SIZE
#define _SHMEM_REDUCE_MIN_WRKDATA_SIZE SHMEM_REDUCE_MIN_WRKDATA_SIZE

typedef struct weft_shmem_team *shmem_team_t;
typedef struct weft_shmem_ctx *shmem_ctx_t;
typedef struct {
    int num_contexts;
} shmem_team_config_t;
typedef struct {
    long options;
} shmem_ctx_config_t;
#define SHMEM_TEAM_NUM_CONTEXTS 1L
#define SHMEM_CTX_SERIALIZED    1L
#define SHMEM_CTX_PRIVATE       2L
#define SHMEM_CTX_NOSTORE       4L

extern shmem_team_t SHMEM_TEAM_WORLD;
extern shmem_team_t SHMEM_TEAM_SHARED;
#define SHMEM_TEAM_INVALID ((shmem_team_t)0)
extern shmem_ctx_t SHMEM_CTX_DEFAULT;
#define SHMEM_CTX_INVALID ((shmem_ctx_t)0)

/* --- type tables (OpenSHMEM 1.5 tables 5, 6, 7, 8, 9, 10) ---------------------- */
#define WEFT_SHMEM_RMA_TYPES(X)                                                                    \
    X(float, float) X(double, double) X(longdouble, long double) X(char, char)                    \
    X(schar, signed char) X(short, short) X(int, int) X(long, long) X(longlong, long long)        \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                       \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t)    \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                     \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t) X(ptrdiff, ptrdiff_t)
#define WEFT_SHMEM_SIZES(X) X(8, 1) X(16, 2) X(32, 4) X(64, 8) X(128, 16)
/* Standard AMO types (inc, fetch_inc, add, fetch_add, compare_swap). */
#define WEFT_SHMEM_AMO_STD_TYPES(X)                                                                \
    X(int, int) X(long, long) X(longlong, long long) X(uint, unsigned int)                        \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int32, int32_t)                    \
    X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)                     \
    X(ptrdiff, ptrdiff_t)
/* Extended AMO types (fetch, set, swap): the standard ones plus float, double. */
#define WEFT_SHMEM_AMO_EXT_TYPES(X) WEFT_SHMEM_AMO_STD_TYPES(X) X(float, float) X(double, double)
/* Bitwise AMO types (and, or, xor). */
#define WEFT_SHMEM_AMO_BIT_TYPES(X)                                                                \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)                \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)
/* Point-to-point synchronisation types. */
#define WEFT_SHMEM_P2P_TYPES(X)                                                                    \
    X(short, short) X(int, int) X(long, long) X(longlong, long long) X(ushort, unsigned short)    \
    X(uint, unsigned int) X(ulong, unsigned long) X(ulonglong, unsigned long long)                \
    X(int32, int32_t) X(int64, int64_t) X(uint32, uint32_t) X(uint64, uint64_t)                   \
    X(size, size_t) X(ptrdiff, ptrdiff_t)
/* Reduction types: bitwise (and/or/xor), ordered (max/min), arithmetic (sum/prod). */
#define WEFT_SHMEM_RED_BIT_TYPES(X)                                                                \
    X(uchar, unsigned char) X(ushort, unsigned short) X(uint, unsigned int)                       \
    X(ulong, unsigned long) X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t)    \
    X(int32, int32_t) X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t)                     \
    X(uint32, uint32_t) X(uint64, uint64_t) X(size, size_t)
#define WEFT_SHMEM_RED_CMP_TYPES(X)                                                                \
    X(char, char) X(schar, signed char) X(short, short) X(int, int) X(long, long)                 \
    X(longlong, long long) X(ptrdiff, ptrdiff_t) X(uchar, unsigned char)                          \
    X(ushort, unsigned short) X(uint, unsigned int) X(ulong, unsigned long)                       \
    X(ulonglong, unsigned long long) X(int8, int8_t) X(int16, int16_t) X(int32, int32_t)          \
    X(int64, int64_t) X(uint8, uint8_t) X(uint16, uint16_t) X(uint32, uint32_t)                   \
    X(uint64, uint64_t) X(size, size_t) X(float, float) X(double, double)                         \
    X(longdouble, long double)
/* sum/prod also take the complex types (C only: C++ has no _Complex). */
#ifdef __cplusplus
#define WEFT_SHMEM_RED_ARITH_TYPES(X) WEFT_SHMEM_RED_CMP_TYPES(X)
#define WEFT_SHMEM_TOALL_COMPLEX(X)
#else
#define WEFT_SHMEM_RED_ARITH_TYPES(X)                                                              \
    WEFT_SHMEM_RED_CMP_TYPES(X) X(complexd, double _Complex) X(complexf, float _Complex)
#define WEFT_SHMEM_TOALL_COMPLEX(X) X(complexf, float _Complex) X(complexd, double _Complex)
#endif
/* Deprecated active-set reductions (shmem_TYPENAME_OP_to_all). */
#define WEFT_SHMEM_TOALL_BIT_TYPES(X) X(short, short) X(int, int) X(long, long) X(longlong, long long)
#define WEFT_SHMEM_TOALL_CMP_TYPES(X)                                                              \
    WEFT_SHMEM_TOALL_BIT_TYPES(X) X(float, float) X(double, double) X(longdouble, long double)
#define WEFT_SHMEM_TOALL_ARITH_TYPES(X) WEFT_SHMEM_TOALL_CMP_TYPES(X) WEFT_SHMEM_TOALL_COMPLEX(X)
#define WEFT_SHMEM_RED_BIT_OPS(X)   X(and) X(or) X(xor)
#define WEFT_SHMEM_RED_CMP_OPS(X)   X(max) X(min)
#define WEFT_SHMEM_RED_ARITH_OPS(X) X(sum) X(prod)

/* --- library setup, query ---------------------------------------------------- */
void shmem_init(void);
int shmem_init_thread(int requested, int *provided);
void shmem_query_thread(int *provided);
void shmem_finalize(void);
void shmem_global_exit(int status);
int shmem_my_pe(void);
int shmem_n_pes(void);
int shmem_pe_accessible(int pe);
int shmem_addr_accessible(const void *addr, int pe);
void *shmem_ptr(const void *dest, int pe);
void shmem_info_get_version(int *major, int *minor);
void shmem_info_get_name(char *name);
void shmem_pcontrol(int level, ...);
/* Deprecated names. */
void start_pes(int npes);
int _my_pe(void);
int _num_pes(void);

/* --- symmetric heap ---------------------------------------------------------- */
void *shmem_malloc(size_t size);
void *shmem_malloc_with_hints(size_t size, long hints);
void *shmem_calloc(size_t count, size_t size);
void *shmem_align(size_t alignment, size_t size);
void *shmem_realloc(void *ptr, size_t size);
void shmem_free(void *ptr);

/* --- RMA --------------------------------------------------------------------- */
/* Every RMA and atomic call also has a shmem_ctx_ form taking the context
 * first; WEFT_SHMEM_CTXDECL declares both. */
#define WEFT_SHMEM_CTXDECL(RET, NAME, ...)                                                         \
    RET shmem_##NAME(__VA_ARGS__);                                                                \
    RET shmem_ctx_##NAME(shmem_ctx_t ctx, __VA_ARGS__);
#define WEFT_SHMEM_DECL_RMA(N, T)                                                                  \
    WEFT_SHMEM_CTXDECL(void, N##_put, T *dest, const T *src, size_t nelems, int pe)               \
    WEFT_SHMEM_CTXDECL(void, N##_get, T *dest, const T *src, size_t nelems, int pe)               \
    WEFT_SHMEM_CTXDECL(void, N##_put_nbi, T *dest, const T *src, size_t nelems, int pe)           \
    WEFT_SHMEM_CTXDECL(void, N##_get_nbi, T *dest, const T *src, size_t nelems, int pe)           \
    WEFT_SHMEM_CTXDECL(void, N##_p, T *dest, T value, int pe)                                     \
    WEFT_SHMEM_CTXDECL(T, N##_g, const T *src, int pe)                                            \
    WEFT_SHMEM_CTXDECL(void, N##_iput, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,       \
                       size_t nelems, int pe)                                                     \
    WEFT_SHMEM_CTXDECL(void, N##_iget, T *dest, const T *src, ptrdiff_t dst, ptrdiff_t sst,       \
                       size_t nelems, int pe)                                                     \
    WEFT_SHMEM_CTXDECL(void, N##_put_signal, T *dest, const T *src, size_t nelems,                \
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)                   \
    WEFT_SHMEM_CTXDECL(void, N##_put_signal_nbi, T *dest, const T *src, size_t nelems,            \
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
WEFT_SHMEM_RMA_TYPES(WEFT_SHMEM_DECL_RMA)
#define WEFT_SHMEM_DECL_SIZED(B, S)                                                                \
    WEFT_SHMEM_CTXDECL(void, put##B, void *dest, const void *src, size_t nelems, int pe)          \
    WEFT_SHMEM_CTXDECL(void, get##B, void *dest, const void *src, size_t nelems, int pe)          \
    WEFT_SHMEM_CTXDECL(void, put##B##_nbi, void *dest, const void *src, size_t nelems, int pe)    \
    WEFT_SHMEM_CTXDECL(void, get##B##_nbi, void *dest, const void *src, size_t nelems, int pe)    \
    WEFT_SHMEM_CTXDECL(void, iput##B, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,  \
                       size_t nelems, int pe)                                                     \
    WEFT_SHMEM_CTXDECL(void, iget##B, void *dest, const void *src, ptrdiff_t dst, ptrdiff_t sst,  \
                       size_t nelems, int pe)                                                     \
    WEFT_SHMEM_CTXDECL(void, put##B##_signal, void *dest, const void *src, size_t nelems,         \
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)                   \
    WEFT_SHMEM_CTXDECL(void, put##B##_signal_nbi, void *dest, const void *src, size_t nelems,     \
                       uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
WEFT_SHMEM_SIZES(WEFT_SHMEM_DECL_SIZED)
WEFT_SHMEM_CTXDECL(void, putmem, void *dest, const void *src, size_t nelems, int pe)
WEFT_SHMEM_CTXDECL(void, getmem, void *dest, const void *src, size_t nelems, int pe)
WEFT_SHMEM_CTXDECL(void, putmem_nbi, void *dest, const void *src, size_t nelems, int pe)
WEFT_SHMEM_CTXDECL(void, getmem_nbi, void *dest, const void *src, size_t nelems, int pe)
WEFT_SHMEM_CTXDECL(void, putmem_signal, void *dest, const void *src, size_t nelems,
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
WEFT_SHMEM_CTXDECL(void, putmem_signal_nbi, void *dest, const void *src, size_t nelems,
                   uint64_t *sig_addr, uint64_t signal, int sig_op, int pe)
uint64_t shmem_signal_fetch(const uint64_t *sig_addr);

/* --- atomics ----------------------------------------------------------------- */
#define WEFT_SHMEM_DECL_AMO_EXT(N, T)                                                              \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_fetch, const T *source, int pe)                              \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_set, T *dest, T value, int pe)                            \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_swap, T *dest, T value, int pe)                              \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_fetch_nbi, T *fetch, const T *source, int pe)             \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_swap_nbi, T *fetch, T *dest, T value, int pe)
WEFT_SHMEM_AMO_EXT_TYPES(WEFT_SHMEM_DECL_AMO_EXT)
#define WEFT_SHMEM_DECL_AMO_STD(N, T)                                                              \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_compare_swap, T *dest, T cond, T value, int pe)              \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_fetch_inc, T *dest, int pe)                                  \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_inc, T *dest, int pe)                                     \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_fetch_add, T *dest, T value, int pe)                         \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_add, T *dest, T value, int pe)                            \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_compare_swap_nbi, T *fetch, T *dest, T cond, T value,     \
                       int pe)                                                                    \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_fetch_inc_nbi, T *fetch, T *dest, int pe)                 \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_fetch_add_nbi, T *fetch, T *dest, T value, int pe)
WEFT_SHMEM_AMO_STD_TYPES(WEFT_SHMEM_DECL_AMO_STD)
#define WEFT_SHMEM_DECL_AMO_BIT_OP(N, T, OP)                                                       \
    WEFT_SHMEM_CTXDECL(T, N##_atomic_fetch_##OP, T *dest, T value, int pe)                        \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_##OP, T *dest, T value, int pe)                           \
    WEFT_SHMEM_CTXDECL(void, N##_atomic_fetch_##OP##_nbi, T *fetch, T *dest, T value, int pe)
#define WEFT_SHMEM_DECL_AMO_BIT(N, T)                                                              \
    WEFT_SHMEM_DECL_AMO_BIT_OP(N, T, and)                                                         \
    WEFT_SHMEM_DECL_AMO_BIT_OP(N, T, or) WEFT_SHMEM_DECL_AMO_BIT_OP(N, T, xor)
WEFT_SHMEM_AMO_BIT_TYPES(WEFT_SHMEM_DECL_AMO_BIT)

/* --- point-to-point synchronisation -------------------------------------------- */
#define WEFT_SHMEM_DECL_P2P(N, T)                                                                  \
    void shmem_##N##_wait_until(T *ivar, int cmp, T cmp_value);                                   \
    void shmem_##N##_wait_until_all(T *ivars, size_t nelems, const int *status, int cmp,          \
                                    T cmp_value);                                                 \
    size_t shmem_##N##_wait_until_any(T *ivars, size_t nelems, const int *status, int cmp,        \
                                      T cmp_value);                                               \
    size_t shmem_##N##_wait_until_some(T *ivars, size_t nelems, size_t *indices,                  \
                                       const int *status, int cmp, T cmp_value);                  \
    void shmem_##N##_wait_until_all_vector(T *ivars, size_t nelems, const int *status, int cmp,   \
                                           T *cmp_values);                                        \
    size_t shmem_##N##_wait_until_any_vector(T *ivars, size_t nelems, const int *status,          \
                                             int cmp, T *cmp_values);                             \
    size_t shmem_##N##_wait_until_some_vector(T *ivars, size_t nelems, size_t *indices,           \
                                              const int *status, int cmp, T *cmp_values);         \
    int shmem_##N##_test(T *ivar, int cmp, T cmp_value);                                          \
    int shmem_##N##_test_all(T *ivars, size_t nelems, const int *status, int cmp, T cmp_value);   \
    size_t shmem_##N##_test_any(T *ivars, size_t nelems, const int *status, int cmp,              \
                                T cmp_value);                                                     \
    size_t shmem_##N##_test_some(T *ivars, size_t nelems, size_t *indices, const int *status,     \
                                 int cmp, T cmp_value);                                           \
    int shmem_##N##_test_all_vector(T *ivars, size_t nelems, const int *status, int cmp,          \
                                    T *cmp_values);                                               \
    size_t shmem_##N##_test_any_vector(T *ivars, size_t nelems, const int *status, int cmp,       \
                                       T *cmp_values);                                            \
    size_t shmem_##N##_test_some_vector(T *ivars, size_t nelems, size_t *indices,                 \
                                        const int *status, int cmp, T *cmp_values);
WEFT_SHMEM_P2P_TYPES(WEFT_SHMEM_DECL_P2P)
uint64_t shmem_signal_wait_until(uint64_t *sig_addr, int cmp, uint64_t cmp_value);

/* --- ordering, barriers, locks -------------------------------------------------- */
void shmem_barrier_all(void);
void shmem_sync_all(void);
void shmem_quiet(void);
void shmem_fence(void);
void shmem_ctx_quiet(shmem_ctx_t ctx);
void shmem_ctx_fence(shmem_ctx_t ctx);
void shmem_set_lock(long *lock);
void shmem_clear_lock(long *lock);
int shmem_test_lock(long *lock);

/* --- teams and team collectives -------------------------------------------------- */
int shmem_team_my_pe(shmem_team_t team);
int shmem_team_n_pes(shmem_team_t team);
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config);
int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team);
int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask,
                             shmem_team_t *new_team);
int shmem_team_split_2d(shmem_team_t parent_team, int xrange,
                        const shmem_team_config_t *xaxis_config, long xaxis_mask,
                        shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team);
void shmem_team_destroy(shmem_team_t team);
int shmem_team_sync(shmem_team_t team);
int shmem_ctx_create(long options, shmem_ctx_t *ctx);
int shmem_team_create_ctx(shmem_team_t team, long options, shmem_ctx_t *ctx);
void shmem_ctx_destroy(shmem_ctx_t ctx);
int shmem_ctx_get_team(shmem_ctx_t ctx, shmem_team_t *team);

#define WEFT_SHMEM_DECL_COLL(N, T)                                                                 \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,         \
                              int PE_root);                                                       \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems);          \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems);         \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems);         \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,         \
                              ptrdiff_t sst, size_t nelems);
WEFT_SHMEM_RMA_TYPES(WEFT_SHMEM_DECL_COLL)
int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems,
                       int PE_root);
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems);
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                       ptrdiff_t sst, size_t nelems);
#define WEFT_SHMEM_DECL_RED_OP(OP, N, T)                                                           \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce);
#define WEFT_SHMEM_DECL_RED_BIT(N, T)   WEFT_SHMEM_DECL_RED_OP(and, N, T) WEFT_SHMEM_DECL_RED_OP(or, N, T) WEFT_SHMEM_DECL_RED_OP(xor, N, T)
#define WEFT_SHMEM_DECL_RED_CMP(N, T)   WEFT_SHMEM_DECL_RED_OP(max, N, T) WEFT_SHMEM_DECL_RED_OP(min, N, T)
#define WEFT_SHMEM_DECL_RED_ARITH(N, T) WEFT_SHMEM_DECL_RED_OP(sum, N, T) WEFT_SHMEM_DECL_RED_OP(prod, N, T)
WEFT_SHMEM_RED_BIT_TYPES(WEFT_SHMEM_DECL_RED_BIT)
WEFT_SHMEM_RED_CMP_TYPES(WEFT_SHMEM_DECL_RED_CMP)
WEFT_SHMEM_RED_ARITH_TYPES(WEFT_SHMEM_DECL_RED_ARITH)

/* --- deprecated active-set collectives (PE_start, logPE_stride, PE_size).
 * pSync and pWrk are accepted and not used: Weft synchronises through the
 * runtime, so their contents are never changed. -------------------------- */
void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync);
void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync);
#define WEFT_SHMEM_DECL_ACTIVE(B)                                                                  \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root,           \
                            int PE_start, int logPE_stride, int PE_size, long *pSync);            \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start,            \
                          int logPE_stride, int PE_size, long *pSync);                            \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start,           \
                           int logPE_stride, int PE_size, long *pSync);                           \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start,           \
                           int logPE_stride, int PE_size, long *pSync);                           \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,         \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size,           \
                            long *pSync);
WEFT_SHMEM_DECL_ACTIVE(32)
WEFT_SHMEM_DECL_ACTIVE(64)
#define WEFT_SHMEM_DECL_TOALL_OP(OP, N, T)                                                         \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,           \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync);
#define WEFT_SHMEM_DECL_TOALL_BIT(N, T)                                                            \
    WEFT_SHMEM_DECL_TOALL_OP(and, N, T) WEFT_SHMEM_DECL_TOALL_OP(or, N, T) WEFT_SHMEM_DECL_TOALL_OP(xor, N, T)
#define WEFT_SHMEM_DECL_TOALL_CMP(N, T) WEFT_SHMEM_DECL_TOALL_OP(max, N, T) WEFT_SHMEM_DECL_TOALL_OP(min, N, T)
#define WEFT_SHMEM_DECL_TOALL_ARITH(N, T)                                                          \
    WEFT_SHMEM_DECL_TOALL_OP(sum, N, T) WEFT_SHMEM_DECL_TOALL_OP(prod, N, T)
WEFT_SHMEM_TOALL_BIT_TYPES(WEFT_SHMEM_DECL_TOALL_BIT)
WEFT_SHMEM_TOALL_CMP_TYPES(WEFT_SHMEM_DECL_TOALL_CMP)
WEFT_SHMEM_TOALL_ARITH_TYPES(WEFT_SHMEM_DECL_TOALL_ARITH)

/* --- C11 type-generic interfaces (OpenSHMEM 1.5 section 9) -----------------------
 * shmem_put(dest, source, nelems, pe) and shmem_put(ctx, dest, ...) select the
 * typed routine from the type of dest (or of the first pointer argument). The
 * fixed-width and size types are aliases of the standard C types, so the
 * selection lists the C types only. An unsupported type does not compile. */
#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L && !defined(__cplusplus)
void weft_shmem_generic_unsupported_type(void); /* never defined: selecting it fails to compile */
#define WEFT_SHMEM_G_NONE default: weft_shmem_generic_unsupported_type
#define WEFT_SHMEM_G_2ND(a, b, ...) b
#define WEFT_SHMEM_G_RMA(X, OP, PRE)                                                               \
    X(float, float, OP, PRE) X(double, double, OP, PRE) X(longdouble, long double, OP, PRE)       \
    X(char, char, OP, PRE) X(schar, signed char, OP, PRE) X(short, short, OP, PRE)                \
    X(int, int, OP, PRE) X(long, long, OP, PRE) X(longlong, long long, OP, PRE)                   \
    X(uchar, unsigned char, OP, PRE) X(ushort, unsigned short, OP, PRE)                           \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE)
#define WEFT_SHMEM_G_AMO_STD(X, OP, PRE)                                                           \
    X(int, int, OP, PRE) X(long, long, OP, PRE) X(longlong, long long, OP, PRE)                   \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE)
#define WEFT_SHMEM_G_AMO_EXT(X, OP, PRE)                                                           \
    WEFT_SHMEM_G_AMO_STD(X, OP, PRE) X(float, float, OP, PRE) X(double, double, OP, PRE)
#define WEFT_SHMEM_G_AMO_BIT(X, OP, PRE)                                                           \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE) X(int32, int, OP, PRE) X(int64, long, OP, PRE)
#define WEFT_SHMEM_G_P2P(X, OP, PRE)                                                               \
    X(short, short, OP, PRE) X(int, int, OP, PRE) X(long, long, OP, PRE)                          \
    X(longlong, long long, OP, PRE) X(ushort, unsigned short, OP, PRE)                            \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE)
#define WEFT_SHMEM_G_RED_BIT(X, OP, PRE)                                                           \
    X(uchar, unsigned char, OP, PRE) X(ushort, unsigned short, OP, PRE)                           \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE) X(int8, signed char, OP, PRE)                       \
    X(int16, short, OP, PRE) X(int32, int, OP, PRE) X(int64, long, OP, PRE)
#define WEFT_SHMEM_G_RED_CMP(X, OP, PRE)                                                           \
    X(char, char, OP, PRE) X(schar, signed char, OP, PRE) X(short, short, OP, PRE)                \
    X(int, int, OP, PRE) X(long, long, OP, PRE) X(longlong, long long, OP, PRE)                   \
    X(uchar, unsigned char, OP, PRE) X(ushort, unsigned short, OP, PRE)                           \
    X(uint, unsigned int, OP, PRE) X(ulong, unsigned long, OP, PRE)                               \
    X(ulonglong, unsigned long long, OP, PRE) X(float, float, OP, PRE)                            \
    X(double, double, OP, PRE) X(longdouble, long double, OP, PRE)
#define WEFT_SHMEM_G_RED_ARITH(X, OP, PRE)                                                         \
    WEFT_SHMEM_G_RED_CMP(X, OP, PRE) X(complexd, double _Complex, OP, PRE)                        \
    X(complexf, float _Complex, OP, PRE)
/* one association: "T *: shmem_<PRE>N_OP," (const T * too, for source arguments) */
#define WEFT_SHMEM_G_A(N, T, OP, PRE) T *: shmem_##PRE##N##_##OP,
#define WEFT_SHMEM_G_AC(N, T, OP, PRE) T *: shmem_##PRE##N##_##OP, const T *: shmem_##PRE##N##_##OP,
#define WEFT_SHMEM_G_SEL(TABLE, A, OP, PRE, p) _Generic((p), TABLE(A, OP, PRE) WEFT_SHMEM_G_NONE)
/* RMA and atomics: with or without a leading context. */
#define WEFT_SHMEM_G_FIRST(a, ...) a
#define WEFT_SHMEM_G_CTXCALL(TABLE, A, OP, ...)                                                    \
    _Generic((WEFT_SHMEM_G_FIRST(__VA_ARGS__, 0)),                                                \
             shmem_ctx_t: WEFT_SHMEM_G_SEL(TABLE, A, OP, ctx_, WEFT_SHMEM_G_2ND(__VA_ARGS__, 0)),  \
             default: WEFT_SHMEM_G_SEL(TABLE, A, OP, , WEFT_SHMEM_G_FIRST(__VA_ARGS__, 0)))(__VA_ARGS__)
#define shmem_put(...)            WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, put, __VA_ARGS__)
#define shmem_get(...)            WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, get, __VA_ARGS__)
#define shmem_put_nbi(...)        WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, put_nbi, __VA_ARGS__)
#define shmem_get_nbi(...)        WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, get_nbi, __VA_ARGS__)
#define shmem_p(...)              WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, p, __VA_ARGS__)
#define shmem_g(...)              WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_AC, g, __VA_ARGS__)
#define shmem_iput(...)           WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, iput, __VA_ARGS__)
#define shmem_iget(...)           WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, iget, __VA_ARGS__)
#define shmem_put_signal(...)     WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, put_signal, __VA_ARGS__)
#define shmem_put_signal_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_RMA, WEFT_SHMEM_G_A, put_signal_nbi, __VA_ARGS__)
#define shmem_atomic_fetch(...)   WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_EXT, WEFT_SHMEM_G_AC, atomic_fetch, __VA_ARGS__)
#define shmem_atomic_set(...)     WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_EXT, WEFT_SHMEM_G_A, atomic_set, __VA_ARGS__)
#define shmem_atomic_swap(...)    WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_EXT, WEFT_SHMEM_G_A, atomic_swap, __VA_ARGS__)
#define shmem_atomic_fetch_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_EXT, WEFT_SHMEM_G_A, atomic_fetch_nbi, __VA_ARGS__)
#define shmem_atomic_swap_nbi(...)  WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_EXT, WEFT_SHMEM_G_A, atomic_swap_nbi, __VA_ARGS__)
#define shmem_atomic_compare_swap(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_compare_swap, __VA_ARGS__)
#define shmem_atomic_fetch_inc(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_fetch_inc, __VA_ARGS__)
#define shmem_atomic_inc(...)       WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_inc, __VA_ARGS__)
#define shmem_atomic_fetch_add(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_fetch_add, __VA_ARGS__)
#define shmem_atomic_add(...)       WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_add, __VA_ARGS__)
#define shmem_atomic_compare_swap_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_compare_swap_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_inc_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_fetch_inc_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_add_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_STD, WEFT_SHMEM_G_A, atomic_fetch_add_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_and(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_and, __VA_ARGS__)
#define shmem_atomic_and(...)       WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_and, __VA_ARGS__)
#define shmem_atomic_fetch_or(...)  WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_or, __VA_ARGS__)
#define shmem_atomic_or(...)        WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_or, __VA_ARGS__)
#define shmem_atomic_fetch_xor(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_xor, __VA_ARGS__)
#define shmem_atomic_xor(...)       WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_xor, __VA_ARGS__)
#define shmem_atomic_fetch_and_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_and_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_or_nbi(...)  WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_or_nbi, __VA_ARGS__)
#define shmem_atomic_fetch_xor_nbi(...) WEFT_SHMEM_G_CTXCALL(WEFT_SHMEM_G_AMO_BIT, WEFT_SHMEM_G_A, atomic_fetch_xor_nbi, __VA_ARGS__)
/* point-to-point synchronisation: no context */
#define WEFT_SHMEM_G_P2PCALL(OP, ivars, ...) WEFT_SHMEM_G_SEL(WEFT_SHMEM_G_P2P, WEFT_SHMEM_G_A, OP, , ivars)(ivars, __VA_ARGS__)
#define shmem_wait_until(ivar, ...)         WEFT_SHMEM_G_P2PCALL(wait_until, ivar, __VA_ARGS__)
#define shmem_wait_until_all(ivars, ...)    WEFT_SHMEM_G_P2PCALL(wait_until_all, ivars, __VA_ARGS__)
#define shmem_wait_until_any(ivars, ...)    WEFT_SHMEM_G_P2PCALL(wait_until_any, ivars, __VA_ARGS__)
#define shmem_wait_until_some(ivars, ...)   WEFT_SHMEM_G_P2PCALL(wait_until_some, ivars, __VA_ARGS__)
#define shmem_wait_until_all_vector(ivars, ...)  WEFT_SHMEM_G_P2PCALL(wait_until_all_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_any_vector(ivars, ...)  WEFT_SHMEM_G_P2PCALL(wait_until_any_vector, ivars, __VA_ARGS__)
#define shmem_wait_until_some_vector(ivars, ...) WEFT_SHMEM_G_P2PCALL(wait_until_some_vector, ivars, __VA_ARGS__)
#define shmem_test(ivar, ...)               WEFT_SHMEM_G_P2PCALL(test, ivar, __VA_ARGS__)
#define shmem_test_all(ivars, ...)          WEFT_SHMEM_G_P2PCALL(test_all, ivars, __VA_ARGS__)
#define shmem_test_any(ivars, ...)          WEFT_SHMEM_G_P2PCALL(test_any, ivars, __VA_ARGS__)
#define shmem_test_some(ivars, ...)         WEFT_SHMEM_G_P2PCALL(test_some, ivars, __VA_ARGS__)
#define shmem_test_all_vector(ivars, ...)   WEFT_SHMEM_G_P2PCALL(test_all_vector, ivars, __VA_ARGS__)
#define shmem_test_any_vector(ivars, ...)   WEFT_SHMEM_G_P2PCALL(test_any_vector, ivars, __VA_ARGS__)
#define shmem_test_some_vector(ivars, ...)  WEFT_SHMEM_G_P2PCALL(test_some_vector, ivars, __VA_ARGS__)
/* team collectives and reductions: selected by dest (the second argument) */
#define WEFT_SHMEM_G_TEAMCALL(TABLE, OP, team, dest, ...)                                          \
    WEFT_SHMEM_G_SEL(TABLE, WEFT_SHMEM_G_A, OP, , dest)(team, dest, __VA_ARGS__)
#define shmem_broadcast(team, dest, ...) WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RMA, broadcast, team, dest, __VA_ARGS__)
#define shmem_collect(team, dest, ...)   WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RMA, collect, team, dest, __VA_ARGS__)
#define shmem_fcollect(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RMA, fcollect, team, dest, __VA_ARGS__)
#define shmem_alltoall(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RMA, alltoall, team, dest, __VA_ARGS__)
#define shmem_alltoalls(team, dest, ...) WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RMA, alltoalls, team, dest, __VA_ARGS__)
#define shmem_and_reduce(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_BIT, and_reduce, team, dest, __VA_ARGS__)
#define shmem_or_reduce(team, dest, ...)   WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_BIT, or_reduce, team, dest, __VA_ARGS__)
#define shmem_xor_reduce(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_BIT, xor_reduce, team, dest, __VA_ARGS__)
#define shmem_max_reduce(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_CMP, max_reduce, team, dest, __VA_ARGS__)
#define shmem_min_reduce(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_CMP, min_reduce, team, dest, __VA_ARGS__)
#define shmem_sum_reduce(team, dest, ...)  WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_ARITH, sum_reduce, team, dest, __VA_ARGS__)
#define shmem_prod_reduce(team, dest, ...) WEFT_SHMEM_G_TEAMCALL(WEFT_SHMEM_G_RED_ARITH, prod_reduce, team, dest, __VA_ARGS__)
#endif

#ifdef __cplusplus
}
#endif
#endif /* WEFT_SHMEM_H */
