/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft_*_impl functions of the datatype MPI calls (src/api/kinds/datatype.txt)
 * that build and describe types; pack/unpack and elements are in
 * datatype_pack_api.c. The generated wrappers have already converted and
 * validated handle arguments; array arguments and pointers to handles are
 * checked here.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "api_impl.h"
#include "core/attr.h"
#include "core/datatype_internal.h"
#include "core/errors.h"

static void set_newtype(MPI_Datatype *newtype, weft_datatype_t *dt)
{
    *newtype = (MPI_Datatype)weft_object_handle(dt);
}

static int null_array(const void *p, MPI_Count n, const char *what)
{
    if (p == NULL && n > 0) {
        return weft_error(MPI_ERR_ARG, "%s is NULL", what);
    }
    return MPI_SUCCESS;
}

/* int[] / MPI_Aint[] -> MPI_Count[] for the non-_c bindings */
static MPI_Count *widen_int(const int *a, MPI_Count n)
{
    MPI_Count *w = malloc((size_t)(n > 0 ? n : 1) * sizeof(*w));
    for (MPI_Count i = 0; w != NULL && i < n; i++) {
        w[i] = a[i];
    }
    return w;
}

static MPI_Count *widen_aint(const MPI_Aint *a, MPI_Count n)
{
    MPI_Count *w = malloc((size_t)(n > 0 ? n : 1) * sizeof(*w));
    for (MPI_Count i = 0; w != NULL && i < n; i++) {
        w[i] = a[i];
    }
    return w;
}

/* ------------------------------------------------------------------ */
/* Constructors                                                        */

static int contiguous(MPI_Count count, weft_datatype_t *old, int large, MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_contiguous(count, old, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_contiguous_impl(MPI_Count count, weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, 0, newtype);
}

int weft_type_contiguous_c_impl(MPI_Count count, weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, 1, newtype);
}

static int vector(MPI_Count count, MPI_Count bl, MPI_Count stride, int h, weft_datatype_t *old,
                  int large, MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_vector(count, bl, stride, h, old, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_vector_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                          weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 0, oldtype, 0, newtype);
}

int weft_type_vector_c_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                            weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 0, oldtype, 1, newtype);
}

int weft_type_create_hvector_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                  weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 1, oldtype, 0, newtype);
}

int weft_type_create_hvector_c_impl(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                                    weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 1, oldtype, 1, newtype);
}

