/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Partitioned point-to-point (MPI-4 chapter 4): what pt2pt_api.c needs to
 * start a partitioned request. The entry points themselves (Psend_init,
 * Precv_init, Pready*, Parrived) are impls in pt2pt_part.c.
 */
#ifndef WEFT_CORE_PT2PT_PART_H
#define WEFT_CORE_PT2PT_PART_H

#include "core/request.h"

/* MPI_Start of a WEFT_REQ_PARTITIONED request: *round_p gets the request
 * that completes when this round of the operation has (the persistent
 * request's inner request). Returns an MPI error code. */
int weft_part_start(weft_request_t *req, weft_request_t **round_p);

#endif
