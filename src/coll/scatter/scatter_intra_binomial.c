/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Binomial scatter: the root packs the blocks in order relative to itself
 * and sends each child its subtree's range; inner ranks forward. Cost:
 * log2 p alpha + (p-1)/p n_total beta. Best for small blocks.
 */
#include "coll/coll_internal.h"

int weft_coll_scatter_intra_binomial(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, root = a->root, rank = comm->rank;
    int          rel = (rank - root + n) % n, rc = MPI_SUCCESS;
    int          isroot = rank == root;
    MPI_Count    blk = isroot ? a->scount * a->sdt->size : a->rcount * a->rdt->size;
    int          sub;

    if (blk == 0) {
        return MPI_SUCCESS;
    }
    sub = 1;
    while (sub < n && !(rel & sub)) {
        sub <<= 1;
    }
    if (sub > n - rel) {
        sub = n - rel;
    }
    int parent = (rel - (rel & -rel) + root) % n;
    if (sub == 1 && !isroot) {
        return weft_sched_recv(s, a->rbuf, a->rcount, a->rdt, parent, comm);
    }
    char *tmp = weft_sched_alloc(s, (size_t)(blk * sub));
    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (isroot) {
        for (int j = 0; j < n; j++) {
            WEFT_TRY(rc, weft_sched_copy(s, weft_coll_elem(a->sbuf, (MPI_Count)((j + root) % n) *
                                                                        a->scount, a->sdt),
                                         a->scount, a->sdt, tmp + (MPI_Count)j * blk, blk,
                                         weft_coll_byte));
        }
    } else {
        WEFT_TRY(rc, weft_sched_recv(s, tmp, sub * blk, weft_coll_byte, parent, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    for (int m = 1; m < sub; m <<= 1) {
        int child = rel + m;
        if (child < n) {
            int k = m < n - child ? m : n - child;
            WEFT_TRY(rc, weft_sched_send(s, tmp + (MPI_Count)m * blk, k * blk, weft_coll_byte,
                                         (child + root) % n, comm));
        }
    }
    if (!(isroot && a->rbuf == MPI_IN_PLACE)) {
        WEFT_TRY(rc, weft_sched_copy(s, tmp, blk, weft_coll_byte, a->rbuf, a->rcount, a->rdt));
    }
    return rc;
}
