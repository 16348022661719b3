/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Private to the datatype engine (src/core/datatype*.c and its unit test).
 *
 * Every datatype carries three views of itself:
 *  - the construction record: combiner and the argument arrays exactly as
 *    MPI_Type_get_envelope/get_contents report them;
 *  - the plan: the type map as an ordered list of runs of child elements,
 *    used to compute bounds, walk basic elements (external32, elements) and
 *    build the layout;
 *  - the layout: one element's data bytes as an ordered list of strided
 *    segments, adjacent pieces merged, with the stream offset of each
 *    segment so any byte of the packed stream is found by binary search.
 */
#ifndef WEFT_CORE_DATATYPE_INTERNAL_H
#define WEFT_CORE_DATATYPE_INTERNAL_H

#include "core/datatype.h"

/* n blocks of len bytes at disp, disp + stride, ... (offsets from the
 * element's base address); `off` is the stream offset of the first byte. */
typedef struct {
    MPI_Aint  disp;
    MPI_Aint  len;
    MPI_Aint  stride;
    MPI_Count n;
    MPI_Count off;
} weft_dt_seg_t;

/* rep repetitions (rep_stride bytes apart) of count consecutive elements of
 * type (type->extent apart) starting at disp. Stream order: rep outer. */
typedef struct {
    MPI_Aint         disp;
    MPI_Count        count;
    MPI_Count        rep;
    MPI_Aint         rep_stride;
    weft_datatype_t *type;
} weft_dt_block_t;

/* How a predefined leaf converts to external32 (big-endian). */
enum {
    WEFT_DT_CONV_NONE = 0, /* bytes: copied as is */
    WEFT_DT_CONV_SWAP,     /* integers, IEEE floats, logicals: byte reversal */
    WEFT_DT_CONV_USWAP,    /* unsigned integers narrower in external32: reversal, zero fill */
    WEFT_DT_CONV_LDOUBLE   /* x87 80-bit extended <-> IEEE binary128 */
};

typedef struct weft_dt_engine {
    /* construction record */
    int               large;    /* made by a _c constructor */
    MPI_Count         nints, naddrs, nlarge, ntypes;
    int              *ints;
    MPI_Aint         *addrs;
    MPI_Count        *larges;
    weft_datatype_t **types;    /* retained */

    /* plan; a leaf (non-pair predefined type) has nblocks == 0 */
    int               nblocks;
    weft_dt_block_t  *blocks;   /* children retained */

    MPI_Count         nelems;     /* basic elements in one element (a pair is 2) */
    MPI_Count         ext32_size; /* external32 bytes of one element */
    int               align;      /* strictest alignment of the basic types */
    int               sticky;     /* bounds were set explicitly (resized) */
    int               ext32_conv; /* leaves: WEFT_DT_CONV_* */
    int               ext32_unit; /* leaves: external32 bytes of one unit */
    int               nunits;     /* leaves: units per element (complex: 2) */

    /* layout of one element */
    MPI_Count         nseg;
    weft_dt_seg_t    *segs;
} weft_dt_engine_t;

static inline weft_dt_engine_t *weft_dt_engine(const weft_datatype_t *dt)
{
    return (weft_dt_engine_t *)dt->engine;
}

/* Constructors: MPI semantics, counts and displacements widened to
 * MPI_Count; `large` records whether the _c binding was used (it decides
 * how get_envelope/get_contents report the arguments). Return an MPI error
 * class (reason recorded with weft_error) and set *out only on success. The
 * new type is uncommitted, refcount 1. */
int weft_dt_contiguous(MPI_Count count, weft_datatype_t *old, int large, weft_datatype_t **out);
/* vector (stride in elements of old) or hvector (stride in bytes). */
int weft_dt_vector(MPI_Count count, MPI_Count blocklength, MPI_Count stride, int hvector,
                   weft_datatype_t *old, int large, weft_datatype_t **out);
/* combiner: MPI_COMBINER_INDEXED, _HINDEXED (blocklengths[]),
 * _INDEXED_BLOCK, _HINDEXED_BLOCK (one blocklength). */
int weft_dt_indexed(int combiner, MPI_Count count, const MPI_Count *blocklengths,
                    MPI_Count blocklength, const MPI_Count *displs, weft_datatype_t *old, int large,
                    weft_datatype_t **out);
int weft_dt_struct(MPI_Count count, const MPI_Count *blocklengths, const MPI_Count *displs,
                   weft_datatype_t *const *types, int large, weft_datatype_t **out);
int weft_dt_resized(weft_datatype_t *old, MPI_Count lb, MPI_Count extent, int large,
                    weft_datatype_t **out);
int weft_dt_dup(weft_datatype_t *old, weft_datatype_t **out);
int weft_dt_subarray(int ndims, const MPI_Count *sizes, const MPI_Count *subsizes,
                     const MPI_Count *starts, int order, weft_datatype_t *old, int large,
                     weft_datatype_t **out);
int weft_dt_darray(int size, int rank, int ndims, const MPI_Count *gsizes, const int *distribs,
                   const int *dargs, const int *psizes, int order, weft_datatype_t *old,
                   int large, weft_datatype_t **out);
int weft_dt_value_index(weft_datatype_t *value, weft_datatype_t *index, weft_datatype_t **out);

/* Internal: a new derived type from a plan (blocks copied, children
 * retained); bounds_set gives explicit lb/extent (resized). */
int weft_dt_from_plan(int combiner, const weft_dt_block_t *blocks, int nblocks, int bounds_set,
                      MPI_Aint lb, MPI_Aint extent, weft_datatype_t **out);
/* Attach the construction record (arrays copied, types retained). */
int weft_dt_set_contents(weft_datatype_t *dt, int large, const int *ints, MPI_Count nints,
                         const MPI_Aint *addrs, MPI_Count naddrs, const MPI_Count *larges,
                         MPI_Count nlarge, weft_datatype_t *const *types, MPI_Count ntypes);

/* Bytes of the packed stream that hold the first elems basic elements
 * (MPI_Status_set_elements). */
MPI_Count weft_dt_elements_to_bytes(const weft_datatype_t *dt, MPI_Count elems);

/* Predefined lookup (NULL when v is not a predefined datatype). */
weft_datatype_t *weft_dt_builtin(MPI_Datatype v);

/* external32: weft_dt_ext32_size/pack/unpack are declared in core/datatype.h. */

#endif
