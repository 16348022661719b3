/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-IO internals: the file object, its view, and the access engine shared
 * by the independent (file.c, access.c) and collective (twophase.c) paths.
 *
 * Positions: a view is disp + tiles of the filetype; the *view stream* is the
 * concatenation of the filetype's data bytes over all tiles. File pointers
 * count etypes of the view stream; the engine works in stream bytes and turns
 * a byte range of the stream into (file offset, length) segments.
 */
#ifndef WEFT_IO_INTERNAL_H
#define WEFT_IO_INTERNAL_H

#include <pthread.h>
#include <stdint.h>
#include <sys/uio.h>
#include <mpi.h>
#include "core/object.h"

typedef struct {
    MPI_Offset off; /* file offset in bytes */
    MPI_Offset len;
    MPI_Offset pos; /* view-stream byte this segment starts at (relative to the access) */
} weft_io_seg_t;

/* Data representations: native and internal store memory bytes; external32
 * converts through the datatype engine; a registered one through the user's
 * functions. */
typedef enum { WEFT_DREP_NATIVE = 0, WEFT_DREP_EXTERNAL32, WEFT_DREP_USER } weft_drep_kind_t;

typedef struct weft_io_datarep {
    struct weft_io_datarep          *next;
    char                             name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function_c *read_fn, *write_fn;
    MPI_Datarep_conversion_function *read_fn_int, *write_fn_int;
    MPI_Datarep_extent_function     *extent_fn;
    void                            *extra_state;
} weft_io_datarep_t;

typedef struct {
    MPI_Offset        disp;
    MPI_Offset        base;      /* disp + the filetype's first data byte: where tile 0's data starts */
    weft_datatype_t  *etype, *filetype;
    MPI_Count         esize;     /* etype bytes in the file */
    MPI_Count         tile_size; /* data bytes of one filetype tile */
    MPI_Aint          tile_ext;  /* extent of one tile */
    int               nblocks;   /* flattened filetype: data blocks of one tile */
    MPI_Aint         *blk_off;   /* offset from the tile's first data byte */
    MPI_Count        *blk_len;
    MPI_Count        *blk_pre;   /* data bytes before block i */
    int               contig;    /* one block at 0 with tile_size == tile_ext */
    weft_drep_kind_t  drep;
    weft_io_datarep_t *user;
    char              datarep[MPI_MAX_DATAREP_STRING];
} weft_io_view_t;

typedef struct {
    MPI_Count cb_buffer_size;
    int       cb_nodes;      /* aggregators (writes; reads too when the hint or WEFT_IO_CB_NODES sets it) */
    int       cb_nodes_read; /* aggregators of collective reads */
    int       cb_read, cb_write;       /* 0 disable, 1 enable, 2 automatic */
    int       ds_read, ds_write;       /* data sieving: same encoding */
    MPI_Count ind_rd_buffer_size, ind_wr_buffer_size;
    int       striping_factor;         /* 0: not given */
    MPI_Count striping_unit;
    int       shared_in_tmp;           /* internal: shared pointer lives in TMPDIR */
} weft_io_hints_t;

/* A pending split collective (begin done, end not yet called). */
typedef struct {
    int             active;
    const void     *buf;
    weft_request_t *req; /* the background transfer begin started */
} weft_io_split_t;

typedef struct weft_io_nbc weft_io_nbc_t;

struct weft_file {
    weft_object_t      hdr;
    weft_comm_t       *comm;      /* private duplicate of the user's communicator */
    int                fd;
    int                can_read;  /* fd is readable (WRONLY files may not be) */
    int                amode;
    int                atomic;
    char              *path;
    weft_errhandler_t *errhandler;
    weft_io_hints_t    hints;
    weft_info_t       *info;      /* the user's extra keys, returned by get_info */
    weft_io_view_t     view;
    MPI_Offset         ind_pos;   /* individual file pointer, in etypes */
    int                shared_fd; /* sidecar holding the shared file pointer */
    weft_io_split_t    split;
    void              *scratch[3];     /* two-phase buffers kept between calls: 0 the */
    size_t             scratch_len[3]; /* window, 1-2 round data (no page faults on every collective) */
    pthread_mutex_t    lock;      /* individual pointer updates */
    pthread_mutex_t    xfer_lock; /* one transfer at a time (MPI thread vs the I/O worker) */
    int                async_pending; /* queued non-blocking transfers (async.c) */
    /* Non-blocking collectives (nbcoll.c): they run one at a time in call
     * order, on their own duplicate of comm so their exchanges never meet
     * the blocking calls' or the user's. */
    weft_comm_t       *nbc_comm;
    weft_io_nbc_t     *nbc_head, *nbc_tail;
    weft_file_t       *nbc_next; /* files with queued collectives */
};

