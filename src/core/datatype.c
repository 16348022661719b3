/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Datatype engine: predefined types, the plan -> bounds/layout step shared by
 * every constructor, object lifetime, and the pack/unpack/iov/copy/elements
 * walkers over the packed stream (datatype.h has the stream model).
 */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>
#include "core/datatype_internal.h"
#include "core/errors.h"

weft_datatype_t *weft_builtin_datatype[0x100];

/* ------------------------------------------------------------------ */
/* Predefined datatypes                                                */

#define ALIGN_OF(_t) ((int)_Alignof(_t))

typedef struct {
    unsigned    handle;
    const char *name;
    int         size;
    int         align;
    int         conv;
    int         ext_unit; /* external32 bytes per unit */
    int         nunits;
} builtin_desc_t;

#define C_TYPE(_h, _name, _t, _conv, _eu) { _h, _name, (int)sizeof(_t), ALIGN_OF(_t), _conv, _eu, 1 }
#define C_CPLX(_h, _name, _t, _conv, _eu) \
    { _h, _name, (int)sizeof(_t _Complex), ALIGN_OF(_t), _conv, _eu, 2 }
#define FIXED(_h, _name, _conv, _nunits)                                                   \
    { _h, _name, 1 << ((_h >> 3) & 7), (1 << ((_h >> 3) & 7)) / (_nunits) > 16             \
                                           ? 16 : (1 << ((_h >> 3) & 7)) / (_nunits),      \
      _conv, (1 << ((_h >> 3) & 7)) / (_nunits), _nunits }

enum { SWAP = WEFT_DT_CONV_SWAP, USWAP = WEFT_DT_CONV_USWAP, NONE = WEFT_DT_CONV_NONE, LDBL = WEFT_DT_CONV_LDOUBLE };

