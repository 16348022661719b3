/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Two-level allreduce (commutative ops): binomial reduce to the node leader
 * over the node communicator, allreduce among the leaders (algorithm chosen
 * by the rules for the leader communicator), binomial broadcast inside the
 * node. Node phases are shared-memory point-to-point.
 */
#include "coll/coll_internal.h"

int weft_coll_allreduce_intra_two_level(weft_sched_t *s, const weft_coll_args_t *a)
{
    struct weft_coll_comm *cc   = weft_coll_comm_get(a->comm);
    weft_comm_t           *node = cc->node_comm;
    int                    rc   = weft_sched_use(s, node);

    if (a->count == 0) {
        return rc;
    }
    WEFT_TRY(rc, weft_coll_reduce_binomial_raw(s, node, weft_coll_mydata(a), a->rbuf, a->count,
                                               a->dt, a->op, 0));
    WEFT_TRY(rc, weft_sched_fence(s));
    if (cc->is_leader && cc->leader_comm->size > 1) {
        weft_coll_args_t l = *a;
        l.comm             = cc->leader_comm;
        l.sbuf             = MPI_IN_PLACE;
        int alg            = weft_coll_select(&l, &rc);
        if (alg < 0) {
            return rc != MPI_SUCCESS ? rc : MPI_ERR_INTERN;
        }
        WEFT_TRY(rc, weft_coll_build(s, alg, &l));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    weft_coll_args_t b = *a;
    b.coll             = WEFT_COLL_BCAST;
    b.comm             = node;
    b.root             = 0;
    WEFT_TRY(rc, weft_coll_build(s, WEFT_ALG_BCAST_INTRA_binomial, &b));
    return rc;
}
