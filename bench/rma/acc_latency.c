/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Accumulate (MPI_SUM) latency from rank 0 to rank 1, one operation
 * per epoch; -DWB_GETACC measures MPI_Get_accumulate instead.
 */
#include "wb_rma.h"

#include <string.h>

#ifdef WB_GETACC
#define NAME "get_acc_latency"
#define TITLE "MPI_Get_accumulate Latency Test"
#else
#define NAME "acc_latency"
#define TITLE "MPI_Accumulate Latency Test"
#endif

static void op(wb_ctx_t *c, wb_rma_t *w, char *buf, char *res, size_t count)
{
#ifdef WB_GETACC
    WB(MPI_Get_accumulate(buf, (int)count, c->o.rtype, res, (int)count, c->o.rtype, w->peer, 0,
                          (int)count, c->o.rtype, MPI_SUM, w->win));
#else
    (void)res;
    WB(MPI_Accumulate(buf, (int)count, c->o.rtype, w->peer, 0, (int)count, c->o.rtype, MPI_SUM,
                      w->win));
#endif
}

static int validate(wb_ctx_t *c, wb_rma_t *w, char *buf, char *res, size_t count)
{
    int origin = c->rank == 0, target = !origin, ok = 1, it;

    for (it = 0; it < 2; it++) {
        if (target)
            wb_fill_typed(c, w->base, count, 1, it);
        wb_fill_typed(c, buf, count, 0, it);
        memset(res, 0, count * (size_t)c->o.dsize);
        WB(MPI_Barrier(c->comm));
        wb_rma_open(w, origin, target);
        wb_rma_begin(w, origin, target);
        if (origin)
            op(c, w, buf, res, count);
        wb_rma_end(w, origin, target);
        wb_rma_close(w, origin, target);
        WB(MPI_Barrier(c->comm));
        if (target)
            ok &= !wb_verify_sum(c, w->base, count, 0, 0, 2, it, "target window after accumulate");
#ifdef WB_GETACC
        if (origin)
            ok &= !wb_verify_sum(c, res, count, 0, 1, 2, it, "fetched values");
#endif
        WB(MPI_Barrier(c->comm));
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 4, .max_size = 4 << 20, .iters = 10000,
                                    .iters_large = 1000, .warmup = 1000, .warmup_large = 100,
                                    .sync = WB_SYNC_FLUSH, .dtype = "int"};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
    wb_ctx_t c;
    wb_rma_t w;
    char *buf, *res;
    size_t size;
    int origin, target;

    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_SIZES | WB_F_TWO | WB_F_RMA | WB_F_DTYPE, &d);
    wb_columns(&c, 1, 1, m);
    origin = c.rank == 0;
    target = !origin;
    buf = wb_alloc(c.o.max_size);
    res = wb_alloc(c.o.max_size);
    wb_rma_create(&w, &c, c.o.max_size);

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        size_t count = size / (size_t)c.o.dsize;
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, lat;

        if (count == 0)
            continue;
        WB(MPI_Barrier(c.comm));
        wb_rma_open(&w, origin, target);
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            wb_rma_begin(&w, origin, target);
            if (origin)
                op(&c, &w, buf, res, count);
            wb_rma_end(&w, origin, target);
        }
        lat = (wb_now() - t0) * 1e6 / n;
        wb_rma_close(&w, origin, target);
        WB(MPI_Barrier(c.comm));
        if (c.o.validate)
            valid = validate(&c, &w, buf, res, count);
        WB(MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)(count * (size_t)c.o.dsize), &lat, valid);
    }
    wb_rma_free(&w);
    wb_free(buf);
    wb_free(res);
    return wb_finish(&c);
}
