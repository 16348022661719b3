/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Datatype engine property test. Random nested datatypes (fixed seed) are
 * built with the engine's constructors; a reference that knows nothing of
 * the engine's plan or layout interprets only the construction record
 * (combiner + get_contents arrays) element by element, and everything the
 * engine produces is compared byte for byte with it: pack (whole and in
 * random pieces), unpack (into a patterned buffer, holes must survive), iov
 * coverage, copy, elements, external32, bounds and sizes. Then fixed cases:
 * predefined sizes, darray ownership, external32 golden bytes.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype_internal.h"

static int failures;
#define CHECK(_c, ...)                                                   \
    do {                                                                 \
        if (!(_c)) {                                                     \
            if (failures++ < 20) {                                       \
                fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__,   \
                        __LINE__, #_c);                                  \
                fprintf(stderr, __VA_ARGS__);                            \
                fputc('\n', stderr);                                     \
            }                                                            \
        }                                                                \
    } while (0)

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}
static long rr(long lo, long hi) /* inclusive */
{
    return lo + (long)(rnd() % (uint64_t)(hi - lo + 1));
}

static weft_datatype_t *B(MPI_Datatype h)
{
    return weft_dt_builtin(h);
}

/* ------------------------------------------------------------------ */
/* Reference: interprets the construction record only.                 */

typedef struct {
    MPI_Aint         disp;
    MPI_Count        count;
    weft_datatype_t *type;
} run_t;

typedef struct {
    run_t *runs;
    int    n, cap;
} runs_t;

static void add_run(runs_t *r, MPI_Aint disp, MPI_Count count, weft_datatype_t *t)
{
    if (r->n == r->cap) {
        r->cap  = r->cap ? 2 * r->cap : 16;
        r->runs = realloc(r->runs, (size_t)r->cap * sizeof(run_t));
    }
    r->runs[r->n++] = (run_t){ disp, count, t };
}

typedef struct {
    MPI_Aint lb, ub;
    int      sticky, align;
} ref_info_t;

static ref_info_t ref_info(weft_datatype_t *dt);
typedef struct walk walk_t;
struct walk {
    char         *buf;
    unsigned char *stream;
    MPI_Count     pos;
    MPI_Count     nelems;
    MPI_Aint      tlb, tub;
    int           any, unpack, ext32;
};
static MPI_Count ref_stream(weft_datatype_t *dt, MPI_Count count, char *buf, unsigned char *s,
                            int unpack, int ext32, walk_t *stats);

static MPI_Aint ref_extent(weft_datatype_t *dt)
{
    ref_info_t i = ref_info(dt);
    return i.ub - i.lb;
}

/* Arguments of the record, whichever binding made the type. */
typedef struct {
    MPI_Count v[4096];
    int       n;
} args_t;

static void record(weft_datatype_t *dt, args_t *ints, args_t *addrs)
{
    weft_dt_engine_t *e = weft_dt_engine(dt);
    ints->n = addrs->n = 0;
    /* Large bindings keep every count/displacement in larges; map them back
     * to the standard (int, address) positions per combiner. */
    if (!e->large) {
        for (MPI_Count i = 0; i < e->nints; i++) {
            ints->v[ints->n++] = e->ints[i];
        }
        for (MPI_Count i = 0; i < e->naddrs; i++) {
            addrs->v[addrs->n++] = e->addrs[i];
        }
        return;
    }
    MPI_Count *L = e->larges;
    MPI_Count  n;
    switch (dt->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
        for (MPI_Count i = 0; i < e->nlarge; i++) {
            ints->v[ints->n++] = L[i];
        }
        break;
    case MPI_COMBINER_HVECTOR:
        ints->v[ints->n++] = L[0];
        ints->v[ints->n++] = L[1];
        addrs->v[addrs->n++] = L[2];
        break;
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_STRUCT:
        n = L[0];
        for (MPI_Count i = 0; i <= n; i++) {
            ints->v[ints->n++] = L[i];
        }
        for (MPI_Count i = 0; i < n; i++) {
            addrs->v[addrs->n++] = L[1 + n + i];
        }
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        n = L[0];
        ints->v[ints->n++] = L[0];
        ints->v[ints->n++] = L[1];
        for (MPI_Count i = 0; i < n; i++) {
            addrs->v[addrs->n++] = L[2 + i];
        }
        break;
    case MPI_COMBINER_RESIZED:
        addrs->v[addrs->n++] = L[0];
        addrs->v[addrs->n++] = L[1];
        break;
    case MPI_COMBINER_SUBARRAY: {
        int nd = e->ints[0];
        ints->v[ints->n++] = nd;
        for (int i = 0; i < 3 * nd; i++) {
            ints->v[ints->n++] = L[i];
        }
        ints->v[ints->n++] = e->ints[1];
        break;
    }
    default:
        fprintf(stderr, "unexpected large combiner %d\n", dt->combiner);
        abort();
    }
}