/* MPI_ERR_READ_ONLY unless the file was opened for writing. */
int weft_io_check_writable(weft_file_t *fh);

/* errno of a failed system call -> MPI error class. */
int weft_io_errno_class(int err, int writing);

/* view.c */
int        weft_io_view_set(weft_file_t *fh, MPI_Offset disp, weft_datatype_t *etype,
                            weft_datatype_t *filetype, const char *datarep);
void       weft_io_view_free(weft_io_view_t *v);
/* Segments covering stream bytes [start, start+len); caller frees *segs. */
int        weft_io_view_segments(const weft_io_view_t *v, MPI_Offset start, MPI_Offset len,
                                 weft_io_seg_t **segs, int *nseg);
/* File byte of stream byte pos; number of stream bytes below file byte off. */
MPI_Offset weft_io_view_byte(const weft_io_view_t *v, MPI_Offset pos);
MPI_Offset weft_io_view_stream_below(const weft_io_view_t *v, MPI_Offset off);
/* Bytes in the file of count elements of dt under the view's datarep (< 0: unsupported). */
MPI_Offset weft_io_file_bytes(const weft_io_view_t *v, const weft_datatype_t *dt, MPI_Count count);
/* Memory <-> file representation of (buf, count, dt); out/in have file_bytes. */
int        weft_io_to_file(const weft_io_view_t *v, const void *buf, MPI_Count count,
                           weft_datatype_t *dt, void *out, MPI_Offset nbytes);
int        weft_io_from_file(const weft_io_view_t *v, void *buf, MPI_Count count,
                             weft_datatype_t *dt, const void *in, MPI_Offset nbytes);
void       weft_io_datarep_fini(void);

/* access.c: independent transfer of nbytes file-representation bytes. */
int weft_io_pwrite_all(weft_file_t *fh, const void *p, MPI_Offset len, MPI_Offset off);
int weft_io_pread_all(weft_file_t *fh, void *p, MPI_Offset len, MPI_Offset off, MPI_Offset *got);
/* The same for a contiguous file range scattered to iov (modified: entries
 * are consumed as they are filled). */
int weft_io_preadv_all(weft_file_t *fh, struct iovec *iov, int cnt, MPI_Offset off, MPI_Offset *got);
int weft_io_indep(weft_file_t *fh, int writing, const weft_io_seg_t *segs, int nseg,
                  char *data, MPI_Offset *done);

/* Grow-only scratch buffer i (0-2) of the file (NULL when out of memory). */
void *weft_io_scratch(weft_file_t *fh, int i, size_t len);

/* twophase.c: collective transfer; every rank of fh->comm calls it, with
 * its local error class so far (the ranks agree on it first). */
int weft_io_collective(weft_file_t *fh, int local_rc, int writing, const weft_io_seg_t *segs, int nseg,
                       char *data, MPI_Offset nbytes, MPI_Offset *done);

/* twophase.c: the same transfer as a state machine run in the background
 * on comm (non-blocking exchanges, file I/O on the I/O worker). NULL when
 * out of memory. advance returns 1 once finished; result gives its error
 * code and the stream bytes done. segs and data must live until then. */
typedef struct weft_io_tp weft_io_tp_t;
weft_io_tp_t *weft_io_tp_start(weft_file_t *fh, weft_comm_t *comm, int local_rc, int writing,
                               const weft_io_seg_t *segs, int nseg, char *data, MPI_Offset nbytes);
