/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One-sided operations on node-local windows: put/get are copies into the
 * target's memory (mapped, or CMA for MPI_Win_create / dynamic windows);
 * accumulates, fetch_and_op and compare_and_swap run under the target's
 * accumulate lock in the control segment (see do_accumulate for why not
 * per-element CPU atomics). Every operation completes before its call
 * returns.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/mpit/pvar.h"
#include "core/op.h"
#include "core/request.h"
#include "rma_internal.h"
#include "util/copy.h"
#include "util/tunables.h"

#define RMA_IOV_BATCH 64

/* Where an operation lands: target memory (mapped, or in the target's
 * address space for CMA), described by (addr, count, dt). */
typedef struct {
    weft_win_t      *win;
    int              rank;
    rma_target_t    *t;
    char            *addr;   /* buf argument for the target datatype */
    MPI_Aint         off;    /* the same as bytes from the target's base (dynamic:
                                the address) */
    MPI_Count        count;
    weft_datatype_t *dt;
} rma_dest_t;

/* ---- resolving and checking the target --------------------------------------------- */

static int dynamic_range_ok(weft_win_t *win, int rank, uint64_t lo, uint64_t hi)
{
    rma_rank_ctl_t *c   = &win->ctl[rank];
    rma_region_t   *tab = &win->attach[(size_t)rank * (size_t)win->attach_max];
    int             ok  = 0;

    rma_spin_lock(&c->attach_lock);
    for (uint32_t i = 0; i < c->nattach && !ok; i++) {
        ok = lo >= tab[i].base && hi <= tab[i].base + tab[i].len;
    }
    rma_spin_unlock(&c->attach_lock);
    return ok;
}

/* Check rank, epoch and range; fill *d. Returns MPI_SUCCESS, an error, or
 * -1 for MPI_PROC_NULL (nothing to do). Inline: every operation starts
 * here, and np 2 put_latency spent 12% of its cycles in the call. */
static inline __attribute__((always_inline)) int
resolve(weft_win_t *win, int rank, MPI_Aint disp, MPI_Count count, weft_datatype_t *dt,
        const char *what, rma_dest_t *d)
{
    rma_target_t *t;
    int           rc;
    MPI_Aint      lo, hi;

    if (rank == MPI_PROC_NULL) {
        return -1;
    }
    if (rank < 0 || rank >= win->size) {
        return weft_error(MPI_ERR_RANK, "target_rank %d is out of range (window has %d ranks)",
                          rank, win->size);
    }
    if ((rc = rma_check_epoch(win, rank, what)) != MPI_SUCCESS) {
        return rc;
    }
    if (weft_dev.nfailed && weft_peer(win->comm->peer_world[rank])->failed) {
        return weft_dev_lost_error(win->comm->peer_world[rank], rank);
    }
    t        = &win->targets[rank];
    d->win   = win;
    d->rank  = rank;
    d->t     = t;
    d->count = count;
    d->dt    = dt;
    d->off   = win->flavor == MPI_WIN_FLAVOR_DYNAMIC ? disp : disp * t->disp_unit;
    if (count == 0 || dt->size == 0) {
        d->addr = t->addr;
        return MPI_SUCCESS;
    }
    if (win->flavor != MPI_WIN_FLAVOR_DYNAMIC && disp < 0) {
        return weft_error(MPI_ERR_RMA_RANGE, "target_disp %lld is negative", (long long)disp);
    }
    lo = (win->flavor == MPI_WIN_FLAVOR_DYNAMIC ? disp : disp * t->disp_unit) + dt->true_lb;
    hi = lo + (MPI_Aint)(count - 1) * dt->extent + dt->true_extent;
    if (dt->extent < 0) { /* negative strides: the span runs the other way */
        MPI_Aint first = lo;
        lo = first + (MPI_Aint)(count - 1) * dt->extent;
        hi = first + dt->true_extent;
    }
    if (win->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        /* Active messages: the target checks its own attach table. */
        if (!win->am && !dynamic_range_ok(win, rank, (uint64_t)lo, (uint64_t)hi)) {
            return weft_error(MPI_ERR_RMA_RANGE, "[%#llx, %#llx) at rank %d is not inside "
                              "memory attached to the window", (unsigned long long)lo,
                              (unsigned long long)hi, rank);
        }
        d->addr = (char *)(uintptr_t)disp;
        return MPI_SUCCESS;
    }
    if (lo < 0 || hi > t->size) {
        return weft_error(MPI_ERR_RMA_RANGE, "bytes [%lld, %lld) are outside rank %d's window of "
                          "%lld bytes", (long long)lo, (long long)hi, rank, (long long)t->size);
    }
    d->addr = t->addr + disp * t->disp_unit;
    return MPI_SUCCESS;
}

