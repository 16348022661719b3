/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * IOR-style MPI-IO bandwidth: all ranks write, then read, one shared file
 * with n calls of `size` bytes each, independent (MPI_File_write_at /
 * read_at) and collective (the _all forms). Patterns (one binary each):
 *   io_contig       rank r owns one contiguous region: call i at r*n*size + i*size
 *   io_interleaved  call i of rank r at (i*np + r)*size
 *   io_strided      a strided view: 1 KiB blocks of the ranks alternate, one
 *                   call covers np*size bytes of the file
 * Aggregate MB/s = np * n * size / time (page cache; no fsync in the loop).
 * Each write phase starts from a new file.
 * The file lives in $WB_IO_DIR (default $TMPDIR or /tmp) and is deleted.
 * WB_IO_NONBLOCKING=1: the collective columns use the non-blocking forms
 * (MPI_File_iwrite_at_all / iread_at_all, then MPI_Wait) instead.
 */
#include "wb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(WB_IO_STRIDED)
#define NAME "io_strided"
#define TITLE "MPI-IO Strided Shared-File Bandwidth Test"
#elif defined(WB_IO_INTERLEAVED)
#define NAME "io_interleaved"
#define TITLE "MPI-IO Interleaved Shared-File Bandwidth Test"
#else
#define NAME "io_contig"
#define TITLE "MPI-IO Contiguous Shared-File Bandwidth Test"
#endif

#define STRIDE_BLOCK 1024

static MPI_Offset offset_of(const wb_ctx_t *c, size_t size, int n, int i)
{
#if defined(WB_IO_STRIDED)
    (void)c;
    (void)n;
    return (MPI_Offset)i * (MPI_Offset)size; /* in the view */
#elif defined(WB_IO_INTERLEAVED)
    (void)n;
    return ((MPI_Offset)i * c->np + c->rank) * (MPI_Offset)size;
#else
    return ((MPI_Offset)c->rank * n + i) * (MPI_Offset)size;
#endif
}

static void set_view(wb_ctx_t *c, MPI_File fh, size_t size, MPI_Datatype *ft)
{
#if defined(WB_IO_STRIDED)
    int          bs = size < STRIDE_BLOCK ? (int)size : STRIDE_BLOCK;
    MPI_Aint     disp = (MPI_Aint)c->rank * bs;
    int          len = bs;
    MPI_Datatype one;
    WB(MPI_Type_create_hindexed(1, &len, &disp, MPI_BYTE, &one));
    WB(MPI_Type_create_resized(one, 0, (MPI_Aint)bs * c->np, ft));
    WB(MPI_Type_commit(ft));
    WB(MPI_Type_free(&one));
    WB(MPI_File_set_view(fh, 0, MPI_BYTE, *ft, "native", MPI_INFO_NULL));
#else
    (void)c;
    (void)fh;
    (void)size;
    *ft = MPI_DATATYPE_NULL;
#endif
}

