/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * File views whose filetype's data does not start at byte 0 of its extent,
 * as parallel HDF5 builds them: an hindexed type of absolute file addresses
 * (lower bound > 0) under a view at displacement 0, a struct with one block
 * far from 0, a resized type whose data lies below its lower bound. Each is
 * written collectively (two-phase forced) and independently, checked against
 * a POSIX reference and read back; byte offsets are checked; a filetype whose
 * data spans more than its extent gives MPI_ERR_TYPE.
 */
#include "mpitest.h"
#include "io_util.h"

#define HDR  4096 /* first data byte of the hindexed filetypes */
#define BLK  300  /* bytes per block (not a power of two on purpose) */
#define NBLK 7

static int rank, nprocs;

static unsigned char val(long off)
{
    return (unsigned char)(off * 13 + 5);
}

/* Rank r owns blocks k*np + r: the same layout, collective or not. */
static MPI_Datatype hindexed_filetype(void)
{
    int          lens[NBLK];
    MPI_Aint     disps[NBLK];
    MPI_Datatype t;

    for (int k = 0; k < NBLK; k++) {
        lens[k]  = BLK - (k % 3) * 10;
        disps[k] = HDR + (MPI_Aint)(k * nprocs + rank) * BLK;
    }
    CHECK_OK(MPI_Type_create_hindexed(NBLK, lens, disps, MPI_BYTE, &t));
    CHECK_OK(MPI_Type_commit(&t));
    return t;
}

static void check_file(const char *path, const unsigned char *ref, long n, const char *what)
{
    long           len;
    unsigned char *got;

    if (rank != 0) {
        return;
    }
    got = io_slurp(path, &len);
    CHECK(got != NULL && len == n, "%s: file size %ld, want %ld", what, len, n);
    if (got != NULL && len == n) {
        long bad = 0;
        for (long i = 0; i < n; i++) {
            if (got[i] != ref[i] && bad++ == 0) {
                CHECK(0, "%s: file byte %ld is %d, want %d", what, i, got[i], ref[i]);
            }
        }
        CHECK(bad == 0, "%s: %ld bytes differ", what, bad);
    }
    free(got);
}

/* HDF5's pattern: view (0, MPI_BYTE, hindexed of addresses), then one
 * write_at(_all) at offset 0 of all the selected bytes. */
