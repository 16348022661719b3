/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * hwloc_topology_init as every Weft process needs it: CPUs, cores, caches
 * and NUMA nodes from sysfs, never I/O objects or XML. */
#ifndef WEFT_UTIL_HWLOC_INIT_H
#define WEFT_UTIL_HWLOC_INIT_H

#include <hwloc.h>
#include <stdlib.h>

/* The plugins hwloc would dlopen at its first init: on Debian the I/O and
 * XML ones pull in libpciaccess, OpenCL, the X11 client libraries and
 * libxml2 with ICU (about 20 libraries, 10-20 ms of every rank's and
 * proxy's startup). None is needed for what we keep. */
#define WEFT_HWLOC_UNUSED_PLUGINS "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_xml_libxml,hwloc_cuda," \
                                  "hwloc_nvml,hwloc_rsmi,hwloc_levelzero"

/* hwloc_topology_init without the plugins above (unless the user set
 * HWLOC_PLUGINS_BLACKLIST: theirs is kept; the variable is only set for the
 * call, so the application's environment is unchanged), then the filters
 * every caller wants: no I/O objects, and not the x86 backend, which binds
 * itself to each PU in turn to run cpuid and waits for every busy CPU
 * (15-35 ms on a loaded 2-core VM; sysfs gives the same objects). */
static inline int weft_hwloc_topology_init(hwloc_topology_t *topo)
{
    int ours = getenv("HWLOC_PLUGINS_BLACKLIST") == NULL &&
               setenv("HWLOC_PLUGINS_BLACKLIST", WEFT_HWLOC_UNUSED_PLUGINS, 0) == 0;
    int rc   = hwloc_topology_init(topo);

    if (ours) {
        unsetenv("HWLOC_PLUGINS_BLACKLIST");
    }
    if (rc == 0) {
        hwloc_topology_set_components(*topo, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "x86");
        hwloc_topology_set_io_types_filter(*topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    }
    return rc;
}

#endif
