/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Reduce_scatter and Reduce_scatter_block on intercommunicators built with
 * MPI_Intercomm_create from splits of WORLD into two groups of unequal size
 * (first rank alone, first third, first half, even/odd interleaved). Per
 * MPI-4.1 6.11.2 each group reduces the send vectors of its members
 * (count = sum of its own recvcounts, equal in both groups) and the result
 * is scattered over the OTHER group by that group's recvcounts. Every
 * received element is checked against a locally computed reference, and
 * guard elements after each block must stay untouched.
 * Forms: blocking, _c, non-blocking and persistent (started twice with
 * different data). MPI_SUM on MPI_INT; recvcounts uneven with zeros, all to
 * one rank, and all zero. Needs 2 or more ranks (1 rank: nothing to do).
 */
#include "mpitest.h"

#define GUARD  2
#define SENT   (-77)
#define NSPLIT 4

static int rank, size;

/* Which side of split `kind` world rank w is on (0 or 1). */
static int side_of(int kind, int w)
{
    switch (kind) {
    case 0:
        return w >= 1;
    case 1:
        return w >= (size / 3 > 0 ? size / 3 : 1);
    case 2:
        return w >= (size / 2 > 0 ? size / 2 : 1);
    default:
        return w % 2;
    }
}

static int val(int w, long j, int seed)
{
    return (w + 1) * 1000 + (int)((j * 7 + seed * 13) % 997);
}

/* Sum over the world ranks of side `s` of element j. */
static int ref(int kind, int s, long j, int seed)
{
    int sum = 0;
    for (int w = 0; w < size; w++) {
        if (side_of(kind, w) == s) {
            sum += val(w, j, seed);
        }
    }
    return sum;
}

/* recvcounts of a group of n ranks totalling T; variant 0 uneven with zeros
 * (weights i+1, every third rank 0), 1 all to the last rank. */
static void make_counts(int variant, int n, long T, int *rc)
{
    long wsum = 0, used = 0;
    for (int i = 0; i < n; i++) {
        rc[i] = 0;
        if (variant == 0 && i % 3 != 1) {
            wsum += i + 1;
        }
    }
    if (variant == 1) {
        rc[n - 1] = (int)T;
        return;
    }
    for (int i = 0; i < n; i++) {
        if (i % 3 != 1) {
            rc[i] = (int)(T * (i + 1) / wsum);
            used += rc[i];
        }
    }
    rc[0] += (int)(T - used);
}

/* Check my block: `got` holds rc[lrank] elements followed by GUARD guards. */
static void check_block(const char *what, int kind, int myside, const int *rc, int lrank,
                        const int *got, int seed)
{
    long off = 0, bad = 0;
    for (int i = 0; i < lrank; i++) {
        off += rc[i];
    }
    for (long j = 0; j < rc[lrank]; j++) {
        int want = ref(kind, 1 - myside, off + j, seed);
        if (got[j] != want && bad++ < 3) {
            CHECK(got[j] == want, "%s split %d: element %ld (global %ld) is %d, want %d", what,
                  kind, j, off + j, got[j], want);
        }
    }
    for (int g = 0; g < GUARD; g++) {
        CHECK(got[rc[lrank] + g] == SENT, "%s split %d: guard %d overwritten (%d)", what, kind, g,
              got[rc[lrank] + g]);
    }
}

static void fill_send(int *sb, long T, int seed)
{
    for (long j = 0; j < T; j++) {
        sb[j] = val(rank, j, seed);
    }
}

static void reset(int *rb, long n)
{
    for (long j = 0; j < n + GUARD; j++) {
        rb[j] = SENT;
    }
}