static void test_hindexed(int collective)
{
    const char   *what = collective ? "hindexed write_at_all" : "hindexed write_at";
    char          path[600];
    long          n = HDR + (long)NBLK * nprocs * BLK, mine = 0;
    unsigned char *ref = calloc(n, 1), *buf = malloc(NBLK * BLK), *back = malloc(NBLK * BLK);
    MPI_Datatype  ft = hindexed_filetype();
    MPI_File      fh;
    MPI_Info      info;
    MPI_Offset    byte;
    MPI_Status    st;
    int           cnt = -1;

    for (int r = 0; r < nprocs; r++) {
        for (int k = 0; k < NBLK; k++) {
            long at = HDR + (long)(k * nprocs + r) * BLK, len = BLK - (k % 3) * 10;
            for (long i = 0; i < len; i++) {
                ref[at + i] = val(at + i);
                if (r == rank) {
                    buf[mine++] = val(at + i);
                }
            }
        }
    }
    /* The file ends with the last rank's last block. */
    n = HDR + (long)((NBLK - 1) * nprocs + nprocs - 1) * BLK + BLK - ((NBLK - 1) % 3) * 10;
    io_path(path, sizeof(path), collective ? "hind_coll" : "hind_ind");
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", collective ? "enable" : "disable");
    MPI_Info_set(info, "romio_cb_read", collective ? "enable" : "disable");
    MPI_Info_set(info, "cb_buffer_size", "1024"); /* several two-phase rounds */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_BYTE, ft, "native", info));
    CHECK_OK(MPI_File_get_byte_offset(fh, 0, &byte));
    CHECK(byte == HDR + (MPI_Offset)rank * BLK, "%s: byte offset of 0 is %lld, want %lld", what,
          (long long)byte, (long long)(HDR + rank * BLK));
    CHECK_OK(MPI_File_get_byte_offset(fh, BLK + 5, &byte));
    CHECK(byte == HDR + (MPI_Offset)(nprocs + rank) * BLK + 5, "%s: byte offset of %d is %lld", what, BLK + 5,
          (long long)byte);
    if (collective) {
        CHECK_OK(MPI_File_write_at_all(fh, 0, buf, (int)mine, MPI_BYTE, &st));
    } else {
        CHECK_OK(MPI_File_write_at(fh, 0, buf, (int)mine, MPI_BYTE, &st));
    }
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == mine, "%s: wrote %d of %ld bytes", what, cnt, mine);
    CHECK_OK(MPI_File_sync(fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file(path, ref, n, what);
    memset(back, 0, NBLK * BLK);
    if (collective) {
        CHECK_OK(MPI_File_read_at_all(fh, 0, back, (int)mine, MPI_BYTE, &st));
    } else {
        CHECK_OK(MPI_File_read_at(fh, 0, back, (int)mine, MPI_BYTE, &st));
    }
    CHECK(memcmp(back, buf, mine) == 0, "%s: read back differs", what);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Type_free(&ft);
    free(ref);
    free(buf);
    free(back);
}

/* One int at displacement 100 of a struct: lower bound 100, extent 4, so
 * the tiles are contiguous from disp + 100. Each rank writes its own file. */
static void test_struct_lb(void)
{
    char         path[600];
    int          one = 1, data[10], back[10];
    MPI_Aint     d100 = 100;
    MPI_Datatype dt = MPI_INT, ft;
    MPI_File     fh;
    MPI_Offset   byte, size;
    long         len;

    snprintf(path, sizeof(path), "%s/struct_lb.%d", io_dir, rank);
    CHECK_OK(MPI_Type_create_struct(1, &one, &d100, &dt, &ft));
    CHECK_OK(MPI_Type_commit(&ft));
    for (int i = 0; i < 10; i++) {
        data[i] = 1000 * rank + i;
    }
    CHECK_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 16, MPI_INT, ft, "native", MPI_INFO_NULL));
    CHECK_OK(MPI_File_get_byte_offset(fh, 3, &byte));
    CHECK(byte == 16 + 100 + 12, "struct lb: byte offset of etype 3 is %lld, want 128", (long long)byte);
    CHECK_OK(MPI_File_write(fh, data, 10, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_get_size(fh, &size));
    CHECK(size == 116 + 40, "struct lb: size %lld, want 156", (long long)size);
    CHECK_OK(MPI_File_read_at(fh, 0, back, 10, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(memcmp(back, data, sizeof(data)) == 0, "struct lb: read back differs");
    CHECK_OK(MPI_File_close(&fh));
    {
        unsigned char *f = io_slurp(path, &len);
        CHECK(f != NULL && len == 156 && memcmp(f + 116, data, 40) == 0, "struct lb: file bytes wrong");
        free(f);
    }
    MPI_Type_free(&ft);
}

/* MPI_INT resized to lower bound 8, extent 16: its data (at 0) lies below
 * the lower bound; tile k holds one int at disp + 16k. */
static void test_resized_below_lb(void)
{
    char         path[600];
    int          data[6], back[6];
    MPI_Datatype ft;
    MPI_File     fh;
    long         len;

    snprintf(path, sizeof(path), "%s/resized_lb.%d", io_dir, rank);
    CHECK_OK(MPI_Type_create_resized(MPI_INT, 8, 16, &ft));
    CHECK_OK(MPI_Type_commit(&ft));
    for (int i = 0; i < 6; i++) {
        data[i] = 77 * rank + i + 1;
    }
    CHECK_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 4, MPI_INT, ft, "native", MPI_INFO_NULL));
    CHECK_OK(MPI_File_write(fh, data, 6, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_read_at(fh, 0, back, 6, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(memcmp(back, data, sizeof(data)) == 0, "resized below lb: read back differs");
    CHECK_OK(MPI_File_close(&fh));
    {
        unsigned char *f = io_slurp(path, &len);
        CHECK(f != NULL && len == 4 + 5 * 16 + 4, "resized below lb: size %ld, want 88", len);
        for (int i = 0; f != NULL && len == 88 && i < 6; i++) {
            int v;
            memcpy(&v, f + 4 + 16 * i, 4);
            CHECK(v == data[i], "resized below lb: int %d is %d, want %d", i, v, data[i]);
        }
        free(f);
    }
    MPI_Type_free(&ft);
}

/* 8 ints resized to a 16-byte extent: consecutive tiles would overlap. */
static void test_overlap_error(void)
{
    char         path[600];
    MPI_Datatype c, ft;
    MPI_File     fh;

    io_path(path, sizeof(path), "overlap");
    CHECK_OK(MPI_Type_contiguous(8, MPI_INT, &c));
    CHECK_OK(MPI_Type_create_resized(c, 0, 16, &ft));
    CHECK_OK(MPI_Type_commit(&ft));
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, ft, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&c);
    MPI_Type_free(&ft);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make();
    test_hindexed(1);
    test_hindexed(0);
    test_struct_lb();
    test_resized_below_lb();
    test_overlap_error();
    io_dir_remove();
    return mpitest_finish();
}