static int indexed(int combiner, MPI_Count count, const MPI_Count *bls, MPI_Count bl,
                   const MPI_Count *displs, weft_datatype_t *old, int large, MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_indexed(combiner, count, bls, bl, displs, old, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_indexed_impl(int count, const int array_of_blocklengths[],
                           const int array_of_displacements[], weft_datatype_t *oldtype,
                           MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    MPI_Count *bl = widen_int(array_of_blocklengths, count);
    MPI_Count *d  = widen_int(array_of_displacements, count);
    rc = (bl == NULL || d == NULL)
             ? weft_error(MPI_ERR_NO_MEM, "out of memory")
             : indexed(MPI_COMBINER_INDEXED, count, bl, 0, d, oldtype, 0, newtype);
    free(bl);
    free(d);
    return rc;
}

int weft_type_indexed_c_impl(MPI_Count count, const MPI_Count array_of_blocklengths[],
                             const MPI_Count array_of_displacements[], weft_datatype_t *oldtype,
                             MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    return indexed(MPI_COMBINER_INDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                   oldtype, 1, newtype);
}

int weft_type_create_hindexed_impl(int count, const int array_of_blocklengths[],
                                   const MPI_Aint array_of_displacements[],
                                   weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    MPI_Count *bl = widen_int(array_of_blocklengths, count);
    MPI_Count *d  = widen_aint(array_of_displacements, count);
    rc = (bl == NULL || d == NULL)
             ? weft_error(MPI_ERR_NO_MEM, "out of memory")
             : indexed(MPI_COMBINER_HINDEXED, count, bl, 0, d, oldtype, 0, newtype);
    free(bl);
    free(d);
    return rc;
}

int weft_type_create_hindexed_c_impl(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                     const MPI_Count array_of_displacements[],
                                     weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    return indexed(MPI_COMBINER_HINDEXED, count, array_of_blocklengths, 0, array_of_displacements,
                   oldtype, 1, newtype);
}

int weft_type_create_indexed_block_impl(int count, int blocklength,
                                        const int array_of_displacements[],
                                        weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    MPI_Count *d = widen_int(array_of_displacements, count);
    rc = d == NULL ? weft_error(MPI_ERR_NO_MEM, "out of memory")
                   : indexed(MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength, d, oldtype, 0,
                             newtype);
    free(d);
    return rc;
}

int weft_type_create_indexed_block_c_impl(MPI_Count count, MPI_Count blocklength,
                                          const MPI_Count array_of_displacements[],
                                          weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    return indexed(MPI_COMBINER_INDEXED_BLOCK, count, NULL, blocklength, array_of_displacements,
                   oldtype, 1, newtype);
}

int weft_type_create_hindexed_block_impl(int count, int blocklength,
                                         const MPI_Aint array_of_displacements[],
                                         weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    MPI_Count *d = widen_aint(array_of_displacements, count);
    rc = d == NULL ? weft_error(MPI_ERR_NO_MEM, "out of memory")
                   : indexed(MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength, d, oldtype, 0,
                             newtype);
    free(d);
    return rc;
}

int weft_type_create_hindexed_block_c_impl(MPI_Count count, MPI_Count blocklength,
                                           const MPI_Count array_of_displacements[],
                                           weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_displacements, count, "array_of_displacements"))) {
        return rc;
    }
    return indexed(MPI_COMBINER_HINDEXED_BLOCK, count, NULL, blocklength, array_of_displacements,
                   oldtype, 1, newtype);
}

static int convert_types(MPI_Count count, const MPI_Datatype *handles, weft_datatype_t ***out)
{
    weft_datatype_t **objs = malloc((size_t)(count > 0 ? count : 1) * sizeof(*objs));
    if (objs == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "out of memory");
    }
    for (MPI_Count i = 0; i < count; i++) {
        objs[i] = weft_datatype_from_handle(handles[i]);
        if (objs[i] == NULL) {
            free(objs);
            return weft_error(MPI_ERR_TYPE, "array_of_types[%lld] is not a valid datatype%s",
                              (long long)i,
                              handles[i] == MPI_DATATYPE_NULL ? " (MPI_DATATYPE_NULL)" : "");
        }
    }
    *out = objs;
    return MPI_SUCCESS;
}

static int type_struct(MPI_Count count, const MPI_Count *bl, const MPI_Count *d,
                       const MPI_Datatype *types, int large, MPI_Datatype *newtype)
{
    weft_datatype_t **objs = NULL, *dt = NULL;
    int               rc = convert_types(count, types, &objs);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_dt_struct(count, bl, d, objs, large, &dt);
    free(objs);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_create_struct_impl(int count, const int array_of_blocklengths[],
                                 const MPI_Aint array_of_displacements[],
                                 const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements")) ||
        (rc = null_array(array_of_types, count, "array_of_types"))) {
        return rc;
    }
    MPI_Count *bl = widen_int(array_of_blocklengths, count);
    MPI_Count *d  = widen_aint(array_of_displacements, count);
    rc = (bl == NULL || d == NULL) ? weft_error(MPI_ERR_NO_MEM, "out of memory")
                                   : type_struct(count, bl, d, array_of_types, 0, newtype);
    free(bl);
    free(d);
    return rc;
}

int weft_type_create_struct_c_impl(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                   const MPI_Count array_of_displacements[],
                                   const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    int rc;
    if ((rc = null_array(array_of_blocklengths, count, "array_of_blocklengths")) ||
        (rc = null_array(array_of_displacements, count, "array_of_displacements")) ||
        (rc = null_array(array_of_types, count, "array_of_types"))) {
        return rc;
    }
    return type_struct(count, array_of_blocklengths, array_of_displacements, array_of_types, 1,
                       newtype);
}

