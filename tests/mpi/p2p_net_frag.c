/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Point-to-point rules across the netmod's protocol boundaries: eager (up to
 * WEFT_EAGER_THRESHOLD, E), fragmented eager (up to WEFT_NET_FRAG_MAX, F) and
 * rendezvous above. Sizes straddle both limits (read from the environment,
 * defaults 64k and 128k). Every received byte is compared. Parts:
 *   sizes     rank 0 <-> every rank: each size, contiguous and strided, both
 *             pre-posted and unexpected (sent before the receive is posted)
 *   order     every rank sends rank 0 an interleaved eager/frag/rndv sequence
 *             on one tag; rank 0 receives with MPI_ANY_SOURCE: per sender
 *             the sequence arrives in order (non-overtaking), every sender's
 *             messages all arrive
 *   probe     a fragmented message is probed (full size in the status) while
 *             its fragments may still be arriving, then mprobe + mrecv
 *   trunc     F-sized and just-above-E messages into smaller buffers:
 *             MPI_ERR_TRUNCATE, the buffer's bytes correct, nothing beyond
 *             written
 *   cancel    a receive that nothing matches is cancelled; the next
 *             fragmented message goes to the next receive
 *   ssend     an Ssend of a fragment-range size does not complete before the
 *             receive is posted
 * Runs with WEFT_NETMOD_ONLY=1 (every peer remote) and with host blocks
 * mixing shared-memory and netmod peers (ANY_SOURCE over both).
 */
#include "mpitest.h"

#include <stdint.h>
#include <unistd.h>

enum { TAG_SZ = 1, TAG_ORD = 2, TAG_PRB = 3, TAG_TR = 4, TAG_CAN = 5, TAG_SS = 6, TAG_GO = 7 };

static int    rank, size;
static size_t E = 65536, F = 131072; /* the defaults */

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    char       *end;

    if (v == NULL || *v == '\0') {
        return dflt;
    }
    size_t n = strtoul(v, &end, 10);
    if (*end == 'k' || *end == 'K') {
        n <<= 10;
    } else if (*end == 'm' || *end == 'M') {
        n <<= 20;
    }
    return n;
}

static unsigned seed(int src, int part, int i)
{
    return (unsigned)(src * 1009 + part * 97 + i);
}

/* The sizes around E and F. */
static size_t sizes[16];
static int    nsizes;

static void add_size(size_t n)
{
    for (int i = 0; i < nsizes; i++) {
        if (sizes[i] == n) {
            return;
        }
    }
    sizes[nsizes++] = n;
}

static void make_sizes(void)
{
    add_size(E - 1);
    add_size(E);
    add_size(E + 1);
    add_size(E + E / 2);
    add_size(2 * E);
    add_size(2 * E + 3);
    if (F > 2) {
        add_size(F - 1);
        add_size(F);
        add_size(F + 1);
    }
    add_size(F + E + 5);
    add_size(2 * F);
}

