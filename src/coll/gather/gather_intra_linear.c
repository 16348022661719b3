/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Linear gather and gatherv: every rank sends its block straight to the
 * root, which posts all receives at once. Cost: (p-1) alpha at the root,
 * no forwarding; best for large blocks (and the only gatherv algorithm).
 */
#include "coll/coll_internal.h"

static int gather_linear(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                         const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    if (comm->rank != a->root) {
        return weft_sched_send(s, a->sbuf, a->scount, a->sdt, a->root, comm);
    }
    for (int i = 0; i < comm->size; i++) {
        MPI_Count c = counts ? counts[i] : a->rcount;
        MPI_Aint  d = displs ? displs[i] : (MPI_Aint)i * a->rcount;
        void     *p = weft_coll_elem(a->rbuf, d, a->rdt);
        if (i == comm->rank) {
            if (a->sbuf != MPI_IN_PLACE) {
                WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt, p, c, a->rdt));
            }
        } else {
            WEFT_TRY(rc, weft_sched_recv(s, p, c, a->rdt, i, comm));
        }
    }
    return rc;
}

int weft_coll_gather_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    if ((a->comm->rank == a->root ? a->rcount * a->rdt->size : a->scount * a->sdt->size) == 0) {
        return MPI_SUCCESS;
    }
    return gather_linear(s, a, NULL, NULL);
}

int weft_coll_gatherv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return gather_linear(s, a, a->rcounts, a->rdispls);
}