static int subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                    const MPI_Count *starts, int order, weft_datatype_t *old, int large,
                    MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int rc = weft_dt_subarray(ndims, sizes, subsizes, starts, order, old, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_create_subarray_impl(int ndims, const int array_of_sizes[],
                                   const int array_of_subsizes[], const int array_of_starts[],
                                   int order, weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = null_array(array_of_sizes, ndims, "array_of_sizes")) ||
        (rc = null_array(array_of_subsizes, ndims, "array_of_subsizes")) ||
        (rc = null_array(array_of_starts, ndims, "array_of_starts"))) {
        return rc;
    }
    MPI_Count *a = widen_int(array_of_sizes, ndims);
    MPI_Count *b = widen_int(array_of_subsizes, ndims);
    MPI_Count *c = widen_int(array_of_starts, ndims);
    rc = (a == NULL || b == NULL || c == NULL)
             ? weft_error(MPI_ERR_NO_MEM, "out of memory")
             : subarray(ndims, a, b, c, order, oldtype, 0, newtype);
    free(a);
    free(b);
    free(c);
    return rc;
}

int weft_type_create_subarray_c_impl(int ndims, const MPI_Count array_of_sizes[],
                                     const MPI_Count array_of_subsizes[],
                                     const MPI_Count array_of_starts[], int order,
                                     weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = null_array(array_of_sizes, ndims, "array_of_sizes")) ||
        (rc = null_array(array_of_subsizes, ndims, "array_of_subsizes")) ||
        (rc = null_array(array_of_starts, ndims, "array_of_starts"))) {
        return rc;
    }
    return subarray(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype, 1,
                    newtype);
}

static int darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                  const int *dargs, const int *psizes, int order, weft_datatype_t *old, int large,
                  MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc;
    if ((rc = null_array(distribs, ndims, "array_of_distribs")) ||
        (rc = null_array(dargs, ndims, "array_of_dargs")) ||
        (rc = null_array(psizes, ndims, "array_of_psizes"))) {
        return rc;
    }
    rc = weft_dt_darray(size, rank, ndims, gsizes, distribs, dargs, psizes, order, old, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_create_darray_impl(int size, int rank, int ndims, const int array_of_gsizes[],
                                 const int array_of_distribs[], const int array_of_dargs[],
                                 const int array_of_psizes[], int order, weft_datatype_t *oldtype,
                                 MPI_Datatype *newtype)
{
    int rc;
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = null_array(array_of_gsizes, ndims, "array_of_gsizes"))) {
        return rc;
    }
    MPI_Count *g = widen_int(array_of_gsizes, ndims);
    rc = g == NULL ? weft_error(MPI_ERR_NO_MEM, "out of memory")
                   : darray(size, rank, ndims, g, array_of_distribs, array_of_dargs,
                            array_of_psizes, order, oldtype, 0, newtype);
    free(g);
    return rc;
}

int weft_type_create_darray_c_impl(int size, int rank, int ndims,
                                   const MPI_Count array_of_gsizes[],
                                   const int array_of_distribs[], const int array_of_dargs[],
                                   const int array_of_psizes[], int order,
                                   weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    int rc;
    if (ndims <= 0) {
        return weft_error(MPI_ERR_ARG, "ndims %d must be positive", ndims);
    }
    if ((rc = null_array(array_of_gsizes, ndims, "array_of_gsizes"))) {
        return rc;
    }
    return darray(size, rank, ndims, array_of_gsizes, array_of_distribs, array_of_dargs,
                  array_of_psizes, order, oldtype, 1, newtype);
}

static int resized(weft_datatype_t *old, MPI_Count lb, MPI_Count extent, int large,
                   MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_resized(old, lb, extent, large, &dt);
    if (rc == MPI_SUCCESS) {
        set_newtype(newtype, dt);
    }
    return rc;
}

