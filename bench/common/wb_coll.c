/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "wb_coll.h"

#include <stdlib.h>
#include <string.h>

static void wb_coll_wait(MPI_Request *req, int nb)
{
    if (nb)
        wb_check(MPI_Wait(req, MPI_STATUS_IGNORE), "MPI_Wait", __FILE__, __LINE__);
}

static int wb_coll_validate(wb_cx_t *x, const wb_coll_t *d, int nb)
{
    int ok = 1, it;
    MPI_Request req = MPI_REQUEST_NULL;

    for (it = 0; it < 2; it++) {
        d->fill(x, it);
        wb_check(MPI_Barrier(x->comm), "MPI_Barrier", __FILE__, __LINE__);
        wb_check(d->run(x, &req), d->mpi_name, __FILE__, __LINE__);
        wb_coll_wait(&req, nb);
        ok &= d->check(x, it);
    }
    return wb_agree(x->c, ok);
}

int wb_coll_main(int argc, char **argv, const wb_coll_t *d)
{
    wb_defaults_t def = {.min_size = 1, .max_size = 1 << 20, .iters = 1000, .iters_large = 100,
                         .warmup = 200, .warmup_large = 10};
    static const wb_metric_t mb[] = {{"avg_latency_us", "Avg Latency(us)", 0},
                                     {"min_latency_us", "Min Latency(us)", 0},
                                     {"max_latency_us", "Max Latency(us)", 0},
                                     {"iterations", "Iterations", 1}};
    static const wb_metric_t mn[] = {{"overall_us", "Overall(us)", 0},
                                     {"compute_us", "Compute(us)", 0},
                                     {"comm_us", "Pure Comm.(us)", 0},
                                     {"overlap_pct", "Overlap(%)", 0},
                                     {"min_comm_us", "Min Comm.(us)", 0},
                                     {"max_comm_us", "Max Comm.(us)", 0},
                                     {"iterations", "Iterations", 1}};
    unsigned ft = WB_F_DTYPE;
    int nb = d->nb, nosize = (d->flags & WB_C_NOSIZE) != 0;
    wb_ctx_t c;
    wb_cx_t x;
    size_t size, nsamples = 0;
    double *samples = NULL; /* --median: this size's iteration times */

    if (d->flags & WB_C_REDUCE) {
        def.dtype = "int";
        def.min_size = 4;
    }
    if (!nosize)
        ft |= WB_F_SIZES;
    else
        ft &= ~(unsigned)WB_F_DTYPE;
    if (d->flags & WB_C_ROOTED)
        ft |= WB_F_ROOT;
    if (d->flags & WB_C_INPLACE)
        ft |= WB_F_INPLACE;
    if (!nb)
        ft |= WB_F_B2B | WB_F_MEDIAN;
    wb_init(&c, &argc, &argv, d->name, d->title, ft, &def);
    if (nb)
        wb_columns(&c, !nosize, c.o.full ? 7 : 4, mn);
    else
        wb_columns(&c, !nosize, c.o.full ? 4 : 1, mb);

    memset(&x, 0, sizeof(x));
    x.c = &c;
    x.comm = c.comm;
    x.rank = c.rank;
    x.np = c.np;
    x.root = c.o.root;
    x.in_place = c.o.in_place;
    x.dt = (d->flags & WB_C_REDUCE) ? c.o.rtype : c.o.dtype;
    x.dsize = c.o.dsize;
    x.scounts = calloc((size_t)c.np, sizeof(int));
    x.sdispls = calloc((size_t)c.np, sizeof(int));
    x.rcounts = calloc((size_t)c.np, sizeof(int));
    x.rdispls = calloc((size_t)c.np, sizeof(int));
    x.count = nosize ? 0 : c.o.max_size / (size_t)x.dsize;
    x.bytes = x.count * (size_t)x.dsize;
    d->setup(&x);
    x.sbuf = wb_alloc(x.sbytes);
    x.rbuf = wb_alloc(x.rbytes);

    for (size = nosize ? 0 : wb_size_first(&c); nosize || wb_size_ok(&c, size);
         size = wb_size_next(&c, size)) {
        int n, skip, i, valid = -1;
        double v[7], tsum = 0, lat, avg, mn_, mx_;
        MPI_Request req = MPI_REQUEST_NULL;

        x.count = size / (size_t)x.dsize;
        x.bytes = x.count * (size_t)x.dsize;
        if (!nosize && x.count == 0)
            continue;
        d->setup(&x);
        d->fill(&x, 0);
        n = wb_iters(&c, x.bytes);
        skip = wb_warmup(&c, x.bytes);

        WB(MPI_Barrier(c.comm));
        if (c.o.back_to_back) {
            /* successive calls may overlap (a root may return before the
             * others got the data): time n calls in a row */
            double t0;
            for (i = 0; i < skip; i++)
                wb_check(d->run(&x, &req), d->mpi_name, __FILE__, __LINE__);
            WB(MPI_Barrier(c.comm));
            t0 = wb_now();
            for (i = 0; i < n; i++)
                wb_check(d->run(&x, &req), d->mpi_name, __FILE__, __LINE__);
            tsum = wb_now() - t0;
            WB(MPI_Barrier(c.comm));
        }
        if (c.o.median && (size_t)n > nsamples) {
            free(samples);
            nsamples = (size_t)n;
            samples = wb_alloc(nsamples * sizeof(double));
        }
        for (i = 0; !c.o.back_to_back && i < n + skip; i++) {
            double t0 = wb_now(), t;
            wb_check(d->run(&x, &req), d->mpi_name, __FILE__, __LINE__);
            wb_coll_wait(&req, nb);
            t = wb_now() - t0;
            if (i >= skip) {
                tsum += t;
                if (c.o.median)
                    samples[i - skip] = t;
            }
            WB(MPI_Barrier(c.comm));
        }
        lat = c.o.median ? wb_median(samples, n) * 1e6 : tsum * 1e6 / n;
        wb_stats(&c, lat, &avg, &mn_, &mx_);

        if (!nb) {
            v[0] = avg;
            v[1] = mn_;
            v[2] = mx_;
            v[3] = n;
        } else {
            /* compute phase sized to the slowest rank's pure time */
            double target = mx_, ttot = 0, tcpu = 0, ov, ovavg, a, b;

            for (i = 0; i < n + skip; i++) {
                double t0 = wb_now(), tc;
                wb_check(d->run(&x, &req), d->mpi_name, __FILE__, __LINE__);
                tc = wb_compute(target);
                wb_coll_wait(&req, nb);
                if (i >= skip) {
                    ttot += wb_now() - t0;
                    tcpu += tc;
                }
                WB(MPI_Barrier(c.comm));
            }
            ttot = ttot * 1e6 / n;
            tcpu = tcpu * 1e6 / n;
            ov = lat > 0 ? 100.0 * (1.0 - (ttot - tcpu) / lat) : 0.0;
            if (ov < 0)
                ov = 0;
            if (ov > 100)
                ov = 100;
            wb_stats(&c, ttot, &v[0], &a, &b);
            wb_stats(&c, tcpu, &v[1], &a, &b);
            wb_stats(&c, ov, &ovavg, &a, &b);
            v[2] = avg;
            v[3] = ovavg;
            v[4] = mn_;
            v[5] = mx_;
            v[6] = n;
        }
        if (c.o.validate)
            valid = wb_coll_validate(&x, d, nb);
        wb_row(&c, (long long)x.bytes, v, valid);
        if (nosize)
            break;
    }
    wb_free(samples);
    wb_free(x.sbuf);
    wb_free(x.rbuf);
    free(x.scounts);
    free(x.sdispls);
    free(x.rcounts);
    free(x.rdispls);
    return wb_finish(&c);
}
