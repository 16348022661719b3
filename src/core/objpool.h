/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Per-kind recycling of MPI objects. A released object keeps its memory
 * (marked WEFT_MAGIC_FREED) on a free list until the next allocation of the
 * same kind, so a stale handle is rejected with the right error class
 * instead of reading freed memory, and create/free cycles do not call
 * malloc. Callers serialize (the API's critical section).
 */
#ifndef WEFT_CORE_OBJPOOL_H
#define WEFT_CORE_OBJPOOL_H

#include <stdlib.h>
#include <string.h>

#include "core/object.h"

typedef struct {
    void  *head;
    size_t size; /* object size, > sizeof(weft_object_t) + sizeof(void *) */
} weft_objpool_t;

#define WEFT_OBJPOOL_INIT(_type) {NULL, sizeof(_type)}

static inline void **weft_objpool_link(void *obj)
{
    return (void **)((char *)obj + sizeof(weft_object_t));
}

/* Zeroed object (header not initialised), or NULL on no memory. */
static inline void *weft_objpool_alloc(weft_objpool_t *pool)
{
    void *obj = pool->head;

    if (obj == NULL) {
        return calloc(1, pool->size);
    }
    pool->head = *weft_objpool_link(obj);
    memset(obj, 0, pool->size);
    return obj;
}

static inline void weft_objpool_free(weft_objpool_t *pool, void *obj)
{
    ((weft_object_t *)obj)->magic = WEFT_MAGIC_FREED;
    *weft_objpool_link(obj)       = pool->head;
    pool->head                    = obj;
}

#endif
