/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Every intracommunicator collective against a serial reference computed
 * locally: counts 0, 1, 7, 4096 (16 KiB of ints) and 1 MiB, a contiguous
 * type (MPI_INT) and a derived one (vector of 2 ints, stride 3: holes must
 * stay untouched), MPI_IN_PLACE where allowed, several roots, blocking /
 * non-blocking / persistent forms, and a non-commutative user op (affine
 * map composition) whose result depends on rank order.
 *
 * Which algorithms run is chosen by the manifest through
 * WEFT_<COLL>_ALGORITHM; args: [maxcount] [modes] (modes: b, n, p letters).
 */
#include <stdint.h>
#include "mpitest.h"

static int rank, size;
static MPI_Datatype vec;      /* 2 ints at offsets 0 and 3, extent 4 ints */
static MPI_Datatype affine_t; /* 2 unsigned */
static MPI_Op       affine_op;
static const char  *modes = "bnp";
static int          trace;
#define SENT (-77)

typedef struct {
    MPI_Datatype dt;
    int          k, ext, off[2]; /* ints per element, extent in ints, offsets */
    const char  *name;
} dtype_t;

static dtype_t types[2];

static int val(int r, long i, int c)
{
    return (int)((r + 1) * 1000 + (i * 7 + c * 3) % 991);
}

static int *alloc_ints(long n)
{
    int *p = malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
    for (long i = 0; i < n; i++) {
        p[i] = SENT;
    }
    return p;
}

/* element i of buf (in dtype t) gets val(r, vi, c) for each component */
static void put(const dtype_t *t, int *buf, long i, int r, long vi)
{
    for (int c = 0; c < t->k; c++) {
        buf[i * t->ext + t->off[c]] = val(r, vi, c);
    }
}

static void put_sum(const dtype_t *t, int *buf, long i, long vi)
{
    for (int c = 0; c < t->k; c++) {
        int s = 0;
        for (int r = 0; r < size; r++) {
            s += val(r, vi, c);
        }
        buf[i * t->ext + t->off[c]] = s;
    }
}

static int check(const char *what, const dtype_t *t, long n, const int *got, const int *want,
                 long nints)
{
    for (long i = 0; i < nints; i++) {
        if (got[i] != want[i]) {
            CHECK(0, "%s type %s count %ld: int %ld is %d, expected %d", what, t->name, n, i,
                  got[i], want[i]);
            return 1;
        }
    }
    return 0;
}

/* Run one collective in mode m: the call is given as three closures. */
#define RUN(_m, _blocking, _nb, _init)                                                     \
    do {                                                                                   \
        MPI_Request _r;                                                                    \
        if (trace) {                                                                       \
            fprintf(stderr, "[%d] %c %s:%d n=%ld\n", rank, (_m), __func__, __LINE__, (long)n);           \
        }                                                                                  \
        if ((_m) == 'b') {                                                                 \
            CHECK_OK(_blocking);                                                           \
        } else if ((_m) == 'n') {                                                          \
            CHECK_OK(_nb);                                                                 \
            CHECK_OK(MPI_Wait(&_r, MPI_STATUS_IGNORE));                                    \
        } else {                                                                           \
            CHECK_OK(_init);                                                               \
            CHECK_OK(MPI_Start(&_r));                                                      \
            CHECK_OK(MPI_Wait(&_r, MPI_STATUS_IGNORE));                                    \
            CHECK_OK(MPI_Request_free(&_r));                                               \
        }                                                                                  \
    } while (0)

