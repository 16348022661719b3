/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One-sided latency: rank 0 issues one MPI_Put (or MPI_Get with -DWB_GET)
 * of 'size' bytes to rank 1 per synchronisation epoch (-s).
 */
#include "wb_rma.h"

#include <string.h>

#ifdef WB_GET
#define NAME "get_latency"
#define TITLE "MPI_Get Latency Test"
#define OP "MPI_Get"
#else
#define NAME "put_latency"
#define TITLE "MPI_Put Latency Test"
#define OP "MPI_Put"
#endif

static void op(wb_rma_t *w, char *buf, size_t size)
{
#ifdef WB_GET
    WB(MPI_Get(buf, (int)size, MPI_CHAR, w->peer, 0, (int)size, MPI_CHAR, w->win));
#else
    WB(MPI_Put(buf, (int)size, MPI_CHAR, w->peer, 0, (int)size, MPI_CHAR, w->win));
#endif
}

static int validate(wb_ctx_t *c, wb_rma_t *w, char *buf, size_t size)
{
    int origin = c->rank == 0, target = !origin, ok = 1, it;

    for (it = 0; it < 2; it++) {
#ifdef WB_GET
        if (target)
            wb_fill(w->base, size, wb_seed(1, 0, it));
        memset(buf, 0, size);
#else
        if (target)
            memset(w->base, 0, size);
        wb_fill(buf, size, wb_seed(0, 1, it));
#endif
        WB(MPI_Barrier(c->comm));
        wb_rma_open(w, origin, target);
        wb_rma_begin(w, origin, target);
        if (origin)
            op(w, buf, size);
        wb_rma_end(w, origin, target);
        wb_rma_close(w, origin, target);
        WB(MPI_Barrier(c->comm));
#ifdef WB_GET
        if (origin)
            ok &= !wb_verify(c, buf, size, wb_seed(1, 0, it), "data read by MPI_Get");
#else
        if (target)
            ok &= !wb_verify(c, w->base, size, wb_seed(0, 1, it), "target window after MPI_Put");
#endif
        WB(MPI_Barrier(c->comm));
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 1, .max_size = 4 << 20, .iters = 10000,
                                    .iters_large = 1000, .warmup = 1000, .warmup_large = 100,
                                    .sync = WB_SYNC_FLUSH};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
    wb_ctx_t c;
    wb_rma_t w;
    char *buf;
    size_t size;
    int origin, target;

    (void)OP;
    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_SIZES | WB_F_TWO | WB_F_RMA, &d);
    wb_columns(&c, 1, 1, m);
    origin = c.rank == 0;
    target = !origin;
    buf = wb_alloc(c.o.max_size);
    wb_rma_create(&w, &c, c.o.max_size);

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, lat;

        WB(MPI_Barrier(c.comm));
        wb_rma_open(&w, origin, target);
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            wb_rma_begin(&w, origin, target);
            if (origin)
                op(&w, buf, size);
            wb_rma_end(&w, origin, target);
        }
        lat = (wb_now() - t0) * 1e6 / n;
        wb_rma_close(&w, origin, target);
        WB(MPI_Barrier(c.comm));
        if (c.o.validate)
            valid = validate(&c, &w, buf, size);
        WB(MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, &lat, valid);
    }
    wb_rma_free(&w);
    wb_free(buf);
    return wb_finish(&c);
}
