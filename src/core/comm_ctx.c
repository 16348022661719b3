/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Context ids and internal exchanges for communicator construction (see
 * comm_ctx.h). The exchanges are binomial trees over blocking byte
 * send/recv: communicator creation is rare and these messages are small,
 * so simplicity wins over latency here.
 */
#include "core/comm_ctx.h"

#include <stdlib.h>
#include <string.h>

#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/pt2pt.h"
#include "core/runtime.h"

static weft_ctx_mask_t ctx_free; /* bit set = slot free on this process */

void weft_ctx_module_init(void)
{
    memset(&ctx_free, 0xff, sizeof(ctx_free));
    weft_ctx_reserve(0); /* WORLD */
    weft_ctx_reserve(2); /* SELF */
}

void weft_ctx_mask_local(weft_ctx_mask_t *mask)
{
    *mask = ctx_free;
}

void weft_ctx_reserve(uint32_t id)
{
    uint32_t slot = id / 2;
    if (slot < WEFT_CTX_SLOTS) {
        ctx_free.w[slot / 64] &= ~(UINT64_C(1) << (slot % 64));
    }
}

void weft_ctx_release(uint32_t id)
{
    uint32_t slot = id / 2;
    if (slot < WEFT_CTX_SLOTS) {
        ctx_free.w[slot / 64] |= UINT64_C(1) << (slot % 64);
    }
}

int weft_ctx_in_use(void)
{
    int used = 0;
    for (int i = 0; i < WEFT_CTX_WORDS; i++) {
        used += 64 - __builtin_popcountll(ctx_free.w[i]);
    }
    return used;
}

int weft_ctx_pick(const weft_ctx_mask_t *mask, int n, uint32_t *ids)
{
    int got = 0;

    for (int i = 0; i < WEFT_CTX_WORDS && got < n; i++) {
        uint64_t w = mask->w[i];
        while (w != 0 && got < n) {
            int bit   = __builtin_ctzll(w);
            ids[got++] = (uint32_t)(2 * (i * 64 + bit));
            w &= w - 1;
        }
    }
    if (got < n) {
        return weft_error(MPI_ERR_OTHER, "out of communicator context ids (%d in use here)",
                          weft_ctx_in_use());
    }
    return MPI_SUCCESS;
}

int weft_ctx_agree(const weft_xgroup_t *x, int n, uint32_t *ids, int tag)
{
    weft_ctx_mask_t mask;
    int             rc;

    weft_ctx_mask_local(&mask);
    rc = weft_x_allreduce_band(x, &mask, sizeof(mask), tag);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return weft_ctx_pick(&mask, n, ids);
}

int weft_xtag_of_string(const char *s)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 16777619u;
    }
    return WEFT_XTAG_STRINGTAG | (int)(h & 0x0ffffff8u);
}

void weft_xgroup_of_comm(weft_xgroup_t *x, weft_comm_t *comm)
{
    x->comm  = comm;
    x->ranks = NULL;
    x->n     = comm->size;
    x->me    = comm->rank;
}

static inline int xrank(const weft_xgroup_t *x, int idx)
{
    return x->ranks ? x->ranks[idx] : idx;
}

static int xsend(const weft_xgroup_t *x, const void *buf, size_t len, int idx, int tag)
{
    return weft_send_bytes(buf, len, xrank(x, idx), tag, x->comm);
}

static int xrecv(const weft_xgroup_t *x, void *buf, size_t len, int idx, int tag)
{
    return weft_recv_bytes(buf, len, xrank(x, idx), tag, x->comm);
}

int weft_x_bcast(const weft_xgroup_t *x, void *buf, size_t len, int root, int tag)
{
    int n = x->n, vr = (x->me - root + n) % n, mask = 1, rc;

    while (mask < n) {
        if (vr & mask) {
            rc = xrecv(x, buf, len, (vr - mask + root) % n, tag);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        if (vr + mask < n) {
            rc = xsend(x, buf, len, (vr + mask + root) % n, tag);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        }
    }
    return MPI_SUCCESS;
}

int weft_x_allreduce_band(const weft_xgroup_t *x, void *buf, size_t len, int tag)
{
    unsigned char *acc = buf, *tmp;
    int            n = x->n, vr = x->me, mask, rc = MPI_SUCCESS;

    if (n == 1) {
        return MPI_SUCCESS;
    }
    tmp = malloc(len);
    if (tmp == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an internal reduction");
    }
    for (mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            rc = xsend(x, acc, len, vr - mask, tag);
            break;
        }
        if (vr + mask < n) {
            rc = xrecv(x, tmp, len, vr + mask, tag);
            if (rc != MPI_SUCCESS) {
                break;
            }
            for (size_t i = 0; i < len; i++) {
                acc[i] &= tmp[i];
            }
        }
    }
    free(tmp);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return weft_x_bcast(x, buf, len, 0, tag + 1);
}