static void test_bcast(const dtype_t *t, long n, char m)
{
    for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
        long nint = n * t->ext;
        int *b = alloc_ints(nint), *w = alloc_ints(nint);
        for (long i = 0; i < n; i++) {
            put(t, w, i, root, i);
            if (rank == root) {
                put(t, b, i, root, i);
            }
        }
        RUN(m, MPI_Bcast(b, (int)n, t->dt, root, MPI_COMM_WORLD),
            MPI_Ibcast(b, (int)n, t->dt, root, MPI_COMM_WORLD, &_r),
            MPI_Bcast_init(b, (int)n, t->dt, root, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
        check("bcast", t, n, b, w, nint);
        free(b);
        free(w);
    }
}

static void test_reduce(const dtype_t *t, long n, char m)
{
    long nint = n * t->ext;
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
            int *s = alloc_ints(nint), *r = alloc_ints(nint), *w = alloc_ints(nint);
            for (long i = 0; i < n; i++) {
                put(t, s, i, rank, i);
                put_sum(t, w, i, i);
                if (inplace && rank == root) {
                    put(t, r, i, rank, i);
                }
            }
            const void *sb = (inplace && rank == root) ? MPI_IN_PLACE : s;
            RUN(m, MPI_Reduce(sb, r, (int)n, t->dt, MPI_SUM, root, MPI_COMM_WORLD),
                MPI_Ireduce(sb, r, (int)n, t->dt, MPI_SUM, root, MPI_COMM_WORLD, &_r),
                MPI_Reduce_init(sb, r, (int)n, t->dt, MPI_SUM, root, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &_r));
            if (rank == root) {
                check(inplace ? "reduce(in place)" : "reduce", t, n, r, w, nint);
            }
            free(s);
            free(r);
            free(w);
        }
    }
}

static void test_allreduce(const dtype_t *t, long n, char m)
{
    long nint = n * t->ext;
    for (int inplace = 0; inplace < 2; inplace++) {
        int *s = alloc_ints(nint), *r = alloc_ints(nint), *w = alloc_ints(nint);
        for (long i = 0; i < n; i++) {
            put(t, inplace ? r : s, i, rank, i);
            put_sum(t, w, i, i);
        }
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Allreduce(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iallreduce(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, &_r),
            MPI_Allreduce_init(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
        check(inplace ? "allreduce(in place)" : "allreduce", t, n, r, w, nint);
        free(s);
        free(r);
        free(w);
    }
}

static void test_gather_scatter(const dtype_t *t, long n, char m)
{
    long bint = n * t->ext, nint = bint * size;
    for (int inplace = 0; inplace < 2; inplace++) {
        for (int root = 0; root < size; root += (size > 2 ? size - 1 : 1)) {
            /* gather */
            int *s = alloc_ints(bint), *r = alloc_ints(nint), *w = alloc_ints(nint);
            for (long i = 0; i < n; i++) {
                put(t, s, i, rank, i);
            }
            for (int q = 0; q < size; q++) {
                for (long i = 0; i < n; i++) {
                    put(t, w, q * n + i, q, i);
                }
            }
            if (inplace && rank == root) {
                for (long i = 0; i < n; i++) {
                    put(t, r, rank * n + i, rank, i);
                }
            }
            const void *sb = (inplace && rank == root) ? MPI_IN_PLACE : s;
            RUN(m, MPI_Gather(sb, (int)n, t->dt, r, (int)n, t->dt, root, MPI_COMM_WORLD),
                MPI_Igather(sb, (int)n, t->dt, r, (int)n, t->dt, root, MPI_COMM_WORLD, &_r),
                MPI_Gather_init(sb, (int)n, t->dt, r, (int)n, t->dt, root, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &_r));
            if (rank == root) {
                check("gather", t, n, r, w, nint);
            }
            /* scatter: the root's full buffer is w; everyone gets its block */
            int *rr = alloc_ints(bint), *ww = alloc_ints(bint);
            for (long i = 0; i < n; i++) {
                put(t, ww, i, rank, i);
            }
            void *rb = (inplace && rank == root) ? MPI_IN_PLACE : rr;
            RUN(m, MPI_Scatter(w, (int)n, t->dt, rb, (int)n, t->dt, root, MPI_COMM_WORLD),
                MPI_Iscatter(w, (int)n, t->dt, rb, (int)n, t->dt, root, MPI_COMM_WORLD, &_r),
                MPI_Scatter_init(w, (int)n, t->dt, rb, (int)n, t->dt, root, MPI_COMM_WORLD,
                                 MPI_INFO_NULL, &_r));
            if (!(inplace && rank == root)) {
                check("scatter", t, n, rr, ww, bint);
            }
            free(s);
            free(r);
            free(w);
            free(rr);
            free(ww);
        }
    }
}

static void test_allgather_alltoall(const dtype_t *t, long n, char m)
{
    long bint = n * t->ext, nint = bint * size;
    for (int inplace = 0; inplace < 2; inplace++) {
        int *s = alloc_ints(bint), *r = alloc_ints(nint), *w = alloc_ints(nint);
        for (long i = 0; i < n; i++) {
            put(t, s, i, rank, i);
            if (inplace) {
                put(t, r, rank * n + i, rank, i);
            }
        }
        for (int q = 0; q < size; q++) {
            for (long i = 0; i < n; i++) {
                put(t, w, q * n + i, q, i);
            }
        }
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Allgather(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD),
            MPI_Iallgather(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD, &_r),
            MPI_Allgather_init(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &_r));
        check(inplace ? "allgather(in place)" : "allgather", t, n, r, w, nint);
        free(s);
        free(r);
        free(w);

        /* alltoall: block q of rank p's send buffer = val(p, q*n + i) */
        s = alloc_ints(nint), r = alloc_ints(nint), w = alloc_ints(nint);
        for (int q = 0; q < size; q++) {
            for (long i = 0; i < n; i++) {
                put(t, inplace ? r : s, q * n + i, rank, q * n + i);
                put(t, w, q * n + i, q, rank * n + i);
            }
        }
        sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Alltoall(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD),
            MPI_Ialltoall(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD, &_r),
            MPI_Alltoall_init(sb, (int)n, t->dt, r, (int)n, t->dt, MPI_COMM_WORLD, MPI_INFO_NULL,
                              &_r));
        check(inplace ? "alltoall(in place)" : "alltoall", t, n, r, w, nint);
        free(s);
        free(r);
        free(w);
    }
}

