/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Operations that need the target's progress engine, issued while the
 * target computes without MPI calls (WEFT_ASYNC_PROGRESS): the last rank
 * posts a large receive (rendezvous), then loops watching a flag in its
 * window memory for up to argv[2] seconds (default 20). Every other rank
 * takes an exclusive lock on it (granted by its progress engine), adds to
 * counters with MPI_Accumulate, takes tickets with MPI_Fetch_and_op, swaps
 * with MPI_Compare_and_swap, MPI_Get_accumulate, puts and gets a strided
 * type; rank 0 also sends the large message; then rank 0 sets the flag.
 * Results are checked against what the origins did: counters, distinct
 * tickets, the swapped slot, the strided data, the received bytes.
 *
 * argv[1]: "expect" - the flag must arrive while the target computes;
 * "report" - print whether it did (without a progress thread the epochs
 * finish once the target calls MPI again, and nothing hangs).
 * argv[3]: window flavour "allocate" (default), "create" or "dynamic".
 * Last, every rank sleeps 0.5 s outside MPI: the process (all its threads)
 * must use under 0.05 s of CPU, so a progress thread never spins.
 */
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define NCOUNT  8        /* accumulate counters */
#define NVEC    16       /* strided put: every other int */
#define BIG     (256 * 1024) /* a rendezvous message */
#define ROUNDS  20       /* accumulates per origin */

