/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * File views: the filetype is flattened once (set_view) into data blocks of
 * one tile, so any byte range of the view stream turns into file segments by
 * a binary search and a walk. Data representations convert between memory
 * and file bytes: native/internal copy, external32 through the datatype
 * engine, registered ones through the user's conversion functions.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "io_internal.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "api_impl.h"

/* Fake base address for flattening: iov entries minus it are offsets. */
#define FLAT_BASE ((char *)((uintptr_t)1 << 40))

static weft_io_datarep_t *datareps;
static pthread_mutex_t    datarep_lock = PTHREAD_MUTEX_INITIALIZER;

static weft_io_datarep_t *datarep_find(const char *name)
{
    weft_io_datarep_t *d;

    pthread_mutex_lock(&datarep_lock);
    for (d = datareps; d && strcmp(d->name, name) != 0; d = d->next) {
    }
    pthread_mutex_unlock(&datarep_lock);
    return d;
}

void weft_io_datarep_fini(void)
{
    while (datareps) {
        weft_io_datarep_t *d = datareps;
        datareps             = d->next;
        free(d);
    }
}

static int datarep_register(const char *name, void *rd, void *wr, int is_c,
                            MPI_Datarep_extent_function *ext, void *extra)
{
    weft_io_datarep_t *d;

    if (name == NULL || name[0] == '\0' || strlen(name) >= MPI_MAX_DATAREP_STRING) {
        return weft_error(MPI_ERR_ARG, "argument datarep: empty or longer than %d characters",
                          MPI_MAX_DATAREP_STRING - 1);
    }
    if (ext == NULL) {
        return weft_error(MPI_ERR_ARG, "argument dtype_file_extent_fn: NULL function");
    }
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
        datarep_find(name) != NULL) {
        return weft_error(MPI_ERR_DUP_DATAREP, "datarep \"%s\" is already defined", name);
    }
    d = calloc(1, sizeof(*d));
    if (d == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate a datarep");
    }
    strcpy(d->name, name);
    if (is_c) {
        d->read_fn  = (MPI_Datarep_conversion_function_c *)rd;
        d->write_fn = (MPI_Datarep_conversion_function_c *)wr;
    } else {
        d->read_fn_int  = (MPI_Datarep_conversion_function *)rd;
        d->write_fn_int = (MPI_Datarep_conversion_function *)wr;
    }
    d->extent_fn   = ext;
    d->extra_state = extra;
    pthread_mutex_lock(&datarep_lock);
    d->next  = datareps;
    datareps = d;
    pthread_mutex_unlock(&datarep_lock);
    return MPI_SUCCESS;
}

int weft_register_datarep_impl(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                               MPI_Datarep_conversion_function *write_conversion_fn,
                               MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return datarep_register(datarep, (void *)read_conversion_fn, (void *)write_conversion_fn, 0,
                            dtype_file_extent_fn, extra_state);
}

int weft_register_datarep_c_impl(const char *datarep,
                                 MPI_Datarep_conversion_function_c *read_conversion_fn,
                                 MPI_Datarep_conversion_function_c *write_conversion_fn,
                                 MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return datarep_register(datarep, (void *)read_conversion_fn, (void *)write_conversion_fn, 1,
                            dtype_file_extent_fn, extra_state);
}

/* File bytes of one element of dt under a registered datarep (-1: the type
 * is not made of one basic type, which the extent function cannot size). */
static MPI_Offset user_elem_bytes(const weft_io_datarep_t *d, const weft_datatype_t *dt)
{
    MPI_Aint     ext = 0;
    MPI_Datatype basic = dt->builtin ? (MPI_Datatype)weft_object_handle(dt) : dt->basic;
    MPI_Count    n     = dt->builtin ? 1 : dt->basic_count;

    if (basic == MPI_DATATYPE_NULL || d->extent_fn(basic, &ext, d->extra_state) != MPI_SUCCESS) {
        return -1;
    }
    return (MPI_Offset)(ext * n);
}

