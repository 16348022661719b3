/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bugs 1, 11 and 12: collective argument checks.
 *  - bug 1: arguments the standard makes insignificant are not checked:
 *    with MPI_IN_PLACE the send count/type (sendcount -1, MPI_DATATYPE_NULL)
 *    of Allgather(v)/Alltoall and their I-/persistent forms; at non-roots
 *    the root-only count/type/buffer of Gather(v)/Scatter(v) (and the root's
 *    own in-place side). Results compared element by element.
 *  - bug 11: MPI_IN_PLACE where the standard never allows it gets
 *    MPI_ERR_BUFFER (Allreduce recvbuf, Bcast buffer, Allgather/Alltoall/
 *    Reduce_scatter_block/Scan recvbuf, neighborhood buffers), without a
 *    crash or hang when every rank makes the mistake.
 *  - bug 12: an error only the root can detect (Scatterv with displs NULL
 *    everywhere, Gather with recvbuf MPI_IN_PLACE at the root, Scatter with
 *    sendcount -1 at the root, Reduce with recvbuf MPI_IN_PLACE at the root)
 *    fails at the root while the others complete,
 *    and later collectives (Allreduce, Bcast, Scatter, Gather) on the same
 *    communicator still give the right results.
 */
#include "mpitest.h"

static int rank, size;

static void check_later_collectives(MPI_Comm comm, const char *after)
{
    int v = rank + 1, sum = 0, b = rank == 0 ? 77 : -1, *all = malloc(sizeof(int) * size), got;
    CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size + 1) / 2, "after %s: allreduce %d", after, sum);
    CHECK_OK(MPI_Bcast(&b, 1, MPI_INT, 0, comm));
    CHECK(b == 77, "after %s: bcast %d", after, b);
    for (int i = 0; i < size; i++) {
        all[i] = 1000 + i;
    }
    got = -1;
    CHECK_OK(MPI_Scatter(all, 1, MPI_INT, &got, 1, MPI_INT, 0, comm));
    CHECK(got == 1000 + rank, "after %s: scatter %d", after, got);
    memset(all, 0xff, sizeof(int) * size);
    v = 5 * rank;
    CHECK_OK(MPI_Gather(&v, 1, MPI_INT, all, 1, MPI_INT, 0, comm));
    for (int i = 0; rank == 0 && i < size; i++) {
        CHECK(all[i] == 5 * i, "after %s: gather[%d] %d", after, i, all[i]);
    }
    free(all);
}