enum { OFF_COUNT = 0, OFF_TICKET = NCOUNT, OFF_SWAP, OFF_GACC, OFF_FLAG, OFF_VEC,
       NINTS = OFF_VEC + 2 * NVEC * 64 };

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
           (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

int main(int argc, char **argv)
{
    int          rank, size, target, expect = argc > 1 && strcmp(argv[1], "expect") == 0;
    double       limit  = argc > 2 ? atof(argv[2]) : 20.0;
    const char  *flavor = argc > 3 ? argv[3] : "allocate";
    int         *mem    = NULL;
    MPI_Aint     base   = 0; /* displacement base: the address for dynamic windows */
    MPI_Win      win;
    MPI_Datatype vec;
    MPI_Comm     origins;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    target = size - 1;
    MPI_Comm_split(MPI_COMM_WORLD, rank == target, rank, &origins);
    const MPI_Aint bytes = NINTS * (MPI_Aint)sizeof(int);
    if (strcmp(flavor, "allocate") == 0) {
        CHECK_OK(MPI_Win_allocate(bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
    } else if (strcmp(flavor, "create") == 0) {
        CHECK_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
        CHECK_OK(MPI_Win_create(mem, bytes, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
    } else {
        CHECK_OK(MPI_Alloc_mem(bytes, MPI_INFO_NULL, &mem));
        CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_OK(MPI_Win_attach(win, mem, bytes));
        CHECK_OK(MPI_Get_address(mem, &base));
        MPI_Bcast(&base, 1, MPI_AINT, target, MPI_COMM_WORLD);
    }
    int byte_disp = strcmp(flavor, "dynamic") == 0; /* dynamic windows: addresses, unit 1 */
#define AT(_i) (base + (MPI_Aint)(_i) * (byte_disp ? (MPI_Aint)sizeof(int) : 1))
    memset(mem, 0, (size_t)bytes);
    mem[OFF_SWAP] = -1;
    MPI_Type_vector(NVEC, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    MPI_Barrier(MPI_COMM_WORLD);

    if (size > 1 && rank == target) {
        unsigned char *big = malloc(BIG);
        MPI_Request    req;
        double         t0, took, x = 1.0;
        volatile int  *flag = &mem[OFF_FLAG];

        CHECK_OK(MPI_Irecv(big, BIG, MPI_BYTE, 0, 5, MPI_COMM_WORLD, &req));
        t0 = mpitest_now();
        while (__atomic_load_n(flag, __ATOMIC_ACQUIRE) != 1 && mpitest_now() - t0 < limit) {
            for (int k = 0; k < 1000; k++) x = x * 1.0000001 + 1e-9; /* compute, no MPI */
        }
        took = mpitest_now() - t0;
        int arrived = __atomic_load_n(flag, __ATOMIC_ACQUIRE) == 1;
        if (expect) {
            CHECK(arrived, "the origins' epochs did not finish within %.0f s while the target "
                  "computed (x=%g)", limit, x);
        }
        printf("rma_async_progress(%s): the origins' operations %s while the target computed "
               "(%.3f s)\n", flavor, arrived ? "completed" : "did NOT complete", took);
        fflush(stdout);
        CHECK_OK(MPI_Wait(&req, MPI_STATUS_IGNORE));
        CHECK(mpitest_verify(big, BIG, 11) < 0, "rendezvous message differs at %ld",
              mpitest_verify(big, BIG, 11));
        free(big);
    } else if (size > 1) {
        int one = 1, ticket, mine = rank + 100, cmp = -1, swapped, gacc_old;
        int vals[NVEC], got[NVEC];

        for (int i = 0; i < NVEC; i++) vals[i] = rank * 1000 + i;
        CHECK_OK(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win));
        for (int r = 0; r < ROUNDS; r++) {
            for (int c = 0; c < NCOUNT; c++) {
                int add = rank + c + 1;
                CHECK_OK(MPI_Accumulate(&add, 1, MPI_INT, target, AT(OFF_COUNT + c), 1, MPI_INT,
                                        MPI_SUM, win));
            }
        }
        CHECK_OK(MPI_Fetch_and_op(&one, &ticket, MPI_INT, target, AT(OFF_TICKET), MPI_SUM, win));
        CHECK_OK(MPI_Compare_and_swap(&mine, &cmp, &swapped, MPI_INT, target, AT(OFF_SWAP), win));
        CHECK_OK(MPI_Get_accumulate(&one, 1, MPI_INT, &gacc_old, 1, MPI_INT, target, AT(OFF_GACC),
                                    1, MPI_INT, MPI_SUM, win));
        /* each origin its own strided slice of the vector area */
        MPI_Aint vec_at = OFF_VEC + (MPI_Aint)rank * 2 * NVEC;
        CHECK_OK(MPI_Put(vals, NVEC, MPI_INT, target, AT(vec_at), 1, vec, win));
        CHECK_OK(MPI_Win_flush(target, win));
        CHECK_OK(MPI_Get(got, NVEC, MPI_INT, target, AT(vec_at), 1, vec, win));
        CHECK_OK(MPI_Win_unlock(target, win));
        for (int i = 0; i < NVEC; i++) {
            CHECK(got[i] == vals[i], "strided element %d read back %d, want %d", i, got[i], vals[i]);
        }
        CHECK(ticket >= 0 && ticket < size - 1, "ticket %d out of range", ticket);
        CHECK(gacc_old >= 0 && gacc_old < size - 1, "get_accumulate old value %d", gacc_old);

        /* tickets are distinct: gather them among the origins */
        int *tickets = malloc(sizeof(int) * (size_t)size);
        MPI_Allgather(&ticket, 1, MPI_INT, tickets, 1, MPI_INT, origins);
        for (int i = 0; i < size - 1; i++)
            for (int j = i + 1; j < size - 1; j++)
                CHECK(tickets[i] != tickets[j], "origins %d and %d got the same ticket %d", i, j,
                      tickets[i]);
        free(tickets);
        if (rank == 0) {
            unsigned char *big = malloc(BIG);
            mpitest_fill(big, BIG, 11);
            CHECK_OK(MPI_Send(big, BIG, MPI_BYTE, target, 5, MPI_COMM_WORLD));
            free(big);
        }
        MPI_Barrier(origins); /* every origin's epoch is closed */
        if (rank == 0) {
            CHECK_OK(MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win));
            CHECK_OK(MPI_Accumulate(&one, 1, MPI_INT, target, AT(OFF_FLAG), 1, MPI_INT, MPI_REPLACE,
                                    win));
            CHECK_OK(MPI_Win_unlock(target, win));
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (size > 1 && rank == target) {
        int norigins = size - 1;
        for (int c = 0; c < NCOUNT; c++) {
            int want = 0;
            for (int o = 0; o < norigins; o++) want += ROUNDS * (o + c + 1);
            CHECK(mem[OFF_COUNT + c] == want, "counter %d: %d, want %d", c, mem[OFF_COUNT + c], want);
        }
        CHECK(mem[OFF_TICKET] == norigins, "ticket counter %d, want %d", mem[OFF_TICKET], norigins);
        CHECK(mem[OFF_GACC] == norigins, "get_accumulate counter %d, want %d", mem[OFF_GACC],
              norigins);
        CHECK(mem[OFF_SWAP] >= 100 && mem[OFF_SWAP] < 100 + norigins,
              "swap slot %d: no origin's value", mem[OFF_SWAP]);
        for (int o = 0; o < norigins; o++) {
            const int *v = &mem[OFF_VEC + o * 2 * NVEC];
            for (int i = 0; i < NVEC; i++) {
                CHECK(v[2 * i] == o * 1000 + i && v[2 * i + 1] == 0,
                      "origin %d strided slot %d: %d, gap %d", o, i, v[2 * i], v[2 * i + 1]);
            }
        }
    }
    double cpu0 = cpu_seconds();
    usleep(500000);
    double cpu = cpu_seconds() - cpu0;
    CHECK(cpu < 0.05, "%.3f s of CPU while idle outside MPI for 0.5 s (a spinning thread?)", cpu);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Type_free(&vec);
    if (strcmp(flavor, "dynamic") == 0) {
        CHECK_OK(MPI_Win_detach(win, mem));
    }
    CHECK_OK(MPI_Win_free(&win));
    if (strcmp(flavor, "allocate") != 0) {
        MPI_Free_mem(mem);
    }
    MPI_Comm_free(&origins);
    return mpitest_finish();
}
