/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The PMI server inside weft-proxy: one connection per local rank (the rank's
 * end of a socketpair is its PMI_FD), PMI-1 or PMI-2 detected per connection
 * from its first bytes, replies through the shared codec (pmi/pmi_wire.h).
 * Puts are held per node until every local rank enters the fence; then the
 * proxy ships them to mpiexec (on_fence) and, when mpiexec has everyone's,
 * weft_pmi_server_fence_done() merges them and releases the local ranks.
 */
#ifndef WEFT_LAUNCHER_PMI_SERVER_H
#define WEFT_LAUNCHER_PMI_SERVER_H

#include "buf.h"
#include "kvs.h"

typedef struct {
    int        fd;
    int        rank;
    int        appnum;      /* MPI_APPNUM: which program of an MPMD job */
    int        wire;        /* 0 until detected, then 1 or 2 */
    int        initialized; /* answered init */
    int        finalized;
    int        in_fence;
    int        aborted;
    int        dead;        /* its rank ended: counts as present at every fence */
    weft_buf_t spawn_acc; /* PMI-1 spawn blocks so far (pmi/pmi_spawn.h packed cmds) */
    int        spawn_blocks;
    weft_buf_t in;
    weft_buf_t out;
} weft_pmi_sconn_t;

typedef struct {
    weft_kvs_t        kvs;
    weft_buf_t        pending; /* puts since the last fence: "key\0value\0"... */
    int               nconns;
    weft_pmi_sconn_t *conns;
    int               nfence;
    const char       *kvsname;
    const char       *mapping; /* "" when unknown */
    int               size;
    int               universe;
    /* Node-local snapshot after each fence (pmi_shm.h): shm name prefix,
     * NULL for none; fences done so far names the segment. */
    const char       *shm_prefix;
    unsigned          shm_fence;
    void             *ctx;
    /* Every local rank entered the fence: ship puts to mpiexec. */
    void (*on_fence)(void *ctx, const char *puts, size_t len);
    /* A rank asked to abort the job. */
    void (*on_abort)(void *ctx, int rank, int code, const char *msg);
    /* Name service: op 'P' publish, 'L' lookup, 'U' unpublish (port NULL
     * unless publishing). Answer later with weft_pmi_server_name_done(). */
    void (*on_name)(void *ctx, int conn, int op, const char *service, const char *port);
    /* Spawn: req is a packed request (pmi/pmi_spawn.h). Answer later with
     * weft_pmi_server_spawn_done(). */
    void (*on_spawn)(void *ctx, int conn, const char *req, size_t len);
    /* A protocol error worth one line on stderr. */
    void (*on_error)(void *ctx, int rank, const char *what);
} weft_pmi_server_t;

int  weft_pmi_server_init(weft_pmi_server_t *srv, int nconns);
void weft_pmi_server_fini(weft_pmi_server_t *srv);

/* Read and handle what connection i has. 1 open, 0 closed (EOF), -1 error. */
int  weft_pmi_server_input(weft_pmi_server_t *srv, int i);
/* Write queued replies of connection i without blocking. */
void weft_pmi_server_flush(weft_pmi_server_t *srv, int i);
/* mpiexec's merged puts of the fence arrived: store them, release ranks. */
void weft_pmi_server_fence_done(weft_pmi_server_t *srv, const char *puts, size_t len);
/* Connection i's rank ended: fences no longer wait for it (survivors of a
 * lost rank can still finalize under -disable-auto-cleanup). */
void weft_pmi_server_conn_dead(weft_pmi_server_t *srv, int i);

/* Answer connection conn's name request: rc 0 or WEFT_PMI_ERR_* (pmi.h);
 * text is the port of a lookup, or the reason of a failure. */
void weft_pmi_server_name_done(weft_pmi_server_t *srv, int conn, int op, int rc, const char *text);
/* Answer connection conn's spawn: rc 0 or WEFT_PMI_ERR_*, errcodes a comma
 * list (one per child), msg the reason of a failure. */
void weft_pmi_server_spawn_done(weft_pmi_server_t *srv, int conn, int rc, const char *errcodes,
                                const char *msg);

#endif
