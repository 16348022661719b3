/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Internal point-to-point: what collectives, communicator construction and
 * RMA use to move bytes between ranks of a communicator. ctx_offset is
 * WEFT_CTX_PT2PT for user traffic, WEFT_CTX_COLL for a library-internal
 * exchange that must never match user messages. Ranks are ranks in comm's
 * peer group. Return MPI error codes.
 */
#ifndef WEFT_CORE_PT2PT_H
#define WEFT_CORE_PT2PT_H

#include "core/request.h"

int weft_isend(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
               weft_comm_t *comm, unsigned ctx_offset, weft_send_mode_t mode,
               weft_request_t **req_p);
int weft_irecv(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
               weft_comm_t *comm, unsigned ctx_offset, weft_request_t **req_p);

/* Blocking forms (isend/irecv + wait). */
int weft_send(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
              weft_comm_t *comm, unsigned ctx_offset);
int weft_recv(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
              weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status);
int weft_sendrecv(const void *sbuf, MPI_Count scount, weft_datatype_t *sdt, int dest, int stag,
                  void *rbuf, MPI_Count rcount, weft_datatype_t *rdt, int source, int rtag,
                  weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status);

/* Blocking fast paths. weft_send_eager_now sends a contiguous eager message
 * straight into its ring without a request; it returns 1 if it did, 0 when
 * the caller must take the general path. weft_recv_now is a blocking receive
 * whose request lives on the stack (source must not be MPI_PROC_NULL). */
int weft_send_eager_now(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                        weft_comm_t *comm, unsigned ctx_offset);
int weft_recv_now(void *buf, MPI_Count count, weft_datatype_t *dt, int source, int tag,
                  weft_comm_t *comm, unsigned ctx_offset, MPI_Status *status);

/* The smallest message that moves between two ranks of this node by one
 * CMA copy (the thresholds in force, docs/tuning.md); SIZE_MAX when CMA
 * is off. Collectives' node phases use the same choice. */
size_t weft_p2p_shm_cma_from(void);
/* Contiguous CMA messages from this size are copied by both sides at once
 * (SIZE_MAX: never, as on a node with more ranks than CPUs). */
size_t weft_p2p_shm_coop_from(void);

/* Byte-level shorthands for internal exchanges (MPI_BYTE). */
int weft_send_bytes(const void *buf, size_t n, int dest, int tag, weft_comm_t *comm);
int weft_recv_bytes(void *buf, size_t n, int source, int tag, weft_comm_t *comm);

#endif
