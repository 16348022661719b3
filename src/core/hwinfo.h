/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The CPU this process runs on, from hwloc (core/hwcpu.c), for choosing
 * protocol thresholds by architecture.
 */
#ifndef WEFT_CORE_HWINFO_H
#define WEFT_CORE_HWINFO_H

#include <stddef.h>

typedef struct {
    char   vendor[32];   /* e.g. AuthenticAMD, GenuineIntel; "" unknown */
    int    family;       /* CPU family number, -1 unknown */
    int    model;        /* CPU model number, -1 unknown */
    size_t l2_bytes;     /* L2 cache of the first core, 0 unknown */
    size_t l3_bytes;     /* L3 cache (last level) of the first package, 0 unknown */
} weft_hw_cpu_t;

/* Fill cpu; 0, or -1 when hwloc cannot load the topology (fields unknown).
 * Loads a topology for the call (milliseconds: call once). */
int weft_hw_cpu(weft_hw_cpu_t *cpu);

#endif
