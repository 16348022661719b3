/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Passive-target put/get across hosts while the target computes: the last
 * rank sits in a loop that makes no MPI call (it watches its own window
 * memory for a flag, up to argv[2] seconds, default 10); rank 0 opens a
 * lock_all epoch with MPI_MODE_NOCHECK (no lock messages), puts a block
 * of 4 KiB and a strided vector, gets them back, flushes, then issues
 * NPUTS small puts from a strided (packed) origin type before one flush,
 * puts the flag and closes the epoch. Data is compared byte for byte in
 * every mode.
 *
 * argv[1]: "expect" - the flag must arrive while the target still computes
 * (the provider progresses RMA without the target: truly one-sided);
 * "report" - print whether it did (a provider with manual data progress,
 * such as tcp;ofi_rxm, moves the data only once the target polls again).
 */
#include <time.h>

#include "mpitest.h"

#define BLOCK 4096
#define NVEC  16
#define NPUTS 200 /* 16-byte puts in flight before one flush */

int main(int argc, char **argv)
{
    int            rank, size, target, expect = argc > 1 && strcmp(argv[1], "expect") == 0;
    double         limit = argc > 2 ? atof(argv[2]) : 10.0;
    unsigned char *mem;
    MPI_Win        win;
    MPI_Datatype   vec, ovec;
    const MPI_Aint many_at = BLOCK + 2 * NVEC * (MPI_Aint)sizeof(int);
    const MPI_Aint flag_at = many_at + NPUTS * 4 * (MPI_Aint)sizeof(int);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    target = size - 1;
    CHECK_OK(MPI_Win_allocate(flag_at + (MPI_Aint)sizeof(int), 1, MPI_INFO_NULL, MPI_COMM_WORLD,
                              &mem, &win));
    memset(mem, 0, (size_t)flag_at + sizeof(int));
    MPI_Type_vector(NVEC, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_vector(4, 1, 2, MPI_INT, &ovec);
    MPI_Type_commit(&ovec);
    MPI_Barrier(MPI_COMM_WORLD);

    if (size > 1 && rank == target) {
        volatile int *flag = (volatile int *)(mem + flag_at);
        double        t0 = mpitest_now(), x = 1.0, took;
        while (*flag != 1 && mpitest_now() - t0 < limit) {
            for (int k = 0; k < 1000; k++) x = x * 1.0000001 + 1e-9; /* compute, no MPI */
        }
        took = mpitest_now() - t0;
        if (expect) {
            CHECK(*flag == 1, "the origin's epoch did not finish within %.0f s while the target "
                  "computed (x=%g)", limit, x);
        }
        printf("rma_net_onesided: the origin's put/get %s while the target computed "
               "(%.3f s)\n", *flag == 1 ? "completed" : "did NOT complete", took);
        fflush(stdout);
    } else if (size > 1 && rank == 0) {
        unsigned char out[BLOCK], in[BLOCK];
        int           vals[NVEC], got[NVEC], one = 1;
        mpitest_fill(out, BLOCK, 7);
        for (int i = 0; i < NVEC; i++) vals[i] = 1000 + i;
        CHECK_OK(MPI_Win_lock_all(MPI_MODE_NOCHECK, win));
        CHECK_OK(MPI_Put(out, BLOCK, MPI_BYTE, target, 0, BLOCK, MPI_BYTE, win));
        CHECK_OK(MPI_Put(vals, NVEC, MPI_INT, target, BLOCK, 1, vec, win));
        CHECK_OK(MPI_Win_flush(target, win));
        CHECK_OK(MPI_Get(in, BLOCK, MPI_BYTE, target, 0, BLOCK, MPI_BYTE, win));
        CHECK_OK(MPI_Get(got, NVEC, MPI_INT, target, BLOCK, 1, vec, win));
        CHECK_OK(MPI_Win_flush(target, win));
        CHECK(mpitest_verify(in, BLOCK, 7) < 0, "block read back differs at %ld",
              mpitest_verify(in, BLOCK, 7));
        for (int i = 0; i < NVEC; i++) {
            CHECK(got[i] == 1000 + i, "vector element %d read back %d", i, got[i]);
        }
        int src[NPUTS][8];
        for (int k = 0; k < NPUTS; k++) {
            for (int j = 0; j < 8; j++) src[k][j] = j % 2 ? -1 : k * 10 + j / 2;
            /* origin: every other int of src[k] (packed by the library) */
            CHECK_OK(MPI_Put(src[k], 1, ovec, target, many_at + k * 4 * (MPI_Aint)sizeof(int), 4,
                             MPI_INT, win));
        }
        CHECK_OK(MPI_Win_flush(target, win));
        CHECK_OK(MPI_Put(&one, 1, MPI_INT, target, flag_at, 1, MPI_INT, win));
        CHECK_OK(MPI_Win_unlock_all(win));
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1 && rank == target) { /* what landed, and nothing else */
        const int *v = (const int *)(mem + BLOCK);
        CHECK(mpitest_verify(mem, BLOCK, 7) < 0, "block differs at %ld",
              mpitest_verify(mem, BLOCK, 7));
        for (int i = 0; i < NVEC; i++) {
            CHECK(v[2 * i] == 1000 + i && v[2 * i + 1] == 0, "vector slot %d: %d, gap %d", i,
                  v[2 * i], v[2 * i + 1]);
        }
        const int *m = (const int *)(mem + many_at);
        for (int k = 0; k < NPUTS; k++) {
            for (int j = 0; j < 4; j++) {
                CHECK(m[4 * k + j] == k * 10 + j, "small put %d element %d: %d", k, j,
                      m[4 * k + j]);
            }
        }
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&ovec);
    CHECK_OK(MPI_Win_free(&win));
    return mpitest_finish();
}
