/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Gatherv, scatterv, allgatherv and alltoallv with blocks of very different sizes on
 * one communicator, back to back with no barrier: every rank's block moves
 * each call between empty, a line (up to 56 bytes), a small area (up to
 * 512), one 16 KiB slot, a few slots, and more pieces than the region has
 * slots (gatherv's longer blocks go through their writer's slots outside
 * the rounds, and only the root knows which ranks have them), the root
 * moves, and a bcast and an allgather that also use the slots run between
 * them; alltoallv's per-pair blocks switch between the same sizes (its
 * longer calls leave the region for point-to-point after the first
 * round). Every element the root (or every rank) receives is compared with
 * its sender's pattern, and the guard element after each block must stay
 * untouched. Run with the shipped rules and with the shared-memory forms
 * forced; the sizes repeat with a strided datatype.
 * args: [calls] (default 60).
 */
#include "mpitest.h"

#define GUARD (-7)

static int rank, size;

/* Rank r's block size (ints) in call c: spread over the region's forms. */
static int block_ints(int r, int c)
{
    static const int sizes[] = {0, 1, 14, 15, 128, 129, 4096, 4097, 12000, 40000, 70000, 3};
    const int        n       = (int)(sizeof(sizes) / sizeof(sizes[0]));
    return sizes[(r * 5 + c * 7) % n];
}

static int val(int r, long i, int c)
{
    return (int)(((r + 1) * 7919 + i * 31 + c * 1009) & 0x7fffff);
}