static int check_sizes(MPI_Count obytes, MPI_Count tbytes, const char *what)
{
    if (obytes != tbytes) {
        return weft_error(MPI_ERR_TYPE, "%s: origin data is %lld bytes, target data %lld bytes "
                          "(type signatures differ)", what, (long long)obytes,
                          (long long)tbytes);
    }
    return MPI_SUCCESS;
}

/* ---- moving bytes ------------------------------------------------------------------ */

/* Single copy between local bytes and n remote ranges of pid (partial
 * transfers resumed). */
static int cma_move(pid_t pid, char *local, struct iovec *remote, int n, int write)
{
    int i = 0;

    while (i < n) {
        size_t       want = 0;
        struct iovec l;
        ssize_t      got;
        int          cnt = n - i > 1024 ? 1024 : n - i;

        for (int k = 0; k < cnt; k++) {
            want += remote[i + k].iov_len;
        }
        l.iov_base = local;
        l.iov_len  = want;
        got = write ? process_vm_writev(pid, &l, 1, &remote[i], (unsigned long)cnt, 0)
                    : process_vm_readv(pid, &l, 1, &remote[i], (unsigned long)cnt, 0);
        if (got < 0) {
            return weft_error(MPI_ERR_OTHER, "CMA %s of rank memory failed",
                              write ? "write" : "read");
        }
        local += got;
        while (got > 0) { /* skip what moved, split a partial range */
            if ((size_t)got >= remote[i].iov_len) {
                got -= (ssize_t)remote[i].iov_len;
                i++;
            } else {
                remote[i].iov_base = (char *)remote[i].iov_base + got;
                remote[i].iov_len -= (size_t)got;
                got = 0;
            }
        }
        while (i < n && remote[i].iov_len == 0) {
            i++;
        }
    }
    return MPI_SUCCESS;
}

static void copy_bytes(char *dst, const char *src, size_t n)
{
    weft_copy_large(dst, src, n, (size_t)weft_tunables.RMA_STREAM_THRESHOLD);
}

static int move_typed(const rma_dest_t *d, int put, void *buf, MPI_Count count,
                      const weft_datatype_t *dt, MPI_Count nbytes);

/* Copy nbytes of packed stream between local (buf, count, dt) and the
 * target; put=1 writes the target. Contiguous bytes on a mapped target are
 * one copy, inline; the rest is move_typed's. */
static inline int move(const rma_dest_t *d, int put, void *buf, MPI_Count count,
                       const weft_datatype_t *dt, MPI_Count nbytes)
{
    if (d->t->direct && dt->is_contig && d->dt->is_contig) {
        char *t = d->addr + d->dt->true_lb, *l = (char *)buf + dt->true_lb;
        copy_bytes(put ? t : l, put ? l : t, (size_t)nbytes);
        return MPI_SUCCESS;
    }
    return nbytes == 0 ? MPI_SUCCESS : move_typed(d, put, buf, count, dt, nbytes);
}

