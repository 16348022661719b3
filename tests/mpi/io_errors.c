/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-IO bad input and faults: each case returns the right error class on
 * every rank (collective calls agree, nobody hangs), errors go to the file's
 * handler (MPI_ERRORS_RETURN by default; MPI_FILE_NULL's handler for open
 * and delete, settable), a failed write (ENOSPC on /dev/full) is reported.
 * Also: hints in MPI_File_get_info, size calls, amode/group queries, and a
 * registered data representation.
 */
#include <errno.h>
#include "mpitest.h"
#include "io_util.h"

static int rank, nprocs, handler_calls, handler_class;

static void count_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    handler_calls++;
    MPI_Error_class(*code, &handler_class);
}

static int plus1_write(void *user, MPI_Datatype dt, int count, void *file, MPI_Offset pos, void *extra)
{
    (void)dt;
    (void)extra;
    for (int i = 0; i < count; i++) {
        ((int *)file)[pos + i] = ((int *)user)[i] + 1;
    }
    return MPI_SUCCESS;
}

static int plus1_read(void *user, MPI_Datatype dt, int count, void *file, MPI_Offset pos, void *extra)
{
    (void)dt;
    (void)extra;
    for (int i = 0; i < count; i++) {
        ((int *)user)[i] = ((int *)file)[pos + i] - 1;
    }
    return MPI_SUCCESS;
}

static int int_extent(MPI_Datatype dt, MPI_Aint *ext, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(dt, &lb, ext);
}

