/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ping-pong latency between ranks 0 and 1 with blocking MPI_Send/MPI_Recv;
 * reports half the round-trip time. --touch: each side reads what it
 * received before answering.
 */
#include "wb.h"

#include <string.h>

static int validate(wb_ctx_t *c, char *s, char *r, size_t size)
{
    int peer = 1 - c->rank, ok = 1, it;

    for (it = 0; it < 2; it++) {
        memset(r, 0, size);
        if (c->rank == 0) {
            wb_fill(s, size, wb_seed(0, 1, it));
            WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c->comm));
            WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c->comm, MPI_STATUS_IGNORE));
            ok &= !wb_verify(c, r, size, wb_seed(1, 0, it), "pong");
        } else {
            WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c->comm, MPI_STATUS_IGNORE));
            ok &= !wb_verify(c, r, size, wb_seed(0, 1, it), "ping");
            wb_fill(s, size, wb_seed(1, 0, it));
            WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c->comm));
        }
    }
    return wb_agree(c, ok);
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 0, .max_size = 4 << 20, .iters = 10000,
                                    .iters_large = 1000, .warmup = 1000, .warmup_large = 100};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
    wb_ctx_t c;
    char *s, *r;
    size_t size;

    wb_init(&c, &argc, &argv, "latency", "MPI Latency Test", WB_F_SIZES | WB_F_TWO | WB_F_TOUCH, &d);
    wb_columns(&c, 1, 1, m);
    s = wb_alloc(c.o.max_size);
    r = wb_alloc(c.o.max_size);

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        int n = wb_iters(&c, size), skip = wb_warmup(&c, size), i, peer = 1 - c.rank;
        double t0 = 0, lat;
        int valid = -1;

        memset(s, 'a', size);
        WB(MPI_Barrier(c.comm));
        for (i = 0; i < n + skip; i++) {
            if (i == skip)
                t0 = wb_now();
            if (c.rank == 0) {
                WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c.comm));
                WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c.comm, MPI_STATUS_IGNORE));
                if (c.o.touch)
                    wb_touch(r, size);
            } else {
                WB(MPI_Recv(r, (int)size, MPI_CHAR, peer, 1, c.comm, MPI_STATUS_IGNORE));
                if (c.o.touch)
                    wb_touch(r, size);
                WB(MPI_Send(s, (int)size, MPI_CHAR, peer, 1, c.comm));
            }
        }
        lat = (wb_now() - t0) * 1e6 / (2.0 * n);
        if (c.o.validate)
            valid = validate(&c, s, r, size);
        WB(MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, &lat, valid);
    }
    wb_free(s);
    wb_free(r);
    return wb_finish(&c);
}
