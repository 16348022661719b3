/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Large one-sided copies into another process's memory (RMA put/get): the
 * origin will not read the destination again, so above a threshold
 * streaming stores can win (measured for MPI_Put; OpenSHMEM puts measured
 * faster with memcpy, docs/performance.md). They skip reading the
 * destination lines first (read-for-ownership) and keep the copy from
 * evicting the origin's caches.
 */
#ifndef WEFT_UTIL_COPY_H
#define WEFT_UTIL_COPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static inline void weft_copy_streaming(char *dst, const char *src, size_t n)
{
#if defined(__SSE2__)
    /* whole destination lines: a line streamed in parts leaves the
     * write-combining buffer as partial writes */
    size_t head = (64 - ((uintptr_t)dst & 63)) & 63;

    if (head > n) {
        head = n;
    }
    memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)src);
        __m128i b = _mm_loadu_si128((const __m128i *)(src + 16));
        __m128i c = _mm_loadu_si128((const __m128i *)(src + 32));
        __m128i d = _mm_loadu_si128((const __m128i *)(src + 48));
        _mm_stream_si128((__m128i *)dst, a);
        _mm_stream_si128((__m128i *)(dst + 16), b);
        _mm_stream_si128((__m128i *)(dst + 32), c);
        _mm_stream_si128((__m128i *)(dst + 48), d);
    }
    memcpy(dst, src, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}

/* memcpy below threshold bytes (0: always), streaming stores from it up. */
static inline void weft_copy_large(char *dst, const char *src, size_t n, size_t threshold)
{
    if (threshold > 0 && n >= threshold) {
        weft_copy_streaming(dst, src, n);
    } else {
        memcpy(dst, src, n);
    }
}

#endif