/* Part sizes: each size, contiguous then strided (every other int). */
static void part_sizes(void)
{
    MPI_Datatype vec;

    for (int peer = 1; peer < size; peer++) {
        if (rank != 0 && rank != peer) {
            continue;
        }
        int other = rank == 0 ? peer : 0;
        for (int i = 0; i < nsizes; i++) {
            size_t         n = sizes[i];
            unsigned char *b = malloc(n);
            MPI_Status     st;
            int            cnt = -1;
            /* 0 -> peer pre-posted (peer posts, then tells 0 to go); peer -> 0 unexpected */
            if (rank == peer) {
                MPI_Request r;
                memset(b, 0, n);
                MPI_Irecv(b, (int)n, MPI_BYTE, 0, TAG_SZ, MPI_COMM_WORLD, &r);
                MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
                MPI_Wait(&r, &st);
                MPI_Get_count(&st, MPI_BYTE, &cnt);
                CHECK(cnt == (int)n, "size %zu: count %d", n, cnt);
                long bad = mpitest_verify(b, n, seed(0, 1, i));
                CHECK(bad < 0, "size %zu pre-posted: byte %ld wrong", n, bad);
                mpitest_fill(b, n, seed(rank, 1, i));
                MPI_Send(b, (int)n, MPI_BYTE, 0, TAG_SZ, MPI_COMM_WORLD);
            } else {
                MPI_Recv(NULL, 0, MPI_BYTE, other, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                mpitest_fill(b, n, seed(0, 1, i));
                MPI_Send(b, (int)n, MPI_BYTE, other, TAG_SZ, MPI_COMM_WORLD);
                usleep(2000); /* let the reply arrive unexpected */
                memset(b, 0, n);
                MPI_Recv(b, (int)n, MPI_BYTE, other, TAG_SZ, MPI_COMM_WORLD, &st);
                long bad = mpitest_verify(b, n, seed(other, 1, i));
                CHECK(bad < 0, "size %zu unexpected from %d: byte %ld wrong", n, other, bad);
            }
            free(b);
        }
        /* Strided on both sides: n ints taken every other int. */
        MPI_Datatype one;
        MPI_Type_vector(1, 1, 2, MPI_INT, &one);
        MPI_Type_create_resized(one, 0, 2 * sizeof(int), &vec);
        MPI_Type_free(&one);
        MPI_Type_commit(&vec);
        for (int i = 0; i < nsizes; i++) {
            int  n   = (int)(sizes[i] / sizeof(int));
            int *buf = malloc(2 * (size_t)n * sizeof(int));
            for (int k = 0; k < 2 * n; k++) {
                buf[k] = rank == 0 ? (k % 2 == 0 ? k * 3 + i : -1) : -7;
            }
            if (rank == 0) {
                MPI_Send(buf, n, vec, other, TAG_SZ, MPI_COMM_WORLD);
            } else {
                MPI_Recv(buf, n, vec, 0, TAG_SZ, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                int bad = -1;
                for (int k = 0; k < 2 * n && bad < 0; k++) {
                    int want = k % 2 == 0 ? k * 3 + i : -7;
                    bad      = buf[k] != want ? k : -1;
                }
                CHECK(bad < 0, "strided %d ints: element %d wrong", n, bad);
            }
            free(buf);
        }
        MPI_Type_free(&vec);
    }
}

/* Part order: every rank > 0 sends rank 0 a mixed sequence, rank 0 takes
 * them with ANY_SOURCE. */
static void part_order(void)
{
    enum { NMSG = 12 };
    size_t seq_sizes[4] = {64, E + 100, F + 4096, E - 8};

    if (rank != 0) {
        MPI_Request    reqs[NMSG];
        unsigned char *bufs[NMSG];
        for (int i = 0; i < NMSG; i++) {
            size_t n = seq_sizes[i % 4];
            bufs[i]  = malloc(n);
            mpitest_fill(bufs[i], n, seed(rank, 2, i));
            memcpy(bufs[i], &i, sizeof(i));
            MPI_Isend(bufs[i], (int)n, MPI_BYTE, 0, TAG_ORD, MPI_COMM_WORLD, &reqs[i]);
        }
        MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE);
        for (int i = 0; i < NMSG; i++) {
            free(bufs[i]);
        }
        return;
    }
    int           *next = calloc((size_t)size, sizeof(int));
    size_t         cap  = F + 4096;
    unsigned char *b    = malloc(cap);
    for (int m = 0; m < NMSG * (size - 1); m++) {
        MPI_Status st;
        int        cnt = -1, got = -1;
        if (m % 3 == 1) {
            usleep(500); /* some arrive unexpected */
        }
        MPI_Recv(b, (int)cap, MPI_BYTE, MPI_ANY_SOURCE, TAG_ORD, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        int src = st.MPI_SOURCE;
        CHECK(src > 0 && src < size, "ANY_SOURCE gave source %d", src);
        if (src <= 0 || src >= size) {
            continue;
        }
        memcpy(&got, b, sizeof(got));
        int    want = next[src]++;
        size_t n    = seq_sizes[want % 4];
        CHECK(got == want && cnt == (int)n, "from %d: got message %d (%d B), expected %d (%zu B)",
              src, got, cnt, want, n);
        if (got == want && cnt == (int)n) {
            unsigned char *exp = malloc(n);
            mpitest_fill(exp, n, seed(src, 2, want));
            memcpy(exp, &want, sizeof(want));
            CHECK(memcmp(exp, b, n) == 0, "from %d message %d: data differs", src, want);
            free(exp);
        }
    }
    for (int s = 1; s < size; s++) {
        CHECK(next[s] == NMSG, "from %d: %d of %d messages", s, next[s], NMSG);
    }
    free(next);
    free(b);
}

/* Part probe: probe, then mprobe + mrecv, of fragmented messages. */
static void part_probe(void)
{
    size_t n = F > E ? F - 3 : E + 3;

    if (rank == 1) {
        unsigned char *b = malloc(n);
        for (int i = 0; i < 2; i++) {
            mpitest_fill(b, n, seed(1, 3, i));
            MPI_Send(b, (int)n, MPI_BYTE, 0, TAG_PRB, MPI_COMM_WORLD);
        }
        free(b);
    } else if (rank == 0) {
        MPI_Status  st;
        MPI_Message msg;
        int         cnt = -1;
        unsigned char *b = malloc(n);
        MPI_Probe(1, TAG_PRB, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)n && st.MPI_SOURCE == 1, "probe: count %d (want %zu) source %d", cnt, n,
              st.MPI_SOURCE);
        for (int i = 0; i < 2; i++) {
            memset(b, 0, n);
            MPI_Mprobe(MPI_ANY_SOURCE, TAG_PRB, MPI_COMM_WORLD, &msg, &st);
            MPI_Get_count(&st, MPI_BYTE, &cnt);
            CHECK(cnt == (int)n, "mprobe %d: count %d (want %zu)", i, cnt, n);
            MPI_Mrecv(b, (int)n, MPI_BYTE, &msg, &st);
            long bad = mpitest_verify(b, n, seed(1, 3, i));
            CHECK(bad < 0, "mrecv %d: byte %ld wrong", i, bad);
        }
        free(b);
    }
}

/* Part trunc: messages above E into smaller buffers. */
static void part_trunc(void)
{
    size_t msgs[3] = {F > 2 * E ? F : 2 * E, E + 1, 2 * E + 7};
    size_t bufs[3] = {E + E / 2, E, 100};

    for (int i = 0; i < 3; i++) {
        if (rank == 1) {
            unsigned char *b = malloc(msgs[i]);
            mpitest_fill(b, msgs[i], seed(1, 4, i));
            MPI_Send(b, (int)msgs[i], MPI_BYTE, 0, TAG_TR, MPI_COMM_WORLD);
            free(b);
        } else if (rank == 0) {
            size_t         cap = bufs[i];
            unsigned char *b   = malloc(cap + 64);
            MPI_Status     st;
            memset(b, 0xEE, cap + 64);
            if (i == 1) {
                usleep(3000); /* unexpected */
            }
            CHECK_CLASS(MPI_Recv(b, (int)cap, MPI_BYTE, 1, TAG_TR, MPI_COMM_WORLD, &st),
                        MPI_ERR_TRUNCATE);
            long bad = mpitest_verify(b, cap, seed(1, 4, i));
            CHECK(bad < 0, "truncated %zu into %zu: byte %ld wrong", msgs[i], cap, bad);
            for (size_t k = cap; k < cap + 64; k++) {
                if (b[k] != 0xEE) {
                    CHECK(0, "truncated %zu into %zu: byte %zu beyond the buffer written",
                          msgs[i], cap, k);
                    break;
                }
            }
            free(b);
        }
    }
}

/* Part cancel: a receive nothing matches is cancelled; then the next one. */
static void part_cancel(void)
{
    size_t n = E + E / 2;

    if (rank == 0) {
        MPI_Request    r[2];
        MPI_Status     st;
        int            flag = 0;
        unsigned char *b    = malloc(n), *b2 = malloc(n);
        MPI_Irecv(b, (int)n, MPI_BYTE, 1, TAG_CAN + 100, MPI_COMM_WORLD, &r[0]);
        MPI_Irecv(b2, (int)n, MPI_BYTE, 1, TAG_CAN, MPI_COMM_WORLD, &r[1]);
        MPI_Cancel(&r[0]);
        MPI_Wait(&r[0], &st);
        MPI_Test_cancelled(&st, &flag);
        CHECK(flag, "receive not cancelled");
        MPI_Send(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD);
        MPI_Wait(&r[1], &st);
        long bad = mpitest_verify(b2, n, seed(1, 5, 0));
        CHECK(bad < 0, "after cancel: byte %ld wrong", bad);
        free(b);
        free(b2);
    } else if (rank == 1) {
        unsigned char *b = malloc(n);
        mpitest_fill(b, n, seed(1, 5, 0));
        MPI_Recv(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(b, (int)n, MPI_BYTE, 0, TAG_CAN, MPI_COMM_WORLD);
        free(b);
    }
}

/* Part ssend: does not complete before the match. */
static void part_ssend(void)
{
    size_t         n = E + 10;
    unsigned char *b = malloc(n);

    if (rank == 1) {
        MPI_Request r;
        int         flag = 0;
        mpitest_fill(b, n, seed(1, 6, 0));
        MPI_Issend(b, (int)n, MPI_BYTE, 0, TAG_SS, MPI_COMM_WORLD, &r);
        for (int k = 0; k < 50 && !flag; k++) {
            MPI_Test(&r, &flag, MPI_STATUS_IGNORE);
            usleep(2000);
        }
        CHECK(!flag, "Issend of %zu B completed before its receive was posted", n);
        MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_GO, MPI_COMM_WORLD);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else if (rank == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Recv(b, (int)n, MPI_BYTE, 1, TAG_SS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        long bad = mpitest_verify(b, n, seed(1, 6, 0));
        CHECK(bad < 0, "ssend: byte %ld wrong", bad);
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    E = env_size("WEFT_EAGER_THRESHOLD", E);
    F = env_size("WEFT_NET_FRAG_MAX", F);
    if (F < E) {
        F = E;
    }
    make_sizes();
    part_sizes();
    MPI_Barrier(MPI_COMM_WORLD);
    part_order();
    MPI_Barrier(MPI_COMM_WORLD);
    if (size >= 2) {
        part_probe();
        MPI_Barrier(MPI_COMM_WORLD);
        part_trunc();
        MPI_Barrier(MPI_COMM_WORLD);
        part_cancel();
        MPI_Barrier(MPI_COMM_WORLD);
        part_ssend();
    }
    return mpitest_finish();
}
