/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 2 on intercommunicators: MPI_Comm_idup(_with_info) of an
 * intercommunicator returns at once and completes through its request.
 * WORLD is split in two halves joined by MPI_Intercomm_create, then:
 *  - group 0 calls idup(inter) then a blocking Barrier(WORLD), group 1 the
 *    reverse (deadlocks if the idup agrees blocking inside the call);
 *  - inside each group, even local ranks idup then Barrier(local half), odd
 *    ones the reverse (deadlocks if the group's own agreement blocks);
 *  - Ibarrier(WORLD) and idup in opposite orders, then Waitall;
 *  - two idups in flight on different intercommunicators started in
 *    opposite orders by the two groups (one _with_info), and two on the
 *    same one;
 *  - every new intercommunicator: test_inter, local and remote sizes,
 *    messages from every rank to every remote rank checked byte for byte,
 *    an Allreduce over the intercommunicator, distinct contexts;
 *  - attributes copied, the _with_info hints are the given ones.
 */
#include "mpitest.h"

static int wrank, wsize, lo_size, group, lrank, lsize, rsize, rbase;

#define MSG_BYTES 1000

static unsigned seed_of(int from_world, int to_world, int salt)
{
    return (unsigned)(from_world * 1000 + to_world * 7 + salt);
}

static void check_inter(MPI_Comm c, const char *what, int salt)
{
    int            flag = 0, s = -1, r = -1, rs = -1, v = wrank + 1, sum = -1, want = 0;
    unsigned char *out, *in;
    MPI_Request   *req;

    CHECK(c != MPI_COMM_NULL, "%s is MPI_COMM_NULL", what);
    if (c == MPI_COMM_NULL) {
        return;
    }
    MPI_Comm_test_inter(c, &flag);
    MPI_Comm_size(c, &s);
    MPI_Comm_rank(c, &r);
    MPI_Comm_remote_size(c, &rs);
    CHECK(flag && s == lsize && r == lrank && rs == rsize,
          "%s: inter %d size %d rank %d remote size %d (want %d %d %d)", what, flag, s, r, rs,
          lsize, lrank, rsize);
    /* every rank sends MSG_BYTES to every remote rank */
    out = malloc((size_t)rsize * MSG_BYTES);
    in  = malloc((size_t)rsize * MSG_BYTES);
    req = malloc(sizeof(*req) * 2 * (size_t)rsize);
    memset(in, 0, (size_t)rsize * MSG_BYTES);
    for (int j = 0; j < rsize; j++) {
        mpitest_fill(out + (size_t)j * MSG_BYTES, MSG_BYTES, seed_of(wrank, rbase + j, salt));
        CHECK_OK(MPI_Irecv(in + (size_t)j * MSG_BYTES, MSG_BYTES, MPI_BYTE, j, 9, c, &req[j]));
        CHECK_OK(MPI_Isend(out + (size_t)j * MSG_BYTES, MSG_BYTES, MPI_BYTE, j, 9, c,
                           &req[rsize + j]));
    }
    CHECK_OK(MPI_Waitall(2 * rsize, req, MPI_STATUSES_IGNORE));
    for (int j = 0; j < rsize; j++) {
        long bad = mpitest_verify(in + (size_t)j * MSG_BYTES, MSG_BYTES,
                                  seed_of(rbase + j, wrank, salt));
        CHECK(bad < 0, "%s: message from remote rank %d differs at byte %ld", what, j, bad);
    }
    free(out);
    free(in);
    free(req);
    /* Allreduce on an intercommunicator: the remote group's sum */
    for (int j = 0; j < rsize; j++) {
        want += rbase + j + 1;
    }
    CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c));
    CHECK(sum == want, "%s: allreduce %d, want %d", what, sum, want);
}

