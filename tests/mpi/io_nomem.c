/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-phase I/O running out of memory on one rank (the aggregator) must fail
 * the collective call on every rank with MPI_ERR_NO_MEM, never leave the others
 * waiting. One aggregator (cb_nodes=1), collective buffering forced, a
 * cb_buffer_size hint of 1 PiB, and ranks writing 8 bytes each 4 TiB apart:
 * the aggregator's collective buffer would span the holes (4 TiB x (n-1)),
 * more than this machine can allocate. Afterwards the file still works with
 * a sane hint, and nothing was written by the failed call.
 * Skips (prints why) where malloc overcommits without limit
 * (vm.overcommit_memory=1): there the allocation might succeed.
 */
#include "mpitest.h"
#include "io_util.h"

#define GAP ((MPI_Offset)1 << 42)

int main(int argc, char **argv)
{
    char       path[600];
    MPI_File   fh;
    MPI_Info   info;
    MPI_Offset size;
    int        rank, nprocs, overcommit = 0;
    long long  v, back;
    FILE      *f;

    (void)io_slurp; /* io_util.h helper this test does not need */
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if ((f = fopen("/proc/sys/vm/overcommit_memory", "r")) != NULL) {
        if (fscanf(f, "%d", &overcommit) != 1) {
            overcommit = 0;
        }
        fclose(f);
    }
    if (overcommit == 1 || nprocs == 1) {
        if (rank == 0) {
            printf("skip: %s\nNo Errors\n", nprocs == 1 ? "one rank never aggregates (independent I/O)"
                                                         : "vm.overcommit_memory=1: a 4 TiB malloc may succeed");
        }
        MPI_Finalize();
        return 0;
    }
    io_dir_make();
    io_path(path, sizeof(path), "nomem.dat");
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1125899906842624");
    MPI_Info_set(info, "cb_nodes", "1");
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    v = 1000 + rank;
    for (int round = 0; round < 2; round++) { /* twice: the failure leaves nothing half-done */
        CHECK_CLASS(MPI_File_write_at_all(fh, (MPI_Offset)rank * GAP, &v, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE),
                    MPI_ERR_NO_MEM);
        CHECK_CLASS(MPI_File_read_at_all(fh, (MPI_Offset)rank * GAP, &back, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE),
                    MPI_ERR_NO_MEM);
    }
    CHECK_OK(MPI_File_get_size(fh, &size));
    CHECK(size == 0, "the failed write changed the file: size %lld", (long long)size);
    /* the same file with a sane buffer works */
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    CHECK_OK(MPI_File_set_info(fh, info));
    CHECK_OK(MPI_File_write_at_all(fh, (MPI_Offset)rank * 8, &v, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE));
    back = -1;
    CHECK_OK(MPI_File_read_at_all(fh, (MPI_Offset)rank * 8, &back, 1, MPI_LONG_LONG, MPI_STATUS_IGNORE));
    CHECK(back == v, "read back %lld, wrote %lld", back, v);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    io_dir_remove();
    return mpitest_finish();
}
