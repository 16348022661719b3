/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Layout and state of the shared-memory transport, shared by its files
 * (shm.c: node segment, rings, waits, CMA, pipeline; shm_coop.c: cooperative
 * copy; shm_bridge.c: bridges to processes of other jobs). Private to
 * transport/shm.
 */
#ifndef WEFT_TRANSPORT_SHM_INTERNAL_H
#define WEFT_TRANSPORT_SHM_INTERNAL_H

#include <stddef.h>
#include <pthread.h>
#include <stdint.h>

#include "transport/shm/shm.h"

#define SHM_TYPE_SKIP 0xffu
#define SHM_POLL_BATCH 64
/* Up to this many local ranks a receiver simply looks at every ring head
 * (one load per ring, no shared write by senders); above it senders ring a
 * per-receiver doorbell bitmap and the receiver polls only the rings whose
 * bits are set, so polling cost does not grow with the node size. */
#define SHM_POLL_ALL_MAX 8
#define SHM_BELL_WORDS   16 /* 1024 local ranks */
/* Bytes per process_vm_readv call: bounds the pages the kernel pins per call
 * and the time one call holds the CPU. Measured on a loaded machine, 16 MiB
 * messages varied between 8 and 23 GB/s with any chunk from 256 KiB to
 * unbounded, so this is not a tuned value. */
#define SHM_CMA_CHUNK    (4u << 20)
/* Ring units per cache line (see WEFT_SHM_UNIT). */
#define UNITS_PER_LINE   (WEFT_SHM_CELL / WEFT_SHM_UNIT)

typedef struct {
    uint32_t seq;      /* position + 1 when published */
    uint32_t len_type; /* type << 24 | payload length */
    int32_t  tag;
    uint32_t context;
    int32_t  src;
} shm_hdr_t;

_Static_assert(sizeof(shm_hdr_t) == WEFT_SHM_HDR_SIZE, "header size");

typedef struct {
    uint32_t sleeping; /* owner is (about to be) asleep: SLEEP_FUTEX or SLEEP_FD */
    uint32_t futex;    /* bumped by whoever wakes the owner */
    int32_t  pid;
    uint32_t cma_ok;
    uint64_t probe_addr;
    uint64_t probe_area;  /* WEFT_SHM_COST_PROBE_BYTES rank 0 reads to time CMA */
    weft_shm_costs_t costs; /* local rank 0's measurement (only its own is read) */
    uint32_t attached;    /* pid, probe fields and cma_ok are written (release) */
    /* Written in local rank 0's block only (the node's start-up state): */
    uint32_t attach_count; /* ranks that mapped the segment: the last unlinks its name */
    uint32_t partner;      /* the local rank that helps rank 0 measure (first to claim) */
    uint32_t costs_ready;  /* 0 until costs are final; then 1 + CMA on for the node */
} shm_rank_ctl_t;

_Static_assert(sizeof(shm_rank_ctl_t) == 128, "rank control block size");

/* Doorbell of one receiver: bit s set = "sender s published something". */
typedef struct {
    uint64_t word[SHM_BELL_WORDS];
    char     pad[128 - (SHM_BELL_WORDS * 8) % 128];
} shm_bell_t;

typedef struct {
    uint64_t consumed; /* cells the receiver has finished with */
    char     pad[WEFT_SHM_CELL - 8];
    /* 1 while the receiver holds too much of the sender's eager data
     * unmatched (weft_shm_set_held_back). Its own line, written only when
     * that flips, so the sender's read of it on every eager send stays a
     * cache hit (a byte count written at every unexpected message made np
     * 2 latency 0.13 -> 0.48 us). */
    uint64_t held_back;
    char     pad_held[WEFT_SHM_CELL - 8];
} shm_ring_ctl_t;

typedef struct {
    uint32_t full;
    uint32_t len;
    char     pad[WEFT_SHM_CELL - 8];
} shm_slot_hdr_t;

/* Cooperative-copy control block of one ordered pair (sender -> receiver).
 * The sender owns it from open until the receiver's close. */
#define SHM_COOP_SLOTS 8
#define SHM_COOP_CHUNK (128u << 10)
enum { COOP_FREE = 0, COOP_OPEN, COOP_ACTIVE, COOP_DECLINED };
typedef struct {
    uint32_t state;
    uint32_t gen;      /* bumped at every open: tells reuses apart */
    uint32_t nchunks;
    uint32_t chunk;    /* bytes per chunk (the last may be shorter) */
    uint64_t bytes;
    uint64_t src, dst;
    char     pad1[WEFT_SHM_CELL - 40];
    uint32_t next;     /* next chunk to claim (both sides, atomic) */
    uint32_t done;     /* chunks copied */
    char     pad2[WEFT_SHM_CELL - 8];
} shm_coop_t;

