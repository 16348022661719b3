/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Concurrent ping-pong latency: rank i < np/2 pairs with rank i + np/2 and
 * all pairs run at once. Reports the average one-way latency over pairs.
 */
#include "wb.h"

#include <string.h>

static int validate(wb_ctx_t *c, char *s, char *r, size_t size, int sender, int peer)
{
    int ok = 1, it;

    for (it = 0; it < 2; it++) {
        memset(r, 0, size);
        if (sender) {
            wb_fill(s, size, wb_seed(c->rank, peer, it));
            WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c->comm));
            WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c->comm, MPI_STATUS_IGNORE));
            ok &= !wb_verify(c, r, size, wb_seed(peer, c->rank, it), "pong");
        } else {
            WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c->comm, MPI_STATUS_IGNORE));
            ok &= !wb_verify(c, r, size, wb_seed(peer, c->rank, it), "ping");
            wb_fill(s, size, wb_seed(c->rank, peer, it));
            WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c->comm));
        }
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 0, .max_size = 1 << 20, .iters = 10000,
                                    .iters_large = 1000, .warmup = 1000, .warmup_large = 100};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0},
                                    {"min_latency_us", "Min Latency(us)", 0},
                                    {"max_latency_us", "Max Latency(us)", 0},
                                    {"iterations", "Iterations", 1}};
    wb_ctx_t c;
    char *s, *r;
    size_t size;
    int half, sender, peer;

    wb_init(&c, &argc, &argv, "multi_lat", "Multi Latency Test", WB_F_SIZES | WB_F_PAIRS, &d);
    wb_columns(&c, 1, c.o.full ? 4 : 1, m);
    half = c.np / 2;
    sender = c.rank < half;
    peer = sender ? c.rank + half : c.rank - half;
    s = wb_alloc(c.o.max_size);
    r = wb_alloc(c.o.max_size);

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, valid = -1;
        double t0 = 0, lat, v[4], mn, mx;

        memset(s, 'a', size);
        WB(MPI_Barrier(c.comm));
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            if (sender) {
                WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c.comm));
                WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c.comm, MPI_STATUS_IGNORE));
            } else {
                WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c.comm, MPI_STATUS_IGNORE));
                WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c.comm));
            }
        }
        lat = (wb_now() - t0) * 1e6 / (2.0 * n);
        if (c.o.validate)
            valid = validate(&c, s, r, size, sender, peer);
        /* receivers time the same round trips; average over all ranks */
        wb_stats(&c, lat, &v[0], &mn, &mx);
        v[1] = mn;
        v[2] = mx;
        v[3] = n;
        wb_row(&c, (long long)size, v, valid);
    }
    wb_free(s);
    wb_free(r);
    return wb_finish(&c);
}