/* One phase; returns the aggregate MB/s. */
/* One collective call, blocking or (WB_IO_NONBLOCKING) started and waited. */
static void coll_call(MPI_File fh, MPI_Offset off, char *buf, size_t size, int writing, int nonblocking)
{
    MPI_Request req;

    if (!nonblocking) {
        if (writing) {
            WB(MPI_File_write_at_all(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            WB(MPI_File_read_at_all(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        return;
    }
    if (writing) {
        WB(MPI_File_iwrite_at_all(fh, off, buf, (int)size, MPI_BYTE, &req));
    } else {
        WB(MPI_File_iread_at_all(fh, off, buf, (int)size, MPI_BYTE, &req));
    }
    WB(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static double phase(wb_ctx_t *c, const char *path, char *buf, size_t size, int n, int writing, int coll,
                    int *ok)
{
    const char  *nb_env = getenv("WB_IO_NONBLOCKING");
    int          nonblocking = nb_env != NULL && atoi(nb_env) != 0;
    MPI_File     fh;
    MPI_Datatype ft;
    double       t0, t;

    if (writing) {
        /* every write phase starts from an empty file (block allocation
         * is part of what a write costs; the read phases read it back) */
        if (c->rank == 0) {
            MPI_File_delete(path, MPI_INFO_NULL);
        }
        WB(MPI_Barrier(c->comm));
    }
    WB(MPI_File_open(c->comm, path, writing ? MPI_MODE_CREATE | MPI_MODE_WRONLY : MPI_MODE_RDONLY, MPI_INFO_NULL,
                     &fh));
    set_view(c, fh, size, &ft);
    if (!writing) {
        memset(buf, 0, size);
    }
    WB(MPI_Barrier(c->comm));
    t0 = wb_now();
    for (int i = 0; i < n; i++) {
        MPI_Offset off = offset_of(c, size, n, i);
        if (coll) {
            coll_call(fh, off, buf, size, writing, nonblocking);
        } else if (writing) {
            WB(MPI_File_write_at(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
        } else {
            WB(MPI_File_read_at(fh, off, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE));
        }
        if (!writing && c->o.validate) {
            *ok &= !wb_verify(c, buf, size, wb_seed(c->rank, 0, 0), "file data");
        }
    }
    WB(MPI_Barrier(c->comm));
    t = wb_now() - t0;
    WB(MPI_File_close(&fh));
    if (ft != MPI_DATATYPE_NULL) {
        WB(MPI_Type_free(&ft));
    }
    return (double)c->np * (double)n * (double)size / t / 1e6;
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 1024, .max_size = 16 << 20, .iters = 64,
                                    .iters_large = 8, .warmup = 0, .warmup_large = 0};
    static const wb_metric_t m[] = {{"indep_write_mbs", "Ind write MB/s", 0},
                                    {"indep_read_mbs", "Ind read MB/s", 0},
                                    {"coll_write_mbs", "Coll write MB/s", 0},
                                    {"coll_read_mbs", "Coll read MB/s", 0}};
    wb_ctx_t    c;
    char        path[1024], *buf;
    const char *dir = getenv("WB_IO_DIR");
    size_t      size;

    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_SIZES, &d);
    if (dir == NULL || !*dir) {
        dir = getenv("TMPDIR");
    }
    if (dir == NULL || !*dir) {
        dir = "/tmp";
    }
    snprintf(path, sizeof(path), "%s/weft-bench-io-%d.dat", dir, (int)getpid());
    WB(MPI_Bcast(path, sizeof(path), MPI_CHAR, 0, c.comm));
    wb_note(&c, "# File: %s", path);
    if (getenv("WB_IO_NONBLOCKING") != NULL && atoi(getenv("WB_IO_NONBLOCKING")) != 0) {
        wb_note(&c, "# Collective columns: MPI_File_iwrite_at_all / iread_at_all + MPI_Wait");
    }
    wb_columns(&c, 1, 4, m);
    buf = wb_alloc(c.o.max_size);
    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int    n  = wb_iters(&c, size), ok = 1, valid = -1;
        double v[4];

        wb_fill(buf, size, wb_seed(c.rank, 0, 0));
        v[0] = phase(&c, path, buf, size, n, 1, 0, &ok);
        v[1] = phase(&c, path, buf, size, n, 0, 0, &ok);
        wb_fill(buf, size, wb_seed(c.rank, 0, 0));
        v[2] = phase(&c, path, buf, size, n, 1, 1, &ok);
        v[3] = phase(&c, path, buf, size, n, 0, 1, &ok);
        if (c.rank == 0) {
            MPI_File_delete(path, MPI_INFO_NULL);
        }
        if (c.o.validate) {
            valid = wb_agree(&c, ok);
        }
        WB(MPI_Bcast(v, 4, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, v, valid);
    }
    wb_free(buf);
    return wb_finish(&c);
}
