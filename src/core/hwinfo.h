/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The host's hardware from hwloc (core/hwcpu.c): one topology per process,
 * shared by its users (the CPU facts for protocol thresholds, communicator
 * split by resource type, MPI_Get_hw_resource_info). Needs only hwloc, so
 * weft-info links it too.
 */
#ifndef WEFT_CORE_HWINFO_H
#define WEFT_CORE_HWINFO_H

#include <stddef.h>
#include <hwloc.h>

typedef struct {
    char   vendor[32];   /* e.g. AuthenticAMD, GenuineIntel; "" unknown */
    int    family;       /* CPU family number, -1 unknown */
    int    model;        /* CPU model number, -1 unknown */
    size_t l2_bytes;     /* L2 cache of the first core, 0 unknown */
    size_t l3_bytes;     /* L3 cache (last level) of the first package, 0 unknown */
} weft_hw_cpu_t;

/* The host topology, loaded on first use and shared; NULL when hwloc cannot
 * load it. Thread-safe. Loaded without hwloc's x86 backend, which binds the
 * caller to every PU in turn to run cpuid and so waits for each busy CPU
 * (15-35 ms on a loaded 2-core VM against 1.5 ms): Linux sysfs and
 * /proc/cpuinfo give the same packages, cores, caches and CPU vendor/family/
 * model. I/O devices are not loaded (no user needs them; they are slow). */
hwloc_topology_t weft_hw_topology(void);
/* Destroy it (library finalize); a later weft_hw_topology loads it again. */
void weft_hw_topology_release(void);

/* Fill cpu; 0, or -1 when hwloc cannot load the topology (fields unknown). */
int weft_hw_cpu(weft_hw_cpu_t *cpu);

/* The same facts but l3_bytes, from the cpuid instruction of the calling
 * core where there is one (x86), else weft_hw_cpu. For MPI_Init, where a
 * topology load (about 1 ms) would be spent only on these fields, by local
 * rank 0 while the node's other ranks wait for its measurement; the unit
 * test checks both give the same on the machine it runs on. */
int weft_hw_cpu_id(weft_hw_cpu_t *cpu);

#endif