/* move's derived-datatype and CMA cases. */
static int move_typed(const rma_dest_t *d, int put, void *buf, MPI_Count count,
                      const weft_datatype_t *dt, MPI_Count nbytes)
{
    struct iovec iov[RMA_IOV_BATCH];
    MPI_Count    off = 0;

    if (d->t->direct) {
        while (off < nbytes) {
            MPI_Count covered;
            int       n = weft_dt_iov(d->dt, d->count, d->addr, off, iov, RMA_IOV_BATCH, &covered);
            for (int i = 0; i < n; i++) {
                if (put) {
                    weft_dt_pack(dt, count, buf, off, iov[i].iov_base, (MPI_Count)iov[i].iov_len);
                } else {
                    weft_dt_unpack(dt, count, buf, off, iov[i].iov_base,
                                   (MPI_Count)iov[i].iov_len);
                }
                off += (MPI_Count)iov[i].iov_len;
            }
            if (n == 0) {
                break;
            }
        }
        return MPI_SUCCESS;
    }
    /* CMA: local bytes contiguous (packed if needed), target ranges batched. */
    char *tmp = NULL, *local;
    int   rc  = MPI_SUCCESS;
    if (dt->is_contig) {
        local = (char *)buf + dt->true_lb;
    } else {
        tmp = malloc((size_t)nbytes);
        if (tmp == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory to stage %lld bytes", (long long)nbytes);
        }
        if (put) {
            weft_dt_pack(dt, count, buf, 0, tmp, nbytes);
        }
        local = tmp;
    }
    while (off < nbytes && rc == MPI_SUCCESS) {
        MPI_Count covered;
        int       n = weft_dt_iov(d->dt, d->count, d->addr, off, iov, RMA_IOV_BATCH, &covered);
        if (n == 0) {
            break;
        }
        rc = cma_move(d->t->pid, local + off, iov, n, put);
        off += covered;
    }
    if (tmp != NULL) {
        if (!put && rc == MPI_SUCCESS) {
            weft_dt_unpack(dt, count, buf, 0, tmp, nbytes);
        }
        free(tmp);
    }
    return rc;
}

/* ---- put / get --------------------------------------------------------------------- */

static int do_put(const void *obuf, MPI_Count ocount, weft_datatype_t *odt, int rank, MPI_Aint disp,
                  MPI_Count tcount, weft_datatype_t *tdt, weft_win_t *win)
{
    rma_dest_t d;
    int        rc = resolve(win, rank, disp, tcount, tdt, "MPI_Put", &d);

    if (rc != MPI_SUCCESS) {
        return rc < 0 ? MPI_SUCCESS : rc;
    }
    if ((rc = check_sizes(ocount * odt->size, tcount * tdt->size, "put")) != MPI_SUCCESS) {
        return rc;
    }
    WEFT_PVAR_INC(RMA_PUT_OPS);
    WEFT_PVAR_ADD(RMA_PUT_BYTES, ocount * odt->size);
    if (win->net && win->net_target[rank]) {
        WEFT_PVAR_INC(RMA_NET_OPS);
        return ocount * odt->size == 0 ? MPI_SUCCESS
                                       : rma_net_put(win, rank, d.off, obuf, ocount, odt, tcount, tdt);
    }
    if (win->am) {
        WEFT_PVAR_INC(RMA_AM_OPS);
        return ocount * odt->size == 0 ? MPI_SUCCESS
                                       : rma_am_put(win, rank, d.off, obuf, ocount, odt, tcount, tdt);
    }
    return move(&d, 1, (void *)obuf, ocount, odt, ocount * odt->size);
}

static int do_get(void *obuf, MPI_Count ocount, weft_datatype_t *odt, int rank, MPI_Aint disp,
                  MPI_Count tcount, weft_datatype_t *tdt, weft_win_t *win)
{
    rma_dest_t d;
    int        rc = resolve(win, rank, disp, tcount, tdt, "MPI_Get", &d);

    if (rc != MPI_SUCCESS) {
        return rc < 0 ? MPI_SUCCESS : rc;
    }
    if ((rc = check_sizes(ocount * odt->size, tcount * tdt->size, "get")) != MPI_SUCCESS) {
        return rc;
    }
    WEFT_PVAR_INC(RMA_GET_OPS);
    WEFT_PVAR_ADD(RMA_GET_BYTES, ocount * odt->size);
    if (win->net && win->net_target[rank]) {
        WEFT_PVAR_INC(RMA_NET_OPS);
        return ocount * odt->size == 0 ? MPI_SUCCESS
                                       : rma_net_get(win, rank, d.off, obuf, ocount, odt, tcount, tdt);
    }
    if (win->am) {
        WEFT_PVAR_INC(RMA_AM_OPS);
        return ocount * odt->size == 0 ? MPI_SUCCESS
                                       : rma_am_get(win, rank, d.off, obuf, ocount, odt, tcount, tdt);
    }
    return move(&d, 0, obuf, ocount, odt, ocount * odt->size);
}

