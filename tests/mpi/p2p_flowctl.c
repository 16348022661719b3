/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Flow control of eager messages to a busy receiver (WEFT_SMP_HELD_LIMIT):
 * every rank but 0 sends NMSG eager-sized messages back to back (blocking
 * Send and Isend mixed) while rank 0 sleeps, so the first ones pile up
 * unmatched at rank 0 (its probes drain the rings, its receives wait) and
 * the rest must go as rendezvous. Rank 0 then
 * receives them, by explicit source for the first half and MPI_ANY_SOURCE
 * for the rest, and checks every byte and the per-sender order (eager and
 * rendezvous messages of one sender must not overtake each other). Run with
 * a small limit, a sender of a node-local rank 0 must report diverted sends
 * in the weft_eager_held_back pvar; once rank 0 has drained everything, a
 * new eager send must not be diverted (the held count went back to zero).
 * argv[1] = "expect" when the run's limit is small enough that diversion
 * must happen.
 */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

enum { NMSG = 1500, LEN = 2000, TAG = 7, TAG_AFTER = 8 };

static unsigned char byte_of(int sender, int i, int k)
{
    return (unsigned char)(sender * 131 + i * 7 + k);
}

static void fill(unsigned char *p, int sender, int i)
{
    for (int k = 0; k < LEN; k++) {
        p[k] = byte_of(sender, i, k);
    }
}

static int check_msg(const unsigned char *p, int sender, int i)
{
    for (int k = 0; k < LEN; k++) {
        if (p[k] != byte_of(sender, i, k)) {
            return k;
        }
    }
    return -1;
}

static unsigned long long held_back(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ULL;
    CHECK_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int                rank, size, provided, idx = -1, count = 0;
    int                expect = argc > 1 && strcmp(argv[1], "expect") == 0;
    MPI_T_pvar_session s;
    MPI_T_pvar_handle  h = MPI_T_PVAR_HANDLE_NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    CHECK_OK(MPI_T_pvar_session_create(&s));
    CHECK_OK(MPI_T_pvar_get_index("weft_eager_held_back", MPI_T_PVAR_CLASS_COUNTER, &idx));
    CHECK_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    CHECK_OK(MPI_T_pvar_start(s, h));

    if (rank != 0) {
        unsigned char *bufs = malloc((size_t)NMSG * LEN);
        MPI_Request   *reqs = malloc(sizeof(MPI_Request) * NMSG);
        for (int i = 0; i < NMSG; i++) {
            unsigned char *p = bufs + (size_t)i * LEN;
            fill(p, rank, i);
            if (i % 3 == 0) {
                CHECK_OK(MPI_Send(p, LEN, MPI_BYTE, 0, TAG, MPI_COMM_WORLD));
                reqs[i] = MPI_REQUEST_NULL;
            } else {
                CHECK_OK(MPI_Isend(p, LEN, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &reqs[i]));
            }
        }
        CHECK_OK(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE));
        unsigned long long diverted = held_back(s, h);
        if (expect) {
            CHECK(diverted > 0, "%d messages of %d bytes to a busy rank 0: none diverted",
                  NMSG, LEN);
        }
        /* rank 0 has matched everything once this barrier ends */
        MPI_Barrier(MPI_COMM_WORLD);
        fill(bufs, rank, NMSG);
        CHECK_OK(MPI_Send(bufs, LEN, MPI_BYTE, 0, TAG_AFTER, MPI_COMM_WORLD));
        CHECK(held_back(s, h) == diverted,
              "a send after rank 0 drained everything was diverted (%llu -> %llu)", diverted,
              held_back(s, h));
        free(bufs);
        free(reqs);
    } else {
        unsigned char *buf  = malloc(LEN);
        int           *next = calloc((size_t)size, sizeof(int));
        int            reported = 0;
        /* Let the senders run ahead, then keep the rings drained (into the
         * unexpected queue) without matching anything for a while, so what
         * rank 0 holds unmatched stays above the limit while they send. */
        usleep(100 * 1000);
        for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < 0.3;) {
            int flag = 1;
            CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_AFTER + 1, MPI_COMM_WORLD, &flag,
                                MPI_STATUS_IGNORE));
            CHECK(flag == 0, "a message with a tag nobody sends");
            usleep(1000);
        }
        for (int i = 0; i < NMSG / 2; i++) {
            for (int src = 1; src < size; src++) {
                MPI_Status st;
                int        n = -1, bad;
                CHECK_OK(MPI_Recv(buf, LEN, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &st));
                MPI_Get_count(&st, MPI_BYTE, &n);
                if ((n != LEN || (bad = check_msg(buf, src, next[src])) >= 0) && reported++ < 5) {
                    CHECK(0, "message %d from %d: count %d, first bad byte %d", next[src], src,
                          n, n == LEN ? check_msg(buf, src, next[src]) : -1);
                }
                next[src]++;
            }
        }
        for (int left = (size - 1) * (NMSG - NMSG / 2); left > 0; left--) {
            MPI_Status st;
            int        n = -1;
            CHECK_OK(MPI_Recv(buf, LEN, MPI_BYTE, MPI_ANY_SOURCE, TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &n);
            if (st.MPI_SOURCE < 1 || st.MPI_SOURCE >= size) {
                CHECK(0, "ANY_SOURCE receive reported source %d", st.MPI_SOURCE);
                break;
            }
            if ((n != LEN || check_msg(buf, st.MPI_SOURCE, next[st.MPI_SOURCE]) >= 0) &&
                reported++ < 5) {
                CHECK(0, "ANY_SOURCE: message %d from %d: count %d, out of order or corrupt",
                      next[st.MPI_SOURCE], st.MPI_SOURCE, n);
            }
            next[st.MPI_SOURCE]++;
        }
        for (int src = 1; src < size; src++) {
            CHECK(next[src] == NMSG, "received %d of %d messages from %d", next[src], NMSG, src);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        for (int src = 1; src < size; src++) {
            MPI_Status st;
            CHECK_OK(MPI_Recv(buf, LEN, MPI_BYTE, src, TAG_AFTER, MPI_COMM_WORLD, &st));
            CHECK(check_msg(buf, src, NMSG) < 0, "the message after the drain from %d differs", src);
        }
        free(buf);
        free(next);
    }
    CHECK_OK(MPI_T_pvar_handle_free(s, &h));
    CHECK_OK(MPI_T_pvar_session_free(&s));
    CHECK_OK(MPI_T_finalize());
    return mpitest_finish();
}
