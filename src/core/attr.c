/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Attribute caching: keyvals, per-object attribute lists, the predefined
 * communicator attributes (see attr.h for the callback order).
 */
#include "core/attr.h"

#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/datatype.h"
#include "core/errors.h"
#include "core/runtime.h"
#include "pmi/pmi.h"

/* Same value as WEFT_TAG_UB in api/api.h (core does not include api). */
#define ATTR_TAG_UB 0x7fffffff

/* Keyval ids start above every predefined keyval (MPI_TAG_UB = 501 ...,
 * MPI_WIN_BASE = 601 ...); creation order is id order. */
#define KEYVAL_BASE 1024

/* MPI_*_NULL_COPY_FN / MPI_*_DUP_FN / MPI_*_NULL_DELETE_FN are the
 * function-pointer values 0x0, 0x1 and 0x0 in the ABI. */
#define FN_NULL ((uintptr_t)0)
#define FN_DUP  ((uintptr_t)1)

typedef struct {
    int              live; /* the user's keyval handle is valid */
    int              refs; /* 1 while live + 1 per attribute using it */
    weft_attr_kind_t kind;
    void           (*copy)(void);
    void           (*del)(void);
    void            *extra;
} keyval_t;

static keyval_t *keyvals;
static int       nkeyvals, cap_keyvals;

static const char *kind_name(weft_attr_kind_t kind)
{
    return kind == WEFT_ATTR_COMM ? "communicator" : kind == WEFT_ATTR_TYPE ? "datatype" : "window";
}

static int keyval_create(weft_attr_kind_t kind, void (*copy)(void), void (*del)(void), void *extra,
                         int *keyval)
{
    if (nkeyvals == cap_keyvals) {
        int       cap = cap_keyvals ? 2 * cap_keyvals : 64;
        keyval_t *n   = realloc(keyvals, sizeof(*n) * (size_t)cap);
        if (n == NULL) {
            return weft_error(MPI_ERR_NO_MEM, "no memory for a keyval");
        }
        keyvals     = n;
        cap_keyvals = cap;
    }
    keyvals[nkeyvals] = (keyval_t){.live = 1, .refs = 1, .kind = kind, .copy = copy, .del = del,
                                   .extra = extra};
    *keyval           = KEYVAL_BASE + nkeyvals++;
    return MPI_SUCCESS;
}

static keyval_t *keyval_get(int keyval)
{
    int i = keyval - KEYVAL_BASE;
    return (i >= 0 && i < nkeyvals) ? &keyvals[i] : NULL;
}

static int is_predefined(int keyval)
{
    return (keyval >= MPI_TAG_UB && keyval <= MPI_UNIVERSE_SIZE) ||
           (keyval >= MPI_WIN_BASE && keyval <= MPI_WIN_MODEL);
}

static struct weft_attr_entry *find_entry(struct weft_attr_entry *list, int keyval)
{
    while (list != NULL && list->keyval != keyval) {
        list = list->next;
    }
    return list;
}

/* A keyval of kind usable on an object whose attributes are list, or NULL
 * with the error recorded in *rc. A freed keyval stays usable by the
 * attributes still carrying it (MPI: the free only takes effect once no
 * attribute uses it) for get and delete; list == NULL: only live keyvals. */
static keyval_t *keyval_check(int keyval, weft_attr_kind_t kind, struct weft_attr_entry *list,
                              int *rc)
{
    keyval_t *kv = keyval_get(keyval);

    if (kv == NULL || (!kv->live && find_entry(list, keyval) == NULL)) {
        *rc = weft_error(MPI_ERR_KEYVAL, "argument keyval: %d is %s", keyval,
                         is_predefined(keyval) ? "a predefined keyval (read-only)"
                         : kv != NULL          ? "a freed keyval"
                                               : "not a keyval");
        return NULL;
    }
    if (kv->kind != kind) {
        *rc = weft_error(MPI_ERR_KEYVAL, "argument keyval: %d is a %s keyval, not a %s keyval",
                         keyval, kind_name(kv->kind), kind_name(kind));
        return NULL;
    }
    return kv;
}

static void keyval_unref(keyval_t *kv)
{
    kv->refs--; /* slots are never reused: ids stay unique */
}