MPI_Offset weft_io_file_bytes(const weft_io_view_t *v, const weft_datatype_t *dt, MPI_Count count)
{
    MPI_Offset e;

    switch (v->drep) {
    case WEFT_DREP_NATIVE:
        return (MPI_Offset)(dt->size * count);
    case WEFT_DREP_EXTERNAL32:
        return (MPI_Offset)(weft_dt_ext32_size(dt) * count);
    case WEFT_DREP_USER:
        e = user_elem_bytes(v->user, dt);
        return e < 0 ? -1 : e * count;
    }
    return -1;
}

int weft_io_to_file(const weft_io_view_t *v, const void *buf, MPI_Count count, weft_datatype_t *dt,
                    void *out, MPI_Offset nbytes)
{
    int rc;

    if (v->drep == WEFT_DREP_EXTERNAL32) {
        weft_dt_ext32_pack(dt, count, buf, out);
        return MPI_SUCCESS;
    }
    if (v->drep == WEFT_DREP_USER && (v->user->write_fn || v->user->write_fn_int)) {
        MPI_Datatype h = (MPI_Datatype)weft_object_handle(dt);
        if (v->user->write_fn) {
            rc = v->user->write_fn((void *)buf, h, count, out, 0, v->user->extra_state);
        } else {
            rc = v->user->write_fn_int((void *)buf, h, (int)count, out, 0, v->user->extra_state);
        }
        return rc == MPI_SUCCESS ? MPI_SUCCESS
                                 : weft_error(rc, "the write conversion of datarep \"%s\" failed",
                                              v->user->name);
    }
    weft_dt_pack(dt, count, buf, 0, out, nbytes);
    return MPI_SUCCESS;
}

int weft_io_from_file(const weft_io_view_t *v, void *buf, MPI_Count count, weft_datatype_t *dt,
                      const void *in, MPI_Offset nbytes)
{
    int rc;

    if (v->drep == WEFT_DREP_EXTERNAL32) {
        weft_dt_ext32_unpack(dt, count, in, buf);
        return MPI_SUCCESS;
    }
    if (v->drep == WEFT_DREP_USER && (v->user->read_fn || v->user->read_fn_int)) {
        MPI_Datatype h = (MPI_Datatype)weft_object_handle(dt);
        if (v->user->read_fn) {
            rc = v->user->read_fn(buf, h, count, (void *)in, 0, v->user->extra_state);
        } else {
            rc = v->user->read_fn_int(buf, h, (int)count, (void *)in, 0, v->user->extra_state);
        }
        return rc == MPI_SUCCESS ? MPI_SUCCESS
                                 : weft_error(rc, "the read conversion of datarep \"%s\" failed",
                                              v->user->name);
    }
    weft_dt_unpack(dt, count, buf, 0, in, nbytes);
    return MPI_SUCCESS;
}

void weft_io_view_free(weft_io_view_t *v)
{
    if (v->etype) {
        weft_datatype_release(v->etype);
    }
    if (v->filetype) {
        weft_datatype_release(v->filetype);
    }
    free(v->blk_off);
    free(v->blk_len);
    free(v->blk_pre);
    memset(v, 0, sizeof(*v));
}

