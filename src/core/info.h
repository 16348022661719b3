/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Info objects: ordered (key, value) string pairs.
 */
#ifndef WEFT_CORE_INFO_H
#define WEFT_CORE_INFO_H

#include "core/object.h"

typedef struct weft_info_entry {
    struct weft_info_entry *next;
    char                   *key;
    char                   *value;
} weft_info_entry_t;

struct weft_info {
    weft_object_t      hdr;
    weft_info_entry_t *head;
    int                nkeys;
};

weft_info_t *weft_info_new(void);                    /* refcount 1, empty */
int          weft_info_put(weft_info_t *info, const char *key, const char *value);
const char  *weft_info_lookup(const weft_info_t *info, const char *key); /* NULL if absent */
weft_info_t *weft_info_clone(const weft_info_t *info);
/* Remove key; returns 1 if it was there, 0 otherwise. */
int          weft_info_remove(weft_info_t *info, const char *key);
void         weft_info_release(weft_info_t *info);

int weft_info_module_init(void); /* builds MPI_INFO_ENV */

#endif