static const builtin_desc_t builtin_descs[] = {
    C_TYPE(0x201, "MPI_AINT", MPI_Aint, SWAP, 8),
    C_TYPE(0x202, "MPI_COUNT", MPI_Count, SWAP, 8),
    C_TYPE(0x203, "MPI_OFFSET", MPI_Offset, SWAP, 8),
    C_TYPE(0x207, "MPI_PACKED", char, NONE, 1),
    C_TYPE(0x208, "MPI_SHORT", short, SWAP, 2),
    C_TYPE(0x209, "MPI_INT", int, SWAP, 4),
    C_TYPE(0x20a, "MPI_LONG", long, SWAP, 4),
    C_TYPE(0x20b, "MPI_LONG_LONG", long long, SWAP, 8),
    C_TYPE(0x20c, "MPI_UNSIGNED_SHORT", unsigned short, SWAP, 2),
    C_TYPE(0x20d, "MPI_UNSIGNED", unsigned, SWAP, 4),
    C_TYPE(0x20e, "MPI_UNSIGNED_LONG", unsigned long, USWAP, 4),
    C_TYPE(0x20f, "MPI_UNSIGNED_LONG_LONG", unsigned long long, SWAP, 8),
    C_TYPE(0x210, "MPI_FLOAT", float, SWAP, 4),
    C_CPLX(0x212, "MPI_C_FLOAT_COMPLEX", float, SWAP, 4),
    C_CPLX(0x213, "MPI_CXX_FLOAT_COMPLEX", float, SWAP, 4),
    C_TYPE(0x214, "MPI_DOUBLE", double, SWAP, 8),
    C_CPLX(0x216, "MPI_C_DOUBLE_COMPLEX", double, SWAP, 8),
    C_CPLX(0x217, "MPI_CXX_DOUBLE_COMPLEX", double, SWAP, 8),
    C_TYPE(0x218, "MPI_LOGICAL", int32_t, SWAP, 4),
    C_TYPE(0x219, "MPI_INTEGER", int32_t, SWAP, 4),
    C_TYPE(0x21a, "MPI_REAL", float, SWAP, 4),
    C_CPLX(0x21b, "MPI_COMPLEX", float, SWAP, 4),
    C_TYPE(0x21c, "MPI_DOUBLE_PRECISION", double, SWAP, 8),
    C_CPLX(0x21d, "MPI_DOUBLE_COMPLEX", double, SWAP, 8),
    C_TYPE(0x21e, "MPI_CHARACTER", char, NONE, 1),
    C_TYPE(0x220, "MPI_LONG_DOUBLE", long double, LDBL, 16),
    C_CPLX(0x224, "MPI_C_LONG_DOUBLE_COMPLEX", long double, LDBL, 16),
    C_CPLX(0x225, "MPI_CXX_LONG_DOUBLE_COMPLEX", long double, LDBL, 16),
    C_TYPE(0x238, "MPI_C_BOOL", _Bool, NONE, 1),
    C_TYPE(0x239, "MPI_CXX_BOOL", _Bool, NONE, 1),
    C_TYPE(0x23c, "MPI_WCHAR", wchar_t, USWAP, 2),
    FIXED(0x240, "MPI_INT8_T", NONE, 1),
    FIXED(0x241, "MPI_UINT8_T", NONE, 1),
    FIXED(0x243, "MPI_CHAR", NONE, 1),
    FIXED(0x244, "MPI_SIGNED_CHAR", NONE, 1),
    FIXED(0x245, "MPI_UNSIGNED_CHAR", NONE, 1),
    FIXED(0x247, "MPI_BYTE", NONE, 1),
    FIXED(0x248, "MPI_INT16_T", SWAP, 1),
    FIXED(0x249, "MPI_UINT16_T", SWAP, 1),
    FIXED(0x250, "MPI_INT32_T", SWAP, 1),
    FIXED(0x251, "MPI_UINT32_T", SWAP, 1),
    FIXED(0x258, "MPI_INT64_T", SWAP, 1),
    FIXED(0x259, "MPI_UINT64_T", SWAP, 1),
    FIXED(0x2c0, "MPI_LOGICAL1", NONE, 1),
    FIXED(0x2c1, "MPI_INTEGER1", NONE, 1),
    FIXED(0x2c8, "MPI_LOGICAL2", SWAP, 1),
    FIXED(0x2c9, "MPI_INTEGER2", SWAP, 1),
    FIXED(0x2ca, "MPI_REAL2", SWAP, 1),
    FIXED(0x2d0, "MPI_LOGICAL4", SWAP, 1),
    FIXED(0x2d1, "MPI_INTEGER4", SWAP, 1),
    FIXED(0x2d2, "MPI_REAL4", SWAP, 1),
    FIXED(0x2d3, "MPI_COMPLEX4", SWAP, 2),
    FIXED(0x2d8, "MPI_LOGICAL8", SWAP, 1),
    FIXED(0x2d9, "MPI_INTEGER8", SWAP, 1),
    FIXED(0x2da, "MPI_REAL8", SWAP, 1),
    FIXED(0x2db, "MPI_COMPLEX8", SWAP, 2),
    FIXED(0x2e0, "MPI_LOGICAL16", SWAP, 1),
    FIXED(0x2e1, "MPI_INTEGER16", SWAP, 1),
    FIXED(0x2e2, "MPI_REAL16", SWAP, 1),
    FIXED(0x2e3, "MPI_COMPLEX16", SWAP, 2),
    FIXED(0x2eb, "MPI_COMPLEX32", SWAP, 2),
};
#define N_LEAVES ((int)(sizeof(builtin_descs) / sizeof(builtin_descs[0])))

/* Pair types (MINLOC/MAXLOC): the true C struct layouts. */
struct pair_float_int { float v; int i; };
struct pair_double_int { double v; int i; };
struct pair_long_int { long v; int i; };
struct pair_2int { int v; int i; };
struct pair_short_int { short v; int i; };
struct pair_ldouble_int { long double v; int i; };
struct pair_2real { float v; float i; };
struct pair_2dp { double v; double i; };

typedef struct {
    unsigned    handle;
    const char *name;
    unsigned    first, second; /* component types */
    MPI_Aint    second_off;
    MPI_Aint    extent;
} pair_desc_t;

#define PAIR(_h, _name, _s, _a, _b) \
    { _h, _name, _a, _b, (MPI_Aint)offsetof(struct _s, i), (MPI_Aint)sizeof(struct _s) }

static const pair_desc_t pair_descs[] = {
    PAIR(0x228, "MPI_FLOAT_INT", pair_float_int, 0x210, 0x209),
    PAIR(0x229, "MPI_DOUBLE_INT", pair_double_int, 0x214, 0x209),
    PAIR(0x22a, "MPI_LONG_INT", pair_long_int, 0x20a, 0x209),
    PAIR(0x22b, "MPI_2INT", pair_2int, 0x209, 0x209),
    PAIR(0x22c, "MPI_SHORT_INT", pair_short_int, 0x208, 0x209),
    PAIR(0x22d, "MPI_LONG_DOUBLE_INT", pair_ldouble_int, 0x220, 0x209),
    PAIR(0x230, "MPI_2REAL", pair_2real, 0x21a, 0x21a),
    PAIR(0x231, "MPI_2DOUBLE_PRECISION", pair_2dp, 0x21c, 0x21c),
    PAIR(0x232, "MPI_2INTEGER", pair_2int, 0x219, 0x219),
};
#define N_PAIRS ((int)(sizeof(pair_descs) / sizeof(pair_descs[0])))

