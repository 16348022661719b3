/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Partitioned communication (MPI_Psend_init / MPI_Precv_init / MPI_Pready*
 * / MPI_Parrived) around a ring (rank -> rank+1; one rank sends to itself):
 *  - send and receive partition counts 1..64 chosen independently, so the
 *    partition sizes are not multiples of each other; eager and rendezvous
 *    partition sizes;
 *  - partitions made ready in a random order (Pready, Pready_range,
 *    Pready_list), the receiver polls Parrived in a random order until all
 *    arrived; before the sender starts, no partition has arrived;
 *  - three persistent rounds per request pair with fresh data each round
 *    (MPI_Start and MPI_Startall), data compared byte for byte;
 *  - a non-contiguous receive datatype whose elements the send partitions
 *    cut in the middle;
 *  - two requests with the same (peer, tag) in flight match in init order;
 *  - on MPI_COMM_SELF: partition j has not arrived before Pready(j);
 *  - MPI_PROC_NULL peers; a receive buffer too small (MPI_ERR_TRUNCATE);
 *  - bad input: error classes under MPI_ERRORS_RETURN.
 */
#include "mpitest.h"

static int rank, size, next, prev;

static void shuffle(int *a, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int j = rand() % (i + 1), t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static int value_of(int round, int i)
{
    return (round + 1) * 1000003 + i * 7 + 11 * prev;
}

/* One pair of requests, sp send partitions and rp receive partitions of a
 * T = sp * rp * k int buffer; rounds rounds. */
static void ring_case(int sp, int rp, int k, int rounds)
{
    int          T = sp * rp * k;
    int         *sbuf = calloc((size_t)T, sizeof(int)), *rbuf = calloc((size_t)T, sizeof(int));
    int         *order = malloc(sizeof(int) * (size_t)(sp > rp ? sp : rp));
    MPI_Request  req[2];
    MPI_Status   st;

    CHECK_OK(MPI_Psend_init(sbuf, sp, (MPI_Count)rp * k, MPI_INT, next, 7, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &req[0]));
    CHECK_OK(MPI_Precv_init(rbuf, rp, (MPI_Count)sp * k, MPI_INT, prev, 7, MPI_COMM_WORLD,
                            MPI_INFO_NULL, &req[1]));
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < T; i++) {
            sbuf[i] = (round + 1) * 1000003 + i * 7 + 11 * rank;
            rbuf[i] = -1;
        }
        CHECK_OK(MPI_Start(&req[1]));
        for (int i = 0; i < rp; i++) {
            int flag = 1;
            CHECK_OK(MPI_Parrived(req[1], i, &flag));
            CHECK(!flag, "sp %d rp %d round %d: partition %d arrived before the send started",
                  sp, rp, round, i);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_OK(MPI_Start(&req[0]));
        for (int i = 0; i < sp; i++) {
            order[i] = i;
        }
        shuffle(order, sp);
        switch (round % 3) {
        case 0:
            for (int i = 0; i < sp; i++) {
                CHECK_OK(MPI_Pready(order[i], req[0]));
            }
            break;
        case 1:
            CHECK_OK(MPI_Pready_list(sp / 2, order, req[0]));
            CHECK_OK(MPI_Pready_list(sp - sp / 2, order + sp / 2, req[0]));
            break;
        default:
            if (sp > 1) {
                CHECK_OK(MPI_Pready_range(sp / 2, sp - 1, req[0]));
            }
            CHECK_OK(MPI_Pready_range(0, sp > 1 ? sp / 2 - 1 : 0, req[0]));
            break;
        }
        for (int i = 0; i < rp; i++) {
            order[i] = i;
        }
        shuffle(order, rp);
        for (int i = 0; i < rp; i++) {
            int flag = 0;
            for (long spins = 0; !flag; spins++) {
                CHECK_OK(MPI_Parrived(req[1], order[i], &flag));
                if (spins > 100000000L) {
                    CHECK(0, "sp %d rp %d: partition %d never arrived", sp, rp, order[i]);
                    break;
                }
            }
            /* the partition's data is in place once it has arrived */
            int lo = order[i] * sp * k, bad = -1;
            for (int e = lo; e < lo + sp * k && bad < 0; e++) {
                if (rbuf[e] != value_of(round, e)) {
                    bad = e;
                }
            }
            CHECK(bad < 0, "sp %d rp %d round %d: arrived partition %d wrong at %d", sp, rp,
                  round, order[i], bad);
        }
        if (round == rounds - 1) {
            CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        } else {
            CHECK_OK(MPI_Wait(&req[1], &st));
            int count = -1;
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == T && st.MPI_SOURCE == prev && st.MPI_TAG == 7,
                  "status count %d source %d tag %d", count, st.MPI_SOURCE, st.MPI_TAG);
            CHECK_OK(MPI_Wait(&req[0], MPI_STATUS_IGNORE));
        }
        CHECK(req[0] != MPI_REQUEST_NULL && req[1] != MPI_REQUEST_NULL, "persistent freed");
        for (int i = 0, bad = 0; i < T && !bad; i++) {
            if (rbuf[i] != value_of(round, i)) {
                CHECK(0, "sp %d rp %d round %d: element %d is %d, want %d", sp, rp, round, i,
                      rbuf[i], value_of(round, i));
                bad = 1;
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* nobody starts round+1 before all checked */
    }
    CHECK_OK(MPI_Request_free(&req[0]));
    CHECK_OK(MPI_Request_free(&req[1]));
    CHECK(req[0] == MPI_REQUEST_NULL && req[1] == MPI_REQUEST_NULL, "Request_free");
    free(sbuf);
    free(rbuf);
    free(order);
}

/* Send 3-int partitions into a receive vector type of 2 ints (stride 3):
 * partition boundaries fall inside receive elements. Startall each round. */
static void noncontig_case(void)
{
    enum { NE = 12 }; /* receive elements; 24 ints of data */
    MPI_Datatype vec;
    int          sbuf[2 * NE] = {0}, rbuf[3 * NE];
    MPI_Request  req[2];

    MPI_Type_vector(2, 1, 2, MPI_INT, &vec); /* ints 0 and 2 of every 3 */
    MPI_Type_commit(&vec);
    CHECK_OK(MPI_Precv_init(rbuf, 4, NE / 4, vec, prev, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req[1]));
    CHECK_OK(MPI_Psend_init(sbuf, 8, 3, MPI_INT, next, 9, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &req[0]));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 2 * NE; i++) {
            sbuf[i] = round * 100 + i + rank;
        }
        for (int i = 0; i < 3 * NE; i++) {
            rbuf[i] = -7;
        }
        CHECK_OK(MPI_Startall(2, req));
        for (int j = 7; j >= 0; j--) {
            CHECK_OK(MPI_Pready(j, req[0]));
        }
        CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
        /* vector(2,1,2) + extent 3 ints: element e holds ints 3e and 3e+2 */
        for (int e = 0, n = 0; e < NE; e++) {
            int want0 = round * 100 + n++ + prev, want1 = round * 100 + n++ + prev;
            CHECK(rbuf[3 * e] == want0 && rbuf[3 * e + 2] == want1 && rbuf[3 * e + 1] == -7,
                  "noncontig round %d element %d: %d %d %d", round, e, rbuf[3 * e],
                  rbuf[3 * e + 1], rbuf[3 * e + 2]);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Request_free(&req[0]);
    MPI_Request_free(&req[1]);
    MPI_Type_free(&vec);
}

/* Two pairs with the same peer and tag: matched in init order. */
static void order_case(void)
{
    int         a[4] = {0}, b[4] = {0}, ra[4], rb[4];
    MPI_Request s[2], r[2];

    for (int i = 0; i < 4; i++) {
        a[i] = 10 + i + rank;
        b[i] = 20 + i + rank;
    }
    CHECK_OK(MPI_Psend_init(a, 2, 2, MPI_INT, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s[0]));
    CHECK_OK(MPI_Psend_init(b, 4, 1, MPI_INT, next, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s[1]));
    CHECK_OK(MPI_Precv_init(ra, 1, 4, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
    CHECK_OK(MPI_Precv_init(rb, 2, 2, MPI_INT, prev, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
    /* start and complete the second pair first */
    CHECK_OK(MPI_Start(&r[1]));
    CHECK_OK(MPI_Start(&s[1]));
    CHECK_OK(MPI_Pready_range(0, 3, s[1]));
    CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&s[1], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Startall(1, &r[0]));
    CHECK_OK(MPI_Startall(1, &s[0]));
    CHECK_OK(MPI_Pready(1, s[0]));
    CHECK_OK(MPI_Pready(0, s[0]));
    CHECK_OK(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&s[0], MPI_STATUS_IGNORE));
    for (int i = 0; i < 4; i++) {
        CHECK(ra[i] == 10 + i + prev && rb[i] == 20 + i + prev, "init order: ra[%d]=%d rb[%d]=%d",
              i, ra[i], i, rb[i]);
    }
    for (int i = 0; i < 2; i++) {
        MPI_Request_free(&s[i]);
        MPI_Request_free(&r[i]);
    }
}

/* On MPI_COMM_SELF the receive side can watch each partition arrive. */
static void self_case(int p)
{
    double      sbuf[64 * 5] = {0}, rbuf[64 * 5];
    MPI_Request s, r;

    CHECK_OK(MPI_Psend_init(sbuf, p, 5, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &s));
    CHECK_OK(MPI_Precv_init(rbuf, p, 5, MPI_DOUBLE, 0, 1, MPI_COMM_SELF, MPI_INFO_NULL, &r));
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 5 * p; i++) {
            sbuf[i] = round + i * 0.5;
            rbuf[i] = -1;
        }
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Start(&s));
        for (int j = 0; j < p; j++) {
            int flag = 1;
            CHECK_OK(MPI_Pready(j, s));
            for (int q = j + 1; q < p; q++) {
                CHECK_OK(MPI_Parrived(r, q, &flag));
                CHECK(!flag, "self p %d: partition %d arrived before Pready", p, q);
            }
            do {
                CHECK_OK(MPI_Parrived(r, j, &flag));
            } while (!flag);
            CHECK(rbuf[5 * j] == round + 5 * j * 0.5, "self p %d: partition %d data", p, j);
        }
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK(memcmp(sbuf, rbuf, sizeof(double) * 5 * (size_t)p) == 0, "self p %d data", p);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void proc_null_case(void)
{
    int         buf[4] = {0}, flag = 0;
    MPI_Request s, r;
    MPI_Status  st;

    CHECK_OK(MPI_Psend_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &s));
    CHECK_OK(MPI_Precv_init(buf, 2, 2, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &r));
    for (int round = 0; round < 2; round++) {
        CHECK_OK(MPI_Start(&s));
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Pready(1, s));
        CHECK_OK(MPI_Parrived(r, 1, &flag));
        CHECK(flag, "PROC_NULL partition not arrived");
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL, "PROC_NULL source %d", st.MPI_SOURCE);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void error_case(void)
{
    int         buf[8], small[4], flag, list[2] = {0, 9};
    MPI_Request s, r, bad;

    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors without a comm */
    CHECK_CLASS(MPI_Psend_init(buf, 0, 1, MPI_INT, next, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Psend_init(buf, 2, -1, MPI_INT, next, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_INT, size, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                MPI_ERR_RANK);
    CHECK_CLASS(MPI_Psend_init(buf, 2, 1, MPI_INT, next, -5, MPI_COMM_WORLD, MPI_INFO_NULL, &bad),
                MPI_ERR_TAG);
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &bad), MPI_ERR_RANK);
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, prev, MPI_ANY_TAG, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &bad), MPI_ERR_TAG);
    CHECK_CLASS(MPI_Precv_init(buf, 2, 1, MPI_INT, prev, 0, MPI_COMM_NULL, MPI_INFO_NULL, &bad),
                MPI_ERR_COMM);

    /* a send of 8 ints into a receive of 4: MPI_ERR_TRUNCATE, nothing overrun */
    for (int i = 0; i < 8; i++) {
        buf[i] = i;
    }
    CHECK_OK(MPI_Psend_init(buf, 4, 2, MPI_INT, next, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &s));
    CHECK_OK(MPI_Precv_init(small, 2, 2, MPI_INT, prev, 5, MPI_COMM_WORLD, MPI_INFO_NULL, &r));
    CHECK_OK(MPI_Start(&r));
    CHECK_CLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);        /* a receive */
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_REQUEST);        /* not started */
    CHECK_OK(MPI_Start(&s));
    CHECK_CLASS(MPI_Start(&s), MPI_ERR_REQUEST);           /* already active */
    CHECK_CLASS(MPI_Pready(4, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready(-1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_range(2, 1, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pready_list(-1, list, s), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST); /* a send */
    CHECK_CLASS(MPI_Parrived(r, 2, &flag), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Parrived(MPI_REQUEST_NULL, 0, &flag), MPI_ERR_REQUEST);
    CHECK_OK(MPI_Pready(0, s));
    CHECK_CLASS(MPI_Pready(0, s), MPI_ERR_ARG);            /* twice in a round */
    CHECK_CLASS(MPI_Pready_list(2, list, s), MPI_ERR_ARG); /* 0 again */
    CHECK_OK(MPI_Pready_range(1, 3, s));
    CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    CHECK_CLASS(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_ERR_TRUNCATE);
    for (int i = 0; i < 4; i++) {
        CHECK(small[i] == i, "truncated receive: small[%d] = %d", i, small[i]);
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    static const int parts[] = {1, 2, 3, 7, 16, 64};
    const int        np = (int)(sizeof(parts) / sizeof(parts[0]));

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    srand(1234u + (unsigned)rank);

    for (int a = 0; a < np; a++) {
        for (int b = 0; b < np; b++) {
            ring_case(parts[a], parts[b], 1, 3);
        }
    }
    ring_case(5, 3, 2048, 3); /* 30 720 ints: 24 KiB send / 40 KiB receive partitions */
    ring_case(64, 1, 512, 2);
    noncontig_case();
    order_case();
    if (rank == 0) {
        for (int a = 0; a < np; a++) {
            self_case(parts[a]);
        }
    }
    proc_null_case();
    error_case();
    return mpitest_finish();
}
