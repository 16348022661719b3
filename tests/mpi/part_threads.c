/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Partitioned communication under MPI_THREAD_MULTIPLE, the use it was made
 * for: NT threads each fill and MPI_Pready their own send partitions while
 * NT other threads poll MPI_Parrived on their own receive partitions
 * (8 send and 12 receive partitions: sizes not multiples of each other) and
 * check each partition's data as soon as it has arrived; the main thread
 * starts and waits. Persistent rounds around a ring (rank -> rank+1; one
 * rank sends to itself), fresh data each round.
 */
#include "mpitest.h"

#include <pthread.h>

enum { NT = 4, SP = 8, RP = 12, K = 256, T = SP * RP * K, ROUNDS = 10 };

static int         rank, size, next, prev, round_no;
static int        *sbuf, *rbuf;
static MPI_Request sreq, rreq;
static int         errs[2 * NT];

static int value(int from, int r, int i)
{
    return from * 1000003 + r * 7919 + i;
}

static void *sender(void *arg)
{
    int t = (int)(long)arg, n = T / SP;
    for (int p = t; p < SP; p += NT) {
        for (int i = p * n; i < (p + 1) * n; i++) {
            sbuf[i] = value(rank, round_no, i);
        }
        errs[t] += MPI_Pready(p, sreq) != MPI_SUCCESS;
    }
    return NULL;
}

static void *receiver(void *arg)
{
    int t = (int)(long)arg, n = T / RP;
    for (int p = t; p < RP; p += NT) {
        int flag = 0;
        while (!flag) {
            if (MPI_Parrived(rreq, p, &flag) != MPI_SUCCESS) {
                errs[NT + t]++;
                return NULL;
            }
        }
        for (int i = p * n; i < (p + 1) * n; i++) {
            if (rbuf[i] != value(prev, round_no, i)) {
                fprintf(stderr, "FAIL rank %d round %d: partition %d element %d is %d\n", rank,
                        round_no, p, i, rbuf[i]);
                errs[NT + t]++;
                break;
            }
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int       provided;
    pthread_t th[2 * NT];

    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;
    sbuf = calloc(T, sizeof(int));
    rbuf = calloc(T, sizeof(int));
    CHECK_OK(MPI_Psend_init(sbuf, SP, T / SP, MPI_INT, next, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &sreq));
    CHECK_OK(MPI_Precv_init(rbuf, RP, T / RP, MPI_INT, prev, 1, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &rreq));
    for (round_no = 0; round_no < ROUNDS; round_no++) {
        memset(rbuf, 0xff, sizeof(int) * T);
        CHECK_OK(MPI_Start(&rreq));
        CHECK_OK(MPI_Start(&sreq));
        for (long t = 0; t < NT; t++) {
            pthread_create(&th[t], NULL, sender, (void *)t);
            pthread_create(&th[NT + t], NULL, receiver, (void *)t);
        }
        for (int t = 0; t < 2 * NT; t++) {
            pthread_join(th[t], NULL);
        }
        CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Wait(&rreq, MPI_STATUS_IGNORE));
        MPI_Barrier(MPI_COMM_WORLD); /* the sender refills only after everyone checked */
    }
    for (int t = 0; t < 2 * NT; t++) {
        CHECK(errs[t] == 0, "thread %d: %d errors", t, errs[t]);
    }
    CHECK_OK(MPI_Request_free(&sreq));
    CHECK_OK(MPI_Request_free(&rreq));
    free(sbuf);
    free(rbuf);
    return mpitest_finish();
}
