/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Gather / MPI_Igather latency ('size' bytes from each rank to the
 * root); built with -DWB_V for MPI_Gatherv / MPI_Igatherv.
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
    const void *s = (x->in_place && x->rank == x->root) ? MPI_IN_PLACE : x->sbuf;
#ifdef WB_V
    return WB_COLL(MPI_Gatherv, MPI_Igatherv, s, (int)x->count, x->dt, x->rbuf, x->rcounts,
                   x->rdispls, x->dt, x->root, x->comm);
#else
    return WB_COLL(MPI_Gather, MPI_Igather, s, (int)x->count, x->dt, x->rbuf, (int)x->count, x->dt,
                   x->root, x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    memset(x->rbuf, 0xee, x->rbytes);
    if (x->in_place && x->rank == x->root)
        wb_fill(WB_BLOCK(x, x->rbuf, x->rank), x->bytes, wb_seed(x->rank, x->root, it));
    else
        wb_fill(x->sbuf, x->bytes, wb_seed(x->rank, x->root, it));
}

static int check(wb_cx_t *x, int it)
{
    int r, bad = 0;

    if (x->rank != x->root)
        return 1;
    for (r = 0; r < x->np && !bad; r++)
        bad = wb_verify(x->c, WB_BLOCK(x, x->rbuf, r), x->bytes, wb_seed(r, x->root, it),
                        "gathered block");
    return !bad;
}

int main(int argc, char **argv)
{
#ifdef WB_V
    static const wb_coll_t d = {WB_NBSEL("gatherv", "igatherv"),
                                WB_NBSEL("MPI Gatherv Latency Test", "MPI Non-blocking Gatherv Latency Test"),
                                WB_NBSEL("MPI_Gatherv", "MPI_Igatherv"), WB_C_ROOTED | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("gather", "igather"),
                                WB_NBSEL("MPI Gather Latency Test", "MPI Non-blocking Gather Latency Test"),
                                WB_NBSEL("MPI_Gather", "MPI_Igather"), WB_C_ROOTED | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
