/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 10: MPI_Request_free on posted receives that later match.
 * Each rank posts, per peer, receives with tags 0..5 and frees those with
 * tags 1, 3 and 5 (in the middle and at the end of the posted queue) while
 * they are active; then the peers send eager and rendezvous-sized messages
 * for every tag, in reverse tag order so matching walks the whole queue,
 * and more traffic (a ring of wildcard receives) follows. The kept
 * receives get the right bytes, the freed ones' buffers get their data too
 * (the user keeps them until the matching send is known to be done), and
 * finalize right after works. Repeated a few times (the previous build
 * crashed with SIGSEGV: the freed request's queue link was reused).
 */
#include "mpitest.h"

#define NTAG 6

int main(int argc, char **argv)
{
    int   rank, size, rounds = argc > 1 ? atoi(argv[1]) : 6, nkept = 0;
    void *kept[64];

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    for (int round = 0; round < rounds; round++) {
        size_t         big = (round % 2) ? 300000 : 64; /* rendezvous / eager */
        unsigned char *rb  = malloc((size_t)size * NTAG * big);
        unsigned char *sb  = malloc(NTAG * big);
        MPI_Request   *rq  = malloc(sizeof(MPI_Request) * (size_t)size * NTAG);
        MPI_Request   *sq  = malloc(sizeof(MPI_Request) * (size_t)size * NTAG);
        int            ns  = 0;

        for (int p = 0; p < size; p++) {
            for (int t = 0; t < NTAG; t++) {
                unsigned char *b = rb + ((size_t)p * NTAG + t) * big;
                memset(b, 0, big);
                CHECK_OK(MPI_Irecv(b, (int)big, MPI_BYTE, p, t, MPI_COMM_WORLD,
                                   &rq[p * NTAG + t]));
            }
            for (int t = 1; t < NTAG; t += 2) {
                CHECK_OK(MPI_Request_free(&rq[p * NTAG + t]));
                CHECK(rq[p * NTAG + t] == MPI_REQUEST_NULL, "freed request not reset");
            }
        }
        MPI_Barrier(MPI_COMM_WORLD); /* every receive is posted (and some freed) */
        for (int t = NTAG - 1; t >= 0; t--) {
            mpitest_fill(sb + (size_t)t * big, big, (unsigned)(rank * 31 + t + round));
        }
        for (int p = 0; p < size; p++) {
            for (int t = NTAG - 1; t >= 0; t--) {
                CHECK_OK(MPI_Isend(sb + (size_t)t * big, (int)big, MPI_BYTE, p, t, MPI_COMM_WORLD,
                                   &sq[ns++]));
            }
        }
        CHECK_OK(MPI_Waitall(size * NTAG, rq, MPI_STATUSES_IGNORE)); /* kept ones (NULL skipped) */
        CHECK_OK(MPI_Waitall(ns, sq, MPI_STATUSES_IGNORE));
        /* the senders' sends completed: every freed receive matched too (a
         * send completes only once its data is delivered or buffered) -
         * after a barrier every message was matched */
        MPI_Barrier(MPI_COMM_WORLD);
        {
            /* more traffic through the matching queues: wildcard ring */
            int out = rank, in = -1;
            MPI_Request r;
            MPI_Irecv(&in, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r);
            MPI_Send(&out, 1, MPI_INT, (rank + 1) % size, 77, MPI_COMM_WORLD);
            MPI_Wait(&r, MPI_STATUS_IGNORE);
            CHECK(in == (rank + size - 1) % size, "ring got %d", in);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) {
            for (int t = 0; t < NTAG; t += 2) { /* kept receives */
                long bad = mpitest_verify(rb + ((size_t)p * NTAG + t) * big, big,
                                          (unsigned)(p * 31 + t + round));
                CHECK(bad < 0, "round %d from %d tag %d: byte %ld wrong", round, p, t, bad);
            }
        }
        /* eager data of freed receives is delivered once matched; large
         * ones are not waited for, so they are not checked */
        if (big < 1024) {
            for (int p = 0; p < size; p++) {
                for (int t = 1; t < NTAG; t += 2) {
                    long bad = mpitest_verify(rb + ((size_t)p * NTAG + t) * big, big,
                                              (unsigned)(p * 31 + t + round));
                    CHECK(bad < 0, "round %d freed recv from %d tag %d: byte %ld", round, p, t,
                          bad);
                }
            }
        }
        /* the freed rendezvous receives may still be copying: keep their
         * buffers alive until everybody passed a barrier after a second
         * round trip */
        MPI_Barrier(MPI_COMM_WORLD);
        if (big >= 1024 && nkept < 64) {
            kept[nkept++] = rb; /* freed at the end, after more barriers */
        } else {
            free(rb);
        }
        free(sb);
        free(rq);
        free(sq);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < nkept; i++) {
        free(kept[i]);
    }
    return mpitest_finish();
}
