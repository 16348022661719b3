/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node shared-memory transport: the one public header of transport/shm.
 * Core calls these directly (shm is the hot path, never behind a table).
 *
 * Peers are local indices 0..local_size-1 (weft_pmi_info_t.local_ranks),
 * then processes of other jobs on this host, each reached through a bridge
 * (a segment of that pair alone) and given the next index at attach.
 * Messages are active messages (transport.h): a small header (type, tag,
 * context, source, length) plus payload, carried through a per-ordered-pair single-producer /
 * single-consumer ring of WEFT_SHM_UNIT-byte units. The header and the first
 * WEFT_SHM_INLINE bytes of payload share one cache line.
 */
#ifndef WEFT_TRANSPORT_SHM_H
#define WEFT_TRANSPORT_SHM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "pmi/pmi.h"
#include "transport/transport.h"

#define WEFT_SHM_CELL     64
#define WEFT_SHM_HDR_SIZE 20
#define WEFT_SHM_INLINE   (WEFT_SHM_CELL - WEFT_SHM_HDR_SIZE)

/* The rings' granule: a message takes whole units from a header's
 * start. One whose header and payload fit in a unit (up to 12 bytes of
 * payload) may share a cache line with the next, so a stream of tiny
 * messages moves half as many lines between the cores; a longer one
 * starts on a line boundary (a one-unit SKIP before it when needed), so
 * up to WEFT_SHM_INLINE bytes still travel in one line. */
#define WEFT_SHM_UNIT     32u
_Static_assert(WEFT_SHM_CELL % WEFT_SHM_UNIT == 0 && WEFT_SHM_UNIT >= WEFT_SHM_HDR_SIZE, "ring unit");

/* Arrivals are active messages (transport.h): each is dispatched through the
 * handler table by its type, with the sender's job rank, in ring order per
 * sender. */
typedef weft_am_t weft_shm_msg_t;

struct weft_shm_costs;

typedef struct {
    size_t ring_bytes;      /* per ordered pair */
    size_t pipe_slot_bytes; /* 2-copy pipeline slot size */
    int    pipe_slots;      /* slots per ordered pair */
    int    use_cma;         /* wanted; the init probe may still refuse */
    int    wake_on_send;    /* blocking wait policy: senders wake sleepers */
    int    time_xcopy;      /* time a lone message's copies (xcopy_ns): only when every
                             * local rank has a CPU; sharing one, the two processes of
                             * the timing take turns and it measures the scheduler */
    long   cma_extra_ns;    /* testing: added to the measured CMA cost */
    int    prefault_rings;  /* map this rank's outgoing rings in a background thread;
                             * not where local ranks outnumber the CPUs, where it takes
                             * them from ranks still starting */
    /* Local rank 0: fills the cpu fields of the costs (called while the
     * other ranks start, before the measurement); NULL: unknown. */
    void (*node_facts)(struct weft_shm_costs *facts);
} weft_shm_config_t;

/* Mechanism costs measured once per job by local rank 0 at init, with the
 * CPU it describes (its config->node_facts), read by every local rank from
 * the segment so all ranks derive the same thresholds. Zero when nothing
 * was measured (fewer than 2 local ranks; cma_ns also without CMA). */
typedef struct weft_shm_costs {
    uint64_t probe_bytes; /* bytes moved by each measured operation */
    uint64_t cma_ns;      /* one process_vm_readv of probe_bytes (+ cma_extra_ns) */
    uint64_t cma_page_ns; /* one of a quarter of probe_bytes (+ cma_extra_ns) */
    uint64_t copy_ns;     /* one memcpy of probe_bytes within this process */
    uint64_t xcopy_ns;    /* one lone eager-like message of probe_bytes: another local
                           * process copies it into shared lines this one last read,
                           * this one copies it out (both copies move lines between the
                           * cores' caches); 0 unknown */
    uint32_t init_ns;     /* what the measurement cost rank 0 (saturates) */
    uint32_t xcopy_step_ns; /* probe_bytes streamed through two shared half-slots, the
                             * copies in and out overlapped as in a pipeline; 0 unknown */
    uint64_t l2_bytes;    /* L2 cache bytes (0 unknown) */
    char     cpu_vendor[16];
    int32_t  cpu_family;  /* -1 unknown */
    int32_t  cpu_model;
} weft_shm_costs_t;

