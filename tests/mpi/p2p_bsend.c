/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Buffered sends: Buffer_attach + Bsend / Ibsend of several messages
 * (eager and rendezvous sizes) that the receiver only receives later (Bsend
 * is local); the user buffer may be overwritten right after Bsend returns;
 * Buffer_detach returns the attached address and size (and waits for the
 * buffered data to leave); a buffer sized exactly sum(n + MPI_BSEND_OVERHEAD)
 * suffices; no buffer or a too-small one gives MPI_ERR_BUFFER under
 * MPI_ERRORS_RETURN. Ranks pair up (0,1), (2,3)...; odd/lone ranks use
 * themselves.
 */
#include "mpitest.h"

enum { TAG = 100, TAG_HS = 51 };

static int rank, size, peer;

static void recv_and_check(size_t n, unsigned seed, int tag)
{
    unsigned char *b = malloc(n + 1);
    MPI_Status     st;
    int            count = -1;
    CHECK_OK(MPI_Recv(b, (int)n + 1, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int)n, "size %zu: count %d", n, count);
    long bad = mpitest_verify(b, n, seed);
    CHECK(bad < 0, "size %zu: first bad byte %ld", n, bad);
    free(b);
}

static void handshake(void)
{
    int a = 1, b = 0;
    MPI_Request r;
    CHECK_OK(MPI_Isend(&a, 1, MPI_INT, peer, TAG_HS, MPI_COMM_WORLD, &r));
    CHECK_OK(MPI_Recv(&b, 1, MPI_INT, peer, TAG_HS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    peer = rank ^ 1;
    if (peer >= size) {
        peer = rank;
    }
    const size_t sizes[] = {0, 8, 1024, 16384, 16385, 200000, 1 << 20};
    const int    ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
    int          total = 0;
    for (int i = 0; i < ns; i++) {
        total += (int)sizes[i] + MPI_BSEND_OVERHEAD;
    }

    for (int round = 0; round < 4; round++) {
        /* round 0/1: Bsend, 2/3: Ibsend; the buffer is exactly sum(n+OVERHEAD) */
        char *buf = malloc((size_t)total);
        CHECK_OK(MPI_Buffer_attach(buf, total));
        unsigned char *ub = malloc(1 << 20);
        MPI_Request    reqs[16];
        for (int i = 0; i < ns; i++) {
            unsigned seed = (unsigned)(round * 1000 + i * 10 + rank);
            mpitest_fill(ub, sizes[i], seed);
            if (round < 2) {
                CHECK_OK(MPI_Bsend(ub, (int)sizes[i], MPI_BYTE, peer, TAG + i, MPI_COMM_WORLD));
            } else {
                CHECK_OK(MPI_Ibsend(ub, (int)sizes[i], MPI_BYTE, peer, TAG + i, MPI_COMM_WORLD, &reqs[i]));
                /* Ibsend completes locally */
                CHECK_OK(MPI_Wait(&reqs[i], MPI_STATUS_IGNORE));
            }
            /* the data was buffered: overwrite the user buffer at once */
            memset(ub, 0xa5, sizes[i]);
        }
        /* the peer receives only after all of my buffered sends returned */
        handshake();
        for (int i = ns - 1; i >= 0; i--) { /* reverse: tags differ, all are buffered */
            recv_and_check(sizes[i], (unsigned)(round * 1000 + i * 10 + peer), TAG + i);
        }
        void *addr = NULL;
        int   dsize = -1;
        CHECK_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == buf && dsize == total, "Buffer_detach returned %p/%d, attached %p/%d", addr, dsize,
              (void *)buf, total);
        free(buf);
        free(ub);
    }

    /* Repeated small Bsends through a buffer that holds only a few of them:
     * space must be reclaimed as messages leave. */
    {
        int   bs = 4 * (64 + MPI_BSEND_OVERHEAD);
        char *buf = malloc((size_t)bs);
        CHECK_OK(MPI_Buffer_attach(buf, bs));
        for (int i = 0; i < 200; i++) {
            unsigned char m[64];
            mpitest_fill(m, 64, (unsigned)(i * 3 + rank));
            CHECK_OK(MPI_Bsend(m, 64, MPI_BYTE, peer, TAG + 20, MPI_COMM_WORLD));
            recv_and_check(64, (unsigned)(i * 3 + peer), TAG + 20);
        }
        void *addr;
        int   dsize;
        CHECK_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == buf && dsize == bs, "detach after reuse: %p/%d", addr, dsize);
        free(buf);
    }
    handshake();

    /* Errors: no buffer attached; too-small buffer. */
    {
        unsigned char m[1000];
        mpitest_fill(m, sizeof m, 9u);
        CHECK_CLASS(MPI_Bsend(m, 100, MPI_BYTE, peer, TAG + 30, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        int   bs = 100 + MPI_BSEND_OVERHEAD;
        char *buf = malloc((size_t)bs);
        CHECK_OK(MPI_Buffer_attach(buf, bs));
        CHECK_CLASS(MPI_Bsend(m, 1000, MPI_BYTE, peer, TAG + 30, MPI_COMM_WORLD), MPI_ERR_BUFFER);
        MPI_Request r = MPI_REQUEST_NULL;
        int         rc = MPI_Ibsend(m, 1000, MPI_BYTE, peer, TAG + 30, MPI_COMM_WORLD, &r), cls = -1;
        if (rc == MPI_SUCCESS) { /* the error may also be reported at completion */
            rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        }
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_BUFFER, "Ibsend larger than the buffer: class %d", cls);
        /* a message that fits still goes through */
        CHECK_OK(MPI_Bsend(m, 100, MPI_BYTE, peer, TAG + 31, MPI_COMM_WORLD));
        recv_and_check(100, 9u, TAG + 31);
        void *addr;
        int   dsize;
        CHECK_OK(MPI_Buffer_detach(&addr, &dsize));
        CHECK(addr == buf && dsize == bs, "detach after errors: %p/%d", addr, dsize);
        free(buf);
    }
    handshake();
    {
        int flag = 1;
        CHECK_OK(MPI_Iprobe(peer, TAG + 30, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a failed Bsend delivered a message");
    }
    handshake();
    return mpitest_finish();
}
