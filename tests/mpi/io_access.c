/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-IO data access against serial references: every explicit-offset and
 * individual-pointer form (blocking, non-blocking, split collective) writes
 * through a strided, resized view with contiguous and non-contiguous memory
 * types under four hint sets (default, collective buffering and sieving off,
 * two-phase forced with tiny rounds, sieving forced with a tiny buffer); the
 * file's bytes are checked with POSIX reads and read back with the matching
 * read form. Then shared and ordered pointers (total order), seeks, byte
 * offsets, external32, and a collective read past the end of the file.
 */
#include "mpitest.h"
#include "io_util.h"

#define B  3  /* ints per block of the filetype */
#define NB 40 /* blocks per rank */
#define N  (B * NB)
#define DISP 8

static int rank, nprocs;

static int vfile(long i)
{
    return (int)(i * 7 + 3);
}

static long fileidx(int r, long m)
{
    return (m / B * nprocs + r) * B + m % B;
}

enum { F_AT, F_AT_ALL, F_IAT, F_IAT_ALL, F_AT_SPLIT, F_IND, F_ALL, F_I, F_IALL, F_SPLIT, NFORMS };
static const char *form_name[NFORMS] = {"at", "at_all", "iat", "iat_all", "at_split",
                                        "ind", "all", "i", "iall", "split"};

