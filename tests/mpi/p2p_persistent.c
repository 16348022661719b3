/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Persistent requests: Send_init / Ssend_init / Bsend_init / Rsend_init /
 * Recv_init with Start / Startall over many iterations with changing buffer
 * contents (eager and rendezvous sizes); Request_free of inactive persistent
 * requests; Wait/Test/Waitall/Testall/Waitany/Testany/Waitsome/Testsome on
 * mixes of active, inactive and MPI_REQUEST_NULL requests (MPI_UNDEFINED
 * index/outcount rules, empty statuses). Ranks pair up (0,1), (2,3)...; an
 * odd last rank and a lone rank talk to themselves.
 */
#include "mpitest.h"

enum { TAG_D = 40, TAG_RDY = 41, ITERS = 60, NSZ = 3 };

static int rank, size, peer;

static void check_empty(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: status not empty: source %d tag %d count %d", what, st->MPI_SOURCE, st->MPI_TAG, count);
}

static void sync_peer(void)
{
    int a = 0, b = 0;
    MPI_Sendrecv(&a, 1, MPI_INT, peer, TAG_RDY + 10, &b, 1, MPI_INT, peer, TAG_RDY + 10,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    peer = rank ^ 1;
    if (peer >= size) {
        peer = rank;
    }
    const size_t sz[NSZ] = {64, 16385, 300000};
    unsigned char *sb[NSZ], *rb[NSZ];
    for (int k = 0; k < NSZ; k++) {
        sb[k] = malloc(sz[k]);
        rb[k] = malloc(sz[k]);
    }
    int   bsize = 0;
    for (int k = 0; k < NSZ; k++) {
        bsize += (int)sz[k] + MPI_BSEND_OVERHEAD;
    }
    bsize *= 4;
    void *bbuf = malloc((size_t)bsize);
    CHECK_OK(MPI_Buffer_attach(bbuf, bsize));

    /* mode 0 Send_init, 1 Ssend_init, 2 Bsend_init, 3 Rsend_init */
    for (int mode = 0; mode < 4; mode++) {
        MPI_Request req[2 * NSZ];
        for (int k = 0; k < NSZ; k++) {
            CHECK_OK(MPI_Recv_init(rb[k], (int)sz[k], MPI_BYTE, peer, TAG_D + k, MPI_COMM_WORLD, &req[k]));
            MPI_Request *s = &req[NSZ + k];
            switch (mode) {
            case 0: CHECK_OK(MPI_Send_init(sb[k], (int)sz[k], MPI_BYTE, peer, TAG_D + k, MPI_COMM_WORLD, s)); break;
            case 1: CHECK_OK(MPI_Ssend_init(sb[k], (int)sz[k], MPI_BYTE, peer, TAG_D + k, MPI_COMM_WORLD, s)); break;
            case 2: CHECK_OK(MPI_Bsend_init(sb[k], (int)sz[k], MPI_BYTE, peer, TAG_D + k, MPI_COMM_WORLD, s)); break;
            default: CHECK_OK(MPI_Rsend_init(sb[k], (int)sz[k], MPI_BYTE, peer, TAG_D + k, MPI_COMM_WORLD, s)); break;
            }
        }
        for (int it = 0; it < ITERS; it++) {
            for (int k = 0; k < NSZ; k++) {
                mpitest_fill(sb[k], sz[k], (unsigned)(mode * 100000 + it * 100 + k * 10 + rank));
                memset(rb[k], 0, sz[k]);
            }
            if (it % 2 == 0) {
                CHECK_OK(MPI_Startall(NSZ, req)); /* receives */
            } else {
                for (int k = 0; k < NSZ; k++) {
                    CHECK_OK(MPI_Start(&req[k]));
                }
            }
            if (mode == 3) { /* ready send: the peer's receives are now posted */
                sync_peer();
            }
            if (it % 3 == 0) {
                CHECK_OK(MPI_Startall(NSZ, &req[NSZ]));
            } else {
                for (int k = NSZ - 1; k >= 0; k--) {
                    CHECK_OK(MPI_Start(&req[NSZ + k]));
                }
            }
            MPI_Status st[2 * NSZ];
            if (it % 4 == 0) {
                CHECK_OK(MPI_Waitall(2 * NSZ, req, st));
            } else if (it % 4 == 1) {
                int flag = 0;
                while (!flag) {
                    CHECK_OK(MPI_Testall(2 * NSZ, req, &flag, st));
                }
            } else if (it % 4 == 2) {
                int left = 2 * NSZ, idx;
                MPI_Status s1;
                while (left > 0) {
                    CHECK_OK(MPI_Waitany(2 * NSZ, req, &idx, &s1));
                    CHECK(idx >= 0 && idx < 2 * NSZ, "Waitany index %d", idx);
                    if (idx >= 0 && idx < 2 * NSZ) {
                        st[idx] = s1;
                    }
                    left--;
                }
                /* all inactive now */
                CHECK_OK(MPI_Waitany(2 * NSZ, req, &idx, &s1));
                CHECK(idx == MPI_UNDEFINED, "Waitany on inactive requests: index %d", idx);
                check_empty(&s1, "Waitany(all inactive)");
            } else {
                int left = 2 * NSZ, out = 0, idx[2 * NSZ], seen[2 * NSZ] = {0};
                MPI_Status s1[2 * NSZ];
                while (left > 0) {
                    if (left % 2) {
                        CHECK_OK(MPI_Waitsome(2 * NSZ, req, &out, idx, s1));
                    } else {
                        CHECK_OK(MPI_Testsome(2 * NSZ, req, &out, idx, s1));
                    }
                    CHECK(out != MPI_UNDEFINED && out >= 0, "some: outcount %d with active requests", out);
                    for (int j = 0; j < out; j++) {
                        CHECK(!seen[idx[j]], "some: index %d twice", idx[j]);
                        seen[idx[j]] = 1;
                        st[idx[j]] = s1[j];
                    }
                    left -= out > 0 ? out : 0;
                }
                CHECK_OK(MPI_Waitsome(2 * NSZ, req, &out, idx, s1));
                CHECK(out == MPI_UNDEFINED, "Waitsome on inactive requests: outcount %d", out);
                CHECK_OK(MPI_Testsome(2 * NSZ, req, &out, idx, s1));
                CHECK(out == MPI_UNDEFINED, "Testsome on inactive requests: outcount %d", out);
            }
            for (int k = 0; k < NSZ; k++) {
                int count = -1;
                MPI_Get_count(&st[k], MPI_BYTE, &count);
                CHECK(count == (int)sz[k] && st[k].MPI_SOURCE == peer && st[k].MPI_TAG == TAG_D + k,
                      "mode %d it %d size %zu: count %d source %d tag %d", mode, it, sz[k], count,
                      st[k].MPI_SOURCE, st[k].MPI_TAG);
                long bad = mpitest_verify(rb[k], sz[k], (unsigned)(mode * 100000 + it * 100 + k * 10 + peer));
                CHECK(bad < 0, "mode %d it %d size %zu: first bad byte %ld", mode, it, sz[k], bad);
            }
            for (int j = 0; j < 2 * NSZ; j++) {
                CHECK(req[j] != MPI_REQUEST_NULL, "persistent request %d freed by completion", j);
            }
            if (mode == 3) {
                sync_peer(); /* receives of the next iteration are posted after this */
            }
        }
        /* inactive persistent requests: Wait/Test return at once, empty status */
        {
            MPI_Status s1;
            int        flag = 0;
            CHECK_OK(MPI_Wait(&req[0], &s1));
            check_empty(&s1, "Wait(inactive)");
            CHECK_OK(MPI_Test(&req[NSZ], &flag, &s1));
            CHECK(flag == 1, "Test(inactive) flag %d", flag);
            check_empty(&s1, "Test(inactive)");
        }
        for (int j = 0; j < 2 * NSZ; j++) {
            CHECK_OK(MPI_Request_free(&req[j]));
            CHECK(req[j] == MPI_REQUEST_NULL, "Request_free left the handle");
        }
    }

    /* Request_free of a never-started persistent request. */
    {
        MPI_Request r;
        CHECK_OK(MPI_Send_init(sb[0], 1, MPI_BYTE, peer, TAG_D, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free(never started)");
        CHECK_OK(MPI_Recv_init(rb[0], 1, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r));
        CHECK_OK(MPI_Request_free(&r));
    }

    /* Mixes of MPI_REQUEST_NULL, inactive persistent, active requests. */
    {
        MPI_Request r[5];
        MPI_Status  st[5], s1;
        int         idx = -2, flag = -1, out = -2, idxs[5];
        int         v = rank + 1000, got = -1;
        r[0] = MPI_REQUEST_NULL;
        CHECK_OK(MPI_Recv_init(&got, 1, MPI_INT, peer, TAG_D + 9, MPI_COMM_WORLD, &r[1])); /* inactive */
        r[2] = MPI_REQUEST_NULL;
        CHECK_OK(MPI_Send_init(&v, 1, MPI_INT, peer, TAG_D + 9, MPI_COMM_WORLD, &r[3])); /* inactive */
        r[4] = MPI_REQUEST_NULL;

        /* all null/inactive */
        CHECK_OK(MPI_Waitall(5, r, st));
        for (int j = 0; j < 5; j++) {
            check_empty(&st[j], "Waitall(null/inactive)");
        }
        CHECK_OK(MPI_Testall(5, r, &flag, st));
        CHECK(flag == 1, "Testall(null/inactive) flag %d", flag);
        CHECK_OK(MPI_Waitany(5, r, &idx, &s1));
        CHECK(idx == MPI_UNDEFINED, "Waitany(null/inactive) index %d", idx);
        check_empty(&s1, "Waitany(null/inactive)");
        flag = -1;
        idx = -2;
        CHECK_OK(MPI_Testany(5, r, &idx, &flag, &s1));
        CHECK(flag == 1 && idx == MPI_UNDEFINED, "Testany(null/inactive) flag %d index %d", flag, idx);
        check_empty(&s1, "Testany(null/inactive)");
        CHECK_OK(MPI_Waitsome(5, r, &out, idxs, st));
        CHECK(out == MPI_UNDEFINED, "Waitsome(null/inactive) outcount %d", out);
        out = -2;
        CHECK_OK(MPI_Testsome(5, r, &out, idxs, st));
        CHECK(out == MPI_UNDEFINED, "Testsome(null/inactive) outcount %d", out);
        CHECK_OK(MPI_Waitall(0, NULL, MPI_STATUSES_IGNORE));
        CHECK_OK(MPI_Waitany(0, NULL, &idx, &s1));
        CHECK(idx == MPI_UNDEFINED, "Waitany(0) index %d", idx);
        s1.MPI_SOURCE = 123;
        MPI_Request nr = MPI_REQUEST_NULL;
        CHECK_OK(MPI_Wait(&nr, &s1));
        check_empty(&s1, "Wait(MPI_REQUEST_NULL)");

        /* active recv + active nonpersistent send among nulls/inactive */
        int v2 = rank + 2000, got2 = -1;
        CHECK_OK(MPI_Start(&r[1]));
        CHECK_OK(MPI_Irecv(&got2, 1, MPI_INT, peer, TAG_D + 8, MPI_COMM_WORLD, &r[2]));
        sync_peer();
        CHECK_OK(MPI_Isend(&v2, 1, MPI_INT, peer, TAG_D + 8, MPI_COMM_WORLD, &r[4]));
        CHECK_OK(MPI_Start(&r[3]));
        int done[5] = {0};
        int ndone = 0;
        while (ndone < 3) {
            CHECK_OK(MPI_Waitany(5, r, &idx, &s1));
            CHECK(idx != MPI_UNDEFINED && idx != 0, "Waitany with active requests: index %d", idx);
            if (idx == MPI_UNDEFINED || idx < 0 || idx > 4) {
                break;
            }
            CHECK(!done[idx], "Waitany returned index %d twice", idx);
            done[idx]++;
            ndone++;
            if (idx == 1 || idx == 3) {
                CHECK(r[idx] != MPI_REQUEST_NULL, "persistent request %d nulled by Waitany", idx);
            } else {
                CHECK(r[idx] == MPI_REQUEST_NULL, "nonpersistent request %d not nulled by Waitany", idx);
            }
        }
        /* r[3] (send) may have been among the three; finish the rest */
        CHECK_OK(MPI_Waitall(5, r, st));
        CHECK(got == peer + 1000 && got2 == peer + 2000, "mixed: got %d %d", got, got2);
        /* Testany with one active */
        got = -1;
        CHECK_OK(MPI_Start(&r[1]));
        CHECK_OK(MPI_Start(&r[3]));
        flag = 0;
        int n1 = 0, n3 = 0;
        while (n1 + n3 < 2) {
            CHECK_OK(MPI_Testany(5, r, &idx, &flag, &s1));
            if (flag) {
                CHECK(idx == 1 || idx == 3, "Testany index %d", idx);
                n1 += idx == 1;
                n3 += idx == 3;
            }
        }
        CHECK(n1 == 1 && n3 == 1, "Testany completions %d %d", n1, n3);
        CHECK(got == peer + 1000, "Testany data %d", got);
        CHECK_OK(MPI_Request_free(&r[1]));
        CHECK_OK(MPI_Request_free(&r[3]));
    }

    void *addr = NULL;
    int   dsize = 0;
    CHECK_OK(MPI_Buffer_detach(&addr, &dsize));
    CHECK(addr == bbuf && dsize == bsize, "Buffer_detach returned %p/%d", addr, dsize);
    free(bbuf);
    for (int k = 0; k < NSZ; k++) {
        free(sb[k]);
        free(rb[k]);
    }
    sync_peer();
    return mpitest_finish();
}
