/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Datatype constructors: argument checks, the plan each combiner stands for,
 * and the construction record in the exact form MPI_Type_get_contents
 * reports (which depends on whether the _c binding was used).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "core/datatype_internal.h"
#include "core/errors.h"

#define INT_OK(_v) ((_v) >= INT32_MIN && (_v) <= INT32_MAX)

static int check_int(int large, MPI_Count v, const char *what)
{
    if (!large && !INT_OK(v)) {
        return weft_error(MPI_ERR_ARG, "%s %lld does not fit in an int", what, (long long)v);
    }
    return MPI_SUCCESS;
}

/* Finish a user-visible constructor: record the contents or undo. */
static int finish(weft_datatype_t *dt, int large, const int *ints, MPI_Count ni,
                  const MPI_Aint *addrs, MPI_Count na, const MPI_Count *larges, MPI_Count nl,
                  weft_datatype_t *const *types, MPI_Count nt, weft_datatype_t **out)
{
    int rc = weft_dt_set_contents(dt, large, ints, ni, addrs, na, larges, nl, types, nt);
    if (rc != MPI_SUCCESS) {
        weft_datatype_release(dt);
        return rc;
    }
    *out = dt;
    return MPI_SUCCESS;
}

int weft_dt_contiguous(MPI_Count count, weft_datatype_t *old, int large, weft_datatype_t **out)
{
    weft_datatype_t *dt = NULL;
    weft_dt_block_t  b = { 0, count, 1, 0, old };
    if (count < 0) {
        return weft_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    }
    int rc = weft_dt_from_plan(MPI_COMBINER_CONTIGUOUS, &b, 1, 0, 0, 0, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    int ci = (int)count;
    return large ? finish(dt, 1, NULL, 0, NULL, 0, &count, 1, &old, 1, out)
                 : finish(dt, 0, &ci, 1, NULL, 0, NULL, 0, &old, 1, out);
}

int weft_dt_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, int hvector,
                   weft_datatype_t *old, int large, weft_datatype_t **out)
{
    weft_datatype_t *dt = NULL;
    if (count < 0 || blocklength < 0) {
        return weft_error(MPI_ERR_COUNT, "negative %s %lld", count < 0 ? "count" : "blocklength",
                          (long long)(count < 0 ? count : blocklength));
    }
    MPI_Aint        bstride = hvector ? (MPI_Aint)stride : (MPI_Aint)stride * old->extent;
    weft_dt_block_t b       = { 0, blocklength, count, bstride, old };
    int rc = weft_dt_from_plan(hvector ? MPI_COMBINER_HVECTOR : MPI_COMBINER_VECTOR, &b, 1, 0, 0,
                               0, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Count larges[3] = { count, blocklength, stride };
    int       ints[3]   = { (int)count, (int)blocklength, (int)stride };
    MPI_Aint  addr      = (MPI_Aint)stride;
    if (large) {
        return finish(dt, 1, NULL, 0, NULL, 0, larges, 3, &old, 1, out);
    }
    if (hvector) {
        return finish(dt, 0, ints, 2, &addr, 1, NULL, 0, &old, 1, out);
    }
    return finish(dt, 0, ints, 3, NULL, 0, NULL, 0, &old, 1, out);
}

int weft_dt_indexed(int combiner, MPI_Count count, const MPI_Count *blocklengths,
                    MPI_Count blocklength, const MPI_Count *displs, weft_datatype_t *old, int large,
                    weft_datatype_t **out)
{
    int bytes = (combiner == MPI_COMBINER_HINDEXED || combiner == MPI_COMBINER_HINDEXED_BLOCK);
    int per_block = (combiner == MPI_COMBINER_INDEXED || combiner == MPI_COMBINER_HINDEXED);
    weft_datatype_t *dt = NULL;
    weft_dt_block_t *blocks = NULL;
    int              nb = 0, rc;

    if (count < 0) {
        return weft_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    }
    if (!per_block && blocklength < 0) {
        return weft_error(MPI_ERR_ARG, "negative blocklength %lld", (long long)blocklength);
    }
    if (count > INT32_MAX) {
        return weft_error(MPI_ERR_COUNT, "count %lld is too large", (long long)count);
    }
    if (count > 0 && (blocks = malloc((size_t)count * sizeof(*blocks))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "out of memory");
    }
    for (MPI_Count i = 0; i < count; i++) {
        MPI_Count bl = per_block ? blocklengths[i] : blocklength;
        if (bl < 0) {
            free(blocks);
            return weft_error(MPI_ERR_ARG, "negative blocklength %lld at index %lld",
                              (long long)bl, (long long)i);
        }
        if (bl == 0) {
            continue;
        }
        MPI_Aint d = bytes ? (MPI_Aint)displs[i] : (MPI_Aint)displs[i] * old->extent;
        blocks[nb++] = (weft_dt_block_t){ d, bl, 1, 0, old };
    }
    rc = weft_dt_from_plan(combiner, blocks, nb, 0, 0, 0, &dt);
    free(blocks);
    if (rc != MPI_SUCCESS) {
        return rc;
    }

    /* contents */
    MPI_Count  n = count;
    MPI_Count  ni = 0, na = 0, nl = 0;
    int       *ints = NULL;
    MPI_Aint  *addrs = NULL;
    MPI_Count *larges = NULL;
    if (large) {
        nl     = per_block ? 2 * n + 1 : n + 2;
        larges = malloc((size_t)nl * sizeof(*larges));
        if (larges == NULL) {
            goto err_alloc;
        }
        larges[0] = n;
        if (per_block) {
            memcpy(larges + 1, blocklengths, (size_t)n * sizeof(MPI_Count));
            memcpy(larges + 1 + n, displs, (size_t)n * sizeof(MPI_Count));
        } else {
            larges[1] = blocklength;
            memcpy(larges + 2, displs, (size_t)n * sizeof(MPI_Count));
        }
    } else {
        int head = per_block ? 1 : 2;
        ni       = head + (per_block ? n : 0) + (bytes ? 0 : n);
        na       = bytes ? n : 0;
        ints     = malloc((size_t)(ni + 1) * sizeof(*ints));
        addrs    = malloc((size_t)(na + 1) * sizeof(*addrs));
        if (ints == NULL || addrs == NULL) {
            goto err_alloc;
        }
        ints[0] = (int)n;
        if (!per_block) {
            ints[1] = (int)blocklength;
        }
        int *p = ints + head;
        for (MPI_Count i = 0; per_block && i < n; i++) {
            *p++ = (int)blocklengths[i];
        }
        for (MPI_Count i = 0; i < n; i++) {
            if (bytes) {
                addrs[i] = (MPI_Aint)displs[i];
            } else {
                *p++ = (int)displs[i];
            }
        }
    }
    rc = finish(dt, large, ints, ni, addrs, na, larges, nl, &old, 1, out);
    free(ints);
    free(addrs);
    free(larges);
    return rc;

err_alloc:
    free(ints);
    free(addrs);
    free(larges);
    weft_datatype_release(dt);
    return weft_error(MPI_ERR_NO_MEM, "out of memory");
}

int weft_dt_struct(MPI_Count count, const MPI_Count *blocklengths, const MPI_Count *displs,
                   weft_datatype_t *const *types, int large, weft_datatype_t **out)
{
    weft_datatype_t *dt = NULL;
    weft_dt_block_t *blocks = NULL;
    int              nb = 0, rc;
    if (count < 0) {
        return weft_error(MPI_ERR_COUNT, "negative count %lld", (long long)count);
    }
    if (count > INT32_MAX) {
        return weft_error(MPI_ERR_COUNT, "count %lld is too large", (long long)count);
    }
    if (count > 0 && (blocks = malloc((size_t)count * sizeof(*blocks))) == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "out of memory");
    }
    for (MPI_Count i = 0; i < count; i++) {
        if (blocklengths[i] < 0) {
            free(blocks);
            return weft_error(MPI_ERR_ARG, "negative blocklength %lld at index %lld",
                              (long long)blocklengths[i], (long long)i);
        }
        if (blocklengths[i] > 0) {
            blocks[nb++] = (weft_dt_block_t){ (MPI_Aint)displs[i], blocklengths[i], 1, 0, types[i] };
        }
    }
    rc = weft_dt_from_plan(MPI_COMBINER_STRUCT, blocks, nb, 0, 0, 0, &dt);
    free(blocks);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Count  n = count;
    int       *ints = NULL;
    MPI_Aint  *addrs = NULL;
    MPI_Count *larges = NULL;
    if (large) {
        larges = malloc((size_t)(2 * n + 1) * sizeof(*larges));
        if (larges == NULL) {
            goto err_alloc;
        }
        larges[0] = n;
        memcpy(larges + 1, blocklengths, (size_t)n * sizeof(MPI_Count));
        memcpy(larges + 1 + n, displs, (size_t)n * sizeof(MPI_Count));
        rc = finish(dt, 1, NULL, 0, NULL, 0, larges, 2 * n + 1, types, n, out);
    } else {
        ints  = malloc((size_t)(n + 1) * sizeof(*ints));
        addrs = malloc((size_t)(n + 1) * sizeof(*addrs));
        if (ints == NULL || addrs == NULL) {
            goto err_alloc;
        }
        ints[0] = (int)n;
        for (MPI_Count i = 0; i < n; i++) {
            ints[i + 1] = (int)blocklengths[i];
            addrs[i]    = (MPI_Aint)displs[i];
        }
        rc = finish(dt, 0, ints, n + 1, addrs, n, NULL, 0, types, n, out);
    }
    free(ints);
    free(addrs);
    free(larges);
    return rc;

err_alloc:
    free(ints);
    free(addrs);
    free(larges);
    weft_datatype_release(dt);
    return weft_error(MPI_ERR_NO_MEM, "out of memory");
}

