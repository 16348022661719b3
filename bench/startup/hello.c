/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI "hello world": initialise, synchronise once, finalise. With -f every
 * rank reports its rank and host.
 */
#include "wb.h"

#include <stdio.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.iters = 1, .iters_large = 1};
    wb_ctx_t c;
    char host[256] = "";

    wb_init(&c, &argc, &argv, "hello", "MPI Hello World Test", 0, &d);
    WB(MPI_Barrier(c.comm));
    if (c.o.full) {
        gethostname(host, sizeof(host) - 1);
        printf("Hello from rank %d of %d on %s\n", c.rank, c.np, host);
        fflush(stdout);
        WB(MPI_Barrier(c.comm));
    }
    if (c.rank == 0) {
        printf("This is a test with %d processes\n", c.np);
        fflush(stdout);
    }
    return wb_finish(&c);
}
