/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * external32 (MPI standard "external32" data representation): big-endian,
 * the standard's fixed sizes, IEEE formats; long double is IEEE binary128.
 * Walks the type map element by element; not a hot path.
 */
#include <float.h>
#include <stdint.h>
#include <string.h>
#include "core/datatype_internal.h"

MPI_Count weft_dt_ext32_size(const weft_datatype_t *dt)
{
    return weft_dt_engine(dt)->ext32_size;
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define HOST_BIG_ENDIAN 1
#else
#define HOST_BIG_ENDIAN 0
#endif

/* Native integer/float unit of nsz bytes -> big-endian unit of esz bytes and
 * back. Sizes differ for integers whose external32 size is fixed smaller than
 * the native one (MPI_LONG, MPI_UNSIGNED_LONG and MPI_WCHAR are 4, 4 and 2
 * bytes in the standard's table): the low-order bytes are kept, the top is
 * sign-filled (zero-filled for unsigned types) when unpacking. */
static void unit_to_be(const unsigned char *native, int nsz, unsigned char *ext, int esz)
{
    unsigned char fill = (native[HOST_BIG_ENDIAN ? 0 : nsz - 1] & 0x80) ? 0xff : 0;
    for (int i = 0; i < esz; i++) { /* i: significance of the byte */
        ext[esz - 1 - i] = i < nsz ? native[HOST_BIG_ENDIAN ? nsz - 1 - i : i] : fill;
    }
}

static void unit_from_be(const unsigned char *ext, int esz, unsigned char *native, int nsz,
                         int is_unsigned)
{
    unsigned char fill = !is_unsigned && (ext[0] & 0x80) ? 0xff : 0;
    for (int i = 0; i < nsz; i++) {
        native[HOST_BIG_ENDIAN ? nsz - 1 - i : i] = i < esz ? ext[esz - 1 - i] : fill;
    }
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8) {
        p[i] = (unsigned char)v;
    }
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* long double unit <-> binary128 big-endian (16 bytes). */
static void ldouble_unit(const unsigned char *src, unsigned char *dst, int to_ext)
{
#if LDBL_MANT_DIG == 64 && !HOST_BIG_ENDIAN
    /* x87 extended: 64-bit mantissa with explicit integer bit, then
     * sign and 15-bit exponent (bias 16383, as binary128). */
    if (to_ext) {
        uint64_t mant;
        uint16_t se;
        memcpy(&mant, src, 8);
        memcpy(&se, src + 8, 2);
        uint64_t frac = mant & 0x7fffffffffffffffull; /* 63 bits below the integer bit */
        uint64_t hi   = ((uint64_t)se << 48) | (frac >> 15);
        uint64_t lo   = frac << 49;
        put_be64(dst, hi);
        put_be64(dst + 8, lo);
    } else {
        uint64_t hi = get_be64(src), lo = get_be64(src + 8);
        uint16_t se   = (uint16_t)(hi >> 48);
        uint64_t frac = ((hi & 0xffffffffffffull) << 15) | (lo >> 49);
        uint64_t mant = frac | ((se & 0x7fff) != 0 ? 0x8000000000000000ull : 0);
        memset(dst, 0, sizeof(long double));
        memcpy(dst, &mant, 8);
        memcpy(dst + 8, &se, 2);
    }
#elif LDBL_MANT_DIG == 113
    if (to_ext) {
        unit_to_be(src, 16, dst, 16);
    } else {
        unit_from_be(src, 16, dst, 16, 0);
    }
#else
    /* long double is double: widen/narrow through binary128 bits. */
    if (to_ext) {
        double d;
        uint64_t b;
        memcpy(&d, src, sizeof(d));
        memcpy(&b, &d, 8);
        uint64_t sign = b >> 63, exp = (b >> 52) & 0x7ff, frac = b & 0xfffffffffffffull;
        uint64_t qexp = exp == 0 ? 0 : exp == 0x7ff ? 0x7fff : exp - 1023 + 16383;
        put_be64(dst, (sign << 63) | (qexp << 48) | (frac >> 4));
        put_be64(dst + 8, frac << 60);
    } else {
        uint64_t hi = get_be64(src), lo = get_be64(src + 8);
        uint64_t sign = hi >> 63, qexp = (hi >> 48) & 0x7fff;
        uint64_t frac = ((hi & 0xffffffffffffull) << 4) | (lo >> 60);
        uint64_t exp  = qexp == 0 ? 0 : qexp == 0x7fff ? 0x7ff : qexp - 16383 + 1023;
        uint64_t b    = (sign << 63) | (exp << 52) | frac;
        double   d;
        memcpy(&d, &b, 8);
        memcpy(dst, &d, sizeof(d));
    }
#endif
}

static void leaf_convert(const weft_datatype_t *dt, unsigned char *native, unsigned char *ext,
                         int to_ext)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    int                     nu  = (int)(dt->size / eng->nunits);
    int                     eu  = eng->ext32_unit;
    for (int u = 0; u < eng->nunits; u++, native += nu, ext += eu) {
        switch (eng->ext32_conv) {
        case WEFT_DT_CONV_NONE:
            if (to_ext) {
                memcpy(ext, native, (size_t)eu);
            } else {
                memcpy(native, ext, (size_t)nu);
            }
            break;
        case WEFT_DT_CONV_SWAP:
        case WEFT_DT_CONV_USWAP:
            if (to_ext) {
                unit_to_be(native, nu, ext, eu);
            } else {
                unit_from_be(ext, eu, native, nu, eng->ext32_conv == WEFT_DT_CONV_USWAP);
            }
            break;
        case WEFT_DT_CONV_LDOUBLE:
            if (to_ext) {
                ldouble_unit(native, ext, 1);
            } else {
                ldouble_unit(ext, native, 0);
            }
            break;
        }
    }
}

static void walk(const weft_datatype_t *dt, unsigned char *base, unsigned char **pp, int to_ext)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    if (eng->nunits > 0) { /* predefined leaf */
        leaf_convert(dt, base, *pp, to_ext);
        *pp += eng->ext32_size;
        return;
    }
    for (int i = 0; i < eng->nblocks; i++) {
        const weft_dt_block_t *b = &eng->blocks[i];
        for (MPI_Count r = 0; r < b->rep; r++) {
            for (MPI_Count k = 0; k < b->count; k++) {
                walk(b->type, base + b->disp + r * b->rep_stride + k * b->type->extent, pp,
                     to_ext);
            }
        }
    }
}

void weft_dt_ext32_pack(const weft_datatype_t *dt, MPI_Count count, const void *buf, void *out)
{
    unsigned char *p = out;
    for (MPI_Count e = 0; e < count; e++) {
        walk(dt, (unsigned char *)((uintptr_t)buf + (uintptr_t)(e * dt->extent)), &p, 1);
    }
}

void weft_dt_ext32_unpack(const weft_datatype_t *dt, MPI_Count count, const void *in, void *buf)
{
    unsigned char *p = (unsigned char *)in;
    for (MPI_Count e = 0; e < count; e++) {
        walk(dt, (unsigned char *)((uintptr_t)buf + (uintptr_t)(e * dt->extent)), &p, 0);
    }
}
