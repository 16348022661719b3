/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Bruck alltoall: rotate the blocks so block j is the one for rank+j, then
 * for each bit k send the blocks whose index has bit k set to rank+2^k
 * (packed into one message) and put what rank-2^k sends in their place;
 * finally block j holds rank-j's data. Cost: ceil(log2 p) alpha +
 * ceil(log2 p) n/2 beta: fewest messages, best for small blocks.
 */
#include "coll/coll_internal.h"

int weft_coll_alltoall_intra_bruck(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, rank = comm->rank, rc = MPI_SUCCESS;
    MPI_Count    blk = a->rcount * a->rdt->size;

    if (blk == 0) {
        return MPI_SUCCESS;
    }
    char *w = weft_sched_alloc(s, (size_t)(blk * n));
    char *p = weft_sched_alloc(s, (size_t)(blk * ((n + 1) / 2)));
    char *q = weft_sched_alloc(s, (size_t)(blk * ((n + 1) / 2)));
    if (w == NULL || p == NULL || q == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (int j = 0; j < n; j++) {
        WEFT_TRY(rc, weft_sched_copy(s, weft_coll_elem(a->sbuf, (MPI_Count)((rank + j) % n) *
                                                                    a->scount, a->sdt),
                                     a->scount, a->sdt, w + (MPI_Count)j * blk, blk,
                                     weft_coll_byte));
    }
    for (int k = 1; k < n; k <<= 1) {
        int m = 0;
        for (int j = 1; j < n; j++) {
            if (j & k) {
                WEFT_TRY(rc, weft_sched_copy(s, w + (MPI_Count)j * blk, blk, weft_coll_byte,
                                             p + (MPI_Count)m * blk, blk, weft_coll_byte));
                m++;
            }
        }
        WEFT_TRY(rc, weft_sched_send(s, p, m * blk, weft_coll_byte, (rank + k) % n, comm));
        WEFT_TRY(rc, weft_sched_recv(s, q, m * blk, weft_coll_byte, (rank - k + n) % n, comm));
        WEFT_TRY(rc, weft_sched_fence(s));
        m = 0;
        for (int j = 1; j < n; j++) {
            if (j & k) {
                WEFT_TRY(rc, weft_sched_copy(s, q + (MPI_Count)m * blk, blk, weft_coll_byte,
                                             w + (MPI_Count)j * blk, blk, weft_coll_byte));
                m++;
            }
        }
    }
    for (int j = 0; j < n; j++) {
        WEFT_TRY(rc, weft_sched_copy(s, w + (MPI_Count)j * blk, blk, weft_coll_byte,
                                     weft_coll_elem(a->rbuf, (MPI_Count)((rank - j + n) % n) *
                                                                 a->rcount, a->rdt),
                                     a->rcount, a->rdt));
    }
    return rc;
}
