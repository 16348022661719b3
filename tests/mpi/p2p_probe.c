/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Probe / Iprobe (status count before receiving), Mprobe / Improbe with Mrecv
 * / Imrecv (matched messages are reserved: a wildcard receive posted later
 * must not steal them), ANY_SOURCE and ANY_TAG probes over several senders,
 * and MPI_PROC_NULL probes (MPI_MESSAGE_NO_PROC). Rank 0 receives from rank 1
 * (from itself when alone) and from all other ranks in the multi-sender part.
 */
#include "mpitest.h"

enum { TAG_P = 31, TAG_M = 32, TAG_S = 33, TAG_X = 34, TAG_GO = 35 };

static int rank, size, src;

static size_t eager = 16384;

static void msg(unsigned char *b, size_t n, int from, int seq)
{
    mpitest_fill(b, n, (unsigned)(from * 1000 + seq));
    if (n >= sizeof(int)) {
        memcpy(b, &seq, sizeof(int));
    }
}

static void verify(const unsigned char *b, size_t n, int from, int seq, const char *what)
{
    unsigned char *w = malloc(n ? n : 1);
    msg(w, n, from, seq);
    CHECK(memcmp(w, b, n) == 0, "%s: data of message %d (%zu bytes) from %d differs", what, seq, n, from);
    free(w);
}

