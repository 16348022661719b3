/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Allgather / MPI_Iallgather latency ('size' bytes from each rank to
 * all); built with -DWB_V for MPI_Allgatherv / MPI_Iallgatherv.
 */
#include "wb_coll.h"

#include <string.h>

static void setup(wb_cx_t *x)
{
    int r;

    x->sbytes = x->bytes;
    x->rbytes = x->bytes * (size_t)x->np;
    for (r = 0; r < x->np; r++) {
        x->rcounts[r] = (int)x->count;
        x->rdispls[r] = r * (int)x->count;
    }
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    const void *s = x->in_place ? MPI_IN_PLACE : x->sbuf;
#ifdef WB_V
    return WB_COLL(MPI_Allgatherv, MPI_Iallgatherv, s, (int)x->count, x->dt, x->rbuf, x->rcounts,
                   x->rdispls, x->dt, x->comm);
#else
    return WB_COLL(MPI_Allgather, MPI_Iallgather, s, (int)x->count, x->dt, x->rbuf, (int)x->count,
                   x->dt, x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    memset(x->rbuf, 0xee, x->rbytes);
    wb_fill(x->in_place ? WB_BLOCK(x, x->rbuf, x->rank) : x->sbuf, x->bytes, wb_seed(x->rank, 0, it));
}

static int check(wb_cx_t *x, int it)
{
    int r, bad = 0;

    for (r = 0; r < x->np && !bad; r++)
        bad = wb_verify(x->c, WB_BLOCK(x, x->rbuf, r), x->bytes, wb_seed(r, 0, it), "gathered block");
    return !bad;
}

int main(int argc, char **argv)
{
#ifdef WB_V
    static const wb_coll_t d = {WB_NBSEL("allgatherv", "iallgatherv"),
                                WB_NBSEL("MPI Allgatherv Latency Test", "MPI Non-blocking Allgatherv Latency Test"),
                                WB_NBSEL("MPI_Allgatherv", "MPI_Iallgatherv"), WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("allgather", "iallgather"),
                                WB_NBSEL("MPI Allgather Latency Test", "MPI Non-blocking Allgather Latency Test"),
                                WB_NBSEL("MPI_Allgather", "MPI_Iallgather"), WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
