/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Op objects, the builtin kernel table (op x predefined type), user ops
 * and MPI_Reduce_local.
 *
 * Kernels are generated per C type by macros into plain loops over restrict
 * pointers, which the compiler vectorizes (sum/prod/min/max/bitwise on the
 * integer and floating types). The table kernels[op][type] is filled once by
 * a constructor; a NULL entry means "op not defined for that type" and is
 * reported as MPI_ERR_OP. Pair types (MINLOC/MAXLOC) have their own kernels
 * parameterised by the element stride and the offset of the index, so one
 * kernel serves both the C struct layout of the predefined pair types and
 * the packed layout of derived types built from them.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <complex.h>

#include "api_impl.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/op.h"

typedef weft_op_kernel_t kernel_fn_t;
typedef void (*pair_fn_t)(const void *in, void *inout, MPI_Count n, MPI_Aint stride,
                          MPI_Aint ioff);

#define N_OPS   0x20
#define N_TYPES 0x100
#define TIDX(_h) ((unsigned)(uintptr_t)(_h) - 0x200u)

static kernel_fn_t kernels[N_OPS][N_TYPES];
static pair_fn_t   pair_kernels[2][N_TYPES]; /* [0] MINLOC, [1] MAXLOC */

/* ---- kernel generators ------------------------------------------------- */

/* Each kernel also gets AVX2 and AVX-512 clones, one picked at load time
 * by the CPU (an ifunc): the baseline x86-64 build is SSE2 only, 4 ints a
 * step, and an accumulate or reduction of a few KiB that stays in cache is
 * bound by that (np 2 accumulate 4 KiB, docs/performance.md "Reduction
 * kernels by CPU"). Element by element, so results do not change. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
/* (not under ThreadSanitizer: the instrumented ifunc resolvers run before
 * its runtime is up and crash at load) */
#define KERNEL_CLONES __attribute__((target_clones("default", "avx2", "avx512f")))
#else
#define KERNEL_CLONES
#endif

#define KERNEL(_name, _T, _expr)                                                          \
    KERNEL_CLONES                                                                         \
    static void _name(const void *restrict in_, void *restrict io_, MPI_Count n)           \
    {                                                                                     \
        const _T *restrict a = (const _T *)in_;                                           \
        _T *restrict       b = (_T *)io_;                                                 \
        for (MPI_Count i = 0; i < n; i++) {                                               \
            b[i] = (_expr);                                                               \
        }                                                                                 \
    }

