/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Dynamic processes (ports, connect/accept, disconnect; spawn later): what
 * the rest of core sees. The MPI entry points' impls are in api_impl.h.
 */
#ifndef WEFT_CORE_DYNPROC_DYNPROC_H
#define WEFT_CORE_DYNPROC_DYNPROC_H

#include "core/comm.h"
#include "core/info.h"

/* The intercommunicator MPI_Comm_get_parent returns (a reference is kept;
 * NULL: none). */
void weft_dynproc_set_parent(weft_comm_t *comm);

/* MPI_Open_port; want_net: the name carries a netmod address (opening the
 * netmod) so processes on other hosts can connect, else only processes of
 * this host can unless the netmod is open already. */
int weft_dynproc_open_port(char *port_name, int want_net);

/* MPI_Comm_connect giving up after timeout seconds without an answer. */
int weft_dynproc_connect(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                         double timeout, MPI_Comm *newcomm);

/* MPI_Comm_accept giving up after timeout seconds (0: waits for ever). */
int weft_dynproc_accept(const char *port_name, weft_info_t *info, int root, weft_comm_t *comm,
                        double timeout, MPI_Comm *newcomm);

/* In MPI_Init: a spawned process connects to its parents (the intercomm
 * becomes MPI_Comm_get_parent). MPI error code. */
int weft_dynproc_init(void);

#endif
