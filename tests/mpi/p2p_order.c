/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-overtaking across protocols: every rank sends to the next rank of a
 * ring a sequence of messages that alternates tiny / eager / near-threshold /
 * rendezvous sizes, all with the same tag. The receiver uses receive buffers
 * large enough for any of them and checks that the sequence number embedded
 * in each message arrives in order (and size and data match). Modes:
 *   A: all receives posted (Irecv) before the sender starts (go message);
 *   B: sends first, receives late, driven by Probe (exact-size buffers);
 *   C: blocking Send against a mix of pre-posted and late blocking Recvs;
 *   D: Isend with ANY_SOURCE receives interleaved with Iprobe polling.
 * With one rank the ring is a self-loop.
 */
#include "mpitest.h"

#include <stdint.h>

enum { TAG = 9, TAG_GO = 10, TAG_HS = 11, REPS = 3 };

static int    rank, size, next, prev;
static size_t sizes[8];
static int    nsizes;
static size_t maxsz;

static size_t seq_size(int seq)
{
    return sizes[seq % nsizes];
}

static unsigned seed_of(int src, int mode, int seq)
{
    return (unsigned)(src * 7919 + mode * 131 + seq);
}

static void make_from(unsigned char *b, int src, int mode, int seq)
{
    size_t  n = seq_size(seq);
    int32_t hdr[2] = {seq, mode};
    mpitest_fill(b, n, seed_of(src, mode, seq));
    memcpy(b, hdr, sizeof(hdr));
}

static void make(unsigned char *b, int mode, int seq)
{
    make_from(b, rank, mode, seq);
}

static int reported;

static void check(const unsigned char *b, const MPI_Status *st, int mode, int expect_seq)
{
    int32_t hdr[2];
    int     count = -1;
    long    bad = -1;
    size_t  n = seq_size(expect_seq);
    memcpy(hdr, b, sizeof(hdr));
    MPI_Get_count(st, MPI_BYTE, &count);
    int ok = hdr[0] == expect_seq && hdr[1] == mode && count == (int)n && st->MPI_SOURCE == prev &&
             st->MPI_TAG == TAG;
    if (ok) {
        unsigned char *want = malloc(n);
        make_from(want, prev, mode, expect_seq);
        for (size_t i = 0; i < n; i++) {
            if (want[i] != b[i]) {
                bad = (long)i;
                break;
            }
        }
        free(want);
    }
    if ((!ok || bad >= 0) && reported++ < 10) {
        CHECK(0, "mode %c: expected seq %d (%zu B) from %d, got seq %d mode %d count %d src %d tag %d, bad byte %ld",
              'A' + mode, expect_seq, n, prev, hdr[0], hdr[1], count, st->MPI_SOURCE, st->MPI_TAG,
              bad);
    }
}

/* Isend the whole sequence for `mode`; returns requests (caller waits). */
static MPI_Request *isend_all(int mode, unsigned char ***bufs_out, int nmsg)
{
    unsigned char **bufs = malloc(sizeof(*bufs) * (size_t)nmsg);
    MPI_Request    *reqs = malloc(sizeof(*reqs) * (size_t)nmsg);
    for (int i = 0; i < nmsg; i++) {
        bufs[i] = malloc(seq_size(i));
        make(bufs[i], mode, i);
        CHECK_OK(MPI_Isend(bufs[i], (int)seq_size(i), MPI_BYTE, next, TAG, MPI_COMM_WORLD, &reqs[i]));
    }
    *bufs_out = bufs;
    return reqs;
}

