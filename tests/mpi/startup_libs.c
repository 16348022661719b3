/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * startup_libs: MPI_Init must not drag hwloc's I/O and XML plugins into the
 * rank (on Debian they map libpciaccess, OpenCL, the X11 client libraries
 * and libxml2 with ICU: 10-20 ms of startup per rank), and must leave the
 * environment as it found it (HWLOC_PLUGINS_BLACKLIST is only set around
 * Weft's own hwloc init; a value the user set is kept as it is).
 */
#include <stdlib.h>

#include "mpitest.h"

static const char *const unwanted[] = {"libX11", "libOpenCL", "libxml2", "libicuuc", "libpciaccess",
                                       "hwloc_gl", "hwloc_opencl", "hwloc_pci"};

int main(int argc, char **argv)
{
    const char *before = getenv("HWLOC_PLUGINS_BLACKLIST");
    char       *saved  = before ? strdup(before) : NULL;

    MPI_Init(&argc, &argv);
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[4096];
    int   hwloc_seen = 0;
    CHECK(f != NULL, "cannot read /proc/self/maps");
    while (f && fgets(line, sizeof(line), f)) {
        hwloc_seen |= strstr(line, "libhwloc") != NULL;
        if (saved == NULL) { /* a user's own blacklist may let them in */
            for (size_t i = 0; i < sizeof(unwanted) / sizeof(unwanted[0]); i++) {
                CHECK(strstr(line, unwanted[i]) == NULL, "%s is mapped after MPI_Init: %s",
                      unwanted[i], line);
            }
        }
    }
    if (f) {
        fclose(f);
    }
    CHECK(hwloc_seen, "libhwloc is not mapped: the check proves nothing");
    const char *after = getenv("HWLOC_PLUGINS_BLACKLIST");
    if (saved == NULL) {
        CHECK(after == NULL, "MPI_Init left HWLOC_PLUGINS_BLACKLIST=%s in the environment", after);
    } else {
        CHECK(after != NULL && strcmp(after, saved) == 0, "HWLOC_PLUGINS_BLACKLIST was %s, now %s",
              saved, after ? after : "(unset)");
    }
    free(saved);
    return mpitest_finish();
}
