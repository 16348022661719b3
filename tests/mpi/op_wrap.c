/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Integer MPI_SUM / MPI_PROD that overflow wrap around (two's complement),
 * as every MPI library's C kernels do in practice, instead of being
 * undefined behaviour (the sanitizer build runs this too). Checked with
 * MPI_Reduce_local for several widths and with MPI_Allreduce across ranks.
 */
#include <limits.h>
#include <stdint.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    int in_i[2] = {INT_MAX, INT_MIN}, io_i[2] = {1, -1};
    CHECK_OK(MPI_Reduce_local(in_i, io_i, 2, MPI_INT, MPI_SUM));
    CHECK(io_i[0] == INT_MIN && io_i[1] == INT_MAX, "int sum wrap: %d %d", io_i[0], io_i[1]);

    int io_p[1] = {2}, in_p[1] = {INT_MAX};
    CHECK_OK(MPI_Reduce_local(in_p, io_p, 1, MPI_INT, MPI_PROD));
    CHECK(io_p[0] == -2, "int prod wrap: %d", io_p[0]);

    short in_s[1] = {SHRT_MAX}, io_s[1] = {SHRT_MAX};
    CHECK_OK(MPI_Reduce_local(in_s, io_s, 1, MPI_SHORT, MPI_PROD));
    CHECK(io_s[0] == 1, "short prod wrap: %d", io_s[0]); /* 32767^2 = 1 mod 2^16 */

    unsigned short in_us[1] = {65535}, io_us[1] = {65535};
    CHECK_OK(MPI_Reduce_local(in_us, io_us, 1, MPI_UNSIGNED_SHORT, MPI_PROD));
    CHECK(io_us[0] == 1, "unsigned short prod wrap: %u", io_us[0]);

    signed char in_c[1] = {127}, io_c[1] = {1};
    CHECK_OK(MPI_Reduce_local(in_c, io_c, 1, MPI_SIGNED_CHAR, MPI_SUM));
    CHECK(io_c[0] == -128, "signed char sum wrap: %d", io_c[0]);

    long long in_l[1] = {LLONG_MAX}, io_l[1] = {LLONG_MAX};
    CHECK_OK(MPI_Reduce_local(in_l, io_l, 1, MPI_LONG_LONG, MPI_SUM));
    CHECK(io_l[0] == -2, "long long sum wrap: %lld", io_l[0]);

    /* across ranks: every rank adds INT_MAX; the result is size*INT_MAX mod 2^32 */
    int v = INT_MAX, sum = 0;
    CHECK_OK(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    int want = (int)(uint32_t)((uint32_t)size * (uint32_t)INT_MAX);
    CHECK(sum == want, "allreduce wrap: %d, want %d", sum, want);
    return mpitest_finish();
}