static void subarray_runs(int nd, const MPI_Count *sizes, const MPI_Count *sub,
                          const MPI_Count *starts, int order, weft_datatype_t *old, runs_t *r)
{
    /* every row of the fastest dimension, rows in array order */
    MPI_Aint  ext = ref_extent(old);
    MPI_Count idx[8] = { 0 };
    int       fast = order == MPI_ORDER_C ? nd - 1 : 0;
    for (int d = 0; d < nd; d++) {
        if (sub[d] == 0) {
            return;
        }
    }
    for (;;) {
        MPI_Count lin = 0;
        for (int j = 0; j < nd; j++) {
            int d = order == MPI_ORDER_C ? j : nd - 1 - j; /* slowest first */
            lin   = lin * sizes[d] + starts[d] + (d == fast ? 0 : idx[d]);
        }
        add_run(r, (MPI_Aint)lin * ext, sub[fast], old);
        int j;
        for (j = 0; j < nd; j++) { /* increment, fastest non-row dim first */
            int d = order == MPI_ORDER_C ? nd - 1 - j : j;
            if (d == fast) {
                continue;
            }
            if (++idx[d] < sub[d]) {
                break;
            }
            idx[d] = 0;
        }
        if (j == nd) {
            return;
        }
    }
}

static runs_t ref_runs(weft_datatype_t *dt)
{
    weft_dt_engine_t *e = weft_dt_engine(dt);
    runs_t            r  = { 0 };
    args_t           *pi = malloc(sizeof(args_t)), *pa = malloc(sizeof(args_t));
    args_t            I, A; /* only .n is used from these copies */
    record(dt, pi, pa);
    I.n = pi->n;
    A.n = pa->n;
    MPI_Count *iv = pi->v;
    MPI_Count *av = pa->v;
    MPI_Aint   ext = e->ntypes > 0 ? ref_extent(e->types[0]) : 0;
    weft_datatype_t *old = e->ntypes > 0 ? e->types[0] : NULL;
    switch (dt->combiner) {
    case MPI_COMBINER_CONTIGUOUS:
        add_run(&r, 0, iv[0], old);
        break;
    case MPI_COMBINER_VECTOR:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)(i * iv[2]) * ext, iv[1], old);
        }
        break;
    case MPI_COMBINER_HVECTOR:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)(i * av[0]), iv[1], old);
        }
        break;
    case MPI_COMBINER_INDEXED:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)iv[1 + iv[0] + i] * ext, iv[1 + i], old);
        }
        break;
    case MPI_COMBINER_HINDEXED:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)av[i], iv[1 + i], old);
        }
        break;
    case MPI_COMBINER_INDEXED_BLOCK:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)iv[2 + i] * ext, iv[1], old);
        }
        break;
    case MPI_COMBINER_HINDEXED_BLOCK:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)av[i], iv[1], old);
        }
        break;
    case MPI_COMBINER_STRUCT:
        for (MPI_Count i = 0; i < iv[0]; i++) {
            add_run(&r, (MPI_Aint)av[i], iv[1 + i], e->types[i]);
        }
        break;
    case MPI_COMBINER_RESIZED:
    case MPI_COMBINER_DUP:
        add_run(&r, 0, 1, old);
        break;
    case MPI_COMBINER_SUBARRAY: {
        int nd = (int)iv[0];
        subarray_runs(nd, iv + 1, iv + 1 + nd, iv + 1 + 2 * nd, (int)iv[1 + 3 * nd], old, &r);
        break;
    }
    default:
        fprintf(stderr, "reference: combiner %d not handled\n", dt->combiner);
        abort();
    }
    (void)I;
    (void)A;
    free(pi);
    free(pa);
    return r;
}

/* Predefined leaves used by the generator: pieces (offset, size). */
typedef struct {
    MPI_Datatype h;
    int          npieces;
    int          off[2], size[2];
    MPI_Aint     extent;
    int          align;
} leaf_t;