/* ---- accumulate -------------------------------------------------------------------- */

/* memcpy, with the sizes of one predefined element spelled out so the
 * compiler inlines them (fetch_and_op's result). */
static inline void copy_operand(void *dst, const void *src, size_t n)
{
    if (n == 8) {
        memcpy(dst, src, 8);
    } else if (n == 4) {
        memcpy(dst, src, 4);
    } else {
        memcpy(dst, src, n);
    }
}

/* get_accumulate of a long contiguous operand: old gets the target's
 * previous n elements (nbytes in all), then the kernel reduces in into
 * them, FETCH_PIECE bytes at a time, so the kernel reads target bytes the
 * copy has just brought into L1 rather than a second time from L2 or L3. */
#define FETCH_PIECE 32768
static void fetch_reduce(weft_op_kernel_t kernel, const char *in, char *at, char *old,
                         MPI_Count n, size_t nbytes)
{
    size_t    esize = nbytes / (size_t)n;
    MPI_Count step  = (MPI_Count)(FETCH_PIECE / esize > 0 ? FETCH_PIECE / esize : 1);

    for (MPI_Count i = 0; i < n; i += step) {
        MPI_Count k   = n - i < step ? n - i : step;
        size_t    off = (size_t)i * esize;
        memcpy(old + off, at + off, (size_t)k * esize);
        kernel(in + off, at + off, k);
    }
}

/* Compare-and-swap of one n-byte element at t (its lock held): old gets the
 * previous bytes. The predefined integer sizes are one load and compare
 * each, not calls to memcmp and memcpy (np 2 compare_and_swap spent a
 * quarter of its cycles in memcmp). */
#define CAS_AS(T)                                                                          \
    do {                                                                                   \
        T cur, cmp;                                                                        \
        memcpy(&cur, t, sizeof(T));                                                        \
        memcpy(&cmp, compare, sizeof(T));                                                  \
        if (cur == cmp) {                                                                  \
            memcpy(t, origin, sizeof(T));                                                  \
        }                                                                                  \
        memcpy(old, &cur, sizeof(T));                                                      \
    } while (0)
static inline void cas_element(char *t, const void *origin, const void *compare, char *old,
                               size_t n)
{
    switch (n) {
    case 8: CAS_AS(uint64_t); break;
    case 4: CAS_AS(uint32_t); break;
    case 2: CAS_AS(uint16_t); break;
    case 1: CAS_AS(uint8_t); break;
    default:
        memcpy(old, t, n);
        if (memcmp(old, compare, n) == 0) {
            memcpy(t, origin, n);
        }
    }
}
#undef CAS_AS

/* One contiguous target range of len bytes at at: old (if not NULL) gets
 * its previous contents, then at op= in. */
static int reduce_range(char *at, const char *in, char *old, size_t len, const weft_op_t *op,
                        const weft_datatype_t *bdt)
{
    if (old) {
        memcpy(old, at, len);
    }
    if (op->id == WEFT_OP_REPLACE) {
        memcpy(at, in, len);
    } else if (op->id != WEFT_OP_NO_OP) {
        return weft_op_reduce(op, in, at, (MPI_Count)len / bdt->size, bdt);
    }
    return MPI_SUCCESS;
}

/* target op= in over the target ranges, in place (mapped target, lock
 * held). in is the packed operand; old (if not NULL) gets the previous
 * contents, packed. */
static int reduce_in_place(const rma_dest_t *d, const char *in, char *old, MPI_Count nbytes,
                           const weft_op_t *op, const weft_datatype_t *bdt)
{
    struct iovec iov[RMA_IOV_BATCH];
    MPI_Count    off = 0;
    int          rc  = MPI_SUCCESS;

    if (d->dt->is_contig) { /* one range: no iov walk (fetch_and_op, small accumulates) */
        return reduce_range(d->addr + d->dt->true_lb, in, old, (size_t)nbytes, op, bdt);
    }
    while (off < nbytes && rc == MPI_SUCCESS) {
        MPI_Count covered;
        int       n = weft_dt_iov(d->dt, d->count, d->addr, off, iov, RMA_IOV_BATCH, &covered);
        if (n == 0) {
            break;
        }
        for (int i = 0; i < n && rc == MPI_SUCCESS; i++) {
            rc = reduce_range(iov[i].iov_base, in + off, old ? old + off : NULL, iov[i].iov_len,
                              op, bdt);
            off += (MPI_Count)iov[i].iov_len;
        }
    }
    return rc;
}

