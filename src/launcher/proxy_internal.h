/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * State and functions shared by the files of the node proxy (proxy.c has
 * the overview, event loop and control messages; proxy_ranks.c starts the
 * ranks). One process, one job: the state is one global. Private to
 * src/launcher.
 */
#ifndef WEFT_LAUNCHER_PROXY_INTERNAL_H
#define WEFT_LAUNCHER_PROXY_INTERNAL_H

#include "common/binding.h"
#include "common/buf.h"
#include "common/ctl.h"
#include "common/job.h"
#include "common/pmi_server.h"

#include <stddef.h>
#include <sys/types.h>

/* One local rank: its process, output pipes and exec-status pipe. */
typedef struct {
    int   rank;
    pid_t pid;
    int   alive;
    int   reaped;
    int   fds[2]; /* stdout, stderr read ends; -1 when closed */
    int   exec_fd; /* exec-status pipe until the exec is confirmed, then -1 */
} proxy_rank_t;

/* The proxy's job, control link, PMI server and ranks. */
typedef struct {
    weft_job_t          job;
    weft_ctl_conn_t     ctl;
    weft_pmi_server_t   srv;
    weft_binding_plan_t plan;
    proxy_rank_t       *ranks;
    int                 nlive;
    int                 sigpipe[2];
    int                 stdin_fd;   /* write end of rank 0's stdin, or -1 */
    int                 stdin_eof;
    weft_buf_t          stdin_buf;
    long long           drain_deadline;
    int                 heartbeat_ms; /* remote: silence from mpiexec that ends us; 0 local */
    char                host_addr[64]; /* remote: our address on the link upstream, or "" */
    long long           heard_ms;
    long long           next_ping;
    int                 started;
} proxy_state_t;

/* The proxy's state (defined in proxy.c). */
extern proxy_state_t px;

/* "weft-proxy: error: " and the message on stderr (proxy.c). */
void px_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A message of ours for mpiexec: in a FROM envelope when we are in the
 * tree; ends the proxy when the link is gone (proxy.c). */
void px_send(int type, int a0, int a1, const void *data, size_t len);

/* GO: fork and exec the node's ranks, each with its PMI socketpair, output
 * pipes and exec-status pipe; STARTED for each. Returns 0, or -1 on a
 * failure (proxy_ranks.c). */
int px_start_ranks(void);

/* Settle the exec confirmations that are in: EXECED or NOEXEC for each.
 * Returns how many are still pending (proxy_ranks.c). */
int px_check_exec(void);

#endif