struct si { short a; int b; };
struct di { double a; int b; };
static leaf_t leaves[] = {
    { MPI_BYTE, 1, { 0 }, { 1 }, 1, 1 },
    { MPI_CHAR, 1, { 0 }, { 1 }, 1, 1 },
    { MPI_INT, 1, { 0 }, { 4 }, 4, 4 },
    { MPI_DOUBLE, 1, { 0 }, { 8 }, 8, 8 },
    { MPI_FLOAT, 1, { 0 }, { 4 }, 4, 4 },
    { MPI_SHORT_INT, 2, { 0, offsetof(struct si, b) }, { 2, 4 }, sizeof(struct si), 4 },
    { MPI_DOUBLE_INT, 2, { 0, offsetof(struct di, b) }, { 8, 4 }, sizeof(struct di), 8 },
};
#define NLEAVES ((int)(sizeof(leaves) / sizeof(leaves[0])))

static const leaf_t *leaf_of(const weft_datatype_t *dt)
{
    for (int i = 0; i < NLEAVES; i++) {
        if (B(leaves[i].h) == dt) {
            return &leaves[i];
        }
    }
    return NULL;
}

static ref_info_t ref_info(weft_datatype_t *dt)
{
    ref_info_t out = { 0, 0, 0, 1 };
    if (dt->combiner == MPI_COMBINER_NAMED) {
        const leaf_t *l = leaf_of(dt);
        out.ub    = l->extent;
        out.align = l->align;
        return out;
    }
    runs_t r   = ref_runs(dt);
    int    any = 0;
    for (int i = 0; i < r.n; i++) {
        if (r.runs[i].count == 0) {
            continue;
        }
        ref_info_t c  = ref_info(r.runs[i].type);
        walk_t     cw;
        ref_stream(r.runs[i].type, 1, NULL, NULL, 0, 0, &cw);
        if (!cw.any && !c.sticky) {
            continue; /* empty type map: no data, no explicit bounds */
        }
        MPI_Aint   ce = c.ub - c.lb;
        MPI_Aint   lo = r.runs[i].disp + (ce < 0 ? (r.runs[i].count - 1) * ce : 0) + c.lb;
        MPI_Aint   hi = r.runs[i].disp + (ce > 0 ? (r.runs[i].count - 1) * ce : 0) + c.ub;
        if (!any || lo < out.lb) {
            out.lb = lo;
        }
        if (!any || hi > out.ub) {
            out.ub = hi;
        }
        any = 1;
        out.sticky |= c.sticky;
        if (c.align > out.align) {
            out.align = c.align;
        }
    }
    free(r.runs);
    if (dt->combiner == MPI_COMBINER_STRUCT && (out.ub - out.lb) % out.align) {
        out.ub += out.align - (out.ub - out.lb) % out.align;
    }
    if (dt->combiner == MPI_COMBINER_RESIZED) {
        args_t *I = malloc(sizeof(*I)), *A = malloc(sizeof(*A));
        record(dt, I, A);
        out.lb     = A->v[0];
        out.ub     = A->v[0] + A->v[1];
        free(I);
        free(A);
        out.sticky = 1;
    }
    if (dt->combiner == MPI_COMBINER_SUBARRAY) {
        args_t *I = malloc(sizeof(*I)), *A = malloc(sizeof(*A));
        record(dt, I, A);
        MPI_Aint n = 1;
        for (int d = 0; d < I->v[0]; d++) {
            n *= I->v[1 + d];
        }
        free(I);
        free(A);
        out.lb     = 0;
        out.ub     = n * ref_extent(weft_dt_engine(dt)->types[0]);
        out.sticky = 1;
    }
    return out;
}

/* Visit every basic piece (offset from buf, size) in type-map order. */
typedef void (*visit_fn)(MPI_Aint disp, int size, const leaf_t *l, int piece, void *arg);

static void ref_walk(weft_datatype_t *dt, MPI_Aint disp, visit_fn fn, void *arg)
{
    if (dt->combiner == MPI_COMBINER_NAMED) {
        const leaf_t *l = leaf_of(dt);
        for (int p = 0; p < l->npieces; p++) {
            fn(disp + l->off[p], l->size[p], l, p, arg);
        }
        return;
    }
    runs_t r = ref_runs(dt);
    for (int i = 0; i < r.n; i++) {
        MPI_Aint ce = ref_extent(r.runs[i].type);
        for (MPI_Count k = 0; k < r.runs[i].count; k++) {
            ref_walk(r.runs[i].type, disp + r.runs[i].disp + k * ce, fn, arg);
        }
    }
    free(r.runs);
}


