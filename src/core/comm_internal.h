/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Private to src/core: the pieces comm.c, intercomm.c, topo.c and session.c
 * share to build communicators.
 */
#ifndef WEFT_CORE_COMM_INTERNAL_H
#define WEFT_CORE_COMM_INTERNAL_H

#include <stdint.h>
#include <mpi.h>

#include "core/comm.h"

/* A new communicator derived from parent (parent may be NULL): owns and
 * reserves context id ctx, inherits parent's error handler. For an
 * intercomm pass remote and local_ctx (context of its local_comm). */
weft_comm_t *weft_comm_derive(weft_comm_t *parent, weft_group_t *group, weft_group_t *remote,
                              uint32_t ctx, uint32_t local_ctx);

/* Agree on n context ids over every process of parent (both groups of an
 * intercommunicator). Collective over parent. */
int weft_comm_agree_ids(weft_comm_t *parent, int n, uint32_t *ids, int tag);

/* Intercommunicator flavour of weft_comm_agree_ids. */
int weft_intercomm_agree(weft_comm_t *inter, int n, uint32_t *ids, int tag);

/* MPI_Comm_split on an intercommunicator: the result pairs the processes
 * of one color in the local group with those of that color in the remote
 * group (*new_p NULL for MPI_UNDEFINED or no remote partner). */
int weft_intercomm_split(weft_comm_t *inter, int color, int key, weft_comm_t **new_p);

/* Copy into nc what a duplicate of comm inherits: info (info if use_info,
 * else comm's), topology, attributes (copy callbacks). */
int weft_comm_dup_into(weft_comm_t *comm, weft_comm_t *nc, weft_info_t *info, int use_info);

/* MPI_Comm_idup(_with_info) on an intracommunicator (comm_idup.c). */
int weft_comm_idup_start(weft_comm_t *comm, weft_info_t *info, int use_info, MPI_Comm *newcomm,
                         MPI_Request *request);


/* The handle to return for a new communicator (MPI_COMM_NULL for NULL). */
static inline MPI_Comm weft_comm_handle_out(weft_comm_t *comm)
{
    return comm ? (MPI_Comm)weft_object_handle(comm) : MPI_COMM_NULL;
}

/* Record an error for argument arg ("argument arg: reason"). */
#define weft_comm_arg_error(_cls, _arg, _fmt, ...) \
    weft_error((_cls), "argument %s: " _fmt, (_arg), ##__VA_ARGS__)

#endif
