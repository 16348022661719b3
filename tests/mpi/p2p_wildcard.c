/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_ANY_SOURCE / MPI_ANY_TAG receives mixing sources: every rank but 0
 * sends numbered messages of mixed sizes (eager and rendezvous) and tags to
 * rank 0, which receives them with wildcards and checks per-source order,
 * status source/tag/count and the data. Rank 0 starts each phase with a "go"
 * message to every sender so no other traffic can be matched by a wildcard.
 * With 1 rank the same runs as self-communication.
 */
#include "mpitest.h"

enum { TAG_GO = 1000, NTAGS = 5, MAXN = 70000 };

static int rank, size;

static const int sizes_tab[] = {16, 100, 16383, 16384, 16385, 69999, 0, 4096};

/* Message layout: int[4] header {source, seq, tag, size} then pattern bytes. */
static int msg_size(int src, int seq)
{
    int n = sizes_tab[(src + seq) % (int)(sizeof(sizes_tab) / sizeof(sizes_tab[0]))];
    return n < 16 ? 16 : n;
}

static int msg_tag(int src, int seq)
{
    return (seq * 7 + src) % NTAGS;
}

static void make_msg(unsigned char *buf, int src, int seq, int tag, int n)
{
    int hdr[4] = {src, seq, tag, n};
    memcpy(buf, hdr, sizeof(hdr));
    mpitest_fill(buf + 16, (size_t)n - 16, (unsigned)(src * 100003 + seq));
}

/* Verify a received message against its status; returns the header's seq. */
static int check_msg(const unsigned char *buf, const MPI_Status *st, int want_tag_or_any)
{
    int hdr[4], count = -1;
    memcpy(hdr, buf, sizeof(hdr));
    MPI_Get_count(st, MPI_BYTE, &count);
    CHECK(hdr[0] == st->MPI_SOURCE, "header source %d, status source %d", hdr[0], st->MPI_SOURCE);
    CHECK(hdr[2] == st->MPI_TAG, "header tag %d, status tag %d (source %d seq %d)", hdr[2],
          st->MPI_TAG, hdr[0], hdr[1]);
    CHECK(want_tag_or_any == MPI_ANY_TAG || st->MPI_TAG == want_tag_or_any,
          "status tag %d, asked for %d", st->MPI_TAG, want_tag_or_any);
    CHECK(count == hdr[3], "count %d, header size %d", count, hdr[3]);
    if (count == hdr[3] && count >= 16) {
        long bad = mpitest_verify(buf + 16, (size_t)count - 16, (unsigned)(hdr[0] * 100003 + hdr[1]));
        CHECK(bad < 0, "source %d seq %d size %d: first bad byte at %ld", hdr[0], hdr[1], count,
              bad);
    }
    return hdr[1];
}

/* Sender side of one phase: wait for go, send m messages (tags chosen by
 * tagfn unless fixed >= 0) with Isend, wait. */
