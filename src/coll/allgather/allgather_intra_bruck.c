/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Bruck allgather: blocks are kept packed in order relative to the rank;
 * step k sends the first min(2^k, p-2^k) blocks to rank-2^k and appends
 * what rank+2^k sends; a final local rotation puts them in rank order.
 * Any p. Cost: ceil(log2 p) alpha + (p-1)/p n beta. Best for small blocks.
 */
#include "coll/coll_internal.h"

int weft_coll_allgather_intra_bruck(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    blk = a->rcount * a->rdt->size;

    if (blk == 0) {
        return MPI_SUCCESS;
    }
    char *tmp = weft_sched_alloc(s, (size_t)(blk * n));
    if (tmp == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (a->sbuf == MPI_IN_PLACE) {
        WEFT_TRY(rc, weft_sched_copy(s, weft_coll_elem(a->rbuf, rank * a->rcount, a->rdt),
                                     a->rcount, a->rdt, tmp, blk, weft_coll_byte));
    } else {
        WEFT_TRY(rc, weft_sched_copy(s, a->sbuf, a->scount, a->sdt, tmp, blk, weft_coll_byte));
    }
    for (int k = 1; k < n; k <<= 1) {
        int m = k < n - k ? k : n - k;
        WEFT_TRY(rc, weft_sched_send(s, tmp, m * blk, weft_coll_byte, (rank - k + n) % n, comm));
        WEFT_TRY(rc, weft_sched_recv(s, tmp + (MPI_Count)k * blk, m * blk, weft_coll_byte,
                                     (rank + k) % n, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
    }
    for (int j = 0; j < n; j++) {
        int r = (rank + j) % n;
        if (j == 0 && a->sbuf == MPI_IN_PLACE) {
            continue;
        }
        WEFT_TRY(rc, weft_sched_copy(s, tmp + (MPI_Count)j * blk, blk, weft_coll_byte,
                                     weft_coll_elem(a->rbuf, (MPI_Count)r * a->rcount, a->rdt),
                                     a->rcount, a->rdt));
    }
    return rc;
}
