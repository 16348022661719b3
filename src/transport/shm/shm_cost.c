/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The mechanism cost probe (shm.h weft_shm_measure_costs): ~60 us at init
 * on local rank 0 only, and the cross-core probe below (~0.1-0.5 ms, local
 * ranks 0 and 1). The fastest of several repetitions (the first warms page
 * tables and caches) keeps scheduler noise out.
 */
#include "transport/shm/shm.h"

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* With 5 the family 25 AMD VM read CMA at 2.2-3.2 us per 16 KiB from job
 * to job, and the cooperative size 2 F B at 24-61 KiB; with 12, 2.1-2.7
 * us and 45-57 KiB. */
#define COST_PROBE_REPS 12

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
    size_t units = (ring_bytes + WEFT_SHM_CELL - 1) / WEFT_SHM_CELL * (WEFT_SHM_CELL / WEFT_SHM_UNIT);
    size_t least = 64 * WEFT_SHM_CELL / WEFT_SHM_UNIT;

    units = units < least ? least : units;
    while (units & (units - 1)) { /* a power of two, as weft_shm_init rounds it */
        units += units & -units;
    }
    return units / 2 * WEFT_SHM_UNIT - WEFT_SHM_HDR_SIZE;
}

/* ---- cross-core copy probe ------------------------------------------------ */

/* Lone rounds: the fastest of several keeps init noise (first touches,
 * clock ramp, a neighbour's burst) out; with 5 the family 25 AMD VM read
 * 2.2-3.4 us per 16 KiB from job to job, with 12 about 1.8-1.9. */
#define XCOPY_ROUNDS      12
/* Stream rounds: XCOPY_STREAM_SLOTS half-probe slots each, from a source
 * and into a sink of 256 KiB through the two halves of the data in turn,
 * as a pipeline moves a message larger than the cores' L1 and L2 share
 * (with 16 KiB hot at both ends the family 25 AMD VM read 14-27 GB/s,
 * with 256 KiB 6-14, and its pipeline moved 7-8.5 at 64 KiB-1 MiB). */
#define XCOPY_STREAM_ROUNDS 3
#define XCOPY_STREAM_SLOTS  32
#define XCOPY_SLOT_BYTES    (WEFT_SHM_COST_PROBE_BYTES / 2)
#define XCOPY_STREAM_BYTES  (XCOPY_STREAM_SLOTS * XCOPY_SLOT_BYTES)
#define XCOPY_ABANDON     UINT32_MAX
#define XCOPY_DEADLINE_NS (20u * 1000u * 1000u)

/* Wait until *word reaches want (or the turn word holds XCOPY_ABANDON);
 * 0 on abandon or time-out. */
static int xcopy_wait(const weft_shm_xcopy_area_t *a, const uint32_t *word, uint32_t want,
                      uint64_t deadline)
{
    for (unsigned spins = 0;; spins++) {
        if (__atomic_load_n(&a->turn, __ATOMIC_RELAXED) == XCOPY_ABANDON) {
            return 0; /* first: it is above every turn */
        }
        if (__atomic_load_n(word, __ATOMIC_ACQUIRE) >= want) {
            return 1;
        }
        if ((spins & 255u) == 255u) {
            if (now_ns() > deadline) {
                return 0;
            }
            sched_yield(); /* the other side may share this core */
        }
    }
}

/* One stream round on the leader: copy out XCOPY_STREAM_SLOTS half-slots
 * into sink as the follower fills them; the ns it took, 0 if abandoned. */
static uint64_t stream_out(weft_shm_xcopy_area_t *a, unsigned char *sink, uint32_t *taken,
                           uint64_t t0, uint64_t deadline)
{
    for (uint32_t k = 0; k < XCOPY_STREAM_SLOTS; k++, (*taken)++) {
        if (!xcopy_wait(a, &a->produced, *taken + 1, deadline)) {
            return 0;
        }
        memcpy(sink + (size_t)k * XCOPY_SLOT_BYTES, a->data + (*taken & 1) * XCOPY_SLOT_BYTES,
               XCOPY_SLOT_BYTES);
        __atomic_store_n(&a->consumed, *taken + 1, __ATOMIC_RELEASE);
    }
    __asm__ __volatile__("" : : "r"(sink) : "memory"); /* keep the copies */
    uint64_t spent = now_ns() - t0;
    return spent > 0 ? spent : 1;
}

