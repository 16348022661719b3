/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Compare_and_swap latency on one 64-bit integer at rank 1, one
 * operation per epoch; -DWB_FOP measures MPI_Fetch_and_op (MPI_SUM).
 */
#include "wb_rma.h"

#include <stdio.h>
#include <string.h>

#ifdef WB_FOP
#define NAME "fop_latency"
#define TITLE "MPI_Fetch_and_op Latency Test"
#else
#define NAME "cas_latency"
#define TITLE "MPI_Compare_and_swap Latency Test"
#endif

static void op(wb_rma_t *w, int64_t *val, int64_t *cmp, int64_t *res)
{
#ifdef WB_FOP
    (void)cmp;
    WB(MPI_Fetch_and_op(val, res, MPI_INT64_T, w->peer, 0, MPI_SUM, w->win));
#else
    WB(MPI_Compare_and_swap(val, cmp, res, MPI_INT64_T, w->peer, 0, w->win));
#endif
}

static int validate(wb_ctx_t *c, wb_rma_t *w)
{
    int origin = c->rank == 0, target = !origin, ok = 1, it;

    for (it = 0; it < 2; it++) {
        int64_t init = 7 + it, val = 100 + it, cmp = init, res = -1, want_win;

        if (target)
            memcpy(w->base, &init, sizeof(init));
        WB(MPI_Barrier(c->comm));
        wb_rma_open(w, origin, target);
        wb_rma_begin(w, origin, target);
        if (origin)
            op(w, &val, &cmp, &res);
        wb_rma_end(w, origin, target);
        wb_rma_close(w, origin, target);
        WB(MPI_Barrier(c->comm));
#ifdef WB_FOP
        want_win = init + val;
#else
        want_win = val;
#endif
        if (origin && res != init) {
            fprintf(stderr, "# %s: validation failed: fetched %lld, expected %lld\n", NAME,
                    (long long)res, (long long)init);
            ok = 0;
        }
        if (target) {
            int64_t got;
            memcpy(&got, w->base, sizeof(got));
            if (got != want_win) {
                fprintf(stderr, "# %s: validation failed: window holds %lld, expected %lld\n", NAME,
                        (long long)got, (long long)want_win);
                ok = 0;
            }
        }
        WB(MPI_Barrier(c->comm));
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.iters = 10000, .iters_large = 10000, .warmup = 1000,
                                    .warmup_large = 1000, .sync = WB_SYNC_FLUSH};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
    wb_ctx_t c;
    wb_rma_t w;
    int origin, target, i, valid = -1;
    int n, skip;
    int64_t val = 1, cmp = 0, res = 0;
    double t0 = 0, lat;

    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_TWO | WB_F_RMA, &d);
    wb_columns(&c, 1, 1, m);
    origin = c.rank == 0;
    target = !origin;
    wb_rma_create(&w, &c, sizeof(int64_t));
    memset(w.base, 0, sizeof(int64_t));
    n = wb_iters(&c, 8);
    skip = wb_warmup(&c, 8);

    WB(MPI_Barrier(c.comm));
    wb_rma_open(&w, origin, target);
    for (i = 0; i < n + skip; i++) {
        if (i == skip)
            t0 = wb_now();
        wb_rma_begin(&w, origin, target);
        if (origin)
            op(&w, &val, &cmp, &res);
        wb_rma_end(&w, origin, target);
    }
    lat = (wb_now() - t0) * 1e6 / n;
    wb_rma_close(&w, origin, target);
    WB(MPI_Barrier(c.comm));
    if (c.o.validate)
        valid = validate(&c, &w);
    WB(MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, c.comm));
    wb_row(&c, 8, &lat, valid);
    wb_rma_free(&w);
    return wb_finish(&c);
}
