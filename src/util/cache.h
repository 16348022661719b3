/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Cache-line helpers shared by the shared-memory transport and the
 * shared-memory collectives.
 */
#ifndef WEFT_UTIL_CACHE_H
#define WEFT_UTIL_CACHE_H

#include <stddef.h>

#define WEFT_CACHE_LINE 64

/* Ask for the lines of [p, p + len) in exclusive state ahead of our own
 * stores: a reader on another core still holds them shared, and taking
 * them back later would put that round trip on the critical path. */
static inline void weft_prefetch_for_write(const void *p, size_t len)
{
    for (size_t at = 0; at < len; at += WEFT_CACHE_LINE) {
#if defined(__x86_64__)
        __asm__ __volatile__("prefetchw %0" ::"m"(((const char *)p)[at]));
#else
        __builtin_prefetch((const char *)p + at, 1, 3);
#endif
    }
}

/* Start fetching the lines of [p, p + len) that another core just wrote,
 * all at once, before the loads that need them. */
static inline void weft_prefetch_for_read(const void *p, size_t len)
{
    for (size_t at = 0; at < len; at += WEFT_CACHE_LINE) {
        __builtin_prefetch((const char *)p + at, 0, 3);
    }
}

#endif