typedef struct {
    char    *cells;     /* ring cells to this peer */
    shm_ring_ctl_t *ctl;
    uint64_t wpos;      /* cells written (private to the sender) */
    uint64_t consumed;  /* last consumed value seen */
    char    *reserved;  /* cell of the open reservation */
    uint32_t reserved_units;
    char    *pipe;      /* slots me -> peer */
    uint64_t pipe_w;
    shm_coop_t *coop;   /* SHM_COOP_SLOTS blocks me -> peer */
} shm_out_t;

typedef struct {
    char    *cells;     /* ring cells from this peer */
    shm_ring_ctl_t *ctl;
    uint64_t rpos;
    char    *pipe;      /* slots peer -> me */
    uint64_t pipe_r;
    shm_coop_t *coop;   /* SHM_COOP_SLOTS blocks peer -> me */
} shm_in_t;

/* A bridge: the segment one process of another job on this host shares
 * with us (see weft_shm_bridge_attach):
 *   [bridge_hdr] [ring side0->side1, ring side1->side0] [pipes, same order]
 *   [coop blocks, same order] */
typedef struct {
    shm_rank_ctl_t side[2];  /* pid, sleeping, futex of each side */
    uint32_t       mapped;   /* sides that mapped it: the second unlinks the name */
    char           pad[60];
    char           bell[2][104]; /* each side's wake socket name (abstract) */
} shm_bridge_hdr_t;

struct shm_dyn {
    void             *base;
    size_t            bytes;
    shm_bridge_hdr_t *hdr;
    int               side; /* ours: 0 or 1 */
    int               cma;  /* single copy agreed for this pair */
};

typedef struct {
    int                   me, n;
    void                 *base;
    size_t                bytes;
    shm_rank_ctl_t       *ctl;
    shm_bell_t           *bells;      /* one per local rank, when n > SHM_POLL_ALL_MAX */
    int                   use_bells;
    uint64_t              ready[SHM_BELL_WORDS]; /* rings known to hold more */
    size_t                ring_units; /* WEFT_SHM_UNITs per ring (a power of two) */
    size_t                slot_bytes; /* data bytes per slot */
    size_t                slot_stride;
    int                   slots;
    shm_out_t            *out;
    shm_in_t             *in;
    int                   cma;
    int                   wake_on_send;
    const weft_am_handler_fn_t *handlers;
    int                  *world;      /* process id of every index (job ranks, then dynamic) */
    int                   ndyn;       /* dynamic peers: indices n..n+ndyn-1 (bridges) */
    struct shm_dyn       *dyn;
    int                   poll_start;
    char                  bell_name[96]; /* abstract socket name prefix (fd sleeps) */
    int                   bell_in;       /* our wake socket, made at the first fd sleep */
    int                   bell_out;      /* for waking a peer asleep on its socket */
    int                   prefaulting;   /* the ring prefault thread was started (see shm.c) */
    int                   prefault_done; /* ... and is done with the rings (atomic) */
    int                   prefault_stop; /* fini: stop at the next piece (atomic) */
    char                  name[512];     /* the node segment's name, for weft_shm_abandon */
} shm_state_t;

/* The module's state (shm.c), shared by its files. */
extern shm_state_t weft_shm_state;
#define shm weft_shm_state

/* ctl.sleeping: how the owner sleeps, so a sender knows how to wake it. A
 * rank that also waits for the network sleeps in poll() on the fabric's fd
 * and a datagram socket (abstract name: no file left behind, and ranks of a
 * host share its network namespace) instead of on the futex. */
enum { SLEEP_AWAKE = 0, SLEEP_FUTEX = 1, SLEEP_FD = 2 };

/* Control block of a peer index: in the node segment for job ranks, in
 * the bridge for processes of other jobs. */
static inline shm_rank_ctl_t *peer_ctl(int peer)
{
    if (peer < shm.n) {
        return &shm.ctl[peer];
    }
    struct shm_dyn *d = &shm.dyn[peer - shm.n];
    return &d->hdr->side[1 - d->side];
}

static inline size_t align_up(size_t v, size_t a)
{
    return (v + a - 1) / a * a;
}

#endif
