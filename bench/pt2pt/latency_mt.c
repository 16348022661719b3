/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Multi-threaded ping-pong latency (needs MPI_THREAD_MULTIPLE): each of the
 * -t threads of rank 0 ping-pongs with the same-numbered thread of rank 1,
 * using its own tag, all at once. Reports the average over threads.
 */
#include "wb.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct thr {
    wb_ctx_t *c;
    int id;
    char *s, *r;
    size_t size;
    int n, skip;
    double lat;
    int ok;
} thr_t;

static pthread_barrier_t start_bar;

static void *pingpong(void *arg)
{
    thr_t *t = arg;
    wb_ctx_t *c = t->c;
    int peer = 1 - c->rank, i, it;
    double t0 = 0;

    pthread_barrier_wait(&start_bar);
    for (i = 0; i < t->n + t->skip; i++) {
        if (i == t->skip)
            t0 = wb_now();
        if (c->rank == 0) {
            WB(MPI_Send(t->s, (int)t->size, MPI_CHAR, peer, t->id, c->comm));
            WB(MPI_Recv(t->r, (int)t->size, MPI_CHAR, peer, t->id, c->comm, MPI_STATUS_IGNORE));
        } else {
            WB(MPI_Recv(t->r, (int)t->size, MPI_CHAR, peer, t->id, c->comm, MPI_STATUS_IGNORE));
            WB(MPI_Send(t->s, (int)t->size, MPI_CHAR, peer, t->id, c->comm));
        }
    }
    t->lat = (wb_now() - t0) * 1e6 / (2.0 * t->n);

    t->ok = 1;
    if (!c->o.validate)
        return NULL;
    for (it = 0; it < 2; it++) {
        memset(t->r, 0, t->size);
        wb_fill(t->s, t->size, wb_seed(c->rank, t->id, it));
        if (c->rank == 0) {
            WB(MPI_Send(t->s, (int)t->size, MPI_CHAR, peer, t->id, c->comm));
            WB(MPI_Recv(t->r, (int)t->size, MPI_CHAR, peer, t->id, c->comm, MPI_STATUS_IGNORE));
        } else {
            WB(MPI_Recv(t->r, (int)t->size, MPI_CHAR, peer, t->id, c->comm, MPI_STATUS_IGNORE));
            WB(MPI_Send(t->s, (int)t->size, MPI_CHAR, peer, t->id, c->comm));
        }
        t->ok &= !wb_verify(c, t->r, t->size, wb_seed(peer, t->id, it), "thread message");
    }
    return NULL;
}

int main(int argc, char **argv)
{
    static const wb_defaults_t d = {.min_size = 0, .max_size = 1 << 20, .iters = 10000,
                                    .iters_large = 1000, .warmup = 1000, .warmup_large = 100};
    static const wb_metric_t m[] = {{"latency_us", "Latency (us)", 0}};
    wb_ctx_t c;
    thr_t *t;
    pthread_t *tid;
    size_t size;
    int k, nt;

    wb_init(&c, &argc, &argv, "latency_mt", "MPI Multi-threaded Latency Test",
            WB_F_SIZES | WB_F_TWO | WB_F_THREADS | WB_F_THREAD_MULTIPLE, &d);
    wb_columns(&c, 1, 1, m);
    nt = c.o.threads;
    t = calloc((size_t)nt, sizeof(*t));
    tid = calloc((size_t)nt, sizeof(*tid));
    for (k = 0; k < nt; k++) {
        t[k].c = &c;
        t[k].id = k;
        t[k].s = wb_alloc(c.o.max_size);
        t[k].r = wb_alloc(c.o.max_size);
    }

    for (size = wb_size_first(&c); wb_size_ok(&c, size); size = wb_size_next(&c, size)) {
        double lat = 0;
        int ok = 1, valid = -1;

        pthread_barrier_init(&start_bar, NULL, (unsigned)nt);
        WB(MPI_Barrier(c.comm));
        for (k = 0; k < nt; k++) {
            t[k].size = size;
            t[k].n = wb_iters(&c, size);
            t[k].skip = wb_warmup(&c, size);
            memset(t[k].s, 'a', size);
            if (pthread_create(&tid[k], NULL, pingpong, &t[k])) {
                fprintf(stderr, "# latency_mt: pthread_create failed\n");
                MPI_Abort(c.comm, WB_EXIT_FAIL);
            }
        }
        for (k = 0; k < nt; k++) {
            pthread_join(tid[k], NULL);
            lat += t[k].lat / nt;
            ok &= t[k].ok;
        }
        pthread_barrier_destroy(&start_bar);
        if (c.o.validate)
            valid = wb_agree(&c, ok);
        WB(MPI_Bcast(&lat, 1, MPI_DOUBLE, 0, c.comm));
        wb_row(&c, (long long)size, &lat, valid);
    }
    for (k = 0; k < nt; k++) {
        wb_free(t[k].s);
        wb_free(t[k].r);
    }
    free(t);
    free(tid);
    return wb_finish(&c);
}
