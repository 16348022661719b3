/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft_hw_cpu (hwinfo.h): the CPU, from a topology loaded for the call and
 * dropped again (local rank 0 asks once at init). Needs only hwloc, so
 * weft-info links it too.
 */
#include "core/hwinfo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>

static size_t first_cache(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, 0);
    return o != NULL && o->attr != NULL ? (size_t)o->attr->cache.size : 0;
}

int weft_hw_cpu(weft_hw_cpu_t *cpu)
{
    hwloc_topology_t topo;

    memset(cpu, 0, sizeof(*cpu));
    cpu->family = cpu->model = -1;
    if (hwloc_topology_init(&topo) != 0) {
        return -1;
    }
    /* caches and packages are all we read: skip I/O devices (the slow part) */
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    /* x86 hwloc puts CPUVendor/CPUFamilyNumber/CPUModelNumber on packages */
    hwloc_obj_t pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
    const char *v   = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUVendor") : NULL;
    const char *f   = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUFamilyNumber") : NULL;
    const char *m   = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModelNumber") : NULL;
    if (v != NULL) {
        snprintf(cpu->vendor, sizeof(cpu->vendor), "%s", v);
    }
    cpu->family   = f ? atoi(f) : -1;
    cpu->model    = m ? atoi(m) : -1;
    cpu->l2_bytes = first_cache(topo, HWLOC_OBJ_L2CACHE);
    cpu->l3_bytes = first_cache(topo, HWLOC_OBJ_L3CACHE);
    hwloc_topology_destroy(topo);
    return 0;
}
