/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Collectives called with counts that differ across ranks (an erroneous
 * program): some rank reports MPI_ERR_TRUNCATE (which ones depends on the
 * algorithm: with the shared-memory ones every rank with the smaller count
 * does; with point-to-point trees, those that receive from a rank with the
 * larger count), nothing is written past any rank's buffer, nobody hangs,
 * and correct collectives on the same communicator work afterwards. Run
 * with the shared-memory algorithms (default rules) and without them.
 */
#include "mpitest.h"

#define GUARD 0x5a
#define ROOM  64 /* ints of buffer per rank and block, plus guards after */

static int rank, size;

static void fill_guard(int *buf, int used, int room)
{
    memset(buf + used, GUARD, (size_t)(room - used) * sizeof(int));
}

static void check_guard(const int *buf, int used, int room, const char *what)
{
    const unsigned char *p = (const unsigned char *)(buf + used);
    for (size_t i = 0; i < (size_t)(room - used) * sizeof(int); i++) {
        if (p[i] != GUARD) {
            CHECK(0, "%s: byte %zu past the %d-int buffer was overwritten", what, i, used);
            return;
        }
    }
}

/* Did any rank get MPI_ERR_TRUNCATE? (Every other class is a failure.) */
static void check_reported(int cls, const char *what)
{
    int trunc = cls == MPI_ERR_TRUNCATE, anywhere = 0;
    CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "%s: class %d", what, cls);
    MPI_Allreduce(&trunc, &anywhere, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(size == 1 || anywhere, "%s: no rank reported the mismatch", what);
}

