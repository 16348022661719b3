/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Private to src/coll: the schedule engine every algorithm is written
 * against, the argument block of a collective call, the algorithm registry
 * (from algorithms.def) and the per-communicator state.
 *
 * Every algorithm is a *builder*: it appends steps (send, recv, reduce,
 * copy) to a schedule, separated by fences (a step after a fence starts only
 * when every step before it completed). Blocking collectives build a
 * schedule and run it to completion; non-blocking ones hand it to the
 * progress engine; persistent ones keep it and rerun it at each MPI_Start.
 * All messages of one schedule on one communicator carry one tag taken from
 * the communicator's collective sequence number (every member builds the
 * same collectives in the same order), so concurrent non-blocking
 * collectives never cross-match and MPI's non-overtaking rule orders the
 * messages inside one collective.
 */
#ifndef WEFT_COLL_INTERNAL_H
#define WEFT_COLL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <mpi.h>

#include "core/comm.h"
#include "core/datatype.h"
#include "core/op.h"
#include "core/request.h"

/* ---- collectives -------------------------------------------------------- */

#define WEFT_COLL_LIST(X)                                                                   \
    X(BARRIER, barrier)                                                                     \
    X(BCAST, bcast)                                                                         \
    X(GATHER, gather)                                                                       \
    X(GATHERV, gatherv)                                                                     \
    X(SCATTER, scatter)                                                                     \
    X(SCATTERV, scatterv)                                                                   \
    X(ALLGATHER, allgather)                                                                 \
    X(ALLGATHERV, allgatherv)                                                               \
    X(ALLTOALL, alltoall)                                                                   \
    X(ALLTOALLV, alltoallv)                                                                 \
    X(ALLTOALLW, alltoallw)                                                                 \
    X(REDUCE, reduce)                                                                       \
    X(ALLREDUCE, allreduce)                                                                 \
    X(REDUCE_SCATTER, reduce_scatter)                                                       \
    X(REDUCE_SCATTER_BLOCK, reduce_scatter_block)                                           \
    X(SCAN, scan)                                                                           \
    X(EXSCAN, exscan)                                                                       \
    X(NEIGHBOR_ALLGATHER, neighbor_allgather)                                               \
    X(NEIGHBOR_ALLGATHERV, neighbor_allgatherv)                                             \
    X(NEIGHBOR_ALLTOALL, neighbor_alltoall)                                                 \
    X(NEIGHBOR_ALLTOALLV, neighbor_alltoallv)                                               \
    X(NEIGHBOR_ALLTOALLW, neighbor_alltoallw)

typedef enum {
#define X(_U, _l) WEFT_COLL_##_U,
    WEFT_COLL_LIST(X)
#undef X
    WEFT_COLL_COUNT
} weft_coll_id_t;

extern const char *const weft_coll_names[WEFT_COLL_COUNT];

/* The arguments of one collective call, normalised: counts MPI_Count,
 * displacements MPI_Aint (elements for v-forms, bytes for w-forms). Unused
 * fields are zero. sbuf may be MPI_IN_PLACE. */
typedef struct {
    int                     coll; /* weft_coll_id_t */
    weft_comm_t            *comm;
    const void             *sbuf;
    void                   *rbuf;
    MPI_Count               scount, rcount;
    weft_datatype_t        *sdt, *rdt;
    const MPI_Count        *scounts, *rcounts;
    const MPI_Aint         *sdispls, *rdispls;
    weft_datatype_t *const *sdts, *const *rdts;
    weft_op_t              *op;
    int                     root;
    /* reductions and bcast: count elements of dt */
    MPI_Count               count;
    weft_datatype_t        *dt;
    int                     blocking; /* a blocking call (WEFT_R_SHM algorithms) */
    int                     nested;   /* leaders' phase of a node-aware algorithm:
                                         rules only, WEFT_<COLL>_ALGORITHM ignored */
} weft_coll_args_t;

/* ---- schedules ----------------------------------------------------------- */

typedef struct weft_sched weft_sched_t;

/* New empty schedule whose primary communicator is comm (takes the tag). */
weft_sched_t *weft_sched_new(weft_comm_t *comm);
void          weft_sched_free(weft_sched_t *s);

/* Take a tag on comm for this schedule now (builders call it first for every
 * communicator they use, so members that end up sending nothing on it still
 * advance its sequence). Idempotent per schedule. */
int weft_sched_use(weft_sched_t *s, weft_comm_t *comm);

/* Steps. peer is a rank of comm's peer group; zero-count transfers are still
 * messages (they synchronise). Return MPI_SUCCESS or MPI_ERR_NO_MEM. */
int weft_sched_send(weft_sched_t *s, const void *buf, MPI_Count count, weft_datatype_t *dt,
                    int peer, weft_comm_t *comm);
