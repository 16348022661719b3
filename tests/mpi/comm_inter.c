/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intercommunicators: MPI_Intercomm_create from a split of WORLD,
 * test_inter/remote_size/remote_group, point-to-point across the two
 * groups (ranks are remote ranks), dup of an intercommunicator,
 * MPI_Intercomm_merge (high/low order) and compare.
 * Needs 2 or more ranks (1 rank: only the local checks run).
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    int      rank, size, lrank, lsize, rsize, flag, color;
    MPI_Comm local, inter, inter2, merged;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Comm_test_inter(MPI_COMM_WORLD, &flag);
    CHECK(!flag, "WORLD is an intercommunicator?");
    CHECK_CLASS(MPI_Comm_remote_size(MPI_COMM_WORLD, &rsize), MPI_ERR_COMM);
    if (size < 2) {
        return mpitest_finish();
    }

    /* Group A: even world ranks, group B: odd. Leaders: world 0 and 1. */
    color = rank % 2;
    MPI_Comm_split(MPI_COMM_WORLD, color, rank, &local);
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, color == 0 ? 1 : 0, 99, &inter));

    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "Intercomm_create result is not an intercommunicator");
    {
        int r, n;
        MPI_Comm_rank(inter, &r);
        MPI_Comm_size(inter, &n);
        CHECK(r == lrank && n == lsize, "intercomm local rank/size %d/%d want %d/%d", r, n, lrank, lsize);
    }
    MPI_Comm_remote_size(inter, &rsize);
    {
        int want = color == 0 ? size / 2 : (size + 1) / 2;
        CHECK(rsize == want, "remote size %d want %d", rsize, want);
    }
    {
        MPI_Group rg, wg;
        int       r0 = 0, w0;
        MPI_Comm_remote_group(inter, &rg);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_translate_ranks(rg, 1, &r0, wg, &w0);
        CHECK(w0 == (color == 0 ? 1 : 0), "remote rank 0 is world %d", w0);
        MPI_Group_free(&rg);
        MPI_Group_free(&wg);
    }

    /* pt2pt: local rank i of A talks with remote rank i of B (if it exists) */
    {
        int peer = lrank;
        if (peer < rsize) {
            int out = rank * 10, in = -1;
            MPI_Status st;
            CHECK_OK(MPI_Sendrecv(&out, 1, MPI_INT, peer, 5, &in, 1, MPI_INT, peer, 5, inter, &st));
            /* the peer is world rank 2*peer + (1 - color) */
            int want = (2 * peer + (1 - color)) * 10;
            CHECK(in == want, "intercomm sendrecv got %d want %d", in, want);
            CHECK(st.MPI_SOURCE == peer, "status source %d want remote rank %d", st.MPI_SOURCE, peer);
        }
        /* any-source: remote rank 0 sends to every local rank of the other group */
        if (lrank == 0) {
            for (int i = 0; i < rsize; i++) {
                MPI_Send(&i, 1, MPI_INT, i, 6, inter);
            }
        }
        int got = -1;
        MPI_Status st;
        MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 6, inter, &st);
        CHECK(got == lrank && st.MPI_SOURCE == 0, "any-source on intercomm: got %d from %d", got,
              st.MPI_SOURCE);
    }

    /* dup of an intercommunicator */
    CHECK_OK(MPI_Comm_dup(inter, &inter2));
    {
        int result, r2;
        MPI_Comm_compare(inter, inter2, &result);
        CHECK(result == MPI_CONGRUENT, "compare(inter, dup) = %d", result);
        MPI_Comm_remote_size(inter2, &r2);
        CHECK(r2 == rsize, "dup remote size %d", r2);
        if (lrank == 0) {
            int v = 1000 + color;
            MPI_Send(&v, 1, MPI_INT, 0, 1, inter2);
            MPI_Recv(&v, 1, MPI_INT, 0, 1, inter2, MPI_STATUS_IGNORE);
            CHECK(v == 1000 + (1 - color), "dup intercomm message %d", v);
        }
    }

    /* merge: group B (odd, high) after group A */
    CHECK_OK(MPI_Intercomm_merge(inter, color == 1, &merged));
    {
        int r, n, want;
        MPI_Comm_rank(merged, &r);
        MPI_Comm_size(merged, &n);
        want = color == 0 ? rank / 2 : (size + 1) / 2 + rank / 2;
        CHECK(n == size && r == want, "merge(high=color): rank/size %d/%d want %d/%d", r, n, want, size);
        /* allreduce-free check: ring over the merged communicator */
        int out = r, in = -1;
        MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % n, 2, &in, 1, MPI_INT, (r + n - 1) % n, 2, merged,
                     MPI_STATUS_IGNORE);
        CHECK(in == (r + n - 1) % n, "ring over merged got %d", in);
        MPI_Comm_free(&merged);
    }
    /* merge with A high: B first */
    CHECK_OK(MPI_Intercomm_merge(inter, color == 0, &merged));
    {
        int r, want;
        MPI_Comm_rank(merged, &r);
        want = color == 1 ? rank / 2 : size / 2 + rank / 2;
        CHECK(r == want, "merge(high=!color): rank %d want %d", r, want);
        MPI_Comm_free(&merged);
    }
    /* both same high: deterministic, consistent (group with world rank 0 first) */
    CHECK_OK(MPI_Intercomm_merge(inter, 0, &merged));
    {
        int r, want;
        MPI_Comm_rank(merged, &r);
        want = color == 0 ? rank / 2 : (size + 1) / 2 + rank / 2;
        CHECK(r == want, "merge(tie): rank %d want %d", r, want);
        MPI_Comm_free(&merged);
    }
    /* split of an intercommunicator: color = local rank parity */
    {
        MPI_Comm sub;
        int      c2 = lrank % 2, want_l = (lsize + 1 - c2) / 2, want_r = (rsize + 1 - c2) / 2;
        CHECK_OK(MPI_Comm_split(inter, c2, -lrank, &sub));
        if (want_r == 0) {
            CHECK(sub == MPI_COMM_NULL, "split without remote partners gave a communicator");
        } else {
            int n, rn, r, flag2;
            MPI_Comm_test_inter(sub, &flag2);
            MPI_Comm_size(sub, &n);
            MPI_Comm_remote_size(sub, &rn);
            MPI_Comm_rank(sub, &r);
            CHECK(flag2 && n == want_l && rn == want_r, "inter split: size %d remote %d, want %d/%d", n, rn,
                  want_l, want_r);
            CHECK(r == want_l - 1 - lrank / 2, "inter split rank %d (keys reversed)", r);
            /* the remote leader of each color sends its world rank to every partner */
            if (r == 0) {
                for (int i = 0; i < rn; i++) {
                    MPI_Send(&rank, 1, MPI_INT, i, 8, sub);
                }
            }
            int got = -1;
            MPI_Recv(&got, 1, MPI_INT, 0, 8, sub, MPI_STATUS_IGNORE);
            CHECK(got % 2 == 1 - color, "inter split message from world rank %d", got);
            MPI_Comm_free(&sub);
        }
        /* create on an intercommunicator: the first half of each local group */
        MPI_Group lg, half;
        int       ranges[1][3] = {{0, (lsize - 1) / 2, 1}};
        MPI_Comm_group(inter, &lg);
        MPI_Group_range_incl(lg, 1, ranges, &half);
        CHECK_OK(MPI_Comm_create(inter, half, &sub));
        if (lrank <= (lsize - 1) / 2) {
            int rn;
            CHECK(sub != MPI_COMM_NULL, "inter create: member got MPI_COMM_NULL");
            MPI_Comm_remote_size(sub, &rn);
            CHECK(rn == (rsize - 1) / 2 + 1, "inter create remote size %d", rn);
            MPI_Comm_free(&sub);
        } else {
            CHECK(sub == MPI_COMM_NULL, "inter create: non-member got a communicator");
        }
        MPI_Group_free(&half);
        MPI_Group_free(&lg);
    }

    /* split_type on an intercommunicator: processes of the same type in
     * both groups form an intercommunicator (all on one node here) */
    {
        MPI_Comm sub;
        int      n, rn, flag2;
        CHECK_OK(MPI_Comm_split_type(inter, MPI_COMM_TYPE_SHARED, lrank, MPI_INFO_NULL, &sub));
        CHECK(sub != MPI_COMM_NULL, "inter split_type SHARED gave MPI_COMM_NULL");
        if (sub != MPI_COMM_NULL) {
            MPI_Comm_test_inter(sub, &flag2);
            MPI_Comm_size(sub, &n);
            MPI_Comm_remote_size(sub, &rn);
            CHECK(flag2 && n == lsize && rn == rsize, "inter split_type SHARED: inter %d size %d remote %d",
                  flag2, n, rn);
            /* local rank 0 of each side greets the other side's rank 0 */
            if (lrank == 0) {
                int got = -1;
                CHECK_OK(MPI_Sendrecv(&rank, 1, MPI_INT, 0, 11, &got, 1, MPI_INT, 0, 11, sub,
                                      MPI_STATUS_IGNORE));
                CHECK(got == (color == 0 ? 1 : 0), "inter split_type message from world rank %d", got);
            }
            MPI_Comm_free(&sub);
        }
        CHECK_OK(MPI_Comm_split_type(inter, MPI_UNDEFINED, lrank, MPI_INFO_NULL, &sub));
        CHECK(sub == MPI_COMM_NULL, "inter split_type MPI_UNDEFINED gave a communicator");
        /* only one side asks for a communicator: no remote partners */
        CHECK_OK(MPI_Comm_split_type(inter, color == 0 ? MPI_COMM_TYPE_SHARED : MPI_UNDEFINED, lrank,
                                     MPI_INFO_NULL, &sub));
        CHECK(sub == MPI_COMM_NULL, "one-sided inter split_type gave a communicator");
    }

    /* intracomm-only calls on an intercommunicator */
    {
        MPI_Comm c;
        int dims[1] = {1}, periods[1] = {0};
        CHECK_CLASS(MPI_Cart_create(inter, 1, dims, periods, 0, &c), MPI_ERR_COMM);
        CHECK_CLASS(MPI_Intercomm_merge(local, 0, &c), MPI_ERR_COMM);
    }

    MPI_Comm_free(&inter2);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    return mpitest_finish();
}