/* Create (local rank 0) or map the node segment, probe CMA and read the
 * node's costs. Waits for local ranks 0 and 1 only, never for the whole
 * node or job (see attach in shm.c); the last rank to map the segment
 * unlinks its name. Returns 0 or -1 (message printed). */
int  weft_shm_init(const weft_pmi_info_t *pmi, const char *jobid,
                   const weft_shm_config_t *config, const weft_am_handler_fn_t *handlers);
void weft_shm_fini(void);
/* The job is ending (abort): unlink the node segment's name if some local
 * rank has not mapped it yet, since that rank would have unlinked it and
 * is about to be killed. Async-signal-safe enough for the abort path (one
 * atomic load and shm_unlink); harmless if the name is already gone. */
void weft_shm_abandon(void);

/* CMA usable between every pair of local ranks (probed at init). */
int weft_shm_cma_enabled(void);

/* Bytes of the cost probe: a few pages, as the rendezvous of a medium
 * message pins and copies. */
#define WEFT_SHM_COST_PROBE_BYTES (16u << 10)

/* Measure into costs (the cpu fields are kept): one memcpy of
 * WEFT_SHM_COST_PROBE_BYTES from local_src and, when cma_ok, one
 * process_vm_readv of as many bytes, and one of a quarter of them, at
 * remote_src in process pid (plus cma_extra_ns); the fastest of a few each. Self-contained (shm_cost.c), so
 * weft-info measures the same way outside a job. */
void weft_shm_measure_costs(pid_t pid, const void *remote_src, const void *local_src, int cma_ok,
                            long cma_extra_ns, weft_shm_costs_t *costs);

/* Shared memory for the cross-core copy probe, zeroed before either side
 * starts: the follower (local rank 1, or weft-info's child) writes data,
 * the leader (local rank 0) copies it out. */
typedef struct {
    uint32_t      turn; /* 2i: the leader asks for round i; 2i + 1: lone round i written */
    int32_t       cpu;  /* where the follower wrote round i */
    char          pad0[56];
    uint32_t      produced; /* stream rounds: half-slots the follower has written */
    char          pad1[60];
    uint32_t      consumed; /* ... and the leader has copied out */
    char          pad2[60];
    unsigned char data[WEFT_SHM_COST_PROBE_BYTES];
} weft_shm_xcopy_area_t;

/* Leader: the fastest of a few timed lone rounds (ask, the follower copies
 * the data in, this process copies them out) with the follower on another
 * CPU, in ns; 0 when no round was written on another
 * CPU (unbound processes sharing one) or the follower did not answer
 * within a few ms (descheduled on an oversubscribed node), and then it is
 * told to stop. Waits yield the CPU. *step_ns: a pipeline's cost per
 * WEFT_SHM_COST_PROBE_BYTES, the fastest of a few stream rounds in which
 * the follower fills the two halves of the data in turn while this side
 * empties the other (0 with the 0 result, or no stream round on two CPUs). */
uint64_t weft_shm_xcopy_lead(weft_shm_xcopy_area_t *area, uint32_t *step_ns);
/* Follower: writes the data of each round the leader asks for, until the
 * last round or the leader gives up (bounded by the same few ms). */
void weft_shm_xcopy_follow(weft_shm_xcopy_area_t *area);

/* weft_shm_max_payload for a ring of ring_bytes (weft_shm_config_t). */
size_t weft_shm_ring_payload(size_t ring_bytes);

/* The node's measured mechanism costs (see weft_shm_costs_t). */
void weft_shm_costs(weft_shm_costs_t *costs);

/* Largest payload one message can carry. */
size_t weft_shm_max_payload(void);

/* Reserve room for a message of len payload bytes to peer. Returns a pointer
 * where the payload goes, or NULL when the ring is full (retry later). The
 * reservation must be committed before any other send to the same peer. */
void *weft_shm_reserve(int peer, size_t len);
/* Publish the reserved message. */
void weft_shm_commit(int peer, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                     size_t len);

/* Convenience: reserve + memcpy + commit; returns 0 or -1 if no room. */
int weft_shm_send(int peer, uint8_t type, int32_t tag, uint32_t context, int32_t src,
                  const void *payload, size_t len);

/* Flow control of eager messages. Receiver: tell peer to stop (on = 1) or
 * resume (0) sending eagerly, as the payload of its messages that no
 * receive has matched yet grows or shrinks. Sender: whether peer asked it
 * to stop (0 for a bridge peer that never said). */
void weft_shm_set_held_back(int peer, int on);
int  weft_shm_held_back(int peer);

