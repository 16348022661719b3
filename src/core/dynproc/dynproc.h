/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Dynamic processes (ports, connect/accept, disconnect; spawn later): what
 * the rest of core sees. The MPI entry points' impls are in api_impl.h.
 */
#ifndef WEFT_CORE_DYNPROC_DYNPROC_H
#define WEFT_CORE_DYNPROC_DYNPROC_H

#include "core/comm.h"

/* The intercommunicator MPI_Comm_get_parent returns (a reference is kept;
 * NULL: none). */
void weft_dynproc_set_parent(weft_comm_t *comm);

#endif
