/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Time of an hwloc topology init + load as weft-proxy's binding plan does it
 * (util/hwloc_init.h: no I/O, no XML/PCI plugins, no x86 backend), per type
 * filter setting, to see what the plan's load costs and what each filter
 * saves. Not built by CMake (it needs only hwloc):
 *   cc -O2 -Isrc bench/startup/topo_load.c -o /tmp/topo_load $(pkg-config --cflags --libs hwloc)
 *   /tmp/topo_load [reps]
 * Prints, per setting, the median and minimum of reps loads in ms, and the
 * number of objects the topology held.
 */
#include "util/hwloc_init.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { ALL, NO_CACHES, CORES_ONLY, NSETTINGS };
static const char *setting_name[] = {"caches kept (library default)",
                                     "no caches (binding plan)",
                                     "no caches, no groups/misc/dies"};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double load_once(int setting, int *nobjs)
{
    hwloc_topology_t topo;
    double           t0 = now_ms(), t;

    if (weft_hwloc_topology_init(&topo) != 0) {
        fprintf(stderr, "hwloc_topology_init failed\n");
        exit(1);
    }
    if (setting != ALL) {
        hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    if (setting == CORES_ONLY) {
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_GROUP, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_DIE, HWLOC_TYPE_FILTER_KEEP_NONE);
        hwloc_topology_set_type_filter(topo, HWLOC_OBJ_MEMCACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    if (hwloc_topology_load(topo) != 0) {
        fprintf(stderr, "hwloc_topology_load failed\n");
        exit(1);
    }
    t      = now_ms() - t0;
    *nobjs = 0;
    for (int d = 0; d < hwloc_topology_get_depth(topo); d++) {
        *nobjs += hwloc_get_nbobjs_by_depth(topo, (unsigned)d);
    }
    hwloc_topology_destroy(topo);
    return t;
}

int main(int argc, char **argv)
{
    int     reps = argc > 1 ? atoi(argv[1]) : 50;
    double *t[NSETTINGS];
    int     nobjs[NSETTINGS];

    if (reps < 1) {
        reps = 1;
    }
    for (int s = 0; s < NSETTINGS; s++) {
        t[s] = calloc((size_t)reps, sizeof(double));
    }
    for (int r = 0; r < reps; r++) { /* interleaved, so load changes hit every setting */
        for (int s = 0; s < NSETTINGS; s++) {
            t[s][r] = load_once(s, &nobjs[s]);
        }
    }
    for (int s = 0; s < NSETTINGS; s++) {
        qsort(t[s], (size_t)reps, sizeof(double), cmp_double);
        printf("%-34s median %.3f ms  min %.3f ms  objects %d\n", setting_name[s], t[s][reps / 2],
               t[s][0], nobjs[s]);
    }
    return 0;
}