static weft_datatype_t  builtin_objs[N_LEAVES + N_PAIRS];
static weft_dt_engine_t builtin_engs[N_LEAVES + N_PAIRS];
static weft_dt_seg_t    builtin_segs[N_LEAVES + N_PAIRS][2];
static weft_dt_block_t  pair_blocks[N_PAIRS][2];

weft_datatype_t *weft_dt_builtin(MPI_Datatype v)
{
    uintptr_t h = (uintptr_t)v;
    if (h < 0x200 || h >= 0x300) {
        return NULL;
    }
    return weft_builtin_datatype[h - 0x200];
}

static void builtin_common(weft_datatype_t *dt, weft_dt_engine_t *eng, unsigned handle,
                           const char *name)
{
    memset(dt, 0, sizeof(*dt));
    memset(eng, 0, sizeof(*eng));
    weft_object_init(&dt->hdr, WEFT_KIND_DATATYPE, handle);
    dt->committed = 1;
    dt->builtin   = 1;
    dt->combiner  = MPI_COMBINER_NAMED;
    dt->basic     = (MPI_Datatype)(uintptr_t)handle;
    dt->basic_count = 1;
    dt->engine    = eng;
    strncpy(dt->name, name, sizeof(dt->name) - 1);
    weft_builtin_datatype[handle - 0x200] = dt;
}

int weft_datatype_module_init(void)
{
    static int done;
    if (done) {
        return MPI_SUCCESS;
    }
    for (int i = 0; i < N_LEAVES; i++) {
        const builtin_desc_t *d   = &builtin_descs[i];
        weft_datatype_t      *dt  = &builtin_objs[i];
        weft_dt_engine_t     *eng = &builtin_engs[i];
        builtin_common(dt, eng, d->handle, d->name);
        dt->size = d->size;
        dt->extent = dt->true_extent = d->size;
        dt->is_contig   = 1;
        eng->nelems     = 1;
        eng->align      = d->align;
        eng->ext32_conv = d->conv;
        eng->ext32_unit = d->ext_unit;
        eng->nunits     = d->nunits;
        eng->ext32_size = (MPI_Count)d->ext_unit * d->nunits;
        builtin_segs[i][0] = (weft_dt_seg_t){ 0, d->size, 0, 1, 0 };
        eng->segs = builtin_segs[i];
        eng->nseg = 1;
    }
    for (int i = 0; i < N_PAIRS; i++) {
        const pair_desc_t *p   = &pair_descs[i];
        weft_datatype_t   *dt  = &builtin_objs[N_LEAVES + i];
        weft_dt_engine_t  *eng = &builtin_engs[N_LEAVES + i];
        weft_datatype_t   *a   = weft_builtin_datatype[p->first - 0x200];
        weft_datatype_t   *b   = weft_builtin_datatype[p->second - 0x200];
        weft_dt_engine_t  *ea  = weft_dt_engine(a), *eb = weft_dt_engine(b);
        builtin_common(dt, eng, p->handle, p->name);
        dt->size        = a->size + b->size;
        dt->extent      = p->extent;
        dt->true_extent = p->second_off + b->size;
        dt->is_contig   = (dt->size == dt->extent && p->second_off == a->size);
        pair_blocks[i][0] = (weft_dt_block_t){ 0, 1, 1, 0, a };
        pair_blocks[i][1] = (weft_dt_block_t){ p->second_off, 1, 1, 0, b };
        eng->blocks     = pair_blocks[i];
        eng->nblocks    = 2;
        eng->nelems     = 2;
        eng->align      = ea->align > eb->align ? ea->align : eb->align;
        eng->ext32_size = ea->ext32_size + eb->ext32_size;
        if (p->second_off == a->size) {
            builtin_segs[N_LEAVES + i][0] = (weft_dt_seg_t){ 0, (MPI_Aint)dt->size, 0, 1, 0 };
            eng->nseg = 1;
        } else {
            builtin_segs[N_LEAVES + i][0] = (weft_dt_seg_t){ 0, (MPI_Aint)a->size, 0, 1, 0 };
            builtin_segs[N_LEAVES + i][1] =
                (weft_dt_seg_t){ p->second_off, (MPI_Aint)b->size, 0, 1, a->size };
            eng->nseg = 2;
        }
        eng->segs = builtin_segs[N_LEAVES + i];
    }
    done = 1;
    return MPI_SUCCESS;
}

