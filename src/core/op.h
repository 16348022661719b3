/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Reduction operations (MPI_Op objects) and the reduction kernels that
 * collectives, MPI_Reduce_local and RMA accumulate use.
 *
 * Semantics follow the standard's user function: a reduction step computes
 * inout[i] = in[i] op inout[i], in is the operand of the lower rank when the
 * op is not commutative. Builtin ops have one kernel per predefined type
 * (vectorizable loops over contiguous arrays); derived datatypes reduce
 * through their homogeneous basic type (dt->basic): contiguous ones in
 * place, others by packing both operands, reducing and unpacking.
 */
#ifndef WEFT_CORE_OP_H
#define WEFT_CORE_OP_H

#include <mpi.h>
#include "core/object.h"

/* Index of a builtin op (handle - 0x20). */
typedef enum {
    WEFT_OP_NULL    = 0x00,
    WEFT_OP_SUM     = 0x01,
    WEFT_OP_MIN     = 0x02,
    WEFT_OP_MAX     = 0x03,
    WEFT_OP_PROD    = 0x04,
    WEFT_OP_BAND    = 0x08,
    WEFT_OP_BOR     = 0x09,
    WEFT_OP_BXOR    = 0x0a,
    WEFT_OP_LAND    = 0x10,
    WEFT_OP_LOR     = 0x11,
    WEFT_OP_LXOR    = 0x12,
    WEFT_OP_MINLOC  = 0x18,
    WEFT_OP_MAXLOC  = 0x19,
    WEFT_OP_REPLACE = 0x1c,
    WEFT_OP_NO_OP   = 0x1d,
    WEFT_OP_USER    = -1
} weft_op_id_t;

struct weft_op {
    weft_object_t        hdr;
    int                  id;          /* weft_op_id_t */
    int                  commutative;
    MPI_User_function   *user_fn;     /* MPI_Op_create */
    MPI_User_function_c *user_fn_c;   /* MPI_Op_create_c */
    const char          *name;
};

static inline int weft_op_is_builtin(const weft_op_t *op)
{
    return op->id != WEFT_OP_USER;
}
static inline int weft_op_is_commutative(const weft_op_t *op)
{
    return op->commutative;
}

/* Can op reduce elements of dt? MPI_SUCCESS, or MPI_ERR_OP with the reason
 * recorded (builtin op not defined for the type, or a derived type that is
 * not homogeneous). User ops accept every type. */
int weft_op_check(const weft_op_t *op, const weft_datatype_t *dt);

/* inout = in op inout, count elements of dt (laid out as dt describes, at
 * in and inout). in and inout must not overlap. Returns MPI_SUCCESS or an
 * error code (MPI_ERR_NO_MEM for a derived type's temporary). */
int weft_op_reduce(const weft_op_t *op, const void *in, void *inout, MPI_Count count,
                   const weft_datatype_t *dt);

/* The kernel computing inout op= in over n contiguous elements of dt's
 * basic type, or NULL where there is none to call directly: user ops,
 * MPI_REPLACE, MPI_NO_OP, MINLOC/MAXLOC, a type that is not built from one
 * predefined type, and ops undefined for the type (weft_op_check tells
 * which is an error). For callers of one small operand per call
 * (fetch_and_op), which check once and call it under their own lock. */
typedef void (*weft_op_kernel_t)(const void *in, void *inout, MPI_Count n);
weft_op_kernel_t weft_op_kernel(const weft_op_t *op, const weft_datatype_t *dt);

/* Keep a user op alive while a non-blocking operation uses it. */
void weft_op_retain(weft_op_t *op);
void weft_op_release(weft_op_t *op);

#endif
