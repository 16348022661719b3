/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The CPU facts MPI_Init takes from cpuid (weft_hw_cpu_id) are the ones the
 * hwloc topology gives (weft_hw_cpu) on this machine: vendor, family, model
 * and the L2 size, which pick the shipped threshold table. A machine where
 * hwloc cannot load the topology is reported and skipped (exit 77).
 */
#include "core/hwinfo.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    weft_hw_cpu_t topo, id;
    int           failures = 0;

    if (weft_hw_cpu(&topo) != 0) {
        printf("SKIP: hwloc cannot load this machine's topology\n");
        return 77;
    }
    if (weft_hw_cpu_id(&id) != 0) {
        fprintf(stderr, "weft_hw_cpu_id failed where hwloc works\n");
        return 1;
    }
    printf("hwloc: %s family %d model %d L2 %zu; cpuid: %s family %d model %d L2 %zu\n",
           topo.vendor, topo.family, topo.model, topo.l2_bytes, id.vendor, id.family, id.model,
           id.l2_bytes);
    if (topo.vendor[0] != '\0' && strcmp(topo.vendor, id.vendor) != 0) {
        fprintf(stderr, "vendor differs\n");
        failures++;
    }
    if (topo.family >= 0 && topo.family != id.family) {
        fprintf(stderr, "family differs\n");
        failures++;
    }
    if (topo.model >= 0 && topo.model != id.model) {
        fprintf(stderr, "model differs\n");
        failures++;
    }
    if (topo.l2_bytes != 0 && topo.l2_bytes != id.l2_bytes) {
        fprintf(stderr, "L2 size differs\n");
        failures++;
    }
    weft_hw_topology_release();
    return failures ? 1 : 0;
}