static void visit(MPI_Aint disp, int size, const leaf_t *l, int piece, void *arg)
{
    walk_t *w = arg;
    (void)l;
    (void)piece;
    if (w->ext32) { /* all leaves used here are byte-reversed scalars */
        for (int i = 0; i < size; i++) {
            w->stream[w->pos + i] = (unsigned char)w->buf[disp + size - 1 - i];
        }
        if (size == 1) {
            w->stream[w->pos] = (unsigned char)w->buf[disp];
        }
    } else if (w->unpack) {
        memcpy(w->buf + disp, w->stream + w->pos, (size_t)size);
    } else if (w->stream != NULL) {
        memcpy(w->stream + w->pos, w->buf + disp, (size_t)size);
    }
    w->pos += size;
    w->nelems++;
    if (!w->any || disp < w->tlb) {
        w->tlb = disp;
    }
    if (!w->any || disp + size > w->tub) {
        w->tub = disp + size;
    }
    w->any = 1;
}

static MPI_Count ref_stream(weft_datatype_t *dt, MPI_Count count, char *buf, unsigned char *s,
                            int unpack, int ext32, walk_t *stats)
{
    walk_t   w   = { buf, s, 0, 0, 0, 0, 0, unpack, ext32 };
    MPI_Aint ext = ref_extent(dt);
    for (MPI_Count e = 0; e < count; e++) {
        ref_walk(dt, e * ext, visit, &w);
    }
    if (stats != NULL) {
        *stats = w;
    }
    return w.pos;
}

/* ------------------------------------------------------------------ */
/* Random types                                                        */

static weft_datatype_t *gen(int depth)
{
    if (depth == 0 || rr(0, 9) < 2) {
        return B(leaves[rr(0, NLEAVES - 1)].h);
    }
    weft_datatype_t *old   = gen(depth - 1);
    weft_datatype_t *dt    = NULL;
    int              large = (int)rr(0, 1);
    MPI_Count        n     = rr(0, 4);
    MPI_Count        bl[8], d[8];
    int              rc    = MPI_SUCCESS;
    switch (rr(0, 10)) {
    case 0:
        rc = weft_dt_contiguous(rr(0, 4), old, large, &dt);
        break;
    case 1:
        rc = weft_dt_vector(n, rr(0, 3), rr(-4, 5), 0, old, large, &dt);
        break;
    case 2:
        rc = weft_dt_vector(n, rr(0, 3), rr(-2, 3) * old->extent + rr(0, 5), 1, old, large, &dt);
        break;
    case 3:
    case 4:
    case 5:
    case 6: {
        static const int comb[] = { MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED,
                                    MPI_COMBINER_INDEXED_BLOCK, MPI_COMBINER_HINDEXED_BLOCK };
        int c = comb[rr(0, 3)];
        int h = c == MPI_COMBINER_HINDEXED || c == MPI_COMBINER_HINDEXED_BLOCK;
        for (int i = 0; i < n; i++) {
            bl[i] = rr(0, 3);
            d[i]  = h ? rr(-16, 64) : rr(-3, 8);
        }
        rc = weft_dt_indexed(c, n, bl, rr(0, 3), d, old, large, &dt);
        break;
    }
    case 7: {
        weft_datatype_t *types[4] = { old };
        n = rr(1, 3);
        for (int i = 0; i < n; i++) {
            if (i > 0) {
                types[i] = gen(depth - 1);
            }
            bl[i] = rr(0, 2);
            d[i]  = rr(-8, 64);
        }
        rc = weft_dt_struct(n, bl, d, types, large, &dt);
        for (int i = 1; i < n; i++) {
            weft_datatype_release(types[i]);
        }
        break;
    }
    case 8:
        rc = weft_dt_resized(old, old->lb + rr(-8, 8), old->extent + rr(-3, 16) > 0
                                 ? old->extent + rr(-3, 16) : 1, large, &dt);
        break;
    case 9:
        rc = weft_dt_dup(old, &dt);
        break;
    case 10: {
        MPI_Count sz[3], sub[3], st[3];
        int       nd = (int)rr(1, 3);
        for (int i = 0; i < nd; i++) {
            sz[i]  = rr(1, 4);
            sub[i] = rr(0, sz[i]);
            st[i]  = rr(0, sz[i] - sub[i]);
        }
        rc = weft_dt_subarray(nd, sz, sub, st, rr(0, 1) ? MPI_ORDER_C : MPI_ORDER_FORTRAN, old,
                              large, &dt);
        break;
    }
    }
    weft_datatype_release(old);
    if (rc != MPI_SUCCESS || dt == NULL) {
        fprintf(stderr, "constructor failed: %d\n", rc);
        abort();
    }
    return dt;
}

