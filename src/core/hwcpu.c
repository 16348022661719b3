/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The shared host topology and the CPU facts read from it (hwinfo.h).
 */
#include "core/hwinfo.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <hwloc.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "util/hwloc_init.h"

static size_t first_cache(hwloc_topology_t topo, hwloc_obj_type_t type)
{
    hwloc_obj_t o = hwloc_get_obj_by_type(topo, type, 0);
    return o != NULL && o->attr != NULL ? (size_t)o->attr->cache.size : 0;
}

static pthread_mutex_t  topology_lock = PTHREAD_MUTEX_INITIALIZER;
static hwloc_topology_t topology;

hwloc_topology_t weft_hw_topology(void)
{
    hwloc_topology_t t;

    pthread_mutex_lock(&topology_lock);
    if (topology == NULL && weft_hwloc_topology_init(&t) == 0) {
        if (hwloc_topology_load(t) == 0) {
            topology = t;
        } else {
            hwloc_topology_destroy(t);
        }
    }
    t = topology;
    pthread_mutex_unlock(&topology_lock);
    return t;
}

void weft_hw_topology_release(void)
{
    pthread_mutex_lock(&topology_lock);
    if (topology != NULL) {
        hwloc_topology_destroy(topology);
        topology = NULL;
    }
    pthread_mutex_unlock(&topology_lock);
}

int weft_hw_cpu(weft_hw_cpu_t *cpu)
{
    hwloc_topology_t topo = weft_hw_topology();

    memset(cpu, 0, sizeof(*cpu));
    cpu->family = cpu->model = -1;
    if (topo == NULL) {
        return -1;
    }
    /* hwloc puts CPUVendor/CPUFamilyNumber/CPUModelNumber on packages (from
     * /proc/cpuinfo on Linux) */
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
    return 0;
}

int weft_hw_cpu_id(weft_hw_cpu_t *cpu)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d, max_ext;

    if (__get_cpuid(0, &a, &b, &c, &d) && a >= 1) {
        memset(cpu, 0, sizeof(*cpu));
        memcpy(cpu->vendor, &b, 4);
        memcpy(cpu->vendor + 4, &d, 4);
        memcpy(cpu->vendor + 8, &c, 4);
        __get_cpuid(1, &a, &b, &c, &d);
        /* as Linux shows them in /proc/cpuinfo, where hwloc reads them */
        cpu->family = (int)((a >> 8) & 0xf);
        cpu->model  = (int)((a >> 4) & 0xf);
        if (cpu->family == 0xf) {
            cpu->family += (int)((a >> 20) & 0xff);
        }
        if (cpu->family >= 6) {
            cpu->model += (int)((a >> 16) & 0xf) << 4;
        }
        max_ext = __get_cpuid_max(0x80000000u, NULL);
        if (max_ext >= 0x80000006u && __get_cpuid(0x80000006u, &a, &b, &c, &d)) {
            cpu->l2_bytes = (size_t)(c >> 16) << 10; /* KiB per core */
        }
        return 0;
    }
#endif
    return weft_hw_cpu(cpu);
}
