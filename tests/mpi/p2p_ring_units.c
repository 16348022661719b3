/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Streams of small messages whose sizes mix one-unit messages (0-12 bytes,
 * two to a cache line in the shared-memory ring) with longer ones (which
 * start on a line, after a one-unit SKIP where needed), over many laps of
 * the ring: each rank sends to the next and receives from the previous, in
 * windows of non-blocking calls, with one tag, so the receiver checks both
 * the bytes and the order of every message (MPI's non-overtaking rule).
 * Run also with a small ring (WEFT_SMP_QUEUE_LENGTH=4k) so the wrap lands
 * on every unit parity.
 * args: [messages per rank] (default 20000).
 */
#include "mpitest.h"

#define WINDOW 64
#define MAXLEN 300

/* Message i's size: mostly 0-12 bytes, with 13-44 (one line), 45-300 and
 * runs of each, from a fixed pseudo-random sequence both sides compute. */
static int msg_len(unsigned i)
{
    unsigned h = i * 2654435761u;
    h ^= h >> 13;
    switch ((h >> 4) % 8) {
    case 0:
    case 1:
    case 2:
    case 3:
        return (int)(h % 13); /* one unit */
    case 4:
        return 13 + (int)(h % 32); /* 13-44: one line */
    case 5:
        return 45 + (int)(h % (MAXLEN - 44));
    case 6:
        return (int)(h % 2) * 12; /* 0 or 12: the unit's edges */
    default:
        return 8;
    }
}

static unsigned char pattern(unsigned i, int k)
{
    return (unsigned char)(i * 31u + (unsigned)k * 7u + 1u);
}

int main(int argc, char **argv)
{
    int      rank, size;
    unsigned total = argc > 1 ? (unsigned)atoi(argv[1]) : 20000u;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int            right = (rank + 1) % size, left = (rank + size - 1) % size;
    unsigned char *sbuf = malloc((size_t)WINDOW * MAXLEN), *rbuf = malloc((size_t)WINDOW * MAXLEN);
    MPI_Request    req[2 * WINDOW];
    long           bad = 0;

    for (unsigned base = 0; base < total; base += WINDOW) {
        unsigned n = total - base < WINDOW ? total - base : WINDOW;
        for (unsigned w = 0; w < n; w++) {
            CHECK_OK(MPI_Irecv(rbuf + (size_t)w * MAXLEN, MAXLEN, MPI_BYTE, left, 7, MPI_COMM_WORLD,
                               &req[w]));
        }
        for (unsigned w = 0; w < n; w++) {
            unsigned i = base + w;
            for (int k = 0; k < msg_len(i); k++) {
                sbuf[(size_t)w * MAXLEN + (size_t)k] = pattern(i, k);
            }
            CHECK_OK(MPI_Isend(sbuf + (size_t)w * MAXLEN, msg_len(i), MPI_BYTE, right, 7,
                               MPI_COMM_WORLD, &req[n + w]));
        }
        MPI_Status st[2 * WINDOW];
        CHECK_OK(MPI_Waitall((int)(2 * n), req, st));
        for (unsigned w = 0; w < n && bad < 5; w++) {
            unsigned i = base + w;
            int      got;
            MPI_Get_count(&st[w], MPI_BYTE, &got);
            if (got != msg_len(i)) { /* a message out of order shows as a wrong length */
                CHECK(0, "message %u from rank %d: %d bytes, expected %d", i, left, got, msg_len(i));
                bad++;
                continue;
            }
            for (int k = 0; k < got; k++) {
                if (rbuf[(size_t)w * MAXLEN + (size_t)k] != pattern(i, k)) {
                    CHECK(0, "message %u from rank %d: byte %d is %d, expected %d", i, left, k,
                          rbuf[(size_t)w * MAXLEN + (size_t)k], pattern(i, k));
                    bad++;
                    break;
                }
            }
        }
    }
    free(sbuf);
    free(rbuf);
    return mpitest_finish();
}
