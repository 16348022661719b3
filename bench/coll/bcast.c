/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Bcast / MPI_Ibcast latency: 'size' bytes from the root to all.
 */
#include "wb_coll.h"

#include <string.h>

static void setup(wb_cx_t *x)
{
    x->sbytes = 0;
    x->rbytes = x->bytes;
}

static int run(wb_cx_t *x, MPI_Request *req)
{
    return WB_COLL(MPI_Bcast, MPI_Ibcast, x->rbuf, (int)x->count, x->dt, x->root, x->comm);
}

static void fill(wb_cx_t *x, int it)
{
    if (x->rank == x->root)
        wb_fill(x->rbuf, x->bytes, wb_seed(x->root, 0, it));
    else
        memset(x->rbuf, 0xee, x->bytes);
}

static int check(wb_cx_t *x, int it)
{
    return !wb_verify(x->c, x->rbuf, x->bytes, wb_seed(x->root, 0, it), "broadcast data");
}

int main(int argc, char **argv)
{
    static const wb_coll_t d = {WB_NBSEL("bcast", "ibcast"),
                                WB_NBSEL("MPI Broadcast Latency Test", "MPI Non-blocking Broadcast Latency Test"),
                                WB_NBSEL("MPI_Bcast", "MPI_Ibcast"), WB_C_ROOTED, setup, run, fill, check, WB_NB_FLAG};
    return wb_coll_main(argc, argv, &d);
}