/* v-forms: rank q contributes (n + q) % (n + 2) elements, blocks placed in
 * reverse order with a one-element gap. */
static void vlayout(long n, int *counts, int *displs, long *total)
{
    long at = 0;
    for (int q = size - 1; q >= 0; q--) {
        counts[q] = (int)((n + q) % (n + 2));
        displs[q] = (int)at;
        at += counts[q] + 1;
    }
    *total = at;
}

static void test_vforms(const dtype_t *t, long n, char m)
{
    int  *counts = malloc(size * sizeof(int)), *displs = malloc(size * sizeof(int));
    long  total;
    vlayout(n, counts, displs, &total);
    long  nint = total * t->ext, mine = counts[rank];
    int  *s = alloc_ints(mine * t->ext), *r = alloc_ints(nint), *w = alloc_ints(nint);
    int   root = size - 1;

    for (long i = 0; i < mine; i++) {
        put(t, s, i, rank, i);
    }
    for (int q = 0; q < size; q++) {
        for (long i = 0; i < counts[q]; i++) {
            put(t, w, displs[q] + i, q, i);
        }
    }
    RUN(m, MPI_Gatherv(s, (int)mine, t->dt, r, counts, displs, t->dt, root, MPI_COMM_WORLD),
        MPI_Igatherv(s, (int)mine, t->dt, r, counts, displs, t->dt, root, MPI_COMM_WORLD, &_r),
        MPI_Gatherv_init(s, (int)mine, t->dt, r, counts, displs, t->dt, root, MPI_COMM_WORLD,
                         MPI_INFO_NULL, &_r));
    if (rank == root) {
        check("gatherv", t, n, r, w, nint);
    }
    int *rr = alloc_ints(mine * t->ext), *ws = alloc_ints(mine * t->ext);
    for (long i = 0; i < mine; i++) {
        put(t, ws, i, rank, i);
    }
    RUN(m, MPI_Scatterv(w, counts, displs, t->dt, rr, (int)mine, t->dt, root, MPI_COMM_WORLD),
        MPI_Iscatterv(w, counts, displs, t->dt, rr, (int)mine, t->dt, root, MPI_COMM_WORLD, &_r),
        MPI_Scatterv_init(w, counts, displs, t->dt, rr, (int)mine, t->dt, root, MPI_COMM_WORLD,
                          MPI_INFO_NULL, &_r));
    check("scatterv", t, n, rr, ws, mine * t->ext);
    for (int inplace = 0; inplace < 2; inplace++) {
        for (long i = 0; i < nint; i++) {
            r[i] = SENT;
        }
        if (inplace) {
            for (long i = 0; i < mine; i++) {
                put(t, r, displs[rank] + i, rank, i);
            }
        }
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Allgatherv(sb, (int)mine, t->dt, r, counts, displs, t->dt, MPI_COMM_WORLD),
            MPI_Iallgatherv(sb, (int)mine, t->dt, r, counts, displs, t->dt, MPI_COMM_WORLD, &_r),
            MPI_Allgatherv_init(sb, (int)mine, t->dt, r, counts, displs, t->dt, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &_r));
        check(inplace ? "allgatherv(in place)" : "allgatherv", t, n, r, w, nint);
    }
    free(rr);
    free(ws);
    free(s);
    free(r);
    free(w);

    /* alltoallv: rank p sends (n + p + q) % (n + 2) elements to q */
    int *sc = malloc(size * sizeof(int)), *sd = malloc(size * sizeof(int));
    int *rc = malloc(size * sizeof(int)), *rd = malloc(size * sizeof(int));
    long sat = 0, rat = 0;
    for (int q = 0; q < size; q++) {
        sc[q] = (int)((n + rank + q) % (n + 2));
        rc[q] = (int)((n + q + rank) % (n + 2));
        sd[q] = (int)sat, rd[q] = (int)rat;
        sat += sc[q] + 1, rat += rc[q] + 1;
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        s = alloc_ints(sat * t->ext), r = alloc_ints(rat * t->ext), w = alloc_ints(rat * t->ext);
        for (int q = 0; q < size; q++) {
            for (long i = 0; i < sc[q]; i++) {
                put(t, s, sd[q] + i, rank, q * 1000 + i);
            }
            for (long i = 0; i < rc[q]; i++) {
                put(t, w, rd[q] + i, q, rank * 1000 + i);
                if (inplace) {
                    put(t, r, rd[q] + i, rank, q * 1000 + i);
                }
            }
        }
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Alltoallv(sb, sc, sd, t->dt, r, rc, rd, t->dt, MPI_COMM_WORLD),
            MPI_Ialltoallv(sb, sc, sd, t->dt, r, rc, rd, t->dt, MPI_COMM_WORLD, &_r),
            MPI_Alltoallv_init(sb, sc, sd, t->dt, r, rc, rd, t->dt, MPI_COMM_WORLD, MPI_INFO_NULL,
                               &_r));
        check(inplace ? "alltoallv(in place)" : "alltoallv", t, n, r, w, rat * t->ext);
        /* alltoallw: same exchange, byte displacements, per-peer types */
        MPI_Datatype *types_ = malloc(size * sizeof(MPI_Datatype));
        int          *sdb = malloc(size * sizeof(int)), *rdb = malloc(size * sizeof(int));
        for (int q = 0; q < size; q++) {
            types_[q] = t->dt;
            sdb[q]    = sd[q] * t->ext * (int)sizeof(int);
            rdb[q]    = rd[q] * t->ext * (int)sizeof(int);
        }
        for (long i = 0; i < rat * t->ext; i++) {
            r[i] = SENT;
        }
        if (inplace) {
            for (int q = 0; q < size; q++) {
                for (long i = 0; i < rc[q]; i++) {
                    put(t, r, rd[q] + i, rank, q * 1000 + i);
                }
            }
        }
        RUN(m, MPI_Alltoallw(sb, sc, sdb, types_, r, rc, rdb, types_, MPI_COMM_WORLD),
            MPI_Ialltoallw(sb, sc, sdb, types_, r, rc, rdb, types_, MPI_COMM_WORLD, &_r),
            MPI_Alltoallw_init(sb, sc, sdb, types_, r, rc, rdb, types_, MPI_COMM_WORLD,
                               MPI_INFO_NULL, &_r));
        check(inplace ? "alltoallw(in place)" : "alltoallw", t, n, r, w, rat * t->ext);
        free(types_);
        free(sdb);
        free(rdb);
        free(s);
        free(r);
        free(w);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
    free(counts);
    free(displs);
}