static void finish_sends(MPI_Request *reqs, unsigned char **bufs, int nmsg)
{
    CHECK_OK(MPI_Waitall(nmsg, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < nmsg; i++) {
        free(bufs[i]);
    }
    free(bufs);
    free(reqs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;

    size_t      eager = 16384;
    const char *e = getenv("WEFT_SMP_EAGERSIZE");
    if (e) {
        eager = (size_t)strtoull(e, NULL, 0);
    }
    if (eager < 16) {
        eager = 16;
    }
    size_t tab[] = {8, 1024, eager, eager + 1, 200 * 1024, 1024 * 1024, 8, eager - 1};
    nsizes = (int)(sizeof(tab) / sizeof(tab[0]));
    for (int i = 0; i < nsizes; i++) {
        sizes[i] = tab[i];
        maxsz = sizes[i] > maxsz ? sizes[i] : maxsz;
    }
    const int nmsg = REPS * nsizes;
    unsigned char **bufs;
    MPI_Request    *sreq;
    int             go = 1, got = 0;

    /* Mode A: receiver pre-posts all receives (max-size buffers), then tells
     * its predecessor to go. */
    {
        unsigned char *rb = malloc((size_t)nmsg * maxsz);
        MPI_Request   *rr = malloc(sizeof(MPI_Request) * (size_t)nmsg);
        MPI_Status    *st = malloc(sizeof(MPI_Status) * (size_t)nmsg);
        for (int i = 0; i < nmsg; i++) {
            CHECK_OK(MPI_Irecv(rb + (size_t)i * maxsz, (int)maxsz, MPI_BYTE, prev, TAG, MPI_COMM_WORLD, &rr[i]));
        }
        MPI_Request gr;
        CHECK_OK(MPI_Isend(&go, 1, MPI_INT, prev, TAG_GO, MPI_COMM_WORLD, &gr));
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, next, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        sreq = isend_all(0, &bufs, nmsg);
        CHECK_OK(MPI_Waitall(nmsg, rr, st));
        for (int i = 0; i < nmsg; i++) {
            check(rb + (size_t)i * maxsz, &st[i], 0, i);
        }
        finish_sends(sreq, bufs, nmsg);
        CHECK_OK(MPI_Wait(&gr, MPI_STATUS_IGNORE));
        free(rb);
        free(rr);
        free(st);
    }

    /* Mode B: sends first, then a handshake; receiver probes and receives
     * each message into a buffer of exactly the probed size. */
    {
        sreq = isend_all(1, &bufs, nmsg);
        MPI_Request hr;
        CHECK_OK(MPI_Isend(&go, 1, MPI_INT, next, TAG_HS, MPI_COMM_WORLD, &hr));
        CHECK_OK(MPI_Recv(&got, 1, MPI_INT, prev, TAG_HS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        for (int i = 0; i < nmsg; i++) {
            MPI_Status st;
            int        count = -1;
            CHECK_OK(MPI_Probe(prev, TAG, MPI_COMM_WORLD, &st));
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == (int)seq_size(i), "mode B: probe %d reports %d bytes, expected %zu", i,
                  count, seq_size(i));
            if (count < 8) {
                count = 8;
            }
            unsigned char *b = malloc((size_t)count);
            CHECK_OK(MPI_Recv(b, count, MPI_BYTE, prev, TAG, MPI_COMM_WORLD, &st));
            check(b, &st, 1, i);
            free(b);
        }
        CHECK_OK(MPI_Wait(&hr, MPI_STATUS_IGNORE));
        finish_sends(sreq, bufs, nmsg);
    }

    /* Mode C: blocking Send (ranks alternate roles to avoid a send cycle):
     * half the receives are pre-posted, the rest are blocking Recvs. */
    {
        unsigned char *sb = malloc(maxsz);
        unsigned char *rb = malloc((size_t)nmsg * maxsz);
        MPI_Request   *rr = malloc(sizeof(MPI_Request) * (size_t)nmsg);
        MPI_Status     st;
        int            npre = nmsg / 2;
        for (int i = 0; i < npre; i++) {
            CHECK_OK(MPI_Irecv(rb + (size_t)i * maxsz, (int)maxsz, MPI_BYTE, prev, TAG, MPI_COMM_WORLD, &rr[i]));
        }
        if (size == 1) {
            /* self: blocking Send to self could need the receive first; use
             * Isend + Recv. */
            sreq = isend_all(2, &bufs, nmsg);
            CHECK_OK(MPI_Waitall(npre, rr, MPI_STATUSES_IGNORE));
            for (int i = npre; i < nmsg; i++) {
                CHECK_OK(MPI_Recv(rb + (size_t)i * maxsz, (int)maxsz, MPI_BYTE, prev, TAG, MPI_COMM_WORLD, &st));
                check(rb + (size_t)i * maxsz, &st, 2, i);
            }
            finish_sends(sreq, bufs, nmsg);
        } else {
            /* Two roles: rank 0 sends first and receives after; the others
             * receive first. This breaks the ring's send cycle. */
            for (int role = 0; role < 2; role++) {
                int sending = (rank == 0) == (role == 0);
                if (sending) {
                    for (int i = 0; i < nmsg; i++) {
                        make(sb, 2, i);
                        CHECK_OK(MPI_Send(sb, (int)seq_size(i), MPI_BYTE, next, TAG, MPI_COMM_WORLD));
                    }
                } else {
                    MPI_Status sts[64];
                    for (int i = npre; i < nmsg; i++) {
                        CHECK_OK(MPI_Recv(rb + (size_t)i * maxsz, (int)maxsz, MPI_BYTE, prev, TAG, MPI_COMM_WORLD, &sts[i]));
                    }
                    CHECK_OK(MPI_Waitall(npre, rr, sts));
                    for (int i = 0; i < nmsg; i++) {
                        check(rb + (size_t)i * maxsz, &sts[i], 2, i);
                    }
                }
            }
        }
        free(sb);
        free(rb);
        free(rr);
    }

    /* Mode D: Isend all; receiver alternates ANY_SOURCE Irecv+Wait with
     * Iprobe polling (ANY_TAG) before each receive. */
    {
        sreq = isend_all(3, &bufs, nmsg);
        unsigned char *b = malloc(maxsz);
        for (int i = 0; i < nmsg; i++) {
            MPI_Status st;
            if (i % 2 == 0) {
                int flag = 0;
                while (!flag) {
                    CHECK_OK(MPI_Iprobe(size > 1 ? prev : MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st));
                }
                int count = -1;
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(st.MPI_TAG == TAG && count == (int)seq_size(i),
                      "mode D: iprobe %d: tag %d count %d", i, st.MPI_TAG, count);
            }
            MPI_Request r;
            int src = size == 2 ? MPI_ANY_SOURCE : prev;
            CHECK_OK(MPI_Irecv(b, (int)maxsz, MPI_BYTE, src, TAG, MPI_COMM_WORLD, &r));
            CHECK_OK(MPI_Wait(&r, &st));
            check(b, &st, 3, i);
        }
        finish_sends(sreq, bufs, nmsg);
        free(b);
    }

    /* final ring handshake so nothing is in flight at finalize */
    MPI_Request hr;
    CHECK_OK(MPI_Isend(&go, 1, MPI_INT, next, TAG_HS, MPI_COMM_WORLD, &hr));
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, prev, TAG_HS, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Wait(&hr, MPI_STATUS_IGNORE));
    return mpitest_finish();
}