int weft_sched_recv(weft_sched_t *s, void *buf, MPI_Count count, weft_datatype_t *dt, int peer,
                    weft_comm_t *comm);
/* inout = in op inout (in: the lower-ranked operand). */
int weft_sched_reduce(weft_sched_t *s, const void *in, void *inout, MPI_Count count,
                      weft_datatype_t *dt, weft_op_t *op);
/* Copy (sbuf, scount, sdt) to (rbuf, rcount, rdt) like a send/recv pair. */
int weft_sched_copy(weft_sched_t *s, const void *sbuf, MPI_Count scount, weft_datatype_t *sdt,
                    void *rbuf, MPI_Count rcount, weft_datatype_t *rdt);
/* Everything appended after a fence waits for everything before it. */
int weft_sched_fence(weft_sched_t *s);
/* A step that is done when fn(state, first, &rc) returns 1 (first: this is
 * the first call of this run of the schedule; a non-MPI_SUCCESS rc is the
 * schedule's error). fn must not block: it is called from progress until it
 * reports done (the shared-memory node phase of non-blocking calls). */
typedef int (*weft_sched_poll_fn_t)(void *state, int first, int *rc);
int weft_sched_poll(weft_sched_t *s, weft_sched_poll_fn_t fn, void *state);

/* Scratch memory living as long as the schedule (never NULL for 0 bytes;
 * NULL on no memory). */
void *weft_sched_alloc(weft_sched_t *s, size_t bytes);
/* Scratch for count elements of dt in dt's own layout: the returned pointer
 * is the "buffer address" (data starts at true_lb from it). */
void *weft_sched_tmp(weft_sched_t *s, MPI_Count count, const weft_datatype_t *dt);
/* Keep dt / op alive while the schedule exists (user objects passed to
 * non-blocking and persistent calls). */
int weft_sched_hold(weft_sched_t *s, weft_datatype_t *dt, weft_op_t *op);

/* Run to completion (blocking collectives); frees s. MPI error code. */
int weft_sched_run(weft_sched_t *s);
/* Start s in the background; its completion completes req. */
int weft_sched_start(weft_sched_t *s, weft_request_t *req);
/* Advance a started schedule; 1 when finished (error in *rc). */
int weft_sched_advance(weft_sched_t *s, int *rc);
/* Rewind a finished schedule so it can run again (persistent). */
void weft_sched_rewind(weft_sched_t *s);

/* ---- registry ------------------------------------------------------------ */

/* Restrictions an algorithm places on a call. */
#define WEFT_R_COMMUTATIVE 0x01u /* op must be commutative */
#define WEFT_R_POF2        0x02u /* communicator size a power of two */
#define WEFT_R_NO_INPLACE  0x04u /* MPI_IN_PLACE not supported */
#define WEFT_R_TWO_LEVEL   0x08u /* needs several nodes, one with several ranks */
#define WEFT_R_COUNT_POF2  0x10u /* count >= largest power of two <= size */
#define WEFT_R_CONTIG      0x20u /* datatypes must be contiguous */
#define WEFT_R_BUILTIN_OP  0x40u /* predefined op */
/* Shared-memory node phase (src/coll/shm): needs the communicator's node
 * region; non-blocking and persistent forms on one node only. */
#define WEFT_R_SHM         0x80u
#define WEFT_R_ALONE       0x100u /* an intracommunicator of one rank */

typedef int (*weft_coll_build_fn_t)(weft_sched_t *s, const weft_coll_args_t *a);
/* A blocking call run directly, without a schedule. */
typedef int (*weft_coll_run_fn_t)(const weft_coll_args_t *a);

typedef enum {
#define WEFT_COLL_ALG(_coll, _lcoll, _kind, _lkind, _name, _flags, _forms, _desc) \
    WEFT_ALG_##_coll##_##_kind##_##_name,
#include "coll/algorithms.def"
#undef WEFT_COLL_ALG
    WEFT_ALG_COUNT
} weft_coll_alg_id_t;

typedef struct {
    int                  coll;
    int                  inter;
    const char          *name;
    unsigned             flags;
    weft_coll_build_fn_t build; /* NULL: no schedule form (RUN) */
    weft_coll_run_fn_t   run;   /* NULL: blocking calls run the schedule (SCHED) */
    const char          *desc;
} weft_coll_alg_t;

/* The forms column of algorithms.def -> the row's builder and run. */
#define WEFT_COLL_BUILD_OF_SCHED(_fn)     _fn
#define WEFT_COLL_BUILD_OF_RUN(_fn)       NULL
#define WEFT_COLL_BUILD_OF_RUN_SCHED(_fn) _fn
#define WEFT_COLL_RUN_OF_SCHED(_fn)       NULL
#define WEFT_COLL_RUN_OF_RUN(_fn)         _fn##_run
#define WEFT_COLL_RUN_OF_RUN_SCHED(_fn)   _fn##_run

