/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-IO data access: every form (explicit offset, individual and shared
 * pointers, ordered; blocking, non-blocking, split collective) funnels into
 * access(): the memory data is converted to its file representation, the
 * view turns the stream range into file segments, and the segments go to
 * the independent path here (with data sieving) or the two-phase collective
 * path (twophase.c).
 *
 * Non-blocking forms return at once: independent ones queue the transfer
 * for the I/O worker (async.c), collective ones (and split *_begin) start
 * the two-phase transfer in the background (nbcoll.c); the request (or
 * *_end) completes when the data is in the file or in the buffer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include "io_internal.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/request.h"
#include "core/status.h"
#include "api_impl.h"

#define MODE_ACCESS (MPI_MODE_RDONLY | MPI_MODE_WRONLY | MPI_MODE_RDWR)

/* ---- POSIX transfers --------------------------------------------------------- */

int weft_io_pwrite_all(weft_file_t *fh, const void *p, MPI_Offset len, MPI_Offset off)
{
    const char *c = p;

    while (len > 0) {
        ssize_t n = pwrite(fh->fd, c, (size_t)len, (off_t)off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            int err = n == 0 ? ENOSPC : errno;
            return weft_error(weft_io_errno_class(err, 1), "file \"%s\": write of %lld bytes at %lld: %s",
                              fh->path, (long long)len, (long long)off, strerror(err));
        }
        c += n;
        off += n;
        len -= n; /* short write: retry the rest */
    }
    return MPI_SUCCESS;
}

/* Drop the first n bytes of iov[0..*cnt). */
static void iov_advance(struct iovec **iov, int *cnt, size_t n)
{
    while (*cnt > 0 && n >= (*iov)->iov_len) {
        n -= (*iov)->iov_len;
        (*iov)++;
        (*cnt)--;
    }
    if (*cnt > 0) {
        (*iov)->iov_base = (char *)(*iov)->iov_base + n;
        (*iov)->iov_len -= n;
    }
}

/* iov[0..cnt) is one contiguous file range from off. Calls go IOV_MAX
 * entries at a time; a short read resumes inside its entry. */
int weft_io_preadv_all(weft_file_t *fh, struct iovec *iov, int cnt, MPI_Offset off, MPI_Offset *got)
{
    *got = 0;
    while (cnt > 0) {
        ssize_t n = preadv(fh->fd, iov, cnt < IOV_MAX ? cnt : IOV_MAX, (off_t)off);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            int       err  = errno;
            long long left = 0;
            for (int i = 0; i < cnt; i++) {
                left += (long long)iov[i].iov_len;
            }
            return weft_error(weft_io_errno_class(err, 0), "file \"%s\": read of %lld bytes at %lld: %s",
                              fh->path, left, (long long)off, strerror(err));
        }
        if (n == 0) {
            break; /* end of file */
        }
        off += n;
        *got += n;
        iov_advance(&iov, &cnt, (size_t)n);
    }
    return MPI_SUCCESS;
}

int weft_io_pread_all(weft_file_t *fh, void *p, MPI_Offset len, MPI_Offset off, MPI_Offset *got)
{
    struct iovec v = {p, len > 0 ? (size_t)len : 0};

    return weft_io_preadv_all(fh, &v, len > 0, off, got);
}

static int range_lock(weft_file_t *fh, short type, MPI_Offset off, MPI_Offset len)
{
    struct flock fl = {.l_type = type, .l_whence = SEEK_SET, .l_start = (off_t)off, .l_len = (off_t)len};

    while (fcntl(fh->fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR) {
            return weft_error(MPI_ERR_IO, "file \"%s\": cannot lock bytes %lld..%lld: %s", fh->path,
                              (long long)off, (long long)(off + len), strerror(errno));
        }
    }
    return MPI_SUCCESS;
}

/* ---- independent access with data sieving --------------------------------------- */

/* Sieve segments [i, j) through one buffer: read the span once, copy out
 * (read) or patch and write back (write; the caller holds a write lock on
 * the whole access, so the read-modify-write cannot lose another
 * process's bytes). */
