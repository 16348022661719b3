/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * coll_nb_first: a non-blocking (or persistent) collective that is the first
 * collective on a new communicator must not wait for the other ranks. Each
 * collective runs on a fresh MPI_Comm_dup in a chain: rank r first receives
 * from r - 1, then starts the collective, then sends to r + 1, and only then
 * waits. A call that blocks until every rank has joined (as making the
 * node's shared-memory region did) deadlocks here; the test's timeout
 * catches it. Every result is checked. Sizes: a small and a medium count,
 * where the rules pick the shared-memory algorithm for blocking calls.
 */
#include "mpitest.h"

#include <stdlib.h>

enum { IBCAST, IALLREDUCE, IREDUCE, IBARRIER, IALLGATHER, IGATHER, ISCATTER, BCAST_INIT,
       ALLREDUCE_INIT, NKINDS };
static const char *const names[NKINDS] = {"MPI_Ibcast",     "MPI_Iallreduce", "MPI_Ireduce",
                                          "MPI_Ibarrier",   "MPI_Iallgather", "MPI_Igather",
                                          "MPI_Iscatter",   "MPI_Bcast_init", "MPI_Allreduce_init"};

static void run(int kind, int count, int rank, int size)
{
    MPI_Comm    comm;
    MPI_Request req;
    int        *a = malloc(sizeof(int) * (size_t)count * (size_t)size);
    int        *b = malloc(sizeof(int) * (size_t)count * (size_t)size);
    int         token = 0;

    for (int i = 0; i < count * size; i++) {
        a[i] = rank * 1000 + i;
        b[i] = -1;
    }
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (rank > 0) {
        CHECK_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    }
    switch (kind) {
    case IBCAST:
        CHECK_OK(MPI_Ibcast(rank == 0 ? a : b, count, MPI_INT, 0, comm, &req));
        break;
    case IALLREDUCE:
        CHECK_OK(MPI_Iallreduce(a, b, count, MPI_INT, MPI_SUM, comm, &req));
        break;
    case IREDUCE:
        CHECK_OK(MPI_Ireduce(a, b, count, MPI_INT, MPI_SUM, 0, comm, &req));
        break;
    case IBARRIER:
        CHECK_OK(MPI_Ibarrier(comm, &req));
        break;
    case IALLGATHER:
        CHECK_OK(MPI_Iallgather(a, count, MPI_INT, b, count, MPI_INT, comm, &req));
        break;
    case IGATHER:
        CHECK_OK(MPI_Igather(a, count, MPI_INT, b, count, MPI_INT, 0, comm, &req));
        break;
    case ISCATTER:
        CHECK_OK(MPI_Iscatter(a, count, MPI_INT, b, count, MPI_INT, 0, comm, &req));
        break;
    case BCAST_INIT:
        CHECK_OK(MPI_Bcast_init(rank == 0 ? a : b, count, MPI_INT, 0, comm, MPI_INFO_NULL, &req));
        CHECK_OK(MPI_Start(&req));
        break;
    case ALLREDUCE_INIT:
        CHECK_OK(MPI_Allreduce_init(a, b, count, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &req));
        CHECK_OK(MPI_Start(&req));
        break;
    }
    if (rank < size - 1) {
        CHECK_OK(MPI_Send(&token, 1, MPI_INT, rank + 1, 5, MPI_COMM_WORLD));
    }
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    if (kind == BCAST_INIT || kind == ALLREDUCE_INIT) {
        CHECK_OK(MPI_Request_free(&req));
    }
    for (int i = 0; i < count; i++) {
        long sum = 0;
        for (int r = 0; r < size; r++) {
            sum += r * 1000 + i;
        }
        switch (kind) {
        case IBCAST:
        case BCAST_INIT:
            if (rank != 0) {
                CHECK(b[i] == i, "%s count %d: element %d is %d", names[kind], count, i, b[i]);
            }
            break;
        case IALLREDUCE:
        case ALLREDUCE_INIT:
            CHECK(b[i] == (int)sum, "%s count %d: element %d is %d, expected %ld", names[kind], count,
                  i, b[i], sum);
            break;
        case IREDUCE:
            if (rank == 0) {
                CHECK(b[i] == (int)sum, "%s count %d: element %d is %d, expected %ld", names[kind],
                      count, i, b[i], sum);
            }
            break;
        case IALLGATHER:
            for (int r = 0; r < size; r++) {
                CHECK(b[r * count + i] == r * 1000 + i, "%s count %d: block %d element %d is %d",
                      names[kind], count, r, i, b[r * count + i]);
            }
            break;
        case IGATHER:
            for (int r = 0; rank == 0 && r < size; r++) {
                CHECK(b[r * count + i] == r * 1000 + i, "%s count %d: block %d element %d is %d",
                      names[kind], count, r, i, b[r * count + i]);
            }
            break;
        case ISCATTER:
            CHECK(b[i] == rank * count + i, "%s count %d: element %d is %d, expected %d", names[kind],
                  count, i, b[i], rank * count + i);
            break;
        }
    }
    /* a blocking collective afterwards still agrees (and may make the region now) */
    int one = 1, total = 0;
    CHECK_OK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm));
    CHECK(total == size, "allreduce after %s: %d", names[kind], total);
    CHECK_OK(MPI_Comm_free(&comm));
    free(a);
    free(b);
}

int main(int argc, char **argv)
{
    int rank, size;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int kind = 0; kind < NKINDS; kind++) {
        run(kind, 4, rank, size);
        run(kind, 4096, rank, size);
    }
    return mpitest_finish();
}