int main(int argc, char **argv)
{
    MPI_Comm    half, inter, inter2, n1 = MPI_COMM_NULL, n2 = MPI_COMM_NULL,
                                     n3 = MPI_COMM_NULL, n4 = MPI_COMM_NULL, n5 = MPI_COMM_NULL;
    MPI_Request r[3];
    MPI_Info    info;
    int         key, flag;
    void       *val;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    if (wsize < 2) {
        if (wrank == 0) {
            printf("conf_idup_inter: needs 2 or more ranks for two groups; skipped\n");
        }
        return mpitest_finish();
    }
    lo_size = wsize / 2;
    group   = wrank < lo_size;
    group   = group ? 0 : 1;
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &half));
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    MPI_Comm_rank(half, &lrank);
    MPI_Comm_size(half, &lsize);
    rbase = group == 0 ? lo_size : 0;
    rsize = group == 0 ? wsize - lo_size : lo_size;
    CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, rbase, 77, &inter));
    MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Comm_dup(inter, &inter2));
    MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &key, NULL);
    MPI_Comm_set_attr(inter, key, (void *)0x5a5a);

    /* 1: the groups order idup(inter) and a blocking Barrier(WORLD)
     * differently */
    if (group == 0) {
        CHECK_OK(MPI_Comm_idup(inter, &n1, &r[0]));
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    } else {
        CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        CHECK_OK(MPI_Comm_idup(inter, &n1, &r[0]));
    }
    CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_inter(n1, "idup vs world barrier", 1);
    flag = 0;
    MPI_Comm_get_attr(n1, key, &val, &flag);
    CHECK(flag && val == (void *)0x5a5a, "attribute not copied by the intercomm idup");

    /* 2: within each group, members order it differently against a
     * blocking barrier of the group */
    if (lrank % 2 == 0) {
        CHECK_OK(MPI_Comm_idup(inter, &n2, &r[0]));
        CHECK_OK(MPI_Barrier(half));
    } else {
        CHECK_OK(MPI_Barrier(half));
        CHECK_OK(MPI_Comm_idup(inter, &n2, &r[0]));
    }
    CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    check_inter(n2, "idup vs group barrier", 2);
    MPI_Comm_free(&n2);

    /* 3: Ibarrier(WORLD) and idup in opposite orders, then Waitall */
    if (wrank % 2 == 0) {
        CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]));
        CHECK_OK(MPI_Comm_idup(inter, &n2, &r[1]));
    } else {
        CHECK_OK(MPI_Comm_idup(inter, &n2, &r[1]));
        CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r[0]));
    }
    CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
    check_inter(n2, "idup vs Ibarrier", 3);

    /* 4: idups of two intercommunicators started in opposite orders by the
     * groups (one with info), plus a second one on inter: all pending */
    MPI_Info_create(&info);
    MPI_Info_set(info, "weft_test_hint", "inter");
    if (group == 0) {
        CHECK_OK(MPI_Comm_idup(inter, &n3, &r[0]));
        CHECK_OK(MPI_Comm_idup_with_info(inter2, info, &n4, &r[1]));
        CHECK_OK(MPI_Comm_idup(inter, &n5, &r[2]));
    } else {
        CHECK_OK(MPI_Comm_idup_with_info(inter2, info, &n4, &r[1]));
        CHECK_OK(MPI_Comm_idup(inter, &n3, &r[0]));
        CHECK_OK(MPI_Comm_idup(inter, &n5, &r[2]));
    }
    MPI_Info_free(&info); /* the hints were copied at the call */
    CHECK_OK(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
    check_inter(n3, "first of two idups of inter", 4);
    check_inter(n4, "idup_with_info of inter2", 5);
    check_inter(n5, "second of two idups of inter", 6);
    {
        MPI_Info got;
        char     v[16] = "";
        int      len   = sizeof(v);
        flag           = 0;
        MPI_Comm_get_info(n4, &got);
        MPI_Info_get_string(got, "weft_test_hint", &len, v, &flag);
        CHECK(flag && strcmp(v, "inter") == 0, "idup_with_info of an intercomm lost the hint");
        MPI_Info_free(&got);
    }
    /* distinct contexts: local rank 0 of group 0 sends on n3, n5, n1,
     * inter; remote rank 0 receives them in the reverse order */
    if (lrank == 0) {
        int x, y = 0;
        if (group == 0) {
            x = 3;
            MPI_Send(&x, 1, MPI_INT, 0, 0, n3);
            x = 5;
            MPI_Send(&x, 1, MPI_INT, 0, 0, n5);
            x = 1;
            MPI_Send(&x, 1, MPI_INT, 0, 0, n1);
            x = 9;
            MPI_Send(&x, 1, MPI_INT, 0, 0, inter);
        } else {
            MPI_Recv(&y, 1, MPI_INT, 0, 0, inter, MPI_STATUS_IGNORE);
            CHECK(y == 9, "inter got %d", y);
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n1, MPI_STATUS_IGNORE);
            CHECK(y == 1, "n1 got %d", y);
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n5, MPI_STATUS_IGNORE);
            CHECK(y == 5, "n5 got %d", y);
            MPI_Recv(&y, 1, MPI_INT, 0, 0, n3, MPI_STATUS_IGNORE);
            CHECK(y == 3, "n3 got %d", y);
        }
    }

    /* 5: many rounds, orders varying by rank and round, with a blocking
     * barrier of the other group's choice in between */
    for (int it = 0; it < 10; it++) {
        MPI_Comm n6 = MPI_COMM_NULL;
        if ((wrank + it) % 2 == 0) {
            CHECK_OK(MPI_Comm_idup(inter, &n6, &r[0]));
            CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
        } else {
            CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
            CHECK_OK(MPI_Comm_idup(inter, &n6, &r[0]));
        }
        CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
        if (it % 3 == 0) {
            check_inter(n6, "idup in a loop", 10 + it);
        }
        MPI_Comm_free(&n6);
    }

    MPI_Comm_free(&n1);
    MPI_Comm_free(&n2);
    MPI_Comm_free(&n3);
    MPI_Comm_free(&n4);
    MPI_Comm_free(&n5);
    MPI_Comm_free(&inter2);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&half);
    MPI_Comm_free_keyval(&key);
    return mpitest_finish();
}
