/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Many small unexpected messages: rank 1 sends 10^5 8-byte messages to rank
 * 0 (first with Isend, then with blocking Send) and only afterwards a
 * handshake; rank 0 waits for the handshake before it posts any data receive,
 * then receives everything in order and checks the embedded sequence numbers.
 * A last phase interleaves two senders (ranks 1 and 2) received through
 * MPI_ANY_SOURCE and by explicit source. Usage: p2p_unexpected [count].
 * Needs 2 ranks (prints No Errors and skips with 1).
 */
#include "mpitest.h"

#include <stdint.h>

enum { TAG_ISEND = 11, TAG_SEND = 12, TAG_TWO = 13, TAG_HS = 20, TAG_BAR = 30 };

static int rank, size;

static void pbarrier(void)
{
    int t = 0;
    if (rank == 0) {
        for (int r = 1; r < size; r++) {
            MPI_Recv(&t, 1, MPI_INT, r, TAG_BAR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        for (int r = 1; r < size; r++) {
            MPI_Send(&t, 1, MPI_INT, r, TAG_BAR, MPI_COMM_WORLD);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, TAG_BAR, MPI_COMM_WORLD);
        MPI_Recv(&t, 1, MPI_INT, 0, TAG_BAR, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* 8-byte message: low 32 bits sequence, high 32 bits sender ^ salt. */
static uint64_t encode(int sender, unsigned seq, unsigned salt)
{
    return ((uint64_t)((unsigned)sender ^ salt) << 32) | seq;
}

static void wait_handshake(int from, int tag_expected)
{
    int hs = -1;
    MPI_Status st;
    CHECK_OK(MPI_Recv(&hs, 1, MPI_INT, from, TAG_HS, MPI_COMM_WORLD, &st));
    CHECK(hs == tag_expected, "handshake from %d carried %d, expected %d", from, hs, tag_expected);
}

/* Rank 0: receive n messages from `from` with `tag` in order. */
static void recv_in_order(int from, int tag, unsigned n, unsigned salt)
{
    int reported = 0;
    for (unsigned i = 0; i < n; i++) {
        uint64_t v = 0;
        MPI_Status st;
        int count = -1;
        int rc = MPI_Recv(&v, 8, MPI_BYTE, from, tag, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        if ((rc != MPI_SUCCESS || count != 8 || v != encode(from, i, salt) ||
             st.MPI_SOURCE != from || st.MPI_TAG != tag) &&
            reported++ < 5) {
            CHECK(0, "tag %d msg %u from %d: rc %d count %d value %#llx expected %#llx src %d tag %d",
                  tag, i, from, rc, count, (unsigned long long)v,
                  (unsigned long long)encode(from, i, salt), st.MPI_SOURCE, st.MPI_TAG);
        }
    }
}

int main(int argc, char **argv)
{
    unsigned n = argc > 1 ? (unsigned)strtoul(argv[1], NULL, 0) : 100000u;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        if (rank == 0) {
            printf("p2p_unexpected: needs 2 ranks, skipping\n");
        }
        return mpitest_finish();
    }

    /* Phase 1: rank 1 Isends all, then handshake, then waits. */
    if (rank == 1) {
        uint64_t    *vals = malloc(sizeof(uint64_t) * n);
        MPI_Request *reqs = malloc(sizeof(MPI_Request) * n);
        for (unsigned i = 0; i < n; i++) {
            vals[i] = encode(1, i, 0xa5a5u);
            CHECK_OK(MPI_Isend(&vals[i], 8, MPI_BYTE, 0, TAG_ISEND, MPI_COMM_WORLD, &reqs[i]));
        }
        int hs = TAG_ISEND;
        CHECK_OK(MPI_Send(&hs, 1, MPI_INT, 0, TAG_HS, MPI_COMM_WORLD));
        CHECK_OK(MPI_Waitall((int)n, reqs, MPI_STATUSES_IGNORE));
        free(vals);
        free(reqs);
    } else if (rank == 0) {
        wait_handshake(1, TAG_ISEND);
        recv_in_order(1, TAG_ISEND, n, 0xa5a5u);
    }
    pbarrier();

    /* Phase 2: blocking sends (small messages complete eagerly while rank 0 sits
     * in the handshake receive), then the handshake. */
    if (rank == 1) {
        for (unsigned i = 0; i < n; i++) {
            uint64_t v = encode(1, i, 0x5a5au);
            CHECK_OK(MPI_Send(&v, 8, MPI_BYTE, 0, TAG_SEND, MPI_COMM_WORLD));
        }
        int hs = TAG_SEND;
        CHECK_OK(MPI_Send(&hs, 1, MPI_INT, 0, TAG_HS, MPI_COMM_WORLD));
    } else if (rank == 0) {
        wait_handshake(1, TAG_SEND);
        recv_in_order(1, TAG_SEND, n, 0x5a5au);
    }
    pbarrier();

    /* Phase 3: two senders interleaved. Each sends n/2 messages with Isend,
     * alternating with a blocking Send every 16th message. */
    if (size >= 3) {
        unsigned half = n / 2;
        if (rank == 1 || rank == 2) {
            uint64_t    *vals = malloc(sizeof(uint64_t) * half);
            MPI_Request *reqs = malloc(sizeof(MPI_Request) * half);
            for (unsigned i = 0; i < half; i++) {
                vals[i] = encode(rank, i, 0x3c3cu);
                if (i % 16 == 15) {
                    CHECK_OK(MPI_Send(&vals[i], 8, MPI_BYTE, 0, TAG_TWO, MPI_COMM_WORLD));
                    reqs[i] = MPI_REQUEST_NULL;
                } else {
                    CHECK_OK(MPI_Isend(&vals[i], 8, MPI_BYTE, 0, TAG_TWO, MPI_COMM_WORLD, &reqs[i]));
                }
            }
            int hs = TAG_TWO;
            CHECK_OK(MPI_Send(&hs, 1, MPI_INT, 0, TAG_HS, MPI_COMM_WORLD));
            CHECK_OK(MPI_Waitall((int)half, reqs, MPI_STATUSES_IGNORE));
            free(vals);
            free(reqs);
        } else if (rank == 0) {
            wait_handshake(1, TAG_TWO);
            wait_handshake(2, TAG_TWO);
            unsigned next[3] = {0, 0, 0};
            int      reported = 0;
            /* First quarter by explicit source alternately, the rest via ANY_SOURCE. */
            for (unsigned i = 0; i < half / 4; i++) {
                for (int s = 1; s <= 2; s++) {
                    uint64_t v = 0;
                    CHECK_OK(MPI_Recv(&v, 8, MPI_BYTE, s, TAG_TWO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
                    if (v != encode(s, next[s], 0x3c3cu) && reported++ < 5) {
                        CHECK(0, "source %d msg %u: value %#llx", s, next[s], (unsigned long long)v);
                    }
                    next[s]++;
                }
            }
            while (next[1] < half || next[2] < half) {
                uint64_t   v = 0;
                MPI_Status st;
                CHECK_OK(MPI_Recv(&v, 8, MPI_BYTE, MPI_ANY_SOURCE, TAG_TWO, MPI_COMM_WORLD, &st));
                int s = st.MPI_SOURCE;
                if (s != 1 && s != 2) {
                    CHECK(0, "ANY_SOURCE receive reported source %d", s);
                    break;
                }
                if (v != encode(s, next[s], 0x3c3cu) && reported++ < 5) {
                    CHECK(0, "ANY_SOURCE: source %d msg %u: value %#llx", s, next[s],
                          (unsigned long long)v);
                }
                next[s]++;
            }
            CHECK(next[1] == half && next[2] == half, "received %u and %u of %u", next[1], next[2],
                  half);
        }
        pbarrier();
    }

    /* Nothing must be left over. */
    if (rank == 0) {
        int flag = 1;
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a message is left over");
    }
    return mpitest_finish();
}
