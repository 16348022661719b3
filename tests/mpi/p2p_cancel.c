/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Cancel: a posted Irecv that never matches can be cancelled (Wait/Test
 * completes it, Test_cancelled true, handle freed), and a later message with
 * that tag goes to a new receive; cancelling a receive that already matched,
 * or a send that already completed, is harmless (Test_cancelled false, data
 * intact); cancelling pending sends (eager and rendezvous) either succeeds
 * (the receiver never sees the message) or fails (it arrives normally);
 * cancelled persistent receives can be restarted. Pairs (0,1), (2,3)...; an
 * odd last rank and a lone rank work with themselves.
 */
#include "mpitest.h"

enum { TAG_A = 21, TAG_B = 22, TAG_FLAG = 23, TAG_SYNC = 24, TAG_SC = 25 };

static int rank, size, peer;

static void sync_peer(void)
{
    int a = 0, b = 0;
    MPI_Sendrecv(&a, 1, MPI_INT, peer, TAG_SYNC, &b, 1, MPI_INT, peer, TAG_SYNC, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
}

static void cancel_unmatched_recv(int src, int use_test)
{
    char        buf[64];
    MPI_Request r;
    MPI_Status  st;
    int         flag = 0;
    CHECK_OK(MPI_Irecv(buf, sizeof buf, MPI_BYTE, src, TAG_A, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Test(&r, &flag, &st));
    CHECK(flag == 0, "unmatched receive (src %d) completed", src);
    CHECK_OK(MPI_Cancel(&r));
    CHECK(r != MPI_REQUEST_NULL, "MPI_Cancel freed the request");
    if (use_test) {
        flag = 0;
        for (long i = 0; !flag && i < 100000000L; i++) {
            CHECK_OK(MPI_Test(&r, &flag, &st));
        }
        CHECK(flag, "cancelled receive never completed in MPI_Test");
    } else {
        CHECK_OK(MPI_Wait(&r, &st));
    }
    CHECK(r == MPI_REQUEST_NULL, "request not freed after completion of a cancelled receive");
    flag = 0;
    CHECK_OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag, "Test_cancelled false for a cancelled unmatched receive (src %d)", src);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    if (peer >= size) {
        peer = rank;
    }

    /* 1. Cancel unmatched receives (specific source, ANY_SOURCE, with Wait
     * and with Test); then a message with that tag goes to a new receive. */
    cancel_unmatched_recv(peer, 0);
    cancel_unmatched_recv(MPI_ANY_SOURCE, 1);
    cancel_unmatched_recv(peer, 1);
    sync_peer();
    {
        int         v = rank * 10 + 1, got = -1;
        MPI_Request s;
        MPI_Status  st;
        CHECK_OK(MPI_Isend(&v, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD, &st));
        CHECK(got == peer * 10 + 1, "after cancel: got %d, expected %d", got, peer * 10 + 1);
        int flag = 1;
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "Test_cancelled true for a normal receive");
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }

    /* 2. Cancel of a completed send is harmless. */
    {
        unsigned char sb[100], rb[100];
        MPI_Request   s;
        MPI_Status    st;
        mpitest_fill(sb, sizeof sb, (unsigned)rank);
        CHECK_OK(MPI_Isend(sb, sizeof sb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Recv(rb, sizeof rb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(mpitest_verify(rb, sizeof rb, (unsigned)peer) < 0, "data before cancel");
        sync_peer(); /* peer has received my message: the send is done */
        int flag = 0;
        for (long i = 0; !flag && i < 100000000L; i++) {
            CHECK_OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        }
        /* s is now MPI_REQUEST_NULL: cancelling the null request is an error,
         * so use a fresh send that is known to have been received instead. */
        CHECK_OK(MPI_Isend(sb, sizeof sb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Recv(rb, sizeof rb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        sync_peer();
        CHECK_OK(MPI_Cancel(&s));
        CHECK_OK(MPI_Wait(&s, &st));
        flag = 1;
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0, "cancel of a completed send reported cancelled");
        CHECK(mpitest_verify(rb, sizeof rb, (unsigned)peer) < 0, "data after cancel");
    }

    /* 3. Cancel of a receive that already matched: not cancelled, data intact. */
    {
        unsigned char sb[5000], rb[5000];
        MPI_Request   r, s;
        MPI_Status    st;
        mpitest_fill(sb, sizeof sb, 77u + (unsigned)rank);
        CHECK_OK(MPI_Irecv(rb, sizeof rb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Isend(sb, sizeof sb, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        sync_peer(); /* both sends done -> in flight or delivered */
        /* make sure it matched: probe must not see it (it went to r), so
         * just test until done, then cancel a fresh matched receive */
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(mpitest_verify(rb, sizeof rb, 77u + (unsigned)peer) < 0, "matched receive data");
        /* matched-but-maybe-incomplete case: large message, cancel right away */
        size_t         n = 1 << 20;
        unsigned char *lb = malloc(n), *lr = malloc(n);
        mpitest_fill(lb, n, 99u + (unsigned)rank);
        CHECK_OK(MPI_Isend(lb, (int)n, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &s));
        /* wait until the message is visible, then receive it and cancel */
        CHECK_OK(MPI_Probe(peer, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Irecv(lr, (int)n, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Cancel(&r));
        CHECK_OK(MPI_Wait(&r, &st));
        int flag = 1;
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        if (flag) {
            /* cancel won the race: the message is still there to receive */
            CHECK_OK(MPI_Recv(lr, (int)n, MPI_BYTE, peer, TAG_B, MPI_COMM_WORLD, &st));
        }
        CHECK(mpitest_verify(lr, n, 99u + (unsigned)peer) < 0, "large matched receive (cancel flag %d)",
              flag);
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        free(lb);
        free(lr);
    }
    sync_peer();

    /* 4. Cancel pending sends (the peer posts nothing until told): either
     * cancelled (peer must not receive it) or not (peer receives it). */
    size_t sizes[] = {8, 20000, 1 << 20};
    for (int k = 0; k < 3; k++) {
        size_t         n = sizes[k];
        unsigned char *sb = malloc(n), *rb = malloc(n);
        MPI_Request    s;
        MPI_Status     st;
        int            mine = -1, theirs = -1;
        mpitest_fill(sb, n, 500u + (unsigned)(k * 64 + rank));
        CHECK_OK(MPI_Isend(sb, (int)n, MPI_BYTE, peer, TAG_SC, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Cancel(&s));
        /* MPI-4.1 3.8.4: a Wait on a communication marked for cancellation
         * returns irrespective of other processes (Test eventually succeeds).
         * Poll with a deadline so a non-local cancel is reported instead of
         * hanging; the peer then receives the message to rescue the send. */
        int    done = 0;
        double t0 = MPI_Wtime();
        while (!done && MPI_Wtime() - t0 < 3.0) {
            CHECK_OK(MPI_Test(&s, &done, &st));
        }
        if (!done) {
            /* Cancelling sends is deprecated in MPI-4.1 and MPICH does not
             * make this wait local either: report, do not fail. */
            fprintf(stderr, "NOTE rank %d: size %zu: a cancelled Isend did not complete locally "
                            "within 3 s (MPI-4.1 3.8.4 says Wait after Cancel is local)\n", rank, n);
        }
        if (done) {
            CHECK_OK(MPI_Test_cancelled(&st, &mine));
        } else {
            mine = -1; /* still pending: the peer must receive it */
        }
        CHECK_OK(MPI_Sendrecv(&mine, 1, MPI_INT, peer, TAG_FLAG, &theirs, 1, MPI_INT, peer, TAG_FLAG,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        if (theirs != 1) {
            CHECK_OK(MPI_Recv(rb, (int)n, MPI_BYTE, peer, TAG_SC, MPI_COMM_WORLD, &st));
            CHECK(mpitest_verify(rb, n, 500u + (unsigned)(k * 64 + peer)) < 0,
                  "uncancelled send of %zu bytes: data", n);
        }
        if (!done) {
            CHECK_OK(MPI_Wait(&s, &st));
        }
        sync_peer();
        int flag = 1;
        CHECK_OK(MPI_Iprobe(peer, TAG_SC, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "size %zu: message still present after send cancel reported %d", n, theirs);
        free(sb);
        free(rb);
        sync_peer();
    }

    /* 5. Persistent receive: start, cancel, restart, then it matches. */
    {
        int         v = -1, w = 4242 + rank;
        MPI_Request r, s;
        MPI_Status  st;
        int         flag = 0;
        CHECK_OK(MPI_Recv_init(&v, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Cancel(&r));
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(r != MPI_REQUEST_NULL, "persistent request freed by Wait");
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag, "persistent receive not cancelled");
        sync_peer();
        CHECK_OK(MPI_Start(&r));
        CHECK_OK(MPI_Isend(&w, 1, MPI_INT, peer, TAG_A, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Wait(&r, &st));
        flag = 1;
        CHECK_OK(MPI_Test_cancelled(&st, &flag));
        CHECK(flag == 0 && v == 4242 + peer, "restarted persistent receive: flag %d v %d", flag, v);
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
    }

    /* 6. Many cancelled receives then traffic on the same tag. */
    {
        MPI_Request rs[100];
        char        b[100][8];
        for (int i = 0; i < 100; i++) {
            CHECK_OK(MPI_Irecv(b[i], 8, MPI_BYTE, i % 2 ? peer : MPI_ANY_SOURCE, TAG_B, MPI_COMM_WORLD, &rs[i]));
        }
        for (int i = 0; i < 100; i += 2) {
            CHECK_OK(MPI_Cancel(&rs[i]));
        }
        for (int i = 1; i < 100; i += 2) {
            CHECK_OK(MPI_Cancel(&rs[i]));
        }
        MPI_Status sts[100];
        CHECK_OK(MPI_Waitall(100, rs, sts));
        int ncancelled = 0;
        for (int i = 0; i < 100; i++) {
            int f = 0;
            MPI_Test_cancelled(&sts[i], &f);
            ncancelled += f;
        }
        CHECK(ncancelled == 100, "only %d of 100 receives cancelled", ncancelled);
        sync_peer();
        int         v = 7 + rank, got = -1;
        MPI_Request s;
        CHECK_OK(MPI_Isend(&v, 1, MPI_INT, peer, TAG_B, MPI_COMM_WORLD, &s));
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, TAG_B, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK(got == 7 + peer, "after 100 cancels: %d", got);
        CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
    }
    sync_peer();
    return mpitest_finish();
}
