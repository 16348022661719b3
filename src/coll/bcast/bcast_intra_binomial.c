/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Binomial-tree broadcast over ranks relative to the root: a rank receives
 * from rel - lowbit(rel) and forwards to rel + 2^k for 2^k < lowbit(rel).
 * Cost: ceil(log2 p) (alpha + n beta). Best for small messages.
 */
#include "coll/coll_internal.h"

int weft_coll_bcast_intra_binomial(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, root = a->root, rel = (comm->rank - root + n) % n;
    int          mask = 1, rc = MPI_SUCCESS;

    while (mask < n) {
        if (rel & mask) {
            rc = weft_sched_recv(s, a->rbuf, a->count, a->dt, (rel - mask + root) % n, comm);
            if (rc == MPI_SUCCESS) {
                rc = weft_sched_fence(s);
            }
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0 && rc == MPI_SUCCESS; mask >>= 1) {
        if (rel + mask < n) {
            rc = weft_sched_send(s, a->rbuf, a->count, a->dt, (rel + mask + root) % n, comm);
        }
    }
    return rc;
}
