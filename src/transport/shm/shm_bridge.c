/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Bridges: the shared memory of one pair of processes of different jobs on
 * one host (layout at shm_bridge_hdr_t), giving the peer the next index
 * after the node's local ranks.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "transport/shm/shm_internal.h"
#include "util/log.h"

uint64_t weft_shm_layout_key(void)
{
    return ((uint64_t)shm.ring_units << 32) ^ ((uint64_t)shm.slot_bytes << 8) ^
           (uint64_t)shm.slots ^ ((uint64_t)sizeof(shm_bridge_hdr_t) << 56) ^
           ((uint64_t)sizeof(shm_ring_ctl_t) << 48);
}

int weft_shm_bridge_attach(const char *name, int side, int world, int cma)
{
    size_t ring_stride = sizeof(shm_ring_ctl_t) + shm.ring_units * WEFT_SHM_UNIT;
    size_t pipe_stride = shm.slot_stride * (size_t)shm.slots;
    size_t coop_stride = sizeof(shm_coop_t) * SHM_COOP_SLOTS;
    size_t off_rings   = align_up(sizeof(shm_bridge_hdr_t), 4096);
    size_t off_pipes   = off_rings + 2 * ring_stride;
    size_t off_coop    = align_up(off_pipes + 2 * pipe_stride, 4096);
    size_t bytes       = align_up(off_coop + 2 * coop_stride, 4096);
    int    k = shm.n + shm.ndyn, other = 1 - side;

    shm_out_t      *out   = realloc(shm.out, sizeof(*out) * (size_t)(k + 1));
    shm_in_t       *in    = out ? realloc(shm.in, sizeof(*in) * (size_t)(k + 1)) : NULL;
    int            *world_of = in ? realloc(shm.world, sizeof(int) * (size_t)(k + 1)) : NULL;
    struct shm_dyn *dyn   = world_of ? realloc(shm.dyn, sizeof(*dyn) * (size_t)(shm.ndyn + 1)) : NULL;
    if (out) {
        shm.out = out;
    }
    if (in) {
        shm.in = in;
    }
    if (world_of) {
        shm.world = world_of;
    }
    if (dyn) {
        shm.dyn = dyn;
    }
    if (dyn == NULL) {
        weft_log_error("shm: no memory for a bridge to a process of another job");
        return -1;
    }
    /* Either side may get here first: both create-or-open and size the
     * segment alike (ftruncate to the same size keeps what the other wrote);
     * zero-filled memory is an empty, ready bridge. */
    int fd = shm_open(name, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)bytes) != 0) {
        weft_log_error("cannot create shared memory segment %s (%zu bytes): %s", name, bytes,
                       strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    char *base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED) {
        weft_log_error("cannot map shared memory segment %s (%zu bytes): %s", name, bytes,
                       strerror(errno));
        return -1;
    }
    shm_bridge_hdr_t *hdr = (shm_bridge_hdr_t *)base;
    struct shm_dyn   *d   = &shm.dyn[shm.ndyn];

    d->base  = base;
    d->bytes = bytes;
    d->hdr   = hdr;
    d->side  = side;
    d->cma   = cma;
    snprintf(hdr->bell[side], sizeof(hdr->bell[side]), "%s-%d", shm.bell_name, shm.me);
    (void)weft_shm_sleep_fd_prepare(); /* here, under the caller's lock; failure printed */
    __atomic_store_n(&hdr->side[side].pid, (int32_t)getpid(), __ATOMIC_RELEASE);
    if (__atomic_add_fetch(&hdr->mapped, 1, __ATOMIC_ACQ_REL) == 2) {
        shm_unlink(name); /* both mapped: a crash now leaves nothing behind */
    }
    memset(&shm.out[k], 0, sizeof(shm.out[k]));
    memset(&shm.in[k], 0, sizeof(shm.in[k]));
    char *to   = base + off_rings + ring_stride * (size_t)side;
    char *from = base + off_rings + ring_stride * (size_t)other;
    shm.out[k].ctl   = (shm_ring_ctl_t *)to;
    shm.out[k].cells = to + sizeof(shm_ring_ctl_t);
    shm.in[k].ctl    = (shm_ring_ctl_t *)from;
    shm.in[k].cells  = from + sizeof(shm_ring_ctl_t);
    shm.out[k].pipe  = base + off_pipes + pipe_stride * (size_t)side;
    shm.in[k].pipe   = base + off_pipes + pipe_stride * (size_t)other;
    shm.out[k].coop  = (shm_coop_t *)(base + off_coop + coop_stride * (size_t)side);
    shm.in[k].coop   = (shm_coop_t *)(base + off_coop + coop_stride * (size_t)other);
    /* Both sides start the rings at position 0: whatever the other side
     * queued before we attached is read at our next poll. */
    shm.world[k] = world;
    shm.ndyn++;
    return k;
}

void weft_shm_wake_address(char *name, size_t len)
{
    snprintf(name, len, "%s-%d", shm.bell_name, shm.me);
}

void weft_shm_wake_named(const char *name, size_t cap)
{
    struct sockaddr_un a;
    char               byte = 0;
    size_t             max  = sizeof(a.sun_path) - 2;
    size_t             n    = strnlen(name, cap < max ? cap : max);

    memset(&a, 0, sizeof(a));
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path + 1, name, n);
    if (shm.bell_out < 0) {
        shm.bell_out = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    }
    (void)sendto(shm.bell_out, &byte, 1, MSG_DONTWAIT, (struct sockaddr *)&a,
                 (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n));
}

int weft_shm_peer_cma(int peer)
{
    return peer < shm.n ? shm.cma : shm.dyn[peer - shm.n].cma;
}

