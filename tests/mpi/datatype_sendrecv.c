/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Derived datatypes on the wire: each rank sends to rank+1 and receives
 * from rank-1 with different layouts on the two sides (vector -> contiguous,
 * struct with holes -> struct, subarray -> vector), small and large (past
 * the eager limit, through the iov/CMA path), checks data byte for byte and
 * Get_count/Get_elements, and frees a type while a send using it is pending.
 */
#include <stdint.h>
#include "mpitest.h"

static int rank, size, right, left;

static void vector_to_contig(int n)
{
    MPI_Datatype v;
    double      *src = malloc(sizeof(double) * 2 * (size_t)n), *dst = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < 2 * n; i++) {
        src[i] = rank * 1e6 + i;
    }
    CHECK_OK(MPI_Type_vector(n, 1, 2, MPI_DOUBLE, &v));
    CHECK_OK(MPI_Type_commit(&v));
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(src, 1, v, right, 1, dst, n, MPI_DOUBLE, left, 1, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += dst[i] != left * 1e6 + 2 * i;
    }
    CHECK(bad == 0, "vector(%d) -> contiguous: %d wrong", n, bad);
    int c;
    CHECK_OK(MPI_Get_count(&st, MPI_DOUBLE, &c));
    CHECK(c == n, "count %d", c);
    /* and back: contiguous -> vector, holes untouched */
    for (int i = 0; i < 2 * n; i++) {
        src[i] = -1;
    }
    for (int i = 0; i < n; i++) {
        dst[i] = rank + i * 0.25;
    }
    CHECK_OK(MPI_Sendrecv(dst, n, MPI_DOUBLE, right, 2, src, 1, v, left, 2, MPI_COMM_WORLD, &st));
    bad = 0;
    for (int i = 0; i < 2 * n; i++) {
        bad += src[i] != (i % 2 ? -1 : left + (i / 2) * 0.25);
    }
    CHECK(bad == 0, "contiguous -> vector(%d): %d wrong", n, bad);
    CHECK_OK(MPI_Get_elements(&st, v, &c));
    CHECK(c == n, "elements %d", c);
    CHECK_OK(MPI_Type_free(&v));
    free(src);
    free(dst);
}

struct rec {
    char   tag;
    double val;
    int    idx[3];
};

static void structs(void)
{
    MPI_Datatype t;
    int          bl[3] = { 1, 1, 3 };
    MPI_Aint     d[3]  = { offsetof(struct rec, tag), offsetof(struct rec, val),
                           offsetof(struct rec, idx) };
    MPI_Datatype tys[3] = { MPI_CHAR, MPI_DOUBLE, MPI_INT };
    CHECK_OK(MPI_Type_create_struct(3, bl, d, tys, &t));
    CHECK_OK(MPI_Type_commit(&t));
    struct rec s[10], r[10];
    memset(s, 0x77, sizeof(s));
    memset(r, 0x55, sizeof(r));
    for (int i = 0; i < 10; i++) {
        s[i].tag = (char)('a' + i);
        s[i].val = rank + i / 8.0;
        for (int k = 0; k < 3; k++) {
            s[i].idx[k] = rank * 100 + i * 3 + k;
        }
    }
    MPI_Status st;
    CHECK_OK(MPI_Sendrecv(s, 10, t, right, 3, r, 10, t, left, 3, MPI_COMM_WORLD, &st));
    int bad = 0;
    for (int i = 0; i < 10; i++) {
        bad += r[i].tag != 'a' + i || r[i].val != left + i / 8.0;
        for (int k = 0; k < 3; k++) {
            bad += r[i].idx[k] != left * 100 + i * 3 + k;
        }
        /* the padding after tag was not written */
        bad += ((unsigned char *)&r[i])[1] != 0x55;
    }
    CHECK(bad == 0, "struct exchange: %d wrong", bad);
    int c;
    CHECK_OK(MPI_Get_elements(&st, t, &c));
    CHECK(c == 50, "struct elements %d", c);
    CHECK_OK(MPI_Type_free(&t));
}

static void subarray_to_vector(void)
{
    /* 6x8 ints, interior 4x6 block; received as vector(4, 6, 8) */
    int          sizes[2] = { 6, 8 }, sub[2] = { 4, 6 }, st0[2] = { 1, 1 };
    MPI_Datatype sa, v;
    CHECK_OK(MPI_Type_create_subarray(2, sizes, sub, st0, MPI_ORDER_C, MPI_INT, &sa));
    CHECK_OK(MPI_Type_commit(&sa));
    CHECK_OK(MPI_Type_vector(4, 6, 8, MPI_INT, &v));
    CHECK_OK(MPI_Type_commit(&v));
    int a[48], b[48];
    for (int i = 0; i < 48; i++) {
        a[i] = rank * 1000 + i;
        b[i] = -1;
    }
    CHECK_OK(MPI_Sendrecv(a, 1, sa, right, 4, b, 1, v, left, 4, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    int bad = 0;
    for (int r = 0; r < 4; r++) {
        for (int c = 0; c < 8; c++) {
            int want = c < 6 ? left * 1000 + (r + 1) * 8 + (c + 1) : -1;
            bad += b[r * 8 + c] != want;
        }
    }
    CHECK(bad == 0, "subarray -> vector: %d wrong", bad);
    CHECK_OK(MPI_Type_free(&sa));
    CHECK_OK(MPI_Type_free(&v));
}

static void free_while_pending(void)
{
    MPI_Datatype v;
    int          n = 1 << 16;
    int         *src = malloc(sizeof(int) * 3 * (size_t)n), *dst = malloc(sizeof(int) * (size_t)n);
    for (int i = 0; i < 3 * n; i++) {
        src[i] = i ^ rank;
    }
    CHECK_OK(MPI_Type_vector(n, 1, 3, MPI_INT, &v));
    CHECK_OK(MPI_Type_commit(&v));
    MPI_Request req[2];
    CHECK_OK(MPI_Irecv(dst, n, MPI_INT, left, 5, MPI_COMM_WORLD, &req[0]));
    CHECK_OK(MPI_Isend(src, 1, v, right, 5, MPI_COMM_WORLD, &req[1]));
    CHECK_OK(MPI_Type_free(&v)); /* the pending send keeps its own reference */
    CHECK_OK(MPI_Waitall(2, req, MPI_STATUSES_IGNORE));
    int bad = 0;
    for (int i = 0; i < n; i++) {
        bad += dst[i] != ((3 * i) ^ left);
    }
    CHECK(bad == 0, "send with a freed type: %d wrong", bad);
    free(src);
    free(dst);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left  = (rank + size - 1) % size;
    vector_to_contig(5);
    vector_to_contig(300000); /* 2.4 MB: rendezvous path */
    structs();
    subarray_to_vector();
    free_while_pending();
    return mpitest_finish();
}
