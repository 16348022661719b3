/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * What other modules (io) need of src/coll beyond the generated impls.
 */
#ifndef WEFT_COLL_COLL_H
#define WEFT_COLL_COLL_H

#include "core/comm.h"

/* Build comm's lazily made collective state now, collectively over comm
 * (node layout; two-level sub-communicators on several nodes; with shm the
 * node's shared-memory region, without it comm never uses the
 * shared-memory algorithms, which saves making the region). Otherwise the
 * first collective to need that state builds it inside its call, waiting
 * for the other ranks, even when the call is non-blocking: a module that
 * starts non-blocking collectives from the progress engine calls this
 * first. */
int weft_coll_comm_prepare(weft_comm_t *comm, int shm);

#endif
