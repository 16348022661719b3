/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "core/group.h"

#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/errors.h"
#include "core/objpool.h"
#include "core/runtime.h"

weft_group_t *weft_builtin_group[2];
static weft_group_t group_empty;
static weft_objpool_t group_pool = WEFT_OBJPOOL_INIT(weft_group_t);

weft_group_t *weft_group_create(int n, const int *world_ranks)
{
    weft_group_t *group = weft_objpool_alloc(&group_pool);

    if (group == NULL) {
        return NULL;
    }
    group->world_ranks = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (group->world_ranks == NULL) {
        weft_objpool_free(&group_pool, group);
        return NULL;
    }
    if (n > 0) {
        memcpy(group->world_ranks, world_ranks, sizeof(int) * (size_t)n);
    }
    weft_object_init(&group->hdr, WEFT_KIND_GROUP, 0);
    group->size = n;
    group->rank = weft_group_rank_of_world(group, weft_runtime.pmi.rank);
    return group;
}

void weft_group_retain(weft_group_t *group)
{
    group->hdr.refcount++;
}

void weft_group_release(weft_group_t *group)
{
    if (group == NULL || group->hdr.handle != 0) {
        return; /* builtin groups live forever */
    }
    if (--group->hdr.refcount == 0) {
        free(group->world_ranks);
        weft_objpool_free(&group_pool, group);
    }
}

int weft_group_rank_of_world(const weft_group_t *group, int w)
{
    for (int i = 0; i < group->size; i++) {
        if (group->world_ranks[i] == w) {
            return i;
        }
    }
    return MPI_UNDEFINED;
}

int weft_group_module_init(void)
{
    weft_object_init(&group_empty.hdr, WEFT_KIND_GROUP, (uintptr_t)MPI_GROUP_EMPTY);
    group_empty.size        = 0;
    group_empty.rank        = MPI_UNDEFINED;
    group_empty.world_ranks = NULL;
    weft_builtin_group[0]   = NULL;
    weft_builtin_group[1]   = &group_empty;
    return MPI_SUCCESS;
}

void weft_group_module_fini(void)
{
}

/* ---- MPI group functions ------------------------------------------------ */


MPI_Group weft_group_handle_out(weft_group_t *group)
{
    if (group->size == 0) {
        weft_group_release(group);
        return MPI_GROUP_EMPTY;
    }
    return (MPI_Group)weft_object_handle(group);
}

/* A group built from groups of an MPI session belongs to that session (its
 * communicators use the session's buffered-send buffer). */
static int group_out(weft_group_t *group, const void *session, MPI_Group *newgroup)
{
    if (group == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a new group");
    }
    group->session = session;
    *newgroup = weft_group_handle_out(group);
    return MPI_SUCCESS;
}

int weft_group_compare_raw(const weft_group_t *a, const weft_group_t *b)
{
    int same_order = 1;

    if (a == b) {
        return MPI_IDENT;
    }
    if (a->size != b->size) {
        return MPI_UNEQUAL;
    }
    for (int i = 0; i < a->size; i++) {
        if (a->world_ranks[i] != b->world_ranks[i]) {
            same_order = 0;
            break;
        }
    }
    if (same_order) {
        return MPI_IDENT;
    }
    for (int i = 0; i < a->size; i++) {
        if (weft_group_rank_of_world(b, a->world_ranks[i]) == MPI_UNDEFINED) {
            return MPI_UNEQUAL;
        }
    }
    return MPI_SIMILAR;
}

int weft_group_size_impl(weft_group_t *group, int *size)
{
    *size = group->size;
    return MPI_SUCCESS;
}

int weft_group_rank_impl(weft_group_t *group, int *rank)
{
    *rank = group->rank;
    return MPI_SUCCESS;
}

/* Check n distinct ranks of group; marks[] (group->size) is scratch. */
static int check_ranks(const weft_group_t *group, int n, const int ranks[], char *marks)
{
    if (n > 0 && ranks == NULL) {
        return weft_error(MPI_ERR_ARG, "argument ranks: NULL array with n=%d", n);
    }
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= group->size) {
            return weft_error(MPI_ERR_RANK, "argument ranks: ranks[%d]=%d is out of range (group has %d)",
                              i, ranks[i], group->size);
        }
        if (marks[ranks[i]]) {
            return weft_error(MPI_ERR_RANK, "argument ranks: rank %d appears twice", ranks[i]);
        }
        marks[ranks[i]] = 1;
    }
    return MPI_SUCCESS;
}

static int incl_excl(weft_group_t *group, int n, const int ranks[], int excl, MPI_Group *newgroup)
{
    char         *marks = calloc((size_t)group->size + 1, 1);
    int          *w     = malloc(sizeof(int) * ((size_t)group->size + 1));
    int           k     = 0, rc;
    weft_group_t *g;

    if (marks == NULL || w == NULL) {
        free(marks);
        free(w);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a new group");
    }
    if (n > group->size) {
        free(marks);
        free(w);
        return weft_error(MPI_ERR_ARG, "argument n: %d is larger than the group size %d", n,
                          group->size);
    }
    rc = check_ranks(group, n, ranks, marks);
    if (rc == MPI_SUCCESS) {
        if (excl) {
            for (int i = 0; i < group->size; i++) {
                if (!marks[i]) {
                    w[k++] = group->world_ranks[i];
                }
            }
        } else {
            for (int i = 0; i < n; i++) {
                w[k++] = group->world_ranks[ranks[i]];
            }
        }
        g  = weft_group_create(k, w);
        rc = group_out(g, group->session, newgroup);
    }
    free(marks);
    free(w);
    return rc;
}

int weft_group_incl_impl(weft_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, 0, newgroup);
}

