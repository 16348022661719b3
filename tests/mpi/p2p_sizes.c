/* SPDX-License-Identifier: BSD-3-Clause
 * Ring and all-pairs exchanges over every protocol boundary, data verified
 * byte for byte. Usage: p2p_sizes [max_bytes] (default 1 MiB; 64 MiB runs
 * are a separate manifest entry). */
#include "mpitest.h"

static void exchange(int rank, int size, size_t n, int dst, int src, unsigned seed_base)
{
    unsigned char *sbuf = malloc(n + 1), *rbuf = malloc(n + 1);
    MPI_Request    req[2];
    MPI_Status     st;
    int            count = -1;

    mpitest_fill(sbuf, n, seed_base + (unsigned)rank);
    memset(rbuf, 0xee, n + 1);
    MPI_Irecv(rbuf, (int)n, MPI_BYTE, src, 7, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(sbuf, (int)n, MPI_BYTE, dst, 7, MPI_COMM_WORLD, &req[1]);
    MPI_Wait(&req[1], MPI_STATUS_IGNORE);
    MPI_Wait(&req[0], &st);
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == (int)n, "size %zu: count %d", n, count);
    CHECK(st.MPI_SOURCE == src && st.MPI_TAG == 7, "size %zu: source %d tag %d", n,
          st.MPI_SOURCE, st.MPI_TAG);
    long bad = mpitest_verify(rbuf, n, seed_base + (unsigned)src);
    CHECK(bad < 0, "size %zu from %d: first bad byte at %ld", n, src, bad);
    CHECK(rbuf[n] == 0xee, "size %zu: wrote past the end", n);
    (void)size;
    free(sbuf);
    free(rbuf);
}

int main(int argc, char **argv)
{
    int    rank, size;
    size_t max = argc > 1 ? (size_t)strtoull(argv[1], NULL, 0) : (1u << 20);
    size_t eager = 8192; /* WEFT_SMP_EAGERSIZE default */
    const char *e = getenv("WEFT_SMP_EAGERSIZE");
    if (e) {
        eager = (size_t)strtoull(e, NULL, 0);
    }
    size_t sizes[] = {0, 1, 7, 8, 63, 64, 65, 4095, 4096, eager - 1, eager, eager + 1,
                      65535, 65536, 65537, 1u << 20, 64u << 20};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if (sizes[i] > max) {
            continue;
        }
        /* ring */
        exchange(rank, size, sizes[i], (rank + 1) % size, (rank + size - 1) % size, 100 + (unsigned)i);
        /* all pairs: shift by every distance */
        for (int d = 1; d < size && sizes[i] <= (1u << 20); d++) {
            exchange(rank, size, sizes[i], (rank + d) % size, (rank + size - d) % size,
                     1000 + (unsigned)(i * 64 + (size_t)d));
        }
    }
    /* blocking send/recv ping-pong between pairs, also self */
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        size_t n = sizes[i];
        if (n > max || n > (4u << 20)) {
            continue;
        }
        unsigned char *buf = malloc(n + 1);
        int            peer = rank ^ 1;
        if (peer < size) {
            if (rank % 2 == 0) {
                mpitest_fill(buf, n, 7);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD);
                memset(buf, 0, n);
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(mpitest_verify(buf, n, 8) < 0, "ping-pong size %zu", n);
            } else {
                MPI_Recv(buf, (int)n, MPI_BYTE, peer, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                CHECK(mpitest_verify(buf, n, 7) < 0, "ping-pong size %zu", n);
                mpitest_fill(buf, n, 8);
                MPI_Send(buf, (int)n, MPI_BYTE, peer, 4, MPI_COMM_WORLD);
            }
        }
        free(buf);
    }
    return mpitest_finish();
}
