/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Collectives at and around every message size where the shipped rules
 * switch between the shared-memory algorithms and point-to-point ones
 * (src/coll/tuning/default.rules, issue 18), and where the node region
 * moves a contribution from a line to a small area to a slot: 4 bytes below, at and above
 * each switch point, back to back with no barrier, the root moving every
 * call, and a non-blocking allreduce in flight across the blocking calls of
 * the same communicator (issued before them, completed after them, as MPI's
 * ordering rule allows). bcast, reduce, allreduce, gather, allgather and
 * scatter results are compared element by element with a local reference.
 * Then the order rule of the shared-memory node phase: non-blocking and
 * persistent bcasts, iallreduce, ireduce, iallgather and iscatter (which use
 * it on one node) interleaved with blocking
 * bcasts and allreduces on the same communicator, sizes from 0 to 300 KiB
 * (wrapping the region's buffers), roots moving, the requests completed in
 * a different order on odd and even ranks.
 * args: [max bytes] (default 1 MiB + 4).
 */
#include "mpitest.h"

static int rank, size;

static int val(int r, long i, int call)
{
    return (int)((r + 1) * 7919 + i * 13 + call * 101) & 0xfffff;
}

static void fill(int *b, long n, int r, int call)
{
    for (long i = 0; i < n; i++) {
        b[i] = val(r, i, call);
    }
}

/* first index where b differs from rank r's pattern, or -1 */
static long diff(const int *b, long n, int r, int call)
{
    for (long i = 0; i < n; i++) {
        if (b[i] != val(r, i, call)) {
            return i;
        }
    }
    return -1;
}

static long diff_sum(const int *b, long n, int call)
{
    for (long i = 0; i < n; i++) {
        int s = 0;
        for (int r = 0; r < size; r++) {
            s += val(r, i, call);
        }
        if (b[i] != s) {
            return i;
        }
    }
    return -1;
}

int main(int argc, char **argv)
{
    /* 56 and 512: the node region's line and small-area limits (contributions
     * move from a line to a small area to a slot; coll_shm_internal.h) */
    static const long points[] = {56,    64,     512,    4096,   8192,   16384,
                                  32768, 65536, 131072, 262144, 524288, 1048576};
    long              maxbytes = argc > 1 ? atol(argv[1]) : 1048576 + 4;
    long              maxn     = maxbytes / 4 + 1;
    int              *a, *b, *big, *nbin, *nbout;
    int               call = 0;
    long              e;
    const long        nbn  = 1000;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    a     = malloc((size_t)maxn * sizeof(int));
    b     = malloc((size_t)maxn * sizeof(int));
    big   = malloc((size_t)maxn * (size_t)size * sizeof(int));
    nbin  = malloc((size_t)nbn * sizeof(int));
    nbout = malloc((size_t)nbn * sizeof(int));
    if (!a || !b || !big || !nbin || !nbout) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (size_t p = 0; p < sizeof(points) / sizeof(points[0]); p++) {
        for (int d = -1; d <= 1; d++) {
            long n = points[p] / 4 + d;
            if (n * 4 > maxbytes) {
                continue;
            }
            int         root = (int)((p * 3 + (size_t)(d + 1)) % (size_t)size);
            MPI_Request nbreq;

            /* a non-blocking call issued first, completed after the
             * blocking ones: every rank issues them in the same order */
            fill(nbin, nbn, rank, call);
            CHECK_OK(MPI_Iallreduce(nbin, nbout, (int)nbn, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    &nbreq));
            int nbcall = call++;

            /* bcast */
            if (rank == root) {
                fill(a, n, root, call);
            } else {
                memset(a, 0, (size_t)n * sizeof(int));
            }
            CHECK_OK(MPI_Bcast(a, (int)n, MPI_INT, root, MPI_COMM_WORLD));
            e = diff(a, n, root, call);
            CHECK(e < 0, "bcast %ld ints root %d: element %ld wrong", n, root, e);
            call++;

            /* reduce */
            fill(a, n, rank, call);
            memset(b, 0, (size_t)n * sizeof(int));
            CHECK_OK(MPI_Reduce(a, b, (int)n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD));
            if (rank == root) {
                e = diff_sum(b, n, call);
                CHECK(e < 0, "reduce %ld ints root %d: element %ld wrong", n, root, e);
            }
            call++;

            /* allreduce */
            fill(a, n, rank, call);
            memset(b, 0, (size_t)n * sizeof(int));
            CHECK_OK(MPI_Allreduce(a, b, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            e = diff_sum(b, n, call);
            CHECK(e < 0, "allreduce %ld ints: element %ld wrong", n, e);
            call++;

            /* gather (n ints per rank; the largest blocks only up to 256 KiB) */
            long g = n * 4 <= 262144 + 4 ? n : 1024;
            fill(a, g, rank, call);
            memset(big, 0, (size_t)(g * size) * sizeof(int));
            CHECK_OK(MPI_Gather(a, (int)g, MPI_INT, big, (int)g, MPI_INT, root, MPI_COMM_WORLD));
            for (int r = 0; rank == root && r < size; r++) {
                e = diff(big + r * g, g, r, call);
                CHECK(e < 0, "gather %ld ints root %d: block %d element %ld wrong", g, root, r, e);
            }
            call++;

            /* allgather */
            fill(a, g, rank, call);
            memset(big, 0, (size_t)(g * size) * sizeof(int));
            CHECK_OK(MPI_Allgather(a, (int)g, MPI_INT, big, (int)g, MPI_INT, MPI_COMM_WORLD));
            for (int r = 0; r < size; r++) {
                e = diff(big + r * g, g, r, call);
                CHECK(e < 0, "allgather %ld ints: block %d element %ld wrong", g, r, e);
            }
            call++;

            /* scatter: block r of the root's buffer is rank r's pattern */
            if (rank == root) {
                for (int r = 0; r < size; r++) {
                    fill(big + r * g, g, r, call);
                }
            }
            memset(a, 0, (size_t)g * sizeof(int));
            CHECK_OK(MPI_Scatter(big, (int)g, MPI_INT, a, (int)g, MPI_INT, root, MPI_COMM_WORLD));
            e = diff(a, g, rank, call);
            CHECK(e < 0, "scatter %ld ints root %d: element %ld wrong", g, root, e);
            call++;

            CHECK_OK(MPI_Wait(&nbreq, MPI_STATUS_IGNORE));
            e = diff_sum(nbout, nbn, nbcall);
            CHECK(e < 0, "iallreduce across blocking calls: element %ld wrong", e);
        }
    }
    /* order rule */
    {
        static const long ns[] = {0, 1, 100, 4096, 4097, 20000, 76800};
        const int         k = (int)(sizeof(ns) / sizeof(ns[0]));
        int              *nbuf[6], small, sum, *ag, *sc, *scin, agin[1000];
        MPI_Request       req[7];
        const long        g = 1000;
        for (int i = 0; i < 6; i++) {
            nbuf[i] = malloc((size_t)ns[k - 1] * sizeof(int));
        }
        ag   = malloc((size_t)(g * size) * sizeof(int));
        scin = malloc((size_t)(g * size) * sizeof(int));
        sc   = malloc((size_t)g * sizeof(int));
        long   pn = ns[4];
        int    proot = size - 1, pcall = 0;
        CHECK_OK(MPI_Bcast_init(nbuf[2], (int)pn, MPI_INT, proot, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &req[2]));
        for (int it = 0; it < 3 * k; it++) {
            long n0 = ns[it % k], n1 = ns[(it + 3) % k];
            int  r0 = it % size, r1 = (it + 1) % size, c0 = call++, c1 = call++, cb = call++;
            fill(nbuf[0], n0, r0, c0);
            if (rank != r0) {
                memset(nbuf[0], 0, (size_t)n0 * sizeof(int));
            }
            CHECK_OK(MPI_Ibcast(nbuf[0], (int)n0, MPI_INT, r0, MPI_COMM_WORLD, &req[0]));
            /* a blocking bcast and a small allreduce while it is in flight */
            fill(a, n1, r1, cb);
            if (rank != r1) {
                memset(a, 0, (size_t)n1 * sizeof(int));
            }
            CHECK_OK(MPI_Bcast(a, (int)n1, MPI_INT, r1, MPI_COMM_WORLD));
            small = rank;
            CHECK_OK(MPI_Allreduce(&small, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
            CHECK(sum == size * (size - 1) / 2, "allreduce in the order test: %d", sum);
            fill(nbuf[1], n1, r0, c1);
            if (rank != r0) {
                memset(nbuf[1], 0, (size_t)n1 * sizeof(int));
            }
            CHECK_OK(MPI_Ibcast(nbuf[1], (int)n1, MPI_INT, r0, MPI_COMM_WORLD, &req[1]));
            int cr = call++;
            fill(nbuf[3], n1, rank, cr);
            memset(nbuf[4], 0, (size_t)n1 * sizeof(int));
            memset(nbuf[5], 0, (size_t)n1 * sizeof(int));
            CHECK_OK(MPI_Iallreduce(nbuf[3], nbuf[4], (int)n1, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                                    &req[3]));
            CHECK_OK(MPI_Ireduce(nbuf[3], nbuf[5], (int)n1, MPI_INT, MPI_SUM, r1, MPI_COMM_WORLD,
                                 &req[4]));
            int ca = call++, cs = call++;
            fill(agin, g, rank, ca);
            CHECK_OK(MPI_Iallgather(agin, (int)g, MPI_INT, ag, (int)g, MPI_INT, MPI_COMM_WORLD,
                                    &req[5]));
            for (int r = 0; rank == r1 && r < size; r++) {
                fill(scin + r * g, g, r, cs);
            }
            CHECK_OK(MPI_Iscatter(scin, (int)g, MPI_INT, sc, (int)g, MPI_INT, r1, MPI_COMM_WORLD,
                                  &req[6]));
            pcall = call++;
            fill(nbuf[2], pn, proot, pcall);
            if (rank != proot) {
                memset(nbuf[2], 0, (size_t)pn * sizeof(int));
            }
            CHECK_OK(MPI_Start(&req[2]));
            if (rank % 2) {
                for (int i = 6; i >= 0; i--) {
                    CHECK_OK(MPI_Wait(&req[i], MPI_STATUS_IGNORE));
                }
            } else {
                CHECK_OK(MPI_Waitall(7, req, MPI_STATUSES_IGNORE));
            }
            e = diff(a, n1, r1, cb);
            CHECK(e < 0, "bcast between ibcasts (%ld ints): element %ld wrong", n1, e);
            e = diff(nbuf[0], n0, r0, c0);
            CHECK(e < 0, "ibcast %ld ints root %d: element %ld wrong", n0, r0, e);
            e = diff(nbuf[1], n1, r0, c1);
            CHECK(e < 0, "second ibcast %ld ints: element %ld wrong", n1, e);
            e = diff_sum(nbuf[4], n1, cr);
            CHECK(e < 0, "iallreduce %ld ints: element %ld wrong", n1, e);
            if (rank == r1) {
                e = diff_sum(nbuf[5], n1, cr);
                CHECK(e < 0, "ireduce %ld ints root %d: element %ld wrong", n1, r1, e);
            }
            for (int r = 0; r < size; r++) {
                e = diff(ag + r * g, g, r, ca);
                CHECK(e < 0, "iallgather block %d: element %ld wrong", r, e);
            }
            e = diff(sc, g, rank, cs);
            CHECK(e < 0, "iscatter root %d: element %ld wrong", r1, e);
            e = diff(nbuf[2], pn, proot, pcall);
            CHECK(e < 0, "persistent bcast %ld ints: element %ld wrong", pn, e);
        }
        CHECK_OK(MPI_Request_free(&req[2]));
        for (int i = 0; i < 6; i++) {
            free(nbuf[i]);
        }
        free(ag);
        free(scin);
        free(sc);
    }
    free(a);
    free(b);
    free(big);
    free(nbin);
    free(nbout);
    return mpitest_finish();
}
