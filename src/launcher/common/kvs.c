/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "kvs.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct weft_kvs_entry {
    weft_kvs_entry_t *next;
    char             *key;
    char             *val;
};

static size_t kvs_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++) {
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    }
    return (size_t)h;
}

int weft_kvs_init(weft_kvs_t *kvs)
{
    kvs->nbuckets = 256;
    kvs->count    = 0;
    kvs->buckets  = calloc(kvs->nbuckets, sizeof(*kvs->buckets));
    return kvs->buckets ? 0 : -1;
}

void weft_kvs_fini(weft_kvs_t *kvs)
{
    for (size_t i = 0; i < kvs->nbuckets; i++) {
        weft_kvs_entry_t *e = kvs->buckets[i];
        while (e != NULL) {
            weft_kvs_entry_t *next = e->next;
            free(e->key);
            free(e->val);
            free(e);
            e = next;
        }
    }
    free(kvs->buckets);
    kvs->buckets = NULL;
}

static void kvs_grow(weft_kvs_t *kvs)
{
    size_t             n   = kvs->nbuckets * 4;
    weft_kvs_entry_t **nb  = calloc(n, sizeof(*nb));

    if (nb == NULL) {
        return; /* keep the old table: slower, still correct */
    }
    for (size_t i = 0; i < kvs->nbuckets; i++) {
        weft_kvs_entry_t *e = kvs->buckets[i];
        while (e != NULL) {
            weft_kvs_entry_t *next = e->next;
            size_t            b    = kvs_hash(e->key) % n;
            e->next                = nb[b];
            nb[b]                  = e;
            e                      = next;
        }
    }
    free(kvs->buckets);
    kvs->buckets  = nb;
    kvs->nbuckets = n;
}

int weft_kvs_put(weft_kvs_t *kvs, const char *key, const char *val)
{
    size_t            b = kvs_hash(key) % kvs->nbuckets;
    weft_kvs_entry_t *e;
    char             *v;

    for (e = kvs->buckets[b]; e != NULL; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            v = strdup(val);
            if (v == NULL) {
                return -1;
            }
            free(e->val);
            e->val = v;
            return 0;
        }
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = strdup(key)) == NULL || (e->val = strdup(val)) == NULL) {
        if (e) {
            free(e->key);
        }
        free(e);
        return -1;
    }
    e->next          = kvs->buckets[b];
    kvs->buckets[b]  = e;
    if (++kvs->count > kvs->nbuckets * 2) {
        kvs_grow(kvs);
    }
    return 0;
}

const char *weft_kvs_get(const weft_kvs_t *kvs, const char *key)
{
    for (weft_kvs_entry_t *e = kvs->buckets[kvs_hash(key) % kvs->nbuckets]; e; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            return e->val;
        }
    }
    return NULL;
}

void weft_kvs_each(const weft_kvs_t *kvs, void (*fn)(void *arg, const char *key, const char *val),
                   void *arg)
{
    for (size_t i = 0; i < kvs->nbuckets; i++) {
        for (const weft_kvs_entry_t *e = kvs->buckets[i]; e != NULL; e = e->next) {
            fn(arg, e->key, e->val);
        }
    }
}
