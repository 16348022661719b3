/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Binomial gather: ranks relative to the root collect their subtree's
 * blocks as one packed, contiguous range and forward it to their parent;
 * the root unpacks into rank order. Cost: log2 p alpha + (p-1)/p n_total
 * beta. Best for small blocks; large blocks go linear (no forwarding).
 */
#include "coll/coll_internal.h"

int weft_coll_gather_intra_binomial(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, root = a->root, rank = comm->rank;
    int          rel = (rank - root + n) % n, rc = MPI_SUCCESS;
    int          isroot = rank == root;
    MPI_Count    blk = isroot ? a->rcount * a->rdt->size : a->scount * a->sdt->size;
    int          sub;

    if (blk == 0) {
        return MPI_SUCCESS;
    }
    /* subtree size: lowbit(rel), everything for the root */
    sub = 1;
    while (sub < n && !(rel & sub)) {
        sub <<= 1;
    }
    if (sub > n - rel) {
        sub = n - rel;
    }
    if (sub == 1 && !isroot) { /* leaf */
        int mask = rel & -rel;
        return weft_sched_send(s, a->sbuf, a->scount, a->sdt, (rel - mask + root) % n, comm);
    }
    char *tmp = weft_sched_alloc(s, (size_t)(blk * sub));
    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (!(isroot && a->sbuf == MPI_IN_PLACE)) {
        WEFT_TRY(rc, weft_sched_copy(s, isroot && a->sbuf == MPI_IN_PLACE ? NULL : a->sbuf,
                                     a->scount, a->sdt, tmp, blk, weft_coll_byte));
    }
    for (int m = 1; m < sub; m <<= 1) {
        int child = rel + m;
        if (child < n) {
            int k = m < n - child ? m : n - child;
            WEFT_TRY(rc, weft_sched_recv(s, tmp + (MPI_Count)m * blk, k * blk, weft_coll_byte,
                                         (child + root) % n, comm));
        }
    }
    WEFT_TRY(rc, weft_sched_fence(s));
    if (!isroot) {
        int mask = rel & -rel;
        WEFT_TRY(rc, weft_sched_send(s, tmp, sub * blk, weft_coll_byte, (rel - mask + root) % n,
                                     comm));
        return rc;
    }
    for (int j = 0; j < n; j++) {
        int r = (j + root) % n;
        if (j == 0 && a->sbuf == MPI_IN_PLACE) {
            continue;
        }
        WEFT_TRY(rc, weft_sched_copy(s, tmp + (MPI_Count)j * blk, blk, weft_coll_byte,
                                     weft_coll_elem(a->rbuf, (MPI_Count)r * a->rcount, a->rdt),
                                     a->rcount, a->rdt));
    }
    return rc;
}
