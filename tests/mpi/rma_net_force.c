/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * WEFT_RMA_NET=native where libfabric RMA cannot serve the window: run with
 * WEFT_RMA_FAKE_PPN so windows span "nodes" while every peer is still
 * reached through shared memory (no netmod). MPI_Win_allocate and
 * MPI_Win_create must fail on every rank with MPI_ERR_OTHER (errors
 * returned on the communicator) and leave no window behind; a dynamic
 * window (always active messages) still works: rank 0 attaches an array,
 * the others read it.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int      rank, size, *base = NULL, mem[8], got[8];
    MPI_Win  win = MPI_WIN_NULL;
    MPI_Aint addr;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    if (size > 1) {
        CHECK_CLASS(MPI_Win_allocate(64, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                    MPI_ERR_OTHER);
        CHECK(win == MPI_WIN_NULL, "a window was returned although creation failed");
        CHECK_CLASS(MPI_Win_create(mem, sizeof(mem), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                   &win),
                    MPI_ERR_OTHER);
        CHECK(win == MPI_WIN_NULL, "a window was returned although creation failed");
    }

    for (int i = 0; i < 8; i++) mem[i] = 500 + i;
    CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    if (rank == 0) {
        CHECK_OK(MPI_Win_attach(win, mem, sizeof(mem)));
    }
    MPI_Get_address(mem, &addr);
    MPI_Bcast(&addr, 1, MPI_AINT, 0, MPI_COMM_WORLD);
    if (rank != 0) {
        CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
        CHECK_OK(MPI_Get(got, 8, MPI_INT, 0, addr, 8, MPI_INT, win));
        CHECK_OK(MPI_Win_unlock(0, win));
        for (int i = 0; i < 8; i++) {
            CHECK(got[i] == 500 + i, "element %d read %d", i, got[i]);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_OK(MPI_Win_detach(win, mem));
    }
    CHECK_OK(MPI_Win_free(&win));
    return mpitest_finish();
}
