/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Errors found by file access running in the background (ENOSPC: writes to
 * /dev/full fail) reach the call that completes the access - MPI_Wait,
 * MPI_Test, MPI_Waitall, *_end - with the right class (MPI_ERR_NO_SPACE),
 * on the file's error handler and never on MPI_COMM_SELF's. Forms:
 * iwrite_at, iwrite (individual pointer) completed by Test, iwrite_at_all,
 * iwrite_all in a Waitall, write_all_begin/end, write_at_all_begin/end.
 * The file stays usable for the next access after each failure.
 *
 * With an argument (tests/mpi/test_io_bgerr.py) one failure runs under
 * MPI_ERRORS_ARE_FATAL on the file, so the job aborts printing the message,
 * which must name the completing call, the call that started the access and
 * the path:  ind (iwrite_at + MPI_Wait), coll (iwrite_at_all + MPI_Wait),
 * split (write_all_begin + write_all_end).
 */
#include <unistd.h>
#include "mpitest.h"

#define N 256

static int rank;
static int file_calls, file_class, self_calls;

static void file_handler(MPI_File *fh, int *code, ...)
{
    (void)fh;
    file_calls++;
    MPI_Error_class(*code, &file_class);
}

static void self_handler(MPI_Comm *comm, int *code, ...)
{
    (void)comm;
    (void)code;
    self_calls++;
}

static MPI_File open_full(MPI_Comm comm, MPI_Errhandler eh)
{
    MPI_File fh;

    CHECK_OK(MPI_File_open(comm, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_errhandler(fh, eh));
    return fh;
}

/* rc must be of class want, reported once on the file's handler and not
 * on MPI_COMM_SELF's. */
static void expect_class(int rc, int want, const char *what)
{
    int cls = -1;

    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: class %d, want %d", what, cls, want);
    CHECK(file_calls == 1 && file_class == want, "%s: file handler called %d times (class %d)", what, file_calls,
          file_class);
    CHECK(self_calls == 0, "%s: MPI_COMM_SELF's handler called %d times", what, self_calls);
    file_calls = self_calls = 0;
    file_class              = -1;
}

static void expect(int rc, const char *what)
{
    expect_class(rc, MPI_ERR_NO_SPACE, what);
}

static void run_all(void)
{
    MPI_Errhandler feh, ceh;
    MPI_File       fh;
    MPI_Request    req, reqs[2];
    MPI_Status     sts[2];
    int            buf[N], flag = 0, rc = MPI_SUCCESS;

    for (int i = 0; i < N; i++) {
        buf[i] = i;
    }
    MPI_File_create_errhandler(file_handler, &feh);
    MPI_Comm_create_errhandler(self_handler, &ceh);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, ceh);

    /* independent, each rank its own handle */
    fh = open_full(MPI_COMM_SELF, feh);
    CHECK_OK(MPI_File_iwrite_at(fh, 0, buf, N, MPI_INT, &req));
    expect(MPI_Wait(&req, MPI_STATUS_IGNORE), "iwrite_at + MPI_Wait");
    CHECK(req == MPI_REQUEST_NULL, "iwrite_at: the failed request was not freed");
    CHECK_OK(MPI_File_iwrite(fh, buf, N, MPI_INT, &req));
    while (!flag) {
        rc = MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS || flag, "iwrite + MPI_Test: error %d before completion", rc);
    }
    expect(rc, "iwrite + MPI_Test");
    CHECK_OK(MPI_File_close(&fh));

    /* collective (two-phase in the background) */
    fh = open_full(MPI_COMM_WORLD, feh);
    CHECK_OK(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &req));
    expect(MPI_Wait(&req, MPI_STATUS_IGNORE), "iwrite_at_all + MPI_Wait");
    CHECK_OK(MPI_File_iwrite_all(fh, buf, N, MPI_INT, &reqs[0]));
    CHECK_OK(MPI_Irecv(NULL, 0, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, &reqs[1]));
    rc = MPI_Waitall(2, reqs, sts);
    expect_class(rc, MPI_ERR_IN_STATUS, "iwrite_all in Waitall");
    {
        int c0 = -1;
        MPI_Error_class(sts[0].MPI_ERROR, &c0);
        CHECK(c0 == MPI_ERR_NO_SPACE && sts[1].MPI_ERROR == MPI_SUCCESS,
              "Waitall statuses: class %d and %d", c0, sts[1].MPI_ERROR);
    }
    CHECK_OK(MPI_File_write_all_begin(fh, buf, N, MPI_INT));
    expect(MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE), "write_all_begin/end");
    CHECK_OK(MPI_File_write_at_all_begin(fh, 0, buf, N, MPI_INT));
    expect(MPI_File_write_at_all_end(fh, buf, MPI_STATUS_IGNORE), "write_at_all_begin/end");
    CHECK_OK(MPI_File_close(&fh));

    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
    MPI_Errhandler_free(&feh);
    MPI_Errhandler_free(&ceh);
}

/* One failure under MPI_ERRORS_ARE_FATAL: must not return. */
static void run_fatal(const char *which)
{
    int         buf[N] = {0};
    MPI_Request req;
    MPI_File    fh;

    if (!strcmp(which, "ind")) {
        fh = open_full(MPI_COMM_SELF, MPI_ERRORS_ARE_FATAL);
        MPI_File_iwrite_at(fh, 0, buf, N, MPI_INT, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else if (!strcmp(which, "coll")) {
        fh = open_full(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * N * 4, buf, N, MPI_INT, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        fh = open_full(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        MPI_File_write_all_begin(fh, buf, N, MPI_INT);
        MPI_File_write_all_end(fh, buf, MPI_STATUS_IGNORE);
    }
    printf("NOT ABORTED\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (access("/dev/full", W_OK) != 0) {
        if (rank == 0) {
            printf("skip: no writable /dev/full (the ENOSPC source of this test)\nNo Errors\n");
        }
        MPI_Finalize();
        return 0;
    }
    if (argc > 1) {
        run_fatal(argv[1]);
    } else {
        run_all();
    }
    return mpitest_finish();
}
