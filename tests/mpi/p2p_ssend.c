/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Synchronous and ready sends. An Issend must not complete before the
 * receiver matches it: the sender polls MPI_Test (with sleeps) and the flag
 * must stay 0; then it sends "go", the receiver receives "go" and only then
 * posts the matching receive, and the sender's Wait completes. Ssend of 0
 * bytes and of large sizes; Rsend / Irsend against a receive that a handshake
 * guarantees is posted. Ranks pair up (0,1), (2,3)...; an odd last rank idles.
 */
#include "mpitest.h"

#include <unistd.h>

enum { TAG = 60, TAG_GO = 61, TAG_RDY = 62 };

static int rank, size, peer;

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    if (size == 1) {
        printf("p2p_ssend: needs 2 ranks, skipping\n");
        return mpitest_finish();
    }
    int sender = rank % 2 == 0;
    const size_t sizes[] = {0, 8, 1000, 16384, 16385, 300000, 4u << 20};
    const int    ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
    unsigned char *b = malloc(4u << 20);
    int go = 1, got = 0;
    if (peer >= size) {
        goto done; /* odd last rank idles */
    }

    /* 1. Issend does not complete before the receive is posted. */
    for (int i = 0; i < ns; i++) {
        size_t n = sizes[i];
        unsigned seed = (unsigned)(i + 100 * rank);
        if (sender) {
            MPI_Request r;
            int         flag = 0;
            mpitest_fill(b, n, seed);
            CHECK_OK(MPI_Issend(b, (int)n, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &r));
            for (int k = 0; k < 40; k++) {
                CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
                if (flag) {
                    break;
                }
                usleep(k < 20 ? 100 : 2000);
            }
            CHECK(flag == 0, "Issend of %zu bytes completed before the receiver posted a receive", n);
            CHECK_OK(MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD));
            if (!flag) {
                CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
            }
            CHECK(r == MPI_REQUEST_NULL, "Issend request not freed");
            /* the receiver's confirmation that it got the data */
            CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            MPI_Status st;
            int        count = -1;
            memset(b, 0, n);
            CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            /* the Issend must still be pending (unmatched) */
            int flag = 0;
            CHECK_OK(MPI_Iprobe(peer, TAG, MPI_COMM_WORLD, &flag, &st));
            CHECK_OK(MPI_Recv(b, (int)n, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)n, "Issend size %zu: count %d", n, count);
            CHECK(mpitest_verify(b, n, (unsigned)(i + 100 * peer)) < 0, "Issend size %zu: data", n);
            CHECK_OK(MPI_Send(&go, 1, MPI_INT, peer, TAG_GO, MPI_COMM_WORLD));
        }
    }

    /* 2. Blocking Ssend, both directions, all sizes incl. 0 bytes. */
    for (int i = 0; i < ns; i++) {
        for (int dir = 0; dir < 2; dir++) {
            size_t   n = sizes[i];
            int      me_sends = (sender == (dir == 0));
            unsigned seed = (unsigned)(7000 + i * 2 + dir);
            if (me_sends) {
                mpitest_fill(b, n, seed);
                CHECK_OK(MPI_Ssend(b, (int)n, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD));
            } else {
                MPI_Status st;
                int        count = -1;
                memset(b, 0, n);
                if (i % 2) {
                    usleep(2000); /* make the Ssend wait for us */
                }
                CHECK_OK(MPI_Recv(b, (int)n, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD, &st));
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(count == (int)n && mpitest_verify(b, n, seed) < 0, "Ssend size %zu dir %d: count %d",
                      n, dir, count);
            }
        }
    }

    /* 3. Rsend / Irsend with a receive posted before the ready message. */
    for (int i = 0; i < ns; i++) {
        for (int nb = 0; nb < 2; nb++) {
            size_t   n = sizes[i];
            unsigned seed = (unsigned)(9000 + i * 2 + nb);
            if (sender) {
                mpitest_fill(b, n, seed);
                CHECK_OK(MPI_Recv(&got, 1, MPI_INT, peer, TAG_RDY, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                if (nb) {
                    MPI_Request r;
                    CHECK_OK(MPI_Irsend(b, (int)n, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &r));
                    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
                } else {
                    CHECK_OK(MPI_Rsend(b, (int)n, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD));
                }
            } else {
                MPI_Request r;
                MPI_Status  st;
                int         count = -1;
                memset(b, 0, n);
                CHECK_OK(MPI_Irecv(b, (int)n, MPI_BYTE, peer, TAG + 2, MPI_COMM_WORLD, &r));
                CHECK_OK(MPI_Send(&go, 1, MPI_INT, peer, TAG_RDY, MPI_COMM_WORLD));
                CHECK_OK(MPI_Wait(&r, &st));
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(count == (int)n && mpitest_verify(b, n, seed) < 0, "Rsend size %zu nb %d: count %d", n,
                      nb, count);
            }
        }
    }

    /* 4. Issend against a pre-posted receive completes (no extra calls
     * needed by the receiver beyond its Wait). */
    {
        int v = 5 + rank, w = -1;
        MPI_Request rr, sr;
        CHECK_OK(MPI_Irecv(&w, 1, MPI_INT, peer, TAG + 3, MPI_COMM_WORLD, &rr));
        CHECK_OK(MPI_Sendrecv(&go, 1, MPI_INT, peer, TAG_RDY, &got, 1, MPI_INT, peer, TAG_RDY,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Issend(&v, 1, MPI_INT, peer, TAG + 3, MPI_COMM_WORLD, &sr));
        CHECK_OK(MPI_Wait(&sr, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        CHECK(w == 5 + peer, "pre-posted Issend: %d", w);
    }
done:
    free(b);
    /* pairs are independent; rank 0 collects a token from everyone so that
     * "No Errors" is printed only after all pairs passed */
    int t = mpitest_errors;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MPI_Recv(&t, 1, MPI_INT, r, TAG_GO + 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, TAG_GO + 10, MPI_COMM_WORLD);
    }
    return mpitest_finish();
}
