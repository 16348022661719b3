/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Barrier / MPI_Ibarrier latency.
 */
#include "wb_coll.h"

static void setup(wb_cx_t *x)
{
    x->sbytes = x->rbytes = 0;
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    return WB_COLL(MPI_Barrier, MPI_Ibarrier, x->comm);
}

static void fill(wb_cx_t *x, int it)
{
    (void)x;
    (void)it;
}

static int check(wb_cx_t *x, int it)
{
    (void)x;
    (void)it;
    return 1;
}

int main(int argc, char **argv)
{
    static const wb_coll_t d = {WB_NBSEL("barrier", "ibarrier"),
                                WB_NBSEL("MPI Barrier Latency Test", "MPI Non-blocking Barrier Latency Test"),
                                WB_NBSEL("MPI_Barrier", "MPI_Ibarrier"), WB_C_NOSIZE, setup, run, fill, check, WB_NB_FLAG};
    return wb_coll_main(argc, argv, &d);
}