int weft_dt_resized(weft_datatype_t *old, MPI_Count lb, MPI_Count extent, int large,
                    weft_datatype_t **out)
{
    weft_datatype_t *dt = NULL;
    weft_dt_block_t  b  = { 0, 1, 1, 0, old };
    int rc = weft_dt_from_plan(MPI_COMBINER_RESIZED, &b, 1, 1, (MPI_Aint)lb, (MPI_Aint)extent, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Count larges[2] = { lb, extent };
    MPI_Aint  addrs[2]  = { (MPI_Aint)lb, (MPI_Aint)extent };
    return large ? finish(dt, 1, NULL, 0, NULL, 0, larges, 2, &old, 1, out)
                 : finish(dt, 0, NULL, 0, addrs, 2, NULL, 0, &old, 1, out);
}

int weft_dt_dup(weft_datatype_t *old, weft_datatype_t **out)
{
    weft_datatype_t *dt = NULL;
    weft_dt_block_t  b  = { 0, 1, 1, 0, old };
    int rc = weft_dt_from_plan(MPI_COMBINER_DUP, &b, 1, 1, old->lb, old->extent, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    weft_dt_engine(dt)->sticky = weft_dt_engine(old)->sticky;
    dt->committed = old->committed;
    return finish(dt, 0, NULL, 0, NULL, 0, NULL, 0, &old, 1, out);
}

/* ------------------------------------------------------------------ */
/* Subarray and darray: per dimension a list of index ranges, composed from
 * the fastest-varying dimension outwards; each level is resized to the full
 * extent of its dimension so the next level can step over it. */

typedef struct {
    MPI_Count start, len;
} range_t;

static int grid_build(int combiner, int ndims, const MPI_Count *gsizes, range_t *const *ranges,
                      const int *nranges, int order, weft_datatype_t *old, weft_datatype_t **out)
{
    weft_datatype_t *t      = old;
    MPI_Aint         stride = old->extent;
    int              rc     = MPI_SUCCESS;
    weft_datatype_retain(t);
    for (int j = 0; j < ndims; j++) {
        int              d  = order == MPI_ORDER_FORTRAN ? j : ndims - 1 - j;
        int              nb = nranges[d];
        weft_dt_block_t *blocks = malloc((size_t)(nb + 1) * sizeof(*blocks));
        weft_datatype_t *nt;
        if (blocks == NULL) {
            weft_datatype_release(t);
            return weft_error(MPI_ERR_NO_MEM, "out of memory");
        }
        for (int i = 0; i < nb; i++) {
            blocks[i] = (weft_dt_block_t){ (MPI_Aint)ranges[d][i].start * stride, ranges[d][i].len,
                                           1, 0, t };
        }
        rc = weft_dt_from_plan(j == ndims - 1 ? combiner : MPI_COMBINER_HINDEXED, blocks, nb, 1, 0,
                               stride * (MPI_Aint)gsizes[d], &nt);
        free(blocks);
        weft_datatype_release(t);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        t = nt;
        stride *= (MPI_Aint)gsizes[d];
    }
    *out = t;
    return MPI_SUCCESS;
}

static int check_order(int order)
{
    if (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN) {
        return weft_error(MPI_ERR_ARG, "order %d is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN",
                          order);
    }
    return MPI_SUCCESS;
}

int weft_dt_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                     const MPI_Count *starts, int order, weft_datatype_t *old, int large,
                     weft_datatype_t **out)
{
    int rc;
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = check_order(order)) != MPI_SUCCESS) {
        return rc;
    }
    for (int d = 0; d < ndims; d++) {
        if (sizes[d] <= 0 || subsizes[d] < 0 || subsizes[d] > sizes[d] || starts[d] < 0 ||
            starts[d] > sizes[d] - subsizes[d]) {
            return weft_error(MPI_ERR_ARG,
                              "dimension %d: size %lld, subsize %lld, start %lld are inconsistent",
                              d, (long long)sizes[d], (long long)subsizes[d], (long long)starts[d]);
        }
        if ((rc = check_int(large, sizes[d], "size")) != MPI_SUCCESS) {
            return rc;
        }
    }
    range_t  *rbuf = malloc((size_t)ndims * sizeof(*rbuf));
    range_t **rs   = malloc((size_t)ndims * sizeof(*rs));
    int      *nr   = malloc((size_t)ndims * sizeof(*nr));
    int      *ints = malloc((size_t)(3 * ndims + 2) * sizeof(*ints));
    MPI_Count *larges = malloc((size_t)(3 * ndims) * sizeof(*larges));
    weft_datatype_t *dt = NULL;
    if (rbuf == NULL || rs == NULL || nr == NULL || ints == NULL || larges == NULL) {
        rc = weft_error(MPI_ERR_NO_MEM, "out of memory");
        goto out_free;
    }
    for (int d = 0; d < ndims; d++) {
        rbuf[d] = (range_t){ starts[d], subsizes[d] };
        rs[d]   = &rbuf[d];
        nr[d]   = subsizes[d] > 0 ? 1 : 0;
    }
    rc = grid_build(MPI_COMBINER_SUBARRAY, ndims, sizes, rs, nr, order, old, &dt);
    if (rc != MPI_SUCCESS) {
        goto out_free;
    }
    if (large) {
        ints[0] = ndims;
        ints[1] = order;
        memcpy(larges, sizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(larges + ndims, subsizes, (size_t)ndims * sizeof(MPI_Count));
        memcpy(larges + 2 * ndims, starts, (size_t)ndims * sizeof(MPI_Count));
        rc = finish(dt, 1, ints, 2, NULL, 0, larges, 3 * ndims, &old, 1, out);
    } else {
        ints[0] = ndims;
        for (int d = 0; d < ndims; d++) {
            ints[1 + d]             = (int)sizes[d];
            ints[1 + ndims + d]     = (int)subsizes[d];
            ints[1 + 2 * ndims + d] = (int)starts[d];
        }
        ints[1 + 3 * ndims] = order;
        rc = finish(dt, 0, ints, 3 * ndims + 2, NULL, 0, NULL, 0, &old, 1, out);
    }
out_free:
    free(rbuf);
    free(rs);
    free(nr);
    free(ints);
    free(larges);
    return rc;
}