static void check_empty_status(const MPI_Status *st, const char *what)
{
    int count = -1;
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(st->MPI_SOURCE == MPI_PROC_NULL && st->MPI_TAG == MPI_ANY_TAG && count == 0,
          "%s: PROC_NULL status source %d tag %d count %d", what, st->MPI_SOURCE, st->MPI_TAG, count);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    src = size > 1 ? 1 : 0;
    const char *e = getenv("WEFT_SMP_EAGERSIZE");
    if (e) {
        eager = (size_t)strtoull(e, NULL, 0);
    }
    size_t sizes[] = {0, 4, 100, eager - 1, eager, eager + 1, 300000, 2u << 20};
    int    ns = (int)(sizeof(sizes) / sizeof(sizes[0]));

    /* 1. Probe/Iprobe then Recv into a buffer of exactly the probed size. */
    MPI_Request   *sr = malloc(sizeof(MPI_Request) * (size_t)ns * 2);
    unsigned char **sb = malloc(sizeof(*sb) * (size_t)ns * 2);
    if (rank == src) {
        for (int i = 0; i < ns; i++) {
            sb[i] = malloc(sizes[i] + 1);
            msg(sb[i], sizes[i], rank, i);
            CHECK_OK(MPI_Isend(sb[i], (int)sizes[i], MPI_BYTE, 0, TAG_P + (i % 2), MPI_COMM_WORLD, &sr[i]));
        }
    }
    if (rank == 0) {
        int flag = 1;
        CHECK_OK(MPI_Iprobe(src, TAG_X, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "Iprobe found a message that was never sent");
        for (int i = 0; i < ns; i++) {
            MPI_Status st;
            int        count = -1;
            int        tag = TAG_P + (i % 2);
            if (i % 3 == 0) {
                CHECK_OK(MPI_Probe(src, tag, MPI_COMM_WORLD, &st));
            } else if (i % 3 == 1) {
                flag = 0;
                while (!flag) {
                    CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                }
            } else {
                CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &st));
            }
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)sizes[i] && st.MPI_SOURCE == src && st.MPI_TAG == tag,
                  "probe %d: count %d (want %zu) source %d tag %d", i, count, sizes[i], st.MPI_SOURCE,
                  st.MPI_TAG);
            /* probing again finds the same message */
            MPI_Status st2;
            CHECK_OK(MPI_Probe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &st2));
            int count2 = -1;
            MPI_Get_count(&st2, MPI_BYTE, &count2);
            CHECK(count2 == count && st2.MPI_TAG == st.MPI_TAG, "second probe differs: %d/%d", count2,
                  st2.MPI_TAG);
            unsigned char *b = malloc((size_t)count + 1);
            CHECK_OK(MPI_Recv(b, count, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, &st2));
            verify(b, (size_t)count, src, i, "probe+recv");
            free(b);
        }
    }
    if (rank == src) {
        CHECK_OK(MPI_Waitall(ns, sr, MPI_STATUSES_IGNORE));
        for (int i = 0; i < ns; i++) {
            free(sb[i]);
        }
    }

    /* 2. Mprobe/Improbe reserve a message: rank src sends two messages per
     * size on TAG_M; rank 0 Mprobes the first, posts a wildcard Irecv which
     * must match the second, then Mrecvs (or Imrecvs) the first. */
    if (rank == src) {
        for (int i = 0; i < ns; i++) {
            for (int j = 0; j < 2; j++) {
                int k = 2 * i + j;
                sb[k] = malloc(sizes[i] + 1);
                msg(sb[k], sizes[i], rank, k);
                CHECK_OK(MPI_Isend(sb[k], (int)sizes[i], MPI_BYTE, 0, TAG_M, MPI_COMM_WORLD, &sr[k]));
            }
        }
    }
    if (rank == 0) {
        for (int i = 0; i < ns; i++) {
            MPI_Message m = MPI_MESSAGE_NULL;
            MPI_Status  st;
            int         count = -1, flag = 0;
            if (i % 2 == 0) {
                CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, TAG_M, MPI_COMM_WORLD, &m, &st));
            } else {
                while (!flag) {
                    CHECK_OK(MPI_Improbe(src, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &m, &st));
                }
            }
            CHECK(m != MPI_MESSAGE_NULL && m != MPI_MESSAGE_NO_PROC, "mprobe %d: bad message handle", i);
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)sizes[i] && st.MPI_SOURCE == src && st.MPI_TAG == TAG_M,
                  "mprobe %d: count %d source %d tag %d", i, count, st.MPI_SOURCE, st.MPI_TAG);
            /* a wildcard receive posted now must take the second message */
            unsigned char *b2 = malloc(sizes[i] + 1);
            MPI_Request    r2;
            MPI_Status     st2;
            CHECK_OK(MPI_Irecv(b2, (int)sizes[i] + 1, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &r2));
            /* the reserved message is not visible to probes either */
            if (i % 2 == 1) {
                CHECK_OK(MPI_Wait(&r2, &st2));
            }
            unsigned char *b1 = malloc((size_t)count + 1);
            if (i % 2 == 0) {
                CHECK_OK(MPI_Mrecv(b1, count, MPI_BYTE, &m, &st));
            } else {
                MPI_Request r1;
                CHECK_OK(MPI_Imrecv(b1, count, MPI_BYTE, &m, &r1));
                CHECK(m == MPI_MESSAGE_NULL, "Imrecv did not reset the message handle");
                CHECK_OK(MPI_Wait(&r1, &st));
            }
            CHECK(m == MPI_MESSAGE_NULL, "message handle not reset after receive");
            if (i % 2 == 0) {
                CHECK_OK(MPI_Wait(&r2, &st2));
            }
            int c1 = -1, c2 = -1;
            MPI_Get_count(&st, MPI_BYTE, &c1);
            MPI_Get_count(&st2, MPI_BYTE, &c2);
            CHECK(c1 == (int)sizes[i] && c2 == (int)sizes[i] && st.MPI_SOURCE == src && st2.MPI_SOURCE == src &&
                      st.MPI_TAG == TAG_M && st2.MPI_TAG == TAG_M,
                  "mrecv %d: counts %d %d sources %d %d tags %d %d", i, c1, c2, st.MPI_SOURCE,
                  st2.MPI_SOURCE, st.MPI_TAG, st2.MPI_TAG);
            if (sizes[i] >= sizeof(int)) {
                int s1, s2;
                memcpy(&s1, b1, sizeof s1);
                memcpy(&s2, b2, sizeof s2);
                CHECK(s1 == 2 * i && s2 == 2 * i + 1,
                      "size %zu: Mrecv got message %d (want %d), wildcard Irecv got %d (want %d)",
                      sizes[i], s1, 2 * i, s2, 2 * i + 1);
            }
            verify(b1, sizes[i], src, 2 * i, "mrecv (first)");
            verify(b2, sizes[i], src, 2 * i + 1, "wildcard irecv (second)");
            free(b1);
            free(b2);
        }
    }
    if (rank == src) {
        CHECK_OK(MPI_Waitall(2 * ns, sr, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 2 * ns; i++) {
            free(sb[i]);
        }
    }

    /* Gate: the other ranks start sending only now, so the wildcard probes
     * and receives above saw nothing but rank src's messages. */
    {
        int go = 1;
        if (rank == 0) {
            for (int r = 1; r < size; r++) {
                MPI_Send(&go, 1, MPI_INT, r, TAG_GO, MPI_COMM_WORLD);
            }
        } else {
            MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    }

    /* 3. Many senders: rank 0 Mprobes one message from every rank (ANY_SOURCE),
     * holds all the handles, then receives them in reverse order. */
    {
        int nsend = size; /* every rank including 0 sends one message */
        size_t n = 1000 + 37 * (size_t)rank;
        if (rank % 2) {
            n += 400000; /* rendezvous sizes from odd ranks */
        }
        unsigned char *b = malloc(n);
        MPI_Request    r;
        msg(b, n, rank, 7);
        CHECK_OK(MPI_Isend(b, (int)n, MPI_BYTE, 0, TAG_S, MPI_COMM_WORLD, &r));
        if (rank == 0) {
            MPI_Message *ms = malloc(sizeof(MPI_Message) * (size_t)nsend);
            int         *from = malloc(sizeof(int) * (size_t)nsend);
            int         *seen = calloc((size_t)size, sizeof(int));
            for (int i = 0; i < nsend; i++) {
                MPI_Status st;
                CHECK_OK(MPI_Mprobe(MPI_ANY_SOURCE, TAG_S, MPI_COMM_WORLD, &ms[i], &st));
                from[i] = st.MPI_SOURCE;
                CHECK(from[i] >= 0 && from[i] < size && !seen[from[i]], "Mprobe %d: source %d again", i,
                      from[i]);
                if (from[i] >= 0 && from[i] < size) {
                    seen[from[i]] = 1;
                }
            }
            int flag = 1;
            CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, TAG_S, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
            CHECK(flag == 0, "Iprobe sees a message already matched by Mprobe");
            for (int i = nsend - 1; i >= 0; i--) {
                size_t         m = 1000 + 37 * (size_t)from[i] + (from[i] % 2 ? 400000 : 0);
                unsigned char *rb = malloc(m);
                MPI_Status     st;
                CHECK_OK(MPI_Mrecv(rb, (int)m, MPI_BYTE, &ms[i], &st));
                CHECK(st.MPI_SOURCE == from[i], "Mrecv source %d, probed %d", st.MPI_SOURCE, from[i]);
                verify(rb, m, from[i], 7, "multi-sender mrecv");
                free(rb);
            }
            free(ms);
            free(from);
            free(seen);
        }
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        free(b);
    }

    /* 4. MPI_PROC_NULL probes. */
    {
        MPI_Status  st;
        MPI_Message m = MPI_MESSAGE_NULL;
        MPI_Request r;
        int         flag = 0;
        char        b[8] = {1, 2, 3, 4, 5, 6, 7, 8};
        CHECK_OK(MPI_Probe(MPI_PROC_NULL, TAG_P, MPI_COMM_WORLD, &st));
        check_empty_status(&st, "Probe");
        CHECK_OK(MPI_Iprobe(MPI_PROC_NULL, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
        CHECK(flag == 1, "Iprobe(PROC_NULL) flag %d", flag);
        check_empty_status(&st, "Iprobe");
        CHECK_OK(MPI_Mprobe(MPI_PROC_NULL, TAG_P, MPI_COMM_WORLD, &m, &st));
        CHECK(m == MPI_MESSAGE_NO_PROC, "Mprobe(PROC_NULL) message is not MPI_MESSAGE_NO_PROC");
        check_empty_status(&st, "Mprobe");
        CHECK_OK(MPI_Mrecv(b, 8, MPI_BYTE, &m, &st));
        CHECK(m == MPI_MESSAGE_NULL, "Mrecv(NO_PROC) did not set MPI_MESSAGE_NULL");
        check_empty_status(&st, "Mrecv(NO_PROC)");
        flag = 0;
        m = MPI_MESSAGE_NULL;
        CHECK_OK(MPI_Improbe(MPI_PROC_NULL, 5, MPI_COMM_WORLD, &flag, &m, &st));
        CHECK(flag == 1 && m == MPI_MESSAGE_NO_PROC, "Improbe(PROC_NULL): flag %d", flag);
        check_empty_status(&st, "Improbe");
        CHECK_OK(MPI_Imrecv(b, 8, MPI_BYTE, &m, &r));
        CHECK(m == MPI_MESSAGE_NULL, "Imrecv(NO_PROC) did not set MPI_MESSAGE_NULL");
        CHECK_OK(MPI_Wait(&r, &st));
        check_empty_status(&st, "Imrecv(NO_PROC)");
        CHECK(b[0] == 1 && b[7] == 8, "PROC_NULL receive wrote the buffer");
    }

    /* 5. Nothing left; release everyone together. */
    int go = 0;
    if (rank == 0) {
        int flag = 1;
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a message is left over");
        for (int r = 1; r < size; r++) {
            MPI_Send(&go, 1, MPI_INT, r, TAG_GO, MPI_COMM_WORLD);
        }
    } else {
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(sr);
    free(sb);
    return mpitest_finish();
}