static int sieve(weft_file_t *fh, int writing, const weft_io_seg_t *segs, int i, int j, char *data, char *win,
                 MPI_Offset *done, int *short_read)
{
    MPI_Offset start = segs[i].off, span = segs[j - 1].off + segs[j - 1].len - start, got;
    int        rc;

    rc = weft_io_pread_all(fh, win, span, start, &got);
    if (rc == MPI_SUCCESS && writing) {
        if (got < span) {
            memset(win + got, 0, (size_t)(span - got));
        }
        for (int k = i; k < j; k++) {
            memcpy(win + (segs[k].off - start), data + segs[k].pos, (size_t)segs[k].len);
        }
        rc = weft_io_pwrite_all(fh, win, span, start);
        *done += rc == MPI_SUCCESS ? segs[j - 1].pos + segs[j - 1].len - segs[i].pos : 0;
    } else if (rc == MPI_SUCCESS) {
        for (int k = i; k < j && !*short_read; k++) {
            MPI_Offset avail = got - (segs[k].off - start);
            avail            = avail < 0 ? 0 : avail > segs[k].len ? segs[k].len : avail;
            memcpy(data + segs[k].pos, win + (segs[k].off - start), (size_t)avail);
            *done      = segs[k].pos + avail;
            *short_read = avail < segs[k].len;
        }
    }
    return rc;
}

int weft_io_indep(weft_file_t *fh, int writing, const weft_io_seg_t *segs, int nseg, char *data,
                  MPI_Offset *done)
{
    MPI_Count bufsize = writing ? fh->hints.ind_wr_buffer_size : fh->hints.ind_rd_buffer_size;
    int       mode    = writing ? fh->hints.ds_write : fh->hints.ds_read;
    char     *win     = NULL;
    int       rc      = MPI_SUCCESS, short_read = 0, i = 0, locked = 0;

    *done = 0;
    if (writing && !fh->can_read) {
        mode = 0; /* cannot read back what we would rewrite */
    }
    if (writing && mode != 0 && nseg > 1 && !fh->atomic) {
        /* One lock for the whole access (atomic mode has one already):
         * per-window locks make the writers of interleaved ranges hand
         * the lock back and forth, a context switch each time. */
        rc = range_lock(fh, F_WRLCK, segs[0].off, segs[nseg - 1].off + segs[nseg - 1].len - segs[0].off);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
        locked = 1;
    }
    while (i < nseg && rc == MPI_SUCCESS && !short_read) {
        int        j     = i + 1;
        MPI_Offset bytes = segs[i].len;

        if (mode != 0 && segs[i].len < bufsize) {
            while (j < nseg && segs[j].off + segs[j].len - segs[i].off <= bufsize) {
                bytes += segs[j].len;
                j++;
            }
        }
        /* automatic: sieve when the holes are not much larger than the data */
        if (j - i > 1 && (mode == 1 || segs[j - 1].off + segs[j - 1].len - segs[i].off <= 8 * bytes)) {
            if (win == NULL && (win = malloc((size_t)bufsize)) == NULL) {
                rc = weft_error(MPI_ERR_NO_MEM, "cannot allocate the data sieving buffer");
                break;
            }
            rc = sieve(fh, writing, segs, i, j, data, win, done, &short_read);
            i  = j;
            continue;
        }
        for (; i < j && rc == MPI_SUCCESS && !short_read; i++) {
            MPI_Offset got;
            if (writing) {
                rc = weft_io_pwrite_all(fh, data + segs[i].pos, segs[i].len, segs[i].off);
                *done += rc == MPI_SUCCESS ? segs[i].len : 0;
            } else {
                rc         = weft_io_pread_all(fh, data + segs[i].pos, segs[i].len, segs[i].off, &got);
                *done      = segs[i].pos + got;
                short_read = got < segs[i].len;
            }
        }
    }
    free(win);
    if (locked) {
        range_lock(fh, F_UNLCK, segs[0].off, segs[nseg - 1].off + segs[nseg - 1].len - segs[0].off);
    }
    return rc;
}

/* ---- the common access path --------------------------------------------------- */

typedef enum { AT_EXPLICIT, AT_INDIVIDUAL, AT_SHARED, AT_ORDERED } weft_io_where_t;

static weft_datatype_t *dt_of(MPI_Datatype h)
{
    return weft_datatype_from_handle(h);
}

