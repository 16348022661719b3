/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_spawn / MPI_Comm_spawn_multiple of this program:
 *   1. spawn N children (argv[1], default 3): errcodes all MPI_SUCCESS,
 *      the intercomm's remote size, data both ways, MPI_Intercomm_merge
 *      (children high) and an allreduce over it, MPI_Comm_disconnect; the
 *      children check MPI_Comm_get_parent (and MPI_COMM_NULL after
 *      disconnecting) and spawn one grandchild of their own (nested spawn);
 *   2. spawn_multiple of two commands (1 + 2 processes) with different
 *      arguments: each child checks its MPI_APPNUM and arguments;
 *   3. a missing program: MPI_ERR_SPAWN at every parent, errcodes filled
 *      with MPI_ERR_SPAWN, and the parents go on.
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

static char self_path[PATH_MAX];

/* The call's result, its message printed when it failed (diagnosis). */
static int said(int rc)
{
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int  len = 0;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "spawn test: error: %s\n", msg);
    }
    return rc;
}

static void talk(MPI_Comm inter, int is_parent)
{
    int      rank, size, rsize, mrank, msize, sum = 0, want = 0, one;
    MPI_Comm merged;

    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    /* Each parent sends every child 1000*parent + child; children answer
     * with 2000*child + parent. */
    for (int r = 0; r < rsize; r++) {
        int out = is_parent ? 1000 * rank + r : 2000 * rank + r, in = -1;
        int want_in = is_parent ? 2000 * r + rank : 1000 * r + rank;
        MPI_Sendrecv(&out, 1, MPI_INT, r, 7, &in, 1, MPI_INT, r, 7, inter, MPI_STATUS_IGNORE);
        CHECK(in == want_in, "from remote %d got %d, expected %d", r, in, want_in);
    }
    CHECK_OK(MPI_Intercomm_merge(inter, !is_parent, &merged));
    MPI_Comm_rank(merged, &mrank);
    MPI_Comm_size(merged, &msize);
    CHECK(msize == size + rsize, "merged size %d", msize);
    CHECK(mrank == (is_parent ? rank : rsize + rank), "merged rank %d", mrank);
    one = mrank + 1;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
    for (int i = 1; i <= msize; i++) {
        want += i;
    }
    CHECK(sum == want, "allreduce %d, expected %d", sum, want);
    MPI_Comm_free(&merged);
}

static int child(int argc, char **argv, MPI_Comm parent)
{
    int  appnum = -1, flag = 0, *attr;
    char kind = argv[1][5]; /* "childN" normal+nested, "childA"/"childB" multiple, "childL" leaf */

    CHECK(parent != MPI_COMM_NULL, "a child without a parent");
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
    if (flag) {
        appnum = *attr;
    }
    if (kind == 'A' || kind == 'B') {
        CHECK(flag && appnum == (kind == 'A' ? 0 : 1), "%s: appnum %d (flag %d)", argv[1],
              appnum, flag);
        CHECK(argc == 3 && strcmp(argv[2], kind == 'A' ? "alpha" : "beta") == 0,
              "%s: arguments wrong (argc %d)", argv[1], argc);
    }
    talk(parent, 0);
    if (kind == 'N') { /* nested: every child of the first spawn has one of its own */
        MPI_Comm sub;
        int      code = -1;
        char    *args[] = {"childL", NULL};
        CHECK_OK(MPI_Comm_spawn(self_path, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &sub, &code));
        CHECK(code == MPI_SUCCESS, "nested errcode %d", code);
        talk(sub, 1);
        CHECK_OK(MPI_Comm_disconnect(&sub));
    }
    CHECK_OK(MPI_Comm_disconnect(&parent));
    CHECK_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "get_parent after disconnect is not MPI_COMM_NULL");
    return mpitest_finish();
}

int main(int argc, char **argv)
{
    MPI_Comm parent, inter;
    int      rank, n = argc > 1 && atoi(argv[1]) > 0 ? atoi(argv[1]) : 3;

    MPI_Init(&argc, &argv);
    if (realpath(argv[0], self_path) == NULL) {
        snprintf(self_path, sizeof(self_path), "%s", argv[0]);
    }
    MPI_Comm_get_parent(&parent);
    if (argc > 1 && strncmp(argv[1], "child", 5) == 0) {
        return child(argc, argv, parent);
    }
    CHECK(parent == MPI_COMM_NULL, "not spawned, yet a parent");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* 1. N children, each with a grandchild */
    {
        int  *codes = malloc(sizeof(int) * (size_t)n), rsize = -1;
        char *args[] = {"childN", NULL};
        for (int i = 0; i < n; i++) {
            codes[i] = -1;
        }
        CHECK_OK(said(MPI_Comm_spawn(self_path, args, n, MPI_INFO_NULL, 0, MPI_COMM_WORLD,
                                     &inter, codes)));
        for (int i = 0; i < n; i++) {
            CHECK(codes[i] == MPI_SUCCESS, "errcodes[%d] = %d", i, codes[i]);
        }
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == n, "remote size %d, expected %d", rsize, n);
        talk(inter, 1);
        CHECK_OK(MPI_Comm_disconnect(&inter));
        free(codes);
    }
    /* 2. spawn_multiple: two commands with their own arguments */
    {
        char    *cmds[2]   = {self_path, self_path};
        char    *a0[]      = {"childA", "alpha", NULL}, *a1[] = {"childB", "beta", NULL};
        char   **argvs[2]  = {a0, a1};
        int      procs[2]  = {1, 2}, codes[3] = {-1, -1, -1}, rsize = -1;
        MPI_Info infos[2]  = {MPI_INFO_NULL, MPI_INFO_NULL};
        CHECK_OK(said(MPI_Comm_spawn_multiple(2, cmds, argvs, procs, infos, 0, MPI_COMM_WORLD,
                                              &inter, codes)));
        for (int i = 0; i < 3; i++) {
            CHECK(codes[i] == MPI_SUCCESS, "multiple: errcodes[%d] = %d", i, codes[i]);
        }
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == 3, "multiple: remote size %d", rsize);
        talk(inter, 1);
        CHECK_OK(MPI_Comm_disconnect(&inter));
    }
    /* 3. a missing program */
    {
        int codes[2] = {-1, -1};
        CHECK_CLASS(MPI_Comm_spawn("/nonexistent/weft-no-such-program", MPI_ARGV_NULL, 2,
                                   MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, codes),
                    MPI_ERR_SPAWN);
        for (int i = 0; i < 2; i++) {
            int cls = -1;
            MPI_Error_class(codes[i], &cls);
            CHECK(cls == MPI_ERR_SPAWN, "missing program: errcodes[%d] class %d", i, cls);
        }
        CHECK(inter == MPI_COMM_NULL, "failed spawn returned a communicator");
        CHECK_CLASS(MPI_Comm_spawn("/nonexistent/weft-no-such-program", MPI_ARGV_NULL, 1,
                                   MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter, MPI_ERRCODES_IGNORE),
                    MPI_ERR_SPAWN);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mpitest_finish();
}