void weft_datatype_module_fini(void)
{
}

/* ------------------------------------------------------------------ */
/* Lifetime                                                            */

void weft_datatype_retain(weft_datatype_t *dt)
{
    if (dt != NULL && !dt->builtin) {
        __atomic_add_fetch(&dt->hdr.refcount, 1, __ATOMIC_RELAXED);
    }
}

static void dt_destroy(weft_datatype_t *dt)
{
    weft_dt_engine_t *eng = weft_dt_engine(dt);
    if (eng != NULL) {
        for (MPI_Count i = 0; i < eng->ntypes; i++) {
            weft_datatype_release(eng->types[i]);
        }
        for (int i = 0; i < eng->nblocks; i++) {
            weft_datatype_release(eng->blocks[i].type);
        }
        free(eng->ints);
        free(eng->addrs);
        free(eng->larges);
        free(eng->types);
        free(eng->blocks);
        free(eng->segs);
        free(eng);
    }
    /* attrs are deleted by MPI_Type_free (attribute module) before the last
     * release; a leftover list here would be a leak, not a crash. */
    dt->hdr.magic = WEFT_MAGIC_FREED;
    free(dt);
}

void weft_datatype_release(weft_datatype_t *dt)
{
    if (dt == NULL || dt->builtin) {
        return;
    }
    if (__atomic_sub_fetch(&dt->hdr.refcount, 1, __ATOMIC_ACQ_REL) == 0) {
        dt_destroy(dt);
    }
}

/* ------------------------------------------------------------------ */
/* Building a derived type from its plan                               */

typedef struct {
    weft_dt_seg_t *segs;
    MPI_Count      n, cap;
    int            oom;
} seg_list_t;

static void seg_push(seg_list_t *l, weft_dt_seg_t s)
{
    if (l->n == l->cap) {
        MPI_Count      ncap = l->cap ? 2 * l->cap : 8;
        weft_dt_seg_t *p    = realloc(l->segs, (size_t)ncap * sizeof(*p));
        if (p == NULL) {
            l->oom = 1;
            return;
        }
        l->segs = p;
        l->cap  = ncap;
    }
    l->segs[l->n++] = s;
}

/* Append a piece of the element's data in stream order, merging it into the
 * last segment when it continues it (adjacent bytes or same-stride blocks). */
static void seg_emit(seg_list_t *l, MPI_Aint disp, MPI_Aint len, MPI_Aint stride, MPI_Count n)
{
    if (len == 0 || n == 0 || l->oom) {
        return;
    }
    if (n > 1 && stride == len) {
        len *= n;
        n = 1;
    }
    if (n == 1) {
        stride = 0;
    }
    if (l->n > 0) {
        weft_dt_seg_t *t = &l->segs[l->n - 1];
        if (t->n == 1 && n == 1) {
            if (t->disp + t->len == disp) {
                t->len += len;
                return;
            }
            if (t->len == len) {
                t->stride = disp - t->disp;
                t->n      = 2;
                return;
            }
        } else if (t->n > 1 && t->len == len && disp == t->disp + t->n * t->stride &&
                   (n == 1 || stride == t->stride)) {
            t->n += n;
            return;
        } else if (t->n == 1 && n > 1 && t->len == len && disp - t->disp == stride) {
            t->n      = n + 1;
            t->stride = stride;
            return;
        }
    }
    seg_push(l, (weft_dt_seg_t){ disp, len, stride, n, 0 });
}

static void layout_emit_block(seg_list_t *l, const weft_dt_block_t *b)
{
    const weft_datatype_t  *t  = b->type;
    const weft_dt_engine_t *te = weft_dt_engine(t);
    if (b->count == 0 || b->rep == 0 || t->size == 0) {
        return;
    }
    if (te->nseg == 1 && te->segs[0].n == 1) {
        const weft_dt_seg_t *s = &te->segs[0];
        if (s->len == t->extent) {
            /* dense child: count elements are one run of bytes */
            seg_emit(l, b->disp + s->disp, s->len * b->count, b->rep_stride, b->rep);
            return;
        }
        for (MPI_Count r = 0; r < b->rep; r++) {
            seg_emit(l, b->disp + r * b->rep_stride + s->disp, s->len, t->extent, b->count);
        }
        return;
    }
    for (MPI_Count r = 0; r < b->rep && !l->oom; r++) {
        for (MPI_Count k = 0; k < b->count; k++) {
            MPI_Aint base = b->disp + r * b->rep_stride + k * t->extent;
            for (MPI_Count i = 0; i < te->nseg; i++) {
                const weft_dt_seg_t *s = &te->segs[i];
                seg_emit(l, base + s->disp, s->len, s->stride, s->n);
            }
        }
    }
}