extern const weft_coll_alg_t weft_coll_algs[WEFT_ALG_COUNT];

#define WEFT_COLL_ALG(_coll, _lcoll, _kind, _lkind, _name, _flags, _forms, _desc)            \
    int weft_coll_##_lcoll##_##_lkind##_##_name(weft_sched_t *s, const weft_coll_args_t *a); \
    int weft_coll_##_lcoll##_##_lkind##_##_name##_run(const weft_coll_args_t *a);
#include "coll/algorithms.def"
#undef WEFT_COLL_ALG

/* Choose the algorithm for a call (force tunable, rule file, shipped rules,
 * restrictions), count it for the report. */
/* The algorithm for a, or -1 with *rc the error (MPI_SUCCESS when simply
 * none applies; an error when making the shared-memory region failed, e.g. a
 * member process was lost). */
int weft_coll_select(const weft_coll_args_t *a, int *rc);
/* Run a blocking call of alg to completion: its direct run if the row has
 * one, else its schedule. */
int weft_coll_run_blocking(int alg, const weft_coll_args_t *a);
/* Append algorithm alg's steps for a (checks nothing). */
int weft_coll_build(weft_sched_t *s, int alg, const weft_coll_args_t *a);
/* A new schedule on a->comm holding alg's steps, or NULL with the MPI error
 * (reason recorded) in *rc. */
weft_sched_t *weft_coll_schedule(int alg, const weft_coll_args_t *a, int *rc);
/* Does alg accept the call? 1/0. */
int weft_coll_alg_ok(int alg, const weft_coll_args_t *a);

/* ---- per-communicator state ------------------------------------------------ */

struct weft_coll_comm {
    uint32_t     seq;          /* collective sequence number -> tags */
    int          layout_done;  /* node layout computed */
    int          nodes;        /* distinct nodes among the members */
    int          max_ppn;      /* most members on one node */
    int          node_id;      /* my node index (0..nodes-1, by lowest rank) */
    int          is_leader;    /* lowest rank of my node */
    weft_comm_t *node_comm;    /* members on my node (two-level), lazily */
    weft_comm_t *leader_comm;  /* one per node (leaders only; NULL elsewhere) */
    int         *leader_of;    /* comm rank -> rank of its node leader in comm */
    int         *node_index;   /* comm rank -> node index */
    int          sub_built;
    int          shm_state;    /* shared-memory region: 0 not tried, 1 ready, -1 failed */
    struct weft_coll_shm *shm; /* src/coll/shm/coll_shm_internal.h */
    /* The last selection per collective and the inputs it depended on
     * (coll.c, weft_coll_select): a repeated call skips the rules. */
    struct {
        MPI_Count msg, count;
        unsigned  key; /* 0: empty */
        int       alg;
    } chosen[WEFT_COLL_COUNT];
};

struct weft_coll_comm *weft_coll_comm_get(weft_comm_t *comm);
/* Build node_comm / leader_comm (collective over comm). */
int weft_coll_comm_two_level(weft_comm_t *comm);
/* Shared-memory collectives (src/coll/shm): create the node region of comm
 * (collective over comm; on failure every rank sees shm_state -1), free it.
 * The algorithms themselves are registry rows. */
int  weft_coll_shm_setup(weft_comm_t *comm);
/* Run a blocking algorithm with cc's shared-memory region as this thread's
 * running region: a member process lost meanwhile fails the call
 * (MPI_ERR_OTHER naming it, what names the call) and ends shared-memory use
 * on the communicator, instead of waiting for it forever. */
int  weft_coll_shm_run(struct weft_coll_comm *cc, int (*run)(const weft_coll_args_t *),
                       const weft_coll_args_t *a, const char *what);
void weft_coll_shm_free(struct weft_coll_comm *cc);

/* Tag for the next schedule on comm. */
int weft_coll_next_tag(weft_comm_t *comm);
/* Blocking send on comm's collective context for the direct (_run) forms:
 * point-to-point's request-free eager send when it applies. */
int weft_coll_send_now(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                       weft_comm_t *comm);

/* ---- calls (coll_api.c, coll_run.c; the generated coll_gen.c) ------------- */

enum { WEFT_COLL_MODE_BLOCKING, WEFT_COLL_MODE_NONBLOCKING, WEFT_COLL_MODE_PERSISTENT };

/* Run a checked call in a mode: to completion (blocking), started behind a
 * new request (non-blocking) or kept behind a new persistent request, both
 * returned in *request. */
int weft_coll_run(weft_coll_args_t *a, int mode, MPI_Request *request);

