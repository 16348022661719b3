/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The job's key-value space as held by each weft-proxy: a string hash table.
 */
#ifndef WEFT_LAUNCHER_KVS_H
#define WEFT_LAUNCHER_KVS_H

#include <stddef.h>

typedef struct weft_kvs_entry weft_kvs_entry_t;

typedef struct {
    weft_kvs_entry_t **buckets;
    size_t             nbuckets;
    size_t             count;
} weft_kvs_t;

int         weft_kvs_init(weft_kvs_t *kvs);
void        weft_kvs_fini(weft_kvs_t *kvs);
/* Insert or replace. 0, or -1 when out of memory. */
int         weft_kvs_put(weft_kvs_t *kvs, const char *key, const char *val);
const char *weft_kvs_get(const weft_kvs_t *kvs, const char *key);
/* Every entry, in no particular order. */
void        weft_kvs_each(const weft_kvs_t *kvs, void (*fn)(void *arg, const char *key,
                                                             const char *val),
                          void *arg);

#endif