int weft_dt_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                   const int *dargs, const int *psizes, int order, weft_datatype_t *old,
                   int large, weft_datatype_t **out)
{
    int rc;
    if (size <= 0 || rank < 0 || rank >= size) {
        return weft_error(MPI_ERR_ARG, "rank %d is not in a group of size %d", rank, size);
    }
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = check_order(order)) != MPI_SUCCESS) {
        return rc;
    }
    long long nprocs = 1;
    for (int d = 0; d < ndims; d++) {
        if (gsizes[d] <= 0 || psizes[d] <= 0) {
            return weft_error(MPI_ERR_ARG, "dimension %d: gsize %lld and psize %d must be positive",
                              d, (long long)gsizes[d], psizes[d]);
        }
        if ((rc = check_int(large, gsizes[d], "gsize")) != MPI_SUCCESS) {
            return rc;
        }
        if (distribs[d] != MPI_DISTRIBUTE_NONE && distribs[d] != MPI_DISTRIBUTE_BLOCK &&
            distribs[d] != MPI_DISTRIBUTE_CYCLIC) {
            return weft_error(MPI_ERR_ARG, "dimension %d: invalid distribution %d", d, distribs[d]);
        }
        if (dargs[d] != MPI_DISTRIBUTE_DFLT_DARG && dargs[d] <= 0) {
            return weft_error(MPI_ERR_ARG, "dimension %d: invalid darg %d", d, dargs[d]);
        }
        if (distribs[d] == MPI_DISTRIBUTE_NONE && psizes[d] != 1) {
            return weft_error(MPI_ERR_ARG, "dimension %d: MPI_DISTRIBUTE_NONE needs psize 1", d);
        }
        if (distribs[d] == MPI_DISTRIBUTE_BLOCK && dargs[d] != MPI_DISTRIBUTE_DFLT_DARG &&
            (MPI_Count)dargs[d] * psizes[d] < gsizes[d]) {
            return weft_error(MPI_ERR_ARG, "dimension %d: block %d * %d processes < gsize %lld", d,
                              dargs[d], psizes[d], (long long)gsizes[d]);
        }
        nprocs *= psizes[d];
    }
    if (nprocs != size) {
        return weft_error(MPI_ERR_ARG, "product of psizes %lld differs from size %d", nprocs, size);
    }

    range_t  **rs   = calloc((size_t)ndims, sizeof(*rs));
    int       *nr   = calloc((size_t)ndims, sizeof(*nr));
    int       *ints = malloc((size_t)(4 * ndims + 4) * sizeof(*ints));
    MPI_Count *larges = malloc((size_t)ndims * sizeof(*larges));
    weft_datatype_t *dt = NULL;
    if (rs == NULL || nr == NULL || ints == NULL || larges == NULL) {
        rc = weft_error(MPI_ERR_NO_MEM, "out of memory");
        goto out_free;
    }
    /* process coordinates: the grid is row-major whatever the array order */
    int r = rank;
    for (int d = ndims - 1; d >= 0; d--) {
        int       coord = r % psizes[d];
        MPI_Count g = gsizes[d], p = psizes[d], darg;
        r /= psizes[d];
        if (distribs[d] == MPI_DISTRIBUTE_CYCLIC) {
            darg = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? 1 : dargs[d];
        } else if (distribs[d] == MPI_DISTRIBUTE_BLOCK) {
            darg = dargs[d] == MPI_DISTRIBUTE_DFLT_DARG ? (g + p - 1) / p : dargs[d];
        } else {
            darg = g;
        }
        MPI_Count step = distribs[d] == MPI_DISTRIBUTE_CYCLIC ? p * darg : g;
        MPI_Count n    = 0;
        for (MPI_Count s = coord * darg; s < g; s += step) {
            n++;
        }
        if (n > INT32_MAX) {
            rc = weft_error(MPI_ERR_ARG, "dimension %d has too many blocks", d);
            goto out_free;
        }
        rs[d] = malloc((size_t)(n + 1) * sizeof(range_t));
        if (rs[d] == NULL) {
            rc = weft_error(MPI_ERR_NO_MEM, "out of memory");
            goto out_free;
        }
        for (MPI_Count s = coord * darg; s < g; s += step) {
            rs[d][nr[d]++] = (range_t){ s, g - s < darg ? g - s : darg };
        }
    }
    rc = grid_build(MPI_COMBINER_DARRAY, ndims, gsizes, rs, nr, order, old, &dt);
    if (rc != MPI_SUCCESS) {
        goto out_free;
    }
    int k = 0;
    ints[k++] = size;
    ints[k++] = rank;
    ints[k++] = ndims;
    if (!large) {
        for (int d = 0; d < ndims; d++) {
            ints[k++] = (int)gsizes[d];
        }
    }
    memcpy(ints + k, distribs, (size_t)ndims * sizeof(int));
    k += ndims;
    memcpy(ints + k, dargs, (size_t)ndims * sizeof(int));
    k += ndims;
    memcpy(ints + k, psizes, (size_t)ndims * sizeof(int));
    k += ndims;
    ints[k++] = order;
    memcpy(larges, gsizes, (size_t)ndims * sizeof(MPI_Count));
    rc = finish(dt, large, ints, k, NULL, 0, larges, large ? ndims : 0, &old, 1, out);