static void check_one(weft_datatype_t *dt, int iter)
{
    ref_info_t info  = ref_info(dt);
    MPI_Count  count = rr(1, 3);
    walk_t     st;
    MPI_Count  total = ref_stream(dt, 1, NULL, NULL, 0, 0, &st);

    CHECK(dt->size == total, "iter %d: size %lld vs reference %lld", iter, (long long)dt->size,
          (long long)total);
    CHECK(dt->lb == info.lb && dt->extent == info.ub - info.lb,
          "iter %d: lb/extent %ld/%ld vs reference %ld/%ld", iter, (long)dt->lb,
          (long)dt->extent, (long)info.lb, (long)(info.ub - info.lb));
    if (st.any) {
        CHECK(dt->true_lb == st.tlb && dt->true_extent == st.tub - st.tlb,
              "iter %d: true lb/extent %ld/%ld vs %ld/%ld", iter, (long)dt->true_lb,
              (long)dt->true_extent, (long)st.tlb, (long)(st.tub - st.tlb));
    }
    CHECK(weft_dt_engine(dt)->nelems == st.nelems, "iter %d: nelems", iter);
    if (dt->size > 1 << 16 || dt->size == 0) {
        return;
    }

    /* memory span of count elements */
    MPI_Aint ext = dt->extent;
    MPI_Aint lo  = dt->true_lb + (ext < 0 ? (count - 1) * ext : 0);
    MPI_Aint hi  = dt->true_lb + dt->true_extent + (ext > 0 ? (count - 1) * ext : 0);
    size_t   span = (size_t)(hi - lo);
    char    *mem  = malloc(span + 1), *mem2 = malloc(span + 1);
    char    *buf  = mem - lo, *buf2 = mem2 - lo;
    for (size_t i = 0; i < span; i++) {
        mem[i] = (char)rnd();
    }
    MPI_Count      S    = count * dt->size;
    unsigned char *ref  = malloc((size_t)S), *got = malloc((size_t)S);
    ref_stream(dt, count, buf, ref, 0, 0, NULL);

    /* whole pack */
    memset(got, 0xee, (size_t)S);
    CHECK(weft_dt_pack(dt, count, buf, 0, got, S) == S, "iter %d: pack length", iter);
    CHECK(memcmp(ref, got, (size_t)S) == 0, "iter %d: pack differs", iter);

    /* pack in random pieces with increasing offsets */
    memset(got, 0xee, (size_t)S);
    for (MPI_Count off = 0; off < S;) {
        MPI_Count len = rr(1, 37);
        MPI_Count n   = weft_dt_pack(dt, count, buf, off, got + off, len);
        CHECK(n == (len < S - off ? len : S - off), "iter %d: piece length", iter);
        off += n;
    }
    CHECK(memcmp(ref, got, (size_t)S) == 0, "iter %d: piecewise pack differs", iter);

    /* unpack: same effect as the reference on a patterned buffer */
    memset(mem, 0x5a, span);
    memset(mem2, 0x5a, span);
    for (MPI_Count i = 0; i < S; i++) {
        ref[i] = (unsigned char)rnd();
    }
    ref_stream(dt, count, buf, ref, 1, 0, NULL);
    for (MPI_Count off = 0; off < S;) {
        MPI_Count n = weft_dt_unpack(dt, count, buf2, off, ref + off, rr(1, 41));
        off += n;
    }
    CHECK(memcmp(mem, mem2, span) == 0, "iter %d: unpack differs", iter);

    /* iov coverage: the iovecs, concatenated, are the packed stream */
    ref_stream(dt, count, buf, ref, 0, 0, NULL);
    MPI_Count pos = 0;
    while (pos < S) {
        struct iovec iov[3];
        MPI_Count    bytes;
        int          k = weft_dt_iov(dt, count, buf, pos, iov, 3, &bytes);
        CHECK(k > 0 && bytes > 0, "iter %d: iov made no progress", iter);
        if (k <= 0 || bytes <= 0) {
            break;
        }
        MPI_Count sum = 0;
        for (int i = 0; i < k; i++) {
            CHECK(memcmp(iov[i].iov_base, ref + pos + sum, iov[i].iov_len) == 0,
                  "iter %d: iov data", iter);
            sum += (MPI_Count)iov[i].iov_len;
        }
        CHECK(sum == bytes, "iter %d: iov bytes", iter);
        pos += bytes;
    }

    /* copy to itself-shaped buffer equals unpack of the packed stream */
    memset(mem2, 0x33, span);
    CHECK(weft_dt_copy(buf, count, dt, buf2, count, dt) == S, "iter %d: copy length", iter);
    weft_dt_pack(dt, count, buf2, 0, got, S);
    CHECK(memcmp(ref, got, (size_t)S) == 0, "iter %d: copy differs", iter);

    /* elements: whole elements and basic-element boundaries */
    MPI_Count ne = weft_dt_engine(dt)->nelems;
    CHECK(weft_dt_elements(dt, S) == count * ne, "iter %d: elements", iter);
    MPI_Count e = rr(0, count * ne);
    MPI_Count b = weft_dt_elements_to_bytes(dt, e);
    CHECK(weft_dt_elements(dt, b) == e, "iter %d: elements(%lld bytes) != %lld", iter,
          (long long)b, (long long)e);

    /* external32: every leaf here is a byte-reversed scalar */
    MPI_Count x = count * weft_dt_ext32_size(dt);
    CHECK(x == S, "iter %d: ext32 size", iter);
    ref_stream(dt, count, buf, ref, 0, 1, NULL);
    weft_dt_ext32_pack(dt, count, buf, got);
    CHECK(memcmp(ref, got, (size_t)S) == 0, "iter %d: external32 differs", iter);
    memset(mem2, 0x5a, span);
    memcpy(mem, mem2, span);
    ref_stream(dt, count, buf, got, 1, 0, NULL); /* native stream into buf */
    weft_dt_ext32_pack(dt, count, buf, ref);
    weft_dt_ext32_unpack(dt, count, ref, buf2);
    CHECK(memcmp(mem, mem2, span) == 0, "iter %d: external32 round trip", iter);

    free(ref);
    free(got);
    free(mem);
    free(mem2);
}

