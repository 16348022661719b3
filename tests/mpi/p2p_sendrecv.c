/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Sendrecv, Sendrecv_replace, Isendrecv, Isendrecv_replace: ring shifts by
 * every distance with eager and rendezvous sizes, verified; mixed send/recv
 * datatypes; MPI_PROC_NULL sources and destinations (a non-periodic chain:
 * status source MPI_PROC_NULL, tag MPI_ANY_TAG, count 0, buffer untouched).
 */
#include "mpitest.h"

static int rank, size;

static unsigned seed(int from, int k, int d, int v)
{
    return (unsigned)(from * 1000003 + k * 1009 + d * 31 + v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    size_t sizes[] = {0, 8, 16384, 16385, 200000, 1u << 20};
    int    ns = (int)(sizeof(sizes) / sizeof(sizes[0]));
    unsigned char *sb = malloc((1u << 20) + 16), *rb = malloc((1u << 20) + 16);

    for (int k = 0; k < ns; k++) {
        size_t n = sizes[k];
        for (int d = 1; d <= size; d++) { /* d == size: shift to self */
            int to = (rank + d) % size, from = (rank + size - d) % size;
            for (int v = 0; v < 4; v++) {
                MPI_Status  st;
                MPI_Request r;
                int         count = -1;
                memset(rb, 0xee, n + 16);
                switch (v) {
                case 0:
                    mpitest_fill(sb, n, seed(rank, k, d, v));
                    CHECK_OK(MPI_Sendrecv(sb, (int)n, MPI_BYTE, to, 70 + v, rb, (int)n + 16, MPI_BYTE, from, 70 + v,
                                          MPI_COMM_WORLD, &st));
                    break;
                case 1:
                    mpitest_fill(rb, n, seed(rank, k, d, v));
                    CHECK_OK(MPI_Sendrecv_replace(rb, (int)n, MPI_BYTE, to, 70 + v, from, 70 + v,
                                                  MPI_COMM_WORLD, &st));
                    break;
                case 2:
                    mpitest_fill(sb, n, seed(rank, k, d, v));
                    CHECK_OK(MPI_Isendrecv(sb, (int)n, MPI_BYTE, to, 70 + v, rb, (int)n + 16, MPI_BYTE, from, 70 + v,
                                           MPI_COMM_WORLD, &r));
                    CHECK_OK(MPI_Wait(&r, &st));
                    break;
                default:
                    mpitest_fill(rb, n, seed(rank, k, d, v));
                    CHECK_OK(MPI_Isendrecv_replace(rb, (int)n, MPI_BYTE, to, 70 + v, from, 70 + v,
                                                   MPI_COMM_WORLD, &r));
                    {
                        int flag = 0;
                        while (!flag) {
                            CHECK_OK(MPI_Test(&r, &flag, &st));
                        }
                    }
                    break;
                }
                MPI_Get_count(&st, MPI_BYTE, &count);
                CHECK(count == (int)n && st.MPI_SOURCE == from && st.MPI_TAG == 70 + v,
                      "variant %d size %zu shift %d: count %d source %d tag %d", v, n, d, count,
                      st.MPI_SOURCE, st.MPI_TAG);
                long bad = mpitest_verify(rb, n, seed(from, k, d, v));
                CHECK(bad < 0, "variant %d size %zu shift %d: first bad byte %ld", v, n, d, bad);
                if (v == 0 || v == 2) {
                    CHECK(rb[n] == 0xee, "variant %d size %zu: wrote past the message", v, n);
                }
            }
        }
    }

    /* mixed types: send n ints, receive 4n bytes */
    {
        int to = (rank + 1) % size, from = (rank + size - 1) % size, nint = 1000;
        int *iv = malloc(sizeof(int) * (size_t)nint);
        for (int i = 0; i < nint; i++) {
            iv[i] = rank * 100000 + i;
        }
        MPI_Status st;
        int        count = -1;
        CHECK_OK(MPI_Sendrecv(iv, nint, MPI_INT, to, 80, rb, nint * 4, MPI_BYTE, from, 80, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_BYTE, &count);
        int ok = count == nint * 4;
        for (int i = 0; ok && i < nint; i++) {
            int x;
            memcpy(&x, rb + 4 * i, 4);
            ok = x == from * 100000 + i;
        }
        CHECK(ok, "mixed-type Sendrecv: count %d", count);
        free(iv);
    }

    /* PROC_NULL chain: rank r sends to r+1 (last: PROC_NULL), receives from
     * r-1 (first: PROC_NULL) */
    {
        int to = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
        int from = rank > 0 ? rank - 1 : MPI_PROC_NULL;
        for (int v = 0; v < 4; v++) {
            MPI_Status  st;
            MPI_Request r;
            int         count = -1;
            int         val = rank * 10 + v, out = -12345;
            switch (v) {
            case 0: CHECK_OK(MPI_Sendrecv(&val, 1, MPI_INT, to, 90, &out, 1, MPI_INT, from, 90, MPI_COMM_WORLD, &st)); break;
            case 1:
                out = val;
                CHECK_OK(MPI_Sendrecv_replace(&out, 1, MPI_INT, to, 90, from, 90, MPI_COMM_WORLD, &st));
                break;
            case 2:
                CHECK_OK(MPI_Isendrecv(&val, 1, MPI_INT, to, 90, &out, 1, MPI_INT, from, 90, MPI_COMM_WORLD, &r));
                CHECK_OK(MPI_Wait(&r, &st));
                break;
            default:
                out = val;
                CHECK_OK(MPI_Isendrecv_replace(&out, 1, MPI_INT, to, 90, from, 90, MPI_COMM_WORLD, &r));
                CHECK_OK(MPI_Wait(&r, &st));
                break;
            }
            MPI_Get_count(&st, MPI_INT, &count);
            if (from == MPI_PROC_NULL) {
                CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0,
                      "PROC_NULL source variant %d: source %d tag %d count %d", v, st.MPI_SOURCE, st.MPI_TAG, count);
                int want = (v == 1 || v == 3) ? val : -12345;
                CHECK(out == want, "PROC_NULL source variant %d: buffer changed to %d", v, out);
            } else {
                CHECK(st.MPI_SOURCE == from && count == 1 && out == from * 10 + v,
                      "chain variant %d: source %d count %d value %d", v, st.MPI_SOURCE, count, out);
            }
        }
        /* both PROC_NULL */
        MPI_Status st;
        int        x = 5, y = 6, count = -1;
        CHECK_OK(MPI_Sendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 1, &y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        MPI_Get_count(&st, MPI_INT, &count);
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && count == 0 && y == 6,
              "Sendrecv(PROC_NULL, PROC_NULL): source %d tag %d count %d y %d", st.MPI_SOURCE, st.MPI_TAG, count, y);
        CHECK_OK(MPI_Send(&x, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&y, 1, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &st));
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && y == 6, "Recv(PROC_NULL)");
    }
    free(sb);
    free(rb);
    /* final ring token */
    int t = 0, u = 0;
    CHECK_OK(MPI_Sendrecv(&t, 1, MPI_INT, (rank + 1) % size, 99, &u, 1, MPI_INT, (rank + size - 1) % size, 99,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    return mpitest_finish();
}
