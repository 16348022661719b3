/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Spawn requests shared by the PMI client (singleton spawn), Weft's PMI server
 * (src/launcher) and the mpiexec that starts a spawned job (the "spawn
 * agent"): one packed form, one way to turn it into the agent's command line,
 * one report protocol.
 *
 * A spawned job is started by its own mpiexec, run as
 *   mpiexec --spawn-fd FD [-usize N] [-hosts H | -f F] [-wdir D] [-path P]
 *           -n N prog args [: -n M prog2 args ...]
 * with the preput pairs in the environment variable WEFT_SPAWN_PREPUT (never
 * on the command line); it writes one line to FD once every child has
 * exec'ed ("ok\n") or when any could not ("fail <errcodes> <message>\n",
 * errcodes a comma list, one per child) after ending the others. Its ranks
 * see PMI_SPAWNED=1 and the pairs in WEFT_PMI_PREPUT.
 */
#ifndef WEFT_PMI_PMI_SPAWN_H
#define WEFT_PMI_PMI_SPAWN_H

#include "pmi.h"

#include <stddef.h>

typedef struct {
    int                   count;
    weft_pmi_spawn_cmd_t *cmds;
    int                   npreput;
    const char          **pp_keys;
    const char          **pp_vals;
    int                   nchildren; /* sum of maxprocs */
    char                 *text;      /* the packed form; every string points into it */
    const char          **ptrs;      /* storage of the pointer arrays */
} weft_pmi_spawn_req_t;

/* Pack a request (NUL-separated tokens) into *out (malloc'd). 0 or -1. */
int weft_pmi_spawn_pack(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                        const char *const *pp_keys, const char *const *pp_vals, char **out,
                        size_t *len_p);
/* Parse a packed request. 0, or -1 when malformed. */
int  weft_pmi_spawn_unpack(const char *data, size_t len, weft_pmi_spawn_req_t *req);
void weft_pmi_spawn_req_free(weft_pmi_spawn_req_t *req);

/* Start the agent mpiexec for req and wait (at most timeout_ms) for its
 * report. default_hosts (may be NULL): -hosts value when no command names
 * host/hostfile. universe: -usize when > 0. extra_args (may be NULL): more
 * mpiexec flags, NULL-terminated. *pid_p gets the agent (the caller reaps it).
 * Returns 0, WEFT_PMI_ERR_SPAWN (errcodes filled, nchildren entries), or
 * WEFT_PMI_ERR_GENERIC; errmsg gets a reason on failure. */
int weft_pmi_spawn_start(const char *mpiexec_path, const weft_pmi_spawn_req_t *req,
                         const char *default_hosts, int universe,
                         const char *const *extra_args, int timeout_ms, int *pid_p,
                         int *errcodes, char *errmsg, size_t errmsg_len);

/* Parse "fail <errcodes> <message>" into errcodes (n entries) and msg. */
void weft_pmi_spawn_parse_fail(const char *line, int n, int *errcodes, char *msg, size_t len);

#endif