static int agree(weft_comm_t *comm, int cls)
{
    int in = cls, out = cls;

    if (comm->size > 1 && weft_allreduce_impl(&in, &out, 1, dt_of(MPI_INT), weft_op_from_handle(MPI_MAX),
                                              comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    return out;
}

static void status_set(MPI_Status *status, MPI_Count bytes)
{
    if (status == MPI_STATUS_IGNORE) {
        return;
    }
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG    = MPI_ANY_TAG;
    weft_status_set_bytes(status, bytes);
    weft_status_set_cancelled(status, 0);
}

static int check_access(weft_file_t *fh, int writing, weft_io_where_t where)
{
    int access = fh->amode & MODE_ACCESS;

    if (writing && access == MPI_MODE_RDONLY) {
        return weft_error(MPI_ERR_READ_ONLY, "file \"%s\" was opened MPI_MODE_RDONLY", fh->path);
    }
    if (!writing && access == MPI_MODE_WRONLY) {
        return weft_error(MPI_ERR_ACCESS, "file \"%s\" was opened MPI_MODE_WRONLY", fh->path);
    }
    if ((fh->amode & MPI_MODE_SEQUENTIAL) && where != AT_SHARED && where != AT_ORDERED) {
        return weft_error(MPI_ERR_UNSUPPORTED_OPERATION,
                          "file \"%s\" was opened MPI_MODE_SEQUENTIAL: only shared file pointers", fh->path);
    }
    return MPI_SUCCESS;
}

/* Size checks of an access: file bytes of the data, whole etypes. */
static int access_size(weft_file_t *fh, MPI_Count count, weft_datatype_t *dt, MPI_Offset *nbytes)
{
    *nbytes = weft_io_file_bytes(&fh->view, dt, count);
    if (*nbytes < 0) {
        return weft_error(MPI_ERR_UNSUPPORTED_DATAREP,
                          "argument datatype: datarep \"%s\" cannot represent it in this view", fh->view.datarep);
    }
    if (*nbytes % fh->view.esize != 0) {
        return weft_error(MPI_ERR_TYPE, "argument datatype: %lld bytes is not a whole number of etypes (%lld bytes)",
                          (long long)*nbytes, (long long)fh->view.esize);
    }
    return MPI_SUCCESS;
}

int weft_io_xfer_prepare(weft_file_t *fh, weft_io_xfer_t *x)
{
    int rc;

    x->segs   = NULL;
    x->nseg   = 0;
    x->data   = NULL;
    x->direct = fh->view.drep == WEFT_DREP_NATIVE && x->dt->is_contig;
    rc        = x->pos < 0 ? weft_error(MPI_ERR_ARG, "argument offset: negative position %lld", (long long)x->pos)
                           : MPI_SUCCESS;
    if (rc == MPI_SUCCESS) {
        rc = weft_io_view_segments(&fh->view, x->pos * fh->view.esize, x->nbytes, &x->segs, &x->nseg);
    }
    if (rc == MPI_SUCCESS && x->nbytes > 0) {
        if (x->direct) {
            x->data = (char *)x->buf + x->dt->true_lb;
        } else if ((x->data = calloc(1, (size_t)x->nbytes)) == NULL) {
            rc = weft_error(MPI_ERR_NO_MEM, "cannot allocate %lld bytes for the transfer", (long long)x->nbytes);
        } else if (x->writing) {
            rc = weft_io_to_file(&fh->view, x->buf, x->count, x->dt, x->data, x->nbytes);
        }
    }
    return rc;
}

int weft_io_xfer_finish(weft_file_t *fh, weft_io_xfer_t *x, int rc, MPI_Offset done, MPI_Status *status,
                        MPI_Offset *moved)
{
    MPI_Offset elem = x->count > 0 ? x->nbytes / x->count : 0;

    if (rc == MPI_SUCCESS && !x->writing && !x->direct && x->data != NULL) {
        MPI_Count whole = elem > 0 ? done / elem : 0;
        if (fh->view.drep == WEFT_DREP_NATIVE) {
            weft_dt_unpack(x->dt, x->count, x->buf, 0, x->data, done); /* partial elements too */
        } else {
            rc   = weft_io_from_file(&fh->view, x->buf, whole, x->dt, x->data, whole * elem);
            done = whole * elem;
        }
    }
    if (!x->direct) {
        free(x->data);
    }
    free(x->segs);
    x->data = NULL;
    x->segs = NULL;
    if (rc == MPI_SUCCESS) {
        /* memory bytes: file bytes scaled back for converting datareps */
        MPI_Count mem = elem > 0 ? (done / elem) * x->dt->size +
                                       (fh->view.drep == WEFT_DREP_NATIVE ? done % elem : 0)
                                 : 0;
        status_set(status, mem);
        *moved = done / fh->view.esize;
    }
    return rc;
}

/* Independent segments of an access, under the file's xfer_lock. */
typedef struct {
    weft_file_t    *fh;
    weft_io_xfer_t *x;
    MPI_Offset      done;
} indep_t;

static int indep_locked(void *arg)
{
    indep_t        *a = arg;
    weft_io_xfer_t *x = a->x;
    weft_file_t    *fh = a->fh;
    int             rc = MPI_SUCCESS, locked = 0;
    MPI_Offset      lo = x->segs[0].off, hi = x->segs[x->nseg - 1].off + x->segs[x->nseg - 1].len;

    if (fh->atomic) {
        rc     = range_lock(fh, x->writing ? F_WRLCK : F_RDLCK, lo, hi - lo);
        locked = rc == MPI_SUCCESS;
    }
    if (rc == MPI_SUCCESS) {
        rc = weft_io_indep(fh, x->writing, x->segs, x->nseg, x->data, &a->done);
    }
    if (locked) {
        range_lock(fh, F_UNLCK, lo, hi - lo);
    }
    return rc;
}

/* Transfer at view position pos (etypes); *moved gets the etypes moved.
 * collective: every rank of the file's communicator calls it. The I/O
 * worker (async.c) may be transferring on this file too: file I/O runs
 * under the file's xfer_lock, one transfer at a time, so data-sieving and
 * two-phase read-modify-writes never interleave with another write. (A
 * collective takes it for its file I/O steps only, never while it
 * communicates: a worker waiting for it must never wait for other ranks.) */
static int transfer(weft_file_t *fh, int writing, int collective, MPI_Offset pos, void *buf, MPI_Count count,
                    weft_datatype_t *dt, MPI_Offset nbytes, MPI_Status *status, MPI_Offset *moved)
{
    weft_io_xfer_t x  = {.writing = writing, .pos = pos, .nbytes = nbytes, .buf = buf, .count = count, .dt = dt};
    indep_t        in = {.fh = fh, .x = &x, .done = 0};
    int            rc = weft_io_xfer_prepare(fh, &x);

    if (collective) {
        /* its first exchange also agrees on rc */
        rc = weft_io_collective(fh, rc, writing, x.segs, x.nseg, x.data, nbytes, &in.done);
    } else if (rc == MPI_SUCCESS && x.nseg > 0) {
        rc = weft_io_locked(fh, indep_locked, &in);
    }
    return weft_io_xfer_finish(fh, &x, rc, in.done, status, moved);
}

int weft_io_transfer(weft_file_t *fh, int writing, MPI_Offset pos, void *buf, MPI_Count count,
                     weft_datatype_t *dt, MPI_Offset nbytes, MPI_Status *status)
{
    MPI_Offset moved;

    return transfer(fh, writing, 0, pos, buf, count, dt, nbytes, status, &moved);
}

/* One access of any pointer kind; ordered accesses are collective too. */
static int do_access(weft_file_t *fh, int writing, int collective, weft_io_where_t where, MPI_Offset offset,
                  void *buf, MPI_Count count, weft_datatype_t *dt, MPI_Status *status)
{
    MPI_Offset nbytes = 0, moved = 0, pos = offset, n;
    int        rc     = check_access(fh, writing, where);

    if (collective) {
        weft_io_nbc_drain(fh); /* the file's earlier non-blocking collectives come first */
    }
    if (rc == MPI_SUCCESS) {
        rc = access_size(fh, count, dt, &nbytes);
    }
    n = nbytes / fh->view.esize;
    if (collective && where == AT_ORDERED) {
        /* agree before the ordering exchanges so nobody waits for us */
        int all = agree(fh->comm, rc);
        if (all != MPI_SUCCESS && rc == MPI_SUCCESS) {
            rc = weft_error(all, "file \"%s\": the operation failed on another rank", fh->path);
        }
    } else if (collective && rc != MPI_SUCCESS) {
        /* take part in the exchange the others are in (transfer's first) */
        MPI_Offset none;
        weft_io_collective(fh, rc, writing, NULL, 0, NULL, 0, &none);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    switch (where) {
    case AT_EXPLICIT:
        return transfer(fh, writing, collective, pos, buf, count, dt, nbytes, status, &moved);
    case AT_INDIVIDUAL:
        pthread_mutex_lock(&fh->lock);
        rc = transfer(fh, writing, collective, fh->ind_pos, buf, count, dt, nbytes, status, &moved);
        if (rc == MPI_SUCCESS) {
            fh->ind_pos += moved;
        }
        pthread_mutex_unlock(&fh->lock);
        return rc;
    case AT_SHARED:
        rc = weft_io_shared_fetch_add(fh, n, &pos);
        return rc == MPI_SUCCESS ? transfer(fh, writing, 0, pos, buf, count, dt, nbytes, status, &moved) : rc;
    case AT_ORDERED: {
        /* rank order: my start = shared pointer + etypes of lower ranks */
        MPI_Offset before = 0, total = 0, base[2] = {0, 0};
        weft_datatype_t *i64 = dt_of(MPI_INT64_T);
        weft_op_t       *sum = weft_op_from_handle(MPI_SUM);
        if (fh->comm->size > 1) {
            if (weft_exscan_impl(&n, &before, 1, i64, sum, fh->comm) != MPI_SUCCESS ||
                weft_allreduce_impl(&n, &total, 1, i64, sum, fh->comm) != MPI_SUCCESS) {
                return MPI_ERR_OTHER;
            }
        } else {
            total = n;
        }
        if (fh->comm->rank == 0) {
            before  = 0;
            base[1] = weft_io_shared_fetch_add(fh, total, &base[0]);
        }
        if (fh->comm->size > 1 && weft_bcast_impl(base, 2, i64, 0, fh->comm) != MPI_SUCCESS) {
            return MPI_ERR_OTHER;
        }
        if (base[1] != MPI_SUCCESS) {
            return fh->comm->rank == 0 ? (int)base[1]
                                       : weft_error((int)base[1], "file \"%s\": shared file pointer failed on rank 0",
                                                    fh->path);
        }
        return transfer(fh, writing, 1, base[0] + before, buf, count, dt, nbytes, status, &moved);
    }
    }
    return MPI_ERR_INTERN;
}

/* ---- blocking entry points ------------------------------------------------------- */

#define RD(_fn, _coll, _where)                                                                              \
    int weft_file_##_fn##_impl(weft_file_t *fh, void *buf, MPI_Count count, weft_datatype_t *datatype,      \
                               MPI_Status *status)                                                          \
    {                                                                                                       \
        return do_access(fh, 0, _coll, _where, 0, buf, count, datatype, status);                              \
    }
#define WR(_fn, _coll, _where)                                                                              \
    int weft_file_##_fn##_impl(weft_file_t *fh, const void *buf, MPI_Count count,                          \
                               weft_datatype_t *datatype, MPI_Status *status)                               \
    {                                                                                                       \
        return do_access(fh, 1, _coll, _where, 0, (void *)buf, count, datatype, status);                      \
    }
#define RD_AT(_fn, _coll)                                                                                   \
    int weft_file_##_fn##_impl(weft_file_t *fh, MPI_Offset offset, void *buf, MPI_Count count,             \
                               weft_datatype_t *datatype, MPI_Status *status)                               \
    {                                                                                                       \
        return do_access(fh, 0, _coll, AT_EXPLICIT, offset, buf, count, datatype, status);                    \
    }
