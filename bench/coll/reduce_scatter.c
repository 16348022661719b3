/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Reduce_scatter / MPI_Ireduce_scatter (MPI_SUM) latency. 'size' is
 * the input vector of each rank; rank r gets block r of the result, the
 * remainder spread over the first ranks. Built with -DWB_RSB for
 * MPI_Reduce_scatter_block (block = max(1, count / np) elements).
 */
#include "wb_coll.h"

#include <string.h>

static size_t total(const wb_cx_t *x)
{
#ifdef WB_RSB
    return (size_t)x->rcounts[0] * (size_t)x->np;
#else
    return x->count;
#endif
}

static void setup(wb_cx_t *x)
{
    int r;
    size_t per = x->count / (size_t)x->np;

    for (r = 0; r < x->np; r++) {
#ifdef WB_RSB
        x->rcounts[r] = per ? (int)per : 1;
        x->rdispls[r] = r * x->rcounts[r];
#else
        x->rcounts[r] = (int)per + ((size_t)r < x->count % (size_t)x->np);
        x->rdispls[r] = r ? x->rdispls[r - 1] + x->rcounts[r - 1] : 0;
#endif
    }
    x->sbytes = x->rbytes = total(x) * (size_t)x->dsize;
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    const void *s = x->in_place ? MPI_IN_PLACE : x->sbuf;
#ifdef WB_RSB
    return WB_COLL(MPI_Reduce_scatter_block, MPI_Ireduce_scatter_block, s, x->rbuf, x->rcounts[0],
                   x->dt, MPI_SUM, x->comm);
#else
    return WB_COLL(MPI_Reduce_scatter, MPI_Ireduce_scatter, s, x->rbuf, x->rcounts, x->dt, MPI_SUM,
                   x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    memset(x->rbuf, 0, x->rbytes);
    wb_fill_typed(x->c, x->in_place ? x->rbuf : x->sbuf, total(x), x->rank, it);
}

static int check(wb_cx_t *x, int it)
{
    return !wb_verify_sum(x->c, x->rbuf, (size_t)x->rcounts[x->rank], (size_t)x->rdispls[x->rank], 0,
                          x->np, it, "reduce_scatter block");
}

int main(int argc, char **argv)
{
#ifdef WB_RSB
    static const wb_coll_t d = {WB_NBSEL("reduce_scatter_block", "ireduce_scatter_block"),
                                WB_NBSEL("MPI Reduce_scatter_block Latency Test",
                                         "MPI Non-blocking Reduce_scatter_block Latency Test"),
                                WB_NBSEL("MPI_Reduce_scatter_block", "MPI_Ireduce_scatter_block"),
                                WB_C_REDUCE | WB_C_INPLACE, setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("reduce_scatter", "ireduce_scatter"),
                                WB_NBSEL("MPI Reduce_scatter Latency Test",
                                         "MPI Non-blocking Reduce_scatter Latency Test"),
                                WB_NBSEL("MPI_Reduce_scatter", "MPI_Ireduce_scatter"),
                                WB_C_REDUCE | WB_C_INPLACE, setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