/* Flatten one tile of the filetype into merged, ordered blocks. */
static int flatten(weft_io_view_t *v, const weft_datatype_t *ft)
{
    struct iovec iov[256];
    MPI_Count    at = 0, got;
    int          cap = 16, n = 0;

    v->blk_off = malloc(cap * sizeof(*v->blk_off));
    v->blk_len = malloc(cap * sizeof(*v->blk_len));
    if (!v->blk_off || !v->blk_len) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the view");
    }
    while (at < ft->size) {
        int k = weft_dt_iov(ft, 1, FLAT_BASE, at, iov, 256, &got);
        if (k <= 0 || got <= 0) {
            return weft_error(MPI_ERR_INTERN, "cannot flatten the filetype");
        }
        for (int i = 0; i < k; i++) {
            MPI_Aint off = (MPI_Aint)((char *)iov[i].iov_base - FLAT_BASE);
            MPI_Aint len = (MPI_Aint)iov[i].iov_len;
            if (len == 0) {
                continue;
            }
            if (off < 0 || (n > 0 && off < v->blk_off[n - 1] + v->blk_len[n - 1])) {
                return weft_error(MPI_ERR_TYPE, "argument filetype: displacements must be "
                                                "non-negative and increasing");
            }
            if (n > 0 && off == v->blk_off[n - 1] + v->blk_len[n - 1]) {
                v->blk_len[n - 1] += len;
                continue;
            }
            if (n == cap) {
                cap *= 2;
                MPI_Aint  *o = realloc(v->blk_off, cap * sizeof(*o));
                MPI_Count *l = o ? realloc(v->blk_len, cap * sizeof(*l)) : NULL;
                if (o) {
                    v->blk_off = o;
                }
                if (!o || !l) {
                    return weft_error(MPI_ERR_NO_MEM, "cannot allocate the view");
                }
                v->blk_len = l;
            }
            v->blk_off[n]   = off;
            v->blk_len[n++] = len;
        }
        at += got;
    }
    v->nblocks = n;
    v->blk_pre = malloc((n + 1) * sizeof(*v->blk_pre));
    if (v->blk_pre == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate the view");
    }
    v->blk_pre[0] = 0;
    for (int i = 0; i < n; i++) {
        v->blk_pre[i + 1] = v->blk_pre[i] + v->blk_len[i];
    }
    /* Offsets count from the first data byte, which need not be at 0 (a
     * positive lower bound, or an hindexed type of absolute addresses as
     * HDF5 builds): base adds it back. Tiles may not overlap. */
    if (n > 0) {
        MPI_Aint first = v->blk_off[0];
        if (v->blk_off[n - 1] + v->blk_len[n - 1] - first > v->tile_ext) {
            return weft_error(MPI_ERR_TYPE, "argument filetype: its data spans %lld bytes, more than its "
                                            "extent %lld (tiles would overlap)",
                              (long long)(v->blk_off[n - 1] + v->blk_len[n - 1] - first), (long long)v->tile_ext);
        }
        v->base = first;
        for (int i = 0; i < n; i++) {
            v->blk_off[i] -= first;
        }
    }
    v->contig = (n == 1 && v->blk_off[0] == 0 && v->blk_len[0] == v->tile_ext);
    return MPI_SUCCESS;
}

/* external32 sizes that differ from the native ones (long double, MPI_LONG
 * on LP64, wchar_t...): the filetype is laid out in native bytes, the file in
 * external32 bytes. For a portable filetype (MPI-4 13.5.1: built from etypes,
 * displacements in multiples of the etype's extent) every native offset maps
 * to offset / native_size * external32_size; the view's blocks and tiles are
 * rescaled so the engine works in file bytes from here on. Other filetypes
 * have no defined file layout: MPI_ERR_UNSUPPORTED_DATAREP. */
static int scale_to_external32(weft_io_view_t *v, const weft_datatype_t *etype, const weft_datatype_t *filetype)
{
    MPI_Count n = etype->size, e = weft_dt_ext32_size(etype);

    if (e == n) {
        return MPI_SUCCESS;
    }
    if (weft_dt_ext32_size(filetype) * n != filetype->size * e || v->tile_ext % n != 0) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP,
                          "argument filetype: with datarep \"external32\" the etype's size differs from native "
                          "(%lld vs %lld bytes), so the filetype must be built from that etype (extent a multiple "
                          "of it)",
                          (long long)e, (long long)n);
    }
    for (int i = 0; i < v->nblocks; i++) {
        if (v->blk_off[i] % n != 0 || v->blk_len[i] % n != 0) {
            return weft_error(MPI_ERR_UNSUPPORTED_DATAREP,
                              "argument filetype: block %d at byte %lld is not on an etype boundary, so it has "
                              "no external32 layout",
                              i, (long long)v->blk_off[i]);
        }
        v->blk_off[i] = v->blk_off[i] / n * e;
        v->blk_len[i] = v->blk_len[i] / n * e;
    }
    for (int i = 0; i <= v->nblocks; i++) {
        v->blk_pre[i] = v->blk_pre[i] / n * e;
    }
    v->tile_size = v->tile_size / n * e;
    v->tile_ext  = v->tile_ext / n * e;
    return MPI_SUCCESS;
}

