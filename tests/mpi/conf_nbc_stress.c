/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 3: a mixed non-blocking collective stress. On MPI_COMM_WORLD
 * and two duplicates, each iteration starts several non-blocking
 * collectives per communicator (Ibarrier, Ibcast, Iallreduce, Ireduce,
 * Iallgather, Ialltoall, Igather, Iscatter, Iscan, Ireduce_scatter_block),
 * interleaved across the communicators, with sizes from a few bytes to
 * beyond the eager limit; then completes them with one MPI_Waitall or one
 * MPI_Wait each (alternating) and checks every result element by element.
 * Meant for 5-12 ranks (oversubscribed here). Args: [iterations]
 * [region]: with "region", a blocking barrier on each communicator first
 * makes its node region, so the calls take the region's poll steps (on one
 * node) instead of point-to-point schedules.
 */
#include "mpitest.h"

#define NCOMM 3
#define NOPS  10

typedef struct {
    int *s, *r;
    int  n; /* elements per block */
} bufs_t;

static int rank, size;

static int val(int it, int c, int op, int from, int i)
{
    return (it * 7 + c * 13 + op * 31 + from * 101 + i) % 100003;
}

int main(int argc, char **argv)
{
    int         iters = argc > 1 ? atoi(argv[1]) : 40;
    MPI_Comm    comms[NCOMM];
    MPI_Request reqs[NCOMM * NOPS];
    bufs_t      b[NCOMM][NOPS];

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    MPI_Comm_dup(comms[1], &comms[2]);
    if (argc > 2 && strcmp(argv[2], "region") == 0) {
        for (int c = 0; c < NCOMM; c++) {
            CHECK_OK(MPI_Barrier(comms[c]));
        }
    }

    for (int it = 0; it < iters; it++) {
        int n    = 1 + (it % 5) * ((it % 3) ? 7 : 1100); /* up to ~4400 ints per block */
        int root = it % size, nr = 0;
        for (int c = 0; c < NCOMM; c++) {
            for (int op = 0; op < NOPS; op++) {
                b[c][op].n = n;
                b[c][op].s = malloc(sizeof(int) * (size_t)n * size);
                b[c][op].r = malloc(sizeof(int) * (size_t)n * size);
                for (int k = 0; k < n * size; k++) {
                    b[c][op].s[k] = val(it, c, op, rank, k);
                    b[c][op].r[k] = -1;
                }
            }
        }
        /* start: op-major so the communicators interleave */
        for (int op = 0; op < NOPS; op++) {
            for (int c = 0; c < NCOMM; c++) {
                int *s = b[c][op].s, *r = b[c][op].r;
                MPI_Comm cm = comms[c];
                int rc = MPI_SUCCESS;
                switch ((op + it + c) % NOPS) {
                case 0: rc = MPI_Ibarrier(cm, &reqs[nr]); break;
                case 1: rc = MPI_Ibcast(rank == root ? s : r, n, MPI_INT, root, cm, &reqs[nr]); break;
                case 2: rc = MPI_Iallreduce(s, r, n, MPI_INT, MPI_SUM, cm, &reqs[nr]); break;
                case 3: rc = MPI_Ireduce(s, r, n, MPI_INT, MPI_SUM, root, cm, &reqs[nr]); break;
                case 4: rc = MPI_Iallgather(s, n, MPI_INT, r, n, MPI_INT, cm, &reqs[nr]); break;
                case 5: rc = MPI_Ialltoall(s, n, MPI_INT, r, n, MPI_INT, cm, &reqs[nr]); break;
                case 6: rc = MPI_Igather(s, n, MPI_INT, r, n, MPI_INT, root, cm, &reqs[nr]); break;
                case 7: rc = MPI_Iscatter(s, n, MPI_INT, r, n, MPI_INT, root, cm, &reqs[nr]); break;
                case 8: rc = MPI_Iscan(s, r, n, MPI_INT, MPI_SUM, cm, &reqs[nr]); break;
                case 9: rc = MPI_Ireduce_scatter_block(s, r, n, MPI_INT, MPI_SUM, cm, &reqs[nr]); break;
                }
                CHECK(rc == MPI_SUCCESS, "iteration %d comm %d op %d: start failed", it, c, op);
                nr++;
            }
        }
        if (it % 2) {
            CHECK_OK(MPI_Waitall(nr, reqs, MPI_STATUSES_IGNORE));
        } else {
            for (int k = nr - 1; k >= 0; k--) { /* reverse order */
                CHECK_OK(MPI_Wait(&reqs[k], MPI_STATUS_IGNORE));
            }
        }
        /* verify */
        for (int op = 0; op < NOPS; op++) {
            for (int c = 0; c < NCOMM; c++) {
                int *r = b[c][op].r, bad = -1, kind = (op + it + c) % NOPS;
                long want;
                for (int k = 0; k < n * size && bad < 0; k++) {
                    switch (kind) {
                    case 1:
                        if (rank != root && k < n && r[k] != val(it, c, op, root, k)) bad = k;
                        break;
                    case 2:
                        if (k < n) {
                            want = 0;
                            for (int p = 0; p < size; p++) want += val(it, c, op, p, k);
                            if (r[k] != (int)want) bad = k;
                        }
                        break;
                    case 3:
                        if (rank == root && k < n) {
                            want = 0;
                            for (int p = 0; p < size; p++) want += val(it, c, op, p, k);
                            if (r[k] != (int)want) bad = k;
                        }
                        break;
                    case 4:
                        if (r[k] != val(it, c, op, k / n, k % n)) bad = k;
                        break;
                    case 5:
                        if (r[k] != val(it, c, op, k / n, rank * n + k % n)) bad = k;
                        break;
                    case 6:
                        if (rank == root && r[k] != val(it, c, op, k / n, k % n)) bad = k;
                        break;
                    case 7:
                        if (k < n && r[k] != val(it, c, op, root, rank * n + k)) bad = k;
                        break;
                    case 8:
                        if (k < n) {
                            want = 0;
                            for (int p = 0; p <= rank; p++) want += val(it, c, op, p, k);
                            if (r[k] != (int)want) bad = k;
                        }
                        break;
                    case 9:
                        if (k < n) {
                            want = 0;
                            for (int p = 0; p < size; p++) want += val(it, c, op, p, rank * n + k);
                            if (r[k] != (int)want) bad = k;
                        }
                        break;
                    }
                }
                CHECK(bad < 0, "iteration %d comm %d kind %d: element %d wrong (%d)", it, c, kind,
                      bad, bad >= 0 ? r[bad] : 0);
                free(b[c][op].s);
                free(b[c][op].r);
            }
        }
        if (mpitest_errors) {
            break;
        }
    }
    MPI_Comm_free(&comms[2]);
    MPI_Comm_free(&comms[1]);
    return mpitest_finish();
}