/* The accumulate family. in: packed origin operand (NULL for MPI_NO_OP);
 * old: where the target's previous contents go, packed (NULL if unwanted).
 * Every accumulate-class operation on a target holds its accumulate lock
 * (one atomic exchange): the op then runs in place with the vectorised
 * reduction kernels. Per-element CPU atomics were measured 30-40x slower
 * than MPICH for large accumulates, and could not be mixed with a locked
 * path for other sizes or types without losing atomicity. */
static int acc_apply(const rma_dest_t *d, const char *in, char *old, MPI_Count nbytes,
                     const weft_op_t *op, const weft_datatype_t *bdt)
{
    uint32_t        *lock = &d->win->ctl[d->rank].acc_lock;
    weft_datatype_t *byte = weft_datatype_from_handle(MPI_BYTE);
    char            *tmp;
    int              rc;

    if (nbytes == 0) {
        return MPI_SUCCESS;
    }
    if (d->t->direct) {
        rma_spin_lock(lock);
        rc = reduce_in_place(d, in, old, nbytes, op, bdt);
        rma_spin_unlock(lock);
        return rc;
    }
    /* CMA: read, reduce, write back. */
    tmp = malloc((size_t)nbytes);
    if (tmp == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory to stage %lld bytes", (long long)nbytes);
    }
    rma_spin_lock(lock);
    rc = move(d, 0, tmp, nbytes, byte, nbytes);
    if (rc == MPI_SUCCESS) {
        rc = reduce_range(tmp, in, old, (size_t)nbytes, op, bdt);
    }
    if (rc == MPI_SUCCESS && op->id != WEFT_OP_NO_OP) {
        rc = move(d, 1, tmp, nbytes, byte, nbytes);
    }
    rma_spin_unlock(lock);
    free(tmp);
    return rc;
}

/* Basic type of dt for accumulate (MPI_ERR_TYPE if dt mixes types). */
static int acc_basic(const weft_datatype_t *dt, const char *arg, weft_datatype_t **bdt_p)
{
    if (dt->basic == MPI_DATATYPE_NULL) {
        if (dt->size == 0) {
            *bdt_p = weft_datatype_from_handle(MPI_BYTE);
            return MPI_SUCCESS;
        }
        return weft_error(MPI_ERR_TYPE, "%s is not built from a single predefined type", arg);
    }
    *bdt_p = weft_datatype_from_handle(dt->basic);
    return MPI_SUCCESS;
}

