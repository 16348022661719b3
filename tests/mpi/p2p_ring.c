/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * A token ring at eager and rendezvous sizes, then an allreduce and an RMA
 * fetch_and_op counter: the smallest program that exercises every path
 * between hosts (tests/launcher/test_remote.py runs it across network
 * namespace hosts started by the launcher; the manifest runs it on one).
 * Every rank checks every byte it receives and the reduced values.
 */
#include "mpitest.h"

static void ring_pass(int rank, int size, size_t n)
{
    unsigned char *buf = malloc(n ? n : 1);
    int            left = (rank + size - 1) % size, right = (rank + 1) % size;

    CHECK(buf != NULL, "no memory for %zu bytes", n);
    if (buf == NULL) {
        return;
    }
    if (rank == 0) {
        for (size_t i = 0; i < n; i++) {
            buf[i] = (unsigned char)(i * 7 + n);
        }
        CHECK_OK(MPI_Send(buf, (int)n, MPI_BYTE, right, 1, MPI_COMM_WORLD));
        memset(buf, 0, n);
        CHECK_OK(MPI_Recv(buf, (int)n, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        CHECK_OK(MPI_Recv(buf, (int)n, MPI_BYTE, left, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Send(buf, (int)n, MPI_BYTE, right, 1, MPI_COMM_WORLD));
    }
    size_t bad = 0;
    for (size_t i = 0; i < n; i++) {
        bad += buf[i] != (unsigned char)(i * 7 + n);
    }
    CHECK(bad == 0, "%zu of %zu bytes wrong after the ring", bad, n);
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    static const size_t sizes[] = {0, 8, 1024, 65536, 1 << 20};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            ring_pass(rank, size, sizes[i]);
        }
    }

    long mine = rank + 1, sum = 0;
    CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
    CHECK(sum == (long)size * (size + 1) / 2, "allreduce sum %ld", sum);

    long   *counter, one = 1, old = -1;
    MPI_Win win;
    CHECK_OK(MPI_Win_allocate(sizeof(long), sizeof(long), MPI_INFO_NULL, MPI_COMM_WORLD, &counter,
                              &win));
    *counter = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
    for (int i = 0; i < 100; i++) {
        CHECK_OK(MPI_Fetch_and_op(&one, &old, MPI_LONG, 0, 0, MPI_SUM, win));
    }
    CHECK_OK(MPI_Win_unlock(0, win));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win));
        CHECK(*counter == 100L * size, "counter %ld, want %ld", *counter, 100L * size);
        CHECK_OK(MPI_Win_unlock(0, win));
    }
    CHECK_OK(MPI_Win_free(&win));
    return mpitest_finish();
}
