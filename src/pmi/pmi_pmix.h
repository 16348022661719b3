/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMIx backend of the PMI client (pmi.h), for ranks started by a PMIx server
 * (srun --mpi=pmix, prterun). libpmix is loaded with dlopen only when the
 * environment names a PMIx server, so other jobs never load it. Internal to
 * src/pmi: pmi_client.c dispatches here. Keys are the client's "<key>-<rank>"
 * wire keys; all functions return 0, or -1 with a message printed.
 */
#ifndef WEFT_PMI_PMI_PMIX_H
#define WEFT_PMI_PMI_PMIX_H

#include "pmi.h"

#include <stddef.h>

/* 1 when PMIX_NAMESPACE and PMIX_RANK say a PMIx server started us. */
int weft_pmix_offered(void);
int weft_pmix_init(int *rank, int *size, int *appnum, char *nspace, size_t nspace_len);
/* Node id (server numbering) of every rank, size entries. */
int weft_pmix_node_ids(int size, int *node_of_rank);
int weft_pmix_put(const char *wkey, const char *value);
int weft_pmix_fence(void);
/* Returns 0, or -1 (quiet when not found: the caller names the key). */
int weft_pmix_get(int rank, const char *wkey, char *value, size_t len);
/* Universe size if the server knows it, else 0. */
int weft_pmix_universe_size(void);
void weft_pmix_abort(int exitcode, const char *msg);
int weft_pmix_finalize(void);
/* Dynamic processes: 0 or WEFT_PMI_ERR_* (pmi.h); UNSUPPORTED (message
 * printed) when the server or library cannot. env_extra: NULL-terminated
 * NAME=VALUE strings added to every child's environment. */
int weft_pmix_publish(const char *service, const char *port);
int weft_pmix_lookup(const char *service, char *port, size_t len);
int weft_pmix_unpublish(const char *service);
int weft_pmix_spawn(int count, const weft_pmi_spawn_cmd_t *cmds, const char *const *env_extra,
                    char *errmsg, size_t errmsg_len);

#endif
