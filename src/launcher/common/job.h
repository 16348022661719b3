/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * What mpiexec tells one weft-proxy: the job, the ranks it runs, how to start
 * them. Travels as NUL-separated "key=value" records (WEFT_CTL_JOB).
 */
#ifndef WEFT_LAUNCHER_JOB_H
#define WEFT_LAUNCHER_JOB_H

#include "binding.h"
#include "buf.h"

typedef struct {
    char                jobid[64];   /* WEFT_JOBID: [a-z0-9], usable in shm names */
    char                kvsname[128];
    char                host[256];   /* label of this proxy's host */
    char                cwd[4096];
    char               *mapping;     /* PMI_process_mapping value, "" if none */
    int                 size;        /* ranks in the job */
    int                 universe;
    int                 node_id;     /* this proxy's node */
    int                 node_count;
    int                 nlocal;
    int                *ranks;       /* job ranks run by this proxy, ascending */
    int                 argc;
    char              **argv;        /* argv[0] is an absolute path (app 0's) */
    /* MPMD (mpiexec A : B, spawn_multiple): app k >= 1 starts at rank
     * app_first[k] and runs app_argv[k]; index 0 is unused (argv above). */
    int                 napps;       /* >= 1 */
    int                *app_first;
    int                *app_argc;
    char             ***app_argv;
    int                 nenv;
    char              **env;         /* NAME=VALUE for every rank */
    weft_binding_conf_t bind;
} weft_job_t;

int  weft_job_pack(const weft_job_t *job, weft_buf_t *out);
/* Parse a packed job. 0, or -1 when malformed. */
int  weft_job_unpack(const char *data, size_t len, weft_job_t *job);
void weft_job_free(weft_job_t *job);
/* The app (0..napps-1, its MPI_APPNUM) that job rank runs. */
int  weft_job_app_of(const weft_job_t *job, int rank);

#endif
