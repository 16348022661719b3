/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Allreduce / MPI_Iallreduce (MPI_SUM) latency: 'size' bytes per rank.
 */
#include "wb_coll.h"

#include <string.h>

static void setup(wb_cx_t *x)
{
    x->sbytes = x->rbytes = x->bytes;
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    const void *s = x->in_place ? MPI_IN_PLACE : x->sbuf;
    return WB_COLL(MPI_Allreduce, MPI_Iallreduce, s, x->rbuf, (int)x->count, x->dt, MPI_SUM, x->comm);
}

static void fill(wb_cx_t *x, int it)
{
    memset(x->rbuf, 0, x->bytes);
    wb_fill_typed(x->c, x->in_place ? x->rbuf : x->sbuf, x->count, x->rank, it);
}

static int check(wb_cx_t *x, int it)
{
    return !wb_verify_sum(x->c, x->rbuf, x->count, 0, 0, x->np, it, "allreduce result");
}

int main(int argc, char **argv)
{
    static const wb_coll_t d = {WB_NBSEL("allreduce", "iallreduce"),
                                WB_NBSEL("MPI Allreduce Latency Test", "MPI Non-blocking Allreduce Latency Test"),
                                WB_NBSEL("MPI_Allreduce", "MPI_Iallreduce"), WB_C_REDUCE | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
    return wb_coll_main(argc, argv, &d);
}