static MPI_Aint aint_min(MPI_Aint a, MPI_Aint b) { return a < b ? a : b; }
static MPI_Aint aint_max(MPI_Aint a, MPI_Aint b) { return a > b ? a : b; }

int weft_dt_from_plan(int combiner, const weft_dt_block_t *blocks, int nblocks, int bounds_set,
                      MPI_Aint lb, MPI_Aint extent, weft_datatype_t **out)
{
    weft_datatype_t  *dt  = calloc(1, sizeof(*dt));
    weft_dt_engine_t *eng = calloc(1, sizeof(*eng));
    if (dt == NULL || eng == NULL) {
        goto err_alloc;
    }
    weft_object_init(&dt->hdr, WEFT_KIND_DATATYPE, 0);
    dt->combiner = combiner;
    dt->engine   = eng;
    if (nblocks > 0) {
        eng->blocks = malloc((size_t)nblocks * sizeof(*blocks));
        if (eng->blocks == NULL) {
            goto err_alloc;
        }
        memcpy(eng->blocks, blocks, (size_t)nblocks * sizeof(*blocks));
    }
    eng->nblocks = nblocks;
    for (int i = 0; i < nblocks; i++) {
        weft_datatype_retain(blocks[i].type);
    }

    /* bounds, size, counts */
    int          any = 0, anydata = 0, sticky = 0, align = 1, homogeneous = 1;
    MPI_Aint     mlb = 0, mub = 0, tlb = 0, tub = 0;
    MPI_Count    size = 0, nelems = 0, ext32 = 0, basic_count = 0;
    MPI_Datatype basic = MPI_DATATYPE_NULL;
    for (int i = 0; i < nblocks; i++) {
        const weft_dt_block_t  *b  = &blocks[i];
        const weft_datatype_t  *t  = b->type;
        const weft_dt_engine_t *te = weft_dt_engine(t);
        MPI_Count               n  = b->count * b->rep;
        /* A child adds to the bounds only through its type map: its data
         * (true bounds too) or its explicit bounds (resized). */
        if (n == 0 || (t->size == 0 && !te->sticky)) {
            continue;
        }
        MPI_Aint lo = b->disp + aint_min(0, (b->rep - 1) * b->rep_stride) +
                      aint_min(0, (b->count - 1) * t->extent);
        MPI_Aint hi = b->disp + aint_max(0, (b->rep - 1) * b->rep_stride) +
                      aint_max(0, (b->count - 1) * t->extent);
        MPI_Aint l1 = lo + t->lb, u1 = hi + t->lb + t->extent;
        MPI_Aint l2 = lo + t->true_lb, u2 = hi + t->true_lb + t->true_extent;
        if (!any) {
            mlb = l1, mub = u1;
            any = 1;
        } else {
            mlb = aint_min(mlb, l1), mub = aint_max(mub, u1);
        }
        if (t->size > 0) {
            if (!anydata) {
                tlb = l2, tub = u2;
                anydata = 1;
            } else {
                tlb = aint_min(tlb, l2), tub = aint_max(tub, u2);
            }
        }
        size += n * t->size;
        nelems += n * te->nelems;
        ext32 += n * te->ext32_size;
        sticky |= te->sticky;
        if (te->align > align) {
            align = te->align;
        }
        if (t->basic == MPI_DATATYPE_NULL || (basic != MPI_DATATYPE_NULL && basic != t->basic)) {
            homogeneous = 0;
        } else {
            basic = t->basic;
            basic_count += n * t->basic_count;
        }
    }
    if (combiner == MPI_COMBINER_STRUCT && align > 1) {
        /* the standard's epsilon: pad the extent to the strictest alignment
         * (always, also with resized members, as MPICH does: MPI-4 has no
         * explicit bound markers any more) */
        MPI_Aint ext = mub - mlb;
        MPI_Aint rem = ext % align;
        if (rem != 0) {
            mub += align - rem;
        }
    }
    if (bounds_set) {
        mlb    = lb;
        mub    = lb + extent;
        sticky = 1;
    }
    dt->size        = size;
    dt->lb          = mlb;
    dt->extent      = mub - mlb;
    dt->true_lb     = tlb;
    dt->true_extent = tub - tlb;
    dt->basic       = homogeneous ? basic : MPI_DATATYPE_NULL;
    dt->basic_count = homogeneous ? basic_count : 0;
    eng->nelems     = nelems;
    eng->ext32_size = ext32;
    eng->align      = align;
    eng->sticky     = sticky;

    /* layout */
    seg_list_t l = { 0 };
    for (int i = 0; i < nblocks; i++) {
        layout_emit_block(&l, &blocks[i]);
    }
    if (l.oom) {
        free(l.segs);
        goto err_alloc;
    }
    MPI_Count off = 0;
    for (MPI_Count i = 0; i < l.n; i++) {
        l.segs[i].off = off;
        off += l.segs[i].len * l.segs[i].n;
    }
    eng->segs = l.segs;
    eng->nseg = l.n;
    dt->is_contig =
        (size == 0 && dt->extent == 0) ||
        (l.n == 1 && l.segs[0].n == 1 && l.segs[0].len == size && dt->extent == size &&
         l.segs[0].disp == dt->true_lb);
    *out = dt;
    return MPI_SUCCESS;

err_alloc:
    if (eng != NULL && eng->blocks != NULL) {
        for (int i = 0; i < nblocks; i++) {
            weft_datatype_release(blocks[i].type);
        }
        free(eng->blocks);
    }
    free(eng);
    free(dt);
    return weft_error(MPI_ERR_NO_MEM, "out of memory building a datatype");
}