#define WR_AT(_fn, _coll)                                                                                   \
    int weft_file_##_fn##_impl(weft_file_t *fh, MPI_Offset offset, const void *buf, MPI_Count count,       \
                               weft_datatype_t *datatype, MPI_Status *status)                               \
    {                                                                                                       \
        return do_access(fh, 1, _coll, AT_EXPLICIT, offset, (void *)buf, count, datatype, status);            \
    }

RD(read, 0, AT_INDIVIDUAL)
RD(read_all, 1, AT_INDIVIDUAL)
RD(read_shared, 0, AT_SHARED)
RD(read_ordered, 1, AT_ORDERED)
WR(write, 0, AT_INDIVIDUAL)
WR(write_all, 1, AT_INDIVIDUAL)
WR(write_shared, 0, AT_SHARED)
WR(write_ordered, 1, AT_ORDERED)
RD_AT(read_at, 0)
RD_AT(read_at_all, 1)
WR_AT(write_at, 0)
WR_AT(write_at_all, 1)

/* ---- non-blocking ------------------------------------------------------------------
 * Independent forms run in the background (async.c): the file pointer moves
 * by the amount requested now, the transfer later. The collective forms
 * (i*_all, split *_begin) too, through the file's collective queue
 * (nbcoll.c): they return without waiting for the other ranks. */

