/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Argument errors of point-to-point calls under MPI_ERRORS_RETURN: invalid
 * rank, tag, count, communicator, datatype, buffer and request give the right
 * error class, MPI_Error_string of each code is non-empty, and afterwards
 * normal communication still works (ring exchange, verified).
 */
#include "mpitest.h"

static int rank, size;

static void check_string(int code, const char *what)
{
    char s[MPI_MAX_ERROR_STRING + 1];
    int  len = -1;
    memset(s, 0, sizeof s);
    CHECK_OK(MPI_Error_string(code, s, &len));
    CHECK(len > 0 && len <= MPI_MAX_ERROR_STRING && strlen(s) == (size_t)len,
          "%s: Error_string of %d: len %d '%s'", what, code, len, s);
}

#define EXPECT(_call, _class)                                                                  \
    do {                                                                                       \
        int _rc = (_call), _c = -1;                                                            \
        MPI_Error_class(_rc, &_c);                                                             \
        CHECK(_c == (_class), "%s returned class %d, expected %s (%d)", #_call, _c, #_class,   \
              (int)(_class));                                                                  \
        if (_rc != MPI_SUCCESS) {                                                              \
            check_string(_rc, #_call);                                                         \
        }                                                                                      \
    } while (0)

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));

    int         buf[16] = {0};
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Status  st;
    int         flag;
    int         dst = (rank + 1) % size;

    /* ranks */
    EXPECT(MPI_Send(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Send(buf, 1, MPI_INT, MPI_ANY_SOURCE, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Isend(buf, 1, MPI_INT, size + 3, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT(MPI_Ssend(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD), MPI_ERR_RANK);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &st), MPI_ERR_RANK);
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, -5, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);
    EXPECT(MPI_Iprobe(size, 0, MPI_COMM_WORLD, &flag, &st), MPI_ERR_RANK);
    EXPECT(MPI_Send_init(buf, 1, MPI_INT, size, 0, MPI_COMM_WORLD, &r), MPI_ERR_RANK);

    /* tags */
    EXPECT(MPI_Send(buf, 1, MPI_INT, dst, -1, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Send(buf, 1, MPI_INT, dst, MPI_ANY_TAG, MPI_COMM_WORLD), MPI_ERR_TAG);
    EXPECT(MPI_Isend(buf, 1, MPI_INT, dst, -7, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, dst, -3, MPI_COMM_WORLD, &st), MPI_ERR_TAG);
    EXPECT(MPI_Iprobe(dst, -3, MPI_COMM_WORLD, &flag, &st), MPI_ERR_TAG);
    {
        int *ub = NULL, found = 0;
        int  rc = MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &found);
        if (rc == MPI_SUCCESS && found && ub) {
            CHECK(*ub >= 32767, "MPI_TAG_UB %d < 32767", *ub);
            if (*ub < 2147483647) {
                EXPECT(MPI_Send(buf, 1, MPI_INT, dst, *ub + 1, MPI_COMM_WORLD), MPI_ERR_TAG);
                EXPECT(MPI_Irecv(buf, 1, MPI_INT, dst, *ub + 1, MPI_COMM_WORLD, &r), MPI_ERR_TAG);
            }
            /* the upper bound itself is valid */
            int v = 17, w = -1;
            CHECK_OK(MPI_Sendrecv(&v, 1, MPI_INT, rank, *ub, &w, 1, MPI_INT, rank, *ub, MPI_COMM_WORLD,
                                  MPI_STATUS_IGNORE));
            CHECK(w == 17, "message with tag MPI_TAG_UB: %d", w);
        } else if (rank == 0) {
            printf("p2p_errors: MPI_Comm_get_attr(MPI_TAG_UB) unavailable, tag upper bound not checked\n");
        }
    }

    /* counts */
    EXPECT(MPI_Send(buf, -1, MPI_INT, dst, 0, MPI_COMM_WORLD), MPI_ERR_COUNT);
    EXPECT(MPI_Recv(buf, -1, MPI_INT, dst, 0, MPI_COMM_WORLD, &st), MPI_ERR_COUNT);
    EXPECT(MPI_Isend(buf, -10, MPI_BYTE, dst, 0, MPI_COMM_WORLD, &r), MPI_ERR_COUNT);

    /* communicators */
    EXPECT(MPI_Send(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL), MPI_ERR_COMM);
    EXPECT(MPI_Recv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &st), MPI_ERR_COMM);
    EXPECT(MPI_Irecv(buf, 1, MPI_INT, 0, 0, MPI_COMM_NULL, &r), MPI_ERR_COMM);
    EXPECT(MPI_Iprobe(0, 0, MPI_COMM_NULL, &flag, &st), MPI_ERR_COMM);

    /* datatypes */
    EXPECT(MPI_Send(buf, 1, MPI_DATATYPE_NULL, dst, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
    EXPECT(MPI_Irecv(buf, 1, MPI_DATATYPE_NULL, dst, 0, MPI_COMM_WORLD, &r), MPI_ERR_TYPE);
    {
        MPI_Datatype t;
        CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &t)); /* not committed */
        EXPECT(MPI_Send(buf, 1, t, dst, 0, MPI_COMM_WORLD), MPI_ERR_TYPE);
        CHECK_OK(MPI_Type_free(&t));
    }

    /* buffers */
    EXPECT(MPI_Send(NULL, 4, MPI_INT, dst, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    EXPECT(MPI_Recv(NULL, 4, MPI_INT, dst, 0, MPI_COMM_WORLD, &st), MPI_ERR_BUFFER);

    /* requests. With the argument "badhandle", also a handle that is not a
     * request at all (the MPI_COMM_WORLD constant): MPICH crashes on that,
     * so it is a separate manifest entry. */
    {
        if (argc > 1 && strcmp(argv[1], "badhandle") == 0) {
            MPI_Request bad = (MPI_Request)MPI_COMM_WORLD;
            EXPECT(MPI_Wait(&bad, &st), MPI_ERR_REQUEST);
            bad = (MPI_Request)MPI_COMM_WORLD;
            EXPECT(MPI_Test(&bad, &flag, &st), MPI_ERR_REQUEST);
            bad = (MPI_Request)MPI_COMM_WORLD;
            EXPECT(MPI_Request_free(&bad), MPI_ERR_REQUEST);
        }
        MPI_Request nr = MPI_REQUEST_NULL;
        EXPECT(MPI_Request_free(&nr), MPI_ERR_REQUEST);
        nr = MPI_REQUEST_NULL;
        EXPECT(MPI_Start(&nr), MPI_ERR_REQUEST);
    }

    /* No message got sent by any failed call (they all used tag 0 or an
     * invalid tag; later traffic uses tags 5 and 6). */
    CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0, "a failed call sent a message");

    /* Normal traffic still works: ring exchanges, small and large. */
    size_t sizes[] = {4, 70000, 1 << 20};
    for (int k = 0; k < 3; k++) {
        size_t         n = sizes[k];
        unsigned char *sb = malloc(n), *rb = malloc(n);
        MPI_Request    rq[2];
        int            src = (rank + size - 1) % size;
        mpitest_fill(sb, n, (unsigned)(rank * 3 + k));
        CHECK_OK(MPI_Irecv(rb, (int)n, MPI_BYTE, src, 5, MPI_COMM_WORLD, &rq[0]));
        CHECK_OK(MPI_Isend(sb, (int)n, MPI_BYTE, dst, 5, MPI_COMM_WORLD, &rq[1]));
        CHECK_OK(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE));
        CHECK(mpitest_verify(rb, n, (unsigned)(src * 3 + k)) < 0, "ring exchange of %zu bytes after errors", n);
        free(sb);
        free(rb);
    }
    /* final ring token so no rank finalizes while another still sends */
    int t = 0, u = 0;
    CHECK_OK(MPI_Sendrecv(&t, 1, MPI_INT, dst, 6, &u, 1, MPI_INT, (rank + size - 1) % size, 6,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return mpitest_finish();
}