int weft_dt_set_contents(weft_datatype_t *dt, int large, const int *ints, MPI_Count nints,
                         const MPI_Aint *addrs, MPI_Count naddrs, const MPI_Count *larges,
                         MPI_Count nlarge, weft_datatype_t *const *types, MPI_Count ntypes)
{
    weft_dt_engine_t *eng = weft_dt_engine(dt);
    eng->large = large;
    if (nints > 0 && (eng->ints = malloc((size_t)nints * sizeof(int))) == NULL) {
        goto err_alloc;
    }
    if (naddrs > 0 && (eng->addrs = malloc((size_t)naddrs * sizeof(MPI_Aint))) == NULL) {
        goto err_alloc;
    }
    if (nlarge > 0 && (eng->larges = malloc((size_t)nlarge * sizeof(MPI_Count))) == NULL) {
        goto err_alloc;
    }
    if (ntypes > 0 && (eng->types = malloc((size_t)ntypes * sizeof(*types))) == NULL) {
        goto err_alloc;
    }
    if (nints > 0) {
        memcpy(eng->ints, ints, (size_t)nints * sizeof(int));
    }
    if (naddrs > 0) {
        memcpy(eng->addrs, addrs, (size_t)naddrs * sizeof(MPI_Aint));
    }
    if (nlarge > 0) {
        memcpy(eng->larges, larges, (size_t)nlarge * sizeof(MPI_Count));
    }
    for (MPI_Count i = 0; i < ntypes; i++) {
        eng->types[i] = types[i];
        weft_datatype_retain(types[i]);
    }
    eng->nints  = nints;
    eng->naddrs = naddrs;
    eng->nlarge = nlarge;
    eng->ntypes = ntypes;
    return MPI_SUCCESS;

err_alloc:
    free(eng->ints);
    free(eng->addrs);
    free(eng->larges);
    eng->ints   = NULL;
    eng->addrs  = NULL;
    eng->larges = NULL;
    return weft_error(MPI_ERR_NO_MEM, "out of memory recording datatype contents");
}

/* ------------------------------------------------------------------ */
/* Stream walkers                                                      */

static inline void copy_bytes(char *dst, const char *src, MPI_Aint len)
{
    switch (len) {
    case 1: *dst = *src; break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    case 16: memcpy(dst, src, 16); break;
    default: memcpy(dst, src, (size_t)len); break;
    }
}

static inline char *addr_at(const void *buf, MPI_Aint disp)
{
    return (char *)((uintptr_t)buf + (uintptr_t)disp);
}

