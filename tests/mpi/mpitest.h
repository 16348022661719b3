/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Tiny helpers for MPI test programs (they include only <mpi.h>, so the same
 * binaries run on any MPI-5 ABI library). A failed check prints where and
 * why; mpitest_finish() makes the rank exit non-zero if anything failed and
 * rank 0 print "No Errors" otherwise.
 */
#ifndef WEFT_MPITEST_H
#define WEFT_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int mpitest_errors;

#define CHECK(_cond, ...)                                                                    \
    do {                                                                                     \
        if (!(_cond)) {                                                                      \
            int _r = -1;                                                                     \
            MPI_Comm_rank(MPI_COMM_WORLD, &_r);                                              \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", _r, __FILE__, __LINE__, #_cond);     \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
            mpitest_errors++;                                                                \
        }                                                                                    \
    } while (0)

/* Check an MPI call's error class. */
#define CHECK_CLASS(_call, _want)                                                            \
    do {                                                                                     \
        int _rc = (_call), _cls = -1;                                                        \
        MPI_Error_class(_rc, &_cls);                                                         \
        CHECK(_cls == (_want), "%s returned class %d, expected %d (%s)", #_call, _cls,       \
              (int)(_want), #_want);                                                         \
    } while (0)

#define CHECK_OK(_call) CHECK_CLASS(_call, MPI_SUCCESS)

/* Deterministic byte pattern of message `seed` at offset i. */
static inline unsigned char mpitest_byte(unsigned seed, size_t i)
{
    return (unsigned char)((i * 131u + seed * 17u + (i >> 8)) & 0xffu);
}

static inline void mpitest_fill(void *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        ((unsigned char *)buf)[i] = mpitest_byte(seed, i);
    }
}

/* Returns the first mismatching offset, or -1. */
static inline long mpitest_verify(const void *buf, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        if (((const unsigned char *)buf)[i] != mpitest_byte(seed, i)) {
            return (long)i;
        }
    }
    return -1;
}

/* Seconds on the monotonic clock (deadlines, timings outside MPI). */
static inline double mpitest_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int mpitest_finish(void)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (mpitest_errors == 0 && rank == 0) {
        printf("No Errors\n");
    }
    fflush(stdout);
    MPI_Finalize();
    return mpitest_errors ? 1 : 0;
}

#endif
