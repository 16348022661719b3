/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Many rendezvous messages in flight per pair (the 2-copy pipeline carries
 * them back to back, in the order the receiver answered them, issue 18):
 * every rank sends every other rank a batch of messages whose sizes
 * straddle the eager limit, the pipeline and the CMA threshold (the
 * manifest moves them), one of them a strided datatype, one a synchronous
 * zero-byte send and one truncated at the receiver. The receiver posts its
 * receives in another order than the sends (reverse, then interleaved), so
 * the answer order differs from the send order, and checks every byte, the
 * counts and the truncation error. With one rank the pairs are self-sends.
 */
#include "mpitest.h"

#include <stdint.h>

enum { NMSG = 11, ROUNDS = 3, TRUNC_IDX = 7, VEC_IDX = 9, ZERO_IDX = 10 };

/* bytes sent per message; the vector message sends VEC_BLOCKS blocks of
 * VEC_BLOCK ints out of every other block. Message 8 crosses the default
 * CMA threshold (8 MiB on the AMD VM) at 1-2 ranks; with more ranks it is
 * 1 MiB + 1 (memory), and the manifest lowers the threshold instead. */
static size_t sizes[NMSG] = {4095,   4097,   65535, 65536, 65537, 131077,
                             262145, 200000, 8388609, 0,   0};
#define VEC_BLOCKS 1024
#define VEC_BLOCK  48 /* ints: 192 KiB of data, stride 2 blocks */
#define TRUNC_KEEP 150000

static unsigned seed_of(int src, int dst, int round, int i)
{
    return (unsigned)(src * 1009 + dst * 131 + round * 17 + i);
}

/* The k-th message a rank handles: sends in index order; receives reversed
 * (rounds 0 and 1) or odd indices first (round 2). */
