/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_THREAD_MULTIPLE point-to-point: 4 threads per rank, each exchanging
 * with the peer rank on its own tag (the thread index) for many iterations,
 * mixed sizes including rendezvous, with Isend/Irecv+Waitall, blocking
 * Sendrecv, Send/Recv ordered by rank, and Probe+Recv; data verified.
 * Ranks pair up (0,1), (2,3)...; an odd last rank and a lone rank use
 * themselves. Usage: p2p_threads [iterations].
 */
#include "mpitest.h"

#include <pthread.h>

enum { NT = 4 };

static int rank, size, peer, iters = 200;
static int errs[NT];

static const size_t sizes[] = {8, 1000, 16384, 16385, 65536, 300000, 0, 4096};

static unsigned seedof(int from, int t, int it)
{
    return (unsigned)(from * 7777777 + t * 100003 + it);
}

static void *worker(void *arg)
{
    int            t = (int)(long)arg;
    size_t         maxn = 300000;
    unsigned char *sb = malloc(maxn), *rb = malloc(maxn + 8);
    int            nsz = (int)(sizeof(sizes) / sizeof(sizes[0]));
    for (int it = 0; it < iters; it++) {
        size_t     n = sizes[(it + t) % nsz];
        MPI_Status st;
        int        count = -1, rc = MPI_SUCCESS;
        mpitest_fill(sb, n, seedof(rank, t, it));
        memset(rb, 0, n + 8);
        switch ((it + t) % 4) {
        case 0: {
            MPI_Request r[2];
            MPI_Status  sts[2];
            rc |= MPI_Irecv(rb, (int)maxn + 8, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r[0]);
            rc |= MPI_Isend(sb, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r[1]);
            rc |= MPI_Waitall(2, r, sts);
            st = sts[0];
            break;
        }
        case 1:
            rc |= MPI_Sendrecv(sb, (int)n, MPI_BYTE, peer, t, rb, (int)maxn + 8, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
            break;
        case 2:
            if (rank < peer) {
                rc |= MPI_Send(sb, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD);
                rc |= MPI_Recv(rb, (int)maxn + 8, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
            } else if (rank > peer) {
                rc |= MPI_Recv(rb, (int)maxn + 8, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
                rc |= MPI_Send(sb, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD);
            } else {
                MPI_Request r;
                rc |= MPI_Isend(sb, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r);
                rc |= MPI_Recv(rb, (int)maxn + 8, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
                rc |= MPI_Wait(&r, MPI_STATUS_IGNORE);
            }
            break;
        default: {
            MPI_Request r;
            MPI_Status  pst;
            int         pc = -1;
            rc |= MPI_Isend(sb, (int)n, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r);
            /* each thread has its own tag, so the probed message is ours */
            rc |= MPI_Probe(peer, t, MPI_COMM_WORLD, &pst);
            MPI_Get_count(&pst, MPI_BYTE, &pc);
            if (pc != (int)n) {
                fprintf(stderr, "FAIL rank %d thread %d it %d: probe count %d, expected %zu\n", rank, t, it, pc, n);
                errs[t]++;
            }
            rc |= MPI_Recv(rb, pc > 0 ? pc : 0, MPI_BYTE, peer, t, MPI_COMM_WORLD, &st);
            rc |= MPI_Wait(&r, MPI_STATUS_IGNORE);
            break;
        }
        }
        MPI_Get_count(&st, MPI_BYTE, &count);
        long bad = mpitest_verify(rb, n, seedof(peer, t, it));
        if (rc != MPI_SUCCESS || count != (int)n || st.MPI_SOURCE != peer || st.MPI_TAG != t || bad >= 0) {
            if (errs[t]++ < 5) {
                fprintf(stderr,
                        "FAIL rank %d thread %d it %d size %zu: rc %d count %d source %d tag %d bad byte %ld\n",
                        rank, t, it, n, rc, count, st.MPI_SOURCE, st.MPI_TAG, bad);
            }
        }
    }
    free(sb);
    free(rb);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1) {
        iters = atoi(argv[1]);
    }
    int q = -1;
    MPI_Query_thread(&q);
    CHECK(provided == MPI_THREAD_MULTIPLE && q == provided, "provided %d, query %d", provided, q);
    peer = rank ^ 1;
    if (peer >= size) {
        peer = rank;
    }
    if (provided == MPI_THREAD_MULTIPLE) {
        pthread_t th[NT];
        for (long t = 0; t < NT; t++) {
            pthread_create(&th[t], NULL, worker, (void *)t);
        }
        for (int t = 0; t < NT; t++) {
            pthread_join(th[t], NULL);
            mpitest_errors += errs[t];
        }
    }
    int t = mpitest_errors;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MPI_Recv(&t, 1, MPI_INT, r, 1000, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, 1000, MPI_COMM_WORLD);
    }
    return mpitest_finish();
}