int weft_type_create_resized_impl(weft_datatype_t *oldtype, MPI_Count lb, MPI_Count extent,
                                  MPI_Datatype *newtype)
{
    return resized(oldtype, lb, extent, 0, newtype);
}

int weft_type_create_resized_c_impl(weft_datatype_t *oldtype, MPI_Count lb, MPI_Count extent,
                                    MPI_Datatype *newtype)
{
    return resized(oldtype, lb, extent, 1, newtype);
}

int weft_type_dup_impl(weft_datatype_t *oldtype, MPI_Datatype *newtype)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_dup(oldtype, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_attr_copy_all(WEFT_ATTR_TYPE, weft_object_handle(oldtype), oldtype->attrs,
                            weft_object_handle(dt), &dt->attrs);
    if (rc != MPI_SUCCESS) {
        weft_datatype_release(dt);
        return rc;
    }
    set_newtype(newtype, dt);
    return MPI_SUCCESS;
}

int weft_type_get_value_index_impl(weft_datatype_t *value_type, weft_datatype_t *index_type,
                                   MPI_Datatype *pair_type)
{
    weft_datatype_t *dt = NULL;
    int              rc = weft_dt_value_index(value_type, index_type, &dt);
    if (rc == MPI_SUCCESS) {
        *pair_type = dt != NULL ? (MPI_Datatype)weft_object_handle(dt) : MPI_DATATYPE_NULL;
    }
    return rc;
}

/* ------------------------------------------------------------------ */
/* Fortran 90 parameterized types: predefined-like (never freed), one object
 * per distinct (combiner, p, r), equivalent to a fixed-size Fortran type. */

typedef struct {
    int              combiner, p, r;
    weft_datatype_t *dt;
} f90_entry_t;

static f90_entry_t f90_cache[64];
static int         f90_ncache;

static int f90_type(int combiner, int p, int r, MPI_Datatype fixed, MPI_Datatype *newtype)
{
    for (int i = 0; i < f90_ncache; i++) {
        if (f90_cache[i].combiner == combiner && f90_cache[i].p == p && f90_cache[i].r == r) {
            set_newtype(newtype, f90_cache[i].dt);
            return MPI_SUCCESS;
        }
    }
    if (f90_ncache == (int)(sizeof(f90_cache) / sizeof(f90_cache[0]))) {
        return weft_error(MPI_ERR_INTERN, "too many distinct Fortran 90 parameterized types");
    }
    weft_datatype_t *base = weft_dt_builtin(fixed);
    weft_datatype_t *dt = NULL;
    weft_dt_block_t  b  = { 0, 1, 1, 0, base };
    int rc = weft_dt_from_plan(combiner, &b, 1, 0, 0, 0, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    int ints[2] = { p, r };
    int ni      = combiner == MPI_COMBINER_F90_INTEGER ? 1 : 2;
    if (combiner == MPI_COMBINER_F90_INTEGER) {
        ints[0] = r;
    }
    rc = weft_dt_set_contents(dt, 0, ints, ni, NULL, 0, NULL, 0, NULL, 0);
    if (rc != MPI_SUCCESS) {
        weft_datatype_release(dt);
        return rc;
    }
    dt->committed = 1;
    dt->builtin   = 1;
    memcpy(dt->name, base->name, sizeof(dt->name));
    f90_cache[f90_ncache++] = (f90_entry_t){ combiner, p, r, dt };
    set_newtype(newtype, dt);
    return MPI_SUCCESS;
}

int weft_type_create_f90_integer_impl(int r, MPI_Datatype *newtype)
{
    MPI_Datatype t;
    if (r == MPI_UNDEFINED || r <= 2) {
        t = MPI_INTEGER1;
    } else if (r <= 4) {
        t = MPI_INTEGER2;
    } else if (r <= 9) {
        t = MPI_INTEGER4;
    } else if (r <= 18) {
        t = MPI_INTEGER8;
    } else if (r <= 38) {
        t = MPI_INTEGER16;
    } else {
        return weft_error(MPI_ERR_ARG, "no integer kind has a decimal range of %d", r);
    }
    return f90_type(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, t, newtype);
}

static int real_kind(int p, int r, int *kind)
{
    static const struct {
        int p, r, bytes;
    } kinds[] = { { 6, 37, 4 }, { 15, 307, 8 }, { 33, 4931, 16 } };
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
        return weft_error(MPI_ERR_ARG, "p and r cannot both be MPI_UNDEFINED");
    }
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
        if ((p == MPI_UNDEFINED || p <= kinds[i].p) && (r == MPI_UNDEFINED || r <= kinds[i].r)) {
            *kind = kinds[i].bytes;
            return MPI_SUCCESS;
        }
    }
    return weft_error(MPI_ERR_ARG, "no real kind has precision %d and range %d", p, r);
}

