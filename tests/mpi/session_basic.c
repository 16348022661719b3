/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The MPI-4 sessions model without MPI_Init: Session_init, process sets
 * (mpi://WORLD, mpi://SELF, pset info), groups from psets,
 * MPI_Comm_create_from_group (traffic on it), two sessions at once,
 * MPI_Intercomm_create_from_groups, session error handlers, and
 * MPI_Initialized staying false.
 */
#include "sessiontest.h"

static int handler_calls;
static void on_error(MPI_Session *s, int *code, ...)
{
    (void)s;
    (void)code;
    handler_calls++;
}

int main(void)
{
    MPI_Session    s, s2;
    MPI_Errhandler eh;
    MPI_Group      wg, sg;
    MPI_Comm       comm, self;
    int            n, len, flag, size, rc;
    char           name[MPI_MAX_PSET_NAME_LEN], val[64];
    MPI_Info       info;

    MPI_Session_create_errhandler(on_error, &eh);
    rc = MPI_Session_init(MPI_INFO_NULL, eh, &s);
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "FAIL MPI_Session_init returned %d\n", rc);
        return 1;
    }
    MPI_Initialized(&flag);
    CHECK(!flag, "MPI_Initialized is true in the sessions model");

    MPI_Session_get_num_psets(s, MPI_INFO_NULL, &n);
    CHECK(n >= 2, "num psets %d", n);
    int found_world = 0, found_self = 0;
    for (int i = 0; i < n; i++) {
        len = 0;
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, NULL);
        CHECK(len > 0 && len <= MPI_MAX_PSET_NAME_LEN, "pset %d length %d", i, len);
        MPI_Session_get_nth_pset(s, MPI_INFO_NULL, i, &len, name);
        found_world |= strcmp(name, "mpi://WORLD") == 0;
        found_self |= strcmp(name, "mpi://SELF") == 0;
    }
    CHECK(found_world && found_self, "psets WORLD %d SELF %d", found_world, found_self);

    CHECK(MPI_Group_from_session_pset(s, "mpi://WORLD", &wg) == MPI_SUCCESS, "group from WORLD");
    MPI_Group_size(wg, &size);
    MPI_Group_rank(wg, &me);
    MPI_Session_get_pset_info(s, "mpi://WORLD", &info);
    MPI_Info_get(info, "mpi_size", 63, val, &flag);
    CHECK(flag && atoi(val) == size, "pset info mpi_size '%s'", val);
    MPI_Info_free(&info);

    /* unknown pset: the session's handler runs and the call returns an error */
    handler_calls = 0;
    rc = MPI_Group_from_session_pset(s, "mpi://NOPE", &sg);
    CHECK(rc != MPI_SUCCESS && handler_calls == 1, "unknown pset rc %d handler calls %d", rc, handler_calls);

    CHECK(MPI_Comm_create_from_group(wg, "weft.test.world", MPI_INFO_NULL, MPI_ERRORS_RETURN, &comm) == MPI_SUCCESS,
          "create_from_group");
    {
        int r, sz, out, in = -1;
        MPI_Comm_rank(comm, &r);
        MPI_Comm_size(comm, &sz);
        CHECK(r == me && sz == size, "comm from WORLD pset rank/size %d/%d", r, sz);
        out = r * 3;
        MPI_Sendrecv(&out, 1, MPI_INT, (r + 1) % sz, 0, &in, 1, MPI_INT, (r + sz - 1) % sz, 0, comm,
                     MPI_STATUS_IGNORE);
        CHECK(in == ((r + sz - 1) % sz) * 3, "ring on session comm got %d", in);
        MPI_Errhandler e;
        MPI_Comm_get_errhandler(comm, &e);
        CHECK(e == MPI_ERRORS_RETURN, "comm errhandler is not the one given");
    }
    /* a second session and a second communicator from the same group */
    MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2);
    MPI_Group_from_session_pset(s2, "mpi://SELF", &sg);
    MPI_Comm_create_from_group(sg, "weft.test.self", MPI_INFO_NULL, MPI_ERRORS_RETURN, &self);
    MPI_Comm_size(self, &n);
    CHECK(n == 1, "SELF pset comm size %d", n);
    MPI_Comm_free(&self);
    MPI_Group_free(&sg);

    /* intercommunicator from two halves of the WORLD group */
    if (size >= 2) {
        int       half = size / 2, lo[1][3] = {{0, half - 1, 1}}, hi[1][3] = {{half, size - 1, 1}};
        MPI_Group glo, ghi;
        MPI_Comm  inter;
        MPI_Group_range_incl(wg, 1, lo, &glo);
        MPI_Group_range_incl(wg, 1, hi, &ghi);
        int low = me < half;
        rc = MPI_Intercomm_create_from_groups(low ? glo : ghi, 0, low ? ghi : glo, 0, "weft.test.inter",
                                              MPI_INFO_NULL, MPI_ERRORS_RETURN, &inter);
        CHECK(rc == MPI_SUCCESS, "Intercomm_create_from_groups rc %d", rc);
        if (rc == MPI_SUCCESS) {
            int rs, lr, v = me, got = -1;
            MPI_Comm_remote_size(inter, &rs);
            MPI_Comm_rank(inter, &lr);
            CHECK(rs == (low ? size - half : half), "remote size %d", rs);
            if (lr < rs) {
                MPI_Sendrecv(&v, 1, MPI_INT, lr, 1, &got, 1, MPI_INT, lr, 1, inter, MPI_STATUS_IGNORE);
                CHECK(got == (low ? half + lr : lr), "inter from groups got %d", got);
            }
            MPI_Comm_free(&inter);
        }
        MPI_Group_free(&glo);
        MPI_Group_free(&ghi);
    }

    MPI_Comm_free(&comm);
    MPI_Group_free(&wg);
    MPI_Session_get_info(s, &info);
    MPI_Info_get(info, "thread_level", 63, val, &flag);
    CHECK(flag, "session info has no thread_level");
    MPI_Info_free(&info);
    MPI_Errhandler_free(&eh); /* the session keeps its reference */
    MPI_Session_finalize(&s2);
    CHECK(MPI_Session_finalize(&s) == MPI_SUCCESS, "Session_finalize");
    CHECK(s == MPI_SESSION_NULL, "session handle not reset");
    if (errors == 0 && me == 0) {
        printf("No Errors\n");
    }
    return errors ? 1 : 0;
}
