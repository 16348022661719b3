/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Small helpers for the hardware-limit probes (no MPI).
 */
#ifndef WB_LIMITS_H
#define WB_LIMITS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline double lim_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Pin the calling process to one CPU; returns 0 on success. */
static inline int lim_pin(int cpu)
{
    cpu_set_t set;

    if (cpu < 0)
        return 0;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof(set), &set);
}

/* Second CPU of the affinity mask we started with (the first is *first). */
static inline int lim_two_cpus(int *first, int *second)
{
    cpu_set_t set;
    int i, n = 0;

    *first = *second = -1;
    if (sched_getaffinity(0, sizeof(set), &set))
        return -1;
    for (i = 0; i < CPU_SETSIZE && n < 2; i++) {
        if (CPU_ISSET(i, &set)) {
            if (n == 0)
                *first = i;
            else
                *second = i;
            n++;
        }
    }
    return n == 2 ? 0 : -1;
}

static inline size_t lim_size(const char *s)
{
    char *end;
    size_t v = strtoull(s, &end, 10);

    if (*end == 'K' || *end == 'k')
        v <<= 10;
    else if (*end == 'M' || *end == 'm')
        v <<= 20;
    else if (*end == 'G' || *end == 'g')
        v <<= 30;
    return v;
}

#endif