static void check_still_works(int round)
{
    int x = rank + round, y = -1, b = rank == 0 ? 4242 + round : -1;
    CHECK_OK(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    CHECK(y == size * (size - 1) / 2 + size * round, "allreduce after mismatch %d: %d", round, y);
    CHECK_OK(MPI_Bcast(&b, 1, MPI_INT, 0, MPI_COMM_WORLD));
    CHECK(b == 4242 + round, "bcast after mismatch %d: %d", round, b);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

int main(int argc, char **argv)
{
    int buf[ROOM], cls, rc;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *big = malloc((size_t)size * ROOM * sizeof(int));

    /* 1. bcast: the root sends 12 ints, everyone else expects 3 */
    for (int i = 0; i < ROOM; i++) {
        buf[i] = rank == 0 ? 1000 + i : -1;
    }
    int cnt = rank == 0 ? 12 : 3;
    fill_guard(buf, cnt, ROOM);
    rc = MPI_Bcast(buf, cnt, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    check_reported(cls, "bcast");
    for (int i = 0; i < 3; i++) {
        CHECK(buf[i] == 1000 + i, "bcast truncated data int %d: %d", i, buf[i]);
    }
    check_guard(buf, cnt, ROOM, "bcast");
    check_still_works(1);

    /* 2. allreduce: rank 0 reduces 6 ints, the others 2 */
    cnt = rank == 0 ? 6 : 2;
    int in[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    fill_guard(buf, cnt, ROOM);
    rc = MPI_Allreduce(in, buf, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    check_reported(cls, "allreduce");
    check_guard(buf, cnt, ROOM, "allreduce");
    check_still_works(2);

    /* 3. allgather: rank 0 contributes and expects 5 ints per rank, others 1 */
    cnt = rank == 0 ? 5 : 1;
    for (int i = 0; i < 8; i++) {
        in[i] = rank;
    }
    memset(big, GUARD, (size_t)size * ROOM * sizeof(int));
    rc = MPI_Allgather(in, cnt, MPI_INT, big, cnt, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    check_reported(cls, "allgather");
    check_guard(big, cnt * size, size * ROOM, "allgather");
    check_still_works(3);

    /* 4. scatter: the root sends 5 ints per rank, the others expect 2 */
    cnt = rank == 0 ? 5 : 2;
    for (int i = 0; i < size * ROOM; i++) {
        big[i] = 7000 + i;
    }
    fill_guard(buf, cnt, ROOM);
    rc = MPI_Scatter(big, cnt, MPI_INT, buf, cnt, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    check_reported(cls, "scatter");
    check_guard(buf, cnt, ROOM, "scatter");
    check_still_works(4);

    /* 4b, 4c. scatter across the shared-memory forms of small blocks (up
     * to 56 bytes in lines, above in small areas): the root sends 20 ints
     * per rank and the others expect 2, then the root 2 and the others 20
     * (a short message, which point-to-point need not report: success or
     * MPI_ERR_TRUNCATE, but no hang and nothing written past the buffers) */
    for (int k = 0; k < 2; k++) {
        int rootcnt = k == 0 ? 20 : 2, other = k == 0 ? 2 : 20;
        cnt         = rank == 0 ? rootcnt : other;
        fill_guard(buf, cnt, ROOM);
        rc = MPI_Scatter(big, cnt, MPI_INT, buf, cnt, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        if (k == 0) {
            check_reported(cls, "scatter 20 vs 2");
        } else {
            CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "scatter 2 vs 20: class %d", cls);
        }
        check_guard(buf, cnt, ROOM, "scatter across the small forms");
        check_still_works(40 + k);
    }

    /* 5, 6. alltoall: rank 0 sends and expects 5 ints per block, the others
     * 1, then 3 (with the CMA switch at 9 bytes: across it, then both above) */
    int *sb = malloc((size_t)size * ROOM * sizeof(int));
    for (int other = 1; other <= 3; other += 2) {
        cnt = rank == 0 ? 5 : other;
        for (int i = 0; i < size * ROOM; i++) {
            sb[i] = 9000 + i;
        }
        memset(big, GUARD, (size_t)size * ROOM * sizeof(int));
        rc = MPI_Alltoall(sb, cnt, MPI_INT, big, cnt, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        check_reported(cls, "alltoall");
        check_guard(big, cnt * size, size * ROOM, "alltoall");
        check_still_works(5 + other / 2);
    }
    free(sb);

    /* 7. scatterv: the root sends 12 ints to rank 1, which expects 8 (the
     * others agree on 3): someone reports it. 8. allgatherv: rank 1 sends
     * 12 ints where every rank's recvcounts say 8 (the shared-memory form
     * reports it; point-to-point linear sends the 8 ints its own rcounts
     * entry says, and need not). Nothing is written past any buffer and
     * nobody hangs. (Needs a rank 1.) */
    if (size >= 2) {
        int counts[size], displs[size];
        for (int q = 0; q < size; q++) {
            counts[q] = q == 1 ? 8 : 3;
            displs[q] = q * ROOM;
        }
        for (int i = 0; i < size * ROOM; i++) {
            big[i] = 11000 + i;
        }
        if (rank == 0) {
            counts[1] = 12;
        }
        cnt = rank == 0 ? counts[0] : rank == 1 ? 8 : 3;
        fill_guard(buf, cnt, ROOM);
        rc = MPI_Scatterv(big, counts, displs, MPI_INT, buf, cnt, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        check_reported(cls, "scatterv");
        check_guard(buf, cnt, ROOM, "scatterv");
        check_still_works(7);

        counts[1] = 8;
        cnt       = rank == 1 ? 12 : 3;
        for (int i = 0; i < ROOM; i++) {
            buf[i] = 12000 + rank * ROOM + i;
        }
        memset(big, GUARD, (size_t)size * ROOM * sizeof(int));
        rc = MPI_Allgatherv(buf, cnt, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "allgatherv: class %d", cls);
        for (int q = 0; q < size; q++) {
            check_guard(big + q * ROOM, counts[q], ROOM, "allgatherv");
        }
        check_still_works(8);

        /* 8b. the same as a non-blocking call (the shared-memory form's
         * poll steps on one node) */
        MPI_Request req;
        memset(big, GUARD, (size_t)size * ROOM * sizeof(int));
        CHECK_OK(MPI_Iallgatherv(buf, cnt, MPI_INT, big, counts, displs, MPI_INT, MPI_COMM_WORLD,
                                 &req));
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "iallgatherv: class %d", cls);
        for (int q = 0; q < size; q++) {
            check_guard(big + q * ROOM, counts[q], ROOM, "iallgatherv");
        }
        check_still_works(80);
    }

    /* 9. gatherv: rank 1 sends 12 ints where the root's recvcounts say 8
     * (the others agree on 3): the root reports it and writes nothing past
     * any block. 10, 11. the same across the shared-memory form's 16 KiB
     * rounds, where only the root knows how many rounds the call takes:
     * rank 1 sends 6000 ints (two rounds by its own count) where the root
     * expects 3000 and everyone else sends 3000 (one round), then 3000
     * where the root expects 6000 (two rounds: rank 1 must follow them; a
     * short message, which point-to-point need not report). */
    {
        int counts[size], displs[size];
        for (int q = 0; q < size; q++) {
            counts[q] = q == 1 ? 8 : 3;
            displs[q] = q * ROOM;
        }
        cnt = rank == 1 ? 12 : 3;
        for (int i = 0; i < ROOM; i++) {
            buf[i] = 13000 + rank * ROOM + i;
        }
        memset(big, GUARD, (size_t)size * ROOM * sizeof(int));
        rc = MPI_Gatherv(buf, cnt, MPI_INT, big, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        check_reported(cls, "gatherv");
        if (rank == 0) {
            for (int q = 0; q < size; q++) {
                check_guard(big + q * ROOM, counts[q], ROOM, "gatherv");
            }
            for (int i = 0; i < 3; i++) {
                CHECK(big[i] == 13000 + i, "gatherv: the root's own int %d: %d", i, big[i]);
            }
        }
        check_still_works(9);
    }
    {
        enum { LARGE = 6000, SMALLER = 3000, GROOM = 6100 };
        int *sbig = malloc(LARGE * sizeof(int)), *rbig = malloc((size_t)size * GROOM * sizeof(int));
        int  counts[size], displs[size];
        for (int k = 0; k < 2; k++) {
            for (int q = 0; q < size; q++) {
                counts[q] = q == 1 && k == 1 ? LARGE : SMALLER;
                displs[q] = q * GROOM;
            }
            cnt = rank == 1 && k == 0 ? LARGE : SMALLER;
            for (int i = 0; i < LARGE; i++) {
                sbig[i] = 14000 + rank;
            }
            memset(rbig, GUARD, (size_t)size * GROOM * sizeof(int));
            rc = MPI_Gatherv(sbig, cnt, MPI_INT, rbig, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
            MPI_Error_class(rc, &cls);
            if (k == 0) {
                check_reported(cls, "gatherv across rounds, 6000 vs 3000");
            } else {
                CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE,
                      "gatherv across rounds, 3000 vs 6000: class %d", cls);
            }
            if (rank == 0) {
                for (int q = 0; q < size; q++) {
                    check_guard(rbig + q * GROOM, counts[q], GROOM, "gatherv across rounds");
                }
                for (int q = 0; q < size; q++) {
                    if (q != 1) { /* rank 1's block is what the mismatch left */
                        for (int i = 0; i < counts[q]; i++) {
                            if (rbig[q * GROOM + i] != 14000 + q) {
                                CHECK(0, "gatherv across rounds: rank %d's int %d is %d", q, i,
                                      rbig[q * GROOM + i]);
                                break;
                            }
                        }
                    }
                }
            }
            check_still_works(10 + k);
        }
        free(sbig);
        free(rbig);
    }

    /* 12. alltoallv: rank 1 sends 12 ints to rank 0, whose receive count
     * for it says 8 (every other pair agrees on 3): rank 0 reports it, and
     * nothing lands past any block */
    {
        int sc[size], sd[size], rcn[size], rd[size];
        for (int q = 0; q < size; q++) {
            sc[q] = rank == 1 && q == 0 ? 12 : 3;
            rcn[q] = rank == 0 && q == 1 ? 8 : 3;
            sd[q] = rd[q] = q * ROOM;
        }
        for (int i = 0; i < size * ROOM; i++) {
            big[i] = 15000 + rank * 1000 + i;
        }
        int *out = malloc((size_t)size * ROOM * sizeof(int));
        memset(out, GUARD, (size_t)size * ROOM * sizeof(int));
        rc = MPI_Alltoallv(big, sc, sd, MPI_INT, out, rcn, rd, MPI_INT, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        check_reported(cls, "alltoallv");
        for (int q = 0; q < size; q++) {
            check_guard(out + q * ROOM, rcn[q], ROOM, "alltoallv");
        }
        free(out);
        check_still_works(12);
    }

    /* 13. iallreduce large enough to go in windows of rounds on the
     * shared-memory path (144-160 KB: ten 16 KiB rounds): rank 0 reduces
     * 40000 ints, the others 36000. The first round's size check stops
     * everyone after it (no rank waits in a later window for the others);
     * then a matching one of the same size gives the right sums. */
    {
        enum { NBIG = 40000, NLESS = 36000 };
        int        *ain = malloc(NBIG * sizeof(int)), *aout = malloc((NBIG + ROOM) * sizeof(int));
        MPI_Request req;
        for (int i = 0; i < NBIG; i++) {
            ain[i] = rank + i;
        }
        cnt = rank == 0 ? NBIG : NLESS;
        fill_guard(aout, cnt, NBIG + ROOM);
        CHECK_OK(MPI_Iallreduce(ain, aout, cnt, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        check_reported(cls, "iallreduce across windows");
        check_guard(aout, cnt, NBIG + ROOM, "iallreduce across windows");
        check_still_works(13);
        CHECK_OK(MPI_Iallreduce(ain, aout, NBIG, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        for (int i = 0; i < NBIG; i++) {
            if (aout[i] != size * (size - 1) / 2 + size * i) {
                CHECK(0, "iallreduce after the mismatch: int %d is %d", i, aout[i]);
                break;
            }
        }
        free(ain);
        free(aout);
    }

    /* 14, 15. allgatherv across the shared-memory form's rounds (24 KB
     * blocks: two 16 KiB rounds), blocking and non-blocking: every
     * rcounts entry says 6000 ints, rank 1 sends 5000. Rank 1 must notice
     * its own send count disagrees (the others see it in its post and stop
     * after the first round), or it waits for a second round forever. */
    if (size >= 2) {
        enum { AGV = 6000 };
        int *agin = malloc(AGV * sizeof(int)), *agout = malloc((size_t)size * (AGV + ROOM) * sizeof(int));
        int  counts[size], displs[size];
        for (int q = 0; q < size; q++) {
            counts[q] = AGV;
            displs[q] = q * (AGV + ROOM);
        }
        for (int i = 0; i < AGV; i++) {
            agin[i] = 16000 + rank;
        }
        for (int nbk = 0; nbk < 2; nbk++) {
            MPI_Request req;
            cnt = rank == 1 ? AGV - 1000 : AGV;
            memset(agout, GUARD, (size_t)size * (AGV + ROOM) * sizeof(int));
            if (nbk) {
                CHECK_OK(MPI_Iallgatherv(agin, cnt, MPI_INT, agout, counts, displs, MPI_INT,
                                         MPI_COMM_WORLD, &req));
                rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
            } else {
                rc = MPI_Allgatherv(agin, cnt, MPI_INT, agout, counts, displs, MPI_INT,
                                    MPI_COMM_WORLD);
            }
            MPI_Error_class(rc, &cls);
            CHECK(cls == MPI_SUCCESS || cls == MPI_ERR_TRUNCATE, "allgatherv across rounds: class %d",
                  cls);
            for (int q = 0; q < size; q++) {
                check_guard(agout + q * (AGV + ROOM), AGV, AGV + ROOM, "allgatherv across rounds");
            }
            check_still_works(14 + nbk);
        }
        free(agin);
        free(agout);
    }

    free(big);
    return mpitest_finish();
}
