/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Groups: an ordered set of processes, stored as world ranks.
 */
#ifndef WEFT_CORE_GROUP_H
#define WEFT_CORE_GROUP_H

#include "core/object.h"

struct weft_group {
    weft_object_t hdr;
    int           size;
    int           rank;        /* this process's rank in the group, or MPI_UNDEFINED */
    int          *world_ranks; /* size entries */
    const void   *session;     /* from MPI_Group_from_session_pset, else NULL */
};

/* New group of n world ranks (copied); refcount 1. NULL on no memory. */
weft_group_t *weft_group_create(int n, const int *world_ranks);
void          weft_group_retain(weft_group_t *group);
void          weft_group_release(weft_group_t *group);

/* Rank in group of world rank w, or MPI_UNDEFINED. */
int weft_group_rank_of_world(const weft_group_t *group, int w);

/* Handle for an output group: MPI_GROUP_EMPTY for an empty group (the
 * object is released), the object itself otherwise. */
MPI_Group weft_group_handle_out(weft_group_t *group);

/* MPI_IDENT, MPI_SIMILAR or MPI_UNEQUAL. */
int weft_group_compare_raw(const weft_group_t *a, const weft_group_t *b);

int  weft_group_module_init(void);
void weft_group_module_fini(void);

#endif
