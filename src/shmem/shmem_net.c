/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM to PEs on other nodes. Each operation is a request message on a
 * private duplicate of MPI_COMM_WORLD (rank == PE) through the library's own
 * point-to-point, so it rides the same connections and progress engine as
 * MPI. The target PE's progress hook applies requests in arrival order per
 * origin (MPI's non-overtaking order), which is what makes shmem_fence free
 * while nothing goes by RMA (below):
 *
 *   put      header + data inline (up to INLINE_MAX bytes), else the header
 *            then one data message (same origin: matched in order). The
 *            target acknowledges it once applied (an empty reply).
 *   get      header; the target replies with the data (TAG_REPLY), which the
 *            origin received straight into dest (contiguous) or unpacks.
 *   amo      header with operand(s); fetching forms get the old value back.
 *            The target applies it with the same __atomic instruction on the
 *            same word as its node's PEs use on the mapped memory, so atomics
 *            from both paths are atomic with respect to each other.
 *   quiet    waits for every reply and acknowledgement still due (one
 *            message to the target and one back per put: put + quiet costs
 *            what a get does, where a separate QUIET request would add a
 *            second message, and a second wake-up of the target).
 *
 * A request whose data is still arriving holds back later requests from the
 * same origin (per-origin queue), so order is kept without waiting inside
 * the hook.
 *
 * Contiguous puts and gets of at least WEFT_SHMEM_NET_RMA bytes go by
 * libfabric RMA instead (fi_write with delivery completion / fi_read into
 * the heap slice or global data every PE registered at shmem_init), when
 * every PE of other nodes is a netmod peer. They are not ordered with the
 * messages nor among themselves, so a fence waits for RMA in flight, and
 * the first RMA operation after it completes the messages that were in
 * flight at the fence; quiet waits for both.
 *
 * A PE that computes without SHMEM/MPI calls delays the operations of other
 * nodes on its memory until its next call (manual progress). */
#include "shmem/shmem_internal.h"

#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/dev/peer.h"
#include "core/progress.h"
#include "core/pt2pt.h"
#include "core/request.h"
#include "core/runtime.h"
#include "util/fence.h"
#include "util/tunables.h"

enum { TAG_REQ = 1, TAG_DATA, TAG_REPLY };
enum { REQ_PUT = 1, REQ_GET, REQ_AMO, REQ_BYE };
enum { REPLY_NONE = 0, REPLY_VALUE, REPLY_ACK }; /* net_hdr_t.reply */
#define INLINE_MAX 4096 /* data bytes carried in the request message itself */

typedef struct {
    uint8_t  kind, seg, amo, size; /* size: AMO operand bytes */
    uint8_t  reply, sig, sig_seg, sig_op;
    uint64_t off;
    uint64_t esize, count; /* target layout: count elements of esize bytes */
    int64_t  stride;       /* bytes between target elements */
    uint64_t value, compare; /* AMO operands; signal value */
    uint64_t sig_off;
} net_hdr_t;

/* A request held back: its data is still arriving, or an earlier one from
 * the same origin is. */
struct held {
    struct held    *next;
    net_hdr_t       hdr;
    char           *data;   /* the data (NULL: it went straight to the target) */
    weft_request_t *req;    /* the data's receive, NULL once there */
};

/* A request of ours (send, or receive of a reply) that quiet must see done. */
struct pending {
    struct pending *next;
    weft_request_t *req;
    void           *buf; /* freed when done */
};

static struct {
    MPI_Comm         handle;
    weft_comm_t     *comm;
    weft_datatype_t *byte;
    bool             active; /* the hook serves requests */
    bool             in_hook;
    weft_request_t  *req_recv;
    union {
        net_hdr_t hdr;
        char      bytes[sizeof(net_hdr_t) + INLINE_MAX];
    } req_buf;
    struct held   **held_head, **held_tail; /* per origin */
    int             nheld;
    struct pending *mine;    /* origin side: completed by quiet */
    struct pending *replies; /* target side: replies in flight */
    unsigned        sent_since_reap;
} net;

/* libfabric RMA for large contiguous puts/gets (see the top). */
struct rma_seg {
    void     *mr;
    uint64_t *key, *addr; /* per PE: what names its byte 0 of the segment */
};
/* Copy of a small blocking put's source, freed once nothing is in flight. */
struct rma_stage {
    struct rma_stage *next;
    char              data[];
};
static struct {
    bool              on;
    bool              fenced; /* a fence found messages in flight: complete them before RMA */
    struct rma_stage *staged;
    size_t           min;
    struct rma_seg   seg[2]; /* WEFT_SHMEM_SEG_HEAP, _DATA */
    weft_rma_count_t cnt;
} rma;

static void net_abort(const char *what)
{
    weft_shmem_fail("shmem (across nodes)", "%s", what);
}

static void track(struct pending **list, weft_request_t *req, void *buf)
{
    if (weft_request_is_complete(req)) {
        weft_request_wait(req, MPI_STATUS_IGNORE);
        free(buf);
        return;
    }
    struct pending *p = malloc(sizeof *p);
    if (!p) {
        net_abort("out of memory");
    }
    *p = (struct pending){*list, req, buf};
    *list = p;
}

/* Retires the finished entries (all of them, waiting, when wait is set). */
static int reap(struct pending **list, bool wait)
{
    int n = 0;
    for (struct pending **pp = list; *pp;) {
        struct pending *p = *pp;
        if (wait || weft_request_is_complete(p->req)) {
            weft_request_wait(p->req, MPI_STATUS_IGNORE);
            *pp = p->next;
            free(p->buf);
            free(p);
            n++;
        } else {
            pp = &p->next;
        }
    }
    return n;
}

static void isend(const void *buf, size_t n, int pe, int tag, weft_request_t **req)
{
    if (weft_isend(buf, (MPI_Count)n, net.byte, pe, tag, net.comm, WEFT_CTX_PT2PT, WEFT_SEND_STANDARD, req) !=
        MPI_SUCCESS) {
        net_abort("cannot send a request or reply");
    }
}

static void irecv(void *buf, size_t n, int pe, int tag, weft_request_t **req)
{
    if (weft_irecv(buf, (MPI_Count)n, net.byte, pe, tag, net.comm, WEFT_CTX_PT2PT, req) != MPI_SUCCESS) {
        net_abort("cannot post a receive");
    }
}

/* count elements of esize bytes, stride bytes apart, to or from contiguous. */
static void gather(char *to, const char *from, size_t esize, size_t count, ptrdiff_t stride)
{
    for (size_t i = 0; i < count; i++) {
        memcpy(to + i * esize, from + (ptrdiff_t)i * stride, esize);
    }
}

/* One element of 1-8 bytes lands in one store: a PE waiting on that word
 * (wait_until, from its own thread while the progress thread applies the
 * put) sees the old or the new value, never a mix. Returns 0 when the size
 * or the alignment does not allow it. */
static int store_word(char *to, const char *from, size_t esize)
{
    if (((uintptr_t)to & (esize - 1)) != 0) {
        return 0;
    }
    switch (esize) {
    case 1: __atomic_store_n((uint8_t *)to, *(const uint8_t *)from, __ATOMIC_RELAXED); return 1;
    case 2: { uint16_t v; memcpy(&v, from, 2); __atomic_store_n((uint16_t *)(void *)to, v, __ATOMIC_RELAXED); return 1; }
    case 4: { uint32_t v; memcpy(&v, from, 4); __atomic_store_n((uint32_t *)(void *)to, v, __ATOMIC_RELAXED); return 1; }
    case 8: { uint64_t v; memcpy(&v, from, 8); __atomic_store_n((uint64_t *)(void *)to, v, __ATOMIC_RELAXED); return 1; }
    default: return 0;
    }
}

static void scatter(char *to, const char *from, size_t esize, size_t count, ptrdiff_t stride)
{
    if (count == 1 && esize <= 8 && store_word(to, from, esize)) {
        return;
    }
    for (size_t i = 0; i < count; i++) {
        memcpy(to + (ptrdiff_t)i * stride, from + i * esize, esize);
    }
}

/* ---- target side -------------------------------------------------------------------- */

/* This PE's memory for a request's target range (aborts when outside: the
 * origin checked the address against its own copy of the same layout). */
static char *target_at(int seg, uint64_t off, size_t esize, size_t count, ptrdiff_t stride)
{
    ptrdiff_t lo = 0, hi = (ptrdiff_t)esize;
    if (count > 1) {
        ptrdiff_t last = (ptrdiff_t)(count - 1) * stride;
        lo = last < 0 ? last : 0;
        hi = (last > 0 ? last : 0) + (ptrdiff_t)esize;
    }
    if ((ptrdiff_t)off + lo < 0) {
        net_abort("a request reaches below its segment");
    }
    uint64_t first = off + (uint64_t)lo, len = (uint64_t)(hi - lo);
    char *base = NULL;
    if (seg == WEFT_SHMEM_SEG_HEAP) {
        if (first <= weft_shmem.heap_size && len <= weft_shmem.heap_size - first) {
            base = weft_shmem.heap_base[weft_shmem.my_pe] + first;
        }
    } else {
        base = weft_shmem_data_at(first, len);
    }
    if (!base) {
        net_abort("a request from another node lies outside this PE's symmetric memory");
    }
    return base - lo;
}

#define AMO_APPLY(T, p, op, v, c, old)                                                             \
    do {                                                                                          \
        T *w_ = (T *)(p), v_ = (T)(v), c_ = (T)(c);                                               \
        switch (op) {                                                                             \
        case WEFT_SHMEM_AMO_FETCH: old = __atomic_load_n(w_, __ATOMIC_SEQ_CST); break;            \
        case WEFT_SHMEM_AMO_SET: __atomic_store_n(w_, v_, __ATOMIC_SEQ_CST); break;               \
        case WEFT_SHMEM_AMO_SWAP: old = __atomic_exchange_n(w_, v_, __ATOMIC_SEQ_CST); break;     \
        case WEFT_SHMEM_AMO_CSWAP:                                                                \
            __atomic_compare_exchange_n(w_, &c_, v_, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
            old = c_;                                                                             \
            break;                                                                                \
        case WEFT_SHMEM_AMO_ADD: old = __atomic_fetch_add(w_, v_, __ATOMIC_SEQ_CST); break;       \
        case WEFT_SHMEM_AMO_AND: old = __atomic_fetch_and(w_, v_, __ATOMIC_SEQ_CST); break;       \
        case WEFT_SHMEM_AMO_OR: old = __atomic_fetch_or(w_, v_, __ATOMIC_SEQ_CST); break;         \
        case WEFT_SHMEM_AMO_XOR: old = __atomic_fetch_xor(w_, v_, __ATOMIC_SEQ_CST); break;       \
        default: net_abort("unknown atomic operation in a request");                              \
        }                                                                                         \
    } while (0)

static void reply(int src, const void *data, size_t n, void *owned)
{
    weft_request_t *req;
    isend(data, n, src, TAG_REPLY, &req);
    track(&net.replies, req, owned);
}

/* Applies one request; data: the put's bytes (NULL: already in place). */
static void apply(int src, const net_hdr_t *h, const char *data)
{
    size_t esize = (size_t)h->esize, count = (size_t)h->count;
    switch (h->kind) {
    case REQ_PUT: {
        char *t = target_at(h->seg, h->off, esize, count, (ptrdiff_t)h->stride);
        if (data) {
            scatter(t, data, esize, count, (ptrdiff_t)h->stride);
        }
        if (h->sig) {
            uint64_t *s = (uint64_t *)(void *)target_at(h->sig_seg, h->sig_off, sizeof *s, 1, 0);
            weft_release_fence(); /* the data is visible before the signal */
            if (h->sig_op == SHMEM_SIGNAL_ADD) {
                __atomic_fetch_add(s, h->value, __ATOMIC_SEQ_CST);
            } else {
                __atomic_store_n(s, h->value, __ATOMIC_SEQ_CST);
            }
        }
        if (h->reply == REPLY_ACK) {
            reply(src, NULL, 0, NULL);
        }
        break;
    }
    case REQ_GET: {
        char *t = target_at(h->seg, h->off, esize, count, (ptrdiff_t)h->stride);
        if (count <= 1 || h->stride == (int64_t)esize) {
            reply(src, t, esize * count, NULL);
        } else {
            char *packed = malloc(esize * count);
            if (!packed) {
                net_abort("out of memory");
            }
            gather(packed, t, esize, count, (ptrdiff_t)h->stride);
            reply(src, packed, esize * count, packed);
        }
        break;
    }
    case REQ_AMO: {
        char *t = target_at(h->seg, h->off, h->size, 1, 0);
        uint64_t old = 0;
        if (h->size == 4) {
            uint32_t o = 0;
            AMO_APPLY(uint32_t, t, h->amo, h->value, h->compare, o);
            old = o;
        } else if (h->size == 8) {
            AMO_APPLY(uint64_t, t, h->amo, h->value, h->compare, old);
        } else {
            net_abort("atomic request of an unsupported size");
        }
        if (h->reply == REPLY_VALUE) {
            uint64_t *out = malloc(sizeof *out);
            if (!out) {
                net_abort("out of memory");
            }
            *out = old; /* little-endian: the low size bytes are the value */
            reply(src, out, h->size, out);
        } else if (h->reply == REPLY_ACK) {
            reply(src, NULL, 0, NULL);
        }
        break;
    }
    default:
        net_abort("unknown request kind");
    }
}

static void hold(int src, const net_hdr_t *h, char *data, weft_request_t *req)
{
    struct held *e = malloc(sizeof *e);
    if (!e) {
        net_abort("out of memory");
    }
    *e = (struct held){NULL, *h, data, req};
    if (net.held_tail[src]) {
        net.held_tail[src]->next = e;
    } else {
        net.held_head[src] = e;
    }
    net.held_tail[src] = e;
    net.nheld++;
}

static void arrived(int src, const net_hdr_t *h, const char *inline_data)
{
    size_t bytes = (size_t)(h->esize * h->count);
    bool   separate = h->kind == REQ_PUT && bytes > INLINE_MAX;
    bool   held = net.held_head[src] != NULL;
    if (!separate && !held) {
        apply(src, h, h->kind == REQ_PUT ? inline_data : NULL);
        return;
    }
    char *data = NULL;
    weft_request_t *req = NULL;
    if (separate) {
        bool contiguous = h->count <= 1 || h->stride == (int64_t)h->esize;
        if (!held && contiguous) { /* first in line: straight into the target memory */
            irecv(target_at(h->seg, h->off, bytes, 1, 0), bytes, src, TAG_DATA, &req);
        } else {
            if (!(data = malloc(bytes))) {
                net_abort("out of memory");
            }
            irecv(data, bytes, src, TAG_DATA, &req);
        }
    } else if (h->kind == REQ_PUT && bytes) {
        if (!(data = malloc(bytes))) {
            net_abort("out of memory");
        }
        memcpy(data, inline_data, bytes);
    }
    hold(src, h, data, req);
}

static int drain_held(void)
{
    int n = 0;
    for (int src = 0; src < weft_shmem.n_pes && net.nheld; src++) {
        struct held *e;
        while ((e = net.held_head[src]) && (!e->req || weft_request_is_complete(e->req))) {
            if (e->req) {
                weft_request_wait(e->req, MPI_STATUS_IGNORE);
            }
            net.held_head[src] = e->next;
            if (!e->next) {
                net.held_tail[src] = NULL;
            }
            net.nheld--;
            /* a separate put received in place has only its signal left */
            bool in_place = e->hdr.kind == REQ_PUT && !e->data;
            apply(src, &e->hdr, in_place ? NULL : e->data);
            free(e->data);
            free(e);
            n++;
        }
    }
    return n;
}

static void post_request_recv(void)
{
    irecv(net.req_buf.bytes, sizeof net.req_buf, MPI_ANY_SOURCE, TAG_REQ, &net.req_recv);
}

static int net_hook(void)
{
    if (!net.active || net.in_hook) {
        return 0;
    }
    net.in_hook = true;
    int n = 0;
    while (net.req_recv && weft_request_is_complete(net.req_recv)) {
        MPI_Status st;
        weft_request_wait(net.req_recv, &st);
        net.req_recv = NULL;
        net_hdr_t h;
        memcpy(&h, &net.req_buf.hdr, sizeof h);
        arrived(st.MPI_SOURCE, &h, net.req_buf.bytes + sizeof h);
        post_request_recv();
        n++;
    }
    if (net.nheld) {
        n += drain_held();
    }
    if (net.replies) {
        reap(&net.replies, false);
    }
    net.in_hook = false; /* net.mine is the origin's: reaped there, never from here */
    return n;
}

/* ---- origin side ---------------------------------------------------------------------- */

/* The empty reply of a put or non-fetching atomic, waited for by quiet.
 * Posted before the request is sent, so replies from pe match in order. */
static void expect_ack(int pe)
{
    weft_request_t *req;
    irecv(NULL, 0, pe, TAG_REPLY, &req);
    track(&net.mine, req, NULL);
}

/* Sends header + inline bytes (a copy: the caller's memory is free at once). */
static void send_request(int pe, const net_hdr_t *h, const void *inline_data, size_t n)
{
    char *buf = malloc(sizeof *h + n);
    if (!buf) {
        net_abort("out of memory");
    }
    memcpy(buf, h, sizeof *h);
    if (n) {
        memcpy(buf + sizeof *h, inline_data, n);
    }
    weft_request_t *req;
    isend(buf, sizeof *h + n, pe, TAG_REQ, &req);
    track(&net.mine, req, buf);
    if (++net.sent_since_reap >= 64) { /* many requests without quiet: keep the list short */
        net.sent_since_reap = 0;
        reap(&net.mine, false);
    }
}

static void where_to_hdr(net_hdr_t *h, const struct weft_shmem_where *w)
{
    h->seg = (uint8_t)w->seg;
    h->off = w->off;
}

static void rma_release_staged(void)
{
    while (rma.cnt.pending == 0 && rma.staged) {
        struct rma_stage *st = rma.staged;
        rma.staged = st->next;
        free(st);
    }
}

static void rma_wait_below(int limit)
{
    weft_wait_t w = {0};
    while (rma.cnt.pending > limit) {
        if (weft_progress_poll() == 0) {
            weft_wait_step(&w);
        }
    }
    if (rma.cnt.failed) {
        net_abort("a put or get by libfabric RMA failed");
    }
    rma_release_staged();
}

static void quiet_locked(void)
{
    reap(&net.mine, true);
    if (rma.on) {
        rma_wait_below(0);
    }
}

/* An RMA operation after a fence that found messages in flight: those
 * complete first (messages keep their order among themselves; RMA in flight
 * was completed by the fence itself). */
static void order_after_fence(bool by_rma)
{
    if (by_rma && rma.fenced) {
        rma.fenced = false;
        reap(&net.mine, true);
    }
}

static bool by_rma(const struct weft_shmem_where *w, size_t bytes, bool contiguous)
{
    return rma.on && contiguous && bytes >= rma.min && rma.seg[w->seg].mr;
}

/* bytes between local and the target range of w, in pieces the provider takes. */
static void rma_move(const struct weft_shmem_where *w, char *local, size_t bytes, bool put)
{
    const struct rma_seg *sg = &rma.seg[w->seg];
    uint64_t raddr = sg->addr[w->pe] + w->off, key = sg->key[w->pe];
    size_t max = weft_dev.netmod->max_rma();
    rma_release_staged();
    while (bytes > 0) {
        size_t n = bytes < max ? bytes : max;
        weft_status_t st = put ? weft_dev.netmod->rma_put(w->pe, local, n, raddr, key, &rma.cnt)
                               : weft_dev.netmod->rma_get(w->pe, local, n, raddr, key, &rma.cnt);
        if (st == WEFT_AGAIN) {
            weft_progress_poll();
            continue;
        }
        if (st != WEFT_OK) {
            net_abort("a put or get by libfabric RMA could not be issued");
        }
        local += n;
        raddr += n;
        bytes -= n;
        if (rma.cnt.pending >= 64) { /* bound what is in flight */
            rma_wait_below(32);
        }
    }
}

void weft_shmem_net_put(const char *call, const struct weft_shmem_where *w, const void *src, size_t esize,
                        size_t count, ptrdiff_t sstride, ptrdiff_t tstride, bool nbi,
                        const struct weft_shmem_signal *signal)
{
    (void)call;
    size_t bytes = esize * count;
    if (bytes == 0 && !signal) {
        return;
    }
    net_hdr_t h = {.kind = REQ_PUT, .reply = REPLY_ACK, .esize = esize, .count = count, .stride = tstride};
    where_to_hdr(&h, w);
    if (signal) {
        h.sig = 1;
        h.sig_seg = (uint8_t)signal->where.seg;
        h.sig_off = signal->where.off;
        h.sig_op = (uint8_t)signal->op;
        h.value = signal->value;
    }
    bool contiguous = count <= 1 || sstride == (ptrdiff_t)esize;
    weft_cs_enter();
    if (!signal && by_rma(w, bytes, contiguous)) {
        order_after_fence(true);
        struct rma_stage *st = NULL;
        if (!nbi && bytes <= INLINE_MAX) { /* a copy: src is the caller's again at once */
            if (!(st = malloc(sizeof *st + bytes))) {
                net_abort("out of memory");
            }
            memcpy(st->data, src, bytes);
        }
        rma_move(w, st ? st->data : (char *)src, bytes, true);
        if (st) { /* listed only now: rma_move frees the list when nothing is in flight */
            st->next = rma.staged;
            rma.staged = st;
        } else if (!nbi) {
            rma_wait_below(0); /* src is the caller's again once the data is delivered */
        }
        weft_cs_exit();
        return;
    }
    expect_ack(w->pe);
    if (bytes <= INLINE_MAX) {
        char packed[INLINE_MAX];
        if (!contiguous) {
            gather(packed, src, esize, count, sstride);
        }
        send_request(w->pe, &h, contiguous ? src : packed, bytes);
    } else {
        send_request(w->pe, &h, NULL, 0);
        char *copy = NULL;
        if (!contiguous) {
            if (!(copy = malloc(bytes))) {
                net_abort("out of memory");
            }
            gather(copy, src, esize, count, sstride);
        }
        weft_request_t *req;
        isend(copy ? copy : src, bytes, w->pe, TAG_DATA, &req);
        if (nbi || copy) {
            track(&net.mine, req, copy);
        } else {
            weft_request_wait(req, MPI_STATUS_IGNORE); /* src is the caller's again */
        }
    }
    weft_cs_exit();
}

void weft_shmem_net_get(const char *call, const struct weft_shmem_where *w, void *dest, size_t esize,
                        size_t count, ptrdiff_t dstride, ptrdiff_t tstride, bool nbi)
{
    (void)call;
    size_t bytes = esize * count;
    if (bytes == 0) {
        return;
    }
    net_hdr_t h = {.kind = REQ_GET, .esize = esize, .count = count, .stride = tstride};
    where_to_hdr(&h, w);
    bool contiguous = count <= 1 || dstride == (ptrdiff_t)esize;
    char *tmp = NULL;
    if (!contiguous && !(tmp = malloc(bytes))) {
        net_abort("out of memory");
    }
    weft_cs_enter();
    if (by_rma(w, bytes, contiguous)) {
        order_after_fence(true);
        rma_move(w, dest, bytes, false);
        if (!nbi) {
            rma_wait_below(0);
        }
        weft_cs_exit();
        return;
    }
    weft_request_t *req;
    irecv(tmp ? tmp : dest, bytes, w->pe, TAG_REPLY, &req);
    send_request(w->pe, &h, NULL, 0);
    if (nbi && !tmp) {
        track(&net.mine, req, NULL);
    } else {
        weft_request_wait(req, MPI_STATUS_IGNORE);
        if (tmp) {
            scatter(dest, tmp, esize, count, dstride);
        }
    }
    weft_cs_exit();
    free(tmp);
}

uint64_t weft_shmem_net_amo(const char *call, const struct weft_shmem_where *w, size_t size, int op,
                            uint64_t value, uint64_t compare, void *fetch, bool nbi)
{
    (void)call;
    net_hdr_t h = {.kind = REQ_AMO, .amo = (uint8_t)op, .size = (uint8_t)size,
                   .reply = fetch ? REPLY_VALUE : REPLY_ACK, .value = value, .compare = compare};
    where_to_hdr(&h, w);
    uint64_t old = 0;
    weft_cs_enter();
    if (fetch) {
        weft_request_t *req;
        irecv(nbi ? fetch : (void *)&old, size, w->pe, TAG_REPLY, &req);
        send_request(w->pe, &h, NULL, 0);
        if (nbi) {
            track(&net.mine, req, NULL);
        } else {
            weft_request_wait(req, MPI_STATUS_IGNORE);
            memcpy(fetch, &old, size);
        }
    } else {
        expect_ack(w->pe);
        send_request(w->pe, &h, NULL, 0);
    }
    weft_cs_exit();
    return old;
}

void weft_shmem_net_quiet(void)
{
    if (!weft_shmem.net) {
        return;
    }
    weft_cs_enter();
    quiet_locked();
    rma.fenced = false;
    weft_cs_exit();
}

/* Without RMA, arrival order per origin is the order: nothing to do. */
void weft_shmem_net_fence(void)
{
    weft_cs_enter();
    if (rma.on) {
        if (rma.cnt.pending > 0) {
            rma_wait_below(0); /* delivered before anything after the fence */
        }
        rma.fenced = rma.fenced || net.mine; /* messages before a later RMA operation */
    }
    weft_cs_exit();
}

void weft_shmem_net_progress(void)
{
    weft_cs_enter();
    weft_progress_poll();
    weft_cs_exit();
}

/* ---- setup ------------------------------------------------------------------------------ */

static void rma_teardown(void)
{
    for (int k = 0; k < 2; k++) {
        if (rma.seg[k].mr) {
            weft_dev.netmod->mem_deregister(rma.seg[k].mr);
        }
        free(rma.seg[k].key);
        free(rma.seg[k].addr);
    }
    memset(&rma, 0, sizeof rma);
}

/* Collective: RMA for large puts/gets when every PE can take part (the
 * provider has FI_RMA without local registration, every PE of other nodes is
 * a netmod peer, the segments register); else messages for everything. */
static void rma_setup(MPI_Comm world)
{
    struct {
        uint64_t ok, key[2], addr[2];
    } mine = {0}, *all;
    int n = weft_shmem.n_pes;
    const weft_transport_ops_t *nm = weft_dev.netmod;
    size_t lens[2];
    void *bases[2] = {weft_shmem.heap_base[weft_shmem.my_pe], weft_shmem_data_range(&lens[1])};
    lens[0] = weft_shmem.heap_size;
    mine.ok = weft_tunables.SHMEM_NET_RMA > 0 && nm && (nm->caps() & WEFT_TRANSPORT_CAP_ONESIDED) &&
              strcmp(nm->provider(), "sockets") != 0; /* its fi_read stalls under load (as RMA's auto) */
    for (int pe = 0; pe < n && mine.ok; pe++) {
        mine.ok = weft_shmem.heap_base[pe] || !weft_peer(pe)->is_local;
    }
    for (int k = 0; k < 2 && mine.ok; k++) {
        if (bases[k] && lens[k] &&
            nm->win_register(bases[k], lens[k], &mine.key[k], &mine.addr[k], &rma.seg[k].mr) != WEFT_OK) {
            mine.ok = 0;
        }
    }
    all = malloc((size_t)n * sizeof *all);
    for (int k = 0; k < 2; k++) {
        rma.seg[k].key = malloc((size_t)n * sizeof(uint64_t));
        rma.seg[k].addr = malloc((size_t)n * sizeof(uint64_t));
        if (!rma.seg[k].key || !rma.seg[k].addr) {
            all = (free(all), NULL);
        }
    }
    if (!all) {
        weft_shmem_fail("shmem_init", "out of memory for the RMA keys of PEs on other nodes");
    }
    PMPI_Allgather(&mine, sizeof mine, MPI_BYTE, all, sizeof mine, MPI_BYTE, world);
    rma.on = true;
    for (int pe = 0; pe < n; pe++) {
        rma.on &= all[pe].ok != 0;
        for (int k = 0; k < 2; k++) {
            rma.seg[k].key[pe] = all[pe].key[k];
            rma.seg[k].addr[pe] = all[pe].addr[k];
        }
    }
    free(all);
    rma.min = weft_tunables.SHMEM_NET_RMA;
    if (!rma.on) {
        rma_teardown();
    }
}

void weft_shmem_net_setup(MPI_Comm world)
{
    int n = weft_shmem.n_pes;
    PMPI_Comm_dup(world, &net.handle);
    net.comm = weft_comm_from_handle(net.handle);
    net.byte = weft_datatype_from_handle(MPI_BYTE);
    net.held_head = calloc((size_t)n, sizeof *net.held_head);
    net.held_tail = calloc((size_t)n, sizeof *net.held_tail);
    if (!net.comm || !net.held_head || !net.held_tail) {
        weft_shmem_fail("shmem_init", "out of memory for the state of PEs on other nodes");
    }
    weft_cs_enter();
    post_request_recv();
    weft_progress_register(net_hook);
    net.active = true;
    weft_cs_exit();
    rma_setup(world);
}

/* After shmem_finalize's barrier: every origin quieted its requests to us,
 * so none is in flight; retire the posted receive with a message to self. */
void weft_shmem_net_teardown(void)
{
    if (!net.comm) {
        return;
    }
    weft_cs_enter();
    net.active = false;
    net_hdr_t bye = {.kind = REQ_BYE};
    if (weft_send(&bye, sizeof bye, net.byte, weft_shmem.my_pe, TAG_REQ, net.comm, WEFT_CTX_PT2PT) !=
        MPI_SUCCESS) {
        net_abort("cannot retire the request receive");
    }
    weft_request_wait(net.req_recv, MPI_STATUS_IGNORE);
    net.req_recv = NULL;
    reap(&net.replies, true);
    quiet_locked();
    rma_teardown();
    weft_cs_exit();
    free(net.held_head);
    free(net.held_tail);
    PMPI_Comm_free(&net.handle);
    memset(&net, 0, sizeof net);
}
