/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Attribute caching on communicators, datatypes and windows (keyvals with
 * copy/delete callbacks).
 *
 * Order: attributes are kept in the order they were first set on the object
 * (replacing a value keeps the place). On a duplication (MPI_Comm_dup,
 * MPI_Type_dup, ...) copy callbacks run in that order and the copies keep
 * it. When an object is freed, delete callbacks run in reverse order of
 * setting, like destructors; MPI requires this for MPI_COMM_SELF at
 * MPI_Finalize. Delete callbacks may set or delete other attributes of the
 * same object. If a delete callback fails, the free fails with its error and
 * the attributes not yet deleted (including the failing one) stay attached.
 *
 * A keyval freed while attributes still use it stays valid for those
 * attributes (their callbacks still run, get and delete on an object that
 * carries it work) but not for setting values.
 */
#ifndef WEFT_CORE_ATTR_H
#define WEFT_CORE_ATTR_H

#include <mpi.h>
#include "core/object_types.h"

typedef enum {
    WEFT_ATTR_COMM = 1,
    WEFT_ATTR_TYPE,
    WEFT_ATTR_WIN
} weft_attr_kind_t;

struct weft_attr_entry {
    struct weft_attr_entry *next;
    int                     keyval;
    void                   *value;
    unsigned long           seq; /* order of setting (see above) */
};

/* Copy old_list's attributes for a duplicate of object old_handle into
 * *new_list_p (must be empty), calling copy callbacks. On error, attributes
 * already copied are deleted again (delete callbacks on new_handle) and the
 * callback's error code is returned. */
int weft_attr_copy_all(weft_attr_kind_t kind, void *old_handle, struct weft_attr_entry *old_list,
                       void *new_handle, struct weft_attr_entry **new_list_p);

/* Delete every attribute of an object being freed (handle: its MPI handle),
 * calling delete callbacks. Returns MPI_SUCCESS or the first callback error. */
int weft_attr_delete_all(weft_attr_kind_t kind, void *handle, struct weft_attr_entry **list_p);

/* Hooks for the window module (weak defaults: no windows). The list head of
 * a window's attributes, and its predefined attributes (MPI_WIN_BASE, ...):
 * returns 1 and sets *value when keyval is predefined for windows. */
struct weft_attr_entry **weft_win_attr_list(weft_win_t *win);
int weft_win_predefined_attr(weft_win_t *win, int keyval, void **value);

#endif