/* Start a collective access in the background; *req completes when it is
 * done (NULL when the call fails: the rank still takes part). */
static int icoll(weft_file_t *fh, int writing, weft_io_where_t where, MPI_Offset offset, void *buf,
                 MPI_Count count, weft_datatype_t *dt, weft_request_t **req)
{
    weft_io_xfer_t x  = {.writing = writing, .pos = offset, .buf = buf, .count = count, .dt = dt};
    int            rc = check_access(fh, writing, where);

    if (rc == MPI_SUCCESS) {
        rc = access_size(fh, count, dt, &x.nbytes);
    }
    if (rc == MPI_SUCCESS && where == AT_INDIVIDUAL) {
        pthread_mutex_lock(&fh->lock);
        x.pos = fh->ind_pos;
        fh->ind_pos += x.nbytes / fh->view.esize;
        pthread_mutex_unlock(&fh->lock);
    }
    if (rc == MPI_SUCCESS && where != AT_ORDERED) {
        rc = weft_io_xfer_prepare(fh, &x); /* ordered: once its position is known */
    } else if (rc != MPI_SUCCESS) {
        x.nbytes = 0;
        x.direct = 1; /* nothing to free */
    }
    return weft_io_nbc_start(fh, rc, where == AT_ORDERED, &x, req);
}

