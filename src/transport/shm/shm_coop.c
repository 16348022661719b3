/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Cooperative copy (shm.h weft_shm_coop_*): sender and receiver of one
 * large message both copy its chunks with CMA, through a control block of
 * the pair (shm_coop_t). Separate from shm.c, which never calls it: its
 * callers are point-to-point's rendezvous (core/pt2pt), in other files.
 */
#include <errno.h>

#include "transport/shm/shm_internal.h"

static shm_coop_t *coop_slot(shm_coop_t *base, uint64_t handle, uint32_t *gen_p)
{
    *gen_p = (uint32_t)(handle >> 8);
    return &base[(handle & 0xff) - 1];
}

uint64_t weft_shm_coop_open(int peer, const void *src, size_t bytes)
{
    for (int i = 0; i < SHM_COOP_SLOTS; i++) {
        shm_coop_t *c = &shm.out[peer].coop[i];
        if (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != COOP_FREE) {
            continue;
        }
        c->gen++;
        c->src     = (uint64_t)(uintptr_t)src;
        c->bytes   = bytes;
        c->next    = 0;
        c->done    = 0;
        c->nchunks = 0;
        __atomic_store_n(&c->state, COOP_OPEN, __ATOMIC_RELEASE);
        return ((uint64_t)c->gen << 8) | (uint64_t)(i + 1);
    }
    return 0;
}

void weft_shm_coop_start(int sender, uint64_t handle, void *dst, size_t bytes)
{
    uint32_t    gen;
    shm_coop_t *c = coop_slot(shm.in[sender].coop, handle, &gen);

    if (dst == NULL || bytes == 0) {
        __atomic_store_n(&c->state, COOP_DECLINED, __ATOMIC_RELEASE);
        return;
    }
    /* Two chunks at least (halves, page-rounded), so the sender always has
     * one to take. */
    size_t half  = (bytes / 2 + 4095) & ~(size_t)4095;
    size_t chunk = half < SHM_COOP_CHUNK ? half : SHM_COOP_CHUNK;

    c->dst     = (uint64_t)(uintptr_t)dst;
    c->bytes   = bytes;
    c->chunk   = (uint32_t)chunk;
    c->nchunks = (uint32_t)((bytes + chunk - 1) / chunk);
    __atomic_store_n(&c->state, COOP_ACTIVE, __ATOMIC_RELEASE);
}

/* Copy one chunk: the receiver pulls, the sender pushes. */
static int coop_copy(int peer, shm_coop_t *c, uint32_t k, int i_am_sender)
{
    size_t       off = (size_t)k * c->chunk;
    size_t       len = c->bytes - off < c->chunk ? c->bytes - off : c->chunk;
    struct iovec src = {(char *)(uintptr_t)c->src + off, len};
    struct iovec dst = {(char *)(uintptr_t)c->dst + off, len};

    while (len > 0) {
        ssize_t got = i_am_sender
                          ? process_vm_writev(peer_ctl(peer)->pid, &src, 1, &dst, 1, 0)
                          : process_vm_readv(peer_ctl(peer)->pid, &dst, 1, &src, 1, 0);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return -1;
        }
        len -= (size_t)got;
        src.iov_base = (char *)src.iov_base + got;
        src.iov_len -= (size_t)got;
        dst.iov_base = (char *)dst.iov_base + got;
        dst.iov_len -= (size_t)got;
    }
    return 0;
}

int weft_shm_coop_work(int peer, uint64_t handle, int i_am_sender)
{
    uint32_t    gen;
    shm_coop_t *c = coop_slot(i_am_sender ? shm.out[peer].coop : shm.in[peer].coop, handle, &gen);
    uint32_t    state = __atomic_load_n(&c->state, __ATOMIC_ACQUIRE);

    if (c->gen != gen || state == COOP_DECLINED) {
        return i_am_sender ? 0 : 1; /* not ours to help with any more */
    }
    if (state != COOP_ACTIVE) {
        return 0;
    }
    for (;;) {
        uint32_t k = __atomic_fetch_add(&c->next, 1, __ATOMIC_ACQ_REL);
        if (k >= c->nchunks) {
            break;
        }
        if (coop_copy(peer, c, k, i_am_sender) != 0) {
            return -1;
        }
        __atomic_fetch_add(&c->done, 1, __ATOMIC_RELEASE);
    }
    return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE) == c->nchunks;
}

void weft_shm_coop_close(int sender, uint64_t handle)
{
    uint32_t    gen;
    shm_coop_t *c = coop_slot(shm.in[sender].coop, handle, &gen);

    __atomic_store_n(&c->state, COOP_FREE, __ATOMIC_RELEASE);
}

void weft_shm_coop_cancel(int peer, uint64_t handle)
{
    uint32_t    gen;
    shm_coop_t *c = coop_slot(shm.out[peer].coop, handle, &gen);

    __atomic_store_n(&c->state, COOP_FREE, __ATOMIC_RELEASE);
}
