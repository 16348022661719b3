/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Broadcasts around and above the size from which a node moves data by one
 * CMA copy (Weft's node phase then lets every rank pull from the root's
 * buffer, src/coll/shm/shm_node.c): every root, sizes from 0 to 3 MiB,
 * a contiguous root with contiguous and strided receivers, back-to-back
 * calls with changing roots and sizes, a receiver with too little room
 * (MPI_ERR_TRUNCATE there, its buffer beyond count untouched, the others'
 * data intact), and the next broadcast still right. Every byte is checked.
 */
#include "mpitest.h"

static void one(int rank, int size, int root, long n, int strided, unsigned seed)
{
    /* strided receivers: every other int of a 2n-int buffer */
    int          *buf = malloc(sizeof(int) * (size_t)(2 * n + 1));
    MPI_Datatype  vec = MPI_DATATYPE_NULL, rtype = MPI_INT;
    long          cnt = n;

    for (long i = 0; i < 2 * n + 1; i++) {
        buf[i] = rank == root ? (int)(seed * 1000003u + (unsigned)i) : -7;
    }
    if (strided && rank != root && n > 0) {
        MPI_Type_vector((int)n, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        rtype = vec;
        cnt   = 1;
    }
    CHECK_OK(MPI_Bcast(buf, (int)cnt, rtype, root, MPI_COMM_WORLD));
    for (long i = 0; i < n; i++) {
        long at   = strided && rank != root ? 2 * i : i;
        int  want = (int)(seed * 1000003u + (unsigned)i);
        if (buf[at] != want) {
            CHECK(0, "root %d n %ld strided %d: int %ld is %d, want %d (np %d)", root, n, strided,
                  i, buf[at], want, size);
            break;
        }
        if (strided && rank != root && buf[at + 1] != -7) {
            CHECK(0, "root %d n %ld: gap int %ld written", root, n, at + 1);
            break;
        }
    }
    if (rank != root) {
        CHECK(buf[strided ? 2 * n : n] == -7, "root %d n %ld: int past the data written", root,
              n);
    }
    if (vec != MPI_DATATYPE_NULL) {
        MPI_Type_free(&vec);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int rank, size;
    /* ints: 0, 1, 4 KiB .. 3 MiB around the powers of two where thresholds fall */
    long sizes[] = {0, 1, 1024, 2047, 2048, 2049, 4096, 8191, 8192, 8193, 16384, 16385,
                    32768, 65536, 262144, 786432};
    int  nsizes  = (int)(sizeof(sizes) / sizeof(sizes[0]));

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    unsigned seed = 1;
    for (int s = 0; s < nsizes; s++) {
        for (int root = 0; root < size; root++) {
            one(rank, size, root, sizes[s], 0, seed++);
            one(rank, size, root, sizes[s], 1, seed++);
        }
    }
    /* back to back: roots and sizes change every call */
    for (int k = 0; k < 60; k++) {
        one(rank, size, (k * 7) % size, sizes[(k * 5) % nsizes], k % 3 == 0, seed++);
    }

    /* too little room on the last rank: it reports MPI_ERR_TRUNCATE, keeps
     * its buffer beyond count, and the others get everything */
    if (size > 1) {
        long n = 65536, room = rank == size - 1 ? n / 2 : n;
        int *buf = malloc(sizeof(int) * (size_t)(n + 1));
        for (long i = 0; i <= n; i++) {
            buf[i] = rank == 0 ? (int)i * 3 : -7;
        }
        int rc = MPI_Bcast(buf, (int)room, MPI_INT, 0, MPI_COMM_WORLD), cls;
        MPI_Error_class(rc, &cls);
        if (rank == size - 1) {
            CHECK(cls == MPI_ERR_TRUNCATE, "short receiver got class %d", cls);
            for (long i = 0; i < room; i++) {
                if (buf[i] != (int)i * 3) {
                    CHECK(0, "short receiver: int %ld is %d", i, buf[i]);
                    break;
                }
            }
            CHECK(buf[room] == -7, "short receiver: int %ld past its count written", room);
        } else {
            CHECK(cls == MPI_SUCCESS, "rank with room got class %d", cls);
            for (long i = 0; rank != 0 && i < n; i++) {
                if (buf[i] != (int)i * 3) {
                    CHECK(0, "int %ld is %d", i, buf[i]);
                    break;
                }
            }
        }
        free(buf);
        one(rank, size, size - 1, 65536, 0, seed++); /* and the next one is right */
    }
    return mpitest_finish();
}