/* (r is read after icoll, an argument next to it, has run) */
static int icoll_request(int rc, weft_request_t *const *r, MPI_Request *request)
{
    if (rc == MPI_SUCCESS) {
        *request = (MPI_Request)weft_object_handle(*r);
    }
    return rc;
}

static int iaccess(weft_file_t *fh, int writing, weft_io_where_t where, MPI_Offset offset, void *buf,
                   MPI_Count count, weft_datatype_t *dt, MPI_Request *request)
{
    MPI_Offset nbytes = 0, pos = offset, n;
    int        rc     = check_access(fh, writing, where);

    if (rc == MPI_SUCCESS) {
        rc = access_size(fh, count, dt, &nbytes);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    n = nbytes / fh->view.esize;
    if (where == AT_EXPLICIT && offset < 0) {
        return weft_error(MPI_ERR_ARG, "argument offset: negative position %lld", (long long)offset);
    }
    if (where == AT_INDIVIDUAL) {
        pthread_mutex_lock(&fh->lock);
        pos = fh->ind_pos;
        fh->ind_pos += n;
        pthread_mutex_unlock(&fh->lock);
    } else if (where == AT_SHARED && (rc = weft_io_shared_fetch_add(fh, n, &pos)) != MPI_SUCCESS) {
        return rc;
    }
    return weft_io_post(fh, writing, pos, buf, count, dt, nbytes, request);
}

#define IRD(_fn, _where)                                                                                    \
    int weft_file_i##_fn##_impl(weft_file_t *fh, void *buf, MPI_Count count, weft_datatype_t *datatype,     \
                                MPI_Request *request)                                                       \
    {                                                                                                       \
        return iaccess(fh, 0, _where, 0, buf, count, datatype, request);                                    \
    }
#define IWR(_fn, _where)                                                                                    \
    int weft_file_i##_fn##_impl(weft_file_t *fh, const void *buf, MPI_Count count,                         \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        return iaccess(fh, 1, _where, 0, (void *)buf, count, datatype, request);                            \
    }
#define IRD_ALL(_fn, _where)                                                                                \
    int weft_file_i##_fn##_impl(weft_file_t *fh, void *buf, MPI_Count count, weft_datatype_t *datatype,     \
                                MPI_Request *request)                                                       \
    {                                                                                                       \
        weft_request_t *r = NULL;                                                                           \
        return icoll_request(icoll(fh, 0, _where, 0, buf, count, datatype, &r), &r, request);                \
    }
#define IWR_ALL(_fn, _where)                                                                                \
    int weft_file_i##_fn##_impl(weft_file_t *fh, const void *buf, MPI_Count count,                         \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        weft_request_t *r = NULL;                                                                           \
        return icoll_request(icoll(fh, 1, _where, 0, (void *)buf, count, datatype, &r), &r, request);        \
    }
#define IRD_AT(_fn)                                                                                         \
    int weft_file_i##_fn##_impl(weft_file_t *fh, MPI_Offset offset, void *buf, MPI_Count count,            \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        return iaccess(fh, 0, AT_EXPLICIT, offset, buf, count, datatype, request);                          \
    }
#define IWR_AT(_fn)                                                                                         \
    int weft_file_i##_fn##_impl(weft_file_t *fh, MPI_Offset offset, const void *buf, MPI_Count count,      \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        return iaccess(fh, 1, AT_EXPLICIT, offset, (void *)buf, count, datatype, request);                  \
    }
#define IRD_AT_ALL(_fn)                                                                                     \
    int weft_file_i##_fn##_impl(weft_file_t *fh, MPI_Offset offset, void *buf, MPI_Count count,            \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        weft_request_t *r = NULL;                                                                           \
        return icoll_request(icoll(fh, 0, AT_EXPLICIT, offset, buf, count, datatype, &r), &r, request);      \
    }
#define IWR_AT_ALL(_fn)                                                                                     \
    int weft_file_i##_fn##_impl(weft_file_t *fh, MPI_Offset offset, const void *buf, MPI_Count count,      \
                                weft_datatype_t *datatype, MPI_Request *request)                            \
    {                                                                                                       \
        weft_request_t *r = NULL;                                                                           \
        return icoll_request(icoll(fh, 1, AT_EXPLICIT, offset, (void *)buf, count, datatype, &r), &r,       \
                             request);                                                                      \
    }

