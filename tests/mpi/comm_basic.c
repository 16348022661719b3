/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intracommunicator constructors: dup (+ info, idup), split (colors, keys,
 * MPI_UNDEFINED), split_type, create, create_group, compare, names, info
 * hints; traffic on the new communicators stays apart from the parent's;
 * 2000 dup/free cycles and 500 live communicators (context-id reuse).
 */
#include "mpitest.h"

/* Every rank sends its rank to the next one on comm and checks what comes
 * from the previous one. */
static void ring_check(MPI_Comm comm, int tag)
{
    int r, n, got = -1;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &n);
    CHECK_OK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, tag, &got, 1, MPI_INT, (r + n - 1) % n, tag,
                          comm, MPI_STATUS_IGNORE));
    CHECK(got == (r + n - 1) % n, "ring on a communicator got %d, want %d", got, (r + n - 1) % n);
}

int main(int argc, char **argv)
{
    int      rank, size, r, n, result;
    MPI_Comm dup, split, c;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* dup: same group, new context */
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_rank(dup, &r);
    MPI_Comm_size(dup, &n);
    CHECK(r == rank && n == size, "dup rank/size %d/%d", r, n);
    MPI_Comm_compare(MPI_COMM_WORLD, dup, &result);
    CHECK(result == MPI_CONGRUENT, "compare(world, dup) = %d", result);
    MPI_Comm_compare(dup, dup, &result);
    CHECK(result == MPI_IDENT, "compare(dup, dup) = %d", result);
    {
        /* The dup inherits the error handler. */
        MPI_Errhandler eh;
        MPI_Comm_get_errhandler(dup, &eh);
        CHECK(eh == MPI_ERRORS_RETURN, "dup did not inherit MPI_ERRORS_RETURN");
        MPI_Errhandler_free(&eh);
    }
    /* A message on dup does not match a receive on WORLD with the same tag:
     * post WORLD's receive first, then send on dup then on WORLD. */
    if (size > 1) {
        if (rank == 0) {
            int a = 1, b = 2;
            MPI_Send(&a, 1, MPI_INT, 1, 7, dup);
            MPI_Send(&b, 1, MPI_INT, 1, 7, MPI_COMM_WORLD);
        } else if (rank == 1) {
            int        x = 0, y = 0;
            MPI_Request rq;
            MPI_Irecv(&y, 1, MPI_INT, 0, 7, MPI_COMM_WORLD, &rq);
            MPI_Recv(&x, 1, MPI_INT, 0, 7, dup, MPI_STATUS_IGNORE);
            MPI_Wait(&rq, MPI_STATUS_IGNORE);
            CHECK(x == 1 && y == 2, "context isolation: dup got %d, world got %d", x, y);
        }
    }
    ring_check(dup, 3);

    /* names */
    {
        char name[MPI_MAX_OBJECT_NAME];
        int  len;
        MPI_Comm_get_name(MPI_COMM_WORLD, name, &len);
        CHECK(strcmp(name, "MPI_COMM_WORLD") == 0 && len == 14, "world name '%s'", name);
        MPI_Comm_get_name(dup, name, &len);
        CHECK(len == 0 && name[0] == '\0', "fresh dup has name '%s'", name);
        MPI_Comm_set_name(dup, "my-dup");
        MPI_Comm_get_name(dup, name, &len);
        CHECK(strcmp(name, "my-dup") == 0 && len == 6, "dup name '%s'", name);
    }

    /* info hints: dup_with_info and get_info */
    {
        MPI_Info info, used;
        char     v[64];
        int      flag;
        MPI_Comm c2;
        MPI_Info_create(&info);
        MPI_Info_set(info, "weft_test_hint", "yes");
        CHECK_OK(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &c2));
        MPI_Info_free(&info);
        MPI_Comm_get_info(c2, &used);
        MPI_Info_get(used, "weft_test_hint", 63, v, &flag);
        CHECK(flag && strcmp(v, "yes") == 0, "hint lost in dup_with_info (flag %d)", flag);
        MPI_Info_free(&used);
        ring_check(c2, 4);
        MPI_Comm_free(&c2);
        CHECK(c2 == MPI_COMM_NULL, "Comm_free did not set MPI_COMM_NULL");
    }

    /* idup */
    {
        MPI_Request req;
        MPI_Comm    c2;
        CHECK_OK(MPI_Comm_idup(MPI_COMM_WORLD, &c2, &req));
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        ring_check(c2, 5);
        MPI_Comm_free(&c2);
    }

    /* split: color = rank % 3, key = -rank (reversed order) */
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 3, -rank, &split));
    MPI_Comm_rank(split, &r);
    MPI_Comm_size(split, &n);
    {
        int want_n = 0, want_r = 0;
        for (int i = 0; i < size; i++) {
            if (i % 3 == rank % 3) {
                want_n++;
                if (i > rank) {
                    want_r++;
                }
            }
        }
        CHECK(n == want_n && r == want_r, "split: rank/size %d/%d, want %d/%d", r, n, want_r, want_n);
    }
    ring_check(split, 6);
    MPI_Comm_compare(MPI_COMM_WORLD, split, &result);
    CHECK(result == (size <= 1 ? MPI_CONGRUENT : MPI_UNEQUAL) || (size == 1), "compare(world, split)=%d",
          result);
    /* split with equal keys keeps parent order; MPI_UNDEFINED gives NULL */
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &c));
    if (rank == 0) {
        CHECK(c == MPI_COMM_NULL, "MPI_UNDEFINED color gave a communicator");
    } else {
        MPI_Comm_rank(c, &r);
        CHECK(r == rank - 1, "split with equal keys: rank %d want %d", r, rank - 1);
        MPI_Comm_free(&c);
    }
    /* reversed world: similar */
    CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c));
    MPI_Comm_compare(MPI_COMM_WORLD, c, &result);
    CHECK(result == (size == 1 ? MPI_CONGRUENT : MPI_SIMILAR), "compare(world, reversed) = %d", result);
    MPI_Comm_free(&c);

    /* split_type SHARED: all ranks run on this node here */
    {
        MPI_Comm node;
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
        MPI_Comm_size(node, &n);
        CHECK(n == size, "split_type SHARED size %d (single node test)", n);
        ring_check(node, 8);
        MPI_Comm_free(&node);
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, rank, MPI_INFO_NULL, &node));
        CHECK(node == MPI_COMM_NULL, "split_type MPI_UNDEFINED gave a communicator");
        /* HW_GUIDED with mpi_shared_memory = SHARED */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &node));
        CHECK(node != MPI_COMM_NULL, "HW_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
        if (node != MPI_COMM_NULL) {
            MPI_Comm_size(node, &n);
            CHECK(n == size, "HW_GUIDED mpi_shared_memory size %d", n);
            MPI_Comm_free(&node);
        }
        MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &node));
        CHECK(node == MPI_COMM_NULL, "HW_GUIDED unknown resource gave a communicator");
        MPI_Info_set(info, "mpi_hw_resource_type", "Machine");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_GUIDED, rank, info, &node));
        if (node != MPI_COMM_NULL) {
            MPI_Comm_free(&node);
        }
        MPI_Info_free(&info);
        /* HW_UNGUIDED: a strict subset, or MPI_COMM_NULL */
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, MPI_INFO_NULL, &node));
        if (node != MPI_COMM_NULL) {
            MPI_Comm_size(node, &n);
            CHECK(n < size, "HW_UNGUIDED gave %d of %d ranks (must be a strict subset)", n, size);
            ring_check(node, 9);
            MPI_Comm_free(&node);
        }
        /* HW_UNGUIDED with an info object: the resource type used is
         * returned in it whenever a communicator is returned */
        MPI_Info_create(&info);
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_HW_UNGUIDED, rank, info, &node));
        if (node != MPI_COMM_NULL) {
            char val[MPI_MAX_INFO_VAL + 1];
            int  vlen = (int)sizeof(val), found = 0;
            CHECK_OK(MPI_Info_get_string(info, "mpi_hw_resource_type", &vlen, val, &found));
            CHECK(found && vlen > 1, "HW_UNGUIDED left mpi_hw_resource_type unset in the info argument");
            MPI_Comm_free(&node);
        }
        MPI_Info_free(&info);
        /* RESOURCE_GUIDED with a hardware resource type, as HW_GUIDED */
        MPI_Info_create(&info);
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &node));
        CHECK(node == MPI_COMM_NULL, "RESOURCE_GUIDED without keys gave a communicator");
        MPI_Info_set(info, "mpi_hw_resource_type", "no-such-resource");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &node));
        CHECK(node == MPI_COMM_NULL, "RESOURCE_GUIDED unknown resource gave a communicator");
        MPI_Info_set(info, "mpi_hw_resource_type", "mpi_shared_memory");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &node));
        CHECK(node != MPI_COMM_NULL, "RESOURCE_GUIDED mpi_shared_memory gave MPI_COMM_NULL");
        if (node != MPI_COMM_NULL) {
            MPI_Comm_size(node, &n);
            CHECK(n == size, "RESOURCE_GUIDED mpi_shared_memory size %d", n);
            ring_check(node, 10);
            MPI_Comm_free(&node);
        }
        MPI_Info_free(&info);
        /* RESOURCE_GUIDED with psets */
        MPI_Info_create(&info);
        MPI_Info_set(info, "mpi_pset_name", "mpi://SELF");
        CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_RESOURCE_GUIDED, rank, info, &node));
        CHECK(node != MPI_COMM_NULL, "RESOURCE_GUIDED mpi://SELF gave MPI_COMM_NULL");
        if (node != MPI_COMM_NULL) {
            MPI_Comm_size(node, &n);
            CHECK(n == 1, "RESOURCE_GUIDED mpi://SELF size %d", n);
            MPI_Comm_free(&node);
        }
        MPI_Info_free(&info);
    }

    /* create: even ranks */
    {
        MPI_Group wg, eg;
        int       ranges[1][3] = {{0, size - 1, 2}};
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        MPI_Group_range_incl(wg, 1, ranges, &eg);
        CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, eg, &c));
        if (rank % 2 == 0) {
            CHECK(c != MPI_COMM_NULL, "Comm_create: member got MPI_COMM_NULL");
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &n);
            CHECK(r == rank / 2 && n == (size + 1) / 2, "Comm_create rank/size %d/%d", r, n);
            ring_check(c, 10);
            MPI_Comm_free(&c);
        } else {
            CHECK(c == MPI_COMM_NULL, "Comm_create: non-member got a communicator");
        }
        /* create_group: only the odd ranks call */
        if (rank % 2 == 1) {
            MPI_Group og;
            MPI_Group_difference(wg, eg, &og);
            CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, og, 42, &c));
            MPI_Comm_rank(c, &r);
            MPI_Comm_size(c, &n);
            CHECK(r == rank / 2 && n == size / 2, "Comm_create_group rank/size %d/%d", r, n);
            ring_check(c, 11);
            MPI_Comm_free(&c);
            MPI_Group_free(&og);
        }
        MPI_Group_free(&eg);
        MPI_Group_free(&wg);
    }

    /* 2000 dup/free cycles (context ids must be recycled) */
    for (int i = 0; i < 2000; i++) {
        CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &c));
        if (i % 500 == 0) {
            ring_check(c, 12);
        }
        MPI_Comm_free(&c);
    }
    /* 500 live communicators, alternating dup and split, all usable */
    {
        static MPI_Comm live[500];
        for (int i = 0; i < 500; i++) {
            if (i % 2) {
                CHECK_OK(MPI_Comm_dup(i ? live[i - 1] : MPI_COMM_WORLD, &live[i]));
            } else {
                CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &live[i]));
            }
        }
        for (int i = 0; i < 500; i += 49) {
            ring_check(live[i], 13);
        }
        for (int i = 499; i >= 0; i--) {
            MPI_Comm_free(&live[i]);
        }
    }

    MPI_Comm_free(&split);
    MPI_Comm_free(&dup);
    return mpitest_finish();
}
