/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMI client: the small interface core and transports use to learn who they
 * are and to exchange addresses. Speaks PMI-1 or PMI-2 wire protocol over the
 * inherited socket PMI_FD (Weft's mpirun, MPICH hydra, Slurm srun --mpi=pmi2),
 * or PMIx through libpmix (srun --mpi=pmix, prterun; src/pmi/pmi_pmix.c),
 * chosen from the environment; with no PMI environment at all it runs as a
 * singleton (rank 0 of 1). Not thread-safe: callers serialize.
 */
#ifndef WEFT_PMI_PMI_H
#define WEFT_PMI_PMI_H

#include <stddef.h>

/* Limits that every supported PMI server accepts. */
#define WEFT_PMI_MAX_KEY 64
#define WEFT_PMI_MAX_VAL 1024

typedef struct {
    int rank;        /* in the job */
    int size;        /* of the job */
    int appnum;      /* MPI_APPNUM, 0 if unknown */
    int local_rank;  /* among ranks on this node */
    int local_size;  /* ranks on this node */
    int node_id;     /* 0..node_count-1, nodes numbered by their lowest rank */
    int node_count;
    int *local_ranks;     /* job ranks on this node, ascending, local_size entries */
    int *node_of_rank;    /* node id of every job rank, size entries */
    int is_singleton;     /* no PMI server: rank 0 of 1 */
    int pmi_version;      /* 1 or 2, 3 for PMIx (0 for singleton) */
    char kvsname[256];
} weft_pmi_info_t;

/* Connect and fill *info (node layout included: it runs one put/fence/get
 * round of host names). Returns 0, or -1 with a message printed. */
int weft_pmi_init(weft_pmi_info_t *info);

/* Publish key=value (value: printable, no spaces, newlines or ';': use
 * weft_pmi_encode for binary data). Visible to others after the next fence.
 * Keys are per rank (stored as "<key>-<rank>", read back with
 * weft_pmi_get(rank, key)), at most WEFT_PMI_MAX_KEY - 12 characters; put
 * each key once. Values shorter than WEFT_PMI_MAX_VAL. */
int weft_pmi_put(const char *key, const char *value);

/* Collective over the whole job: commit puts and wait for every rank. */
int weft_pmi_fence(void);

/* Read a key put by any rank before the last fence. value is NUL-terminated. */
int weft_pmi_get(int src_rank, const char *key, char *value, size_t len);

/* Ask the launcher to kill the whole job with exit code, printing msg. Does
 * not return if the server acts; falls back to _exit(exitcode) after at most
 * 2 s. Weft's mpiexec prints "mpiexec: rank N called MPI_Abort with code C: msg". */
void weft_pmi_abort(int exitcode, const char *msg) __attribute__((noreturn));

/* Tell the server this rank finished cleanly, close the connection. Weft's
 * mpiexec treats a rank that exits after weft_pmi_init without this call as
 * failed (exit 1) and ends the job. */
int weft_pmi_finalize(void);

/* Hex-encode len bytes of data into out (2*len+1 bytes). */
void weft_pmi_encode(const void *data, size_t len, char *out);
/* Decode hex text into out (len bytes). Returns 0 or -1 on malformed text. */
int weft_pmi_decode(const char *text, void *out, size_t len);

/* Every rank contributes len bytes; all[] (size*len bytes) gets everyone's,
 * ordered by rank. One put + fence + gets. */
int weft_pmi_allgather(const void *mine, size_t len, void *all);

/* Universe size from the launcher if known, else the job size. */
int weft_pmi_universe_size(void);

/* ---- Dynamic processes (MPI_Comm_spawn, name service) ----
 * Results of the calls below: 0 or one of these (never an MPI class: pmi/
 * sits below core, which maps them). */
enum {
    WEFT_PMI_ERR_GENERIC     = -1, /* transport or protocol failure (message printed) */
    WEFT_PMI_ERR_SPAWN       = -2, /* some child could not be started (no child left running) */
    WEFT_PMI_ERR_NOT_FOUND   = -3, /* lookup/unpublish: no such service name */
    WEFT_PMI_ERR_DUPLICATE   = -4, /* publish: service name already published */
    WEFT_PMI_ERR_UNSUPPORTED = -5, /* this PMI server cannot do it (message printed) */
};

typedef struct {
    const char         *command;     /* program: a path, or a name searched in PATH */
    const char *const  *argv;        /* arguments after the command, NULL-terminated; may be NULL */
    int                 maxprocs;    /* processes to start for this command (> 0) */
    int                 ninfo;       /* MPI info keys: host, hostfile, wdir, path, soft, ... */
    const char *const  *info_keys;
    const char *const  *info_values;
} weft_pmi_spawn_cmd_t;

/* Start the processes of count commands as ONE new job: its own
 * MPI_COMM_WORLD of sum(maxprocs) ranks, in command order (appnum = command
 * index), placed by the info keys or else by the launcher's mapping. Every
 * child can read the npreput key/value pairs with weft_pmi_get_preput().
 * Called by a single process (the spawn root); not collective. Returns when
 * every child has been exec'ed: 0 on success; WEFT_PMI_ERR_SPAWN when any
 * child failed to start, in which case the others are killed and
 * errcodes[k] (one per child, sum(maxprocs) entries) is nonzero for the
 * children that failed; errmsg gets a one-line reason in every failure. */
int weft_pmi_spawn(int count, const weft_pmi_spawn_cmd_t *cmds,
                   int npreput, const char *const *preput_keys,
                   const char *const *preput_values,
                   int *errcodes, char *errmsg, size_t errmsg_len);

/* 1 when this job was started by weft_pmi_spawn (MPI_Comm_get_parent is
 * then not MPI_COMM_NULL), else 0. Valid after weft_pmi_init. */
int weft_pmi_is_spawned(void);

/* In a spawned job: the value of a pair the parent passed to
 * weft_pmi_spawn. 0, or WEFT_PMI_ERR_NOT_FOUND. */
int weft_pmi_get_preput(const char *key, char *value, size_t len);

/* Name service (MPI_Publish_name & co.), kept by the launcher; a second job
 * reaches the first one's through WEFT_NAMESERVER or an address file. */
int weft_pmi_publish_name(const char *service, const char *port);
int weft_pmi_lookup_name(const char *service, char *port, size_t len);
int weft_pmi_unpublish_name(const char *service);

#endif