static int do_accumulate(const void *obuf, MPI_Count ocount, weft_datatype_t *odt, void *rbuf,
                         MPI_Count rcount, weft_datatype_t *rdt, int rank, MPI_Aint disp,
                         MPI_Count tcount, weft_datatype_t *tdt, weft_op_t *op, weft_win_t *win,
                         const char *what)
{
    rma_dest_t       d;
    weft_datatype_t *bdt = NULL, *obdt = NULL;
    MPI_Count        nbytes = tcount * tdt->size;
    char            *in = NULL, *old = NULL, *in_tmp = NULL;
    int              rc, noop = op->id == WEFT_OP_NO_OP;

    if (!weft_op_is_builtin(op)) {
        return weft_error(MPI_ERR_OP, "%s needs a predefined operation (not a user op)", what);
    }
    /* Contiguous operands of one predefined type on a mapped target (the
     * shared counter of fetch_and_op, a vector of doubles): the op straight
     * under the target's accumulate lock, without the checks and staging
     * derived types need (np 2 fetch_and_op 0.037 -> 0.030 us,
     * docs/performance.md "Reduction kernels by CPU"). */
    if (!win->am && weft_datatype_is_builtin(tdt) && tdt->is_contig &&
        tdt->basic != MPI_DATATYPE_NULL && (noop || (odt == tdt && ocount == tcount)) &&
        (rbuf == NULL || (rdt == tdt && rcount == tcount))) {
        /* The kernel found once here replaces weft_op_reduce's dispatch
         * under the lock (np 2 fetch_and_op: weft_op_check, weft_op_reduce
         * and reduce_basic were 8% of the cycles). An op undefined for the
         * type is an error only with data (count 0 of MPI_BYTE with MPI_SUM
         * is a valid call: mpi4py's test_rma). */
        weft_op_kernel_t kernel = nbytes > 0 ? weft_op_kernel(op, tdt) : NULL;
        rc = kernel == NULL && nbytes > 0 ? weft_op_check(op, tdt) : MPI_SUCCESS;
        if (rc == MPI_SUCCESS) {
            rc = resolve(win, rank, disp, tcount, tdt, what, &d);
        }
        if (rc != MPI_SUCCESS || nbytes == 0) {
            return rc < 0 ? MPI_SUCCESS : rc;
        }
        if (d.t->direct) { /* predefined types: true_lb 0 */
            uint32_t *lock = &win->ctl[rank].acc_lock;
            WEFT_PVAR_INC(RMA_ACC_OPS);
            rma_spin_lock(lock);
            if (kernel != NULL && rbuf != NULL && nbytes > FETCH_PIECE) {
                fetch_reduce(kernel, obuf, d.addr, rbuf, tcount * tdt->basic_count,
                             (size_t)nbytes);
            } else if (kernel != NULL) {
                if (rbuf != NULL) {
                    copy_operand(rbuf, d.addr, (size_t)nbytes);
                }
                kernel(obuf, d.addr, tcount * tdt->basic_count);
            } else {
                rc = reduce_range(d.addr, obuf, rbuf, (size_t)nbytes, op, tdt);
            }
            rma_spin_unlock(lock);
            return rc;
        }
    }
    if ((rc = acc_basic(tdt, "target_datatype", &bdt)) != MPI_SUCCESS ||
        (nbytes > 0 && (rc = weft_op_check(op, bdt)) != MPI_SUCCESS)) {
        return rc;
    }
    if (!noop) {
        if ((rc = acc_basic(odt, "origin_datatype", &obdt)) != MPI_SUCCESS) {
            return rc;
        }
        if (obdt != bdt && nbytes > 0) {
            return weft_error(MPI_ERR_TYPE, "%s: origin and target basic types differ", what);
        }
        if ((rc = check_sizes(ocount * odt->size, nbytes, what)) != MPI_SUCCESS) {
            return rc;
        }
    }
    if (rbuf != NULL && (rc = check_sizes(rcount * rdt->size, nbytes, what)) != MPI_SUCCESS) {
        return rc;
    }
    rc = resolve(win, rank, disp, tcount, tdt, what, &d);
    if (rc != MPI_SUCCESS) {
        return rc < 0 ? MPI_SUCCESS : rc;
    }
    if (nbytes == 0) {
        return MPI_SUCCESS;
    }
    if (!noop) {
        if (odt->is_contig) {
            in = (char *)obuf + odt->true_lb;
        } else if ((in = in_tmp = malloc((size_t)nbytes)) != NULL) {
            weft_dt_pack(odt, ocount, obuf, 0, in_tmp, nbytes);
        }
    }
    if (rbuf != NULL) {
        old = rdt->is_contig ? (char *)rbuf + rdt->true_lb : malloc((size_t)nbytes);
    }
    if ((!noop && in == NULL) || (rbuf != NULL && old == NULL)) {
        rc = weft_error(MPI_ERR_NO_MEM, "no memory to stage %lld bytes", (long long)nbytes);
    } else {
        WEFT_PVAR_INC(RMA_ACC_OPS);
        if (win->am) {
            WEFT_PVAR_INC(RMA_AM_OPS);
        }
        rc = win->am ? rma_am_acc(win, rank, d.off, in, old, tcount, tdt, op, bdt)
                     : acc_apply(&d, in, old, nbytes, op, bdt);
    }
    if (rbuf != NULL && old != NULL && !rdt->is_contig) {
        if (rc == MPI_SUCCESS) {
            weft_dt_unpack(rdt, rcount, rbuf, 0, old, nbytes);
        }
        free(old);
    }
    free(in_tmp);
    return rc;
}