int           weft_io_tp_advance(weft_io_tp_t *t);
int           weft_io_tp_result(weft_io_tp_t *t, MPI_Offset *done);
void          weft_io_tp_free(weft_io_tp_t *t);

/* access.c: one access of the view: the segments of stream bytes
 * [pos*esize, +nbytes) and the data in file representation (the user's
 * buffer itself when no conversion is needed; packed for writes). finish
 * unpacks reads, fills status (memory bytes) and frees. */
typedef struct {
    int              writing, direct;
    MPI_Offset       pos, nbytes; /* pos in etypes */
    void            *buf;
    MPI_Count        count;
    weft_datatype_t *dt;
    weft_io_seg_t   *segs;
    int              nseg;
    char            *data;
} weft_io_xfer_t;
int weft_io_xfer_prepare(weft_file_t *fh, weft_io_xfer_t *x);
int weft_io_xfer_finish(weft_file_t *fh, weft_io_xfer_t *x, int rc, MPI_Offset done, MPI_Status *status,
                        MPI_Offset *moved);

/* access.c: independent transfer at view position pos (etypes), as the
 * blocking calls do it; status gets the memory bytes moved. */
int weft_io_transfer(weft_file_t *fh, int writing, MPI_Offset pos, void *buf, MPI_Count count,
                     weft_datatype_t *dt, MPI_Offset nbytes, MPI_Status *status);

/* async.c: queue an independent transfer for the I/O worker; *request
 * completes when the data is in the file / in buf. */
int  weft_io_post(weft_file_t *fh, int writing, MPI_Offset pos, void *buf, MPI_Count count, weft_datatype_t *dt,
                  MPI_Offset nbytes, MPI_Request *request);
/* Wait until the file has no queued transfers (close). */
void weft_io_drain(weft_file_t *fh);
/* Start the I/O worker thread (once; its finalize hook stops it). */
int  weft_io_worker_start(void);
/* fn(arg) under fh's xfer_lock (file I/O steps never interleave with
 * another transfer of the file). */
int  weft_io_locked(weft_file_t *fh, int (*fn)(void *), void *arg);
/* The same on the I/O worker thread; weft_io_job_test returns 1 (and frees
 * the job, *rc its result) once it ran. */
typedef struct io_job weft_io_job_t;
int  weft_io_job_post(weft_file_t *fh, int (*fn)(void *), void *arg, weft_io_job_t **job);
/* A failed job's reason (recorded on the worker) is recorded again on the
 * calling thread. */
int  weft_io_job_test(weft_io_job_t *job, int *rc);
/* The same, sleeping until the job ran (no progress: the worker needs none). */
int  weft_io_job_wait(weft_io_job_t *job, int *rc);

/* Errors found in the background. weft_io_reason_copy: this thread's
 * recorded reason, copied (NULL when none). weft_io_request_fail fails r
 * with rc; the call that completes it (MPI_Wait/Test..., *_end) reports
 * "<call>, in the background: <reason>" on fh's error handler. It takes
 * reason (may be NULL: the message then names the call and fh's path). */
char *weft_io_reason_copy(void);
void  weft_io_request_fail(weft_request_t *r, weft_file_t *fh, const char *call, int rc, char *reason);

/* nbcoll.c: start a collective access in the background (x prepared; it
 * is taken over) after the file's earlier ones; *req completes when it is
 * done. With local_rc an error the rank still takes part (so nobody waits
 * for it) and req is NULL. Returns local_rc or an error of its own.
 * ordered: x is not prepared yet; its position (rank order after the
 * shared file pointer) is found in the background first. */
int  weft_io_nbc_start(weft_file_t *fh, int local_rc, int ordered, weft_io_xfer_t *x, weft_request_t **req);
/* Wait for the file's background collectives (every collective call on
 * the file first, close). */
void weft_io_nbc_drain(weft_file_t *fh);

/* file.c: shared file pointer (etypes), atomically fetched and advanced. */
int weft_io_shared_fetch_add(weft_file_t *fh, MPI_Offset add, MPI_Offset *old);
int weft_io_shared_set(weft_file_t *fh, MPI_Offset value);

#endif
