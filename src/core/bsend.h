/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Buffered sends (MPI_Bsend & co) and the buffers they use: the process's
 * (MPI_Buffer_attach), a communicator's (MPI_Comm_attach_buffer) and a
 * session's (MPI_Session_attach_buffer). The attach/detach/flush entry
 * points are impls in bsend.c.
 */
#ifndef WEFT_CORE_BSEND_H
#define WEFT_CORE_BSEND_H

#include "core/request.h"

/* Pack (buf, count, dt) into the buffer that applies to comm (the
 * communicator's, else its session's, else the process's) and start
 * sending it. Returns an MPI error code (MPI_ERR_BUFFER when it does not
 * fit). */
int weft_bsend_start(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                     weft_comm_t *comm);

/* Reap completed buffered sends; 1 while any is still in flight. */
int weft_bsend_busy(void);

/* A session is finalized or a communicator destroyed: flush the buffer
 * attached to owner (if any) and forget its record, so that a later object
 * at the same address does not inherit it. */
void weft_bsend_owner_fini(const void *owner);

#endif