/* ---- request-based forms: the operation is done when the call returns ------------- */

static int completed_request(MPI_Request *request)
{
    weft_request_t *req = weft_request_alloc(WEFT_REQ_NOOP);

    if (req == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a request");
    }
    req->status.MPI_SOURCE = MPI_ANY_SOURCE;
    req->status.MPI_TAG    = MPI_ANY_TAG;
    req->status.MPI_ERROR  = MPI_SUCCESS;
    weft_request_complete(req);
    *request = (MPI_Request)weft_object_handle(req);
    return MPI_SUCCESS;
}

static int check_request_epoch(weft_win_t *win, int rank, const char *what)
{
    if (rank == MPI_PROC_NULL || win->lock_all ||
        (rank >= 0 && rank < win->size && win->lock_held[rank] != RMA_LOCK_NONE)) {
        return MPI_SUCCESS;
    }
    return weft_error(MPI_ERR_RMA_SYNC, "%s outside a passive-target epoch", what);
}

/* ---- entry points ------------------------------------------------------------------ */

int weft_put_impl(const void *origin_addr, MPI_Count origin_count,
                  weft_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                  MPI_Count target_count, weft_datatype_t *target_datatype, weft_win_t *win)
{
    return do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win);
}

int weft_get_impl(void *origin_addr, MPI_Count origin_count, weft_datatype_t *origin_datatype,
                  int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                  weft_datatype_t *target_datatype, weft_win_t *win)
{
    return do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                  target_count, target_datatype, win);
}

int weft_accumulate_impl(const void *origin_addr, MPI_Count origin_count,
                         weft_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                         MPI_Count target_count, weft_datatype_t *target_datatype, weft_op_t *op,
                         weft_win_t *win)
{
    return do_accumulate(origin_addr, origin_count, origin_datatype, NULL, 0, NULL, target_rank,
                         target_disp, target_count, target_datatype, op, win, "MPI_Accumulate");
}

int weft_get_accumulate_impl(const void *origin_addr, MPI_Count origin_count,
                             weft_datatype_t *origin_datatype, void *result_addr,
                             MPI_Count result_count, weft_datatype_t *result_datatype,
                             int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                             weft_datatype_t *target_datatype, weft_op_t *op, weft_win_t *win)
{
    if (origin_datatype == NULL) {
        if (op->id != WEFT_OP_NO_OP) {
            return weft_error(MPI_ERR_TYPE, "origin_datatype is MPI_DATATYPE_NULL");
        }
        origin_datatype = target_datatype;
    }
    return do_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                         result_datatype, target_rank, target_disp, target_count,
                         target_datatype, op, win, "MPI_Get_accumulate");
}

int weft_fetch_and_op_impl(const void *origin_addr, void *result_addr, weft_datatype_t *datatype,
                           int target_rank, MPI_Aint target_disp, weft_op_t *op, weft_win_t *win)
{
    if (!weft_datatype_is_builtin(datatype)) {
        return weft_error(MPI_ERR_TYPE, "MPI_Fetch_and_op needs a predefined datatype");
    }
    return do_accumulate(origin_addr, 1, datatype, result_addr, 1, datatype, target_rank,
                         target_disp, 1, datatype, op, win, "MPI_Fetch_and_op");
}

