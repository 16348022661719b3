/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-level broadcast: the root hands the data to its node leader, leaders
 * broadcast among themselves (binomial), each leader broadcasts inside its
 * node (binomial over the node communicator: shared-memory point-to-point).
 * Cost: alpha_shm + log2(nodes) (alpha_net + n beta_net) + log2(ppn) (alpha_shm + n beta_shm).
 */
#include "coll/coll_internal.h"

int weft_coll_bcast_intra_two_level(weft_sched_t *s, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc   = weft_coll_comm_get(a->comm);
    weft_comm_t           *comm = a->comm, *node = cc->node_comm;
    int                    root = a->root, rl = cc->leader_of[root];
    int                    rc   = weft_sched_use(s, node);
    weft_coll_args_t       sub  = *a;

    if (rc == MPI_SUCCESS && root != rl) {
        if (comm->rank == root) {
            rc = weft_sched_send(s, a->rbuf, a->count, a->dt, rl, comm);
        } else if (comm->rank == rl) {
            rc = weft_sched_recv(s, a->rbuf, a->count, a->dt, root, comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_fence(s);
        }
    }
    if (rc == MPI_SUCCESS && cc->is_leader && cc->leader_comm->size > 1) {
        sub.comm = cc->leader_comm;
        sub.root = cc->node_index[root];
        rc       = weft_coll_build(s, WEFT_ALG_BCAST_INTRA_binomial, &sub);
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_fence(s);
        }
    }
    if (rc == MPI_SUCCESS && node->size > 1) {
        sub.comm = node;
        sub.root = 0;
        rc       = weft_coll_build(s, WEFT_ALG_BCAST_INTRA_binomial, &sub);
    }
    return rc;
}