int weft_io_view_set(weft_file_t *fh, MPI_Offset disp, weft_datatype_t *etype,
                     weft_datatype_t *filetype, const char *datarep)
{
    weft_io_view_t v;
    int            rc;

    memset(&v, 0, sizeof(v));
    if (datarep == NULL || strlen(datarep) >= MPI_MAX_DATAREP_STRING) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP, "argument datarep: missing or too long");
    }
    if (!strcmp(datarep, "native") || !strcmp(datarep, "internal")) {
        v.drep = WEFT_DREP_NATIVE;
    } else if (!strcmp(datarep, "external32")) {
        v.drep = WEFT_DREP_EXTERNAL32;
    } else if ((v.user = datarep_find(datarep)) != NULL) {
        v.drep = WEFT_DREP_USER;
    } else {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP, "argument datarep: unknown data representation \"%s\"",
                          datarep);
    }
    strcpy(v.datarep, datarep);
    if (etype->size <= 0) {
        return weft_error(MPI_ERR_TYPE, "argument etype: size is 0");
    }
    if (filetype->size % etype->size != 0) {
        return weft_error(MPI_ERR_TYPE, "argument filetype: its size %lld is not a multiple of the "
                                        "etype size %lld",
                          (long long)filetype->size, (long long)etype->size);
    }
    if (disp < 0 && disp != MPI_DISPLACEMENT_CURRENT) {
        return weft_error(MPI_ERR_ARG, "argument disp: negative displacement %lld", (long long)disp);
    }
    v.esize = weft_io_file_bytes(&v, etype, 1);
    if (v.esize <= 0 || weft_io_file_bytes(&v, filetype, 1) < 0) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP,
                          "argument datarep: \"%s\" with these etype/filetype (their size in the file "
                          "differs from the native layout, which views here do not support)",
                          datarep);
    }
    if (v.drep == WEFT_DREP_USER) {
        /* The extent function sizes basic types only: the filetype must be
         * a contiguous run of etypes. */
        if (!filetype->is_contig) {
            return weft_error(MPI_ERR_UNSUPPORTED_DATAREP,
                              "argument filetype: datarep \"%s\" needs a contiguous filetype", datarep);
        }
        v.tile_size = weft_io_file_bytes(&v, filetype, 1);
        v.tile_ext  = (MPI_Aint)v.tile_size;
    } else {
        v.tile_size = filetype->size;
        v.tile_ext  = filetype->extent;
    }
    if (v.tile_size == 0 || v.tile_ext <= 0) {
        return weft_error(MPI_ERR_TYPE, "argument filetype: no data or non-positive extent");
    }
    if (v.drep == WEFT_DREP_USER) {
        v.nblocks = 1;
        v.blk_off = calloc(1, sizeof(*v.blk_off));
        v.blk_len = malloc(sizeof(*v.blk_len));
        v.blk_pre = malloc(2 * sizeof(*v.blk_pre));
        if (!v.blk_off || !v.blk_len || !v.blk_pre) {
            weft_io_view_free(&v);
            return weft_error(MPI_ERR_NO_MEM, "cannot allocate the view");
        }
        v.blk_len[0] = v.tile_size;
        v.blk_pre[0] = 0;
        v.blk_pre[1] = v.tile_size;
        v.contig     = 1;
    } else if ((rc = flatten(&v, filetype)) != MPI_SUCCESS ||
               (v.drep == WEFT_DREP_EXTERNAL32 && (rc = scale_to_external32(&v, etype, filetype)) != MPI_SUCCESS)) {
        weft_io_view_free(&v);
        return rc;
    }
    v.disp = disp;
    v.base += disp;
    weft_datatype_retain(etype);
    weft_datatype_retain(filetype);
    v.etype    = etype;
    v.filetype = filetype;
    weft_io_view_free(&fh->view);
    fh->view = v;
    return MPI_SUCCESS;
}