int weft_compare_and_swap_impl(const void *origin_addr, const void *compare_addr,
                               void *result_addr, weft_datatype_t *datatype, int target_rank,
                               MPI_Aint target_disp, weft_win_t *win)
{
    rma_dest_t       d;
    int              rc;
    MPI_Count        n = datatype->size;
    weft_datatype_t *byte = weft_datatype_from_handle(MPI_BYTE);

    if (!weft_datatype_is_builtin(datatype) || datatype->basic == MPI_DATATYPE_NULL) {
        return weft_error(MPI_ERR_TYPE, "MPI_Compare_and_swap needs a predefined datatype");
    }
    rc = resolve(win, target_rank, target_disp, 1, datatype, "MPI_Compare_and_swap", &d);
    if (rc != MPI_SUCCESS) {
        return rc < 0 ? MPI_SUCCESS : rc;
    }
    WEFT_PVAR_INC(RMA_CAS_OPS);
    if (win->am) {
        WEFT_PVAR_INC(RMA_AM_OPS);
        return rma_am_cas(win, target_rank, d.off, origin_addr, compare_addr, result_addr,
                          datatype);
    }
    {
        char old[64]; /* result may alias an operand: keep the old value apart */
        if (n > (MPI_Count)sizeof(old)) {
            return weft_error(MPI_ERR_TYPE, "MPI_Compare_and_swap: datatype too large");
        }
        if (d.t->direct) {
            char *t = d.addr + datatype->true_lb;
            rma_spin_lock(&win->ctl[target_rank].acc_lock);
            cas_element(t, origin_addr, compare_addr, old, (size_t)n);
            rma_spin_unlock(&win->ctl[target_rank].acc_lock);
            copy_operand(result_addr, old, (size_t)n);
            return MPI_SUCCESS;
        }
        rma_spin_lock(&win->ctl[target_rank].acc_lock);
        rc = move(&d, 0, old, n, byte, n);
        if (rc == MPI_SUCCESS && memcmp(old, compare_addr, (size_t)n) == 0) {
            rc = move(&d, 1, (void *)origin_addr, n, byte, n);
        }
        rma_spin_unlock(&win->ctl[target_rank].acc_lock);
        if (rc == MPI_SUCCESS) {
            memcpy(result_addr, old, (size_t)n);
        }
        return rc;
    }
}

int weft_rput_impl(const void *origin_addr, MPI_Count origin_count,
                   weft_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                   MPI_Count target_count, weft_datatype_t *target_datatype, weft_win_t *win,
                   MPI_Request *request)
{
    int rc = check_request_epoch(win, target_rank, "MPI_Rput");

    if (rc == MPI_SUCCESS) {
        rc = do_put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
    }
    if (rc == MPI_SUCCESS) { /* the request is born complete */
        rc = rma_net_quiet(win);
    }
    return rc == MPI_SUCCESS ? completed_request(request) : rc;
}

int weft_rget_impl(void *origin_addr, MPI_Count origin_count, weft_datatype_t *origin_datatype,
                   int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                   weft_datatype_t *target_datatype, weft_win_t *win, MPI_Request *request)
{
    int rc = check_request_epoch(win, target_rank, "MPI_Rget");

    if (rc == MPI_SUCCESS) {
        rc = do_get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                    target_count, target_datatype, win);
    }
    if (rc == MPI_SUCCESS) {
        rc = rma_net_quiet(win);
    }
    return rc == MPI_SUCCESS ? completed_request(request) : rc;
}

int weft_raccumulate_impl(const void *origin_addr, MPI_Count origin_count,
                          weft_datatype_t *origin_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, weft_datatype_t *target_datatype, weft_op_t *op,
                          weft_win_t *win, MPI_Request *request)
{
    int rc = check_request_epoch(win, target_rank, "MPI_Raccumulate");

    if (rc == MPI_SUCCESS) {
        rc = weft_accumulate_impl(origin_addr, origin_count, origin_datatype, target_rank,
                                  target_disp, target_count, target_datatype, op, win);
    }
    return rc == MPI_SUCCESS ? completed_request(request) : rc;
}

int weft_rget_accumulate_impl(const void *origin_addr, MPI_Count origin_count,
                              weft_datatype_t *origin_datatype, void *result_addr,
                              MPI_Count result_count, weft_datatype_t *result_datatype,
                              int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                              weft_datatype_t *target_datatype, weft_op_t *op, weft_win_t *win,
                              MPI_Request *request)
{
    int rc = check_request_epoch(win, target_rank, "MPI_Rget_accumulate");

    if (rc == MPI_SUCCESS) {
        rc = weft_get_accumulate_impl(origin_addr, origin_count, origin_datatype, result_addr,
                                      result_count, result_datatype, target_rank, target_disp,
                                      target_count, target_datatype, op, win);
    }
    return rc == MPI_SUCCESS ? completed_request(request) : rc;
}
