/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Unidirectional bandwidth: rank 0 posts a window of MPI_Isend to rank 1,
 * which posts matching MPI_Irecv and acknowledges each window.
 * Built twice: -DWB_BIBW gives the bidirectional variant (both ranks send
 * and receive a window at once).
 */
#include "wb.h"

#include <stdlib.h>
#include <string.h>

#ifdef WB_BIBW
#define NAME "bibw"
#define TITLE "MPI Bi-Directional Bandwidth Test"
#else
#define NAME "bw"
#define TITLE "MPI Bandwidth Test"
#endif

/* One window: 'sb'/'rb' are per-slot buffer bases, 'stride' is 0 when all
 * slots share one buffer (timed loops) or the slot size (validation). */
static void window(wb_ctx_t *c, char *sb, char *rb, size_t size, size_t stride, int w,
                   MPI_Request *req)
{
    int peer = 1 - c->rank, k, n = 0;
    char ack = 0;

#ifdef WB_BIBW
    for (k = 0; k < w; k++)
        WB(MPI_Irecv(rb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[n++]));
    for (k = 0; k < w; k++)
        WB(MPI_Isend(sb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[n++]));
    WB(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
    (void)ack;
#else
    if (c->rank == 0) {
        for (k = 0; k < w; k++)
            WB(MPI_Isend(sb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[n++]));
        WB(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        WB(MPI_Recv(&ack, 1, MPI_CHAR, peer, 101, c->comm, MPI_STATUS_IGNORE));
    } else {
        for (k = 0; k < w; k++)
            WB(MPI_Irecv(rb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[n++]));
        WB(MPI_Waitall(n, req, MPI_STATUSES_IGNORE));
        WB(MPI_Send(&ack, 1, MPI_CHAR, peer, 101, c->comm));
    }
#endif
}

static int validate(wb_ctx_t *c, size_t size, MPI_Request *req)
{
    int w = c->o.window < 4 ? c->o.window : 4, ok = 1, it, k;
    size_t stride = size ? size : 1;
    char *sb = wb_alloc(stride * (size_t)w), *rb = wb_alloc(stride * (size_t)w);

    for (it = 0; it < 2; it++) {
        for (k = 0; k < w; k++)
            wb_fill(sb + k * stride, size, wb_seed(c->rank, 1 - c->rank, it * w + k));
        memset(rb, 0, stride * (size_t)w);
        WB(MPI_Barrier(c->comm));
        window(c, sb, rb, size, stride, w, req);
#ifndef WB_BIBW
        if (c->rank == 1)
#endif
            for (k = 0; k < w; k++)
                ok &= !wb_verify(c, rb + k * stride, size, wb_seed(1 - c->rank, c->rank, it * w + k),
                                 "window message");
    }
    wb_free(sb);
    wb_free(rb);
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 1, .max_size = 4 << 20, .iters = 100,
                                    .iters_large = 20, .warmup = 10, .warmup_large = 2,
                                    .window = 64};
    static const wb_metric_t m[] = {{"bandwidth_mbs", "Bandwidth (MB/s)", 0}};
    wb_ctx_t c;
    char *s, *r;
    MPI_Request *req;
    size_t size;

    wb_init(&c, &argc, &argv, NAME, TITLE, WB_F_SIZES | WB_F_WINDOW | WB_F_TWO, &d);
    wb_columns(&c, 1, 1, m);
    s = wb_alloc(c.o.max_size);
    r = wb_alloc(c.o.max_size);
    req = calloc(2 * (size_t)c.o.window, sizeof(*req));

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, t, bw;

        memset(s, 'a', size);
        WB(MPI_Barrier(c.comm));
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            window(&c, s, r, size, 0, c.o.window, req);
        }
        t = wb_now() - t0;
#ifdef WB_BIBW
        bw = 2.0 * (double)size * c.o.window * n / t / 1e6;
#else
        bw = (double)size * c.o.window * n / t / 1e6;
#endif
        if (c.o.validate)
            valid = validate(&c, size, req);
        WB(MPI_Bcast(&bw, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, &bw, valid);
    }
    free(req);
    wb_free(s);
    wb_free(r);
    return wb_finish(&c);
}