int weft_group_excl_impl(weft_group_t *group, int n, const int ranks[], MPI_Group *newgroup)
{
    return incl_excl(group, n, ranks, 1, newgroup);
}

/* Expand ranges into a rank list (validated: in range, no duplicates). */
static int expand_ranges(const weft_group_t *group, int n, int ranges[][3], int **list_p, int *count_p)
{
    int   *list  = malloc(sizeof(int) * ((size_t)group->size + 1));
    char  *marks = calloc((size_t)group->size + 1, 1);
    int    count = 0;

    if (list == NULL || marks == NULL) {
        free(list);
        free(marks);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a new group");
    }
    if (n > 0 && ranges == NULL) {
        free(list);
        free(marks);
        return weft_error(MPI_ERR_ARG, "argument ranges: NULL array with n=%d", n);
    }
    for (int i = 0; i < n; i++) {
        int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
        if (stride == 0) {
            free(list);
            free(marks);
            return weft_error(MPI_ERR_ARG, "argument ranges: ranges[%d] has stride 0", i);
        }
        if (first < 0 || first >= group->size || last < 0 || last >= group->size) {
            free(list);
            free(marks);
            return weft_error(MPI_ERR_RANK,
                              "argument ranges: ranges[%d] = {%d, %d, %d} leaves the group (size %d)",
                              i, first, last, stride, group->size);
        }
        if ((stride > 0 && first > last) || (stride < 0 && first < last)) {
            continue; /* empty range */
        }
        for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
            if (marks[r]) {
                free(list);
                free(marks);
                return weft_error(MPI_ERR_RANK, "argument ranges: rank %ld appears twice", r);
            }
            marks[r]      = 1;
            list[count++] = (int)r;
        }
    }
    free(marks);
    *list_p  = list;
    *count_p = count;
    return MPI_SUCCESS;
}

int weft_group_range_incl_impl(weft_group_t *group, int n, int ranges[][3], MPI_Group *newgroup)
{
    int *list, count, rc = expand_ranges(group, n, ranges, &list, &count);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = incl_excl(group, count, list, 0, newgroup);
    free(list);
    return rc;
}

int weft_group_range_excl_impl(weft_group_t *group, int n, int ranges[][3], MPI_Group *newgroup)
{
    int *list, count, rc = expand_ranges(group, n, ranges, &list, &count);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = incl_excl(group, count, list, 1, newgroup);
    free(list);
    return rc;
}

/* op 0: union, 1: intersection, 2: difference (order of group1, then group2). */
static int set_op(weft_group_t *a, weft_group_t *b, int op, MPI_Group *newgroup)
{
    int *w = malloc(sizeof(int) * ((size_t)a->size + (size_t)b->size + 1));
    int  k = 0, rc;

    if (w == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a new group");
    }
    for (int i = 0; i < a->size; i++) {
        int in_b = weft_group_rank_of_world(b, a->world_ranks[i]) != MPI_UNDEFINED;
        if (op == 0 || (op == 1 && in_b) || (op == 2 && !in_b)) {
            w[k++] = a->world_ranks[i];
        }
    }
    if (op == 0) {
        for (int i = 0; i < b->size; i++) {
            if (weft_group_rank_of_world(a, b->world_ranks[i]) == MPI_UNDEFINED) {
                w[k++] = b->world_ranks[i];
            }
        }
    }
    rc = group_out(weft_group_create(k, w), a->session ? a->session : b->session, newgroup);
    free(w);
    return rc;
}

int weft_group_union_impl(weft_group_t *group1, weft_group_t *group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, 0, newgroup);
}

int weft_group_intersection_impl(weft_group_t *group1, weft_group_t *group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, 1, newgroup);
}

int weft_group_difference_impl(weft_group_t *group1, weft_group_t *group2, MPI_Group *newgroup)
{
    return set_op(group1, group2, 2, newgroup);
}

int weft_group_translate_ranks_impl(weft_group_t *group1, int n, const int ranks1[],
                                    weft_group_t *group2, int ranks2[])
{
    if (n > 0 && (ranks1 == NULL || ranks2 == NULL)) {
        return weft_error(MPI_ERR_ARG, "argument %s: NULL array with n=%d",
                          ranks1 == NULL ? "ranks1" : "ranks2", n);
    }
    for (int i = 0; i < n; i++) {
        if (ranks1[i] != MPI_PROC_NULL && (ranks1[i] < 0 || ranks1[i] >= group1->size)) {
            return weft_error(MPI_ERR_RANK, "argument ranks1: ranks1[%d]=%d is out of range (group has %d)",
                              i, ranks1[i], group1->size);
        }
    }
    for (int i = 0; i < n; i++) {
        ranks2[i] = ranks1[i] == MPI_PROC_NULL
                        ? MPI_PROC_NULL
                        : weft_group_rank_of_world(group2, group1->world_ranks[ranks1[i]]);
    }
    return MPI_SUCCESS;
}

int weft_group_compare_impl(weft_group_t *group1, weft_group_t *group2, int *result)
{
    *result = weft_group_compare_raw(group1, group2);
    return MPI_SUCCESS;
}

int weft_group_free_impl(MPI_Group *group)
{
    weft_group_t *g;

    if (group == NULL) {
        return weft_error(MPI_ERR_ARG, "argument group: NULL pointer");
    }
    g = weft_group_from_handle(*group);
    if (g == NULL) {
        return weft_error(MPI_ERR_GROUP, "argument group: invalid group%s",
                          *group == MPI_GROUP_NULL ? " (null handle)" : "");
    }
    weft_group_release(g);
    *group = MPI_GROUP_NULL;
    return MPI_SUCCESS;
}
