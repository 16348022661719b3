/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The shared-memory collectives (src/coll/shm, alltoall included) next to everything that can
 * disturb them: a non-blocking collective and a large point-to-point
 * message in flight across blocking shm calls on the same communicator;
 * communicators created and freed in a loop (each makes and drops its own
 * region; none may be left in /dev/shm); split communicators whose regions
 * live side by side; many back-to-back calls whose double buffers wrap
 * while roots change. Every result is checked against a local reference.
 */
#include <dirent.h>
#include <unistd.h>

#include "mpitest.h"

static int rank, size;

static long coll_regions_of(long pid)
{
    char           prefix[64];
    long           n = 0;
    DIR           *d = opendir("/dev/shm");
    struct dirent *e;
    snprintf(prefix, sizeof(prefix), "weft-coll-%ld-", pid);
    while (d && (e = readdir(d)) != NULL) {
        n += strncmp(e->d_name, prefix, strlen(prefix)) == 0;
    }
    if (d) {
        closedir(d);
    }
    return n;
}

/* bcast + allreduce + reduce + allgather + gather + barrier on comm, with
 * root and sizes varying with iteration it. */
static void round_of_calls(MPI_Comm comm, int it)
{
    int me, n;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    int   root  = it % n;
    long  count = (it % 3 == 0) ? 3 : (it % 3 == 1) ? 1000 : 40000; /* inline, slot, rounds */
    long *a = malloc((size_t)count * sizeof(long)), *b = malloc((size_t)count * sizeof(long));
    long *g = malloc((size_t)count * (size_t)n * sizeof(long));

    for (long i = 0; i < count; i++) {
        a[i] = me == root ? it * 100000L + i : -1;
    }
    CHECK_OK(MPI_Bcast(a, (int)count, MPI_LONG, root, comm));
    for (long i = 0; i < count; i++) {
        CHECK(a[i] == it * 100000L + i, "bcast it %d elem %ld: %ld", it, i, a[i]);
        a[i] = me + i + it;
    }
    CHECK_OK(MPI_Allreduce(a, b, (int)count, MPI_LONG, MPI_SUM, comm));
    for (long i = 0; i < count; i++) {
        long want = (long)n * (n - 1) / 2 + (long)n * (i + it);
        CHECK(b[i] == want, "allreduce it %d elem %ld: %ld want %ld", it, i, b[i], want);
    }
    CHECK_OK(MPI_Reduce(a, b, (int)count, MPI_LONG, MPI_MAX, root, comm));
    if (me == root) {
        for (long i = 0; i < count; i++) {
            CHECK(b[i] == n - 1 + i + it, "reduce it %d elem %ld: %ld", it, i, b[i]);
        }
    }
    CHECK_OK(MPI_Allgather(a, (int)count, MPI_LONG, g, (int)count, MPI_LONG, comm));
    for (int r = 0; r < n; r++) {
        for (long i = 0; i < count; i += 97) {
            CHECK(g[r * count + i] == r + i + it, "allgather it %d from %d elem %ld", it, r, i);
        }
    }
    memset(g, 0, (size_t)count * (size_t)n * sizeof(long));
    CHECK_OK(MPI_Gather(a, (int)count, MPI_LONG, g, (int)count, MPI_LONG, root, comm));
    if (me == root) {
        for (int r = 0; r < n; r++) {
            CHECK(g[r * count + count - 1] == r + count - 1 + it, "gather it %d from %d", it, r);
        }
    }
    /* alltoall, then in place: block r of rank me carries (me, r, i) */
    long *t = malloc((size_t)count * (size_t)n * sizeof(long));
    for (int r = 0; r < n; r++) {
        for (long i = 0; i < count; i++) {
            t[r * count + i] = (long)me * 1000003L + r * 1009L + i + it;
        }
    }
    CHECK_OK(MPI_Alltoall(t, (int)count, MPI_LONG, g, (int)count, MPI_LONG, comm));
    CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, t, (int)count, MPI_LONG, comm));
    for (int r = 0; r < n; r++) {
        for (long i = 0; i < count; i += 61) {
            long want = (long)r * 1000003L + me * 1009L + i + it;
            CHECK(g[r * count + i] == want, "alltoall it %d from %d elem %ld", it, r, i);
            CHECK(t[r * count + i] == want, "alltoall in place it %d from %d elem %ld", it, r, i);
        }
    }
    free(t);
    CHECK_OK(MPI_Barrier(comm));
    free(a);
    free(b);
    free(g);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long leader_pid = getpid();
    MPI_Bcast(&leader_pid, 1, MPI_LONG, 0, MPI_COMM_WORLD);

    /* 1. many calls on one communicator: buffers wrap, roots move */
    for (int it = 0; it < 60; it++) {
        round_of_calls(MPI_COMM_WORLD, it);
    }

    /* 2. a non-blocking collective and a rendezvous message in flight */
    {
        const int big = 1 << 20;
        char     *s = malloc(big), *r = malloc(big);
        int       v = rank, sum = -1;
        MPI_Request req[3];
        int         right = (rank + 1) % size, left = (rank + size - 1) % size;
        mpitest_fill(s, big, (unsigned)rank);
        CHECK_OK(MPI_Iallreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]));
        CHECK_OK(MPI_Irecv(r, big, MPI_BYTE, left, 5, MPI_COMM_WORLD, &req[1]));
        CHECK_OK(MPI_Isend(s, big, MPI_BYTE, right, 5, MPI_COMM_WORLD, &req[2]));
        for (int it = 0; it < 5; it++) {
            round_of_calls(MPI_COMM_WORLD, 100 + it);
        }
        CHECK_OK(MPI_Waitall(3, req, MPI_STATUSES_IGNORE));
        CHECK(sum == size * (size - 1) / 2, "iallreduce %d", sum);
        CHECK(mpitest_verify(r, big, (unsigned)left) < 0, "rendezvous payload from %d", left);
        free(s);
        free(r);
    }

    /* 3. communicators made and freed: each region must go away */
    for (int it = 0; it < 40; it++) {
        MPI_Comm dup;
        CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
        round_of_calls(dup, it);
        CHECK_OK(MPI_Comm_free(&dup));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(coll_regions_of(leader_pid) == 0, "%ld collective regions left in /dev/shm",
          coll_regions_of(leader_pid));

    /* 4. two halves with regions side by side, interleaved with the parent */
    {
        MPI_Comm half;
        CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
        for (int it = 0; it < 12; it++) {
            round_of_calls(half, it);
            round_of_calls(MPI_COMM_WORLD, it + 7);
        }
        CHECK_OK(MPI_Comm_free(&half));
    }
    return mpitest_finish();
}
