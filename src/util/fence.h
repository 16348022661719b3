/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Memory-ordering and spin-wait primitives for processes sharing memory.
 *
 * weft_full_fence: a full (sequentially consistent) fence; the store-then-load
 * orderings of the shm doorbells and the RMA synchronisation words need one.
 *
 * ThreadSanitizer rejects atomic_thread_fence (gcc: -Werror=tsan), so its
 * builds use a sequentially consistent read-modify-write on a private word
 * instead, which TSan models and which is also a full barrier on x86.
 */
#ifndef WEFT_UTIL_FENCE_H
#define WEFT_UTIL_FENCE_H

#if defined(__SANITIZE_THREAD__)
static inline void weft_full_fence(void)
{
    static int fence_word;
    __atomic_fetch_add(&fence_word, 0, __ATOMIC_SEQ_CST);
}
#else
static inline void weft_full_fence(void)
{
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif

/* One-directional fences (publish data before a flag; read data after seeing
 * one). Under ThreadSanitizer the full stand-in above serves both. */
static inline void weft_release_fence(void)
{
#if defined(__SANITIZE_THREAD__)
    weft_full_fence();
#else
    __atomic_thread_fence(__ATOMIC_RELEASE);
#endif
}

static inline void weft_acquire_fence(void)
{
#if defined(__SANITIZE_THREAD__)
    weft_full_fence();
#else
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
#endif
}

/* Spin-wait hint: lets the sibling hyperthread run and saves power. */
static inline void weft_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

#endif
