/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Group functions against hand-computed answers: incl/excl, range forms,
 * union/intersection/difference order, translate_ranks, compare, empty
 * results, bad arguments (MPI_ERR_RANK, MPI_ERR_ARG, MPI_ERR_GROUP).
 */
#include "mpitest.h"

static void expect_members(MPI_Group g, MPI_Group world, int n, const int *want, const char *what)
{
    int size, *r = malloc(sizeof(int) * (size_t)(n + 1)), *w = malloc(sizeof(int) * (size_t)(n + 1));
    MPI_Group_size(g, &size);
    CHECK(size == n, "%s: size %d want %d", what, size, n);
    for (int i = 0; i < n && size == n; i++) {
        r[i] = i;
    }
    if (size == n && n > 0) {
        MPI_Group_translate_ranks(g, n, r, world, w);
        for (int i = 0; i < n; i++) {
            CHECK(w[i] == want[i], "%s: member %d is world %d want %d", what, i, w[i], want[i]);
        }
    }
    free(r);
    free(w);
}

int main(int argc, char **argv)
{
    int       rank, size, n, r, result;
    MPI_Group world, g1, g2, g3;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_size(world, &n);
    MPI_Group_rank(world, &r);
    CHECK(n == size && r == rank, "world group size/rank %d/%d", n, r);

    /* incl in reverse order */
    {
        int *rev = malloc(sizeof(int) * (size_t)size);
        for (int i = 0; i < size; i++) {
            rev[i] = size - 1 - i;
        }
        MPI_Group_incl(world, size, rev, &g1);
        expect_members(g1, world, size, rev, "incl reversed");
        MPI_Group_rank(g1, &r);
        CHECK(r == size - 1 - rank, "rank in reversed group %d", r);
        MPI_Group_compare(world, g1, &result);
        CHECK(result == (size == 1 ? MPI_IDENT : MPI_SIMILAR), "compare(world, reversed) %d", result);
        MPI_Group_free(&g1);
        CHECK(g1 == MPI_GROUP_NULL, "Group_free did not set MPI_GROUP_NULL");
        free(rev);
    }
    /* excl rank 0 */
    {
        int zero = 0, *want = malloc(sizeof(int) * (size_t)size);
        for (int i = 1; i < size; i++) {
            want[i - 1] = i;
        }
        MPI_Group_excl(world, 1, &zero, &g1);
        expect_members(g1, world, size - 1, want, "excl 0");
        MPI_Group_rank(g1, &r);
        CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1), "rank after excl %d", r);
        if (size == 1) {
            CHECK(g1 == MPI_GROUP_EMPTY, "empty result is not MPI_GROUP_EMPTY");
        }
        MPI_Group_free(&g1);
        free(want);
    }
    /* range_incl: {0, size-1, 2} then range_excl of the same = odd ranks */
    {
        int ranges[1][3] = {{0, size - 1, 2}}, ev[64] = {0}, od[64] = {0}, ne = 0, no = 0;
        for (int i = 0; i < size; i++) {
            if (i % 2) {
                od[no++] = i;
            } else {
                ev[ne++] = i;
            }
        }
        MPI_Group_range_incl(world, 1, ranges, &g1);
        expect_members(g1, world, ne, ev, "range_incl even");
        MPI_Group_range_excl(world, 1, ranges, &g2);
        expect_members(g2, world, no, od, "range_excl even");
        /* set operations */
        MPI_Group_union(g2, g1, &g3); /* odd then even */
        {
            int want[128] = {0}, k = 0;
            for (int i = 0; i < no; i++) {
                want[k++] = od[i];
            }
            for (int i = 0; i < ne; i++) {
                want[k++] = ev[i];
            }
            expect_members(g3, world, size, want, "union(odd, even)");
        }
        MPI_Group_compare(g3, world, &result);
        CHECK(result == (size <= 2 && no == 0 ? MPI_IDENT : size == 1 ? MPI_IDENT : MPI_SIMILAR),
              "compare(union, world) %d", result);
        MPI_Group_free(&g3);
        MPI_Group_intersection(g1, g2, &g3);
        CHECK(g3 == MPI_GROUP_EMPTY, "intersection of disjoint groups is not MPI_GROUP_EMPTY");
        MPI_Group_free(&g3);
        MPI_Group_difference(world, g2, &g3);
        expect_members(g3, world, ne, ev, "difference(world, odd)");
        MPI_Group_compare(g3, g1, &result);
        CHECK(result == MPI_IDENT, "compare(difference, even) %d", result);
        MPI_Group_free(&g3);
        /* decreasing range with negative stride */
        int rr[1][3] = {{size - 1, 0, -1}}, rev[64];
        for (int i = 0; i < size; i++) {
            rev[i] = size - 1 - i;
        }
        MPI_Group_range_incl(world, 1, rr, &g3);
        expect_members(g3, world, size, rev, "range_incl reversed");
        MPI_Group_free(&g3);
        /* translate with PROC_NULL and non-members */
        int in[2] = {MPI_PROC_NULL, 0}, out[2];
        MPI_Group_translate_ranks(world, 2, in, g2, out);
        CHECK(out[0] == MPI_PROC_NULL && out[1] == MPI_UNDEFINED, "translate %d %d", out[0], out[1]);
        MPI_Group_free(&g1);
        MPI_Group_free(&g2);
    }
    /* errors */
    {
        int bad = size, dup2[2] = {0, 0}, ranges[1][3] = {{0, size, 1}}, zr[1][3] = {{0, 0, 0}};
        CHECK_CLASS(MPI_Group_incl(world, 1, &bad, &g1), MPI_ERR_RANK);
        if (size >= 1) {
            CHECK_CLASS(MPI_Group_incl(world, 2, dup2, &g1), size >= 2 ? MPI_ERR_RANK : MPI_ERR_ARG);
        }
        CHECK_CLASS(MPI_Group_excl(world, 1, &bad, &g1), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_range_incl(world, 1, ranges, &g1), MPI_ERR_RANK);
        CHECK_CLASS(MPI_Group_range_incl(world, 1, zr, &g1), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Group_incl(world, -1, &bad, &g1), MPI_ERR_ARG);
        CHECK_CLASS(MPI_Group_size(MPI_GROUP_NULL, &n), MPI_ERR_GROUP);
        CHECK_CLASS(MPI_Group_size((MPI_Group)MPI_COMM_WORLD, &n), MPI_ERR_GROUP);
        MPI_Group_incl(world, 1, &(int){0}, &g1);
        g2 = g1;
        MPI_Group_free(&g1);
        CHECK_CLASS(MPI_Group_size(g2, &n), MPI_ERR_GROUP); /* freed handle */
        CHECK_CLASS(MPI_Group_free(&g1), MPI_ERR_GROUP);     /* MPI_GROUP_NULL */
        int in[1] = {size};
        int out[1];
        CHECK_CLASS(MPI_Group_translate_ranks(world, 1, in, world, out), MPI_ERR_RANK);
    }
    MPI_Group_free(&world);
    return mpitest_finish();
}
