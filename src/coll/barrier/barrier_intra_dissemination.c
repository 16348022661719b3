/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Dissemination barrier (Hensgen, Finkel, Manber). Round k: signal rank
 * r + 2^k, wait for r - 2^k. ceil(log2 p) rounds of zero-byte messages,
 * any p. Cost: ceil(log2 p) * alpha.
 */
#include "coll/coll_internal.h"
#include "core/pt2pt.h"

int weft_coll_barrier_intra_dissemination(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, r = comm->rank, rc = MPI_SUCCESS;

    for (int k = 1; k < n && rc == MPI_SUCCESS; k <<= 1) {
        rc = weft_sched_send(s, NULL, 0, weft_coll_byte, (r + k) % n, comm);
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_recv(s, NULL, 0, weft_coll_byte, (r - k + n) % n, comm);
        }
        if (rc == MPI_SUCCESS) {
            rc = weft_sched_fence(s);
        }
    }
    return rc;
}

/* Blocking form: the same rounds and tag as the schedule, with zero-byte
 * point-to-point messages sent and received in place. */
int weft_coll_barrier_intra_dissemination_run(const weft_coll_args_t *a)
{
    weft_comm_t     *comm = a->comm;
    int              size = comm->size, rank = comm->rank, tag = weft_coll_next_tag(comm);
    int              rc   = MPI_SUCCESS;
    char             token;
    weft_datatype_t *byte = weft_datatype_from_handle(MPI_BYTE);

    for (int dist = 1; dist < size && rc == MPI_SUCCESS; dist <<= 1) {
        rc = weft_coll_send_now(&token, 0, byte, (rank + dist) % size, tag, comm);
        if (rc == MPI_SUCCESS) {
            rc = weft_recv_now(&token, 0, byte, (rank - dist + size) % size, tag, comm,
                               WEFT_CTX_COLL, MPI_STATUS_IGNORE);
        }
    }
    return rc;
}