static int find_block(const weft_io_view_t *v, MPI_Offset r)
{
    int lo = 0, hi = v->nblocks - 1;

    while (lo < hi) {
        int mid = (lo + hi + 1) / 2;
        if (v->blk_pre[mid] <= r) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    return lo;
}

MPI_Offset weft_io_view_byte(const weft_io_view_t *v, MPI_Offset pos)
{
    MPI_Offset k = pos / v->tile_size, r = pos % v->tile_size;
    int        b = find_block(v, r);

    return v->base + k * v->tile_ext + v->blk_off[b] + (r - v->blk_pre[b]);
}

MPI_Offset weft_io_view_stream_below(const weft_io_view_t *v, MPI_Offset off)
{
    MPI_Offset rel, k, rr, n;

    if (off <= v->base) {
        return 0;
    }
    rel = off - v->base;
    k   = rel / v->tile_ext;
    rr  = rel % v->tile_ext;
    n   = k * v->tile_size;
    for (int b = 0; b < v->nblocks && v->blk_off[b] < rr; b++) {
        MPI_Offset in = rr - v->blk_off[b];
        n += in < v->blk_len[b] ? in : v->blk_len[b];
    }
    return n;
}

int weft_io_view_segments(const weft_io_view_t *v, MPI_Offset start, MPI_Offset len, weft_io_seg_t **segs_p,
                          int *nseg_p)
{
    weft_io_seg_t *segs;
    int            n = 0, cap;
    MPI_Offset     done = 0, k, r;
    int            b;

    *segs_p = NULL;
    *nseg_p = 0;
    if (len <= 0) {
        return MPI_SUCCESS;
    }
    if (v->contig) {
        cap = 1;
    } else {
        MPI_Offset est = (len / v->tile_size + 2) * v->nblocks;
        cap            = est > 1 << 20 ? 1 << 20 : (int)est;
    }
    segs = malloc(cap * sizeof(*segs));
    if (segs == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate file segments");
    }
    if (v->contig) {
        segs[0] = (weft_io_seg_t){v->base + start, len, 0};
        *segs_p = segs;
        *nseg_p = 1;
        return MPI_SUCCESS;
    }
    k = start / v->tile_size;
    r = start % v->tile_size;
    b = find_block(v, r);
    while (done < len) {
        MPI_Offset in   = r - v->blk_pre[b];
        MPI_Offset take = v->blk_len[b] - in;
        MPI_Offset off  = v->base + k * v->tile_ext + v->blk_off[b] + in;

        if (take > len - done) {
            take = len - done;
        }
        if (n > 0 && segs[n - 1].off + segs[n - 1].len == off) {
            segs[n - 1].len += take;
        } else {
            if (n == cap) {
                weft_io_seg_t *s = realloc(segs, 2 * (size_t)cap * sizeof(*segs));
                if (s == NULL) {
                    free(segs);
                    return weft_error(MPI_ERR_NO_MEM, "cannot allocate file segments");
                }
                segs = s;
                cap *= 2;
            }
            segs[n++] = (weft_io_seg_t){off, take, done};
        }
        done += take;
        r += take;
        if (++b == v->nblocks || r >= v->tile_size) {
            b = 0;
            r = 0;
            k++;
        }
    }
    *segs_p = segs;
    *nseg_p = n;
    return MPI_SUCCESS;
}