IRD(read, AT_INDIVIDUAL)
IRD_ALL(read_all, AT_INDIVIDUAL)
IRD(read_shared, AT_SHARED)
IWR(write, AT_INDIVIDUAL)
IWR_ALL(write_all, AT_INDIVIDUAL)
IWR(write_shared, AT_SHARED)
IRD_AT(read_at)
IRD_AT_ALL(read_at_all)
IWR_AT(write_at)
IWR_AT_ALL(write_at_all)

/* ---- split collectives --------------------------------------------------------------
 * begin starts the access in the background like the i*_all forms (ordered
 * ones find their position there first); end waits. */

static int split_check(weft_file_t *fh)
{
    if (fh->split.active) {
        return weft_error(MPI_ERR_OTHER, "file \"%s\": a split collective is already active on this file",
                          fh->path);
    }
    return MPI_SUCCESS;
}

static int split_begin(weft_file_t *fh, int writing, weft_io_where_t where, MPI_Offset offset, const void *buf,
                       MPI_Count count, weft_datatype_t *dt)
{
    int rc = split_check(fh);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    fh->split.active = 1;
    fh->split.buf    = buf;
    fh->split.req    = NULL;
    return icoll(fh, writing, where, offset, (void *)buf, count, dt, &fh->split.req);
}

static int split_end(weft_file_t *fh, const void *buf, MPI_Status *status)
{
    weft_request_t *r = fh->split.req;

    if (!fh->split.active) {
        return weft_error(MPI_ERR_OTHER, "file \"%s\": no split collective was begun", fh->path);
    }
    if (buf != fh->split.buf) {
        return weft_error(MPI_ERR_ARG, "argument buf: not the buffer given to the matching *_begin");
    }
    fh->split.active = 0;
    fh->split.req    = NULL;
    if (r == NULL) { /* begin failed and said so */
        if (status != MPI_STATUS_IGNORE) {
            status_set(status, 0);
        }
        return MPI_SUCCESS;
    }
    return weft_request_wait(r, status);
}

#define SPLIT_RD(_fn, _where)                                                                               \
    int weft_file_##_fn##_begin_impl(weft_file_t *fh, void *buf, MPI_Count count,                          \
                                     weft_datatype_t *datatype)                                             \
    {                                                                                                       \
        return split_begin(fh, 0, _where, 0, buf, count, datatype);                                         \
    }                                                                                                       \
    int weft_file_##_fn##_end_impl(weft_file_t *fh, void *buf, MPI_Status *status)                         \
    {                                                                                                       \
        return split_end(fh, buf, status);                                                                  \
    }
#define SPLIT_WR(_fn, _where)                                                                               \
    int weft_file_##_fn##_begin_impl(weft_file_t *fh, const void *buf, MPI_Count count,                    \
                                     weft_datatype_t *datatype)                                             \
    {                                                                                                       \
        return split_begin(fh, 1, _where, 0, buf, count, datatype);                                         \
    }                                                                                                       \
    int weft_file_##_fn##_end_impl(weft_file_t *fh, const void *buf, MPI_Status *status)                   \
    {                                                                                                       \
        return split_end(fh, buf, status);                                                                  \
    }

SPLIT_RD(read_all, AT_INDIVIDUAL)
SPLIT_RD(read_ordered, AT_ORDERED)
SPLIT_WR(write_all, AT_INDIVIDUAL)
SPLIT_WR(write_ordered, AT_ORDERED)

int weft_file_read_at_all_begin_impl(weft_file_t *fh, MPI_Offset offset, void *buf, MPI_Count count,
                                     weft_datatype_t *datatype)
{
    return split_begin(fh, 0, AT_EXPLICIT, offset, buf, count, datatype);
}

int weft_file_read_at_all_end_impl(weft_file_t *fh, void *buf, MPI_Status *status)
{
    return split_end(fh, buf, status);
}

int weft_file_write_at_all_begin_impl(weft_file_t *fh, MPI_Offset offset, const void *buf, MPI_Count count,
                                      weft_datatype_t *datatype)
{
    return split_begin(fh, 1, AT_EXPLICIT, offset, buf, count, datatype);
}

int weft_file_write_at_all_end_impl(weft_file_t *fh, const void *buf, MPI_Status *status)
{
    return split_end(fh, buf, status);
}