#define ARITH_KERNELS(_s, _T)                                                             \
    KERNEL(sum_##_s, _T, a[i] + b[i])                                                     \
    KERNEL(prod_##_s, _T, a[i] * b[i])                                                    \
    KERNEL(min_##_s, _T, a[i] < b[i] ? a[i] : b[i])                                       \
    KERNEL(max_##_s, _T, a[i] > b[i] ? a[i] : b[i])

#define LOGIC_KERNELS(_s, _T)                                                             \
    KERNEL(land_##_s, _T, (_T)((a[i] != 0) && (b[i] != 0)))                               \
    KERNEL(lor_##_s, _T, (_T)((a[i] != 0) || (b[i] != 0)))                                \
    KERNEL(lxor_##_s, _T, (_T)((a[i] != 0) != (b[i] != 0)))

#define BIT_KERNELS(_s, _T)                                                               \
    KERNEL(band_##_s, _T, a[i] & b[i])                                                    \
    KERNEL(bor_##_s, _T, a[i] | b[i])                                                     \
    KERNEL(bxor_##_s, _T, a[i] ^ b[i])

#define CPLX_KERNELS(_s, _T)                                                              \
    KERNEL(sum_##_s, _T, a[i] + b[i])                                                     \
    KERNEL(prod_##_s, _T, a[i] * b[i])

/* Integer sums and products wrap (two's complement) instead of overflowing:
 * they are computed in an unsigned type _W at least as wide as _T and at
 * least as wide as unsigned int (so small types are not promoted to a
 * signed int), then narrowed. Overflowing a signed int in C is undefined
 * behaviour, and MPI_SUM of large ints must not be. */
#define INT_ARITH_KERNELS(_s, _T, _W)                                                     \
    KERNEL(sum_##_s, _T, (_T)((_W)a[i] + (_W)b[i]))                                       \
    KERNEL(prod_##_s, _T, (_T)((_W)a[i] * (_W)b[i]))                                      \
    KERNEL(min_##_s, _T, a[i] < b[i] ? a[i] : b[i])                                       \
    KERNEL(max_##_s, _T, a[i] > b[i] ? a[i] : b[i])

#define INT_KERNELS(_s, _T, _W) INT_ARITH_KERNELS(_s, _T, _W) LOGIC_KERNELS(_s, _T) BIT_KERNELS(_s, _T)

INT_KERNELS(i8, int8_t, unsigned)
INT_KERNELS(u8, uint8_t, unsigned)
INT_KERNELS(i16, int16_t, unsigned)
INT_KERNELS(u16, uint16_t, unsigned)
INT_KERNELS(i32, int32_t, uint32_t)
INT_KERNELS(u32, uint32_t, uint32_t)
INT_KERNELS(i64, int64_t, uint64_t)
INT_KERNELS(u64, uint64_t, uint64_t)
INT_KERNELS(chr, char, unsigned)
#ifdef __SIZEOF_INT128__
INT_KERNELS(i128, __int128, unsigned __int128)
#endif
LOGIC_KERNELS(bool, _Bool)
ARITH_KERNELS(flt, float)
ARITH_KERNELS(dbl, double)
ARITH_KERNELS(ldbl, long double)
#ifdef __SIZEOF_FLOAT128__
ARITH_KERNELS(f128, __float128)
#endif
CPLX_KERNELS(cflt, float _Complex)
CPLX_KERNELS(cdbl, double _Complex)
CPLX_KERNELS(cldbl, long double _Complex)

/* MINLOC/MAXLOC on pairs (value, int-like index) at stride bytes, index at
 * ioff: the in pair replaces the inout pair when its value is better (_cmp)
 * or equal with a lower index. memcpy loads keep packed (unaligned) layouts
 * legal. */
#define PAIR_KERNEL(_name, _V, _I, _cmp)                                                  \
    static void _name(const void *in_, void *io_, MPI_Count n, MPI_Aint stride,            \
                      MPI_Aint ioff)                                                      \
    {                                                                                     \
        const char *a = (const char *)in_;                                                \
        char       *b = (char *)io_;                                                      \
        for (MPI_Count k = 0; k < n; k++, a += stride, b += stride) {                     \
            _V va, vb;                                                                    \
            _I ia, ib;                                                                    \
            memcpy(&va, a, sizeof(_V));                                                   \
            memcpy(&vb, b, sizeof(_V));                                                   \
            memcpy(&ia, a + ioff, sizeof(_I));                                            \
            memcpy(&ib, b + ioff, sizeof(_I));                                            \
            if (va _cmp vb || (va == vb && ia < ib)) {                                    \
                memcpy(b, &va, sizeof(_V));                                               \
                memcpy(b + ioff, &ia, sizeof(_I));                                        \
            }                                                                             \
        }                                                                                 \
    }

#define PAIR_KERNELS(_s, _V, _I)                                                          \
    PAIR_KERNEL(minloc_##_s, _V, _I, <)                                                   \
    PAIR_KERNEL(maxloc_##_s, _V, _I, >)

PAIR_KERNELS(float_int, float, int)
PAIR_KERNELS(double_int, double, int)
PAIR_KERNELS(long_int, long, int)
PAIR_KERNELS(2int, int, int)
PAIR_KERNELS(short_int, short, int)
PAIR_KERNELS(ldouble_int, long double, int)
PAIR_KERNELS(2real, float, float)
PAIR_KERNELS(2dp, double, double)

/* ---- the table --------------------------------------------------------- */

#define SET(_op, _type, _fn) kernels[WEFT_OP_##_op][TIDX(_type)] = (_fn)
#define SET_ARITH(_type, _s)                                                               \
    do {                                                                                  \
        SET(SUM, _type, sum_##_s);                                                        \
        SET(PROD, _type, prod_##_s);                                                      \
        SET(MIN, _type, min_##_s);                                                        \
        SET(MAX, _type, max_##_s);                                                        \
    } while (0)
#define SET_LOGIC(_type, _s)                                                               \
    do {                                                                                  \
        SET(LAND, _type, land_##_s);                                                      \
        SET(LOR, _type, lor_##_s);                                                        \
        SET(LXOR, _type, lxor_##_s);                                                      \
    } while (0)
#define SET_BIT(_type, _s)                                                                 \
    do {                                                                                  \
        SET(BAND, _type, band_##_s);                                                      \
        SET(BOR, _type, bor_##_s);                                                        \
        SET(BXOR, _type, bxor_##_s);                                                      \
    } while (0)
/* C integers: arithmetic, logical and bitwise. */
#define SET_CINT(_type, _s)                                                                \
    do {                                                                                  \
        SET_ARITH(_type, _s);                                                             \
        SET_LOGIC(_type, _s);                                                             \
        SET_BIT(_type, _s);                                                               \
    } while (0)
/* Fortran integers: arithmetic and bitwise. */
#define SET_FINT(_type, _s)                                                                \
    do {                                                                                  \
        SET_ARITH(_type, _s);                                                             \
        SET_BIT(_type, _s);                                                               \
    } while (0)
#define SET_CPLX(_type, _s)                                                                \
    do {                                                                                  \
        SET(SUM, _type, sum_##_s);                                                        \
        SET(PROD, _type, prod_##_s);                                                      \
    } while (0)
#define SET_PAIR(_type, _s)                                                                \
    do {                                                                                  \
        pair_kernels[0][TIDX(_type)] = minloc_##_s;                                       \
        pair_kernels[1][TIDX(_type)] = maxloc_##_s;                                       \
    } while (0)

static void set_int_by_size(MPI_Datatype t, size_t size, int is_signed, int fortran)
{
    static const struct {
        kernel_fn_t f[10];
    } s[2][4] = {
        { { { sum_u8, prod_u8, min_u8, max_u8, land_u8, lor_u8, lxor_u8, band_u8, bor_u8, bxor_u8 } },
          { { sum_u16, prod_u16, min_u16, max_u16, land_u16, lor_u16, lxor_u16, band_u16, bor_u16,
              bxor_u16 } },
          { { sum_u32, prod_u32, min_u32, max_u32, land_u32, lor_u32, lxor_u32, band_u32, bor_u32,
              bxor_u32 } },
          { { sum_u64, prod_u64, min_u64, max_u64, land_u64, lor_u64, lxor_u64, band_u64, bor_u64,
              bxor_u64 } } },
        { { { sum_i8, prod_i8, min_i8, max_i8, land_i8, lor_i8, lxor_i8, band_i8, bor_i8, bxor_i8 } },
          { { sum_i16, prod_i16, min_i16, max_i16, land_i16, lor_i16, lxor_i16, band_i16, bor_i16,
              bxor_i16 } },
          { { sum_i32, prod_i32, min_i32, max_i32, land_i32, lor_i32, lxor_i32, band_i32, bor_i32,
              bxor_i32 } },
          { { sum_i64, prod_i64, min_i64, max_i64, land_i64, lor_i64, lxor_i64, band_i64, bor_i64,
              bxor_i64 } } },
    };
    static const int ops[10] = { WEFT_OP_SUM,  WEFT_OP_PROD, WEFT_OP_MIN,  WEFT_OP_MAX,
                                 WEFT_OP_LAND, WEFT_OP_LOR,  WEFT_OP_LXOR, WEFT_OP_BAND,
                                 WEFT_OP_BOR,  WEFT_OP_BXOR };
    int idx = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : 3;
    for (int k = 0; k < 10; k++) {
        if (fortran && (ops[k] == WEFT_OP_LAND || ops[k] == WEFT_OP_LOR || ops[k] == WEFT_OP_LXOR)) {
            continue;
        }
        kernels[ops[k]][TIDX(t)] = s[is_signed][idx].f[k];
    }
}

/* Logical types: land/lor/lxor on an integer of the given size. */
static void set_logical_by_size(MPI_Datatype t, size_t size)
{
    switch (size) {
    case 1: SET_LOGIC(t, u8); break;
    case 2: SET_LOGIC(t, u16); break;
    case 4: SET_LOGIC(t, u32); break;
    case 8: SET_LOGIC(t, u64); break;
#ifdef __SIZEOF_INT128__
    case 16: SET_LOGIC(t, i128); break;
#endif
    default: break;
    }
}

#define IS_SIGNED(_T) ((_T)-1 < (_T)0)

static void table_init(void)
{
    /* C integers */
    set_int_by_size(MPI_SHORT, sizeof(short), 1, 0);
    set_int_by_size(MPI_INT, sizeof(int), 1, 0);
    set_int_by_size(MPI_LONG, sizeof(long), 1, 0);
    set_int_by_size(MPI_LONG_LONG, sizeof(long long), 1, 0);
    set_int_by_size(MPI_UNSIGNED_SHORT, sizeof(short), 0, 0);
    set_int_by_size(MPI_UNSIGNED, sizeof(int), 0, 0);
    set_int_by_size(MPI_UNSIGNED_LONG, sizeof(long), 0, 0);
    set_int_by_size(MPI_UNSIGNED_LONG_LONG, sizeof(long long), 0, 0);
    set_int_by_size(MPI_SIGNED_CHAR, 1, 1, 0);
    set_int_by_size(MPI_UNSIGNED_CHAR, 1, 0, 0);
    SET_CINT(MPI_CHAR, chr);
    set_int_by_size(MPI_INT8_T, 1, 1, 0);
    set_int_by_size(MPI_UINT8_T, 1, 0, 0);
    set_int_by_size(MPI_INT16_T, 2, 1, 0);
    set_int_by_size(MPI_UINT16_T, 2, 0, 0);
    set_int_by_size(MPI_INT32_T, 4, 1, 0);
    set_int_by_size(MPI_UINT32_T, 4, 0, 0);
    set_int_by_size(MPI_INT64_T, 8, 1, 0);
    set_int_by_size(MPI_UINT64_T, 8, 0, 0);
    set_int_by_size(MPI_AINT, sizeof(MPI_Aint), 1, 0);
    set_int_by_size(MPI_COUNT, sizeof(MPI_Count), 1, 0);
    set_int_by_size(MPI_OFFSET, sizeof(MPI_Offset), 1, 0);
    set_int_by_size(MPI_WCHAR, sizeof(wchar_t), IS_SIGNED(wchar_t), 1);
    /* Fortran integers */
    set_int_by_size(MPI_INTEGER, 4, 1, 1);
    set_int_by_size(MPI_INTEGER1, 1, 1, 1);
    set_int_by_size(MPI_INTEGER2, 2, 1, 1);
    set_int_by_size(MPI_INTEGER4, 4, 1, 1);
    set_int_by_size(MPI_INTEGER8, 8, 1, 1);
#ifdef __SIZEOF_INT128__
    SET_FINT(MPI_INTEGER16, i128);
#endif
    /* byte */
    SET_BIT(MPI_BYTE, u8);
    /* logicals */
    SET_LOGIC(MPI_C_BOOL, bool);
    SET_LOGIC(MPI_CXX_BOOL, bool);
    set_logical_by_size(MPI_LOGICAL, 4);
    set_logical_by_size(MPI_LOGICAL1, 1);
    set_logical_by_size(MPI_LOGICAL2, 2);
    set_logical_by_size(MPI_LOGICAL4, 4);
    set_logical_by_size(MPI_LOGICAL8, 8);
    set_logical_by_size(MPI_LOGICAL16, 16);
    /* floating point */
    SET_ARITH(MPI_FLOAT, flt);
    SET_ARITH(MPI_DOUBLE, dbl);
    SET_ARITH(MPI_LONG_DOUBLE, ldbl);
    SET_ARITH(MPI_REAL, flt);
    SET_ARITH(MPI_DOUBLE_PRECISION, dbl);
    SET_ARITH(MPI_REAL4, flt);
    SET_ARITH(MPI_REAL8, dbl);
#ifdef __SIZEOF_FLOAT128__
    SET_ARITH(MPI_REAL16, f128);
#endif
    /* complex */
    SET_CPLX(MPI_C_FLOAT_COMPLEX, cflt);
    SET_CPLX(MPI_CXX_FLOAT_COMPLEX, cflt);
    SET_CPLX(MPI_COMPLEX, cflt);
    SET_CPLX(MPI_COMPLEX8, cflt);
    SET_CPLX(MPI_C_DOUBLE_COMPLEX, cdbl);
    SET_CPLX(MPI_CXX_DOUBLE_COMPLEX, cdbl);
    SET_CPLX(MPI_DOUBLE_COMPLEX, cdbl);
    SET_CPLX(MPI_COMPLEX16, cdbl);
    SET_CPLX(MPI_C_LONG_DOUBLE_COMPLEX, cldbl);
    SET_CPLX(MPI_CXX_LONG_DOUBLE_COMPLEX, cldbl);
    /* pairs */
    SET_PAIR(MPI_FLOAT_INT, float_int);
    SET_PAIR(MPI_DOUBLE_INT, double_int);
    SET_PAIR(MPI_LONG_INT, long_int);
    SET_PAIR(MPI_2INT, 2int);
    SET_PAIR(MPI_SHORT_INT, short_int);
    SET_PAIR(MPI_LONG_DOUBLE_INT, ldouble_int);
    SET_PAIR(MPI_2REAL, 2real);
    SET_PAIR(MPI_2DOUBLE_PRECISION, 2dp);
    SET_PAIR(MPI_2INTEGER, 2int);
}

/* Index of the second member in the C struct and packed layouts. */
static MPI_Aint pair_value_size(MPI_Datatype t)
{
    switch ((uintptr_t)t) {
    case 0x228: return sizeof(float);
    case 0x229: return sizeof(double);
    case 0x22a: return sizeof(long);
    case 0x22b: return sizeof(int);
    case 0x22c: return sizeof(short);
    case 0x22d: return sizeof(long double);
    case 0x230: return sizeof(float);
    case 0x231: return sizeof(double);
    case 0x232: return sizeof(int);
    default: return 0;
    }
}

static MPI_Aint pair_struct_ioff(MPI_Datatype t)
{
    struct { float v; int i; } f;
    struct { double v; int i; } d;
    struct { long v; int i; } l;
    struct { short v; int i; } s;
    struct { long double v; int i; } ld;
    switch ((uintptr_t)t) {
    case 0x228: return (char *)&f.i - (char *)&f;
    case 0x229: return (char *)&d.i - (char *)&d;
    case 0x22a: return (char *)&l.i - (char *)&l;
    case 0x22c: return (char *)&s.i - (char *)&s;
    case 0x22d: return (char *)&ld.i - (char *)&ld;
    default: return pair_value_size(t); /* same-type pairs: no padding */
    }
}

/* ---- builtin op objects ------------------------------------------------- */

static struct weft_op builtin_ops[N_OPS];
weft_op_t            *weft_builtin_op[N_OPS];

static const struct {
    int         id;
    const char *name;
} builtin_names[] = {
    { WEFT_OP_SUM, "MPI_SUM" },       { WEFT_OP_MIN, "MPI_MIN" },
    { WEFT_OP_MAX, "MPI_MAX" },       { WEFT_OP_PROD, "MPI_PROD" },
    { WEFT_OP_BAND, "MPI_BAND" },     { WEFT_OP_BOR, "MPI_BOR" },
    { WEFT_OP_BXOR, "MPI_BXOR" },     { WEFT_OP_LAND, "MPI_LAND" },
    { WEFT_OP_LOR, "MPI_LOR" },       { WEFT_OP_LXOR, "MPI_LXOR" },
    { WEFT_OP_MINLOC, "MPI_MINLOC" }, { WEFT_OP_MAXLOC, "MPI_MAXLOC" },
    { WEFT_OP_REPLACE, "MPI_REPLACE" }, { WEFT_OP_NO_OP, "MPI_NO_OP" },
};

__attribute__((constructor)) static void op_module_init(void)
{
    table_init();
    for (size_t k = 0; k < sizeof(builtin_names) / sizeof(builtin_names[0]); k++) {
        int              id = builtin_names[k].id;
        struct weft_op *op = &builtin_ops[id];
        weft_object_init(&op->hdr, WEFT_KIND_OP, 0x20u + (unsigned)id);
        op->id          = id;
        op->commutative = 1;
        op->name        = builtin_names[k].name;
        weft_builtin_op[id] = op;
    }
}

/* ---- checks and reduction ---------------------------------------------- */

static int pair_op_index(int id)
{
    return id == WEFT_OP_MINLOC ? 0 : id == WEFT_OP_MAXLOC ? 1 : -1;
}

weft_op_kernel_t weft_op_kernel(const weft_op_t *op, const weft_datatype_t *dt)
{
    unsigned t = TIDX(dt->basic);

    if (!weft_op_is_builtin(op) || op->id == WEFT_OP_REPLACE || op->id == WEFT_OP_NO_OP ||
        pair_op_index(op->id) >= 0 || dt->basic == MPI_DATATYPE_NULL || t >= N_TYPES) {
        return NULL;
    }
    return kernels[op->id][t];
}

int weft_op_check(const weft_op_t *op, const weft_datatype_t *dt)
{
    if (!weft_op_is_builtin(op) || op->id == WEFT_OP_REPLACE || op->id == WEFT_OP_NO_OP) {
        return MPI_SUCCESS;
    }
    if (dt->basic == MPI_DATATYPE_NULL) {
        if (dt->size == 0) {
            return MPI_SUCCESS;
        }
        return weft_error(MPI_ERR_OP, "%s is not defined for datatype %s (not built from a "
                                      "single predefined type)", op->name,
                          dt->name[0] ? dt->name : "(derived)");
    }
    unsigned t  = TIDX(dt->basic);
    int      pk = pair_op_index(op->id);
    if (t < N_TYPES && (pk >= 0 ? pair_kernels[pk][t] != NULL : kernels[op->id][t] != NULL)) {
        return MPI_SUCCESS;
    }
    const weft_datatype_t *b = weft_datatype_from_handle(dt->basic);
    return weft_error(MPI_ERR_OP, "%s is not defined for datatype %s", op->name,
                      b && b->name[0] ? b->name : "(unknown)");
}

static void call_user(const weft_op_t *op, const void *in, void *inout, MPI_Count count,
                      const weft_datatype_t *dt)
{
    MPI_Datatype h = (MPI_Datatype)weft_object_handle(dt);
    if (op->user_fn_c) {
        MPI_Count n = count;
        op->user_fn_c((void *)in, inout, &n, &h);
        return;
    }
    /* int-count user functions: chunks of at most INT_MAX elements */
    const char *a = in;
    char       *b = inout;
    while (count > 0) {
        int n = count > INT_MAX ? INT_MAX : (int)count;
        op->user_fn((void *)a, b, &n, &h);
        a += (MPI_Aint)n * dt->extent;
        b += (MPI_Aint)n * dt->extent;
        count -= n;
    }
}

/* Reduce n basic elements of type basic in the layout given by packed: the
 * packed stream (pairs without padding) or the C layout. */
static void reduce_basic(int id, const void *in, void *inout, MPI_Count n, MPI_Datatype basic,
                         int packed)
{
    unsigned t  = TIDX(basic);
    int      pk = pair_op_index(id);
    if (pk >= 0) {
        MPI_Aint vs = pair_value_size(basic);
        MPI_Aint stride, ioff;
        const weft_datatype_t *b = weft_datatype_from_handle(basic);
        if (packed) {
            stride = b->size;
            ioff   = vs;
        } else {
            stride = b->extent;
            ioff   = pair_struct_ioff(basic);
        }
        pair_kernels[pk][t](in, inout, n, stride, ioff);
        return;
    }
    kernels[id][t](in, inout, n);
}

int weft_op_reduce(const weft_op_t *op, const void *in, void *inout, MPI_Count count,
                   const weft_datatype_t *dt)
{
    if (count == 0 || dt->size == 0 || op->id == WEFT_OP_NO_OP) {
        return MPI_SUCCESS;
    }
    if (!weft_op_is_builtin(op)) {
        call_user(op, in, inout, count, dt);
        return MPI_SUCCESS;
    }
    if (op->id == WEFT_OP_REPLACE) {
        weft_dt_copy(in, count, dt, inout, count, dt);
        return MPI_SUCCESS;
    }
    int pair = pair_op_index(op->id) >= 0;
    if (dt->is_contig && (!pair || dt->builtin)) {
        MPI_Count n = count * dt->basic_count;
        reduce_basic(op->id, (const char *)in + dt->true_lb, (char *)inout + dt->true_lb, n,
                     dt->basic, 0);
        return MPI_SUCCESS;
    }
    if (dt->builtin) { /* builtin pair type with padding */
        reduce_basic(op->id, in, inout, count, dt->basic, 0);
        return MPI_SUCCESS;
    }
    /* Derived, non-contiguous: pack both operands in chunks, reduce, unpack. */
    const weft_datatype_t *b     = weft_datatype_from_handle(dt->basic);
    MPI_Count              total = count * dt->size;
    MPI_Count              chunk = 1 << 20;
    chunk -= chunk % b->size;
    if (chunk > total) {
        chunk = total;
    }
    char *ta = malloc((size_t)chunk), *tb = malloc((size_t)chunk);
    if (ta == NULL || tb == NULL) {
        free(ta);
        free(tb);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a reduction temporary");
    }
    for (MPI_Count off = 0; off < total; off += chunk) {
        MPI_Count len = total - off < chunk ? total - off : chunk;
        weft_dt_pack(dt, count, in, off, ta, len);
        weft_dt_pack(dt, count, inout, off, tb, len);
        if (pair) {
            reduce_basic(op->id, ta, tb, len / b->size, dt->basic, 1);
        } else {
            reduce_basic(op->id, ta, tb, len / b->size, dt->basic, 0);
        }
        weft_dt_unpack(dt, count, inout, off, tb, len);
    }
    free(ta);
    free(tb);
    return MPI_SUCCESS;
}

void weft_op_retain(weft_op_t *op)
{
    if (!weft_op_is_builtin(op)) {
        op->hdr.refcount++;
    }
}

void weft_op_release(weft_op_t *op)
{
    if (!weft_op_is_builtin(op) && --op->hdr.refcount == 0) {
        op->hdr.magic = WEFT_MAGIC_FREED;
        free(op);
    }
}

/* ---- entry points ------------------------------------------------------- */

static int op_new(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op)
{
    if (fn == NULL && fn_c == NULL) {
        return weft_error(MPI_ERR_ARG, "argument user_fn: NULL function");
    }
    weft_op_t *o = calloc(1, sizeof(*o));
    if (o == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate an operation");
    }
    weft_object_init(&o->hdr, WEFT_KIND_OP, 0);
    o->id          = WEFT_OP_USER;
    o->commutative = commute != 0;
    o->user_fn     = fn;
    o->user_fn_c   = fn_c;
    o->name        = "user operation";
    *op            = (MPI_Op)o;
    return MPI_SUCCESS;
}

int weft_op_create_impl(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_new(user_fn, NULL, commute, op);
}

int weft_op_create_c_impl(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_new(NULL, user_fn, commute, op);
}

int weft_op_free_impl(MPI_Op *op)
{
    weft_op_t *o = weft_op_from_handle(*op);
    if (o == NULL) {
        return weft_error(MPI_ERR_OP, "argument op: invalid operation");
    }
    if (weft_op_is_builtin(o)) {
        return weft_error(MPI_ERR_OP, "argument op: predefined operations cannot be freed");
    }
    weft_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}

int weft_op_commutative_impl(weft_op_t *op, int *commute)
{
    *commute = op->commutative;
    return MPI_SUCCESS;
}

int weft_reduce_local_impl(const void *inbuf, void *inoutbuf, MPI_Count count,
                           weft_datatype_t *datatype, weft_op_t *op)
{
    int rc = weft_op_check(op, datatype);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (count > 0 && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE)) {
        return weft_error(MPI_ERR_BUFFER, "MPI_IN_PLACE is not allowed in MPI_Reduce_local");
    }
    return weft_op_reduce(op, inbuf, inoutbuf, count, datatype);
}