static void insignificant_arguments(MPI_Comm comm)
{
    int         *buf = malloc(sizeof(int) * size * 2), *ref = malloc(sizeof(int) * size * 2);
    int         *cnt = malloc(sizeof(int) * size), *dsp = malloc(sizeof(int) * size);
    MPI_Request  req;
    const int    root = size - 1;

    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        dsp[i] = i;
    }
    /* Allgather in place: sendcount -1 and MPI_DATATYPE_NULL are ignored */
    for (int form = 0; form < 3; form++) {
        for (int i = 0; i < size; i++) {
            buf[i] = i == rank ? 10 * rank : -1;
        }
        if (form == 0) {
            CHECK_OK(MPI_Allgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm));
        } else if (form == 1) {
            CHECK_OK(MPI_Iallgather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm,
                                    &req));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        } else {
            CHECK_OK(MPI_Allgather_init(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm,
                                        MPI_INFO_NULL, &req));
            MPI_Start(&req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            MPI_Request_free(&req);
        }
        for (int i = 0; i < size; i++) {
            CHECK(buf[i] == 10 * i, "allgather form %d: [%d] = %d", form, i, buf[i]);
        }
    }
    /* Allgatherv in place */
    for (int i = 0; i < size; i++) {
        buf[i] = i == rank ? 3 * rank : -1;
    }
    CHECK_OK(MPI_Allgatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, cnt, dsp, MPI_INT, comm));
    for (int i = 0; i < size; i++) {
        CHECK(buf[i] == 3 * i, "allgatherv: [%d] = %d", i, buf[i]);
    }
    /* Alltoall in place */
    for (int form = 0; form < 2; form++) {
        for (int i = 0; i < size; i++) {
            buf[i] = 100 * rank + i;
        }
        if (form == 0) {
            CHECK_OK(MPI_Alltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm));
        } else {
            CHECK_OK(MPI_Ialltoall(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, comm,
                                   &req));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
        for (int i = 0; i < size; i++) {
            CHECK(buf[i] == 100 * i + rank, "alltoall form %d: [%d] = %d", form, i, buf[i]);
        }
    }
    /* Gather: non-roots pass recvbuf NULL, recvcount -1, MPI_DATATYPE_NULL;
     * the root is in place with sendcount -1, MPI_DATATYPE_NULL */
    for (int form = 0; form < 2; form++) {
        int v = 7 * rank;
        for (int i = 0; i < size; i++) {
            buf[i] = i == root ? 7 * root : -1;
        }
        if (rank == root) {
            if (form == 0) {
                CHECK_OK(MPI_Gather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, root,
                                    comm));
            } else {
                CHECK_OK(MPI_Igather(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, 1, MPI_INT, root,
                                     comm, &req));
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            for (int i = 0; i < size; i++) {
                CHECK(buf[i] == 7 * i, "gather form %d: [%d] = %d", form, i, buf[i]);
            }
        } else if (form == 0) {
            CHECK_OK(MPI_Gather(&v, 1, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, comm));
        } else {
            CHECK_OK(MPI_Igather(&v, 1, MPI_INT, NULL, -1, MPI_DATATYPE_NULL, root, comm, &req));
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        }
    }
    /* Gatherv: non-roots pass NULL counts/displs, MPI_DATATYPE_NULL */
    {
        int v = 9 * rank;
        for (int i = 0; i < size; i++) {
            buf[i] = i == root ? 9 * root : -1;
        }
        if (rank == root) {
            CHECK_OK(MPI_Gatherv(MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, buf, cnt, dsp, MPI_INT, root,
                                 comm));
            for (int i = 0; i < size; i++) {
                CHECK(buf[i] == 9 * i, "gatherv: [%d] = %d", i, buf[i]);
            }
        } else {
            CHECK_OK(MPI_Gatherv(&v, 1, MPI_INT, NULL, NULL, NULL, MPI_DATATYPE_NULL, root, comm));
        }
    }
    /* Scatter: non-roots pass sendbuf NULL, sendcount -1, MPI_DATATYPE_NULL;
     * the root is in place with recvcount -1 */
    for (int form = 0; form < 2; form++) {
        int got = -1;
        for (int i = 0; i < size; i++) {
            buf[i] = 11 * i;
        }
        if (rank == root) {
            if (form == 0) {
                CHECK_OK(MPI_Scatter(buf, 1, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                                     comm));
            } else {
                CHECK_OK(MPI_Iscatter(buf, 1, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                                      comm, &req));
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
        } else {
            if (form == 0) {
                CHECK_OK(MPI_Scatter(NULL, -1, MPI_DATATYPE_NULL, &got, 1, MPI_INT, root, comm));
            } else {
                CHECK_OK(MPI_Iscatter(NULL, -1, MPI_DATATYPE_NULL, &got, 1, MPI_INT, root, comm,
                                      &req));
                MPI_Wait(&req, MPI_STATUS_IGNORE);
            }
            CHECK(got == 11 * rank, "scatter form %d: got %d", form, got);
        }
    }
    /* Scatterv: non-roots pass NULL counts/displs; the root in place */
    {
        int got = -1;
        for (int i = 0; i < size; i++) {
            buf[i] = 13 * i;
        }
        if (rank == root) {
            CHECK_OK(MPI_Scatterv(buf, cnt, dsp, MPI_INT, MPI_IN_PLACE, -1, MPI_DATATYPE_NULL, root,
                                  comm));
        } else {
            CHECK_OK(MPI_Scatterv(NULL, NULL, NULL, MPI_DATATYPE_NULL, &got, 1, MPI_INT, root,
                                  comm));
            CHECK(got == 13 * rank, "scatterv: got %d", got);
        }
    }
    /* Reduce: recvbuf, at non-roots, is not significant */
    {
        int v = rank, r = -1;
        CHECK_OK(MPI_Reduce(&v, rank == root ? &r : NULL, 1, MPI_INT, MPI_SUM, root, comm));
        CHECK(rank != root || r == size * (size - 1) / 2, "reduce %d", r);
    }
    (void)ref;
    free(buf);
    free(ref);
    free(cnt);
    free(dsp);
}