/* ---- file pointers ----------------------------------------------------------------- */

/* Etypes of the view below the end of the file. */
static int view_end(weft_file_t *fh, MPI_Offset *end)
{
    struct stat st;

    if (fstat(fh->fd, &st) != 0) {
        return weft_error(MPI_ERR_IO, "file \"%s\": fstat: %s", fh->path, strerror(errno));
    }
    *end = weft_io_view_stream_below(&fh->view, (MPI_Offset)st.st_size) / fh->view.esize;
    return MPI_SUCCESS;
}

static int seek_target(weft_file_t *fh, MPI_Offset cur, MPI_Offset offset, int whence, MPI_Offset *out)
{
    MPI_Offset base = 0;
    int        rc;

    switch (whence) {
    case MPI_SEEK_SET:
        base = 0;
        break;
    case MPI_SEEK_CUR:
        base = cur;
        break;
    case MPI_SEEK_END:
        if ((rc = view_end(fh, &base)) != MPI_SUCCESS) {
            return rc;
        }
        break;
    default:
        return weft_error(MPI_ERR_ARG, "argument whence: %d is not MPI_SEEK_SET/CUR/END", whence);
    }
    if (base + offset < 0) {
        return weft_error(MPI_ERR_ARG, "argument offset: the pointer would become negative (%lld)",
                          (long long)(base + offset));
    }
    *out = base + offset;
    return MPI_SUCCESS;
}

int weft_file_seek_impl(weft_file_t *fh, MPI_Offset offset, int whence)
{
    MPI_Offset to = 0;
    int        rc = (fh->amode & MPI_MODE_SEQUENTIAL)
                        ? weft_error(MPI_ERR_UNSUPPORTED_OPERATION,
                                     "file \"%s\" was opened MPI_MODE_SEQUENTIAL", fh->path)
                        : MPI_SUCCESS;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    pthread_mutex_lock(&fh->lock);
    rc = seek_target(fh, fh->ind_pos, offset, whence, &to);
    if (rc == MPI_SUCCESS) {
        fh->ind_pos = to;
    }
    pthread_mutex_unlock(&fh->lock);
    return rc;
}

int weft_file_get_position_impl(weft_file_t *fh, MPI_Offset *offset)
{
    pthread_mutex_lock(&fh->lock);
    *offset = fh->ind_pos;
    pthread_mutex_unlock(&fh->lock);
    return MPI_SUCCESS;
}

int weft_file_seek_shared_impl(weft_file_t *fh, MPI_Offset offset, int whence)
{
    MPI_Offset cur = 0, to = 0, in[4], out[4];
    int        rc  = MPI_SUCCESS, all;

    weft_io_nbc_drain(fh); /* collective: the file's non-blocking collectives come first */
    /* every rank must pass the same offset and whence */
    in[0] = offset;
    in[1] = -offset;
    in[2] = whence;
    in[3] = -whence;
    if (fh->comm->size > 1 && weft_allreduce_impl(in, out, 4, dt_of(MPI_INT64_T), weft_op_from_handle(MPI_MAX),
                                                  fh->comm) != MPI_SUCCESS) {
        return MPI_ERR_OTHER;
    }
    if (fh->comm->size > 1 && (out[0] != -out[1] || out[2] != -out[3])) {
        return weft_error(MPI_ERR_NOT_SAME, "arguments offset/whence: ranks passed different values (file \"%s\")",
                          fh->path);
    }
    if (fh->comm->rank == 0) {
        rc = weft_io_shared_fetch_add(fh, 0, &cur);
        if (rc == MPI_SUCCESS) {
            rc = seek_target(fh, cur, offset, whence, &to);
        }
        if (rc == MPI_SUCCESS) {
            rc = weft_io_shared_set(fh, to);
        }
    }
    all = agree(fh->comm, rc);
    if (all != MPI_SUCCESS && rc == MPI_SUCCESS) {
        rc = weft_error(all, "file \"%s\": seek of the shared file pointer failed on rank 0", fh->path);
    }
    return rc;
}

int weft_file_get_position_shared_impl(weft_file_t *fh, MPI_Offset *offset)
{
    return weft_io_shared_fetch_add(fh, 0, offset);
}

int weft_file_get_byte_offset_impl(weft_file_t *fh, MPI_Offset offset, MPI_Offset *disp)
{
    if (offset < 0) {
        return weft_error(MPI_ERR_ARG, "argument offset: negative (%lld)", (long long)offset);
    }
    *disp = weft_io_view_byte(&fh->view, offset * fh->view.esize);
    return MPI_SUCCESS;
}