int weft_type_create_f90_real_impl(int p, int r, MPI_Datatype *newtype)
{
    int kind = 0, rc = real_kind(p, r, &kind);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Datatype t = kind == 4 ? MPI_REAL4 : kind == 8 ? MPI_REAL8 : MPI_REAL16;
    return f90_type(MPI_COMBINER_F90_REAL, p, r, t, newtype);
}

int weft_type_create_f90_complex_impl(int p, int r, MPI_Datatype *newtype)
{
    int kind = 0, rc = real_kind(p, r, &kind);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    MPI_Datatype t = kind == 4 ? MPI_COMPLEX8 : kind == 8 ? MPI_COMPLEX16 : MPI_COMPLEX32;
    return f90_type(MPI_COMBINER_F90_COMPLEX, p, r, t, newtype);
}

int weft_type_match_size_impl(int typeclass, int size, MPI_Datatype *datatype)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    switch (typeclass) {
    case MPI_TYPECLASS_INTEGER:
        t = size == 1 ? MPI_INTEGER1 : size == 2 ? MPI_INTEGER2 : size == 4 ? MPI_INTEGER4
          : size == 8 ? MPI_INTEGER8 : size == 16 ? MPI_INTEGER16 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_REAL:
        t = size == 2 ? MPI_REAL2 : size == 4 ? MPI_REAL4 : size == 8 ? MPI_REAL8
          : size == 16 ? MPI_REAL16 : MPI_DATATYPE_NULL;
        break;
    case MPI_TYPECLASS_COMPLEX:
        t = size == 4 ? MPI_COMPLEX4 : size == 8 ? MPI_COMPLEX8 : size == 16 ? MPI_COMPLEX16
          : size == 32 ? MPI_COMPLEX32 : MPI_DATATYPE_NULL;
        break;
    default:
        return weft_error(MPI_ERR_ARG, "invalid typeclass %d", typeclass);
    }
    if (t == MPI_DATATYPE_NULL) {
        return weft_error(MPI_ERR_ARG, "no type of this class has size %d", size);
    }
    *datatype = t;
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Commit, free, names                                                 */

static int type_ptr(MPI_Datatype *datatype, weft_datatype_t **out)
{
    if (datatype == NULL) {
        return weft_error(MPI_ERR_ARG, "datatype pointer is NULL");
    }
    weft_datatype_t *dt = weft_datatype_from_handle(*datatype);
    if (dt == NULL) {
        return weft_error(MPI_ERR_TYPE, "invalid datatype%s",
                          *datatype == MPI_DATATYPE_NULL ? " (MPI_DATATYPE_NULL)" : "");
    }
    *out = dt;
    return MPI_SUCCESS;
}

