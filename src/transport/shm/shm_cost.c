/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The mechanism cost probe (shm.h weft_shm_measure_costs): ~10-20 us at
 * init on local rank 0 only. The fastest of a few repetitions (the first
 * warms page tables and caches) keeps scheduler noise out.
 */
#include "transport/shm/shm.h"

#include <sched.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define COST_PROBE_REPS 5

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void weft_shm_measure_costs(pid_t pid, const void *remote_src, const void *local_src, int cma_ok,
                            long cma_extra_ns, weft_shm_costs_t *costs)
{
    static char  local[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    uint64_t     t0 = now_ns(), best_cma = UINT64_MAX, best_copy = UINT64_MAX, best_page = UINT64_MAX;
    struct iovec l = {local, sizeof(local)};
    struct iovec r = {(void *)(uintptr_t)remote_src, sizeof(local)};
    struct iovec lq = {local, sizeof(local) / 4};
    struct iovec rq = {(void *)(uintptr_t)remote_src, sizeof(local) / 4};

    for (int i = 0; i < COST_PROBE_REPS; i++) {
        uint64_t a = now_ns();
        memcpy(local, local_src, sizeof(local));
        __asm__ __volatile__("" ::: "memory"); /* keep the copy */
        uint64_t b = now_ns();
        best_copy = b - a < best_copy ? b - a : best_copy;
        if (cma_ok) {
            if (process_vm_readv(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(local)) {
                cma_ok = 0; /* the init probe said yes; leave the cost unknown then */
                continue;
            }
            uint64_t c = now_ns();
            best_cma = c - b < best_cma ? c - b : best_cma;
            if (process_vm_readv(pid, &lq, 1, &rq, 1, 0) != (ssize_t)lq.iov_len) {
                cma_ok = 0;
                continue;
            }
            uint64_t d = now_ns();
            best_page = d - c < best_page ? d - c : best_page;
        }
    }
    costs->probe_bytes = WEFT_SHM_COST_PROBE_BYTES;
    costs->copy_ns     = best_copy > 0 ? best_copy : 1;
    uint64_t extra     = (uint64_t)(cma_extra_ns > 0 ? cma_extra_ns : 0);
    costs->cma_ns      = cma_ok ? best_cma + extra : 0;
    costs->cma_page_ns = cma_ok ? best_page + extra : 0;
    uint64_t spent     = now_ns() - t0;
    costs->init_ns     = spent > UINT32_MAX ? UINT32_MAX : (uint32_t)spent;
}

size_t weft_shm_ring_payload(size_t ring_bytes)
{
    size_t cells = (ring_bytes + WEFT_SHM_CELL - 1) / WEFT_SHM_CELL;

    cells = cells < 64 ? 64 : cells;
    while (cells & (cells - 1)) { /* a power of two, as weft_shm_init rounds it */
        cells += cells & -cells;
    }
    return cells / 2 * WEFT_SHM_CELL - WEFT_SHM_HDR_SIZE;
}

/* ---- cross-core copy probe ------------------------------------------------ */

#define XCOPY_ROUNDS      5
#define XCOPY_ABANDON     UINT32_MAX
#define XCOPY_DEADLINE_NS (20u * 1000u * 1000u)

/* Wait until the turn word holds want (or XCOPY_ABANDON); 0 on time-out. */
static int xcopy_wait(const weft_shm_xcopy_area_t *a, uint32_t want, uint64_t deadline)
{
    for (unsigned spins = 0;; spins++) {
        uint32_t t = __atomic_load_n(&a->turn, __ATOMIC_ACQUIRE);
        if (t == want) {
            return 1;
        }
        if (t == XCOPY_ABANDON) {
            return 0;
        }
        if ((spins & 255u) == 255u) {
            if (now_ns() > deadline) {
                return 0;
            }
            sched_yield(); /* the other side may share this core */
        }
    }
}

uint64_t weft_shm_xcopy_lead(weft_shm_xcopy_area_t *a, uint32_t *step_ns)
{
    static unsigned char local[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    uint64_t             deadline = now_ns() + XCOPY_DEADLINE_NS, best = UINT64_MAX;
    uint64_t             step = UINT64_MAX;

    *step_ns = 0;
    /* Round 0 is written before anyone asks (and faults the pages in):
     * untimed. Each later round is timed from the request to the end of
     * the copy out, as a lone eager message costs from the sender's copy
     * in to the receiver's copy out. */
    for (uint32_t i = 0; i < XCOPY_ROUNDS; i++) {
        uint64_t t0 = now_ns();
        if (i > 0) {
            __atomic_store_n(&a->turn, 2 * i, __ATOMIC_RELEASE);
        }
        if (!xcopy_wait(a, 2 * i + 1, deadline)) {
            __atomic_store_n(&a->turn, XCOPY_ABANDON, __ATOMIC_RELEASE);
            return 0;
        }
        /* local escapes into the asm on both sides, so the copy stays
         * between the two clock reads */
        uint64_t out0 = now_ns();
        __asm__ __volatile__("" : : "r"(local) : "memory");
        memcpy(local, a->data, sizeof(local));
        __asm__ __volatile__("" : : "r"(local) : "memory");
        uint64_t t1 = now_ns();
        if (i > 0 && __atomic_load_n(&a->cpu, __ATOMIC_RELAXED) != sched_getcpu()) {
            uint64_t in     = __atomic_load_n(&a->in_ns, __ATOMIC_RELAXED);
            uint64_t out    = t1 - out0;
            uint64_t slower = in > out ? in : out;
            best = t1 - t0 < best ? t1 - t0 : best; /* else the data were in this core's cache */
            step = slower < step ? slower : step;
        }
    }
    __atomic_store_n(&a->turn, XCOPY_ABANDON, __ATOMIC_RELEASE); /* done */
    if (best == UINT64_MAX) {
        return 0;
    }
    *step_ns = step > UINT32_MAX ? UINT32_MAX : step > 0 ? (uint32_t)step : 1;
    return best > 0 ? best : 1;
}

void weft_shm_xcopy_follow(weft_shm_xcopy_area_t *a)
{
    static unsigned char src[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    uint64_t             deadline = now_ns() + XCOPY_DEADLINE_NS;

    memset(src, 0x5a, sizeof(src));

    for (uint32_t i = 0; i < XCOPY_ROUNDS; i++) {
        if (!xcopy_wait(a, 2 * i, deadline)) {
            return;
        }
        uint64_t t0 = now_ns();
        memcpy(a->data, src, sizeof(a->data)); /* a sender's copy in */
        uint64_t t1 = now_ns();
        __atomic_store_n(&a->in_ns, (uint32_t)(t1 - t0 < UINT32_MAX ? t1 - t0 : UINT32_MAX),
                         __ATOMIC_RELAXED);
        __atomic_store_n(&a->cpu, sched_getcpu(), __ATOMIC_RELAXED);
        __atomic_store_n(&a->turn, 2 * i + 1, __ATOMIC_RELEASE);
    }
}