static int order(int post_recvs, int round, int k)
{
    if (!post_recvs) {
        return k;
    }
    if (round < 2) {
        return NMSG - 1 - k;
    }
    return k < NMSG / 2 ? 2 * k + 1 : 2 * (k - NMSG / 2);
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size > 2) {
        sizes[8] = 1048577;
    }

    MPI_Datatype vec;
    MPI_Type_vector(VEC_BLOCKS, VEC_BLOCK, 2 * VEC_BLOCK, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    const size_t vec_span = (size_t)VEC_BLOCKS * 2 * VEC_BLOCK * sizeof(int);

    int            npeer = size;
    size_t         per   = 0;
    for (int i = 0; i < NMSG; i++) {
        per += i == VEC_IDX ? vec_span : sizes[i];
    }
    unsigned char *sbuf = malloc(per * (size_t)npeer), *rbuf = malloc(per * (size_t)npeer);
    MPI_Request   *req  = malloc(sizeof(MPI_Request) * 2 * NMSG * (size_t)npeer);
    MPI_Status    *st   = malloc(sizeof(MPI_Status) * 2 * NMSG * (size_t)npeer);
    long          *want = malloc(sizeof(long) * 2 * NMSG * (size_t)npeer); /* recv count, -1 send */
    CHECK(sbuf && rbuf && req && st && want, "out of memory");

    for (int round = 0; round < ROUNDS && sbuf && rbuf && req && st && want; round++) {
        int nreq = 0;
        memset(rbuf, 0xee, per * (size_t)npeer);
        /* receives first for the odd rounds (matched at arrival), late for
         * the even ones (unexpected RTS, matched at the post) */
        for (int phase = 0; phase < 2; phase++) {
            int post_recvs = (phase == 0) == (round % 2 == 1);
            for (int p = 0; p < npeer; p++) {
                size_t at = per * (size_t)p;
                for (int k = 0; k < NMSG; k++) {
                    int    i   = order(post_recvs, round, k);
                    size_t off = 0;
                    for (int j = 0; j < i; j++) {
                        off += j == VEC_IDX ? vec_span : sizes[j];
                    }
                    if (post_recvs) {
                        unsigned char *b = rbuf + at + off;
                        if (i == VEC_IDX) {
                            want[nreq] = VEC_BLOCKS * VEC_BLOCK * (long)sizeof(int);
                            MPI_Irecv(b, 1, vec, p, i, MPI_COMM_WORLD, &req[nreq++]);
                        } else {
                            int cnt    = (int)(i == TRUNC_IDX ? TRUNC_KEEP : sizes[i]);
                            want[nreq] = i == TRUNC_IDX ? -2 : cnt;
                            MPI_Irecv(b, cnt, MPI_BYTE, p, i, MPI_COMM_WORLD, &req[nreq++]);
                        }
                    } else {
                        unsigned char *b = sbuf + at + off;
                        mpitest_fill(b, i == VEC_IDX ? vec_span : sizes[i],
                                     seed_of(rank, p, round, i));
                        want[nreq] = -1;
                        if (i == VEC_IDX) {
                            MPI_Isend(b, 1, vec, p, i, MPI_COMM_WORLD, &req[nreq++]);
                        } else if (i == ZERO_IDX) {
                            MPI_Issend(b, 0, MPI_BYTE, p, i, MPI_COMM_WORLD, &req[nreq++]);
                        } else {
                            MPI_Isend(b, (int)sizes[i], MPI_BYTE, p, i, MPI_COMM_WORLD,
                                      &req[nreq++]);
                        }
                    }
                }
            }
        }
        int rc = MPI_Waitall(nreq, req, st);
        CHECK(rc == MPI_ERR_IN_STATUS, "Waitall returned %d, expected MPI_ERR_IN_STATUS (a "
              "truncated receive per peer)", rc);
        /* every receive's count; the truncated one's error */
        for (int r = 0; r < nreq && rc == MPI_ERR_IN_STATUS; r++) {
            int cls = -1, cnt = -1;
            MPI_Error_class(st[r].MPI_ERROR, &cls);
            if (want[r] == -2) {
                CHECK(cls == MPI_ERR_TRUNCATE && st[r].MPI_TAG == TRUNC_IDX,
                      "round %d: truncated receive %d: class %d tag %d", round, r, cls,
                      st[r].MPI_TAG);
            } else if (want[r] >= 0) {
                MPI_Get_count(&st[r], MPI_BYTE, &cnt);
                CHECK(cls == MPI_SUCCESS && cnt == want[r], "round %d: receive %d (tag %d): "
                      "class %d, %d bytes, expected %ld", round, r, st[r].MPI_TAG, cls, cnt,
                      want[r]);
            } else {
                CHECK(cls == MPI_SUCCESS || st[r].MPI_ERROR == MPI_ERR_PENDING,
                      "round %d: send %d: class %d", round, r, cls);
            }
        }
        for (int p = 0; p < npeer; p++) {
            size_t off = per * (size_t)p;
            for (int i = 0; i < NMSG; i++) {
                unsigned       seed = seed_of(p, rank, round, i);
                unsigned char *b    = rbuf + off;
                if (i == VEC_IDX) {
                    /* the blocks land at their stride, the gaps untouched */
                    long bad = -1;
                    for (size_t blk = 0; blk < VEC_BLOCKS && bad < 0; blk++) {
                        size_t bo = blk * 2 * VEC_BLOCK * sizeof(int);
                        for (size_t x = 0; x < VEC_BLOCK * sizeof(int); x++) {
                            if (b[bo + x] != mpitest_byte(seed, bo + x)) {
                                bad = (long)(bo + x);
                                break;
                            }
                            if (b[bo + VEC_BLOCK * sizeof(int) + x] != 0xee) {
                                bad = (long)(bo + VEC_BLOCK * sizeof(int) + x);
                                break;
                            }
                        }
                    }
                    CHECK(bad < 0, "round %d: vector from %d wrong at byte %ld", round, p, bad);
                } else {
                    size_t n   = i == TRUNC_IDX ? TRUNC_KEEP : sizes[i];
                    long   bad = mpitest_verify(b, n, seed);
                    CHECK(bad < 0, "round %d: message %d (%zu bytes) from %d wrong at byte %ld",
                          round, i, sizes[i], p, bad);
                    if (i == TRUNC_IDX) {
                        CHECK(b[TRUNC_KEEP] == 0xee, "round %d: truncated receive from %d wrote "
                              "past its buffer", round, p);
                    }
                }
                off += i == VEC_IDX ? vec_span : sizes[i];
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Type_free(&vec);
    free(sbuf);
    free(rbuf);
    free(req);
    free(st);
    free(want);
    return mpitest_finish();
}