int main(int argc, char **argv)
{
    char         path[600], missing[700], ro[600], dir[600], val[MPI_MAX_INFO_VAL + 1];
    MPI_File     fh;
    MPI_Info     info;
    MPI_Errhandler eh, got;
    int          amode, flag, v[8] = {0}, cmp;
    MPI_Offset   size;
    MPI_Group    g, wg;
    MPI_Datatype three;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    io_dir_make();
    io_path(path, sizeof(path), "e.dat");
    io_path(missing, sizeof(missing), "nothere/none.dat");
    io_path(ro, sizeof(ro), "ro.dat");
    io_path(dir, sizeof(dir), "closed");

    /* missing file, existing file with EXCL, bad amodes */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_NO_SUCH_FILE);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_close(&fh));
    CHECK(fh == MPI_FILE_NULL, "close did not set MPI_FILE_NULL");
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL,
                              &fh),
                MPI_ERR_FILE_EXISTS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_EXCL | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                MPI_ERR_FILE_EXISTS);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_SEQUENTIAL, MPI_INFO_NULL, &fh),
                MPI_ERR_AMODE);
    /* ranks disagreeing on the mode */
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, path, rank == nprocs - 1 && nprocs > 1 ? MPI_MODE_RDONLY : MPI_MODE_RDWR,
                              MPI_INFO_NULL, &fh),
                nprocs > 1 ? MPI_ERR_AMODE : MPI_SUCCESS);
    if (nprocs == 1) {
        MPI_File_close(&fh);
    }
    CHECK_CLASS(MPI_File_delete(missing, MPI_INFO_NULL), MPI_ERR_NO_SUCH_FILE);
    CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, io_dir, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_BAD_FILE);

    /* permissions (root ignores them: skip with a note) */
    if (geteuid() != 0) {
        if (rank == 0) {
            int fd = open(ro, O_CREAT | O_WRONLY, 0444);
            close(fd);
            mkdir(dir, 0000);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, ro, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        snprintf(missing, sizeof(missing), "%s/x.dat", dir);
        CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
                    MPI_ERR_ACCESS);
    } else {
        /* root passes permission checks on normal files; sysfs attributes
         * still refuse what their mode lacks */
        const char *ro_attr = "/sys/devices/system/cpu/online", *wo_attr = "/sys/bus/pci/rescan";
        if (access(ro_attr, R_OK) == 0) {
            CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, ro_attr, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_ERR_READ_ONLY);
        } else if (rank == 0) {
            printf("note: running as root without %s, read-only case skipped\n", ro_attr);
        }
        if (access(wo_attr, F_OK) == 0) {
            CHECK_CLASS(MPI_File_open(MPI_COMM_WORLD, wo_attr, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_ERR_ACCESS);
        } else if (rank == 0) {
            printf("note: running as root without %s, no-permission case skipped\n", wo_attr);
        }
    }

    /* the handler of MPI_FILE_NULL gets open errors and is inherited */
    MPI_File_create_errhandler(count_handler, &eh);
    CHECK_OK(MPI_File_get_errhandler(MPI_FILE_NULL, &got));
    CHECK(got == MPI_ERRORS_RETURN, "default file handler is not MPI_ERRORS_RETURN");
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, eh));
    io_path(missing, sizeof(missing), "nothere/none.dat");
    MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_NO_SUCH_FILE, "FILE_NULL handler: %d calls, class %d",
          handler_calls, handler_class);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN));
    MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE); /* read-only: goes to the inherited handler */
    CHECK(handler_calls == 2 && handler_class == MPI_ERR_READ_ONLY, "file handler: %d calls, class %d",
          handler_calls, handler_class);
    CHECK_OK(MPI_File_set_errhandler(fh, MPI_ERRORS_RETURN));
    CHECK_CLASS(MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_write_all(fh, v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_READ_ONLY);
    CHECK_CLASS(MPI_File_set_size(fh, 10), MPI_ERR_READ_ONLY);
    CHECK_OK(MPI_File_get_amode(fh, &amode));
    CHECK(amode == MPI_MODE_RDONLY, "amode %d", amode);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Errhandler_free(&eh);

    /* write-only handle cannot be read; views that are wrong */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_read_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_ACCESS);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL), MPI_ERR_UNSUPPORTED_DATAREP);
    MPI_Type_contiguous(3, MPI_BYTE, &three);
    MPI_Type_commit(&three);
    CHECK_CLASS(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_File_set_view(fh, -5, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_ERR_ARG);
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL));
    CHECK_CLASS(MPI_File_write_at(fh, 0, v, 1, three, MPI_STATUS_IGNORE), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_File_write_at(fh, 0, v, -1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_File_seek(fh, 0, 12345), MPI_ERR_ARG);
    CHECK_CLASS(MPI_File_read_all_end(fh, v, MPI_STATUS_IGNORE), MPI_ERR_OTHER);
    CHECK_CLASS(MPI_File_get_size(MPI_FILE_NULL, &size), MPI_ERR_FILE);
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&three);

    /* sizes and preallocate; group */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_size(fh, 1000));
    CHECK_OK(MPI_File_get_size(fh, &size));
    CHECK(size == 1000, "size %lld after set_size(1000)", (long long)size);
    CHECK_OK(MPI_File_preallocate(fh, 500)); /* never shrinks */
    CHECK_OK(MPI_File_get_size(fh, &size));
    CHECK(size == 1000, "size %lld after preallocate(500)", (long long)size);
    CHECK_OK(MPI_File_preallocate(fh, 4096));
    CHECK_OK(MPI_File_get_size(fh, &size));
    CHECK(size == 4096, "size %lld after preallocate(4096)", (long long)size);
    CHECK_CLASS(MPI_File_set_size(fh, -1), MPI_ERR_ARG);
    CHECK_OK(MPI_File_set_atomicity(fh, 1));
    CHECK_OK(MPI_File_get_atomicity(fh, &flag));
    CHECK(flag == 1, "atomicity %d", flag);
    CHECK_OK(MPI_File_write_at(fh, rank * 4, &rank, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_sync(fh));
    CHECK_OK(MPI_File_get_group(fh, &g));
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &cmp);
    CHECK(cmp == MPI_IDENT, "file group is not the communicator's");
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    CHECK_OK(MPI_File_close(&fh));

    /* hints recorded and reported */
    MPI_Info_create(&info);
    MPI_Info_set(info, "cb_buffer_size", "1048576");
    MPI_Info_set(info, "cb_nodes", "1");
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "striping_factor", "4");
    MPI_Info_set(info, "striping_unit", "65536");
    MPI_Info_set(info, "my_app_key", "kept");
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, info, &fh));
    MPI_Info_free(&info);
    CHECK_OK(MPI_File_get_info(fh, &info));
    {
        const char *keys[][2] = {{"cb_buffer_size", "1048576"}, {"cb_nodes", "1"}, {"romio_cb_write", "disable"},
                                 {"striping_factor", "4"},      {"striping_unit", "65536"}, {"my_app_key", "kept"}};
        for (unsigned k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
            int vlen = sizeof(val);
            flag     = 0;
            MPI_Info_get_string(info, keys[k][0], &vlen, val, &flag);
            CHECK(flag && !strcmp(val, keys[k][1]), "hint %s: %s", keys[k][0], flag ? val : "(absent)");
        }
    }
    MPI_Info_free(&info);
    CHECK_OK(MPI_File_close(&fh));

    /* ENOSPC: /dev/full accepts the open and fails every write */
    if (access("/dev/full", W_OK) == 0) {
        CHECK_OK(MPI_File_open(MPI_COMM_SELF, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
        CHECK_CLASS(MPI_File_write(fh, v, 8, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_NO_SPACE);
        CHECK_OK(MPI_File_close(&fh));
    } else if (rank == 0) {
        printf("note: no writable /dev/full, ENOSPC case skipped\n");
    }

    /* reads at the end of the file are short and say so */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_size(fh, 0));
    for (int i = 0; i < 8; i++) {
        v[i] = i;
    }
    CHECK_OK(MPI_File_write_at_all(fh, 0, v, 5, MPI_INT, MPI_STATUS_IGNORE));
    {
        int        big[20], cnt = -1;
        MPI_Status st;
        CHECK_OK(MPI_File_read_at(fh, 0, big, 20, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 5, "independent read past the end: count %d, expected 5", cnt);
        CHECK_OK(MPI_File_read_at_all(fh, 4, big, 20, MPI_INT, &st));
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == 16 && big[0] == 1, "collective read at byte 4 past the end: %d bytes (expected 16), first %d", cnt,
              big[0]);
        CHECK_OK(MPI_File_read_at(fh, 100, big, 20, MPI_INT, &st));
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 0, "read beyond the end: count %d", cnt);
    }
    CHECK_OK(MPI_File_close(&fh));

    /* sequential files: shared pointer only */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                           MPI_INFO_NULL, &fh));
    CHECK_CLASS(MPI_File_write_at(fh, 0, v, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_CLASS(MPI_File_seek(fh, 0, MPI_SEEK_SET), MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_OK(MPI_File_write_ordered(fh, &rank, 1, MPI_INT, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_File_close(&fh));

    /* APPEND starts both pointers at the end */
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_APPEND, MPI_INFO_NULL, &fh));
    {
        MPI_Offset pos, end;
        CHECK_OK(MPI_File_get_size(fh, &end));
        CHECK_OK(MPI_File_get_position(fh, &pos));
        CHECK(pos == end, "APPEND: individual pointer %lld, size %lld", (long long)pos, (long long)end);
        CHECK_OK(MPI_File_get_position_shared(fh, &pos));
        CHECK(pos == end, "APPEND: shared pointer %lld, size %lld", (long long)pos, (long long)end);
    }
    CHECK_OK(MPI_File_close(&fh));

    /* a registered representation: the file holds value+1 */
    CHECK_OK(MPI_Register_datarep("plus1", plus1_read, plus1_write, int_extent, NULL));
    CHECK_CLASS(MPI_Register_datarep("plus1", plus1_read, plus1_write, int_extent, NULL), MPI_ERR_DUP_DATAREP);
    CHECK_OK(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_size(fh, 0));
    CHECK_OK(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "plus1", MPI_INFO_NULL));
    for (int i = 0; i < 8; i++) {
        v[i] = rank * 100 + i;
    }
    CHECK_OK(MPI_File_write_at_all(fh, rank * 8, v, 8, MPI_INT, MPI_STATUS_IGNORE));
    memset(v, 0, sizeof(v));
    CHECK_OK(MPI_File_read_at_all(fh, rank * 8, v, 8, MPI_INT, MPI_STATUS_IGNORE));
    for (int i = 0; i < 8; i++) {
        CHECK(v[i] == rank * 100 + i, "plus1 read back %d: %d", i, v[i]);
    }
    CHECK_OK(MPI_File_close(&fh));
    if (rank == 0) {
        long           len;
        unsigned char *b = io_slurp(path, &len);
        CHECK(len == 32L * nprocs, "plus1 file size %ld", len);
        for (int r = 0; r < nprocs && len == 32L * nprocs; r++) {
            for (int i = 0; i < 8; i++) {
                int x;
                memcpy(&x, b + 32 * r + 4 * i, 4);
                CHECK(x == r * 100 + i + 1, "plus1 file int %d of rank %d: %d", i, r, x);
            }
        }
        free(b);
    }
    io_dir_remove();
    return mpitest_finish();
}
