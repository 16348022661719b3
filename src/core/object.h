/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The common header of every MPI object and the handle <-> object rules.
 *
 * MPI-5 ABI handles are pointers; predefined handles are small integers below
 * WEFT_BUILTIN_HANDLE_LIMIT. A handle converts to its object with one branch:
 * a builtin value indexes a static table, anything else is the object itself,
 * validated by its magic word so a wrong-kind or freed handle is rejected with
 * the right error class instead of being used.
 */
#ifndef WEFT_CORE_OBJECT_H
#define WEFT_CORE_OBJECT_H

#include <stdint.h>
#include <mpi.h>
#include "core/object_types.h"

#define WEFT_BUILTIN_HANDLE_LIMIT 0x1000u

typedef enum {
    WEFT_KIND_COMM = 1,
    WEFT_KIND_GROUP,
    WEFT_KIND_DATATYPE,
    WEFT_KIND_OP,
    WEFT_KIND_INFO,
    WEFT_KIND_ERRHANDLER,
    WEFT_KIND_REQUEST,
    WEFT_KIND_WIN,
    WEFT_KIND_SESSION,
    WEFT_KIND_MESSAGE,
    WEFT_KIND_FILE
} weft_kind_t;

#define WEFT_MAGIC(_kind) (0x57465400u | (uint32_t)(_kind))
#define WEFT_MAGIC_FREED  0xdeadf7eeu

typedef struct {
    uint32_t magic;    /* WEFT_MAGIC(kind) while alive */
    int32_t  refcount; /* users: the handle, pending operations, derived objects */
    int32_t  toint;    /* index given by MPI_<X>_toint, 0 until asked */
    uintptr_t handle;  /* builtin handle value, or 0 for user objects */
} weft_object_t;

static inline void weft_object_init(weft_object_t *obj, weft_kind_t kind, uintptr_t builtin)
{
    obj->magic    = WEFT_MAGIC(kind);
    obj->refcount = 1;
    obj->toint    = 0;
    obj->handle   = builtin;
}

static inline int weft_object_valid(const void *obj, weft_kind_t kind)
{
    /* Small values are predefined handles (of any kind), never objects. */
    return (uintptr_t)obj >= WEFT_BUILTIN_HANDLE_LIMIT &&
           ((const weft_object_t *)obj)->magic == WEFT_MAGIC(kind);
}

/* Handle value of an object: builtin constant or the pointer itself. */
static inline void *weft_object_handle(const void *obj)
{
    const weft_object_t *o = (const weft_object_t *)obj;
    if (o == NULL) {
        return NULL;
    }
    return o->handle ? (void *)o->handle : (void *)o;
}

/* One builtin table per kind, indexed by (handle - base); NULL entries are
 * unused values (or the kind's NULL handle). Filled by each module's init. */
#define WEFT_BUILTIN_TABLE(_kind, _type, _base, _count)                                  \
    extern _type *weft_builtin_##_kind[_count];                                          \
    static inline _type *weft_##_kind##_from_handle(const void *h)                       \
    {                                                                                     \
        uintptr_t v = (uintptr_t)h;                                                       \
        if (v < WEFT_BUILTIN_HANDLE_LIMIT) {                                              \
            return (v >= (_base) && v < (_base) + (_count)) ? weft_builtin_##_kind[v - (_base)] \
                                                            : NULL;                      \
        }                                                                                 \
        return weft_object_valid(h, WEFT_KIND_##_kind##_KIND) ? (_type *)h : NULL;       \
    }

#define WEFT_KIND_comm_KIND       WEFT_KIND_COMM
#define WEFT_KIND_group_KIND      WEFT_KIND_GROUP
#define WEFT_KIND_datatype_KIND   WEFT_KIND_DATATYPE
#define WEFT_KIND_op_KIND         WEFT_KIND_OP
#define WEFT_KIND_info_KIND       WEFT_KIND_INFO
#define WEFT_KIND_errhandler_KIND WEFT_KIND_ERRHANDLER
#define WEFT_KIND_win_KIND        WEFT_KIND_WIN
#define WEFT_KIND_session_KIND    WEFT_KIND_SESSION
#define WEFT_KIND_request_KIND    WEFT_KIND_REQUEST
#define WEFT_KIND_message_KIND    WEFT_KIND_MESSAGE
#define WEFT_KIND_file_KIND       WEFT_KIND_FILE

WEFT_BUILTIN_TABLE(comm, weft_comm_t, 0x100, 3)
WEFT_BUILTIN_TABLE(group, weft_group_t, 0x108, 2)
WEFT_BUILTIN_TABLE(win, weft_win_t, 0x110, 1)
WEFT_BUILTIN_TABLE(file, weft_file_t, 0x118, 1)
WEFT_BUILTIN_TABLE(session, weft_session_t, 0x120, 1)
WEFT_BUILTIN_TABLE(message, weft_message_t, 0x128, 2)
WEFT_BUILTIN_TABLE(info, weft_info_t, 0x130, 2)
WEFT_BUILTIN_TABLE(errhandler, weft_errhandler_t, 0x140, 4)
WEFT_BUILTIN_TABLE(request, weft_request_t, 0x180, 1)
WEFT_BUILTIN_TABLE(op, weft_op_t, 0x20, 0x20)
WEFT_BUILTIN_TABLE(datatype, weft_datatype_t, 0x200, 0x100)

/* Null handles, for "null allowed" argument kinds. */
#define WEFT_NULL_HANDLE_COMM       MPI_COMM_NULL
#define WEFT_NULL_HANDLE_GROUP      MPI_GROUP_NULL
#define WEFT_NULL_HANDLE_WIN        MPI_WIN_NULL
#define WEFT_NULL_HANDLE_FILE       MPI_FILE_NULL
#define WEFT_NULL_HANDLE_SESSION    MPI_SESSION_NULL
#define WEFT_NULL_HANDLE_INFO       MPI_INFO_NULL
#define WEFT_NULL_HANDLE_ERRHANDLER MPI_ERRHANDLER_NULL
#define WEFT_NULL_HANDLE_OP         MPI_OP_NULL
#define WEFT_NULL_HANDLE_DATATYPE   MPI_DATATYPE_NULL

#endif
