/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Multi-pair bandwidth and message rate: rank i < np/2 streams windows of
 * MPI_Isend to rank i + np/2 at the same time as every other pair.
 * Reports the aggregate bandwidth and message rate (sum over pairs).
 */
#include "wb.h"

#include <stdlib.h>
#include <string.h>

static void window(wb_ctx_t *c, char *sb, char *rb, size_t size, size_t stride, int w, int sender,
                   int peer, MPI_Request *req)
{
    int k;
    char ack = 0;

    if (sender) {
        for (k = 0; k < w; k++)
            WB(MPI_Isend(sb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[k]));
        WB(MPI_Waitall(w, req, MPI_STATUSES_IGNORE));
        WB(MPI_Recv(&ack, 1, MPI_CHAR, peer, 101, c->comm, MPI_STATUS_IGNORE));
    } else {
        for (k = 0; k < w; k++)
            WB(MPI_Irecv(rb + k * stride, (int)size, MPI_CHAR, peer, 100, c->comm, &req[k]));
        WB(MPI_Waitall(w, req, MPI_STATUSES_IGNORE));
        WB(MPI_Send(&ack, 1, MPI_CHAR, peer, 101, c->comm));
    }
}

static int validate(wb_ctx_t *c, size_t size, int sender, int peer, MPI_Request *req)
{
    int w = c->o.window < 4 ? c->o.window : 4, ok = 1, it, k;
    size_t stride = size ? size : 1;
    char *sb = wb_alloc(stride * (size_t)w), *rb = wb_alloc(stride * (size_t)w);

    for (it = 0; it < 2; it++) {
        for (k = 0; k < w; k++)
            wb_fill(sb + k * stride, size, wb_seed(c->rank, peer, it * w + k));
        memset(rb, 0, stride * (size_t)w);
        window(c, sb, rb, size, stride, w, sender, peer, req);
        if (!sender)
            for (k = 0; k < w; k++)
                ok &= !wb_verify(c, rb + k * stride, size, wb_seed(peer, c->rank, it * w + k),
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
    static const wb_metric_t m[] = {{"bandwidth_mbs", "MB/s", 0},
                                    {"messages_per_s", "Messages/s", 0}};
    wb_ctx_t c;
    char *s, *r;
    MPI_Request *req;
    size_t size;
    int half, sender, peer;

    wb_init(&c, &argc, &argv, "mbw_mr", "Multiple Bandwidth / Message Rate Test",
            WB_F_SIZES | WB_F_WINDOW | WB_F_PAIRS, &d);
    wb_columns(&c, 1, 2, m);
    half = c.np / 2;
    sender = c.rank < half;
    peer = sender ? c.rank + half : c.rank - half;
    wb_note(&c, "# Pairs: %d", half);
    s = wb_alloc(c.o.max_size);
    r = wb_alloc(c.o.max_size);
    req = calloc((size_t)c.o.window, sizeof(*req));

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, t, loc[2] = {0, 0}, sum[2] = {0, 0};

        memset(s, 'a', size);
        WB(MPI_Barrier(c.comm));
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            window(&c, s, r, size, 0, c.o.window, sender, peer, req);
        }
        t = wb_now() - t0;
        if (sender) {
            loc[1] = (double)c.o.window * n / t;
            loc[0] = loc[1] * (double)size / 1e6;
        }
        WB(MPI_Allreduce(loc, sum, 2, MPI_DOUBLE, MPI_SUM, c.comm));
        if (c.o.validate)
            valid = validate(&c, size, sender, peer, req);
        wb_row(&c, (long long)size, sum, valid);
    }
    free(req);
    wb_free(s);
    wb_free(r);
    return wb_finish(&c);
}