/* ------------------------------------------------------------------ */
/* Fixed cases                                                         */

static void test_builtins(void)
{
    static const struct {
        MPI_Datatype h;
        MPI_Count    size;
        MPI_Aint     extent;
    } t[] = {
        { MPI_CHAR, 1, 1 },          { MPI_BYTE, 1, 1 },          { MPI_INT, 4, 4 },
        { MPI_DOUBLE, 8, 8 },        { MPI_LONG_DOUBLE, sizeof(long double), sizeof(long double) },
        { MPI_AINT, sizeof(MPI_Aint), sizeof(MPI_Aint) },         { MPI_COUNT, 8, 8 },
        { MPI_OFFSET, 8, 8 },        { MPI_PACKED, 1, 1 },        { MPI_C_BOOL, 1, 1 },
        { MPI_CXX_BOOL, 1, 1 },      { MPI_WCHAR, sizeof(wchar_t), sizeof(wchar_t) },
        { MPI_C_DOUBLE_COMPLEX, 16, 16 }, { MPI_CXX_LONG_DOUBLE_COMPLEX, 2 * sizeof(long double),
                                            2 * sizeof(long double) },
        { MPI_INTEGER, 4, 4 },       { MPI_REAL, 4, 4 },          { MPI_LOGICAL, 4, 4 },
        { MPI_DOUBLE_PRECISION, 8, 8 }, { MPI_COMPLEX, 8, 8 },    { MPI_DOUBLE_COMPLEX, 16, 16 },
        { MPI_CHARACTER, 1, 1 },     { MPI_INT8_T, 1, 1 },        { MPI_UINT64_T, 8, 8 },
        { MPI_REAL2, 2, 2 },         { MPI_COMPLEX4, 4, 4 },      { MPI_INTEGER16, 16, 16 },
        { MPI_COMPLEX32, 32, 32 },   { MPI_LOGICAL1, 1, 1 },
        { MPI_FLOAT_INT, 8, 8 },     { MPI_DOUBLE_INT, 12, 16 },  { MPI_LONG_INT, 12, 16 },
        { MPI_2INT, 8, 8 },          { MPI_SHORT_INT, 6, 8 },
        { MPI_LONG_DOUBLE_INT, sizeof(long double) + 4, 2 * sizeof(long double) },
        { MPI_2REAL, 8, 8 },         { MPI_2DOUBLE_PRECISION, 16, 16 }, { MPI_2INTEGER, 8, 8 },
    };
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
        weft_datatype_t *dt = B(t[i].h);
        CHECK(dt != NULL, "builtin %#lx missing", (unsigned long)(uintptr_t)t[i].h);
        if (dt == NULL) {
            continue;
        }
        CHECK(dt->size == t[i].size && dt->extent == t[i].extent, "%s: size %lld extent %ld",
              dt->name, (long long)dt->size, (long)dt->extent);
        CHECK(dt->builtin && dt->committed && weft_object_handle(dt) == (void *)t[i].h,
              "%s: flags/handle", dt->name);
    }
    /* every fixed-size handle follows the encoding rule */
    int n = 0;
    for (unsigned v = 0x240; v < 0x300; v++) {
        weft_datatype_t *dt = B((MPI_Datatype)(uintptr_t)v);
        if (dt != NULL) {
            n++;
            CHECK(dt->size == (1 << ((v >> 3) & 7)), "%s size", dt->name);
        }
    }
    CHECK(n == 30, "%d fixed-size types, expected 30", n);
    n = 0;
    for (unsigned v = 0x200; v < 0x300; v++) {
        n += B((MPI_Datatype)(uintptr_t)v) != NULL;
    }
    CHECK(n == 70, "%d predefined datatypes, expected 70 (constants.tsv)", n);
    CHECK(strcmp(B(MPI_INT)->name, "MPI_INT") == 0, "name");
    /* Get_elements of the pair types counts both members */
    CHECK(weft_dt_elements(B(MPI_DOUBLE_INT), 24) == 4, "pair elements");
    CHECK(weft_dt_elements(B(MPI_DOUBLE_INT), 20) == 3, "pair partial elements");
    CHECK(weft_dt_elements(B(MPI_INT), 6) == MPI_UNDEFINED, "undefined elements");
}

