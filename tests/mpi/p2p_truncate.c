/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Truncation: a message longer than the receive buffer must give an error of
 * class MPI_ERR_TRUNCATE (under MPI_ERRORS_RETURN), deliver the part that
 * fits intact, write nothing past the buffer (guard bytes), report count =
 * what fit, and leave the channel usable. Covers eager and rendezvous sizes,
 * receives posted before the message arrives and after (unexpected), Recv,
 * Irecv+Wait, Irecv+Waitall (MPI_ERR_IN_STATUS), Mprobe+Mrecv, and typed
 * (MPI_INT) receives. Ranks 0 (sender) and 1 (receiver); alone, rank 0
 * plays both roles with nonblocking sends.
 */
#include "mpitest.h"

enum { TAG = 5, TAG_READY = 6, TAG_NEXT = 7, GUARD = 256 };

static int rank, size, peer_s, peer_r;

/* One case: the sender sends n bytes; the receiver receives into cap bytes. */
static void one_case(size_t n, size_t cap, int posted_first, int how, unsigned seed)
{
    int sender = rank == peer_s, receiver = rank == peer_r;
    MPI_Request sreq = MPI_REQUEST_NULL;
    unsigned char *sb = NULL;
    int ready = 0;

    if (sender) {
        sb = malloc(n ? n : 1);
        mpitest_fill(sb, n, seed);
    }
    /* posted_first: the receiver posts before the sender sends (ready
     * message), else the sender sends first and then says ready. */
    if (receiver) {
        unsigned char *rb = malloc(cap + GUARD);
        memset(rb, 0xc3, cap + GUARD);
        MPI_Request r = MPI_REQUEST_NULL;
        MPI_Status  st;
        int         rc = MPI_SUCCESS, count = -1;

        if (posted_first && how != 3) {
            CHECK_OK(MPI_Irecv(rb, (int)cap, MPI_BYTE, peer_s, TAG, MPI_COMM_WORLD, &r));
            if (!sender) {
                MPI_Send(&ready, 1, MPI_INT, peer_s, TAG_READY, MPI_COMM_WORLD);
            }
        }
        if (sender) { /* self */
            CHECK_OK(MPI_Isend(sb, (int)n, MPI_BYTE, peer_r, TAG, MPI_COMM_WORLD, &sreq));
        }
        if (!posted_first && !sender) {
            MPI_Recv(&ready, 1, MPI_INT, peer_s, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        if (posted_first && how != 3) {
            if (how == 2) {
                rc = MPI_Waitall(1, &r, &st);
                CHECK(rc == MPI_ERR_IN_STATUS || rc == MPI_ERR_TRUNCATE,
                      "n %zu cap %zu: Waitall returned %d", n, cap, rc);
                rc = st.MPI_ERROR;
            } else {
                rc = MPI_Wait(&r, &st);
            }
        } else if (how == 0) {
            rc = MPI_Recv(rb, (int)cap, MPI_BYTE, peer_s, TAG, MPI_COMM_WORLD, &st);
        } else if (how == 1) {
            CHECK_OK(MPI_Irecv(rb, (int)cap, MPI_BYTE, peer_s, TAG, MPI_COMM_WORLD, &r));
            rc = MPI_Wait(&r, &st);
        } else if (how == 2) {
            CHECK_OK(MPI_Irecv(rb, (int)cap, MPI_BYTE, peer_s, TAG, MPI_COMM_WORLD, &r));
            rc = MPI_Waitall(1, &r, &st);
            CHECK(rc == MPI_ERR_IN_STATUS || rc == MPI_ERR_TRUNCATE, "n %zu cap %zu: Waitall returned %d",
                  n, cap, rc);
            rc = st.MPI_ERROR;
        } else {
            MPI_Message m = MPI_MESSAGE_NULL;
            MPI_Status  pst;
            CHECK_OK(MPI_Mprobe(peer_s, TAG, MPI_COMM_WORLD, &m, &pst));
            MPI_Get_count(&pst, MPI_BYTE, &count);
            CHECK(count == (int)n, "Mprobe count %d, expected %zu", count, n);
            rc = MPI_Mrecv(rb, (int)cap, MPI_BYTE, &m, &st); /* m is undefined after an error */
        }
        int cls = -1;
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_TRUNCATE, "n %zu cap %zu posted %d how %d: error class %d, expected MPI_ERR_TRUNCATE",
              n, cap, posted_first, how, cls);
        CHECK(r == MPI_REQUEST_NULL, "n %zu cap %zu how %d: request not freed", n, cap, how);
        count = -1;
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)cap, "n %zu cap %zu how %d: count %d, expected what fit", n, cap, how, count);
        CHECK(st.MPI_SOURCE == peer_s && st.MPI_TAG == TAG, "status source %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
        long bad = mpitest_verify(rb, cap, seed);
        CHECK(bad < 0, "n %zu cap %zu how %d: first bad byte at %ld", n, cap, how, bad);
        for (size_t i = cap; i < cap + GUARD; i++) {
            if (rb[i] != 0xc3) {
                CHECK(0, "n %zu cap %zu how %d: guard byte %zu past the buffer overwritten", n, cap, how,
                      i - cap);
                break;
            }
        }
        free(rb);
    }
    if (sender && !receiver) {
        if (posted_first && how != 3) {
            MPI_Recv(&ready, 1, MPI_INT, peer_r, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK_OK(MPI_Send(sb, (int)n, MPI_BYTE, peer_r, TAG, MPI_COMM_WORLD));
        } else {
            CHECK_OK(MPI_Isend(sb, (int)n, MPI_BYTE, peer_r, TAG, MPI_COMM_WORLD, &sreq));
            MPI_Send(&ready, 1, MPI_INT, peer_r, TAG_READY, MPI_COMM_WORLD);
        }
    }
    if (sender) {
        /* the sender sees success even though the receiver truncated */
        CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        free(sb);
    }

    /* A following message on the same channel still works. */
    int v = 0;
    if (sender && receiver) {
        int w = (int)seed;
        CHECK_OK(MPI_Sendrecv(&w, 1, MPI_INT, peer_r, TAG, &v, 1, MPI_INT, peer_s, TAG, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        CHECK(v == (int)seed, "follow-up message: %d", v);
    } else if (sender) {
        int w = (int)seed;
        CHECK_OK(MPI_Send(&w, 1, MPI_INT, peer_r, TAG, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer_r, TAG_NEXT, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else if (receiver) {
        CHECK_OK(MPI_Recv(&v, 1, MPI_INT, peer_s, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(v == (int)seed, "follow-up message: %d", v);
        CHECK_OK(MPI_Send(&v, 1, MPI_INT, peer_s, TAG_NEXT, MPI_COMM_WORLD));
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    peer_s = 0;
    peer_r = size > 1 ? 1 : 0;

    size_t eager = 16384;
    const char *e = getenv("WEFT_SMP_EAGERSIZE");
    if (e) {
        eager = (size_t)strtoull(e, NULL, 0);
    }
    struct { size_t n, cap; } cases[] = {
        {1, 0},          {100, 50},           {64, 63},
        {eager, 100},    {eager + 1, eager},  {eager + 1, eager / 2},
        {200000, 65536}, {1 << 20, 200000},   {1 << 20, (1 << 20) - 1},
        {4u << 20, 1000},
    };
    unsigned seed = 1;
    size_t ncases = sizeof(cases) / sizeof(cases[0]);
    if (argc > 1) { /* debugging aid: run only the first N cases */
        ncases = (size_t)atoi(argv[1]);
    }
    for (size_t c = 0; c < ncases; c++) {
        for (int posted = 0; posted < 2; posted++) {
            for (int how = 0; how < 4; how++) {
                if (argc > 2 && how != atoi(argv[2])) { /* debugging aid */
                    continue;
                }
                if (rank == peer_s || rank == peer_r) {
                    one_case(cases[c].n, cases[c].cap, posted, how, seed);
                }
                seed++;
            }
        }
    }

    /* Typed receive: 5 ints into room for 3 -> count 3 ints, guard intact. */
    if (rank == peer_s || rank == peer_r) {
        int sv[5] = {10, 11, 12, 13, 14}, rv[5] = {-1, -1, -1, -1, -1};
        MPI_Request sr = MPI_REQUEST_NULL;
        MPI_Status  st;
        if (rank == peer_s) {
            CHECK_OK(MPI_Isend(sv, 5, MPI_INT, peer_r, TAG, MPI_COMM_WORLD, &sr));
        }
        if (rank == peer_r) {
            int rc = MPI_Recv(rv, 3, MPI_INT, peer_s, TAG, MPI_COMM_WORLD, &st), cls = -1, count = -1;
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_ERR_TRUNCATE, "typed: class %d", cls);
            MPI_Get_count(&st, MPI_INT, &count);
            CHECK(count == 3, "typed: count %d", count);
            CHECK(rv[0] == 10 && rv[1] == 11 && rv[2] == 12 && rv[3] == -1 && rv[4] == -1,
                  "typed: %d %d %d %d %d", rv[0], rv[1], rv[2], rv[3], rv[4]);
        }
        CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
    }
    /* release the idle ranks only at the end (p2p barrier via rank 0) */
    int t = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MPI_Send(&t, 1, MPI_INT, r, 99, MPI_COMM_WORLD);
        }
    } else {
        MPI_Recv(&t, 1, MPI_INT, 0, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    return mpitest_finish();
}