uint64_t weft_shm_xcopy_lead(weft_shm_xcopy_area_t *a, uint32_t *step_ns)
{
    static unsigned char local[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    uint64_t             deadline = now_ns() + XCOPY_DEADLINE_NS, best = UINT64_MAX;
    uint64_t             step = UINT64_MAX;
    uint32_t             taken = 0; /* stream half-slots copied out so far */
    unsigned char       *sink  = malloc(XCOPY_STREAM_BYTES);

    *step_ns = 0;
    /* Round 0 is written before anyone asks (and faults the pages in):
     * untimed. Each later lone round is timed from the request to the end
     * of the copy out, as a lone eager message costs from the sender's
     * copy in to the receiver's copy out. */
    for (uint32_t i = 0; i < XCOPY_ROUNDS + XCOPY_STREAM_ROUNDS; i++) {
        uint64_t t0 = now_ns();
        if (i >= XCOPY_ROUNDS && sink == NULL) {
            break; /* no stream: step unknown */
        }
        if (i > 0) {
            __atomic_store_n(&a->turn, 2 * i, __ATOMIC_RELEASE);
        }
        if (i >= XCOPY_ROUNDS) {
            uint64_t spent = stream_out(a, sink, &taken, t0, deadline);
            if (spent == 0) {
                break; /* the lone rounds still count */
            }
            uint64_t per_probe = spent * WEFT_SHM_COST_PROBE_BYTES / XCOPY_STREAM_BYTES;
            if (__atomic_load_n(&a->cpu, __ATOMIC_RELAXED) != sched_getcpu()) {
                step = per_probe < step ? per_probe : step;
            }
            continue;
        }
        if (!xcopy_wait(a, &a->turn, 2 * i + 1, deadline)) {
            __atomic_store_n(&a->turn, XCOPY_ABANDON, __ATOMIC_RELEASE);
            free(sink);
            return 0;
        }
        /* local escapes into the asm on both sides, so the copy stays
         * between the two clock reads */
        __asm__ __volatile__("" : : "r"(local) : "memory");
        memcpy(local, a->data, sizeof(local));
        __asm__ __volatile__("" : : "r"(local) : "memory");
        uint64_t t1 = now_ns();
        if (i > 0 && __atomic_load_n(&a->cpu, __ATOMIC_RELAXED) != sched_getcpu()) {
            best = t1 - t0 < best ? t1 - t0 : best; /* else the data were in this core's cache */
        }
    }
    __atomic_store_n(&a->turn, XCOPY_ABANDON, __ATOMIC_RELEASE); /* done */
    free(sink);
    if (best == UINT64_MAX) {
        return 0;
    }
    *step_ns = step == UINT64_MAX ? 0 : step > UINT32_MAX ? UINT32_MAX : (uint32_t)step;
    return best > 0 ? best : 1;
}

void weft_shm_xcopy_follow(weft_shm_xcopy_area_t *a)
{
    static unsigned char src[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    uint64_t             deadline = now_ns() + XCOPY_DEADLINE_NS;
    uint32_t             given    = 0; /* stream half-slots written so far */
    unsigned char       *stream   = malloc(XCOPY_STREAM_BYTES);

    memset(src, 0x5a, sizeof(src));
    if (stream != NULL) {
        memset(stream, 0x5a, XCOPY_STREAM_BYTES);
    }

    for (uint32_t i = 0; i < XCOPY_ROUNDS + XCOPY_STREAM_ROUNDS; i++) {
        if (!xcopy_wait(a, &a->turn, 2 * i, deadline)) {
            break;
        }
        __atomic_store_n(&a->cpu, sched_getcpu(), __ATOMIC_RELAXED);
        if (i < XCOPY_ROUNDS) {
            memcpy(a->data, src, sizeof(a->data)); /* a sender's copy in */
            __atomic_store_n(&a->turn, 2 * i + 1, __ATOMIC_RELEASE);
            continue;
        }
        if (stream == NULL) { /* the leader keeps the lone rounds, without waiting out the deadline */
            __atomic_store_n(&a->turn, XCOPY_ABANDON, __ATOMIC_RELEASE);
            break;
        }
        for (uint32_t k = 0; k < XCOPY_STREAM_SLOTS; k++, given++) {
            /* this half is free once the leader took the slot before last */
            if (given >= 2 && !xcopy_wait(a, &a->consumed, given - 1, deadline)) {
                free(stream);
                return;
            }
            memcpy(a->data + (given & 1) * XCOPY_SLOT_BYTES, stream + (size_t)k * XCOPY_SLOT_BYTES,
                   XCOPY_SLOT_BYTES);
            __atomic_store_n(&a->produced, given + 1, __ATOMIC_RELEASE);
        }
    }
    free(stream);
}
