/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Linear scatter and scatterv: the root posts one send per rank. Best for
 * large blocks (and the only scatterv algorithm).
 */
#include "coll/coll_internal.h"

static int scatter_linear(weft_sched_t *s, const weft_coll_args_t *a, const MPI_Count *counts,
                          const MPI_Aint *displs)
{
    weft_comm_t *comm = a->comm;
    int          rc   = MPI_SUCCESS;

    if (comm->rank != a->root) {
        return weft_sched_recv(s, a->rbuf, a->rcount, a->rdt, a->root, comm);
    }
    for (int i = 0; i < comm->size; i++) {
        MPI_Count   c = counts ? counts[i] : a->scount;
        MPI_Aint    d = displs ? displs[i] : (MPI_Aint)i * a->scount;
        const void *p = weft_coll_elem(a->sbuf, d, a->sdt);
        if (i == comm->rank) {
            if (a->rbuf != MPI_IN_PLACE) {
                WEFT_TRY(rc, weft_sched_copy(s, p, c, a->sdt, a->rbuf, a->rcount, a->rdt));
            }
        } else {
            WEFT_TRY(rc, weft_sched_send(s, p, c, a->sdt, i, comm));
        }
    }
    return rc;
}

int weft_coll_scatter_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    if ((a->comm->rank == a->root ? a->scount * a->sdt->size : a->rcount * a->rdt->size) == 0) {
        return MPI_SUCCESS;
    }
    return scatter_linear(s, a, NULL, NULL);
}

int weft_coll_scatterv_intra_linear(weft_sched_t *s, const weft_coll_args_t *a)
{
    return scatter_linear(s, a, a->scounts, a->sdispls);
}
