/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Get_hw_resource_info: a new info object the caller frees, with
 * Weft's keys (src/core/hwinfo.c): hwloc_version, cpuset, and per hwloc
 * type the count the process's binding touches and the host's count. The
 * PU count must equal the CPUs of this process's affinity mask, every
 * count must be at least 1 and at most the host's, and the hierarchy must
 * be ordered (PU >= Core >= Package >= Machine). NULL gives MPI_ERR_ARG.
 */
#include <sched.h>

#include "mpitest.h"

static int count_of(MPI_Info info, const char *key)
{
    char buf[64];
    int  buflen = sizeof(buf), flag = 0;

    CHECK_OK(MPI_Info_get_string(info, key, &buflen, buf, &flag));
    return flag ? atoi(buf) : -1;
}

int main(int argc, char **argv)
{
    static const char *types[] = {"Machine", "Package", "Die", "NUMANode", "L3Cache",
                                  "L2Cache", "L1Cache", "Core", "PU"};
    MPI_Info  info;
    char      buf[256], key[64];
    int       buflen = sizeof(buf), flag = 0;
    cpu_set_t cpus;

    MPI_Init(&argc, &argv);
    for (int round = 0; round < 2; round++) { /* the topology is cached after the first */
        CHECK_OK(MPI_Get_hw_resource_info(&info));
        CHECK(info != MPI_INFO_NULL, "no info object");
        CHECK_OK(MPI_Info_get_string(info, "hwloc_version", &buflen, buf, &flag));
        CHECK(flag && buf[0] >= '1' && buf[0] <= '9', "hwloc_version '%s'", flag ? buf : "");
        buflen = sizeof(buf);
        CHECK_OK(MPI_Info_get_string(info, "cpuset", &buflen, buf, &flag));
        CHECK(flag && buf[0] != '\0', "cpuset missing");
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            int mine = count_of(info, types[t]);
            snprintf(key, sizeof(key), "%s_on_host", types[t]);
            int all = count_of(info, key);
            CHECK((mine < 0) == (all < 0), "%s: only one of the two keys", types[t]);
            CHECK(mine < 0 || (mine >= 1 && mine <= all), "%s: %d of %d", types[t], mine, all);
        }
        int pu = count_of(info, "PU"), core = count_of(info, "Core");
        int pkg = count_of(info, "Package"), machine = count_of(info, "Machine");
        CHECK(pu >= 1 && machine == 1, "PU %d Machine %d", pu, machine);
        CHECK(pu >= core && (pkg < 0 || core < 0 || core >= pkg), "PU %d Core %d Package %d", pu,
              core, pkg);
        if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0) {
            CHECK(pu == CPU_COUNT(&cpus), "PU %d but the affinity mask has %d CPUs", pu,
                  CPU_COUNT(&cpus));
        }
        CHECK_OK(MPI_Info_free(&info));
    }
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Get_hw_resource_info(NULL), MPI_ERR_ARG);
    return mpitest_finish();
}