/* Peer group size at the root, 0 elsewhere (how many elements of a v-form's
 * root-side arrays are significant). */
int weft_coll_root_peers(int root, const weft_comm_t *comm);
/* Topology in-degree (out = 0) or out-degree (out = 1); 0 without one. */
int weft_coll_topo_degree(weft_comm_t *comm, int out);
/* The n first elements of an int array as MPI_Count / MPI_Aint: in the
 * caller's stack array of WEFT_COLL_WIDEN_STACK elements when they fit,
 * else in a new one (no malloc and free per call for communicators of up
 * to that size; the arrays live only during the call, schedules copy
 * them). *out is NULL when in is NULL or n <= 0; release it with
 * weft_coll_widen_free(*out, stack). */
#define WEFT_COLL_WIDEN_STACK 32
int  weft_coll_widen_counts(const int *in, int n, MPI_Count *stack, MPI_Count **out);
int  weft_coll_widen_displs(const int *in, int n, MPI_Aint *stack, MPI_Aint **out);
void weft_coll_widen_free(void *out, const void *stack);

/* ---- helpers -------------------------------------------------------------- */

extern weft_datatype_t *weft_coll_byte; /* MPI_BYTE */

/* n ranks of one node share its CPUs (more ranks than online CPUs). From
 * the communicator's own count, not this process's job (whose node share
 * can differ between the jobs a communicator joins after spawn or
 * connect): every member decides alike, as region layouts and algorithm
 * choices must. */
static inline int weft_coll_node_oversubscribed(int n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus > 0 && n > cpus;
}

static inline int weft_coll_pof2_floor(int n)
{
    int p = 1;
    while (p * 2 <= n) {
        p *= 2;
    }
    return p;
}
static inline int weft_coll_is_pof2(int n)
{
    return n > 0 && (n & (n - 1)) == 0;
}
/* Address of element i of a buffer of dt. */
static inline void *weft_coll_elem(const void *buf, MPI_Count i, const weft_datatype_t *dt)
{
    return (char *)buf + (MPI_Aint)i * dt->extent;
}
/* Size in bytes of the data of a reduction/bcast call. */
static inline MPI_Count weft_coll_bytes(MPI_Count count, const weft_datatype_t *dt)
{
    return count * dt->size;
}

/* rc = x unless an earlier step already failed. */
#define WEFT_TRY(_rc, _x)                                                                     \
    do {                                                                                      \
        if ((_rc) == MPI_SUCCESS) {                                                           \
            (_rc) = (_x);                                                                     \
        }                                                                                     \
    } while (0)

/* The caller's contribution of a reduction (recvbuf when MPI_IN_PLACE). */
static inline const void *weft_coll_mydata(const weft_coll_args_t *a)
{
    return a->sbuf == MPI_IN_PLACE ? a->rbuf : a->sbuf;
}

/* Block i of count elements split into n near-equal blocks. */
static inline void weft_coll_block(MPI_Count count, int n, int i, MPI_Count *off, MPI_Count *cnt)
{
    MPI_Count q = count / n, r = count % n;
    *cnt        = q + (i < r ? 1 : 0);
    *off        = i * q + (i < r ? i : r);
}

/* Ranks folded for power-of-two algorithms: the first 2*rem ranks pair up
 * (even -> odd), the odd one continues as newrank r/2; others r - rem. */
static inline int weft_coll_newrank(int rank, int rem)
{
    return rank < 2 * rem ? ((rank & 1) ? rank / 2 : -1) : rank - rem;
}
static inline int weft_coll_oldrank(int newrank, int rem)
{
    return newrank < rem ? newrank * 2 + 1 : newrank + rem;
}

/* Shared pieces of the power-of-two reduction algorithms (rabenseifner.c):
 * recursive-halving reduce-scatter over the folded ranks of comm on the
 * buffer w (count elements of dt, tmp scratch of the same size); records
 * the halving ranges so the allgather / gather phases can retrace them. */
typedef struct {
    int       pof2, rem, newrank, steps;
    int       lo[32], hi[32];   /* block range before step k */
    int       klo[32], khi[32]; /* block range kept at step k */
} weft_coll_halving_t;

int weft_coll_rsa_reduce_scatter(weft_sched_t *s, weft_comm_t *comm, void *w, void *tmp,
                                 MPI_Count count, weft_datatype_t *dt, weft_op_t *op,
                                 weft_coll_halving_t *h);

/* Binomial reduce (the builder of reduce/binomial, usable by composites). */
int weft_coll_reduce_binomial_raw(weft_sched_t *s, weft_comm_t *comm, const void *mine,
                                  void *result, MPI_Count count, weft_datatype_t *dt,
                                  weft_op_t *op, int root);

#endif