out_free:
    for (int d = 0; rs != NULL && d < ndims; d++) {
        free(rs[d]);
    }
    free(rs);
    free(nr);
    free(ints);
    free(larges);
    return rc;
}

/* ------------------------------------------------------------------ */

static const struct {
    unsigned value, index, pair;
} predefined_pairs[] = {
    { 0x210, 0x209, 0x228 }, /* MPI_FLOAT, MPI_INT -> MPI_FLOAT_INT */
    { 0x214, 0x209, 0x229 }, /* MPI_DOUBLE_INT */
    { 0x20a, 0x209, 0x22a }, /* MPI_LONG_INT */
    { 0x209, 0x209, 0x22b }, /* MPI_2INT */
    { 0x208, 0x209, 0x22c }, /* MPI_SHORT_INT */
    { 0x220, 0x209, 0x22d }, /* MPI_LONG_DOUBLE_INT */
    { 0x21a, 0x21a, 0x230 }, /* MPI_2REAL */
    { 0x21c, 0x21c, 0x231 }, /* MPI_2DOUBLE_PRECISION */
    { 0x219, 0x219, 0x232 }, /* MPI_2INTEGER */
};

/* MPI-4.1 MPI_Type_get_value_index: the predefined pair type for the
 * (value, index) combination, or NULL (MPI_DATATYPE_NULL to the caller)
 * when there is none. Only the named pairs are returned: MPICH does the
 * same, and mpi4py (which treats MPI_COMBINER_VALUE_INDEX types as
 * predefined) expects it, so a derived pair for e.g. (MPI_SHORT,
 * MPI_SHORT) or a non-integer index would only differ between libraries. */
int weft_dt_value_index(weft_datatype_t *value, weft_datatype_t *index, weft_datatype_t **out)
{
    uintptr_t vh = value->hdr.handle, ih = index->hdr.handle;

    *out = NULL;
    for (size_t i = 0; i < sizeof(predefined_pairs) / sizeof(predefined_pairs[0]); i++) {
        if (vh != 0 && vh == predefined_pairs[i].value && ih == predefined_pairs[i].index) {
            *out = weft_dt_builtin((MPI_Datatype)(uintptr_t)predefined_pairs[i].pair);
            break;
        }
    }
    return MPI_SUCCESS;
}
