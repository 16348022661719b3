/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-level barrier: node members report to their leader (fan-in), leaders
 * run a dissemination barrier among themselves, leaders release their node
 * (fan-out). Node phases use point-to-point over the node communicator
 * (already shared-memory fast); a flag-in-shared-segment version is a later
 * refinement. Cost: 2 alpha_shm + ceil(log2 nodes) alpha_net.
 */
#include "coll/coll_internal.h"

int weft_coll_barrier_intra_two_level(weft_sched_t *s, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc   = weft_coll_comm_get(a->comm);
    weft_comm_t           *node = cc->node_comm;
    int                    rc   = weft_sched_use(s, node);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (node->rank != 0) {
        rc = weft_sched_send(s, NULL, 0, weft_coll_byte, 0, node);
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_recv(s, NULL, 0, weft_coll_byte, 0, node);
        }
        return rc;
    }
    for (int i = 1; i < node->size && rc == MPI_SUCCESS; i++) {
        rc = weft_sched_recv(s, NULL, 0, weft_coll_byte, i, node);
    }
    if (rc == MPI_SUCCESS) {
        rc = weft_sched_fence(s);
    }
    if (rc == MPI_SUCCESS && cc->leader_comm->size > 1) {
        weft_coll_args_t sub = *a;
        sub.comm             = cc->leader_comm;
        rc = weft_coll_build(s, WEFT_ALG_BARRIER_INTRA_dissemination, &sub);
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_fence(s);
        }
    }
    for (int i = 1; i < node->size && rc == MPI_SUCCESS; i++) {
        rc = weft_sched_send(s, NULL, 0, weft_coll_byte, i, node);
    }
    return rc;
}
