/* SPDX-License-Identifier: BSD-3-Clause
 * Large messages through every rendezvous path: contiguous on both sides
 * (cooperative copy), contiguous send into a strided receive (the receiver
 * declines cooperation), strided send, truncation of a large message (only
 * what fits is written), and more concurrent large messages per pair than
 * cooperative-copy slots, and a one-way stream of sends below and above the
 * cooperative-copy size (half the L2). Pairs rank 2k with 2k+1; an odd last
 * rank sends to itself. */
#include "mpitest.h"

#define MB (1 << 20)

static int rank, size, peer;

static void contiguous_both(size_t n, unsigned seed)
{
    unsigned char *s = malloc(n), *r = malloc(n + 64);
    MPI_Request    q[2];
    MPI_Status     st;
    int            count = -1;

    mpitest_fill(s, n, seed + (unsigned)rank);
    memset(r, 0x5a, n + 64);
    MPI_Irecv(r, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(s, (int)n, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    (void)st;
    (void)count;
    CHECK(mpitest_verify(r, n, seed + (unsigned)peer) < 0, "contiguous %zu bytes", n);
    for (int i = 0; i < 64; i++) {
        CHECK(r[n + (size_t)i] == 0x5a, "byte %zu past a %zu-byte receive written", n + (size_t)i, n);
    }
    free(s);
    free(r);
}

/* Send n ints contiguously; receive them every other int (vector). */
static void contiguous_to_strided(int nints)
{
    int         *s = malloc(sizeof(int) * (size_t)nints);
    int         *r = malloc(sizeof(int) * (size_t)nints * 2);
    MPI_Datatype vec;
    MPI_Request  q[2];

    for (int i = 0; i < nints; i++) {
        s[i] = rank * 1000003 + i;
    }
    for (int i = 0; i < 2 * nints; i++) {
        r[i] = -1;
    }
    MPI_Type_vector(nints, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Irecv(r, 1, vec, peer, 2, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(s, nints, MPI_INT, peer, 2, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    int bad = 0;
    for (int i = 0; i < nints && !bad; i++) {
        bad = r[2 * i] != peer * 1000003 + i || r[2 * i + 1] != -1;
        CHECK(!bad, "strided receive element %d: %d (gap %d)", i, r[2 * i], r[2 * i + 1]);
    }
    /* and back: strided send into a contiguous receive */
    for (int i = 0; i < nints; i++) {
        r[2 * i] = rank * 7 + i;
    }
    MPI_Irecv(s, nints, MPI_INT, peer, 3, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(r, 1, vec, peer, 3, MPI_COMM_WORLD, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    bad = 0;
    for (int i = 0; i < nints && !bad; i++) {
        bad = s[i] != peer * 7 + i;
        CHECK(!bad, "strided send element %d: %d", i, s[i]);
    }
    MPI_Type_free(&vec);
    free(s);
    free(r);
}

static void truncation(size_t sent, size_t room)
{
    unsigned char *s = malloc(sent), *r = malloc(sent);
    MPI_Request    q;
    MPI_Status     st;
    int            cls = -1, count = -1;

    mpitest_fill(s, sent, 40u + (unsigned)rank);
    memset(r, 0x77, sent);
    MPI_Isend(s, (int)sent, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &q);
    int rc = MPI_Recv(r, (int)room, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &st);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_TRUNCATE, "large truncation returned class %d", cls);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int)room, "truncated count %d, expected %zu", count, room);
    CHECK(mpitest_verify(r, room, 40u + (unsigned)peer) < 0, "truncated data that fits");
    int over = 0;
    for (size_t i = room; i < sent && !over; i++) {
        over = r[i] != 0x77;
    }
    CHECK(!over, "truncated receive wrote past %zu bytes", room);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    free(s);
    free(r);
}

static void many_concurrent(int k, size_t n)
{
    unsigned char *s = malloc(n * (size_t)k), *r = malloc(n * (size_t)k);
    MPI_Request   *q = malloc(sizeof(MPI_Request) * 2 * (size_t)k);

    for (int i = 0; i < k; i++) {
        mpitest_fill(s + (size_t)i * n, n, 900u + (unsigned)(rank * 64 + i));
        MPI_Irecv(r + (size_t)i * n, (int)n, MPI_BYTE, peer, 10 + i, MPI_COMM_WORLD, &q[i]);
    }
    for (int i = 0; i < k; i++) {
        MPI_Isend(s + (size_t)i * n, (int)n, MPI_BYTE, peer, 10 + i, MPI_COMM_WORLD, &q[k + i]);
    }
    MPI_Waitall(2 * k, q, MPI_STATUSES_IGNORE);
    for (int i = 0; i < k; i++) {
        CHECK(mpitest_verify(r + (size_t)i * n, n, 900u + (unsigned)(peer * 64 + i)) < 0,
              "concurrent message %d of %d", i, k);
    }
    free(s);
    free(r);
    free(q);
}

/* The lower rank of the pair sends k messages, alternately of n_small and
 * n_large bytes, all before any receive is posted; the higher one receives
 * them (a rank paired with itself does both). */
static void one_way_stream(int k, size_t n_small, size_t n_large)
{
    size_t         stride = n_large;
    unsigned char *s = malloc(stride * (size_t)k), *r = malloc(stride * (size_t)k);
    MPI_Request   *q = malloc(sizeof(MPI_Request) * 2 * (size_t)k);
    int            nq = 0, sends = rank <= peer, recvs = rank >= peer;

    if (sends) {
        for (int i = 0; i < k; i++) {
            size_t n = i % 2 ? n_large : n_small;
            mpitest_fill(s + (size_t)i * stride, n, 700u + (unsigned)i);
            MPI_Isend(s + (size_t)i * stride, (int)n, MPI_BYTE, peer, 40 + i, MPI_COMM_WORLD, &q[nq++]);
        }
    }
    if (recvs) {
        memset(r, 0x33, stride * (size_t)k);
        for (int i = 0; i < k; i++) {
            size_t n = i % 2 ? n_large : n_small;
            MPI_Irecv(r + (size_t)i * stride, (int)n, MPI_BYTE, peer, 40 + i, MPI_COMM_WORLD, &q[nq++]);
        }
    }
    MPI_Waitall(nq, q, MPI_STATUSES_IGNORE);
    for (int i = 0; recvs && i < k; i++) {
        size_t n = i % 2 ? n_large : n_small;
        CHECK(mpitest_verify(r + (size_t)i * stride, n, 700u + (unsigned)i) < 0,
              "stream message %d of %d (%zu bytes)", i, k, n);
        CHECK(n == stride || r[(size_t)i * stride + n] == 0x33, "stream message %d wrote past %zu bytes",
              i, n);
    }
    free(s);
    free(r);
    free(q);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    if (peer >= size) {
        peer = rank;
    }
    size_t sizes[] = {256 * 1024 - 1, 256 * 1024, 1 * MB + 3, 4 * MB, 9 * MB + 17};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        contiguous_both(sizes[i], 10u + (unsigned)i);
    }
    contiguous_to_strided(300 * 1000);
    truncation(3 * MB, 2 * MB + 5);
    many_concurrent(12, 512 * 1024);
    one_way_stream(10, 64 * 1024 + 7, 2 * MB + 5);
    return mpitest_finish();
}