static void test_reduce_scatter_scan(const dtype_t *t, long n, char m)
{
    int *counts = malloc(size * sizeof(int));
    long total  = 0;
    for (int q = 0; q < size; q++) {
        counts[q] = (int)((n + q) % (n + 2));
        total += counts[q];
    }
    long off = 0;
    for (int q = 0; q < rank; q++) {
        off += counts[q];
    }
    for (int inplace = 0; inplace < 2; inplace++) {
        int *s = alloc_ints(total * t->ext), *r = alloc_ints(total * t->ext);
        int *w = alloc_ints(counts[rank] * t->ext);
        for (long i = 0; i < total; i++) {
            put(t, inplace ? r : s, i, rank, i);
        }
        for (long i = 0; i < counts[rank]; i++) {
            put_sum(t, w, i, off + i);
        }
        const void *sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Reduce_scatter(sb, r, counts, t->dt, MPI_SUM, MPI_COMM_WORLD),
            MPI_Ireduce_scatter(sb, r, counts, t->dt, MPI_SUM, MPI_COMM_WORLD, &_r),
            MPI_Reduce_scatter_init(sb, r, counts, t->dt, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                    &_r));
        check("reduce_scatter", t, n, r, w, counts[rank] * t->ext);
        free(s);
        free(r);
        free(w);

        /* block form: n elements per rank */
        s = alloc_ints(n * size * t->ext), r = alloc_ints(n * size * t->ext);
        w = alloc_ints(n * t->ext);
        for (long i = 0; i < n * size; i++) {
            put(t, inplace ? r : s, i, rank, i);
        }
        for (long i = 0; i < n; i++) {
            put_sum(t, w, i, rank * n + i);
        }
        sb = inplace ? MPI_IN_PLACE : s;
        RUN(m, MPI_Reduce_scatter_block(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD),
            MPI_Ireduce_scatter_block(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, &_r),
            MPI_Reduce_scatter_block_init(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD,
                                          MPI_INFO_NULL, &_r));
        check("reduce_scatter_block", t, n, r, w, n * t->ext);
        free(s);
        free(r);
        free(w);

        /* scan / exscan */
        s = alloc_ints(n * t->ext), r = alloc_ints(n * t->ext), w = alloc_ints(n * t->ext);
        int *we = alloc_ints(n * t->ext);
        sb      = inplace ? MPI_IN_PLACE : s;
        for (long i = 0; i < n; i++) {
            put(t, inplace ? r : s, i, rank, i);
            for (int c = 0; c < t->k; c++) {
                int acc = 0;
                for (int q = 0; q < rank; q++) {
                    acc += val(q, i, c);
                }
                we[i * t->ext + t->off[c]] = acc;
                w[i * t->ext + t->off[c]]  = acc + val(rank, i, c);
            }
        }
        RUN(m, MPI_Scan(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iscan(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, &_r),
            MPI_Scan_init(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
        check("scan", t, n, r, w, n * t->ext);
        for (long i = 0; i < n * t->ext; i++) {
            r[i] = SENT;
        }
        for (long i = 0; i < n; i++) {
            if (inplace) {
                put(t, r, i, rank, i);
            }
        }
        RUN(m, MPI_Exscan(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD),
            MPI_Iexscan(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, &_r),
            MPI_Exscan_init(sb, r, (int)n, t->dt, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
        if (rank > 0) {
            check("exscan", t, n, r, we, n * t->ext);
        }
        free(s);
        free(r);
        free(w);
        free(we);
    }
    free(counts);
}

/* ---- non-commutative op: composition of affine maps t -> a t + b ------ */

static void affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    unsigned *f = in, *g = inout;
    (void)dt;
    for (int i = 0; i < *len; i++) {
        unsigned a = g[2 * i] * f[2 * i], b = g[2 * i] * f[2 * i + 1] + g[2 * i + 1];
        g[2 * i]     = a;
        g[2 * i + 1] = b;
    }
}

static void aff_val(int r, long i, unsigned *p)
{
    p[0] = (unsigned)(r * 2 + 3 + i);
    p[1] = (unsigned)(r * 5 + 1 + 2 * i);
}

/* fold of ranks [lo, hi) in order */
static void aff_ref(int lo, int hi, long i, unsigned *out)
{
    unsigned acc[2] = { 1, 0 };
    for (int r = lo; r < hi; r++) {
        unsigned f[2];
        aff_val(r, i, f);
        unsigned a = f[0] * acc[0], b = f[0] * acc[1] + f[1];
        acc[0] = a, acc[1] = b;
    }
    out[0] = acc[0], out[1] = acc[1];
}

static void test_noncommutative(long n, char m)
{
    unsigned *s = malloc((n * size + 1) * 2 * sizeof(unsigned));
    unsigned *r = malloc((n * size + 1) * 2 * sizeof(unsigned));
    unsigned  w[2];
    for (long i = 0; i < n * size; i++) {
        aff_val(rank, i, &s[2 * i]);
    }
    int root = size / 2;
    RUN(m, MPI_Reduce(s, r, (int)n, affine_t, affine_op, root, MPI_COMM_WORLD),
        MPI_Ireduce(s, r, (int)n, affine_t, affine_op, root, MPI_COMM_WORLD, &_r),
        MPI_Reduce_init(s, r, (int)n, affine_t, affine_op, root, MPI_COMM_WORLD, MPI_INFO_NULL,
                        &_r));
    for (long i = 0; rank == root && i < n; i++) {
        aff_ref(0, size, i, w);
        CHECK(r[2 * i] == w[0] && r[2 * i + 1] == w[1], "noncommutative reduce elem %ld", i);
    }
    RUN(m, MPI_Allreduce(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD),
        MPI_Iallreduce(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, &_r),
        MPI_Allreduce_init(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
    for (long i = 0; i < n; i++) {
        aff_ref(0, size, i, w);
        CHECK(r[2 * i] == w[0] && r[2 * i + 1] == w[1], "noncommutative allreduce elem %ld", i);
    }
    RUN(m, MPI_Scan(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD),
        MPI_Iscan(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, &_r),
        MPI_Scan_init(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
    for (long i = 0; i < n; i++) {
        aff_ref(0, rank + 1, i, w);
        CHECK(r[2 * i] == w[0] && r[2 * i + 1] == w[1], "noncommutative scan elem %ld", i);
    }
    RUN(m, MPI_Exscan(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD),
        MPI_Iexscan(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, &_r),
        MPI_Exscan_init(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, MPI_INFO_NULL, &_r));
    for (long i = 0; rank > 0 && i < n; i++) {
        aff_ref(0, rank, i, w);
        CHECK(r[2 * i] == w[0] && r[2 * i + 1] == w[1], "noncommutative exscan elem %ld", i);
    }
    RUN(m, MPI_Reduce_scatter_block(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD),
        MPI_Ireduce_scatter_block(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD, &_r),
        MPI_Reduce_scatter_block_init(s, r, (int)n, affine_t, affine_op, MPI_COMM_WORLD,
                                      MPI_INFO_NULL, &_r));
    for (long i = 0; i < n; i++) {
        aff_ref(0, size, rank * n + i, w);
        CHECK(r[2 * i] == w[0] && r[2 * i + 1] == w[1], "noncommutative reduce_scatter_block elem %ld",
              i);
    }
    free(s);
    free(r);
}

int main(int argc, char **argv)
{
    long maxcount = argc > 1 ? atol(argv[1]) : 262144;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    trace = getenv("COLL_ALL_TRACE") != NULL;
    if (argc > 2) {
        modes = argv[2];
    }
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Type_contiguous(2, MPI_UNSIGNED, &affine_t);
    MPI_Type_commit(&affine_t);
    MPI_Op_create(affine, 0, &affine_op);
    types[0] = (dtype_t){ MPI_INT, 1, 1, { 0, 0 }, "MPI_INT" };
    types[1] = (dtype_t){ vec, 2, 4, { 0, 3 }, "vector(2,1,3)" };

    const long counts[] = { 0, 1, 7, 4096, 262144 };
    for (const char *m = modes; *m; m++) {
        CHECK_OK(*m == 'b' ? MPI_Barrier(MPI_COMM_WORLD) : MPI_SUCCESS);
        for (int ti = 0; ti < 2; ti++) {
            for (size_t ci = 0; ci < sizeof(counts) / sizeof(counts[0]); ci++) {
                long n = counts[ci];
                if (n > maxcount || (ti == 1 && n > 4096) || (*m != 'b' && n > 4096)) {
                    continue;
                }
                long nb = n >= 262144 ? n / size : n; /* per-rank blocks: 1 MiB in total */
                test_bcast(&types[ti], n, *m);
                test_reduce(&types[ti], n, *m);
                test_allreduce(&types[ti], n, *m);
                test_gather_scatter(&types[ti], nb, *m);
                test_allgather_alltoall(&types[ti], nb, *m);
                test_vforms(&types[ti], nb, *m);
                test_reduce_scatter_scan(&types[ti], nb, *m);
            }
        }
        for (size_t ci = 0; ci < 4; ci++) {
            test_noncommutative(counts[ci], *m);
        }
        if (*m == 'n') {
            MPI_Request r;
            CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &r));
            CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        }
    }
    MPI_Op_free(&affine_op);
    MPI_Type_free(&vec);
    MPI_Type_free(&affine_t);
    return mpitest_finish();
}
