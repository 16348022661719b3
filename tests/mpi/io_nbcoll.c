/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-blocking and split collective file access must not block waiting for
 * other ranks: the calls return at once and the two-phase exchange runs in
 * the progress engine.
 *  1. Chain: rank r > 0 first receives from r-1 and only then calls the
 *     non-blocking collective; rank r < np-1 calls it and then sends to r+1.
 *     Every rank waits at the end. A collective that completes inside the
 *     call deadlocks here (the manifest's timeout fails the run). Done for
 *     iwrite_all, iwrite_at_all, iread_all, iread_at_all (and the _c forms),
 *     with an interleaved view, collective buffering forced on and a small
 *     buffer (several rounds, two aggregators), and with the hints left at
 *     their defaults. Data checked with plain POSIX / against what was written.
 *  2. In order: NOPS overlapping iwrite_at_all on one file, then iread_all
 *     of the result, all outstanding at once and waited in reverse order; the
 *     file must equal a serial reference that applies the writes in call
 *     order, and the reads must see all the writes.
 *  3. Split collectives with the same chain of point-to-point messages
 *     between begin and end (write_at_all, write_all, read_all, read_at_all;
 *     write_ordered twice then read_ordered, in rank order after the shared
 *     file pointer, checked against the concatenation).
 *  4. Errors: a non-blocking collective write on a read-only file gives
 *     MPI_ERR_READ_ONLY on every rank and nothing hangs; a bad offset on
 *     rank 0 only fails its call and the others' requests (MPI_ERR_ARG).
 *  5. Domain boundary (blocking write_at_all, then iwrite_at_all): half the
 *     blocks, so one rank's block runs across the boundary between the two
 *     aggregators' file domains and the next domain's first piece continues
 *     it in the file. Those two pieces must not be merged into one (the
 *     bytes before the boundary came out wrong).
 *  6. A freed request: MPI_Request_free right after iwrite_at_all, then
 *     MPI_File_close must wait for the transfer; the bytes are checked.
 */
#include "mpitest.h"
#include "io_util.h"

#define BLK  96   /* bytes per block of the interleaved view */
#define NBLK 64   /* blocks per rank */
#define NOPS 6

static int rank, np;

/* The view: rank r's blocks are r, r+np, r+2np, ... of BLK bytes each. */
static MPI_Datatype view_type(void)
{
    MPI_Datatype blk, t;

    MPI_Type_contiguous(BLK, MPI_BYTE, &blk);
    MPI_Type_create_resized(blk, 0, (MPI_Aint)BLK * np, &t);
    MPI_Type_commit(&t);
    MPI_Type_free(&blk);
    return t;
}

static MPI_File open_file(const char *name, int amode, int forced)
{
    char     path[600];
    MPI_File fh = MPI_FILE_NULL;
    MPI_Info info;

    io_path(path, sizeof(path), name);
    MPI_Info_create(&info);
    if (forced) {
        MPI_Info_set(info, "romio_cb_write", "enable");
        MPI_Info_set(info, "romio_cb_read", "enable");
        MPI_Info_set(info, "cb_buffer_size", "4096");
        MPI_Info_set(info, "cb_nodes", "2");
    }
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, amode, info, &fh));
    MPI_Info_free(&info);
    return fh;
}

static void set_view(MPI_File fh)
{
    MPI_Datatype ft = view_type();
    CHECK_OK(MPI_File_set_view(fh, (MPI_Offset)rank * BLK, MPI_BYTE, ft, "native", MPI_INFO_NULL));
    MPI_Type_free(&ft);
}

/* The point-to-point chain around a call: wait for the left neighbour
 * before, tell the right one after. */
