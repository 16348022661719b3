/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 8: MPI_Dims_create must make the dimensions "as close to each
 * other as possible" (72 in 2 dimensions is 9 x 8, not 12 x 6). Every
 * n <= 1000 and d <= 4 is compared with an exhaustive search over all
 * non-increasing factorizations: the result must be a factorization in
 * non-increasing order whose spread (largest - smallest) is the smallest
 * possible. Fixed (non-zero) entries are kept and the rest balanced. Bad
 * arguments get MPI_ERR_DIMS / MPI_ERR_ARG.
 */
#include "mpitest.h"

/* Smallest spread over every non-increasing factorization of n into d
 * factors (nested loops: independent of the library's search). */
static int best_spread(int n, int d)
{
    int best = -1;
    for (int a = n; a >= 1; a--) {
        if (n % a) {
            continue;
        }
        if (d == 1) {
            return 0;
        }
        for (int b = a; b >= 1; b--) {
            if ((n / a) % b) {
                continue;
            }
            if (d == 2) {
                if (a * b == n && (best < 0 || a - b < best)) {
                    best = a - b;
                }
                continue;
            }
            for (int c = b; c >= 1; c--) {
                if ((n / a / b) % c) {
                    continue;
                }
                if (d == 3) {
                    if (a * b * c == n && (best < 0 || a - c < best)) {
                        best = a - c;
                    }
                    continue;
                }
                int e = n / a / b / c;
                if (e <= c && a * b * c * e == n && (best < 0 || a - e < best)) {
                    best = a - e;
                }
            }
        }
    }
    return best;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* errors of no object */
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    {
        int dims[2] = {0, 0};
        CHECK_OK(MPI_Dims_create(72, 2, dims));
        CHECK(dims[0] == 9 && dims[1] == 8, "72 in 2 dims gave %d x %d, want 9 x 8", dims[0],
              dims[1]);
    }
    /* the exhaustive comparison, split over the ranks */
    for (int n = 1 + rank; n <= 1000; n += size) {
        for (int d = 1; d <= 4; d++) {
            int dims[4] = {0, 0, 0, 0}, prod = 1, ok = 1;
            CHECK_OK(MPI_Dims_create(n, d, dims));
            for (int i = 0; i < d; i++) {
                prod *= dims[i];
                if (dims[i] < 1 || (i > 0 && dims[i] > dims[i - 1])) {
                    ok = 0;
                }
            }
            if (!ok || prod != n || dims[0] - dims[d - 1] != best_spread(n, d)) {
                if (bad++ < 10) {
                    CHECK(0, "n=%d d=%d gave %d x %d x %d x %d (spread %d, best %d)", n, d,
                          dims[0], dims[1], dims[2], dims[3], dims[0] - dims[d - 1],
                          best_spread(n, d));
                }
            }
        }
    }
    CHECK(bad == 0, "%d (n, d) pairs not balanced", bad);
    {
        /* fixed entries kept, the free ones balanced and non-increasing */
        int dims[4] = {0, 3, 0, 0};
        CHECK_OK(MPI_Dims_create(3 * 64, 4, dims));
        CHECK(dims[1] == 3 && dims[0] == 4 && dims[2] == 4 && dims[3] == 4,
              "192 with dims[1]=3 gave %d %d %d %d", dims[0], dims[1], dims[2], dims[3]);
        int d2[3] = {0, 0, 0};
        CHECK_OK(MPI_Dims_create(1 << 30, 3, d2));
        CHECK(d2[0] == 1024 && d2[1] == 1024 && d2[2] == 1024, "2^30 in 3: %d %d %d", d2[0], d2[1],
              d2[2]);
        int d3[2] = {0, 0};
        CHECK_OK(MPI_Dims_create(2147483647, 2, d3)); /* a prime */
        CHECK(d3[0] == 2147483647 && d3[1] == 1, "prime: %d %d", d3[0], d3[1]);
    }
    {
        int dims[2] = {5, 0};
        CHECK_CLASS(MPI_Dims_create(72, 2, dims), MPI_ERR_DIMS); /* 5 does not divide 72 */
        int neg[2] = {-1, 0};
        CHECK_CLASS(MPI_Dims_create(72, 2, neg), MPI_ERR_DIMS);
        int full[2] = {6, 6};
        CHECK_CLASS(MPI_Dims_create(72, 2, full), MPI_ERR_DIMS);
    }
    return mpitest_finish();
}
