/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_T performance variables of the RMA module count exactly the operations
 * a rank issues: every rank does a known mix of put/get/accumulate/
 * fetch_and_op/compare_and_swap on its right neighbour inside a lock_all
 * epoch, then reads the counters through a pvar session and checks the
 * deltas (and that rma_am_ops counts them all when the active-message path is
 * forced, none otherwise). Run with and without WEFT_USE_SHM_ONE_SIDED=0;
 * argv[1] says which ("am" or "shm"). "net": hosts of argv[2] ranks each
 * (default 1; WEFT_TEST_HOST_BLOCK and WEFT_RMA_FAKE_PPN give the same
 * layout) with libfabric RMA (WEFT_RMA_NET=native): put/get to a neighbour
 * on another host count in rma_net_ops, the rest in rma_am_ops (a window
 * within one host: the shared-memory path, nothing counted in either).
 */
#include "mpitest.h"

#define NPUT 3
#define NGET 2
#define NACC 2 /* one accumulate, one get_accumulate */
#define NFOP 1
#define NCAS 1
#define ELEMS 4 /* ints per put/get */

static MPI_T_pvar_handle start_counter(MPI_T_pvar_session s, const char *name, int cls)
{
    int               idx = -1, count = 0;
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;

    CHECK_OK(MPI_T_pvar_get_index(name, cls, &idx));
    CHECK_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    CHECK_OK(MPI_T_pvar_start(s, h));
    return h;
}

static unsigned long long read_counter(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ULL;
    CHECK_OK(MPI_T_pvar_read(s, h, &v));
    return v;
}

int main(int argc, char **argv)
{
    int                provided, rank, size, *base, buf[ELEMS], one = 1, res;
    MPI_Win            win;
    MPI_T_pvar_session s;
    int                am  = argc > 1 && strcmp(argv[1], "am") == 0;
    int                net = argc > 1 && strcmp(argv[1], "net") == 0;
    int                ppn = net && argc > 2 ? atoi(argv[2]) : 1;
    static const char *names[] = {"weft_rma_put_ops", "weft_rma_put_bytes", "weft_rma_get_ops",
                                  "weft_rma_get_bytes", "weft_rma_acc_ops", "weft_rma_cas_ops",
                                  "weft_rma_am_ops", "weft_rma_net_ops"};
    static const int   classes[] = {MPI_T_PVAR_CLASS_COUNTER,   MPI_T_PVAR_CLASS_AGGREGATE,
                                    MPI_T_PVAR_CLASS_COUNTER,   MPI_T_PVAR_CLASS_AGGREGATE,
                                    MPI_T_PVAR_CLASS_COUNTER,   MPI_T_PVAR_CLASS_COUNTER,
                                    MPI_T_PVAR_CLASS_COUNTER,   MPI_T_PVAR_CLASS_COUNTER};
    MPI_T_pvar_handle  h[8];

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_Win_allocate(4 * ELEMS * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                              MPI_COMM_WORLD, &base, &win));
    memset(base, 0, 4 * ELEMS * sizeof(int));
    CHECK_OK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < 8; i++) {
        h[i] = start_counter(s, names[i], classes[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    int right = (rank + 1) % size;
    for (int i = 0; i < ELEMS; i++) {
        buf[i] = rank * 100 + i;
    }
    CHECK_OK(MPI_Win_lock_all(0, win));
    for (int i = 0; i < NPUT; i++) {
        CHECK_OK(MPI_Put(buf, ELEMS, MPI_INT, right, 0, ELEMS, MPI_INT, win));
    }
    for (int i = 0; i < NGET; i++) {
        CHECK_OK(MPI_Get(buf, ELEMS, MPI_INT, right, ELEMS, ELEMS, MPI_INT, win));
    }
    CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, right, 2 * ELEMS, 1, MPI_INT, MPI_SUM, win));
    CHECK_OK(MPI_Get_accumulate(&one, 1, MPI_INT, &res, 1, MPI_INT, right, 2 * ELEMS, 1, MPI_INT,
                                MPI_SUM, win));
    CHECK_OK(MPI_Fetch_and_op(&one, &res, MPI_INT, right, 2 * ELEMS + 1, MPI_SUM, win));
    CHECK_OK(MPI_Compare_and_swap(&one, &res, &res, MPI_INT, right, 3 * ELEMS, win));
    CHECK_OK(MPI_Win_unlock_all(win));

    int                spans  = net && size > ppn;             /* an active-message window */
    int                net_pg = spans && right / ppn != rank / ppn; /* put/get by RMA */
    unsigned long long want[8] = {NPUT, NPUT * ELEMS * sizeof(int), NGET,
                                  NGET * ELEMS * sizeof(int), NACC + NFOP, NCAS,
                                  am || (spans && !net_pg) ? NPUT + NGET + NACC + NFOP + NCAS
                                  : net_pg                 ? NACC + NFOP + NCAS
                                                           : 0,
                                  net_pg ? NPUT + NGET : 0};
    for (int i = 0; i < 8; i++) {
        unsigned long long v = read_counter(s, h[i]);
        CHECK(v == want[i], "%s = %llu, want %llu (%s path)", names[i], v, want[i],
              net_pg ? "libfabric RMA" : am || spans ? "active-message" : "shared-memory");
        CHECK_OK(MPI_T_pvar_handle_free(s, &h[i]));
    }
    CHECK_OK(MPI_T_pvar_session_free(&s));
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Win_free(&win));
    int rc = mpitest_finish();
    MPI_T_finalize();
    return rc;
}