static void chain_before(void)
{
    int token = 0;
    if (rank > 0) {
        CHECK_OK(MPI_Recv(&token, 1, MPI_INT, rank - 1, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(token == rank - 1, "token %d from rank %d", token, rank - 1);
    }
}

static void chain_after(void)
{
    if (rank < np - 1) {
        CHECK_OK(MPI_Send(&rank, 1, MPI_INT, rank + 1, 77, MPI_COMM_WORLD));
    }
}

/* The file's expected byte at offset off when op seed wrote everything. */
static unsigned char owner_byte(unsigned seed, long off)
{
    long blk = off / BLK, r = blk % np, local = (blk / np) * BLK + off % BLK;
    return mpitest_byte(seed * 16u + (unsigned)r, (size_t)local);
}

static void check_file(const char *name, unsigned seed, long len)
{
    char           path[600];
    long           got;
    unsigned char *b;

    if (rank != 0) {
        return;
    }
    io_path(path, sizeof(path), name);
    b = io_slurp(path, &got);
    CHECK(got == len, "%s: size %ld, expected %ld", name, got, len);
    for (long i = 0; b && i < got && i < len; i++) {
        if (b[i] != owner_byte(seed, i)) {
            CHECK(0, "%s: byte %ld is %d, expected %d", name, i, b[i], owner_byte(seed, i));
            break;
        }
    }
    free(b);
}

static void chain_test(int forced)
{
    const size_t n   = (size_t)BLK * NBLK;
    unsigned char *w = malloc(n), *r = malloc(n);
    MPI_Request    req;
    MPI_Status     st;
    MPI_File       fh;
    int            cnt;
    const char    *name = forced ? "chain_forced" : "chain_auto";

    for (int form = 0; form < 3; form++) {
        unsigned seed = (unsigned)(forced * 8 + form);
        fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR, forced);
        set_view(fh);
        mpitest_fill(w, n, seed * 16u + (unsigned)rank);
        chain_before();
        if (form == 0) {
            CHECK_OK(MPI_File_iwrite_all(fh, w, (int)n, MPI_BYTE, &req));
        } else if (form == 1) {
            CHECK_OK(MPI_File_iwrite_at_all(fh, 0, w, (int)n, MPI_BYTE, &req));
        } else {
            CHECK_OK(MPI_File_iwrite_at_all_c(fh, 0, w, (MPI_Count)n, MPI_BYTE, &req));
        }
        chain_after();
        CHECK_OK(MPI_Wait(&req, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n, "%s form %d: write count %d, expected %zu", name, form, cnt, n);
        if (form == 0) {
            MPI_Offset pos = -1;
            MPI_File_get_position(fh, &pos);
            CHECK(pos == (MPI_Offset)n, "%s: individual pointer at %lld after iwrite_all", name,
                  (long long)pos);
        }
        CHECK_OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        check_file(name, seed, (long)n * np);

        /* read it back the same way */
        fh = open_file(name, MPI_MODE_RDONLY, forced);
        set_view(fh);
        memset(r, 0xee, n);
        chain_before();
        if (form == 0) {
            CHECK_OK(MPI_File_iread_all(fh, r, (int)n, MPI_BYTE, &req));
        } else if (form == 1) {
            CHECK_OK(MPI_File_iread_at_all(fh, 0, r, (int)n, MPI_BYTE, &req));
        } else {
            CHECK_OK(MPI_File_iread_all_c(fh, r, (MPI_Count)n, MPI_BYTE, &req));
        }
        chain_after();
        CHECK_OK(MPI_Wait(&req, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n, "%s form %d: read count %d", name, form, cnt);
        CHECK(mpitest_verify(r, n, seed * 16u + (unsigned)rank) < 0, "%s form %d: read data differs at %ld",
              name, form, mpitest_verify(r, n, seed * 16u + (unsigned)rank));
        CHECK_OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(w);
    free(r);
}

/* Op k writes blocks [k*NBLK/(2*NOPS), that + NBLK/2) of every rank's view
 * with seed 40+k: consecutive ops overlap, so the order decides the bytes. */
static void op_range(int k, long *first, long *nblk)
{
    *first = (long)k * NBLK / (2 * NOPS);
    *nblk  = NBLK / 2;
}

static void order_test(void)
{
    const size_t   n = (size_t)BLK * NBLK;
    unsigned char *w[NOPS], *r[2], *ref = calloc(1, n);
    MPI_Request    req[NOPS + 2];
    MPI_File       fh = open_file("order", MPI_MODE_CREATE | MPI_MODE_RDWR, 1);
    long           hi = 0;

    set_view(fh);
    for (int k = 0; k < NOPS; k++) {
        long first, nb;
        op_range(k, &first, &nb);
        w[k] = malloc((size_t)nb * BLK);
        mpitest_fill(w[k], (size_t)nb * BLK, 40u + (unsigned)k * 7u + (unsigned)rank);
        memcpy(ref + first * BLK, w[k], (size_t)nb * BLK); /* the serial reference, in call order */
        hi = first + nb > hi ? first + nb : hi;
        CHECK_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)first * BLK, w[k], (int)(nb * BLK), MPI_BYTE, &req[k]));
    }
    /* reads after the writes see them (collective calls complete in call order) */
    for (int i = 0; i < 2; i++) {
        r[i] = malloc((size_t)hi * BLK);
        memset(r[i], 0xee, (size_t)hi * BLK);
    }
    CHECK_OK(MPI_File_iread_all(fh, r[0], (int)(hi * BLK), MPI_BYTE, &req[NOPS]));
    CHECK_OK(MPI_File_iread_at_all(fh, 0, r[1], (int)(hi * BLK), MPI_BYTE, &req[NOPS + 1]));
    for (int k = NOPS + 1; k >= 0; k--) {
        CHECK_OK(MPI_Wait(&req[k], MPI_STATUS_IGNORE));
    }
    for (int i = 0; i < 2; i++) {
        for (long b = 0; b < hi * BLK; b++) {
            if (r[i][b] != ref[b]) {
                CHECK(0, "order: read %d byte %ld is %d, expected %d", i, b, r[i][b], ref[b]);
                break;
            }
        }
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    /* the file with plain POSIX: every rank checks its own blocks */
    {
        char           path[600];
        long           got;
        unsigned char *b;
        io_path(path, sizeof(path), "order");
        b = io_slurp(path, &got);
        CHECK(got >= (hi - 1) * BLK * np + (long)(rank + 1) * BLK, "order: file size %ld", got);
        for (long i = 0; b && i < hi * BLK && got >= 0; i++) {
            long off = (i / BLK) * BLK * np + (long)rank * BLK + i % BLK;
            if (off >= got || b[off] != ref[i]) {
                CHECK(0, "order: file byte %ld (my byte %ld) is %d, expected %d", off, i,
                      off < got ? b[off] : -1, ref[i]);
                break;
            }
        }
        free(b);
    }
    for (int k = 0; k < NOPS; k++) {
        free(w[k]);
    }
    free(r[0]);
    free(r[1]);
    free(ref);
}

static void split_test(void)
{
    const size_t   n = (size_t)BLK * NBLK;
    unsigned char *w = malloc(n), *r = malloc(n);
    MPI_Status     st;
    MPI_File       fh = open_file("split", MPI_MODE_CREATE | MPI_MODE_RDWR, 1);
    int            cnt;

    set_view(fh);
    mpitest_fill(w, n, 90u * 16u + (unsigned)rank);
    chain_before();
    CHECK_OK(MPI_File_write_at_all_begin(fh, 0, w, (int)n / 2, MPI_BYTE));
    chain_after();
    CHECK_OK(MPI_File_write_at_all_end(fh, w, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n / 2, "split write_at_all: count %d", cnt);
    /* the individual pointer is still 0: write_all puts the second half after a seek */
    CHECK_OK(MPI_File_seek(fh, (MPI_Offset)n / 2, MPI_SEEK_SET));
    chain_before();
    CHECK_OK(MPI_File_write_all_begin(fh, w + n / 2, (int)(n - n / 2), MPI_BYTE));
    chain_after();
    CHECK_OK(MPI_File_write_all_end(fh, w + n / 2, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)(n - n / 2), "split write_all: count %d", cnt);

    memset(r, 0xee, n);
    CHECK_OK(MPI_File_seek(fh, 0, MPI_SEEK_SET));
    chain_before();
    CHECK_OK(MPI_File_read_all_begin(fh, r, (int)n, MPI_BYTE));
    chain_after();
    CHECK_OK(MPI_File_read_all_end(fh, r, &st));
    MPI_Get_count(&st, MPI_BYTE, &cnt);
    CHECK(cnt == (int)n, "split read_all: count %d", cnt);
    CHECK(mpitest_verify(r, n, 90u * 16u + (unsigned)rank) < 0, "split read_all: data differs at %ld",
          mpitest_verify(r, n, 90u * 16u + (unsigned)rank));

    memset(r, 0xee, n);
    chain_before();
    CHECK_OK(MPI_File_read_at_all_begin(fh, 0, r, (int)n, MPI_BYTE));
    chain_after();
    CHECK_OK(MPI_File_read_at_all_end(fh, r, &st));
    CHECK(mpitest_verify(r, n, 90u * 16u + (unsigned)rank) < 0, "split read_at_all: data differs at %ld",
          mpitest_verify(r, n, 90u * 16u + (unsigned)rank));
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file("split", 90, (long)n * np);
    free(w);
    free(r);
}

static void boundary_test(void)
{
    const size_t   n = (size_t)BLK * NBLK;
    unsigned char *w = malloc(n);
    MPI_Request    req;

    for (int nb = 0; nb < 2; nb++) {
        MPI_File fh = open_file("boundary", MPI_MODE_CREATE | MPI_MODE_RDWR, 1);
        set_view(fh);
        mpitest_fill(w, n, (100u + (unsigned)nb) * 16u + (unsigned)rank);
        if (nb) {
            CHECK_OK(MPI_File_iwrite_at_all(fh, 0, w, (int)n / 2, MPI_BYTE, &req));
            CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        } else {
            CHECK_OK(MPI_File_write_at_all(fh, 0, w, (int)n / 2, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        CHECK_OK(MPI_File_close(&fh));
        MPI_Barrier(MPI_COMM_WORLD);
        check_file("boundary", 100u + (unsigned)nb, (long)(n / 2) * np);
        if (rank == 0) {
            char path[600];
            io_path(path, sizeof(path), "boundary");
            unlink(path);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    free(w);
}

/* Rank r's part of ordered access k: (r+1)*37 + k bytes. */
static int ord_len(int r, int k)
{
    return (r + 1) * 37 + k;
}

static void ordered_test(void)
{
    unsigned char *w = malloc(2000), *r = malloc(4000), *ref = malloc(64000);
    MPI_File       fh  = open_file("ordered", MPI_MODE_CREATE | MPI_MODE_RDWR, 0);
    MPI_Status     st;
    long           len = 0, len0 = 0; /* all bytes; those of the first call */
    int            cnt;

    for (int k = 0; k < 2; k++) {
        for (int q = 0; q < np; q++) { /* the reference: rank order, call after call */
            mpitest_fill(ref + len, (size_t)ord_len(q, k), 200u + (unsigned)(k * 16 + q));
            len += ord_len(q, k);
        }
        mpitest_fill(w, (size_t)ord_len(rank, k), 200u + (unsigned)(k * 16 + rank));
        chain_before();
        CHECK_OK(MPI_File_write_ordered_begin(fh, w, ord_len(rank, k), MPI_BYTE));
        chain_after();
        CHECK_OK(MPI_File_write_ordered_end(fh, w, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == ord_len(rank, k), "write_ordered %d: count %d", k, cnt);
        len0 = k == 0 ? len : len0;
    }
    /* read both of my parts back: the shared pointer to 0, then in order again */
    CHECK_OK(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
    for (int k = 0; k < 2; k++) {
        long at = 0;
        for (int q = 0; q < np; q++) {
            at += q < rank ? ord_len(q, k) : 0;
        }
        at += k ? len0 : 0;
        memset(r, 0xee, 4000);
        chain_before();
        CHECK_OK(MPI_File_read_ordered_begin(fh, r, ord_len(rank, k), MPI_BYTE));
        chain_after();
        CHECK_OK(MPI_File_read_ordered_end(fh, r, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == ord_len(rank, k), "read_ordered %d: count %d", k, cnt);
        CHECK(memcmp(r, ref + at, (size_t)ord_len(rank, k)) == 0, "read_ordered %d: data differs", k);
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        char           path[600];
        long           got;
        unsigned char *b;
        io_path(path, sizeof(path), "ordered");
        b = io_slurp(path, &got);
        CHECK(got == len, "ordered: file size %ld, expected %ld", got, len);
        CHECK(b && got == len && memcmp(b, ref, (size_t)len) == 0, "ordered: file differs from the rank-order reference");
        free(b);
    }
    free(w);
    free(r);
    free(ref);
}

static void freed_test(void)
{
    const size_t   n = (size_t)BLK * NBLK;
    unsigned char *w = malloc(n);
    MPI_Request    req;
    MPI_File       fh = open_file("freed", MPI_MODE_CREATE | MPI_MODE_RDWR, 1);

    set_view(fh);
    mpitest_fill(w, n, 120u * 16u + (unsigned)rank);
    CHECK_OK(MPI_File_iwrite_at_all(fh, 0, w, (int)n, MPI_BYTE, &req));
    CHECK_OK(MPI_Request_free(&req));
    CHECK_OK(MPI_File_close(&fh));
    MPI_Barrier(MPI_COMM_WORLD);
    check_file("freed", 120, (long)n * np);
    free(w);
}

static void error_test(void)
{
    char        buf[BLK] = {0};
    MPI_Request req = MPI_REQUEST_NULL;
    MPI_File    fh  = open_file("order", MPI_MODE_RDONLY, 1);

    CHECK_CLASS(MPI_File_iwrite_at_all(fh, 0, buf, BLK, MPI_BYTE, &req), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_iwrite_all(fh, buf, BLK, MPI_BYTE, &req), MPI_ERR_READ_ONLY);
    /* the file still works for the collectives after the failed ones */
    CHECK_OK(MPI_File_iread_at_all(fh, 0, buf, BLK, MPI_BYTE, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_close(&fh));

    /* Only rank 0 is wrong (negative offset): its call fails at once, the
     * others' requests fail with the same class (they must not hang or
     * report success). A request's error goes to the file's handler
     * (MPI_ERRORS_RETURN), not MPI_COMM_SELF's (fatal). */
    fh = open_file("order", MPI_MODE_RDWR, 1);
    if (rank == 0) {
        CHECK_CLASS(MPI_File_iwrite_at_all(fh, -BLK, buf, BLK, MPI_BYTE, &req), MPI_ERR_ARG);
    } else {
        CHECK_OK(MPI_File_iwrite_at_all(fh, 0, buf, BLK, MPI_BYTE, &req));
        CHECK_CLASS(MPI_Wait(&req, MPI_STATUS_IGNORE), MPI_ERR_ARG);
    }
    CHECK_OK(MPI_File_iread_at_all(fh, 0, buf, BLK, MPI_BYTE, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_close(&fh));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    io_dir_make();
    chain_test(1);
    chain_test(0);
    order_test();
    split_test();
    ordered_test();
    freed_test();
    error_test();
    boundary_test();
    io_dir_remove();
    return mpitest_finish();
}