int weft_type_commit_impl(MPI_Datatype *datatype)
{
    weft_datatype_t *dt = NULL;
    int              rc = type_ptr(datatype, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    /* The layout was built by the constructor; commit only marks the type
     * usable for communication. */
    dt->committed = 1;
    return MPI_SUCCESS;
}

int weft_type_free_impl(MPI_Datatype *datatype)
{
    weft_datatype_t *dt = NULL;
    int              rc = type_ptr(datatype, &dt);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (dt->builtin) {
        return weft_error(MPI_ERR_TYPE, "cannot free predefined datatype %s",
                          dt->name[0] ? dt->name : "(unnamed)");
    }
    rc = weft_attr_delete_all(WEFT_ATTR_TYPE, *datatype, &dt->attrs);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    /* Pending operations and derived types hold their own references. */
    weft_datatype_release(dt);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}

int weft_type_get_name_impl(weft_datatype_t *datatype, char *type_name, int *resultlen)
{
    const char *name = datatype ? datatype->name : "MPI_DATATYPE_NULL";
    size_t      n    = strnlen(name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, name, n);
    type_name[n] = '\0';
    *resultlen   = (int)n;
    return MPI_SUCCESS;
}

int weft_type_set_name_impl(weft_datatype_t *datatype, const char *type_name)
{
    if (type_name == NULL) {
        return weft_error(MPI_ERR_ARG, "type_name is NULL");
    }
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(datatype->name, type_name, n);
    datatype->name[n] = '\0';
    return MPI_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* Queries                                                             */

int weft_type_size_impl(weft_datatype_t *datatype, int *size)
{
    *size = datatype->size > INT_MAX ? MPI_UNDEFINED : (int)datatype->size;
    return MPI_SUCCESS;
}

int weft_type_size_c_impl(weft_datatype_t *datatype, MPI_Count *size)
{
    *size = datatype->size;
    return MPI_SUCCESS;
}

int weft_type_size_x_impl(weft_datatype_t *datatype, MPI_Count *size)
{
    *size = datatype->size;
    return MPI_SUCCESS;
}

int weft_type_get_extent_impl(weft_datatype_t *datatype, MPI_Aint *lb, MPI_Aint *extent)
{
    *lb     = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}

int weft_type_get_extent_c_impl(weft_datatype_t *datatype, MPI_Count *lb, MPI_Count *extent)
{
    *lb     = datatype->lb;
    *extent = datatype->extent;
    return MPI_SUCCESS;
}

int weft_type_get_extent_x_impl(weft_datatype_t *datatype, MPI_Count *lb, MPI_Count *extent)
{
    return weft_type_get_extent_c_impl(datatype, lb, extent);
}

int weft_type_get_true_extent_impl(weft_datatype_t *datatype, MPI_Aint *true_lb,
                                   MPI_Aint *true_extent)
{
    *true_lb     = datatype->true_lb;
    *true_extent = datatype->true_extent;
    return MPI_SUCCESS;
}

int weft_type_get_true_extent_c_impl(weft_datatype_t *datatype, MPI_Count *true_lb,
                                     MPI_Count *true_extent)
{
    *true_lb     = datatype->true_lb;
    *true_extent = datatype->true_extent;
    return MPI_SUCCESS;
}

int weft_type_get_true_extent_x_impl(weft_datatype_t *datatype, MPI_Count *true_lb,
                                     MPI_Count *true_extent)
{
    return weft_type_get_true_extent_c_impl(datatype, true_lb, true_extent);
}

static int is_named(const weft_datatype_t *dt)
{
    return dt->combiner == MPI_COMBINER_NAMED;
}

int weft_type_get_envelope_impl(weft_datatype_t *datatype, int *num_integers, int *num_addresses,
                                int *num_datatypes, int *combiner)
{
    const weft_dt_engine_t *eng = weft_dt_engine(datatype);
    if (is_named(datatype)) {
        *num_integers = *num_addresses = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    if (eng->nlarge > 0) {
        return weft_error(MPI_ERR_TYPE, "datatype was built with large counts: "
                                        "use MPI_Type_get_envelope_c");
    }
    *num_integers  = (int)eng->nints;
    *num_addresses = (int)eng->naddrs;
    *num_datatypes = (int)eng->ntypes;
    *combiner      = datatype->combiner;
    return MPI_SUCCESS;
}

int weft_type_get_envelope_c_impl(weft_datatype_t *datatype, MPI_Count *num_integers,
                                  MPI_Count *num_addresses, MPI_Count *num_large_counts,
                                  MPI_Count *num_datatypes, int *combiner)
{
    const weft_dt_engine_t *eng = weft_dt_engine(datatype);
    if (is_named(datatype)) {
        *num_integers = *num_addresses = *num_large_counts = *num_datatypes = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    *num_integers     = eng->nints;
    *num_addresses    = eng->naddrs;
    *num_large_counts = eng->nlarge;
    *num_datatypes    = eng->ntypes;
    *combiner         = datatype->combiner;
    return MPI_SUCCESS;
}

static int get_contents(weft_datatype_t *dt, MPI_Count max_i, MPI_Count max_a, MPI_Count max_l,
                        MPI_Count max_d, int *ints, MPI_Aint *addrs, MPI_Count *larges,
                        MPI_Datatype *types)
{
    const weft_dt_engine_t *eng = weft_dt_engine(dt);
    if (is_named(dt)) {
        return weft_error(MPI_ERR_TYPE, "predefined datatype %s has no contents", dt->name);
    }
    if (max_i < eng->nints || max_a < eng->naddrs || max_l < eng->nlarge || max_d < eng->ntypes) {
        return weft_error(MPI_ERR_ARG, "output arrays are too small (need %lld integers, "
                          "%lld addresses, %lld large counts, %lld datatypes)",
                          (long long)eng->nints, (long long)eng->naddrs, (long long)eng->nlarge,
                          (long long)eng->ntypes);
    }
    if ((eng->nints > 0 && ints == NULL) || (eng->naddrs > 0 && addrs == NULL) ||
        (eng->nlarge > 0 && larges == NULL) || (eng->ntypes > 0 && types == NULL)) {
        return weft_error(MPI_ERR_ARG, "NULL output array");
    }
    if (eng->nints > 0 && ints != NULL) {
        memcpy(ints, eng->ints, (size_t)eng->nints * sizeof(int));
    }
    if (eng->naddrs > 0 && addrs != NULL) {
        memcpy(addrs, eng->addrs, (size_t)eng->naddrs * sizeof(MPI_Aint));
    }
    if (eng->nlarge > 0 && larges != NULL) { /* NULL from the int binding */
        memcpy(larges, eng->larges, (size_t)eng->nlarge * sizeof(MPI_Count));
    }
    /* Derived types come back as new references the caller frees. */
    for (MPI_Count i = 0; i < eng->ntypes; i++) {
        weft_datatype_retain(eng->types[i]);
        types[i] = (MPI_Datatype)weft_object_handle(eng->types[i]);
    }
    return MPI_SUCCESS;
}

int weft_type_get_contents_impl(weft_datatype_t *datatype, int max_integers, int max_addresses,
                                int max_datatypes, int array_of_integers[],
                                MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    if (weft_dt_engine(datatype)->nlarge > 0) {
        return weft_error(MPI_ERR_TYPE, "datatype was built with large counts: "
                                        "use MPI_Type_get_contents_c");
    }
    return get_contents(datatype, max_integers, max_addresses, 0, max_datatypes,
                        array_of_integers, array_of_addresses, NULL, array_of_datatypes);
}

int weft_type_get_contents_c_impl(weft_datatype_t *datatype, MPI_Count max_integers,
                                  MPI_Count max_addresses, MPI_Count max_large_counts,
                                  MPI_Count max_datatypes, int array_of_integers[],
                                  MPI_Aint array_of_addresses[], MPI_Count array_of_large_counts[],
                                  MPI_Datatype array_of_datatypes[])
{
    return get_contents(datatype, max_integers, max_addresses, max_large_counts, max_datatypes,
                        array_of_integers, array_of_addresses, array_of_large_counts,
                        array_of_datatypes);
}
