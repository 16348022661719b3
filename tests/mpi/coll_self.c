/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Collectives on MPI_COMM_SELF (the one-rank `self` algorithms, blocking,
 * and the schedules of the non-blocking forms, or of algorithms forced by
 * WEFT_<COLL>_ALGORITHM, manifest label `schedules`): each rank's block arrives
 * byte for byte, through a strided receive type and in place; a send block
 * larger than the receive block is MPI_ERR_TRUNCATE with nothing written
 * past the receive buffer; a reduction's result is the operand, even for a
 * user op (which is not called); exscan leaves the buffer alone.
 */
#include "mpitest.h"

#define N     16 /* ints per block */
#define GUARD 0x5a

static int user_op_calls;

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    user_op_calls++;
    for (int i = 0; i < *len; i++) {
        ((int *)inout)[i] += ((int *)in)[i];
    }
}

static void fill_ints(int *buf, int n, int seed)
{
    for (int i = 0; i < n; i++) {
        buf[i] = seed * 1000 + i;
    }
}

static void check_ints(const int *buf, int n, int seed, const char *what)
{
    for (int i = 0; i < n; i++) {
        if (buf[i] != seed * 1000 + i) {
            CHECK(0, "%s: int %d is %d, expected %d", what, i, buf[i], seed * 1000 + i);
            return;
        }
    }
}

static void check_guard(const void *p, size_t n, const char *what)
{
    for (size_t i = 0; i < n; i++) {
        if (((const unsigned char *)p)[i] != GUARD) {
            CHECK(0, "%s: byte %zu past the receive block was written", what, i);
            return;
        }
    }
}

/* The block-moving collectives, blocking (nb = 0) or non-blocking. */
static void blocks(int nb)
{
    MPI_Comm    self = MPI_COMM_SELF;
    int         sbuf[N], rbuf[2 * N], counts[1] = {N}, displs[1] = {0};
    MPI_Request req;
    const char *what[] = {"gather", "scatter", "allgather", "alltoall", "gatherv", "scatterv",
                          "allgatherv", "alltoallv"};

    for (int k = 0; k < 8; k++) {
        fill_ints(sbuf, N, k + 1);
        memset(rbuf, GUARD, sizeof(rbuf));
        int rc;
        switch (k) {
        case 0: rc = nb ? MPI_Igather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, self, &req)
                        : MPI_Gather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, self); break;
        case 1: rc = nb ? MPI_Iscatter(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, self, &req)
                        : MPI_Scatter(sbuf, N, MPI_INT, rbuf, N, MPI_INT, 0, self); break;
        case 2: rc = nb ? MPI_Iallgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, self, &req)
                        : MPI_Allgather(sbuf, N, MPI_INT, rbuf, N, MPI_INT, self); break;
        case 3: rc = nb ? MPI_Ialltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, self, &req)
                        : MPI_Alltoall(sbuf, N, MPI_INT, rbuf, N, MPI_INT, self); break;
        case 4: rc = nb ? MPI_Igatherv(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, 0, self, &req)
                        : MPI_Gatherv(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, 0, self); break;
        case 5: rc = nb ? MPI_Iscatterv(sbuf, counts, displs, MPI_INT, rbuf, N, MPI_INT, 0, self, &req)
                        : MPI_Scatterv(sbuf, counts, displs, MPI_INT, rbuf, N, MPI_INT, 0, self); break;
        case 6: rc = nb ? MPI_Iallgatherv(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, self, &req)
                        : MPI_Allgatherv(sbuf, N, MPI_INT, rbuf, counts, displs, MPI_INT, self); break;
        default: rc = nb ? MPI_Ialltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT,
                                          self, &req)
                         : MPI_Alltoallv(sbuf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT,
                                         self); break;
        }
        CHECK(rc == MPI_SUCCESS, "%s%s: rc %d", nb ? "i" : "", what[k], rc);
        if (nb && rc == MPI_SUCCESS) {
            CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
        check_ints(rbuf, N, k + 1, what[k]);
        check_guard(rbuf + N, N * sizeof(int), what[k]);
    }
}

