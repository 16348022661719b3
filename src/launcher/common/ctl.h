/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The control channel between mpiexec and each weft-proxy: framed messages
 * (16-byte header in network byte order + payload) over a stream socket,
 * with non-blocking queued writes so neither side can deadlock the other.
 */
#ifndef WEFT_LAUNCHER_CTL_H
#define WEFT_LAUNCHER_CTL_H

#include "buf.h"

#include <stdint.h>

typedef enum {
    WEFT_CTL_JOB = 1,   /* m->p  payload: job spec (job.h)                        */
    WEFT_CTL_BINDING,   /* p->m  a0 rank; payload: binding text for SHOW          */
    WEFT_CTL_READY,     /* p->m  a0 0 ok / -1 failed; payload: error text          */
    WEFT_CTL_GO,        /* m->p  start the ranks                                   */
    WEFT_CTL_STARTED,   /* p->m  a0 rank, a1 pid                                   */
    WEFT_CTL_OUTPUT,    /* p->m  a0 rank, a1 1|2 (stdout|stderr); empty = EOF     */
    WEFT_CTL_STDIN,     /* m->p  payload for rank 0's stdin; empty = EOF          */
    WEFT_CTL_STDIN_ACK, /* p->m  a0 bytes written to rank 0                        */
    WEFT_CTL_FENCE_IN,  /* p->m  payload: this node's puts "key\0value\0..."      */
    WEFT_CTL_FENCE_OUT, /* m->p  payload: every node's puts of this fence          */
    WEFT_CTL_ABORT,     /* p->m  a0 rank, a1 exit code; payload: message           */
    WEFT_CTL_EXIT,      /* p->m  a0 rank, a1 wait status; payload "pid init fin"   */
    WEFT_CTL_SIGNAL,    /* m->p  a0 signal for every rank's process group          */
    WEFT_CTL_DONE,      /* p->m  every local rank is reaped; proxy exits           */
    WEFT_CTL_PING,      /* both  remote links only: "still here" (heartbeat)       */
    /* Proxy tree (remote proxies; positions are among remote proxies, tree.h) */
    WEFT_CTL_HELLO,     /* p->m  first message: a0 listen port (0: no children); payload addr */
    WEFT_CTL_FROM,      /* p->m  a0 origin position; payload: one encoded message  */
    WEFT_CTL_TO,        /* m->p  a0 destination position; payload: encoded message */
    WEFT_CTL_LOST,      /* p->m  (inside FROM) the link to that proxy broke        */
    /* Dynamic processes (a0 is the proxy's PMI connection index) */
    WEFT_CTL_NAME,      /* p->m  a1 op 'P'|'L'|'U'; payload "service\0port\0"        */
    WEFT_CTL_NAME_R,    /* m->p  a1 rc (0 or WEFT_PMI_ERR_*); payload "op\0port or reason\0" */
    WEFT_CTL_SPAWN,     /* p->m  payload: packed spawn request (pmi/pmi_spawn.h)    */
    WEFT_CTL_SPAWN_R,   /* m->p  a1 rc; payload "errcodes\0message\0"                */
    WEFT_CTL_NOEXEC,    /* p->m  a0 rank, a1 errno: the rank's exec failed          */
    WEFT_CTL_EXECED,    /* p->m  a0 rank: the rank's exec succeeded (after STARTED) */
    WEFT_CTL_RANK_LOST  /* m->p  a0 rank ended unfinalized, the job goes on (pmi_shm.h) */
} weft_ctl_type_t;

typedef struct {
    uint32_t type;
    uint32_t len;
    int32_t  a0;
    int32_t  a1;
} weft_ctl_hdr_t;

typedef struct {
    int        fd;
    int        eof;
    weft_buf_t in;
    weft_buf_t out;
} weft_ctl_conn_t;

void weft_ctl_conn_init(weft_ctl_conn_t *conn, int fd);
void weft_ctl_conn_fini(weft_ctl_conn_t *conn);

/* Queue one message and write what the socket takes now. 0, or -1 on error. */
int weft_ctl_send(weft_ctl_conn_t *conn, int type, int a0, int a1, const void *data, size_t len);
/* Write queued bytes without blocking. 0, or -1 when the peer is gone. */
int weft_ctl_flush(weft_ctl_conn_t *conn);
/* Write queued bytes, waiting up to timeout_ms. */
void weft_ctl_flush_wait(weft_ctl_conn_t *conn, int timeout_ms);
/* Encode one message (header + payload) into out, for FROM/TO envelopes. */
int weft_ctl_encode(weft_buf_t *out, int type, int a0, int a1, const void *data, size_t len);
/* Decode an envelope's payload: 0 and *hdr / *payload_p (points into data),
 * or -1 when malformed. */
int weft_ctl_decode(const char *data, size_t len, weft_ctl_hdr_t *hdr, const char **payload_p);

/* Read what is available. 1 data or nothing yet, 0 EOF, -1 error. */
int weft_ctl_read(weft_ctl_conn_t *conn);
/* Take the next complete message: 1 and *payload_p (malloc'd, NUL-terminated,
 * caller frees), or 0 when none is complete. */
int weft_ctl_next(weft_ctl_conn_t *conn, weft_ctl_hdr_t *hdr, char **payload_p);

#endif