/* darray against ownership enumeration: the type map is every owned global
 * element in array order. */
static void darray_case(int ndims, const MPI_Count *g, const int *dist, const int *darg,
                        const int *ps, int order)
{
    int nprocs = 1;
    for (int d = 0; d < ndims; d++) {
        nprocs *= ps[d];
    }
    MPI_Count total = 1;
    for (int d = 0; d < ndims; d++) {
        total *= g[d];
    }
    int *arr = malloc((size_t)total * sizeof(int));
    for (MPI_Count i = 0; i < total; i++) {
        arr[i] = (int)i;
    }
    MPI_Count seen = 0;
    for (int rank = 0; rank < nprocs; rank++) {
        weft_datatype_t *dt;
        int rc = weft_dt_darray(nprocs, rank, ndims, g, dist, darg, ps, order, B(MPI_INT), 0, &dt);
        CHECK(rc == MPI_SUCCESS, "darray rc %d", rc);
        if (rc != MPI_SUCCESS) {
            continue;
        }
        int coords[4], r = rank;
        for (int d = ndims - 1; d >= 0; d--) {
            coords[d] = r % ps[d];
            r /= ps[d];
        }
        int      *got = malloc((size_t)dt->size + 1), *exp = malloc((size_t)total * sizeof(int));
        MPI_Count n   = 0;
        for (MPI_Count lin = 0; lin < total; lin++) { /* lin = memory order */
            MPI_Count rem = lin, idx[4];
            for (int j = 0; j < ndims; j++) {
                int d = order == MPI_ORDER_C ? ndims - 1 - j : j;
                idx[d] = rem % g[d];
                rem /= g[d];
            }
            int mine = 1;
            for (int d = 0; d < ndims; d++) {
                MPI_Count b = darg[d] == MPI_DISTRIBUTE_DFLT_DARG
                                  ? (dist[d] == MPI_DISTRIBUTE_CYCLIC ? 1 : (g[d] + ps[d] - 1) / ps[d])
                                  : darg[d];
                MPI_Count owner = dist[d] == MPI_DISTRIBUTE_NONE ? 0
                                : dist[d] == MPI_DISTRIBUTE_BLOCK ? idx[d] / b
                                : (idx[d] / b) % ps[d];
                mine &= owner == coords[d];
            }
            if (mine) {
                exp[n++] = (int)lin;
            }
        }
        seen += n;
        CHECK(dt->size == n * 4, "darray rank %d: size %lld, expected %lld", rank,
              (long long)dt->size, (long long)(n * 4));
        CHECK(dt->lb == 0 && dt->extent == total * 4, "darray extent");
        weft_dt_pack(dt, 1, arr, 0, got, dt->size);
        CHECK(memcmp(got, exp, (size_t)n * sizeof(int)) == 0, "darray rank %d: data", rank);
        free(got);
        free(exp);
        weft_datatype_release(dt);
    }
    CHECK(seen == total, "darray: %lld of %lld elements owned", (long long)seen, (long long)total);
    free(arr);
}

