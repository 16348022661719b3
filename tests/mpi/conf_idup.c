/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 2: MPI_Comm_idup returns at once and completes through its
 * request, so ranks may order it differently relative to operations on
 * other communicators.
 *  - even ranks: idup(A) then a blocking Barrier(B); odd ranks: Barrier(B)
 *    then idup(A) (deadlocks if idup blocks until everyone called it);
 *  - idups of A and B started in opposite orders on even and odd ranks,
 *    plus an MPI_Comm_idup_with_info, all pending at once, then Waitall;
 *  - MPI_Comm_create_group on B while an idup of A is pending;
 *  - every new communicator works (Allreduce, a ring exchange) and its
 *    context is distinct (messages on one never match another);
 *  - attributes are copied at completion; the info hints of
 *    _with_info are the given ones.
 */
#include "mpitest.h"

static int rank, size;

static void check_comm(MPI_Comm c, const char *what)
{
    int s = 0, v = rank + 1, r, out = rank * 10, in = -1;
    CHECK(c != MPI_COMM_NULL, "%s is MPI_COMM_NULL", what);
    if (c == MPI_COMM_NULL) {
        return;
    }
    MPI_Comm_size(c, &s);
    MPI_Comm_rank(c, &r);
    CHECK(s == size && r == rank, "%s: size %d rank %d", what, s, r);
    CHECK_OK(MPI_Allreduce(&v, &s, 1, MPI_INT, MPI_SUM, c));
    CHECK(s == size * (size + 1) / 2, "%s: allreduce %d", what, s);
    CHECK_OK(MPI_Sendrecv(&out, 1, MPI_INT, (rank + 1) % size, 5, &in, 1, MPI_INT,
                          (rank + size - 1) % size, 5, c, MPI_STATUS_IGNORE));
    CHECK(in == ((rank + size - 1) % size) * 10, "%s: ring got %d", what, in);
}

int main(int argc, char **argv)
{
    MPI_Comm    A, B, n1 = MPI_COMM_NULL, n2 = MPI_COMM_NULL, n3 = MPI_COMM_NULL, g = MPI_COMM_NULL;
    MPI_Request r[3];
    int         key, flag;
    void       *val;
    MPI_Info    info;
    MPI_Group   wg;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &A);
    MPI_Comm_dup(MPI_COMM_WORLD, &B);
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(A, key, (void *)0x77);

    /* 1: idup(A) vs a blocking barrier on B in opposite orders */
    if (rank % 2 == 0) {
        CHECK_OK(MPI_Comm_idup(A, &n1, &r[0]));
        CHECK_OK(MPI_Barrier(B));
    } else {
        CHECK_OK(MPI_Barrier(B));
        CHECK_OK(MPI_Comm_idup(A, &n1, &r[0]));
    }
    CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_comm(n1, "idup after barrier");
    MPI_Comm_get_attr(n1, key, &val, &flag);
    CHECK(flag && val == (void *)0x77, "attribute not copied by idup");

    /* 2: idups of A and B (and one with info) in opposite orders */
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_test_hint", "yes");
    if (rank % 2 == 0) {
        CHECK_OK(MPI_Comm_idup(A, &n2, &r[0]));
        CHECK_OK(MPI_Comm_idup_with_info(B, info, &n3, &r[1]));
    } else {
        CHECK_OK(MPI_Comm_idup_with_info(B, info, &n3, &r[1]));
        CHECK_OK(MPI_Comm_idup(A, &n2, &r[0]));
    }
    MPI_Info_free(&info);
    CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    check_comm(n2, "idup of A");
    check_comm(n3, "idup_with_info of B");
    {
        MPI_Info got;
        char     v[16] = "";
        int      len = sizeof(v);
        MPI_Comm_get_info(n3, &got);
        MPI_Info_get_string(got, "weft_test_hint", &len, v, &flag);
        CHECK(flag && strcmp(v, "yes") == 0, "idup_with_info lost the hint");
        MPI_Info_free(&got);
    }
    /* distinct contexts: a message on n2 is not received on n3 or n1 */
    if (size > 1) {
        int x = 1, y = 0;
        if (rank == 0) {
            MPI_Send(&x, 1, MPI_INT, 1, 0, n2);
            x = 2;
            MPI_Send(&x, 1, MPI_INT, 1, 0, n3);
            x = 3;
            MPI_Send(&x, 1, MPI_INT, 1, 0, n1);
        } else if (rank == 1) {
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n1, MPI_STATUS_IGNORE);
            CHECK(y == 3, "n1 got %d", y);
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n3, MPI_STATUS_IGNORE);
            CHECK(y == 2, "n3 got %d", y);
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n2, MPI_STATUS_IGNORE);
            CHECK(y == 1, "n2 got %d", y);
        }
    }

    /* 3: create_group on B while an idup of A is pending, many rounds */
    MPI_Comm_group(B, &wg);
    for (int it = 0; it < 20; it++) {
        MPI_Comm n4 = MPI_COMM_NULL;
        if ((rank + it) % 2 == 0) {
            CHECK_OK(MPI_Comm_idup(A, &n4, &r[0]));
            CHECK_OK(MPI_Comm_create_group(B, wg, it, &g));
        } else {
            CHECK_OK(MPI_Comm_create_group(B, wg, it, &g));
            CHECK_OK(MPI_Comm_idup(A, &n4, &r[0]));
        }
        CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        if (it % 5 == 0) {
            check_comm(n4, "idup with create_group");
            check_comm(g, "create_group with idup");
        }
        MPI_Comm_free(&n4);
        MPI_Comm_free(&g);
    }
    MPI_Group_free(&wg);
    /* a pending idup whose request is freed still completes the handle */
    {
        MPI_Comm n5 = MPI_COMM_NULL;
        CHECK_OK(MPI_Comm_idup(A, &n5, &r[0]));
        CHECK_OK(MPI_Request_free(&r[0]));
        MPI_Barrier(A); /* progresses the agreement everywhere */
        MPI_Barrier(A);
        while (n5 == MPI_COMM_NULL) {
            int f;
            MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &f, MPI_STATUS_IGNORE);
        }
        check_comm(n5, "idup with a freed request");
        MPI_Comm_free(&n5);
    }
    MPI_Comm_free(&n1);
    MPI_Comm_free(&n2);
    MPI_Comm_free(&n3);
    MPI_Comm_free(&A);
    MPI_Comm_free(&B);
    MPI_Comm_free_keyval(&key);
    return mpitest_finish();
}
