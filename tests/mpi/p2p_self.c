/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Communication with oneself, on MPI_COMM_WORLD and MPI_COMM_SELF: blocking
 * small Sends then Recvs, 4 MiB Isend/Irecv in both posting orders, Issend
 * that completes only after the receive is posted, Sendrecv and
 * Sendrecv_replace with self, probes and wildcards. Every rank does it.
 */
#include "mpitest.h"

static int rank, size;
static int blocking_self; /* argument "blocking": plain MPI_Send to self */

static void run(MPI_Comm comm, const char *name)
{
    int me = -1, n = -1;
    MPI_Comm_rank(comm, &me);
    MPI_Comm_size(comm, &n);
    MPI_Status st;
    int        count;

    /* blocking small sends, then receives in order. A plain MPI_Send to
     * self before the receive is posted is legal to block (MPICH does), so
     * by default use MPI_Bsend; the "blocking" argument (a separate manifest
     * entry) uses MPI_Send, which Weft completes eagerly. */
    for (int i = 0; i < 10; i++) {
        unsigned char m[1000];
        size_t        len = 8 + (size_t)i * 8;
        mpitest_fill(m, len, (unsigned)i);
        if (blocking_self) {
            CHECK_OK(MPI_Send(m, (int)len, MPI_BYTE, me, 1, comm));
        } else {
            CHECK_OK(MPI_Bsend(m, (int)len, MPI_BYTE, me, 1, comm));
        }
    }
    for (int i = 0; i < 10; i++) {
        unsigned char m[1000];
        size_t        len = 8 + (size_t)i * 8;
        /* on COMM_WORLD other ranks' tokens may arrive: never both wildcards */
        int src = i % 2 ? me : MPI_ANY_SOURCE, tag = i % 3 ? 1 : MPI_ANY_TAG;
        if (comm != MPI_COMM_SELF && src == MPI_ANY_SOURCE && tag == MPI_ANY_TAG) {
            tag = 1;
        }
        CHECK_OK(MPI_Recv(m, sizeof m, MPI_BYTE, src, tag, comm, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)len && st.MPI_SOURCE == me && st.MPI_TAG == 1 && mpitest_verify(m, len, (unsigned)i) < 0,
              "%s: small self message %d: count %d source %d tag %d", name, i, count, st.MPI_SOURCE, st.MPI_TAG);
    }

    /* 4 MiB both orders */
    size_t         big = 4u << 20;
    unsigned char *sb = malloc(big), *rb = malloc(big + 1);
    for (int order = 0; order < 2; order++) {
        MPI_Request r[2];
        mpitest_fill(sb, big, 55u + (unsigned)order);
        memset(rb, 0, big + 1);
        if (order == 0) {
            CHECK_OK(MPI_Isend(sb, (int)big, MPI_BYTE, me, 2, comm, &r[0]));
            CHECK_OK(MPI_Irecv(rb, (int)big + 1, MPI_BYTE, me, 2, comm, &r[1]));
        } else {
            CHECK_OK(MPI_Irecv(rb, (int)big + 1, MPI_BYTE, me, 2, comm, &r[1]));
            CHECK_OK(MPI_Isend(sb, (int)big, MPI_BYTE, me, 2, comm, &r[0]));
        }
        MPI_Status sts[2];
        CHECK_OK(MPI_Waitall(2, r, sts));
        MPI_Get_count(&sts[1], MPI_BYTE, &count);
        CHECK(count == (int)big && mpitest_verify(rb, big, 55u + (unsigned)order) < 0 && rb[big] == 0,
              "%s: 4 MiB self order %d: count %d", name, order, count);
    }

    /* probe a large self message, then receive */
    {
        MPI_Request r;
        mpitest_fill(sb, big, 66u);
        CHECK_OK(MPI_Isend(sb, (int)big, MPI_BYTE, me, 3, comm, &r));
        CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, 3, comm, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == (int)big && st.MPI_SOURCE == me, "%s: probe self: count %d", name, count);
        CHECK_OK(MPI_Recv(rb, (int)big, MPI_BYTE, me, 3, comm, &st));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(mpitest_verify(rb, big, 66u) < 0, "%s: probed self message data", name);
    }

    /* Issend to self completes only after the receive */
    size_t isz[] = {0, 8, 100000};
    for (int k = 0; k < 3; k++) {
        MPI_Request s, r;
        int         flag = 0;
        mpitest_fill(sb, isz[k], 77u + (unsigned)k);
        CHECK_OK(MPI_Issend(sb, (int)isz[k], MPI_BYTE, me, 4, comm, &s));
        for (int i = 0; i < 100 && !flag; i++) {
            CHECK_OK(MPI_Test(&s, &flag, MPI_STATUS_IGNORE));
        }
        CHECK(flag == 0, "%s: Issend to self of %zu bytes completed without a receive", name, isz[k]);
        CHECK_OK(MPI_Irecv(rb, (int)isz[k], MPI_BYTE, me, 4, comm, &r));
        if (!flag) {
            CHECK_OK(MPI_Wait(&s, MPI_STATUS_IGNORE));
        }
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(mpitest_verify(rb, isz[k], 77u + (unsigned)k) < 0, "%s: Issend self data", name);
    }

    /* Sendrecv and Sendrecv_replace with self */
    size_t ssz[] = {4, 20000, 1u << 20};
    for (int k = 0; k < 3; k++) {
        mpitest_fill(sb, ssz[k], 88u + (unsigned)k);
        CHECK_OK(MPI_Sendrecv(sb, (int)ssz[k], MPI_BYTE, me, 5, rb, (int)ssz[k], MPI_BYTE, me, 5, comm, &st));
        CHECK(st.MPI_SOURCE == me && st.MPI_TAG == 5 && mpitest_verify(rb, ssz[k], 88u + (unsigned)k) < 0,
              "%s: Sendrecv self %zu", name, ssz[k]);
        mpitest_fill(rb, ssz[k], 99u + (unsigned)k);
        CHECK_OK(MPI_Sendrecv_replace(rb, (int)ssz[k], MPI_BYTE, me, 6, me, 6, comm, &st));
        CHECK(mpitest_verify(rb, ssz[k], 99u + (unsigned)k) < 0, "%s: Sendrecv_replace self %zu", name, ssz[k]);
    }
    free(sb);
    free(rb);
    int flag = 1;
    CHECK_OK(MPI_Iprobe(comm == MPI_COMM_SELF ? MPI_ANY_SOURCE : me, MPI_ANY_TAG, comm, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "%s: leftover self message", name);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int r = -1, n = -1;
    MPI_Comm_rank(MPI_COMM_SELF, &r);
    MPI_Comm_size(MPI_COMM_SELF, &n);
    CHECK(r == 0 && n == 1, "MPI_COMM_SELF rank %d size %d", r, n);
    blocking_self = argc > 1 && strcmp(argv[1], "blocking") == 0;
    int   bsz = 10 * (1000 + MPI_BSEND_OVERHEAD);
    void *bbuf = malloc((size_t)bsz);
    CHECK_OK(MPI_Buffer_attach(bbuf, bsz));
    run(MPI_COMM_SELF, "COMM_SELF");
    run(MPI_COMM_WORLD, "COMM_WORLD");
    /* messages on COMM_SELF and COMM_WORLD with equal tags do not mix */
    {
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request rq[2];
        CHECK_OK(MPI_Isend(&a, 1, MPI_INT, 0, 9, MPI_COMM_SELF, &rq[0]));
        CHECK_OK(MPI_Isend(&b, 1, MPI_INT, rank, 9, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Recv(&y, 1, MPI_INT, rank, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_SELF, MPI_STATUS_IGNORE));
        CHECK(x == 1 && y == 2, "COMM_SELF/COMM_WORLD mixed up: %d %d", x, y);
        CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
    }
    void *addr;
    CHECK_OK(MPI_Buffer_detach(&addr, &bsz));
    free(bbuf);
    /* gather a token at rank 0 so No Errors means all ranks are done */
    int t = 0;
    if (rank == 0) {
        for (int q = 1; q < size; q++) {
            MPI_Recv(&t, 1, MPI_INT, q, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, 10, MPI_COMM_WORLD);
    }
    return mpitest_finish();
}