static void test_darray(void)
{
    const int B_ = MPI_DISTRIBUTE_BLOCK, C_ = MPI_DISTRIBUTE_CYCLIC, N_ = MPI_DISTRIBUTE_NONE;
    const int D_ = MPI_DISTRIBUTE_DFLT_DARG;
    for (int order = 0; order < 2; order++) {
        int o = order ? MPI_ORDER_FORTRAN : MPI_ORDER_C;
        darray_case(2, (MPI_Count[]){ 7, 5 }, (int[]){ B_, C_ }, (int[]){ D_, D_ }, (int[]){ 2, 3 }, o);
        darray_case(2, (MPI_Count[]){ 9, 8 }, (int[]){ C_, C_ }, (int[]){ 2, 3 }, (int[]){ 3, 2 }, o);
        darray_case(3, (MPI_Count[]){ 4, 6, 5 }, (int[]){ B_, N_, C_ },
                    (int[]){ 2, D_, 2 }, (int[]){ 2, 1, 2 }, o);
        darray_case(1, (MPI_Count[]){ 10 }, (int[]){ B_ }, (int[]){ 4 }, (int[]){ 3 }, o);
    }
}

static void test_external32_golden(void)
{
    struct { int i; short s; char c; double d; long double ld; } v = { 0x01020304, -2, 'A', 1.0, 1.0L };
    weft_datatype_t *types[5] = { B(MPI_INT), B(MPI_SHORT), B(MPI_CHAR), B(MPI_DOUBLE),
                                  B(MPI_LONG_DOUBLE) };
    MPI_Count bl[5] = { 1, 1, 1, 1, 1 };
    MPI_Count d[5]  = { offsetof(__typeof__(v), i), offsetof(__typeof__(v), s),
                        offsetof(__typeof__(v), c), offsetof(__typeof__(v), d),
                        offsetof(__typeof__(v), ld) };
    weft_datatype_t *dt;
    CHECK(weft_dt_struct(5, bl, d, types, 0, &dt) == MPI_SUCCESS, "struct");
    static const unsigned char golden[] = {
        0x01, 0x02, 0x03, 0x04,                         /* int 0x01020304 */
        0xff, 0xfe,                                     /* short -2 */
        0x41,                                           /* char 'A' */
        0x3f, 0xf0, 0, 0, 0, 0, 0, 0,                   /* double 1.0 */
        0x3f, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* binary128 1.0 */
    };
    unsigned char out[64];
    CHECK(weft_dt_ext32_size(dt) == (MPI_Count)sizeof(golden), "ext32 size %lld",
          (long long)weft_dt_ext32_size(dt));
    weft_dt_ext32_pack(dt, 1, &v, out);
    CHECK(memcmp(out, golden, sizeof(golden)) == 0, "external32 golden bytes");
    __typeof__(v) w;
    memset(&w, 0, sizeof(w));
    weft_dt_ext32_unpack(dt, 1, golden, &w);
    CHECK(w.i == v.i && w.s == v.s && w.c == v.c && w.d == v.d && w.ld == v.ld,
          "external32 unpack");
    weft_datatype_release(dt);
}

static void test_contig_fast_path(void)
{
    weft_datatype_t *c, *v, *r;
    CHECK(weft_dt_contiguous(100, B(MPI_DOUBLE), 0, &c) == MPI_SUCCESS, "contig");
    CHECK(c->is_contig && c->size == 800 && weft_dt_engine(c)->nseg == 1, "contig is one segment");
    CHECK(weft_dt_vector(10, 3, 5, 0, B(MPI_INT), 0, &v) == MPI_SUCCESS, "vector");
    CHECK(!v->is_contig && weft_dt_engine(v)->nseg == 1 && weft_dt_engine(v)->segs[0].n == 10,
          "vector is one strided segment");
    CHECK(v->extent == (9 * 5 + 3) * 4, "vector extent");
    /* vector of vectors collapses when rows are adjacent */
    CHECK(weft_dt_vector(4, 1, 1, 0, c, 0, &r) == MPI_SUCCESS, "vector of contig");
    CHECK(r->is_contig, "adjacent rows are contiguous");
    weft_datatype_release(c);
    weft_datatype_release(v);
    weft_datatype_release(r);
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 3000;
    weft_datatype_module_init();
    test_builtins();
    test_contig_fast_path();
    test_darray();
    test_external32_golden();
    for (int i = 0; i < iters; i++) {
        weft_datatype_t *dt = gen((int)rr(1, 4));
        check_one(dt, i);
        weft_datatype_release(dt);
    }
    if (failures) {
        fprintf(stderr, "test_datatype: %d failures\n", failures);
        return 1;
    }
    printf("test_datatype: ok (%d random types)\n", iters);
    return 0;
}
