/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Shared driver for the collective benchmarks. A benchmark file describes
 * one collective with four callbacks (wb_coll_t) and calls wb_coll_main().
 * The same file builds the blocking benchmark and, compiled with -DWB_NB,
 * the non-blocking one, which reports overlap the way OSU does:
 *   pure   = time of start + wait alone,
 *   compute= time of a busy loop sized to 'pure' run between start and wait,
 *   overall= time of start + compute + wait,
 *   overlap= 100 * (1 - (overall - compute) / pure), clamped to [0, 100].
 */
#ifndef WB_COLL_H
#define WB_COLL_H

#include "wb.h"

enum {
    WB_C_ROOTED = 1u << 0,  /* takes -r */
    WB_C_REDUCE = 1u << 1,  /* uses the reduction datatype and MPI_SUM */
    WB_C_INPLACE = 1u << 2, /* takes -I */
    WB_C_NOSIZE = 1u << 3   /* barrier: no message size */
};

typedef struct wb_cx {
    wb_ctx_t *c;
    MPI_Comm comm;
    int rank, np, root;
    int in_place;
    MPI_Datatype dt;
    int dsize;
    size_t count;  /* elements per block for the current size */
    size_t bytes;  /* count * dsize */
    size_t sbytes, rbytes; /* set by setup() */
    char *sbuf, *rbuf;
    int *scounts, *sdispls, *rcounts, *rdispls; /* np entries each */
} wb_cx_t;

typedef struct wb_coll {
    const char *name;
    const char *title;
    const char *mpi_name;
    unsigned flags;
    /* Set sbytes/rbytes (and the count arrays) for x->count. Also called
     * once with the largest count to size the buffers. */
    void (*setup)(wb_cx_t *x);
    /* Run (blocking) or start (non-blocking, into *req) the collective;
     * return the MPI return code. */
    int (*run)(wb_cx_t *x, MPI_Request *req);
    /* Fill the input and clear the output for validation iteration it. */
    void (*fill)(wb_cx_t *x, int it);
    /* Return 1 if this rank's output is correct for iteration it. */
    int (*check)(wb_cx_t *x, int it);
    int nb; /* WB_NB_FLAG: 1 in the non-blocking build of the file */
} wb_coll_t;

int wb_coll_main(int argc, char **argv, const wb_coll_t *d);

#ifdef WB_NB
#define WB_NBSEL(blocking, nonblocking) nonblocking
#define WB_COLL(blocking, nonblocking, ...) nonblocking(__VA_ARGS__, req)
#define WB_NB_FLAG 1
#else
#define WB_NBSEL(blocking, nonblocking) blocking
#define WB_COLL(blocking, nonblocking, ...) ((void)req, blocking(__VA_ARGS__))
#define WB_NB_FLAG 0
#endif

/* Block i (of x->bytes bytes) of a buffer. */
#define WB_BLOCK(x, buf, i) ((buf) + (size_t)(i) * (x)->bytes)

#endif
