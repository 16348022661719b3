/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Alltoall / MPI_Ialltoall latency ('size' bytes between every pair);
 * built with -DWB_V for MPI_Alltoallv / MPI_Ialltoallv.
 */
#include "wb_coll.h"

#include <string.h>

static void setup(wb_cx_t *x)
{
    int r;

    x->sbytes = x->rbytes = x->bytes * (size_t)x->np;
    for (r = 0; r < x->np; r++) {
        x->scounts[r] = x->rcounts[r] = (int)x->count;
        x->sdispls[r] = x->rdispls[r] = r * (int)x->count;
    }
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    const void *s = x->in_place ? MPI_IN_PLACE : x->sbuf;
#ifdef WB_V
    return WB_COLL(MPI_Alltoallv, MPI_Ialltoallv, s, x->scounts, x->sdispls, x->dt, x->rbuf,
                   x->rcounts, x->rdispls, x->dt, x->comm);
#else
    return WB_COLL(MPI_Alltoall, MPI_Ialltoall, s, (int)x->count, x->dt, x->rbuf, (int)x->count,
                   x->dt, x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    int r;
    char *in = x->in_place ? x->rbuf : x->sbuf;

    memset(x->rbuf, 0xee, x->rbytes);
    for (r = 0; r < x->np; r++)
        wb_fill(WB_BLOCK(x, in, r), x->bytes, wb_seed(x->rank, r, it));
}

static int check(wb_cx_t *x, int it)
{
    int r, bad = 0;

    for (r = 0; r < x->np && !bad; r++)
        bad = wb_verify(x->c, WB_BLOCK(x, x->rbuf, r), x->bytes, wb_seed(r, x->rank, it),
                        "received block");
    return !bad;
}

int main(int argc, char **argv)
{
#ifdef WB_V
    static const wb_coll_t d = {WB_NBSEL("alltoallv", "ialltoallv"),
                                WB_NBSEL("MPI Alltoallv Latency Test", "MPI Non-blocking Alltoallv Latency Test"),
                                WB_NBSEL("MPI_Alltoallv", "MPI_Ialltoallv"), WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("alltoall", "ialltoall"),
                                WB_NBSEL("MPI Alltoall Latency Test", "MPI Non-blocking Alltoall Latency Test"),
                                WB_NBSEL("MPI_Alltoall", "MPI_Ialltoall"), WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
