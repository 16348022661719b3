/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Time spent in MPI_Init on every rank (min / max / avg, milliseconds).
 */
#include "wb.h"

#include <stdio.h>

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.iters = 1, .iters_large = 1};
    static const wb_metric_t m[] = {{"avg_ms", "Avg (ms)", 0}, {"min_ms", "Min (ms)", 0},
                                    {"max_ms", "Max (ms)", 0}};
    wb_ctx_t c;
    double v[3];

    wb_init(&c, &argc, &argv, "init", "MPI Init Test", 0, &d);
    wb_columns(&c, 0, 3, m);
    wb_stats(&c, c.init_seconds * 1e3, &v[0], &v[1], &v[2]);
    if (c.rank == 0) {
        printf("nprocs: %d, min: %.2f ms, max: %.2f ms, avg: %.2f ms\n", c.np, v[1], v[2], v[0]);
        fflush(stdout);
    }
    c.no_table = 1;
    wb_record(&c, -1, v, -1);
    return wb_finish(&c);
}