/* Index of the segment holding stream byte q of one element. */
static MPI_Count seg_find(const weft_dt_engine_t *eng, MPI_Count q)
{
    MPI_Count lo = 0, hi = eng->nseg - 1;
    while (lo < hi) {
        MPI_Count mid = (lo + hi + 1) / 2;
        if (eng->segs[mid].off <= q) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

/* Move stream bytes [offset, offset+len) between (buf, count, dt) and the
 * packed buffer; unpack selects the direction. len is already clamped to the
 * stream and > 0; dt is not contiguous. */
static inline __attribute__((always_inline)) void
dt_walk_copy(const weft_datatype_t *dt, const void *buf, MPI_Count offset, char *packed,
             MPI_Count len, int unpack)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    MPI_Count               S   = dt->size;
    MPI_Count               e   = offset / S;
    MPI_Count               q   = offset - e * S;
    MPI_Count               i   = seg_find(eng, q);
    const weft_dt_seg_t    *s   = &eng->segs[i];
    MPI_Count               rel = q - s->off;
    MPI_Count               b   = rel / s->len;
    MPI_Aint                in  = (MPI_Aint)(rel - b * s->len);
    char                   *base = addr_at(buf, (MPI_Aint)e * dt->extent);
    char                   *p    = base + s->disp + b * s->stride;

    for (;;) {
        MPI_Aint chunk = s->len - in;
        if (chunk > len) {
            chunk = (MPI_Aint)len;
        }
        if (unpack) {
            copy_bytes(p + in, packed, chunk);
        } else {
            copy_bytes(packed, p + in, chunk);
        }
        packed += chunk;
        len -= chunk;
        if (len == 0) {
            return;
        }
        in = 0;
        if (++b < s->n) {
            p += s->stride;
            continue;
        }
        b = 0;
        if (++i == eng->nseg) {
            i = 0;
            base += dt->extent;
        }
        s = &eng->segs[i];
        p = base + s->disp;
    }
}

static MPI_Count clamp_range(const weft_datatype_t *dt, MPI_Count count, MPI_Count offset,
                             MPI_Count len)
{
    MPI_Count total = count * dt->size;
    if (offset < 0 || offset >= total || len <= 0) {
        return 0;
    }
    return len < total - offset ? len : total - offset;
}

MPI_Count weft_dt_pack(const weft_datatype_t *dt, MPI_Count count, const void *buf,
                       MPI_Count offset, void *out, MPI_Count len)
{
    len = clamp_range(dt, count, offset, len);
    if (len == 0) {
        return 0;
    }
    if (dt->is_contig) {
        memcpy(out, addr_at(buf, dt->true_lb + (MPI_Aint)offset), (size_t)len);
    } else {
        dt_walk_copy(dt, buf, offset, out, len, 0);
    }
    return len;
}

MPI_Count weft_dt_unpack(const weft_datatype_t *dt, MPI_Count count, void *buf,
                         MPI_Count offset, const void *in, MPI_Count len)
{
    len = clamp_range(dt, count, offset, len);
    if (len == 0) {
        return 0;
    }
    if (dt->is_contig) {
        memcpy(addr_at(buf, dt->true_lb + (MPI_Aint)offset), in, (size_t)len);
    } else {
        dt_walk_copy(dt, buf, offset, (char *)in, len, 1);
    }
    return len;
}

int weft_dt_iov(const weft_datatype_t *dt, MPI_Count count, const void *buf, MPI_Count offset,
                struct iovec *iov, int max_iov, MPI_Count *bytes_p)
{
    MPI_Count len = clamp_range(dt, count, offset, count * dt->size);
    int       n   = 0;
    MPI_Count done = 0;
    if (len == 0 || max_iov <= 0) {
        *bytes_p = 0;
        return 0;
    }
    if (dt->is_contig) {
        iov[0].iov_base = addr_at(buf, dt->true_lb + (MPI_Aint)offset);
        iov[0].iov_len  = (size_t)len;
        *bytes_p        = len;
        return 1;
    }
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    MPI_Count               S   = dt->size;
    MPI_Count               e   = offset / S;
    MPI_Count               q   = offset - e * S;
    MPI_Count               i   = seg_find(eng, q);
    const weft_dt_seg_t    *s   = &eng->segs[i];
    MPI_Count               rel = q - s->off;
    MPI_Count               b   = rel / s->len;
    MPI_Aint                in  = (MPI_Aint)(rel - b * s->len);
    char                   *base = addr_at(buf, (MPI_Aint)e * dt->extent);
    char                   *p    = base + s->disp + b * s->stride;

    for (;;) {
        MPI_Aint chunk = s->len - in;
        if (chunk > len - done) {
            chunk = (MPI_Aint)(len - done);
        }
        if (n > 0 && (char *)iov[n - 1].iov_base + iov[n - 1].iov_len == p + in) {
            iov[n - 1].iov_len += (size_t)chunk;
        } else if (n < max_iov) {
            iov[n].iov_base = p + in;
            iov[n].iov_len  = (size_t)chunk;
            n++;
        } else {
            break;
        }
        done += chunk;
        if (done == len) {
            break;
        }
        in = 0;
        if (++b < s->n) {
            p += s->stride;
            continue;
        }
        b = 0;
        if (++i == eng->nseg) {
            i = 0;
            base += dt->extent;
        }
        s = &eng->segs[i];
        p = base + s->disp;
    }
    *bytes_p = done;
    return n;
}

MPI_Count weft_dt_copy(const void *sbuf, MPI_Count scount, const weft_datatype_t *sdt,
                       void *rbuf, MPI_Count rcount, const weft_datatype_t *rdt)
{
    MPI_Count ssize = scount * sdt->size, rsize = rcount * rdt->size;
    MPI_Count n     = ssize < rsize ? ssize : rsize;
    if (n <= 0) {
        return 0;
    }
    if (sdt->is_contig) {
        return weft_dt_unpack(rdt, rcount, rbuf, 0, addr_at(sbuf, sdt->true_lb), n);
    }
    if (rdt->is_contig) {
        return weft_dt_pack(sdt, scount, sbuf, 0, addr_at(rbuf, rdt->true_lb), n);
    }
    char      tmp[16384];
    MPI_Count off = 0;
    while (off < n) {
        MPI_Count chunk = n - off < (MPI_Count)sizeof(tmp) ? n - off : (MPI_Count)sizeof(tmp);
        weft_dt_pack(sdt, scount, sbuf, off, tmp, chunk);
        weft_dt_unpack(rdt, rcount, rbuf, off, tmp, chunk);
        off += chunk;
    }
    return n;
}

/* Basic elements in the first `bytes` (< dt->size) of one element, or -1
 * when that prefix ends inside a basic element. */
static MPI_Count partial_elems(const weft_datatype_t *dt, MPI_Count bytes)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    MPI_Count               n   = 0;
    if (bytes == 0) {
        return 0;
    }
    for (int i = 0; i < eng->nblocks; i++) {
        const weft_dt_block_t *b  = &eng->blocks[i];
        const weft_datatype_t *t  = b->type;
        MPI_Count              cs = t->size;
        MPI_Count              k  = b->count * b->rep;
        if (cs == 0 || k == 0) {
            continue;
        }
        if (bytes >= k * cs) {
            bytes -= k * cs;
            n += k * weft_dt_engine(t)->nelems;
            if (bytes == 0) {
                return n;
            }
            continue;
        }
        MPI_Count whole = bytes / cs;
        n += whole * weft_dt_engine(t)->nelems;
        MPI_Count p = partial_elems(t, bytes - whole * cs);
        return p < 0 ? -1 : n + p;
    }
    return -1; /* a leaf cut inside */
}

