/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Get_hw_resource_info (MPI-4.1): the hardware the calling process is
 * running on at the moment of the call, from hwloc. The keys are Weft's own
 * (values decimal, or an hwloc list string):
 *   hwloc_version          hwloc library version
 *   cpuset                 PUs (OS indexes) the process may run on now
 *   <Type>                 objects of that hwloc type the process's cpuset
 *                          touches: Machine, Package, Die, NUMANode, L3Cache,
 *                          L2Cache, L1Cache, Core, PU (types the machine has)
 *   <Type>_on_host         the same count over the whole host
 * The topology is the process's shared one (core/hwinfo.h).
 */
#include <stdio.h>
#include <hwloc.h>

#include "api_impl.h"
#include "core/errors.h"
#include "core/hwinfo.h"
#include "core/info.h"
#include "core/runtime.h"

static int put_count(weft_info_t *in, const char *key, int n)
{
    char v[24];
    snprintf(v, sizeof(v), "%d", n);
    return weft_info_put(in, key, v);
}

int weft_get_hw_resource_info_impl(MPI_Info *hw_info)
{
    static const hwloc_obj_type_t types[] = {
        HWLOC_OBJ_MACHINE, HWLOC_OBJ_PACKAGE, HWLOC_OBJ_DIE,     HWLOC_OBJ_NUMANODE,
        HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE, HWLOC_OBJ_CORE,
        HWLOC_OBJ_PU};
    hwloc_bitmap_t set;
    weft_info_t   *in;
    char           buf[1024], key[64];
    int            rc = MPI_SUCCESS;
    unsigned       v  = hwloc_get_api_version();

    hwloc_topology_t topo = weft_hw_topology();

    if (topo == NULL) {
        return weft_error(MPI_ERR_OTHER, "MPI_Get_hw_resource_info: hwloc could not load the "
                                         "host topology");
    }
    if ((set = hwloc_bitmap_alloc()) == NULL || (in = weft_info_new()) == NULL) {
        hwloc_bitmap_free(set);
        return weft_error(MPI_ERR_NO_MEM, "no memory for the hardware description");
    }
    /* where we may run now; a failing query (no binding support) means anywhere */
    if (hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(set)) {
        hwloc_bitmap_copy(set, hwloc_topology_get_allowed_cpuset(topo));
    }
    snprintf(buf, sizeof(buf), "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
    rc |= weft_info_put(in, "hwloc_version", buf);
    hwloc_bitmap_list_snprintf(buf, sizeof(buf), set);
    rc |= weft_info_put(in, "cpuset", buf);
    for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
        int depth = hwloc_get_type_depth(topo, types[t]);
        int mine = 0, all;
        if (depth == HWLOC_TYPE_DEPTH_UNKNOWN || depth == HWLOC_TYPE_DEPTH_MULTIPLE) {
            continue; /* this machine has none (or hwloc cannot place them in one level) */
        }
        all = hwloc_get_nbobjs_by_depth(topo, depth);
        for (int i = 0; i < all; i++) {
            hwloc_obj_t o = hwloc_get_obj_by_depth(topo, depth, (unsigned)i);
            mine += o->cpuset != NULL && hwloc_bitmap_intersects(o->cpuset, set);
        }
        rc |= put_count(in, hwloc_obj_type_string(types[t]), mine);
        snprintf(key, sizeof(key), "%s_on_host", hwloc_obj_type_string(types[t]));
        rc |= put_count(in, key, all);
    }
    hwloc_bitmap_free(set);
    if (rc != MPI_SUCCESS) {
        weft_info_release(in);
        return weft_error(MPI_ERR_NO_MEM, "no memory for the hardware description");
    }
    *hw_info = (MPI_Info)in;
    return MPI_SUCCESS;
}