/* One half of the access (elements [h*N/2, (h+1)*N/2)) with form f. */
static void xfer(MPI_File fh, int f, int writing, int h, void *buf, MPI_Datatype mt, MPI_Aint mstride)
{
    MPI_Offset  off = (MPI_Offset)h * (N / 2);
    char       *p   = (char *)buf + (MPI_Aint)h * (N / 2) * mstride;
    int         cnt = N / 2, got = -1;
    MPI_Status  st;
    MPI_Request rq;

    memset(&st, 0, sizeof(st));
    switch (f * 2 + writing) {
#define BOTH(_F, _rd, _wr)                                                                         \
    case _F * 2:                                                                                   \
        CHECK_OK(_rd);                                                                             \
        break;                                                                                     \
    case _F * 2 + 1:                                                                               \
        CHECK_OK(_wr);                                                                             \
        break;
        BOTH(F_AT, MPI_File_read_at(fh, off, p, cnt, mt, &st), MPI_File_write_at(fh, off, p, cnt, mt, &st))
        BOTH(F_AT_ALL, MPI_File_read_at_all(fh, off, p, cnt, mt, &st),
             MPI_File_write_at_all(fh, off, p, cnt, mt, &st))
        BOTH(F_IND, MPI_File_read(fh, p, cnt, mt, &st), MPI_File_write(fh, p, cnt, mt, &st))
        BOTH(F_ALL, MPI_File_read_all(fh, p, cnt, mt, &st), MPI_File_write_all(fh, p, cnt, mt, &st))
    case F_IAT * 2:
        CHECK_OK(MPI_File_iread_at(fh, off, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_IAT * 2 + 1:
        CHECK_OK(MPI_File_iwrite_at(fh, off, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_IAT_ALL * 2:
        CHECK_OK(MPI_File_iread_at_all(fh, off, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_IAT_ALL * 2 + 1:
        CHECK_OK(MPI_File_iwrite_at_all(fh, off, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_I * 2:
        CHECK_OK(MPI_File_iread(fh, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_I * 2 + 1:
        CHECK_OK(MPI_File_iwrite(fh, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_IALL * 2:
        CHECK_OK(MPI_File_iread_all(fh, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_IALL * 2 + 1:
        CHECK_OK(MPI_File_iwrite_all(fh, p, cnt, mt, &rq));
        CHECK_OK(MPI_Wait(&rq, &st));
        break;
    case F_AT_SPLIT * 2:
        CHECK_OK(MPI_File_read_at_all_begin(fh, off, p, cnt, mt));
        CHECK_OK(MPI_File_read_at_all_end(fh, p, &st));
        break;
    case F_AT_SPLIT * 2 + 1:
        CHECK_OK(MPI_File_write_at_all_begin(fh, off, p, cnt, mt));
        CHECK_OK(MPI_File_write_at_all_end(fh, p, &st));
        break;
    case F_SPLIT * 2:
        CHECK_OK(MPI_File_read_all_begin(fh, p, cnt, mt));
        CHECK_OK(MPI_File_read_all_end(fh, p, &st));
        break;
    case F_SPLIT * 2 + 1:
        CHECK_OK(MPI_File_write_all_begin(fh, p, cnt, mt));
        CHECK_OK(MPI_File_write_all_end(fh, p, &st));
        break;
    }
    MPI_Get_count(&st, mt, &got);
    CHECK(got == cnt, "form %s %s: MPI_Get_count %d, expected %d", form_name[f], writing ? "write" : "read",
          got, cnt);
}

static void set_hints(MPI_Info info, int hs)
{
    if (hs == 1) {
        MPI_Info_set(info, "romio_cb_write", "disable");
        MPI_Info_set(info, "romio_cb_read", "disable");
        MPI_Info_set(info, "romio_ds_write", "disable");
        MPI_Info_set(info, "romio_ds_read", "disable");
    } else if (hs == 2) {
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "romio_ds_read", "enable");
        MPI_Info_set(info, "cb_buffer_size", "100");
        MPI_Info_set(info, "cb_nodes", "2");
        MPI_Info_set(info, "striping_unit", "16");
    } else if (hs == 3) {
        MPI_Info_set(info, "romio_ds_write", "enable");
        MPI_Info_set(info, "romio_ds_read", "enable");
        MPI_Info_set(info, "ind_wr_buffer_size", "64");
        MPI_Info_set(info, "ind_rd_buffer_size", "64");
    }
}

static void access_forms(void)
{
    MPI_Datatype vec, ftype, every_other;
    char         path[600];
    int         *mem = malloc(2 * N * sizeof(int)), *back = malloc(2 * N * sizeof(int));
    long         total = (long)nprocs * N;

    /* a tile: two blocks of B ints, this rank's slots in two rounds of P blocks */
    int displs[2] = {rank * B, (nprocs + rank) * B};
    MPI_Type_create_indexed_block(2, B, displs, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)2 * B * nprocs * sizeof(int), &ftype);
    MPI_Type_commit(&ftype);
    MPI_Type_free(&vec);
    MPI_Type_create_resized(MPI_INT, 0, 2 * sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    io_path(path, sizeof(path), "forms.dat");
    for (int hs = 0; hs < 4; hs++) {
        for (int noncontig = 0; noncontig < 2; noncontig++) {
            MPI_Datatype mt      = noncontig ? every_other : MPI_INT;
            MPI_Aint     mstride = noncontig ? 2 * sizeof(int) : sizeof(int);
            for (int f = 0; f < NFORMS; f++) {
                MPI_File fh;
                MPI_Info info;
                for (int m = 0; m < 2 * N; m++) {
                    mem[m] = -1;
                }
                for (int m = 0; m < N; m++) {
                    mem[noncontig ? 2 * m : m] = vfile(fileidx(rank, m));
                }
                MPI_Info_create(&info);
                set_hints(info, hs);
                CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh));
                CHECK_OK(MPI_File_set_view(fh, DISP, MPI_INT, ftype, "native", info));
                xfer(fh, f, 1, 0, mem, mt, mstride);
                xfer(fh, f, 1, 1, mem, mt, mstride);
                CHECK_OK(MPI_File_close(&fh));
                if (rank == 0) {
                    long           len;
                    unsigned char *b = io_slurp(path, &len);
                    CHECK(len == DISP + total * 4, "hints %d form %s: file size %ld, expected %ld", hs,
                          form_name[f], len, DISP + total * 4);
                    for (long i = 0; b && len == DISP + total * 4 && i < total; i++) {
                        int v;
                        memcpy(&v, b + DISP + 4 * i, 4);
                        if (v != vfile(i)) {
                            CHECK(0, "hints %d mem %d form %s: file int %ld is %d, expected %d", hs, noncontig,
                                  form_name[f], i, v, vfile(i));
                            break;
                        }
                    }
                    for (int i = 0; b && len >= DISP && i < DISP; i++) {
                        CHECK(b[i] == 0, "header byte %d is %d", i, b[i]);
                    }
                    free(b);
                }
                /* read back with the same form */
                CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
                CHECK_OK(MPI_File_set_view(fh, DISP, MPI_INT, ftype, "native", info));
                for (int m = 0; m < 2 * N; m++) {
                    back[m] = -1;
                }
                xfer(fh, f, 0, 0, back, mt, mstride);
                xfer(fh, f, 0, 1, back, mt, mstride);
                for (int m = 0; m < 2 * N; m++) {
                    if (back[m] != mem[m]) {
                        CHECK(0, "hints %d mem %d form %s: read back element %d is %d, expected %d", hs,
                              noncontig, form_name[f], m, back[m], mem[m]);
                        break;
                    }
                }
                CHECK_OK(MPI_File_close(&fh));
                MPI_Info_free(&info);
                MPI_Barrier(MPI_COMM_WORLD);
                if (rank == 0) {
                    CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
        }
    }
    /* pointers and byte offsets in the strided view */
    {
        MPI_File   fh;
        MPI_Offset pos, byte;
        CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                               MPI_INFO_NULL, &fh));
        CHECK_OK(MPI_File_set_view(fh, DISP, MPI_INT, ftype, "native", MPI_INFO_NULL));
        for (long m = 0; m < N; m += 7) {
            CHECK_OK(MPI_File_get_byte_offset(fh, m, &byte));
            CHECK(byte == DISP + 4 * fileidx(rank, m), "byte offset of %ld: %lld, expected %ld", m,
                  (long long)byte, DISP + 4 * fileidx(rank, m));
        }
        CHECK_OK(MPI_File_seek(fh, 10, MPI_SEEK_SET));
        CHECK_OK(MPI_File_seek(fh, 5, MPI_SEEK_CUR));
        CHECK_OK(MPI_File_get_position(fh, &pos));
        CHECK(pos == 15, "position %lld, expected 15", (long long)pos);
        CHECK_OK(MPI_File_write_all(fh, mem, N, MPI_INT, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_END));
        CHECK_OK(MPI_File_get_position(fh, &pos));
        /* file ends after the last rank's element 15+N-1; my etypes below the end */
        {
            long end_idx = fileidx(nprocs - 1, 15 + N - 1) + 1, want = 0;
            for (long m = 0; m < 2 * N + 15; m++) {
                want += fileidx(rank, m) < end_idx;
            }
            CHECK(pos == want, "SEEK_END position %lld, expected %ld", (long long)pos, want);
        }
        CHECK_CLASS(MPI_File_seek(fh, -1, MPI_SEEK_SET), MPI_ERR_ARG);
        CHECK_OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK(access(path, F_OK) != 0, "MPI_MODE_DELETE_ON_CLOSE left %s", path);
    }
    MPI_Type_free(&ftype);
    MPI_Type_free(&every_other);
    free(mem);
    free(back);
}

/* Ordered and shared pointers: total order. */
static void shared_pointers(void)
{
    char       path[600];
    MPI_File   fh;
    MPI_Offset pos;
    int        mine[64], total = nprocs * (nprocs + 1) / 2, cnt;
    MPI_Status st;

    io_path(path, sizeof(path), "ordered.dat");
    for (int j = 0; j <= rank; j++) {
        mine[j] = rank * 1000 + j;
    }
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_OK(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == rank + 1, "write_ordered count %d", cnt);
    for (int j = 0; j <= rank; j++) {
        mine[j] += 500;
    }
    CHECK_OK(MPI_File_write_ordered_begin(fh, mine, rank + 1, MPI_INT));
    CHECK_OK(MPI_File_write_ordered_end(fh, mine, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_get_position_shared(fh, &pos));
    CHECK(pos == 2 * total, "shared position %lld, expected %d", (long long)pos, 2 * total);
    CHECK_OK(MPI_File_sync(fh));
    if (rank == 0) {
        long           len;
        unsigned char *b = io_slurp(path, &len);
        int            i = 0;
        CHECK(len == 8L * total, "ordered file size %ld", len);
        for (int round = 0; round < 2 && len == 8L * total; round++) {
            for (int r = 0; r < nprocs; r++) {
                for (int j = 0; j <= r; j++, i++) {
                    int v;
                    memcpy(&v, b + 4 * i, 4);
                    CHECK(v == r * 1000 + j + 500 * round, "ordered int %d is %d", i, v);
                }
            }
        }
        free(b);
    }
    CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    memset(mine, 0, sizeof(mine));
    CHECK_OK(MPI_File_read_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE));
    for (int j = 0; j <= rank; j++) {
        CHECK(mine[j] == rank * 1000 + j, "read_ordered %d: %d", j, mine[j]);
    }
    CHECK_OK(MPI_File_read_ordered_begin(fh, mine, rank + 1, MPI_INT));
    CHECK_OK(MPI_File_read_ordered_end(fh, mine, MPI_STATUS_IGNORE));
    for (int j = 0; j <= rank; j++) {
        CHECK(mine[j] == rank * 1000 + j + 500, "read_ordered (split) %d: %d", j, mine[j]);
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);

    /* shared: blocks land whole, each exactly once per round, in some order */
    io_path(path, sizeof(path), "shared.dat");
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    for (int j = 0; j <= rank; j++) {
        mine[j] = rank * 1000 + j;
    }
    CHECK_OK(MPI_File_write_shared(fh, mine, rank + 1, MPI_INT, &st));
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == rank + 1, "write_shared count %d", cnt);
    {
        MPI_Request rq;
        CHECK_OK(MPI_File_iwrite_shared(fh, mine, rank + 1, MPI_INT, &rq));
        CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0) {
        long           len;
        unsigned char *b    = io_slurp(path, &len);
        int           *seen = calloc(nprocs, sizeof(int));
        CHECK(len == 8L * total, "shared file size %ld", len);
        for (long i = 0; len == 8L * total && i < 2 * total;) {
            int v, r;
            memcpy(&v, b + 4 * i, 4);
            r = v / 1000;
            if (v % 1000 != 0 || r < 0 || r >= nprocs) {
                CHECK(0, "shared file: int %ld (%d) does not start a block", i, v);
                break;
            }
            for (int j = 0; j <= r; j++, i++) {
                memcpy(&v, b + 4 * i, 4);
                CHECK(v == r * 1000 + j, "shared block of rank %d broken at %d", r, j);
            }
            seen[r]++;
        }
        for (int r = 0; r < nprocs && len == 8L * total; r++) {
            CHECK(seen[r] == 2, "rank %d's block appears %d times", r, seen[r]);
        }
        free(seen);
        free(b);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* read_shared: each rank takes one int; together they take the first P */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    {
        int v = -1, *all = malloc(nprocs * sizeof(int)), *ref = malloc(nprocs * sizeof(int));
        MPI_Request rq;
        CHECK_OK(MPI_File_read_shared(fh, &v, 1, MPI_INT, MPI_STATUS_IGNORE));
        MPI_Allgather(&v, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD);
        CHECK_OK(MPI_File_read_at(fh, 0, ref, nprocs, MPI_INT, MPI_STATUS_IGNORE));
        for (int r = 0; r < nprocs; r++) {
            int found = 0;
            for (int q = 0; q < nprocs; q++) {
                found += all[q] == ref[r];
            }
            CHECK(found >= 1, "read_shared: file int %d (%d) was read by no rank", r, ref[r]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_File_iread_shared(fh, &v, 1, MPI_INT, &rq));
        CHECK_OK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_File_get_position_shared(fh, &pos));
        CHECK(pos == 2 * nprocs, "shared position after reads %lld", (long long)pos);
        free(all);
        free(ref);
    }
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0) {
        io_path(path, sizeof(path), "ordered.dat");
        CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

/* external32: big-endian in the file, native in memory. */
static void external32(void)
{
    char       path[600];
    MPI_File   fh;
    int        v[16], w[16];
    double     d[4] = {1.5, -2.25, 1e300, 0.0}, e[4];

    if (rank != 0) {
        return;
    }
    io_path(path, sizeof(path), "ext32.dat");
    for (int i = 0; i < 16; i++) {
        v[i] = 0x01020304 * (i + 1);
    }
    CHECK_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    CHECK_OK(MPI_File_write(fh, v, 16, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_set_view(fh, 64, MPI_DOUBLE, MPI_DOUBLE, "external32", MPI_INFO_NULL));
    CHECK_OK(MPI_File_write(fh, d, 4, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_read_at(fh, 0, e, 4, MPI_DOUBLE, MPI_STATUS_IGNORE));
    CHECK(!memcmp(d, e, sizeof(d)), "external32 doubles do not read back");
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL));
    CHECK_OK(MPI_File_read(fh, w, 16, MPI_INT, MPI_STATUS_IGNORE));
    CHECK(!memcmp(v, w, sizeof(v)), "external32 ints do not read back");
    CHECK_OK(MPI_File_close(&fh));
    {
        long           len;
        unsigned char *b = io_slurp(path, &len), ref[8];
        CHECK(len == 96, "external32 file size %ld", len);
        for (int i = 0; len == 96 && i < 16; i++) {
            unsigned u = (unsigned)v[i];
            unsigned char be[4] = {u >> 24, (u >> 16) & 255, (u >> 8) & 255, u & 255};
            CHECK(!memcmp(b + 4 * i, be, 4), "external32 int %d is not big-endian", i);
        }
        for (int i = 0; len == 96 && i < 4; i++) {
            unsigned long long u;
            memcpy(&u, &d[i], 8);
            for (int k = 0; k < 8; k++) {
                ref[k] = (unsigned char)(u >> (56 - 8 * k));
            }
            CHECK(!memcmp(b + 64 + 8 * i, ref, 8), "external32 double %d is not big-endian", i);
        }
        free(b);
    }
    CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
}

/* Reads of an interleaved view that run past the end of the file, sieved
 * independent and two-phase collective: every rank gets exactly the bytes
 * before the end in its stream order, and MPI_Get_count says how many
 * (the collective one reads the span straight into the pieces by one
 * vectored call). */
static void coll_read_past_end(void)
{
    enum { BLK = 1024, NBLK = 4 };
    char           path[600];
    MPI_File       fh;
    MPI_Info       info;
    MPI_Datatype   block, tile;
    MPI_Status     st;
    long           len = (long)(2 * nprocs - 1) * BLK + BLK / 2, want = 0;
    unsigned char *file = malloc((size_t)len), *got = malloc(NBLK * BLK);
    int            cnt;

    for (long i = 0; i < len; i++) {
        file[i] = (unsigned char)(i * 13 + (i >> 10));
    }
    io_path(path, sizeof(path), "pastend.dat");
    if (rank == 0) {
        FILE *f = fopen(path, "wb");
        CHECK(f != NULL && fwrite(file, 1, (size_t)len, f) == (size_t)len && fclose(f) == 0,
              "cannot write %s", path);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_contiguous(BLK, MPI_BYTE, &block);
    MPI_Type_create_resized(block, 0, (MPI_Aint)nprocs * BLK, &tile);
    MPI_Type_commit(&tile);
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_read", "enable");
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, info, &fh));
    CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * BLK, MPI_BYTE, tile, "native", info));
    for (long k = 0; k < NBLK; k++) { /* my stream up to the end of the file */
        long off = (k * nprocs + rank) * BLK, have = len - off;
        want += have <= 0 ? 0 : have > BLK ? BLK : have;
        if (have < BLK) {
            break;
        }
    }
    for (int coll = 0; coll < 2; coll++) {
        memset(got, 0x55, NBLK * BLK);
        if (coll) {
            CHECK_OK(MPI_File_read_at_all(fh, 0, got, NBLK * BLK, MPI_BYTE, &st));
        } else {
            CHECK_OK(MPI_File_read_at(fh, 0, got, NBLK * BLK, MPI_BYTE, &st));
        }
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == want, "%s read past the end: MPI_Get_count %d, expected %ld", coll ? "collective" : "sieved",
              cnt, want);
        for (long i = 0; i < want && i < cnt; i++) {
            long off = ((i / BLK) * nprocs + rank) * BLK + i % BLK;
            if (got[i] != file[off]) {
                CHECK(0, "%s read past the end: byte %ld is %d, expected %d (file offset %ld)",
                      coll ? "collective" : "sieved", i, got[i], file[off], off);
                break;
            }
        }
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Info_free(&info);
    MPI_Type_free(&tile);
    MPI_Type_free(&block);
    free(file);
    free(got);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK_OK(MPI_File_delete(path, MPI_INFO_NULL));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make();
    access_forms();
    shared_pointers();
    external32();
    coll_read_past_end();
    io_dir_remove();
    return mpitest_finish();
}