int main(int argc, char **argv)
{
    int calls = argc > 1 ? atoi(argv[1]) : 60;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    MPI_Datatype one, strided; /* every other int: packing and unpacking at offsets */
    MPI_Type_vector(1, 1, 2, MPI_INT, &one);
    MPI_Type_create_resized(one, 0, 2 * sizeof(int), &strided);
    MPI_Type_free(&one);
    MPI_Type_commit(&strided);

    int  *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    long  cap    = 0;
    for (int q = 0; q < size; q++) {
        long most = 0;
        for (int c = 0; c < calls; c++) {
            most = block_ints(q, c) > most ? block_ints(q, c) : most;
        }
        cap += most + 1;
    }
    /* twice the ints: the strided type uses every other one */
    int *sbuf = malloc(2 * 70001 * sizeof(int)), *rbuf = malloc(2 * cap * sizeof(int));
    int *big  = malloc(2 * cap * sizeof(int));
    int  bc[300];

    for (int c = 0; c < calls; c++) {
        int          strided_call = c % 3 == 2, step = strided_call ? 2 : 1, root = c % size;
        MPI_Datatype dt  = strided_call ? strided : MPI_INT;
        int          mine = block_ints(rank, c);
        long         at   = 0;
        for (int q = 0; q < size; q++) {
            counts[q] = block_ints(q, c);
            displs[q] = (int)at;
            at += counts[q] + 1; /* one guard element after each block */
        }
        for (long i = 0; i < 2 * at; i++) {
            rbuf[i] = GUARD;
        }
        for (int i = 0; i < mine; i++) {
            sbuf[(long)i * step] = val(rank, i, c);
        }

        /* gatherv */
        CHECK_OK(MPI_Gatherv(sbuf, mine, dt, rbuf, counts, displs, dt, root, MPI_COMM_WORLD));
        if (rank == root) {
            for (int q = 0; q < size; q++) {
                for (long i = 0; i <= counts[q]; i++) {
                    int want = i < counts[q] ? val(q, i, c) : GUARD;
                    int got  = rbuf[(displs[q] + i) * step];
                    if (got != want) {
                        CHECK(0, "call %d gatherv root %d: rank %d's int %ld of %d is %d, not %d",
                              c, root, q, i, counts[q], got, want);
                        break;
                    }
                }
            }
        }

        /* a bcast and an allgather through the same slots in between */
        for (int i = 0; i < 300; i++) {
            bc[i] = rank == root ? c * 300 + i : -1;
        }
        CHECK_OK(MPI_Bcast(bc, 300, MPI_INT, root, MPI_COMM_WORLD));
        CHECK(bc[299] == c * 300 + 299 && bc[0] == c * 300, "call %d bcast", c);
        int four[4096];
        for (int i = 0; i < 4096; i++) {
            four[i] = rank * 4096 + i + c;
        }
        int *all = malloc((size_t)size * 4096 * sizeof(int));
        CHECK_OK(MPI_Allgather(four, 4096, MPI_INT, all, 4096, MPI_INT, MPI_COMM_WORLD));
        for (long i = 0; i < (long)size * 4096; i++) {
            if (all[i] != (int)i + c) {
                CHECK(0, "call %d allgather int %ld: %d", c, i, all[i]);
                break;
            }
        }
        free(all);

        /* scatterv of the same layout from the root's gathered buffer back */
        if (rank == root) {
            for (int q = 0; q < size; q++) {
                for (long i = 0; i < counts[q]; i++) {
                    rbuf[(displs[q] + i) * step] = val(q, i, c) ^ 0x55;
                }
            }
        }
        for (int i = 0; i <= mine; i++) {
            sbuf[(long)i * step] = GUARD;
        }
        CHECK_OK(MPI_Scatterv(rbuf, counts, displs, dt, sbuf, mine, dt, root, MPI_COMM_WORLD));
        for (int i = 0; i <= mine; i++) {
            int want = i < mine ? (val(rank, i, c) ^ 0x55) : GUARD;
            if (sbuf[(long)i * step] != want) {
                CHECK(0, "call %d scatterv root %d: int %d of %d is %d, not %d", c, root, i, mine,
                      sbuf[(long)i * step], want);
                break;
            }
        }

        /* allgatherv: every rank gets every block */
        for (int i = 0; i < mine; i++) {
            sbuf[(long)i * step] = val(rank, i, c + 1);
        }
        for (long i = 0; i < 2 * at; i++) {
            big[i] = GUARD;
        }
        CHECK_OK(MPI_Allgatherv(sbuf, mine, dt, big, counts, displs, dt, MPI_COMM_WORLD));
        for (int q = 0; q < size; q++) {
            for (long i = 0; i <= counts[q]; i++) {
                int want = i < counts[q] ? val(q, i, c + 1) : GUARD;
                if (big[(displs[q] + i) * step] != want) {
                    CHECK(0, "call %d allgatherv: rank %d's int %ld of %d is %d, not %d", c, q, i,
                          counts[q], big[(displs[q] + i) * step], want);
                    break;
                }
            }
        }

        /* alltoallv: the block from s to d has block_ints(s + d, c) / 8 ints,
         * and in every fourth call at most 1000 (inside the region, over two rounds at np 8) */
        {
            int  *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
            int  *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
            long  st = 0, rt = 0;
            for (int q = 0; q < size; q++) {
                sc[q] = block_ints(rank + q, c) / 8, rc[q] = block_ints(q + rank, c) / 8;
                if (c % 4 == 3) {
                    sc[q] %= 1001, rc[q] %= 1001;
                }
                sd[q] = (int)st, rd[q] = (int)rt;
                st += sc[q] + 1, rt += rc[q] + 1;
            }
            int *sa = malloc(2 * (st + 1) * sizeof(int)), *ra = malloc(2 * (rt + 1) * sizeof(int));
            for (int q = 0; q < size; q++) {
                for (int i = 0; i < sc[q]; i++) {
                    sa[(sd[q] + (long)i) * step] = val(rank * size + q, i, c);
                }
            }
            for (long i = 0; i < 2 * (rt + 1); i++) {
                ra[i] = GUARD;
            }
            CHECK_OK(MPI_Alltoallv(sa, sc, sd, dt, ra, rc, rd, dt, MPI_COMM_WORLD));
            for (int q = 0; q < size; q++) {
                for (long i = 0; i <= rc[q]; i++) {
                    int want = i < rc[q] ? val(q * size + rank, i, c) : GUARD;
                    if (ra[(rd[q] + i) * step] != want) {
                        CHECK(0, "call %d alltoallv: rank %d's int %ld of %d is %d, not %d", c, q,
                              i, rc[q], ra[(rd[q] + i) * step], want);
                        break;
                    }
                }
            }
            free(sa), free(ra), free(sc), free(sd), free(rc), free(rd);
        }
    }

    MPI_Type_free(&strided);
    free(sbuf);
    free(rbuf);
    free(big);
    free(counts);
    free(displs);
    return mpitest_finish();
}