/* Handle arriving messages (at most a bounded batch). Returns the count. */
int weft_shm_poll(void);

/* Single copy from peer's address space: gather the remote ranges into the
 * local ones (total bytes = sum of either list; partial transfers retried).
 * Returns 0 or -1 with errno. */
int weft_shm_cma_read(int peer, const struct iovec *local, int nlocal, const struct iovec *remote,
                      int nremote);
/* The peer's pid; 0 while a process of another job has not attached yet. */
pid_t weft_shm_peer_pid(int peer);

/* 2-copy pipeline slots of the ordered pair (me -> peer) and (peer -> me).
 * Sender: acquire returns the next free slot (capacity in *cap_p) or NULL;
 * publish makes len bytes visible. Receiver: peek returns the next full slot
 * of the pair from peer (length in *len_p) or NULL; release frees it. */
void       *weft_shm_pipe_acquire(int peer, size_t *cap_p);
void        weft_shm_pipe_publish(int peer, size_t len);
const void *weft_shm_pipe_peek(int peer, size_t *len_p);
void        weft_shm_pipe_release(int peer);

/* Cooperative single copy of one large contiguous message: sender and
 * receiver both claim chunks from a shared counter and copy them with
 * process_vm_writev / process_vm_readv, so both cores move data at once
 * (chunks are halves of the message up to 256 KiB, 128 KiB beyond).
 * Sender: coop_open publishes the source and returns a handle (slot id and
 * generation, > 0) or 0 when no slot is free. Receiver, once matched:
 * coop_start names the destination and the byte count (<= the sent bytes;
 * 0 bytes or dst NULL declines: the sender then stops helping and waits for
 * the ordinary completion message). Both: coop_work copies claimed chunks
 * and returns 1 once every chunk is done (-1 on a copy error). The receiver
 * then calls coop_close to free the slot. */
uint64_t weft_shm_coop_open(int peer, const void *src, size_t bytes);
void     weft_shm_coop_start(int sender, uint64_t handle, void *dst, size_t bytes);
int      weft_shm_coop_work(int peer, uint64_t handle, int i_am_sender);
void     weft_shm_coop_close(int sender, uint64_t handle);
/* Sender: give back a slot whose handle never reached the receiver. */
void     weft_shm_coop_cancel(int peer, uint64_t handle);

/* Blocking wait support: sleep until a peer sends to us or timeout_us
 * passes, unless a message is already waiting. */
void weft_shm_sleep(long timeout_us);
/* The same, also waking when fd (the netmod's wait object) becomes readable.
 * prepare (under the caller's lock) makes our wake socket once: 0, or -1
 * when fd sleeps are impossible (message printed once; use weft_shm_sleep).
 * sleep_fd returns poll()'s result (0: timeout). */
int  weft_shm_sleep_fd_prepare(void);
int  weft_shm_sleep_fd(int fd, long timeout_us);

/* ---- processes of other jobs on this host ----
 * A bridge is created by whichever side attaches first under a name both
 * derive (the core picks it) and unlinked once both have mapped it; the
 * rings work from the first attach, so messages wait there for the other
 * side. Both sides must pass the same cma (agreed from what both can do)
 * and run the same ring layout (weft_shm_layout_key equal). */
uint64_t weft_shm_layout_key(void);
/* Map the bridge name as side (0 or 1) for process id world: returns its
 * peer index (>= local_size), or -1 (message printed). */
int      weft_shm_bridge_attach(const char *name, int side, int world, int cma);
/* Single copy usable with this peer. */
int      weft_shm_peer_cma(int peer);
/* Our wake socket's name, and waking a process by such a name (read up to
 * its NUL or cap bytes). */
void     weft_shm_wake_address(char *name, size_t len);
void     weft_shm_wake_named(const char *name, size_t cap);

/* Doors (shm_door.c): the owner's inbox for knocks from processes of other
 * jobs that do not know it yet. open: create ours (0, or -1 printed);
 * knock: put one record (<= WEFT_SHM_DOOR_RECORD bytes) into the door name
 * (0, or -1: no such door or it is full: retry); take: copy one waiting
 * record out, returning its length (0: none). */
#define WEFT_SHM_DOOR_RECORD 480
int    weft_shm_door_open(const char *name);
void   weft_shm_door_close(void);
int    weft_shm_door_knock(const char *name, const void *rec, size_t len);
size_t weft_shm_door_take(void *rec);

#endif
