/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Scatter + allgather broadcast (van de Geijn): the root scatters n/p-byte
 * blocks down a binomial tree, then a ring allgather completes every rank.
 * Cost: (log2 p + p - 1) alpha + 2 (p-1)/p n beta: wins for large messages
 * where the binomial tree's log2 p * n beta dominates. Non-contiguous types
 * are packed at the root and unpacked at the end.
 */
#include "coll/coll_internal.h"

static MPI_Count blk_len(int b, MPI_Count chunk, MPI_Count total, int nblocks)
{
    if (b >= nblocks) {
        return 0;
    }
    MPI_Count lo = (MPI_Count)b * chunk, hi = lo + chunk;
    if (lo >= total) {
        return 0;
    }
    return (hi > total ? total : hi) - lo;
}

/* bytes of blocks [b, b + k) */
static MPI_Count range_len(int b, int k, MPI_Count chunk, MPI_Count total, int nblocks)
{
    MPI_Count t = 0;
    for (int i = b; i < b + k && i < nblocks; i++) {
        t += blk_len(i, chunk, total, nblocks);
    }
    return t;
}

int weft_coll_bcast_intra_scatter_allgather(weft_sched_t *s, const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    int          n = comm->size, root = a->root, rel = (comm->rank - root + n) % n;
    MPI_Count    total = a->count * a->dt->size, chunk = (total + n - 1) / n;
    int          contig = a->dt->is_contig, rc = MPI_SUCCESS;
    char        *base;

    if (n == 1 || total == 0) {
        return MPI_SUCCESS;
    }
    if (contig) {
        base = (char *)a->rbuf + a->dt->true_lb;
    } else {
        base = weft_sched_alloc(s, (size_t)total);
        if (base == NULL) {
            return MPI_ERR_NO_MEM;
        }
        if (rel == 0) {
            rc = weft_sched_copy(s, a->rbuf, a->count, a->dt, base, total, weft_coll_byte);
        }
    }
#define TRY(_x)                                                                               \
    do {                                                                                      \
        if (rc == MPI_SUCCESS) {                                                              \
            rc = (_x);                                                                        \
        }                                                                                     \
    } while (0)
    /* binomial scatter */
    int mask = 1;
    while (mask < n) {
        if (rel & mask) {
            MPI_Count len = range_len(rel, mask, chunk, total, n);
            if (len > 0) {
                TRY(weft_sched_recv(s, base + (MPI_Count)rel * chunk, len, weft_coll_byte,
                                    (rel - mask + root) % n, comm));
            }
            TRY(weft_sched_fence(s));
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {
        int child = rel + mask;
        if (child < n) {
            MPI_Count len = range_len(child, mask, chunk, total, n);
            if (len > 0) {
                TRY(weft_sched_send(s, base + (MPI_Count)child * chunk, len, weft_coll_byte,
                                    (child + root) % n, comm));
            }
        }
    }
    TRY(weft_sched_fence(s));
    /* ring allgather of the blocks (relative numbering) */
    int right = (comm->rank + 1) % n, left = (comm->rank - 1 + n) % n;
    for (int i = 0; i < n - 1; i++) {
        int       sb = (rel - i + n) % n, rb = (rel - i - 1 + n) % n;
        MPI_Count sl = blk_len(sb, chunk, total, n), rl = blk_len(rb, chunk, total, n);
        if (sl > 0) {
            TRY(weft_sched_send(s, base + (MPI_Count)sb * chunk, sl, weft_coll_byte, right, comm));
        }
        if (rl > 0) {
            TRY(weft_sched_recv(s, base + (MPI_Count)rb * chunk, rl, weft_coll_byte, left, comm));
        }
        TRY(weft_sched_fence(s));
    }
    if (!contig && rel != 0) {
        TRY(weft_sched_copy(s, base, total, weft_coll_byte, a->rbuf, a->count, a->dt));
    }
#undef TRY
    return rc;
}
