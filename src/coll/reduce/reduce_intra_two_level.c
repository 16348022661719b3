/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-level reduce (commutative ops): binomial reduce to each node leader,
 * binomial reduce among leaders to the root's node leader, which forwards
 * to the root when the root is not a leader.
 */
#include "coll/coll_internal.h"

int weft_coll_reduce_intra_two_level(weft_sched_t *s, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc   = weft_coll_comm_get(a->comm);
    weft_comm_t           *comm = a->comm, *node = cc->node_comm;
    int                    root = a->root, rl = cc->leader_of[root];
    int                    rc   = weft_sched_use(s, node);
    void                  *l    = NULL;

    if (a->count == 0) {
        return rc;
    }
    if (cc->is_leader) {
        l = (comm->rank == root) ? a->rbuf : weft_sched_tmp(s, a->count, a->dt);
        if (l == NULL) {
            return MPI_ERR_NO_MEM;
        }
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, node, weft_coll_mydata(a), l, a->count, a->dt,
                                               a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (cc->is_leader && cc->leader_comm->size > 1) {
        WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, cc->leader_comm, l, l, a->count, a->dt, a->op,
                                                   cc->node_index[root]));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    if (root != rl) {
        if (comm->rank == rl) {
            WEFT_TRY(rc, weft_sched_send(s, l, a->count, a->dt, root, comm));
        } else if (comm->rank == root) {
            WEFT_TRY(rc, weft_sched_recv(s, a->rbuf, a->count, a->dt, rl, comm));
        }
    }
    return rc;
}
