/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Node-local PMI reads from shared memory (as MVAPICH's shared-memory PMI):
 * after each fence, weft-proxy writes the whole key-value space into one
 * read-only segment "<prefix>.<fence>" (prefix from WEFT_PMI_SHM_NAME in the
 * ranks' environment; WEFT_PMI_SHM=0 ignores it) before it releases its ranks, so a rank's gets are
 * table lookups instead of socket round trips. A key that is not in the
 * segment (job attributes, node attributes) still goes to the proxy.
 *
 * Layout: header, then nslots uint32 offsets (0 = empty; open addressing
 * with linear probing on FNV-1a of the key), then "key\0value\0" records.
 */
#ifndef WEFT_PMI_PMI_SHM_H
#define WEFT_PMI_PMI_SHM_H

#include <stddef.h>
#include <stdint.h>

#define WEFT_PMI_SHM_MAGIC 0x57504b56u /* "WPKV" */

typedef struct {
    uint32_t magic;
    uint32_t fence; /* fences completed when it was written, from 1 */
    uint32_t nslots;
    uint32_t count;
    uint64_t size; /* bytes of the whole segment */
} weft_pmi_shm_hdr_t;

uint64_t weft_pmi_shm_hash(const char *key);

/* Writer (weft-proxy): entries as parallel arrays. Creates name (mode 0600),
 * fills it and unmaps it. 0, or -1 with errno. */
int weft_pmi_shm_write(const char *name, uint32_t fence, size_t count, const char *const *keys,
                       const char *const *vals);

/* Reader (rank): after fence number `fence` completed. Quietly does nothing
 * when WEFT_PMI_SHM_NAME is unset or the segment is missing or stale. */
void weft_pmi_shm_attach(uint32_t fence);
/* The value of key, or NULL (not in the segment, or none attached). */
const char *weft_pmi_shm_lookup(const char *key);
void        weft_pmi_shm_detach(void);

/* Ranks the launcher saw end without finalizing while the job goes on
 * (mpiexec -disable-auto-cleanup), so a survivor learns of a death on
 * another host even when it never exchanged a message with the dead rank
 * (no keepalive runs there). weft-proxy keeps "<prefix>.lost": a header,
 * then job ranks in the order mpiexec reported them; count is stored with
 * release after the rank it covers. */
#define WEFT_PMI_LOST_MAGIC 0x57504c53u /* "WPLS" */

typedef struct {
    uint32_t magic;
    uint32_t capacity; /* ranks the list holds: the job's size */
    uint32_t count;    /* ranks reported so far */
    uint32_t pad;
} weft_pmi_lost_hdr_t;

/* Writer (weft-proxy): create the list for a job of size ranks before the
 * ranks start; add a reported rank (each at most once). 0, or -1 with errno. */
int  weft_pmi_lost_create(const char *prefix, int size);
void weft_pmi_lost_add(int rank);
void weft_pmi_lost_close(void); /* the writer also removes the list */

/* Reader (rank): calls fn for every rank reported since the last call.
 * Maps the list on first use; without one (no weft-proxy, or
 * WEFT_PMI_SHM=0) it does nothing. */
void weft_pmi_lost_poll(void (*fn)(int rank));

#endif
