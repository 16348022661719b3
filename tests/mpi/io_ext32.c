/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * external32 file views of types whose external32 size differs from the
 * native one (MPI_LONG: 8 bytes native on LP64, 4 in external32) or whose
 * format differs (long double: x87 extended in memory, IEEE binary128 in the
 * file). Each rank owns blocks of 2 elements, interleaved over the ranks
 * (a vector filetype of the etype), written collectively and independently;
 * rank 0 then checks the file byte for byte against the standard layout built
 * by hand (4-byte big-endian integers at external32 offsets), every rank
 * reads its own blocks back, and MPI_File_get_type_extent answers in file
 * bytes. A filetype cut inside an etype has no external32 layout:
 * MPI_ERR_UNSUPPORTED_DATAREP.
 */
#include <stdint.h>
#include "mpitest.h"
#include "io_util.h"

#define BLOCKS 3 /* blocks of 2 elements per rank */

static int rank, nprocs;

static void check_long(const char *path, int collective)
{
    MPI_File     fh;
    MPI_Datatype ft;
    long         v[2 * BLOCKS], w[2 * BLOCKS];
    MPI_Aint     ext;
    MPI_Status   st;
    int          count;

    for (int i = 0; i < 2 * BLOCKS; i++) {
        v[i] = (rank % 2 ? -1L : 1L) * (1000L * rank + i * 7 + 1); /* negatives: sign in 4 bytes */
    }
    MPI_Type_vector(BLOCKS, 2, 2 * nprocs, MPI_LONG, &ft);
    MPI_Type_commit(&ft);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 16 + 2 * 4 * rank, MPI_LONG, ft, "external32", MPI_INFO_NULL));
    CHECK_OK(MPI_File_get_type_extent(fh, MPI_LONG, &ext));
    CHECK(ext == 4, "external32 extent of MPI_LONG is %ld, want 4", (long)ext);
    if (collective) {
        CHECK_OK(MPI_File_write_at_all(fh, 0, v, 2 * BLOCKS, MPI_LONG, &st));
    } else {
        CHECK_OK(MPI_File_write_at(fh, 0, v, 2 * BLOCKS, MPI_LONG, &st));
    }
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK(count == 2 * BLOCKS, "write status count %d", count);
    MPI_File_sync(fh);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        long           len;
        unsigned char *b = io_slurp(path, &len);
        CHECK(len == 16 + (long)BLOCKS * 2 * nprocs * 4 - 0, "file size %ld, want %ld", len,
              16 + (long)BLOCKS * 2 * nprocs * 4);
        for (int r = 0; b && r < nprocs; r++) {
            for (int i = 0; i < 2 * BLOCKS; i++) {
                long          want = (r % 2 ? -1L : 1L) * (1000L * r + i * 7 + 1);
                uint32_t      u    = (uint32_t)(int32_t)want;
                unsigned char be[4] = {(unsigned char)(u >> 24), (unsigned char)(u >> 16), (unsigned char)(u >> 8),
                                       (unsigned char)u};
                long          at    = 16 + ((long)(i / 2) * 2 * nprocs + 2L * r + i % 2) * 4;
                CHECK(at + 4 <= len && !memcmp(b + at, be, 4), "rank %d element %d at byte %ld is not %ld as "
                      "4-byte big-endian", r, i, at, want);
            }
        }
        free(b);
    }
    memset(w, 0, sizeof(w));
    if (collective) {
        CHECK_OK(MPI_File_read_at_all(fh, 0, w, 2 * BLOCKS, MPI_LONG, &st));
    } else {
        CHECK_OK(MPI_File_read_at(fh, 0, w, 2 * BLOCKS, MPI_LONG, &st));
    }
    MPI_Get_count(&st, MPI_LONG, &count);
    CHECK(count == 2 * BLOCKS && !memcmp(v, w, sizeof(v)), "MPI_LONG read back differs (count %d)", count);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

static void check_long_double(const char *path)
{
    MPI_File     fh;
    MPI_Datatype ft;
    long double  v[2 * BLOCKS], w[2 * BLOCKS];
    MPI_Aint     ext;

    for (int i = 0; i < 2 * BLOCKS; i++) {
        v[i] = (long double)(rank + 1) / 3.0L + (long double)i * 1e300L;
    }
    MPI_Type_vector(BLOCKS, 2, 2 * nprocs, MPI_LONG_DOUBLE, &ft);
    MPI_Type_commit(&ft);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 2 * 16 * rank, MPI_LONG_DOUBLE, ft, "external32", MPI_INFO_NULL));
    CHECK_OK(MPI_File_get_type_extent(fh, MPI_LONG_DOUBLE, &ext));
    CHECK(ext == 16, "external32 extent of MPI_LONG_DOUBLE is %ld, want 16", (long)ext);
    CHECK_OK(MPI_File_write_at_all(fh, 0, v, 2 * BLOCKS, MPI_LONG_DOUBLE, MPI_STATUS_IGNORE));
    memset(w, 0, sizeof(w));
    CHECK_OK(MPI_File_read_at_all(fh, 0, w, 2 * BLOCKS, MPI_LONG_DOUBLE, MPI_STATUS_IGNORE));
    for (int i = 0; i < 2 * BLOCKS; i++) {
        CHECK(v[i] == w[i], "long double %d read back %Lg, wrote %Lg", i, w[i], v[i]);
    }
    if (rank == 0) {
        /* 1/3 in binary128: sign 0, exponent 0x3ffd, fraction 0x5555...: bytes 3f fd 55 55 */
        long           len;
        unsigned char *b = io_slurp(path, &len);
        CHECK(b && len >= 16 && b[0] == 0x3f && b[1] == 0xfd && b[2] == 0x55 && b[3] == 0x55,
              "1/3 is not IEEE binary128 big-endian in the file");
        free(b);
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

static void check_unportable(const char *path)
{
    MPI_File     fh;
    MPI_Datatype ft;
    int          blen[2] = {1, 1};
    MPI_Aint     disp[2] = {0, 12}; /* second MPI_LONG starts inside the first etype slot */

    MPI_Type_create_hindexed(2, blen, disp, MPI_LONG, &ft);
    MPI_Type_commit(&ft);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_LONG, ft, "external32", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_LONG, ft, "native", MPI_INFO_NULL)); /* fine natively */
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&ft);
}

int main(int argc, char **argv)
{
    char path[600];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (sizeof(long) != 8) {
        if (rank == 0) {
            printf("skip: long is not 8 bytes here\nNo Errors\n");
        }
        MPI_Finalize();
        return 0;
    }
    io_dir_make();
    io_path(path, sizeof(path), "long_coll.dat");
    check_long(path, 1);
    io_path(path, sizeof(path), "long_indep.dat");
    check_long(path, 0);
    io_path(path, sizeof(path), "ldouble.dat");
    check_long_double(path);
    io_path(path, sizeof(path), "unportable.dat");
    check_unportable(path);
    io_dir_remove();
    return mpitest_finish();
}
