/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Scan / MPI_Iscan (MPI_SUM) latency; built with -DWB_EXSCAN for
 * MPI_Exscan / MPI_Iexscan.
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
#ifdef WB_EXSCAN
    return WB_COLL(MPI_Exscan, MPI_Iexscan, s, x->rbuf, (int)x->count, x->dt, MPI_SUM, x->comm);
#else
    return WB_COLL(MPI_Scan, MPI_Iscan, s, x->rbuf, (int)x->count, x->dt, MPI_SUM, x->comm);
#endif
}

static void fill(wb_cx_t *x, int it)
{
    memset(x->rbuf, 0, x->bytes);
    wb_fill_typed(x->c, x->in_place ? x->rbuf : x->sbuf, x->count, x->rank, it);
}

static int check(wb_cx_t *x, int it)
{
#ifdef WB_EXSCAN
    if (x->rank == 0) /* undefined on rank 0 */
        return 1;
    return !wb_verify_sum(x->c, x->rbuf, x->count, 0, 0, x->rank, it, "exscan result");
#else
    return !wb_verify_sum(x->c, x->rbuf, x->count, 0, 0, x->rank + 1, it, "scan result");
#endif
}

int main(int argc, char **argv)
{
#ifdef WB_EXSCAN
    static const wb_coll_t d = {WB_NBSEL("exscan", "iexscan"),
                                WB_NBSEL("MPI Exscan Latency Test", "MPI Non-blocking Exscan Latency Test"),
                                WB_NBSEL("MPI_Exscan", "MPI_Iexscan"), WB_C_REDUCE | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#else
    static const wb_coll_t d = {WB_NBSEL("scan", "iscan"),
                                WB_NBSEL("MPI Scan Latency Test", "MPI Non-blocking Scan Latency Test"),
                                WB_NBSEL("MPI_Scan", "MPI_Iscan"), WB_C_REDUCE | WB_C_INPLACE,
                                setup, run, fill, check, WB_NB_FLAG};
#endif
    return wb_coll_main(argc, argv, &d);
}
