/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Datatypes: the public face of the datatype engine (datatype.c and
 * friends). Point-to-point and collectives only use what is declared here.
 *
 * Packed-stream model: `count` elements of `dt` at `buf` define a stream of
 * count * dt->size bytes (the type signature's bytes in order). Pack/unpack
 * work on any byte range [offset, offset + len) of that stream, so callers
 * can pipeline or resume without keeping engine state.
 */
#ifndef WEFT_CORE_DATATYPE_H
#define WEFT_CORE_DATATYPE_H

#include <stddef.h>
#include <sys/uio.h>
#include "core/object.h"

struct weft_attr_entry;

struct weft_datatype {
    weft_object_t           hdr;
    MPI_Count               size;        /* bytes of data in one element */
    MPI_Aint                lb, extent;  /* MPI lower bound and extent */
    MPI_Aint                true_lb, true_extent;
    int                     is_contig;   /* one element's data is the size bytes at
                                            buf + true_lb, and extent == size, so n
                                            elements are n*size contiguous bytes */
    int                     committed;
    int                     builtin;     /* predefined (never freed) */
    int                     combiner;    /* MPI_COMBINER_* */
    MPI_Datatype            basic;       /* for predefined: itself; for derived: the
                                            single basic type if homogeneous, else
                                            MPI_DATATYPE_NULL (used by reductions) */
    MPI_Count               basic_count; /* elements of `basic` in one element */
    void                   *engine;      /* engine-private layout description */
    struct weft_attr_entry *attrs;
    char                    name[MPI_MAX_OBJECT_NAME];
};

static inline int weft_datatype_is_committed(const weft_datatype_t *dt)
{
    return dt->committed;
}
static inline int weft_datatype_is_builtin(const weft_datatype_t *dt)
{
    return dt->builtin;
}

/* Fill the builtin table (every predefined datatype of the ABI). */
int  weft_datatype_module_init(void);
void weft_datatype_module_fini(void);

void weft_datatype_retain(weft_datatype_t *dt);
void weft_datatype_release(weft_datatype_t *dt); /* frees when unused */

/* Copy bytes [offset, offset+len) of the packed stream of (buf, count, dt)
 * into out. Returns bytes copied (< len only at the end of the stream). */
MPI_Count weft_dt_pack(const weft_datatype_t *dt, MPI_Count count, const void *buf,
                       MPI_Count offset, void *out, MPI_Count len);

/* Inverse of weft_dt_pack: scatter len bytes from in to stream bytes
 * [offset, offset+len) of (buf, count, dt). Returns bytes consumed. */
MPI_Count weft_dt_unpack(const weft_datatype_t *dt, MPI_Count count, void *buf,
                         MPI_Count offset, const void *in, MPI_Count len);

/* Describe stream bytes starting at offset as at most max_iov memory ranges
 * (for single-copy CMA). Returns the number of iovecs filled; *bytes_p gets
 * the stream bytes they cover (may stop early at max_iov). */
int weft_dt_iov(const weft_datatype_t *dt, MPI_Count count, const void *buf, MPI_Count offset,
                struct iovec *iov, int max_iov, MPI_Count *bytes_p);

/* Copy (sbuf, scount, sdt) to (rbuf, rcount, rdt) as if sent and received;
 * copies min of the two stream sizes. Returns bytes copied. */
MPI_Count weft_dt_copy(const void *sbuf, MPI_Count scount, const weft_datatype_t *sdt,
                       void *rbuf, MPI_Count rcount, const weft_datatype_t *rdt);

/* Number of whole basic elements in nbytes of the stream (MPI_Get_elements),
 * or MPI_UNDEFINED when nbytes ends inside a basic element. */
MPI_Count weft_dt_elements(const weft_datatype_t *dt, MPI_Count nbytes);

/* external32 (MPI-IO file views use them too): bytes of one element in
 * external32, and conversion of count elements between memory and a packed
 * external32 stream (out has room for count * weft_dt_ext32_size(dt)). */
MPI_Count weft_dt_ext32_size(const weft_datatype_t *dt);
void      weft_dt_ext32_pack(const weft_datatype_t *dt, MPI_Count count, const void *buf, void *out);
void      weft_dt_ext32_unpack(const weft_datatype_t *dt, MPI_Count count, const void *in, void *buf);

#endif