static void test_v(MPI_Comm inter, int kind, int myside, long T, int variant)
{
    int lrank, lsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);

    int       *rc  = malloc((size_t)lsize * sizeof(int));
    MPI_Count *rcc = malloc((size_t)lsize * sizeof(MPI_Count));
    make_counts(variant, lsize, T, rc);
    for (int i = 0; i < lsize; i++) {
        rcc[i] = rc[i];
    }
    int        *sb = malloc((size_t)(T > 0 ? T : 1) * sizeof(int));
    int        *rb = malloc((size_t)(rc[lrank] + GUARD) * sizeof(int));
    MPI_Request req;
    char        what[96];

    fill_send(sb, T, 0);
    reset(rb, rc[lrank]);
    snprintf(what, sizeof what, "Reduce_scatter T=%ld v%d", T, variant);
    CHECK_OK(MPI_Reduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, inter));
    check_block(what, kind, myside, rc, lrank, rb, 0);

    fill_send(sb, T, 1);
    reset(rb, rc[lrank]);
    snprintf(what, sizeof what, "Reduce_scatter_c T=%ld v%d", T, variant);
    CHECK_OK(MPI_Reduce_scatter_c(sb, rb, rcc, MPI_INT, MPI_SUM, inter));
    check_block(what, kind, myside, rc, lrank, rb, 1);

    fill_send(sb, T, 2);
    reset(rb, rc[lrank]);
    snprintf(what, sizeof what, "Ireduce_scatter T=%ld v%d", T, variant);
    CHECK_OK(MPI_Ireduce_scatter(sb, rb, rc, MPI_INT, MPI_SUM, inter, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_block(what, kind, myside, rc, lrank, rb, 2);

    CHECK_OK(MPI_Reduce_scatter_init(sb, rb, rc, MPI_INT, MPI_SUM, inter, MPI_INFO_NULL, &req));
    for (int seed = 3; seed <= 4; seed++) {
        fill_send(sb, T, seed);
        reset(rb, rc[lrank]);
        snprintf(what, sizeof what, "Reduce_scatter_init start %d T=%ld v%d", seed - 2, T,
                 variant);
        CHECK_OK(MPI_Start(&req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        check_block(what, kind, myside, rc, lrank, rb, seed);
    }
    CHECK_OK(MPI_Request_free(&req));

    free(rc);
    free(rcc);
    free(sb);
    free(rb);
}

/* Reduce_scatter_block: count = lsize * recvcount, equal in both groups:
 * recvcount = b * remote size. */
static void test_block(MPI_Comm inter, int kind, int myside, long b)
{
    int lrank, lsize, rsize;
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);

    long        rcount = b * rsize, T = rcount * lsize;
    int        *rc = malloc((size_t)lsize * sizeof(int));
    int        *sb = malloc((size_t)(T > 0 ? T : 1) * sizeof(int));
    int        *rb = malloc((size_t)(rcount + GUARD) * sizeof(int));
    MPI_Request req;
    char        what[96];

    for (int i = 0; i < lsize; i++) {
        rc[i] = (int)rcount;
    }
    fill_send(sb, T, 5);
    reset(rb, rcount);
    snprintf(what, sizeof what, "Reduce_scatter_block recvcount=%ld", rcount);
    CHECK_OK(MPI_Reduce_scatter_block(sb, rb, (int)rcount, MPI_INT, MPI_SUM, inter));
    check_block(what, kind, myside, rc, lrank, rb, 5);

    fill_send(sb, T, 6);
    reset(rb, rcount);
    snprintf(what, sizeof what, "Ireduce_scatter_block recvcount=%ld", rcount);
    CHECK_OK(MPI_Ireduce_scatter_block(sb, rb, (int)rcount, MPI_INT, MPI_SUM, inter, &req));
    CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
    check_block(what, kind, myside, rc, lrank, rb, 6);

    free(rc);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    static const long totals[] = {0, 1, 37, 50000};
    static const long blocks[] = {0, 1, 5, 3000};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size < 2) {
        return mpitest_finish();
    }

    for (int kind = 0; kind < NSPLIT; kind++) {
        int      myside = side_of(kind, rank), rleader = -1;
        MPI_Comm local, inter;
        for (int w = 0; w < size && rleader < 0; w++) {
            if (side_of(kind, w) != myside) {
                rleader = w;
            }
        }
        MPI_Comm_split(MPI_COMM_WORLD, myside, rank, &local);
        CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, rleader, 40 + kind, &inter));
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);

        for (size_t t = 0; t < sizeof totals / sizeof totals[0]; t++) {
            for (int variant = 0; variant < 2; variant++) {
                test_v(inter, kind, myside, totals[t], variant);
            }
        }
        for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
            test_block(inter, kind, myside, blocks[b]);
        }
        /* MPI_IN_PLACE is not allowed on an intercommunicator */
        {
            int rc1[64] = {0}, x = 0;
            CHECK_CLASS(MPI_Reduce_scatter(MPI_IN_PLACE, &x, rc1, MPI_INT, MPI_SUM, inter),
                        MPI_ERR_BUFFER);
        }

        MPI_Comm_free(&inter);
        MPI_Comm_free(&local);
    }
    return mpitest_finish();
}
