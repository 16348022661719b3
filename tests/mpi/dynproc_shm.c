/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Spawned children on the parents' host reach them through shared memory:
 *   - the parents spawn N children (argv[1], default 2) of this program;
 *   - every parent and child swap messages of 0 B .. 4 MiB both ways
 *     (eager, rendezvous single-copy or pipeline, cooperative copy) and
 *     compare them byte for byte, then an MPI_Intercomm_merge allreduce;
 *   - a child checks /proc/self/maps: libfabric must not be mapped (a
 *     same-host spawn never opens the netmod), unless WEFT_NETMOD_ONLY=1 or
 *     WEFT_DYN_SHM=0 were asked for, where it must be (the check works);
 *     a parent of a one-host job checks the same.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

static const size_t sizes[] = {0,    1,     7,      64,      1000,    4096,
                               65536, 200000, 1 << 20, 3000001, 4 << 20};

static int env_is(const char *name, const char *value)
{
    const char *v = getenv(name);
    return v != NULL && strcmp(v, value) == 0;
}

/* libfabric mapped into this process. */
static int fabric_mapped(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[4096];
    int   found = 0;

    if (f == NULL) {
        return -1;
    }
    while (!found && fgets(line, sizeof(line), f)) {
        found = strstr(line, "libfabric") != NULL;
    }
    fclose(f);
    return found;
}

static void check_fabric(const char *who)
{
    int want = env_is("WEFT_NETMOD_ONLY", "1") || env_is("WEFT_DYN_SHM", "0");
    int got  = fabric_mapped();

    CHECK(got >= 0, "%s: cannot read /proc/self/maps", who);
    CHECK(got == want, "%s: libfabric %s mapped, expected %s", who, got ? "is" : "is not",
          want ? "mapped" : "not mapped");
}

static unsigned char byte_at(size_t i, int from, int to, size_t len)
{
    return (unsigned char)((i * 131u + (size_t)from * 17u + (size_t)to * 29u + len) & 0xff);
}

/* Both ways with every remote process, every size. */
static void swap_all(MPI_Comm inter, int is_parent)
{
    int            rank, rsize;
    unsigned char *out = malloc(4 << 20), *in = malloc(4 << 20);

    CHECK(out != NULL && in != NULL, "no memory");
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    for (int r = 0; r < rsize; r++) {
        int me = is_parent ? rank : 1000 + rank, them = is_parent ? 1000 + r : r;
        for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
            size_t     len = sizes[k];
            MPI_Status st;
            int        count = -1;
            for (size_t i = 0; i < len; i++) {
                out[i] = byte_at(i, me, them, len);
            }
            memset(in, 0xee, len + 1 <= (4u << 20) ? len + 1 : len);
            CHECK_OK(MPI_Sendrecv(out, (int)len, MPI_BYTE, r, (int)k, in, (int)len, MPI_BYTE, r,
                                  (int)k, inter, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)len && st.MPI_SOURCE == r && st.MPI_TAG == (int)k,
                  "%zu bytes from %d: count %d source %d tag %d", len, r, count, st.MPI_SOURCE,
                  st.MPI_TAG);
            for (size_t i = 0; i < len; i++) {
                if (in[i] != byte_at(i, them, me, len)) {
                    CHECK(0, "%zu bytes from remote %d: byte %zu is %u, expected %u", len, r, i,
                          in[i], byte_at(i, them, me, len));
                    break;
                }
            }
        }
    }
    free(out);
    free(in);
}

static void merged_sum(MPI_Comm inter, int is_parent)
{
    MPI_Comm merged;
    int      size, rsize, one = 1, sum = 0;

    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    CHECK_OK(MPI_Intercomm_merge(inter, !is_parent, &merged));
    CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged));
    CHECK(sum == size + rsize, "merged allreduce %d, expected %d", sum, size + rsize);
    MPI_Comm_free(&merged);
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    char     self[PATH_MAX];
    int      n = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 2;

    MPI_Init(&argc, &argv);
    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) {
        check_fabric("child");
        swap_all(parent, 0);
        merged_sum(parent, 0);
        CHECK_OK(MPI_Comm_disconnect(&parent));
        return mpitest_finish();
    }
    if (realpath(argv[0], self) == NULL) {
        snprintf(self, sizeof(self), "%s", argv[0]);
    }
    char *args[] = {"child", NULL};
    int  *codes  = malloc(sizeof(int) * (size_t)n);
    CHECK_OK(MPI_Comm_spawn(self, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes));
    for (int i = 0; i < n; i++) {
        CHECK(codes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, codes[i]);
    }
    free(codes);
    if (getenv("WEFT_TEST_HOST_BLOCK") == NULL) {
        check_fabric("parent");
    }
    swap_all(inter, 1);
    merged_sum(inter, 1);
    CHECK_OK(MPI_Comm_disconnect(&inter));
    return mpitest_finish();
}
