/* SPDX-License-Identifier: BSD-3-Clause
 * The intra-node thresholds chosen at init (MPI_T pvars weft_shm_eager_limit,
 * weft_shm_cma_threshold, weft_shm_coop_threshold): every rank reports the
 * same values, and messages
 * one byte below, at and above each threshold (and the 2-copy pipeline slot
 * size) arrive intact, contiguous and strided, between every pair.
 * Usage: p2p_thresholds [print]   (print: rank 0 prints the values as
 * "thresholds eager_limit=N cma_threshold=N cma_ns=N copy_ns=N xcopy_ns=N
 * coop_threshold=N"). */
#include "mpitest.h"

static unsigned long long read_pvar(const char *name, int cls)
{
    int                   idx = -1, count = 0;
    MPI_T_pvar_session    s;
    MPI_T_pvar_handle     h;
    unsigned long long    v = ~0ull;

    if (MPI_T_pvar_get_index(name, cls, &idx) != MPI_SUCCESS) {
        CHECK(0, "pvar %s not found", name);
        return v;
    }
    MPI_T_pvar_session_create(&s);
    MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count);
    CHECK(MPI_T_pvar_read(s, h, &v) == MPI_SUCCESS, "read %s", name);
    MPI_T_pvar_handle_free(s, &h);
    MPI_T_pvar_session_free(&s);
    return v;
}

/* Every rank sends n units to rank+d and receives from rank-d. */
static void shift(int rank, int size, int d, size_t n, int strided, unsigned seed)
{
    size_t         span = strided ? 2 * n : n;
    unsigned char *sbuf = malloc(span + 1), *rbuf = malloc(span + 1), *want = malloc(span + 1);
    MPI_Datatype   t = MPI_BYTE;
    MPI_Request    req[2];
    MPI_Status     st;
    int            dst = (rank + d) % size, src = (rank + size - d) % size, count = -1;

    if (strided) { /* every other byte: a non-contiguous send and receive */
        MPI_Type_vector((int)n, 1, 2, MPI_BYTE, &t);
        MPI_Type_commit(&t);
    }
    mpitest_fill(sbuf, span, seed + (unsigned)rank);
    mpitest_fill(want, span, seed + (unsigned)src);
    memset(rbuf, 0xee, span + 1);
    MPI_Irecv(rbuf, strided ? 1 : (int)n, t, src, 9, MPI_COMM_WORLD, &req[0]);
    MPI_Isend(sbuf, strided ? 1 : (int)n, t, dst, 9, MPI_COMM_WORLD, &req[1]);
    MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
    (void)st;
    for (size_t i = 0; i < span; i += strided ? 2 : 1) {
        if (rbuf[i] != want[i]) {
            CHECK(0, "size %zu strided %d from %d: byte %zu is %d, want %d", n, strided, src, i,
                  rbuf[i], want[i]);
            break;
        }
        if (strided && i + 1 < span && rbuf[i + 1] != 0xee) {
            CHECK(0, "size %zu strided from %d: gap byte %zu written", n, src, i + 1);
            break;
        }
    }
    CHECK(rbuf[span] == 0xee, "size %zu: wrote past the end", n);
    (void)count;
    if (strided) {
        MPI_Type_free(&t);
    }
    free(sbuf);
    free(rbuf);
    free(want);
}

int main(int argc, char **argv)
{
    int rank, size, prov;

    MPI_Init(&argc, &argv);
    MPI_T_init_thread(MPI_THREAD_SINGLE, &prov);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    unsigned long long v[6] = {read_pvar("weft_shm_eager_limit", MPI_T_PVAR_CLASS_SIZE),
                               read_pvar("weft_shm_cma_threshold", MPI_T_PVAR_CLASS_SIZE),
                               read_pvar("weft_shm_cma_cost_ns", MPI_T_PVAR_CLASS_LEVEL),
                               read_pvar("weft_shm_copy_cost_ns", MPI_T_PVAR_CLASS_LEVEL),
                               read_pvar("weft_shm_xcopy_cost_ns", MPI_T_PVAR_CLASS_LEVEL),
                               read_pvar("weft_shm_coop_threshold", MPI_T_PVAR_CLASS_SIZE)};
    unsigned long long lo[6], hi[6];
    MPI_Allreduce(v, lo, 6, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(v, hi, 6, MPI_UNSIGNED_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    for (int k = 0; k < 6; k++) {
        CHECK(lo[k] == hi[k], "ranks disagree on value %d: %llu..%llu", k, lo[k], hi[k]);
    }
    CHECK(v[0] >= 1024 && v[0] <= (64u << 20), "eager limit %llu", v[0]);
    if (size >= 2) {
        CHECK(v[3] > 0, "copy cost not measured with %d ranks", size);
    }
    if (rank == 0 && argc > 1 && strcmp(argv[1], "print") == 0) {
        printf("thresholds eager_limit=%llu cma_threshold=%llu cma_ns=%llu copy_ns=%llu "
               "xcopy_ns=%llu coop_threshold=%llu\n", v[0], v[1], v[2], v[3], v[4], v[5]);
    }

    size_t edges[] = {(size_t)v[0], (size_t)v[1], 65536 /* pipeline slot */, 4096,
                      (size_t)v[5] /* cooperative copy (halves up to 256 KiB) */,
                      (size_t)256 << 10 /* 128 KiB chunks */};
    for (size_t e = 0; e < sizeof(edges) / sizeof(edges[0]); e++) {
        for (int delta = -1; delta <= 1; delta++) {
            if ((edges[e] == 0 && delta < 1) || edges[e] > (8u << 20)) {
                continue; /* a threshold past 8 MiB (a simulated slow CMA) is not sent */
            }
            size_t n = edges[e] + (size_t)delta;
            for (int d = 1; d <= size; d++) { /* d == size: self */
                shift(rank, size, d % size, n, 0, 100 + (unsigned)(e * 8 + (size_t)delta + 1));
                shift(rank, size, d % size, n, 1, 200 + (unsigned)(e * 8 + (size_t)delta + 1));
            }
        }
    }
    MPI_T_finalize();
    return mpitest_finish();
}
