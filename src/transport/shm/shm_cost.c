/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The mechanism cost probe (shm.h weft_shm_measure_costs): ~10-20 us at
 * init on local rank 0 only. The fastest of a few repetitions (the first
 * warms page tables and caches) keeps scheduler noise out.
 */
#include "transport/shm/shm.h"

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
    costs->init_ns     = now_ns() - t0;
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
