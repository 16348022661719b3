/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * What pmi_client.c lends the other files of the PMI client (pmi_dynproc.c):
 * the connection's wire and raw request/reply calls. Not for other layers.
 */
#ifndef WEFT_PMI_PMI_CLIENT_PRIVATE_H
#define WEFT_PMI_PMI_CLIENT_PRIVATE_H

#include "pmi_wire.h"

/* 1 or 2 (PMI wire of the server connection), 3 PMIx, 0 singleton / none. */
int         weft_pmi_client_wire(void);
const char *weft_pmi_client_kvsname(void);
/* Send q without waiting for a reply (PMI-1 spawn blocks before the last). */
int weft_pmi_client_send(const weft_pmi_msg_t *q);
/* Send q and wait for its reply; rc= is left to the caller. 0 or -1. */
int weft_pmi_client_call(const weft_pmi_msg_t *q, weft_pmi_msg_t *r);

#endif