static void send_phase(int dest, int m, int fixed_tag)
{
    if (dest != rank) {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    unsigned char **bufs = malloc(sizeof(*bufs) * (size_t)m);
    MPI_Request    *reqs = malloc(sizeof(*reqs) * (size_t)m);
    for (int i = 0; i < m; i++) {
        int n = msg_size(rank, i), tag = fixed_tag >= 0 ? fixed_tag : msg_tag(rank, i);
        bufs[i] = malloc((size_t)n);
        make_msg(bufs[i], rank, i, tag, n);
        CHECK_OK(MPI_Isend(bufs[i], n, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &reqs[i]));
    }
    if (dest != rank) {
        CHECK_OK(MPI_Waitall(m, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; i < m; i++) {
            free(bufs[i]);
        }
        free(bufs);
        free(reqs);
    } else {
        /* self: leave them in flight, the receive phase completes them */
        static unsigned char **keep_b;
        static MPI_Request    *keep_r;
        static int             keep_m;
        if (keep_r) {
            MPI_Waitall(keep_m, keep_r, MPI_STATUSES_IGNORE);
            for (int i = 0; i < keep_m; i++) {
                free(keep_b[i]);
            }
            free(keep_b);
            free(keep_r);
        }
        keep_b = bufs;
        keep_r = reqs;
        keep_m = m;
    }
}

static void go_all(void)
{
    int go = 1;
    for (int r = 1; r < size; r++) {
        MPI_Send(&go, 1, MPI_INT, r, TAG_GO, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    const int M = 60; /* messages per sender per phase */

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* senders: ranks 1..size-1, or rank 0 itself when alone */
    int  first = size > 1 ? 1 : 0;
    int  nsend = size > 1 ? size - 1 : 1;
    int *next = calloc((size_t)size, sizeof(int));
    unsigned char *buf = malloc(MAXN + 64);

    /* Phase 1: ANY_SOURCE + ANY_TAG blocking receives. */
    if (rank >= first && (rank != 0 || size == 1)) {
        send_phase(0, M, -1);
    }
    if (rank == 0) {
        go_all();
        for (int i = 0; i < M * nsend; i++) {
            MPI_Status st;
            CHECK_OK(MPI_Recv(buf, MAXN + 64, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
            int s = st.MPI_SOURCE;
            if (s < first || s >= size) {
                CHECK(0, "bad source %d", s);
                break;
            }
            int seq = check_msg(buf, &st, MPI_ANY_TAG);
            CHECK(seq == next[s], "phase 1: from %d got seq %d, expected %d", s, seq, next[s]);
            next[s] = seq + 1;
        }
    }

    /* Phase 2: senders use tags 0..NTAGS-1; rank 0 drains tag by tag with
     * ANY_SOURCE (per source and tag, order must hold), from the highest tag
     * down so that later-sent messages are matched first. */
    if (rank >= first && (rank != 0 || size == 1)) {
        send_phase(0, M, -1);
    }
    if (rank == 0) {
        go_all();
        for (int t = NTAGS - 1; t >= 0; t--) {
            /* count messages with this tag per sender */
            int total = 0;
            for (int s = first; s < first + nsend; s++) {
                next[s] = -1;
                for (int i = 0; i < M; i++) {
                    total += msg_tag(s, i) == t;
                }
            }
            for (int k = 0; k < total; k++) {
                MPI_Status st;
                CHECK_OK(MPI_Recv(buf, MAXN + 64, MPI_BYTE, MPI_ANY_SOURCE, t, MPI_COMM_WORLD, &st));
                int s = st.MPI_SOURCE;
                if (s < first || s >= size) {
                    CHECK(0, "bad source %d", s);
                    break;
                }
                int seq = check_msg(buf, &st, t);
                CHECK(seq > next[s], "phase 2 tag %d: from %d seq %d after %d", t, s, seq, next[s]);
                CHECK(msg_tag(s, seq) == t, "phase 2: seq %d from %d does not carry tag %d", seq, s, t);
                next[s] = seq;
            }
        }
    }

    /* Phase 3: pre-posted wildcard Irecvs mixed with specific-source ones.
     * Receives are posted before "go", so every message matches a posted
     * receive; posting order decides which. Receive i (i even) is
     * (ANY_SOURCE, ANY_TAG), i odd is (source s_i, ANY_TAG). */
    if (rank >= first && (rank != 0 || size == 1)) {
        if (size == 1) {
            /* post receives first (below), then send */
        } else {
            send_phase(0, M, 7);
        }
    }
    if (rank == 0) {
        int            nr = M * nsend;
        unsigned char *rb = malloc((size_t)nr * (MAXN + 64));
        MPI_Request   *rq = malloc(sizeof(MPI_Request) * (size_t)nr);
        MPI_Status    *st = malloc(sizeof(MPI_Status) * (size_t)nr);
        /* Posting order: per-source specific receives (M/2 for each source,
         * sources interleaved) with a few wildcards sprinkled in (at most
         * M/2, so no source can use up wildcards while its own specific
         * receives remain), then the remaining wildcards. Whatever the
         * arrival order, every receive is matched exactly once. */
        int nspec = nsend * (M / 2), nmid = 0, i = 0;
        for (int k = 0; k < nspec; k++) {
            if (k % 8 == 3 && nmid < M / 2) {
                CHECK_OK(MPI_Irecv(rb + (size_t)i * (MAXN + 64), MAXN + 64, MPI_BYTE, MPI_ANY_SOURCE,
                                   7, MPI_COMM_WORLD, &rq[i]));
                i++;
                nmid++;
            }
            CHECK_OK(MPI_Irecv(rb + (size_t)i * (MAXN + 64), MAXN + 64, MPI_BYTE, first + k % nsend,
                               MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
            i++;
        }
        for (; i < nr; i++) {
            CHECK_OK(MPI_Irecv(rb + (size_t)i * (MAXN + 64), MAXN + 64, MPI_BYTE, MPI_ANY_SOURCE,
                               i % 2 ? 7 : MPI_ANY_TAG, MPI_COMM_WORLD, &rq[i]));
        }
        if (size == 1) {
            send_phase(0, M, 7);
        } else {
            go_all();
        }
        CHECK_OK(MPI_Waitall(nr, rq, st));
        /* For each source, the receives it matched, in posting order, must
         * carry consecutive sequence numbers 0..M-1. */
        for (int s = first; s < first + nsend; s++) {
            next[s] = 0;
        }
        for (int i = 0; i < nr; i++) {
            int s = st[i].MPI_SOURCE;
            if (s < first || s >= size) {
                CHECK(0, "phase 3: receive %d: bad source %d", i, s);
                continue;
            }
            int seq = check_msg(rb + (size_t)i * (MAXN + 64), &st[i], 7);
            CHECK(seq == next[s], "phase 3: receive %d from %d got seq %d, expected %d", i, s, seq,
                  next[s]);
            next[s] = seq + 1;
        }
        free(rb);
        free(rq);
        free(st);
    }

    /* Phase 4: specific source + ANY_TAG, sources visited in reverse. */
    if (rank >= first && (rank != 0 || size == 1)) {
        send_phase(0, M, -1);
    }
    if (rank == 0) {
        go_all();
        for (int s = first + nsend - 1; s >= first; s--) {
            for (int i = 0; i < M; i++) {
                MPI_Status st;
                CHECK_OK(MPI_Recv(buf, MAXN + 64, MPI_BYTE, s, MPI_ANY_TAG, MPI_COMM_WORLD, &st));
                CHECK(st.MPI_SOURCE == s, "phase 4: asked for %d, got %d", s, st.MPI_SOURCE);
                int seq = check_msg(buf, &st, MPI_ANY_TAG);
                CHECK(seq == i, "phase 4: from %d got seq %d, expected %d", s, seq, i);
            }
        }
        int flag = 1;
        CHECK_OK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
        CHECK(flag == 0, "a message is left over");
    }
    if (size == 1) {
        send_phase(0, 0, -1); /* completes the last self phase */
    }
    /* senders wait for a final go so nothing is in flight at finalize */
    if (rank == 0) {
        go_all();
    } else {
        int go;
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    free(next);
    free(buf);
    return mpitest_finish();
}
