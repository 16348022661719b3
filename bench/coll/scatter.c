/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Scatter / MPI_Iscatter latency ('size' bytes from the root to each
 * rank); built with -DWB_V for MPI_Scatterv / MPI_Iscatterv.
 */
#include "wb_coll.h"

#include <string.h>

static void setup(wb_cx_t *x)
{
    int r;

    x->sbytes = x->bytes * (size_t)x->np;
    x->rbytes = x->bytes;
    for (r = 0; r < x->np; r++) {
        x->scounts[r] = (int)x->count;
        x->sdispls[r] = r * (int)x->count;
    }
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    void *r = (x->in_place && x->rank == x->root) ? MPI_IN_PLACE : x->rbuf;
#ifdef WB_V
    return WB_COLL(MPI_Scatterv, MPI_Iscatterv, x->sbuf, x->scounts, x->sdispls, x->dt, r,
                   (int)x->count, x->dt, x->root, x->comm);
#else
    return WB_COLL(MPI_Scatter, MPI_Iscatter, x->sbuf, (int)x->count, x->dt, r, (int)x->count, x->dt,
                   x->root, x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    int r;

    memset(x->rbuf, 0xee, x->rbytes);
    if (x->rank == x->root)
        for (r = 0; r < x->np; r++)
            wb_fill(WB_BLOCK(x, x->sbuf, r), x->bytes, wb_seed(x->root, r, it));
}

static int check(wb_cx_t *x, int it)
{
    if (x->in_place && x->rank == x->root)
        return !wb_verify(x->c, WB_BLOCK(x, x->sbuf, x->rank), x->bytes, wb_seed(x->root, x->rank, it),
                          "root block (in place)");
    return !wb_verify(x->c, x->rbuf, x->bytes, wb_seed(x->root, x->rank, it), "scattered block");
}

int main(int argc, char **argv)
{
#ifdef WB_V
    static const wb_coll_t d = {WB_NBSEL("scatterv", "iscatterv"),
                                WB_NBSEL("MPI Scatterv Latency Test", "MPI Non-blocking Scatterv Latency Test"),
                                WB_NBSEL("MPI_Scatterv", "MPI_Iscatterv"), WB_C_ROOTED | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("scatter", "iscatter"),
                                WB_NBSEL("MPI Scatter Latency Test", "MPI Non-blocking Scatter Latency Test"),
                                WB_NBSEL("MPI_Scatter", "MPI_Iscatter"), WB_C_ROOTED | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
