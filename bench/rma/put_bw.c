/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One-sided bandwidth: rank 0 issues a window (-W) of MPI_Put (MPI_Get
 * with -DWB_GET) of 'size' bytes per epoch. -DWB_BIBW: both ranks put to
 * each other at once (put_bibw).
 */
#include "wb_rma.h"

#include <string.h>

#if defined(WB_GET)
#define NAME "get_bw"
#define TITLE "MPI_Get Bandwidth Test"
#elif defined(WB_BIBW)
#define NAME "put_bibw"
#define TITLE "MPI_Put Bi-directional Bandwidth Test"
#else
#define NAME "put_bw"
#define TITLE "MPI_Put Bandwidth Test"
#endif

#ifdef WB_BIBW
#define ORIGIN(c) 1
#define TARGET(c) 1
#else
#define ORIGIN(c) ((c)->rank == 0)
#define TARGET(c) ((c)->rank == 1)
#endif

/* 'stride' 0: every operation uses offset 0 (timed loop). */
static void ops(wb_rma_t *w, char *buf, size_t size, size_t stride, int nops)
{
    int k;

    for (k = 0; k < nops; k++) {
        MPI_Aint disp = (MPI_Aint)(k * stride);
#ifdef WB_GET
        WB(MPI_Get(buf + k * stride, (int)size, MPI_CHAR, w->peer, disp, (int)size, MPI_CHAR, w->win));
#else
        WB(MPI_Put(buf + k * stride, (int)size, MPI_CHAR, w->peer, disp, (int)size, MPI_CHAR, w->win));
#endif
    }
}

static int validate(wb_ctx_t *c, wb_rma_t *w, char *buf, size_t size)
{
    int origin = ORIGIN(c), target = TARGET(c), ok = 1, it, k, nv = c->o.window < 4 ? c->o.window : 4;

    for (it = 0; it < 2; it++) {
        for (k = 0; k < nv; k++) {
#ifdef WB_GET
            if (target)
                wb_fill(w->base + k * size, size, wb_seed(1, k, it));
            memset(buf + k * size, 0, size);
#else
            if (target)
                memset(w->base + k * size, 0, size);
            wb_fill(buf + k * size, size, wb_seed(c->rank, k, it));
#endif
        }
        WB(MPI_Barrier(c->comm));
        wb_rma_open(w, origin, target);
        wb_rma_begin(w, origin, target);
        if (origin)
            ops(w, buf, size, size, nv);
        wb_rma_end(w, origin, target);
        wb_rma_close(w, origin, target);
        WB(MPI_Barrier(c->comm));
        for (k = 0; k < nv; k++) {
#ifdef WB_GET
            if (origin)
                ok &= !wb_verify(c, buf + k * size, size, wb_seed(1, k, it), "data read by MPI_Get");
#else
            if (target)
                ok &= !wb_verify(c, w->base + k * size, size, wb_seed(1 - c->rank, k, it),
                                 "target window after MPI_Put");
#endif
        }
        WB(MPI_Barrier(c->comm));
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 1, .max_size = 4 << 20, .iters = 1000,
                                    .iters_large = 100, .warmup = 100, .warmup_large = 10,
                                    .window = 64,
#ifdef WB_BIBW
                                    .sync = WB_SYNC_FENCE
#else
                                    .sync = WB_SYNC_FLUSH
#endif
    };
    static const wb_metric_t m[] = {{"bandwidth_mbs", "Bandwidth (MB/s)", 0}};
    wb_ctx_t c;
    wb_rma_t w;
    char *buf;
    size_t size;
    int origin, target;

    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_SIZES | WB_F_TWO | WB_F_RMA | WB_F_WINDOW, &d);
    wb_columns(&c, 1, 1, m);
    origin = ORIGIN(&c);
    target = TARGET(&c);
    buf = wb_alloc(c.o.max_size * 4);
    wb_rma_create(&w, &c, c.o.max_size * 4);

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, bw;

        WB(MPI_Barrier(c.comm));
        wb_rma_open(&w, origin, target);
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            wb_rma_begin(&w, origin, target);
            if (origin)
                ops(&w, buf, size, 0, c.o.window);
            wb_rma_end(&w, origin, target);
        }
        bw = (double)size * c.o.window * n / (wb_now() - t0) / 1e6;
#ifdef WB_BIBW
        bw *= 2;
#endif
        wb_rma_close(&w, origin, target);
        WB(MPI_Barrier(c.comm));
        if (c.o.validate)
            valid = validate(&c, &w, buf, size);
        WB(MPI_Bcast(&bw, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, &bw, valid);
    }
    wb_rma_free(&w);
    wb_free(buf);
    return wb_finish(&c);
}
