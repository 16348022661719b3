/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Rooted reductions of 4-96 KiB on one node, across the node region's
 * switch from "every rank reads every contribution" (4 KiB) to rounds of
 * 16 KiB slots in which each rank reduces its 1/n, back to back with no
 * barrier:
 *  - a non-commutative user op (composition of affine maps x -> m x + k)
 *    on a 12-byte type, whose slots do not end on an element's end, gives
 *    the rank-ordered result, sizes on both sides of every slot count, the
 *    root moving every call;
 *  - reduces interleaved with gathers and bcasts of slot-sized blocks,
 *    which write the same slots in the next rounds;
 *  - MPI_SUM on ints against a local reference.
 * (It caught the missing slot-reuse rule of a one-round form tried in the
 * nineteenth session: docs/performance.md "A rooted reduce in one round".)
 * args: [calls per size] (default 6).
 */
#include "mpitest.h"

typedef struct {
    unsigned m, k, tag;
} affine_t;

static int rank, size;

/* inout = in o inout (apply inout first, then in): ordered by rank. */
static void compose(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    const affine_t *a = in;
    affine_t       *b = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        affine_t c = {a[i].m * b[i].m, a[i].m * b[i].k + a[i].k, a[i].tag ^ b[i].tag};
        b[i]       = c;
    }
}

static affine_t contribution(int r, long i, int call)
{
    affine_t x = {(unsigned)(2 * (r + i + call) + 1), (unsigned)(r * 31 + i * 7 + call),
                  (unsigned)(r << (i % 20))};
    return x;
}

/* c0 o c1 o ... o c(n-1), as MPI orders the operands of a reduction. */
static affine_t expected(long i, int call)
{
    affine_t acc = contribution(size - 1, i, call);
    for (int r = size - 2; r >= 0; r--) {
        affine_t a = contribution(r, i, call);
        affine_t c = {a.m * acc.m, a.m * acc.k + a.k, a.tag ^ acc.tag};
        acc        = c;
    }
    return acc;
}

int main(int argc, char **argv)
{
    /* bytes: below / at / above the all-ranks limit (4 KiB), and on both
     * sides of one to six slots (16 KiB each) */
    static const long bytes[] = {4092, 4104, 16380, 16392, 32772, 49152, 49164, 65532, 65544, 98304};
    int               calls   = argc > 1 ? atoi(argv[1]) : 6;
    int               call    = 0;
    MPI_Datatype      aff;
    MPI_Op            op;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_contiguous(3, MPI_UNSIGNED, &aff);
    MPI_Type_commit(&aff);
    MPI_Op_create(compose, 0, &op);

    long      maxn = 98304 / 4 + 16;
    affine_t *in = malloc((size_t)maxn * sizeof(affine_t)), *out = malloc((size_t)maxn * sizeof(affine_t));
    int      *ia = malloc((size_t)maxn * sizeof(int)), *ib = malloc((size_t)maxn * sizeof(int));
    int      *blk = malloc(16384), *all = malloc((size_t)size * 16384);

    for (size_t s = 0; s < sizeof(bytes) / sizeof(bytes[0]); s++) {
        for (int c = 0; c < calls; c++, call++) {
            int  root = (call * 3 + 1) % size;
            long n    = bytes[s] / (long)sizeof(affine_t);

            /* user op on the 12-byte type */
            for (long i = 0; i < n; i++) {
                in[i] = contribution(rank, i, call);
            }
            memset(out, 0xee, (size_t)(n + 1) * sizeof(affine_t));
            CHECK_OK(MPI_Reduce(in, out, (int)n, aff, op, root, MPI_COMM_WORLD));
            if (rank == root) {
                for (long i = 0; i < n; i++) {
                    affine_t e = expected(i, call);
                    if (out[i].m != e.m || out[i].k != e.k || out[i].tag != e.tag) {
                        CHECK(0, "user op, %ld elements, root %d, call %d: element %ld is "
                                 "(%u,%u,%u), expected (%u,%u,%u)",
                              n, root, call, i, out[i].m, out[i].k, out[i].tag, e.m, e.k, e.tag);
                        break;
                    }
                }
                CHECK(out[n].m == 0xeeeeeeeeu, "user op, %ld elements: written past the end", n);
            }

            /* a gather of 16 KiB blocks: writes the slots of the next round */
            for (int i = 0; i < 4096; i++) {
                blk[i] = rank * 100000 + i + call;
            }
            CHECK_OK(MPI_Gather(blk, 4096, MPI_INT, all, 4096, MPI_INT, (root + 1) % size,
                                MPI_COMM_WORLD));
            if (rank == (root + 1) % size) {
                for (int r = 0; r < size; r++) {
                    for (int i = 0; i < 4096; i++) {
                        if (all[r * 4096 + i] != r * 100000 + i + call) {
                            CHECK(0, "gather after reduce, call %d: rank %d int %d is %d", call, r,
                                  i, all[r * 4096 + i]);
                            r = size;
                            break;
                        }
                    }
                }
            }

            /* MPI_SUM on ints of the same size, the next root */
            long ni = bytes[s] / 4;
            for (long i = 0; i < ni; i++) {
                ia[i] = (int)(rank * 1009 + i * 3 + call);
            }
            CHECK_OK(MPI_Reduce(ia, ib, (int)ni, MPI_INT, MPI_SUM, (root + 2) % size,
                                MPI_COMM_WORLD));
            if (rank == (root + 2) % size) {
                for (long i = 0; i < ni; i++) {
                    int want = (int)(1009 * (size * (size - 1) / 2) + size * (i * 3 + call));
                    if (ib[i] != want) {
                        CHECK(0, "sum of %ld ints, call %d: int %ld is %d, expected %d", ni, call,
                              i, ib[i], want);
                        break;
                    }
                }
            }

            /* a bcast of 20 KiB (two rounds of slots) from yet another root */
            int bn = 5120, broot = (root + 3) % size;
            for (int i = 0; i < bn; i++) {
                ia[i] = rank == broot ? i * 5 + call : -1;
            }
            CHECK_OK(MPI_Bcast(ia, bn, MPI_INT, broot, MPI_COMM_WORLD));
            for (int i = 0; i < bn; i++) {
                if (ia[i] != i * 5 + call) {
                    CHECK(0, "bcast after reduce, call %d: int %d is %d", call, i, ia[i]);
                    break;
                }
            }
        }
    }
    MPI_Op_free(&op);
    MPI_Type_free(&aff);
    free(in);
    free(out);
    free(ia);
    free(ib);
    free(blk);
    free(all);
    return mpitest_finish();
}