MPI_Count weft_dt_elements(const weft_datatype_t *dt, MPI_Count nbytes)
{
    if (dt->size == 0 || nbytes <= 0) {
        return 0;
    }
    MPI_Count whole = nbytes / dt->size;
    MPI_Count n     = whole * weft_dt_engine(dt)->nelems;
    MPI_Count p     = partial_elems(dt, nbytes - whole * dt->size);
    return p < 0 ? MPI_UNDEFINED : n + p;
}

/* Stream bytes holding the first `elems` (< nelems) basic elements of one
 * element. */
static MPI_Count partial_bytes(const weft_datatype_t *dt, MPI_Count elems)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    MPI_Count               n   = 0;
    if (eng->nblocks == 0) {
        return elems > 0 ? dt->size : 0;
    }
    for (int i = 0; i < eng->nblocks && elems > 0; i++) {
        const weft_dt_block_t *b  = &eng->blocks[i];
        MPI_Count              ce = weft_dt_engine(b->type)->nelems;
        MPI_Count              k  = b->count * b->rep;
        if (ce == 0 || k == 0) {
            continue;
        }
        if (elems >= k * ce) {
            elems -= k * ce;
            n += k * b->type->size;
            continue;
        }
        MPI_Count whole = elems / ce;
        return n + whole * b->type->size + partial_bytes(b->type, elems - whole * ce);
    }
    return n;
}

MPI_Count weft_dt_elements_to_bytes(const weft_datatype_t *dt, MPI_Count elems)
{
    MPI_Count ne = weft_dt_engine(dt)->nelems;
    if (ne == 0 || elems <= 0) {
        return 0;
    }
    MPI_Count whole = elems / ne;
    return whole * dt->size + partial_bytes(dt, elems - whole * ne);
}