static void inplace_not_allowed(MPI_Comm comm)
{
    int         a[64], b[64];
    MPI_Request req;
    MPI_Comm    cart;
    int         dims[1] = {0}, periods[1] = {1};

    /* every rank makes the mistake: all return MPI_ERR_BUFFER, nobody hangs */
    CHECK_CLASS(MPI_Allreduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Iallreduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm, &req),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allgather(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce_scatter_block(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Scan(a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Exscan(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Reduce(MPI_IN_PLACE, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, 0, comm),
                rank == 0 ? MPI_ERR_BUFFER : MPI_ERR_BUFFER); /* non-roots: sendbuf in place */
    dims[0] = size;
    MPI_Cart_create(comm, 1, dims, periods, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    CHECK_CLASS(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, cart),
                MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Neighbor_alltoall(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, cart),
                MPI_ERR_BUFFER);
    MPI_Comm_free(&cart);
    check_later_collectives(comm, "MPI_IN_PLACE errors");
}

static void root_only_errors(MPI_Comm comm)
{
    int *buf = malloc(sizeof(int) * size), *cnt = malloc(sizeof(int) * size), got = -5, v;

    for (int i = 0; i < size; i++) {
        cnt[i] = 1;
        buf[i] = i;
    }
    /* the case: displs NULL on every rank; only the root uses it */
    {
        int rc = MPI_Scatterv(buf, cnt, NULL, MPI_INT, &got, 1, MPI_INT, 0, comm);
        if (rank == 0) {
            CHECK_CLASS(rc, MPI_ERR_ARG);
        } else {
            CHECK_OK(rc);
        }
    }
    check_later_collectives(comm, "Scatterv with NULL displs");
    /* Gather with recvbuf MPI_IN_PLACE at the root */
    v = rank;
    {
        int rc = MPI_Gather(&v, 1, MPI_INT, rank == 0 ? MPI_IN_PLACE : NULL, 1, MPI_INT, 0, comm);
        if (rank == 0) {
            CHECK_CLASS(rc, MPI_ERR_BUFFER);
        } else {
            CHECK_OK(rc);
        }
    }
    check_later_collectives(comm, "Gather with recvbuf MPI_IN_PLACE");
    /* Scatter with a negative sendcount at the root */
    {
        int rc = MPI_Scatter(buf, rank == 0 ? -1 : 1, MPI_INT, &got, 1, MPI_INT, 0, comm);
        if (rank == 0) {
            CHECK_CLASS(rc, MPI_ERR_COUNT);
        } else {
            CHECK_OK(rc);
        }
    }
    /* Iscatterv with NULL sendcounts at the root */
    {
        MPI_Request req = MPI_REQUEST_NULL;
        int rc = MPI_Iscatterv(buf, rank == 0 ? NULL : cnt, NULL, MPI_INT, &got, 1, MPI_INT, 0,
                               comm, &req);
        if (rank == 0) {
            CHECK_CLASS(rc, MPI_ERR_ARG);
        } else {
            CHECK_OK(rc);
            CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        }
    }
    check_later_collectives(comm, "Scatter with sendcount -1 at the root");
    /* Reduce with recvbuf MPI_IN_PLACE at the root only */
    {
        int rc = MPI_Reduce(&v, rank == 0 ? MPI_IN_PLACE : NULL, 1, MPI_INT, MPI_SUM, 0, comm);
        if (rank == 0) {
            CHECK_CLASS(rc, MPI_ERR_BUFFER);
        } else {
            CHECK_OK(rc);
        }
    }
    check_later_collectives(comm, "Reduce with recvbuf MPI_IN_PLACE at the root");
    free(buf);
    free(cnt);
}

int main(int argc, char **argv)
{
    MPI_Comm dup;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    insignificant_arguments(MPI_COMM_WORLD);
    inplace_not_allowed(MPI_COMM_WORLD);
    /* root-only errors on a fresh communicator, as the first collectives on
     * it (the shared-memory region is set up lazily after them) */
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    root_only_errors(dup);
    MPI_Comm_free(&dup);
    root_only_errors(MPI_COMM_WORLD);
    return mpitest_finish();
}