int weft_x_allgather(const weft_xgroup_t *x, const void *mine, size_t len, void *all, int tag)
{
    unsigned char *out = all;
    int            rc;

    memcpy(out + (size_t)x->me * len, mine, len);
    if (x->n == 1) {
        return MPI_SUCCESS;
    }
    if (x->me == 0) {
        for (int i = 1; i < x->n; i++) {
            rc = xrecv(x, out + (size_t)i * len, len, i, tag);
            if (rc != MPI_SUCCESS) {
                return rc;
            }
        }
    } else {
        rc = xsend(x, mine, len, 0, tag);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return weft_x_bcast(x, all, len * (size_t)x->n, 0, tag + 1);
}

int weft_x_allgatherv(const weft_xgroup_t *x, const void *mine, size_t len, void **all_p,
                      size_t *lens, int tag)
{
    size_t         total = 0, off = 0;
    unsigned char *all;
    int            rc;

    rc = weft_x_allgather(x, &len, sizeof(len), lens, tag);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    for (int i = 0; i < x->n; i++) {
        total += lens[i];
    }
    all = malloc(total ? total : 1);
    if (all == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an internal allgather");
    }
    if (x->me == 0) {
        for (int i = 0; i < x->n; i++) {
            if (i == 0) {
                memcpy(all, mine, len);
            } else if (lens[i] > 0 && (rc = xrecv(x, all + off, lens[i], i, tag + 2)) != MPI_SUCCESS) {
                free(all);
                return rc;
            }
            off += lens[i];
        }
    } else if (len > 0 && (rc = xsend(x, mine, len, 0, tag + 2)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    if (x->n > 1 && total > 0 && (rc = weft_x_bcast(x, all, total, 0, tag + 3)) != MPI_SUCCESS) {
        free(all);
        return rc;
    }
    *all_p = all;
    return MPI_SUCCESS;
}

int weft_x_barrier(const weft_xgroup_t *x, int tag)
{
    unsigned char b = 0xff;
    return weft_x_allreduce_band(x, &b, 1, tag);
}

int weft_x_exchange(weft_comm_t *comm, int peer, const void *out, size_t nout, void **in_p,
                    size_t *nin_p, int tag)
{
    /* An order every job agrees on (process ids are per process). */
    int    first = weft_dev_process_cmp(weft_runtime.pmi.rank, comm->peer_world[peer]) < 0;
    size_t nin   = 0;
    void  *in;
    int    rc;

    /* Sizes, then data; the lower process sends first in both rounds. */
    if (first) {
        if ((rc = weft_send_bytes(&nout, sizeof(nout), peer, tag, comm)) != MPI_SUCCESS ||
            (rc = weft_recv_bytes(&nin, sizeof(nin), peer, tag, comm)) != MPI_SUCCESS) {
            return rc;
        }
    } else {
        if ((rc = weft_recv_bytes(&nin, sizeof(nin), peer, tag, comm)) != MPI_SUCCESS ||
            (rc = weft_send_bytes(&nout, sizeof(nout), peer, tag, comm)) != MPI_SUCCESS) {
            return rc;
        }
    }
    in = malloc(nin ? nin : 1);
    if (in == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an internal exchange");
    }
    if (first) {
        if ((nout && (rc = weft_send_bytes(out, nout, peer, tag + 1, comm)) != MPI_SUCCESS) ||
            (nin && (rc = weft_recv_bytes(in, nin, peer, tag + 1, comm)) != MPI_SUCCESS)) {
            free(in);
            return rc;
        }
    } else {
        if ((nin && (rc = weft_recv_bytes(in, nin, peer, tag + 1, comm)) != MPI_SUCCESS) ||
            (nout && (rc = weft_send_bytes(out, nout, peer, tag + 1, comm)) != MPI_SUCCESS)) {
            free(in);
            return rc;
        }
    }
    *in_p  = in;
    *nin_p = nin;
    return MPI_SUCCESS;
}
