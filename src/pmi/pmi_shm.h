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

#endif