int main(int argc, char **argv)
{
    int          sbuf[2 * N], rbuf[2 * N], strided[2 * N], one = 1;
    MPI_Datatype every_other;
    MPI_Op       op;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    blocks(0);
    blocks(1);

    /* a strided receive type: N ints into every other int */
    MPI_Type_vector(N, 1, 2, MPI_INT, &every_other);
    MPI_Type_commit(&every_other);
    fill_ints(sbuf, N, 7);
    memset(strided, GUARD, sizeof(strided));
    CHECK_OK(MPI_Allgather(sbuf, N, MPI_INT, strided, 1, every_other, MPI_COMM_SELF));
    for (int i = 0; i < N; i++) {
        CHECK(strided[2 * i] == 7000 + i, "strided allgather: element %d is %d", i, strided[2 * i]);
        check_guard(&strided[2 * i + 1], sizeof(int), "strided allgather: the gap");
    }
    MPI_Type_free(&every_other);

    /* in place: the block stays */
    fill_ints(rbuf, N, 8);
    CHECK_OK(MPI_Gather(MPI_IN_PLACE, N, MPI_INT, rbuf, N, MPI_INT, 0, MPI_COMM_SELF));
    CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_SELF));
    {   /* in place the send counts and displacements are not significant */
        int c[1] = {N}, d[1] = {0};
        CHECK_OK(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, rbuf, c, d, MPI_INT,
                               MPI_COMM_SELF));
    }
    check_ints(rbuf, N, 8, "in place");

    /* a larger send block: truncation, nothing past the receive block */
    fill_ints(sbuf, 2 * N, 9);
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_CLASS(MPI_Allgather(sbuf, 2 * N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    check_guard(rbuf + N, N * sizeof(int), "truncated allgather");
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_CLASS(MPI_Alltoall(sbuf, 2 * N, MPI_INT, rbuf, N, MPI_INT, MPI_COMM_SELF), MPI_ERR_TRUNCATE);
    check_guard(rbuf + N, N * sizeof(int), "truncated alltoall");

    /* reductions: the operand is the result; a user op is not called */
    MPI_Op_create(user_sum, 1, &op);
    fill_ints(sbuf, N, 3);
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_OK(MPI_Reduce(sbuf, rbuf, N, MPI_INT, op, 0, MPI_COMM_SELF));
    check_ints(rbuf, N, 3, "reduce");
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_OK(MPI_Allreduce(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    check_ints(rbuf, N, 3, "allreduce");
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_OK(MPI_Scan(sbuf, rbuf, N, MPI_INT, op, MPI_COMM_SELF));
    check_ints(rbuf, N, 3, "scan");
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_OK(MPI_Reduce_scatter_block(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    check_ints(rbuf, N, 3, "reduce_scatter_block");
    memset(rbuf, GUARD, sizeof(rbuf));
    int rcounts[1] = {N};
    CHECK_OK(MPI_Reduce_scatter(sbuf, rbuf, rcounts, MPI_INT, op, MPI_COMM_SELF));
    check_ints(rbuf, N, 3, "reduce_scatter");
    CHECK(user_op_calls == 0, "the user op ran %d times on one rank", user_op_calls);
    memset(rbuf, GUARD, sizeof(rbuf));
    CHECK_OK(MPI_Exscan(sbuf, rbuf, N, MPI_INT, MPI_SUM, MPI_COMM_SELF));
    check_guard(rbuf, sizeof(rbuf), "exscan on one rank");
    MPI_Op_free(&op);

    CHECK_OK(MPI_Bcast(&one, 1, MPI_INT, 0, MPI_COMM_SELF));
    CHECK_OK(MPI_Barrier(MPI_COMM_SELF));
    CHECK(one == 1, "bcast changed the buffer");
    return mpitest_finish();
}