static int keyval_free(int *keyval, weft_attr_kind_t kind)
{
    keyval_t *kv;
    int       rc;

    if (keyval == NULL) {
        return weft_error(MPI_ERR_ARG, "argument keyval: NULL pointer");
    }
    kv = keyval_check(*keyval, kind, NULL, &rc);
    if (kv == NULL) {
        return rc;
    }
    kv->live = 0;
    keyval_unref(kv);
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* ---- callbacks ------------------------------------------------------- */

static int call_copy(const keyval_t *kv, weft_attr_kind_t kind, void *handle, int keyval, void *in,
                     void **out, int *flag)
{
    uintptr_t f = (uintptr_t)kv->copy;

    if (f == FN_NULL) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (f == FN_DUP) {
        *out  = in;
        *flag = 1;
        return MPI_SUCCESS;
    }
    switch (kind) {
    case WEFT_ATTR_COMM:
        return ((MPI_Comm_copy_attr_function *)kv->copy)((MPI_Comm)handle, keyval, kv->extra, in,
                                                         out, flag);
    case WEFT_ATTR_TYPE:
        return ((MPI_Type_copy_attr_function *)kv->copy)((MPI_Datatype)handle, keyval, kv->extra,
                                                         in, out, flag);
    case WEFT_ATTR_WIN:
        return ((MPI_Win_copy_attr_function *)kv->copy)((MPI_Win)handle, keyval, kv->extra, in,
                                                        out, flag);
    }
    return MPI_ERR_INTERN;
}

static int call_delete(const keyval_t *kv, weft_attr_kind_t kind, void *handle, int keyval, void *val)
{
    if ((uintptr_t)kv->del == FN_NULL) {
        return MPI_SUCCESS;
    }
    switch (kind) {
    case WEFT_ATTR_COMM:
        return ((MPI_Comm_delete_attr_function *)kv->del)((MPI_Comm)handle, keyval, val, kv->extra);
    case WEFT_ATTR_TYPE:
        return ((MPI_Type_delete_attr_function *)kv->del)((MPI_Datatype)handle, keyval, val,
                                                          kv->extra);
    case WEFT_ATTR_WIN:
        return ((MPI_Win_delete_attr_function *)kv->del)((MPI_Win)handle, keyval, val, kv->extra);
    }
    return MPI_ERR_INTERN;
}

static int callback_error(int rc, const char *what, int keyval)
{
    return weft_error(rc, "the %s callback of keyval %d returned error %d", what, keyval, rc);
}

/* ---- lists (in order of setting) ------------------------------------ */

/* Order stamp of each attribute: lists are kept sorted by it, so that
 * deletion can run in reverse order of setting (required for
 * MPI_COMM_SELF at MPI_Finalize) and a detached entry can go back in
 * place. */
static unsigned long attr_seq;

static void insert_by_seq(struct weft_attr_entry **list, struct weft_attr_entry *e)
{
    while (*list != NULL && (*list)->seq < e->seq) {
        list = &(*list)->next;
    }
    e->next = *list;
    *list   = e;
}

/* Unlinks e from *list if it is still there (a callback may have removed it). */
static void unlink_entry(struct weft_attr_entry **list, struct weft_attr_entry *e)
{
    while (*list != NULL && *list != e) {
        list = &(*list)->next;
    }
    if (*list == e) {
        *list = e->next;
    }
}

/* Runs e's delete callback with e detached from the list, because the
 * callback may set or delete other attributes of the same object. On
 * failure e goes back in its place; on success it is freed. */
static int delete_entry(weft_attr_kind_t kind, void *handle, struct weft_attr_entry **list,
                        struct weft_attr_entry *e)
{
    keyval_t *kv = keyval_get(e->keyval);
    int       rc;

    unlink_entry(list, e);
    rc = call_delete(kv, kind, handle, e->keyval, e->value);
    if (rc != MPI_SUCCESS) {
        insert_by_seq(list, e);
        return callback_error(rc, "delete", e->keyval);
    }
    keyval_unref(kv);
    free(e);
    return MPI_SUCCESS;
}

int weft_attr_delete_all(weft_attr_kind_t kind, void *handle, struct weft_attr_entry **list_p)
{
    /* Last set first: delete from the tail. */
    while (*list_p != NULL) {
        struct weft_attr_entry *a = *list_p;
        int                     rc;

        while (a->next != NULL) {
            a = a->next;
        }
        rc = delete_entry(kind, handle, list_p, a);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    return MPI_SUCCESS;
}

int weft_attr_copy_all(weft_attr_kind_t kind, void *old_handle, struct weft_attr_entry *old_list,
                       void *new_handle, struct weft_attr_entry **new_list_p)
{
    struct weft_attr_entry **tail = new_list_p;

    for (const struct weft_attr_entry *a = old_list; a != NULL; a = a->next) {
        keyval_t               *kv   = keyval_get(a->keyval);
        void                   *out  = NULL;
        int                     flag = 0, rc;
        struct weft_attr_entry *e;

        rc = call_copy(kv, kind, old_handle, a->keyval, a->value, &out, &flag);
        if (rc != MPI_SUCCESS) {
            weft_attr_delete_all(kind, new_handle, new_list_p);
            return callback_error(rc, "copy", a->keyval);
        }
        if (!flag) {
            continue;
        }
        e = malloc(sizeof(*e));
        if (e == NULL) {
            weft_attr_delete_all(kind, new_handle, new_list_p);
            return weft_error(MPI_ERR_NO_MEM, "no memory for an attribute");
        }
        e->next   = NULL;
        e->keyval = a->keyval;
        e->value  = out;
        e->seq    = ++attr_seq; /* the copies keep the original's order */
        kv->refs++;
        *tail = e;
        tail  = &e->next;
    }
    return MPI_SUCCESS;
}

static int attr_set(weft_attr_kind_t kind, void *handle, struct weft_attr_entry **list, int keyval,
                    void *value)
{
    keyval_t               *kv;
    struct weft_attr_entry *e;
    int                     rc;

    kv = keyval_check(keyval, kind, NULL, &rc); /* a freed keyval makes no new value */
    if (kv == NULL) {
        return rc;
    }
    e = find_entry(*list, keyval);
    if (e != NULL) {
        /* Replacing keeps the attribute's place in the order of setting. */
        void *old = e->value;
        rc        = call_delete(kv, kind, handle, keyval, old);
        if (rc != MPI_SUCCESS) {
            return callback_error(rc, "delete", keyval);
        }
        e = find_entry(*list, keyval); /* the callback may have deleted it */
        if (e != NULL) {
            e->value = value;
            return MPI_SUCCESS;
        }
    }
    e = malloc(sizeof(*e));
    if (e == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an attribute");
    }
    e->keyval = keyval;
    e->value  = value;
    e->seq    = ++attr_seq;
    insert_by_seq(list, e);
    kv->refs++;
    return MPI_SUCCESS;
}

static int attr_get(weft_attr_kind_t kind, struct weft_attr_entry *list, int keyval,
                    void *attribute_val, int *flag)
{
    keyval_t *kv;
    int       rc;

    struct weft_attr_entry *e;

    kv = keyval_check(keyval, kind, list, &rc);
    if (kv == NULL) {
        return rc;
    }
    e     = find_entry(list, keyval);
    *flag = e != NULL;
    if (e != NULL) {
        *(void **)attribute_val = e->value;
    }
    return MPI_SUCCESS;
}

static int attr_delete(weft_attr_kind_t kind, void *handle, struct weft_attr_entry **list, int keyval)
{
    struct weft_attr_entry *e;
    int                     rc;

    if (keyval_check(keyval, kind, *list, &rc) == NULL) {
        return rc;
    }
    e = find_entry(*list, keyval);
    if (e == NULL) {
        return MPI_SUCCESS; /* nothing attached: nothing to do */
    }
    return delete_entry(kind, handle, list, e);
}

/* ---- predefined communicator attributes ------------------------------ */

extern int weft_errclass_last_used(void);

static int comm_predefined(int keyval, void *attribute_val, int *flag)
{
    static int tag_ub, host, io, wtime_global, appnum, lastused, universe;
    int       *p;

    switch (keyval) {
    case MPI_TAG_UB:
        tag_ub = ATTR_TAG_UB;
        p      = &tag_ub;
        break;
    case MPI_HOST:
        host = MPI_PROC_NULL;
        p    = &host;
        break;
    case MPI_IO:
        io = MPI_ANY_SOURCE; /* every process can do I/O */
        p  = &io;
        break;
    case MPI_WTIME_IS_GLOBAL:
        wtime_global = 0;
        p            = &wtime_global;
        break;
    case MPI_APPNUM:
        appnum = weft_runtime.pmi.appnum;
        p      = &appnum;
        break;
    case MPI_LASTUSEDCODE:
        lastused = weft_errclass_last_used();
        p        = &lastused;
        break;
    case MPI_UNIVERSE_SIZE:
        universe = weft_pmi_universe_size();
        p        = &universe;
        break;
    default:
        return 0;
    }
    *(void **)attribute_val = p;
    *flag                   = 1;
    return 1;
}

/* ---- window hooks (the RMA module defines the real ones) ------------- */

__attribute__((weak)) struct weft_attr_entry **weft_win_attr_list(weft_win_t *win)
{
    (void)win;
    return NULL;
}

__attribute__((weak)) int weft_win_predefined_attr(weft_win_t *win, int keyval, void **value)
{
    (void)win;
    (void)keyval;
    (void)value;
    return 0;
}

/* ---- MPI functions ---------------------------------------------------- */

int weft_comm_create_keyval_impl(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                                 MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                                 void *extra_state)
{
    return keyval_create(WEFT_ATTR_COMM, (void (*)(void))comm_copy_attr_fn,
                         (void (*)(void))comm_delete_attr_fn, extra_state, comm_keyval);
}

int weft_comm_free_keyval_impl(int *comm_keyval)
{
    return keyval_free(comm_keyval, WEFT_ATTR_COMM);
}

int weft_comm_set_attr_impl(weft_comm_t *comm, int comm_keyval, void *attribute_val)
{
    return attr_set(WEFT_ATTR_COMM, weft_object_handle(comm), &comm->attrs, comm_keyval,
                    attribute_val);
}

int weft_comm_get_attr_impl(weft_comm_t *comm, int comm_keyval, void *attribute_val, int *flag)
{
    if (is_predefined(comm_keyval)) {
        if (!comm_predefined(comm_keyval, attribute_val, flag)) {
            *flag = 0;
        }
        return MPI_SUCCESS;
    }
    return attr_get(WEFT_ATTR_COMM, comm->attrs, comm_keyval, attribute_val, flag);
}

int weft_comm_delete_attr_impl(weft_comm_t *comm, int comm_keyval)
{
    return attr_delete(WEFT_ATTR_COMM, weft_object_handle(comm), &comm->attrs, comm_keyval);
}

int weft_keyval_create_impl(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                            void *extra_state)
{
    return keyval_create(WEFT_ATTR_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn,
                         extra_state, keyval);
}

int weft_keyval_free_impl(int *keyval)
{
    return keyval_free(keyval, WEFT_ATTR_COMM);
}

int weft_attr_put_impl(weft_comm_t *comm, int keyval, void *attribute_val)
{
    return weft_comm_set_attr_impl(comm, keyval, attribute_val);
}

int weft_attr_get_impl(weft_comm_t *comm, int keyval, void *attribute_val, int *flag)
{
    return weft_comm_get_attr_impl(comm, keyval, attribute_val, flag);
}

int weft_attr_delete_impl(weft_comm_t *comm, int keyval)
{
    return weft_comm_delete_attr_impl(comm, keyval);
}

int weft_type_create_keyval_impl(MPI_Type_copy_attr_function *type_copy_attr_fn,
                                 MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                                 void *extra_state)
{
    return keyval_create(WEFT_ATTR_TYPE, (void (*)(void))type_copy_attr_fn,
                         (void (*)(void))type_delete_attr_fn, extra_state, type_keyval);
}

int weft_type_free_keyval_impl(int *type_keyval)
{
    return keyval_free(type_keyval, WEFT_ATTR_TYPE);
}

int weft_type_set_attr_impl(weft_datatype_t *datatype, int type_keyval, void *attribute_val)
{
    return attr_set(WEFT_ATTR_TYPE, weft_object_handle(datatype), &datatype->attrs, type_keyval,
                    attribute_val);
}

int weft_type_get_attr_impl(weft_datatype_t *datatype, int type_keyval, void *attribute_val, int *flag)
{
    return attr_get(WEFT_ATTR_TYPE, datatype->attrs, type_keyval, attribute_val, flag);
}

int weft_type_delete_attr_impl(weft_datatype_t *datatype, int type_keyval)
{
    return attr_delete(WEFT_ATTR_TYPE, weft_object_handle(datatype), &datatype->attrs, type_keyval);
}

int weft_win_create_keyval_impl(MPI_Win_copy_attr_function *win_copy_attr_fn,
                                MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                                void *extra_state)
{
    return keyval_create(WEFT_ATTR_WIN, (void (*)(void))win_copy_attr_fn,
                         (void (*)(void))win_delete_attr_fn, extra_state, win_keyval);
}

int weft_win_free_keyval_impl(int *win_keyval)
{
    return keyval_free(win_keyval, WEFT_ATTR_WIN);
}

static struct weft_attr_entry **win_list(weft_win_t *win, int *rc)
{
    struct weft_attr_entry **l = weft_win_attr_list(win);
    if (l == NULL) {
        *rc = weft_error(MPI_ERR_WIN, "argument win: windows do not support attributes yet");
    }
    return l;
}

int weft_win_set_attr_impl(weft_win_t *win, int win_keyval, void *attribute_val)
{
    int                      rc;
    struct weft_attr_entry **l = win_list(win, &rc);
    return l ? attr_set(WEFT_ATTR_WIN, weft_object_handle(win), l, win_keyval, attribute_val) : rc;
}

int weft_win_get_attr_impl(weft_win_t *win, int win_keyval, void *attribute_val, int *flag)
{
    int                      rc;
    struct weft_attr_entry **l;
    void                    *v;

    if (is_predefined(win_keyval)) {
        *flag = weft_win_predefined_attr(win, win_keyval, &v);
        if (*flag) {
            *(void **)attribute_val = v;
        }
        return MPI_SUCCESS;
    }
    l = win_list(win, &rc);
    return l ? attr_get(WEFT_ATTR_WIN, *l, win_keyval, attribute_val, flag) : rc;
}

int weft_win_delete_attr_impl(weft_win_t *win, int win_keyval)
{
    int                      rc;
    struct weft_attr_entry **l = win_list(win, &rc);
    return l ? attr_delete(WEFT_ATTR_WIN, weft_object_handle(win), l, win_keyval) : rc;
}
