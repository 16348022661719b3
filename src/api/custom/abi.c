/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI-5 ABI helpers: version/info queries, Fortran interop settings and the
 * handle <-> int converters that replace c2f/f2c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "api_impl.h"
#include "core/info.h"

int weft_abi_get_version_impl(int *abi_major, int *abi_minor)
{
    *abi_major = MPI_ABI_VERSION;
    *abi_minor = MPI_ABI_SUBVERSION;
    return MPI_SUCCESS;
}

static int info_out(weft_info_t *info, MPI_Info *out)
{
    if (info == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot allocate an info object");
    }
    *out = (MPI_Info)info;
    return MPI_SUCCESS;
}

int weft_abi_get_info_impl(MPI_Info *info)
{
    weft_info_t *i = weft_info_new();
    char         v[16];

    if (i != NULL) {
        snprintf(v, sizeof(v), "%zu", sizeof(MPI_Aint));
        weft_info_put(i, "mpi_aint_size", v);
        snprintf(v, sizeof(v), "%zu", sizeof(MPI_Count));
        weft_info_put(i, "mpi_count_size", v);
        snprintf(v, sizeof(v), "%zu", sizeof(MPI_Offset));
        weft_info_put(i, "mpi_offset_size", v);
    }
    return info_out(i, info);
}

/* Fortran settings: Weft has no Fortran bindings of its own; a Fortran
 * layer on top of the ABI (e.g. the Forum's) records what it uses here. */
static struct {
    int           booleans_set;
    int           logical_size;
    unsigned char logical_true[16], logical_false[16];
    weft_info_t  *info;
} fortran;

int weft_abi_get_fortran_info_impl(MPI_Info *info)
{
    weft_info_t *i;

    if (fortran.info != NULL) {
        return info_out(weft_info_clone(fortran.info), info);
    }
    i = weft_info_new();
    if (i != NULL) {
        static const char *const yes[] = {
            "mpi_logical1_supported", "mpi_logical2_supported", "mpi_logical4_supported",
            "mpi_logical8_supported", "mpi_integer1_supported", "mpi_integer2_supported",
            "mpi_integer4_supported", "mpi_integer8_supported", "mpi_integer16_supported",
            "mpi_real2_supported", "mpi_real4_supported", "mpi_real8_supported",
            "mpi_real16_supported", "mpi_complex4_supported", "mpi_complex8_supported",
            "mpi_complex16_supported", "mpi_complex32_supported", "mpi_double_complex_supported",
            "mpi_logical16_supported"};
        weft_info_put(i, "mpi_logical_size", "4");
        weft_info_put(i, "mpi_integer_size", "4");
        weft_info_put(i, "mpi_real_size", "4");
        weft_info_put(i, "mpi_double_precision_size", "8");
        for (size_t k = 0; k < sizeof(yes) / sizeof(yes[0]); k++) {
            weft_info_put(i, yes[k], "true");
        }
    }
    return info_out(i, info);
}

int weft_abi_set_fortran_info_impl(weft_info_t *info)
{
    weft_info_t *copy = weft_info_clone(info);

    if (copy == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "cannot copy the info object");
    }
    weft_info_release(fortran.info);
    fortran.info = copy;
    return MPI_SUCCESS;
}

int weft_abi_get_fortran_booleans_impl(int logical_size, void *logical_true, void *logical_false,
                                       int *is_set)
{
    if (!fortran.booleans_set || logical_size != fortran.logical_size) {
        *is_set = 0;
        return MPI_SUCCESS;
    }
    memcpy(logical_true, fortran.logical_true, (size_t)logical_size);
    memcpy(logical_false, fortran.logical_false, (size_t)logical_size);
    *is_set = 1;
    return MPI_SUCCESS;
}

int weft_abi_set_fortran_booleans_impl(int logical_size, void *logical_true, void *logical_false)
{
    if (logical_size <= 0 || logical_size > (int)sizeof(fortran.logical_true)) {
        return weft_err_arg(MPI_ERR_ARG, "logical_size", "unsupported LOGICAL size %d",
                            logical_size);
    }
    memcpy(fortran.logical_true, logical_true, (size_t)logical_size);
    memcpy(fortran.logical_false, logical_false, (size_t)logical_size);
    fortran.logical_size = logical_size;
    fortran.booleans_set = 1;
    return MPI_SUCCESS;
}

/* toint/fromint: predefined handles convert to their ABI value; user objects
 * get a slot in one table, numbered from WEFT_BUILTIN_HANDLE_LIMIT up, the
 * first time they are asked for. */
static void   **toint_table;
static int      toint_count, toint_cap;

static int handle_toint(void *h)
{
    uintptr_t      v = (uintptr_t)h;
    weft_object_t *obj;

    if (v < WEFT_BUILTIN_HANDLE_LIMIT) {
        return (int)v;
    }
    obj = (weft_object_t *)h;
    if (obj->toint == 0) {
        if (toint_count == toint_cap) {
            int    cap  = toint_cap ? 2 * toint_cap : 64;
            void **grow = realloc(toint_table, sizeof(void *) * (size_t)cap);
            if (grow == NULL) {
                return -1;
            }
            toint_table = grow;
            toint_cap   = cap;
        }
        toint_table[toint_count] = h;
        obj->toint               = (int32_t)(WEFT_BUILTIN_HANDLE_LIMIT + (unsigned)toint_count++);
    }
    return obj->toint;
}

static void *handle_fromint(int i)
{
    if (i >= 0 && (unsigned)i < WEFT_BUILTIN_HANDLE_LIMIT) {
        return (void *)(uintptr_t)i;
    }
    i -= (int)WEFT_BUILTIN_HANDLE_LIMIT;
    return (i >= 0 && i < toint_count) ? toint_table[i] : NULL;
}

#define WEFT_HANDLE_CONVERTERS(_X, _type)                                         \
    WEFT_API int PMPI_##_X##_toint(_type h)                                       \
    {                                                                             \
        weft_cs_enter();                                                          \
        int v = handle_toint((void *)h);                                          \
        weft_cs_exit();                                                           \
        return v;                                                                 \
    }                                                                             \
    WEFT_API_ALIAS(MPI_##_X##_toint)                                              \
    WEFT_API _type PMPI_##_X##_fromint(int i)                                     \
    {                                                                             \
        weft_cs_enter();                                                          \
        _type h = (_type)handle_fromint(i);                                       \
        weft_cs_exit();                                                           \
        return h;                                                                 \
    }                                                                             \
    WEFT_API_ALIAS(MPI_##_X##_fromint)

WEFT_HANDLE_CONVERTERS(Comm, MPI_Comm)
WEFT_HANDLE_CONVERTERS(Errhandler, MPI_Errhandler)
WEFT_HANDLE_CONVERTERS(File, MPI_File)
WEFT_HANDLE_CONVERTERS(Group, MPI_Group)
WEFT_HANDLE_CONVERTERS(Info, MPI_Info)
WEFT_HANDLE_CONVERTERS(Message, MPI_Message)
WEFT_HANDLE_CONVERTERS(Op, MPI_Op)
WEFT_HANDLE_CONVERTERS(Request, MPI_Request)
WEFT_HANDLE_CONVERTERS(Session, MPI_Session)
WEFT_HANDLE_CONVERTERS(Type, MPI_Datatype)
WEFT_HANDLE_CONVERTERS(Win, MPI_Win)
