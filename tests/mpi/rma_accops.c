/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Every predefined op through MPI_Accumulate, MPI_Get_accumulate and
 * MPI_Fetch_and_op on an int, a double and an MPI_2INT (MINLOC/MAXLOC)
 * window, all ranks targeting rank 0 at once, against a serial reference.
 * MPI_REPLACE must leave one origin's whole contribution; MPI_NO_OP must
 * return the target without changing it.
 */
#include "mpitest.h"

#define N 16

static int rank, size;

static int ival(int r, int i)
{
    return (r * 7 + i * 3) % 5 + 1; /* 1..5: PROD stays small */
}

static long long iref(MPI_Op op, int i, long long t)
{
    for (int r = 0; r < size; r++) {
        long long v = ival(r, i);
        if (op == MPI_SUM) t += v;
        else if (op == MPI_PROD) t *= v;
        else if (op == MPI_MIN) t = v < t ? v : t;
        else if (op == MPI_MAX) t = v > t ? v : t;
        else if (op == MPI_BAND) t &= v;
        else if (op == MPI_BOR) t |= v;
        else if (op == MPI_BXOR) t ^= v;
        else if (op == MPI_LAND) t = (t && v);
        else if (op == MPI_LOR) t = (t || v);
        else if (op == MPI_LXOR) t = (!t != !v);
    }
    return t;
}

static void int_ops(MPI_Win win, int *mem)
{
    MPI_Op      ops[]   = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_BAND, MPI_BOR, MPI_BXOR,
                           MPI_LAND, MPI_LOR, MPI_LXOR};
    const char *names[] = {"SUM", "PROD", "MIN", "MAX", "BAND", "BOR", "BXOR", "LAND", "LOR", "LXOR"};

    for (int k = 0; k < 10; k++) {
        for (int mode = 0; mode < 3; mode++) { /* accumulate, get_accumulate, fetch_and_op */
            int in[N], old[N];
            for (int i = 0; i < N; i++) {
                in[i] = ival(rank, i);
                old[i] = -99;
            }
            if (rank == 0) {
                for (int i = 0; i < N; i++) mem[i] = 3 + (i % 2); /* 3 or 4 */
            }
            MPI_Barrier(MPI_COMM_WORLD);
            MPI_Win_lock_all(0, win);
            if (mode == 0) {
                CHECK_OK(MPI_Accumulate(in, N, MPI_INT, 0, 0, N, MPI_INT, ops[k], win));
            } else if (mode == 1) {
                CHECK_OK(MPI_Get_accumulate(in, N, MPI_INT, old, N, MPI_INT, 0, 0, N, MPI_INT, ops[k], win));
            } else {
                for (int i = 0; i < N; i++) {
                    CHECK_OK(MPI_Fetch_and_op(&in[i], &old[i], MPI_INT, 0, i, ops[k], win));
                }
            }
            MPI_Win_unlock_all(win);
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 0) {
                for (int i = 0; i < N; i++) {
                    long long want = iref(ops[k], i, 3 + (i % 2));
                    CHECK(mem[i] == (int)want, "int %s mode %d [%d] = %d, want %lld", names[k],
                          mode, i, mem[i], want);
                }
            }
            if (mode > 0) {
                for (int i = 0; i < N; i++) CHECK(old[i] != -99, "int %s: nothing fetched", names[k]);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
    }
}

static void replace_noop(MPI_Win win, int *mem)
{
    int in[N], old[N], winner = -1;

    if (rank == 0) for (int i = 0; i < N; i++) mem[i] = 1000 + i;
    for (int i = 0; i < N; i++) in[i] = rank * 100 + i;
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    CHECK_OK(MPI_Accumulate(in, N, MPI_INT, 0, 0, N, MPI_INT, MPI_REPLACE, win));
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        winner = mem[0] / 100;
        for (int i = 0; i < N; i++) {
            CHECK(mem[i] == winner * 100 + i, "REPLACE mixed origins: [%d] = %d", i, mem[i]);
        }
    }
    MPI_Bcast(&winner, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    CHECK_OK(MPI_Get_accumulate(NULL, 0, MPI_DATATYPE_NULL, old, N, MPI_INT, 0, 0, N, MPI_INT, MPI_NO_OP, win));
    MPI_Win_unlock_all(win);
    for (int i = 0; i < N; i++) {
        CHECK(old[i] == winner * 100 + i, "NO_OP fetched [%d] = %d", i, old[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 0; i < N; i++) CHECK(mem[i] == winner * 100 + i, "NO_OP changed [%d]", i);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

static void double_ops(void)
{
    MPI_Win     win;
    double     *mem;
    MPI_Op      ops[]   = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
    const char *names[] = {"SUM", "PROD", "MIN", "MAX"};

    MPI_Win_allocate(N * sizeof(double), sizeof(double), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int k = 0; k < 4; k++) {
        double in[N];
        for (int i = 0; i < N; i++) in[i] = 0.5 * ival(rank, i);
        if (rank == 0) for (int i = 0; i < N; i++) mem[i] = 2.0;
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        CHECK_OK(MPI_Accumulate(in, N, MPI_DOUBLE, 0, 0, N, MPI_DOUBLE, ops[k], win));
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < N; i++) {
                double t = 2.0;
                for (int r = 0; r < size; r++) {
                    double v = 0.5 * ival(r, i);
                    t = k == 0 ? t + v : k == 1 ? t * v : k == 2 ? (v < t ? v : t) : (v > t ? v : t);
                }
                /* Halves and small products are exact in double, in any order. */
                CHECK(mem[i] == t, "double %s [%d] = %g, want %g", names[k], i, mem[i], t);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
}

static void loc_ops(void)
{
    MPI_Win win;
    int    *mem; /* (value, index) pairs */

    MPI_Win_allocate(2 * N * sizeof(int), 2 * sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int k = 0; k < 2; k++) {
        int in[2 * N];
        MPI_Op op = k ? MPI_MAXLOC : MPI_MINLOC;
        for (int i = 0; i < N; i++) {
            in[2 * i] = ival(rank, i);
            in[2 * i + 1] = rank;
        }
        if (rank == 0) for (int i = 0; i < N; i++) { mem[2 * i] = 3; mem[2 * i + 1] = -1; }
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        CHECK_OK(MPI_Accumulate(in, N, MPI_2INT, 0, 0, N, MPI_2INT, op, win));
        MPI_Win_unlock_all(win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            for (int i = 0; i < N; i++) {
                int bv = 3, bi = -1;
                for (int r = 0; r < size; r++) {
                    int v = ival(r, i);
                    if (k ? v > bv : v < bv) { bv = v; bi = r; }
                    else if (v == bv && r < bi) bi = r;
                }
                if (bi < 0 && bv == 3) bi = -1;
                CHECK(mem[2 * i] == bv && mem[2 * i + 1] == bi, "%s [%d] = (%d,%d), want (%d,%d)",
                      k ? "MAXLOC" : "MINLOC", i, mem[2 * i], mem[2 * i + 1], bv, bi);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
}

/* get_accumulate of LONG ints (more than one 32 KiB piece of the fetch and
 * reduce, the last one partial): first every rank at once (the sum must be
 * exact: the whole operation is atomic per element), then one rank at a
 * time, where rank r must fetch the start value plus ranks 0..r-1's. */
#define LONG 20001
static void long_get_accumulate(void)
{
    MPI_Win win;
    int    *mem, *in = malloc(LONG * sizeof(int)), *old = malloc(LONG * sizeof(int));

    MPI_Win_allocate(LONG * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    for (int i = 0; i < LONG; i++) in[i] = ival(rank, i);
    for (int pass = 0; pass < 2; pass++) {
        if (rank == 0) for (int i = 0; i < LONG; i++) mem[i] = i;
        for (int i = 0; i < LONG; i++) old[i] = -1;
        MPI_Barrier(MPI_COMM_WORLD);
        for (int turn = 0; turn < (pass ? size : 1); turn++) {
            if (pass == 0 || rank == turn) {
                MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
                CHECK_OK(MPI_Get_accumulate(in, LONG, MPI_INT, old, LONG, MPI_INT, 0, 0, LONG,
                                            MPI_INT, MPI_SUM, win));
                MPI_Win_unlock(0, win);
            }
            MPI_Barrier(MPI_COMM_WORLD);
        }
        for (int i = 0; i < LONG; i++) {
            long long want = i;
            for (int r = 0; r < rank; r++) want += ival(r, i);
            if (pass) {
                CHECK(old[i] == (int)want, "long get_accumulate fetched [%d] = %d, want %lld", i,
                      old[i], want);
            } else {
                CHECK(old[i] >= i, "long get_accumulate fetched [%d] = %d", i, old[i]);
            }
        }
        if (rank == 0) {
            for (int i = 0; i < LONG; i++) {
                long long want = i;
                for (int r = 0; r < size; r++) want += ival(r, i);
                CHECK(mem[i] == (int)want, "long get_accumulate pass %d [%d] = %d, want %lld",
                      pass, i, mem[i], want);
            }
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    MPI_Win_free(&win);
    free(in);
    free(old);
}

/* An op undefined for the type is MPI_ERR_OP with data and a valid call
 * with count 0 (mpi4py's test_rma sends 0 MPI_BYTE with MPI_SUM); the
 * target is untouched either way. */
static void op_type_checks(MPI_Win win, int *mem)
{
    unsigned char in = 7, res = 9;
    int           rc, cls, before;

    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_fence(0, win);
    if (rank == 0) {
        before = mem[0];
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_OK(MPI_Accumulate(&in, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, MPI_SUM, win));
    CHECK_OK(MPI_Get_accumulate(&in, 0, MPI_BYTE, &res, 0, MPI_BYTE, 0, 0, 0, MPI_BYTE, MPI_SUM,
                                win));
    rc = MPI_Accumulate(&in, 1, MPI_BYTE, 0, 0, 1, MPI_BYTE, MPI_SUM, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "accumulate of 1 MPI_BYTE with MPI_SUM: class %d", cls);
    rc = MPI_Fetch_and_op(&in, &res, MPI_BYTE, 0, 0, MPI_SUM, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OP, "fetch_and_op of MPI_BYTE with MPI_SUM: class %d", cls);
    CHECK(res == 9, "fetch_and_op that failed wrote the result buffer (%d)", res);
    MPI_Win_fence(0, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(mem[0] == before, "rejected accumulates changed the target (%d, was %d)", mem[0],
              before);
    }
    MPI_Win_set_errhandler(win, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Win win;
    int    *mem;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win);
    int_ops(win, mem);
    replace_noop(win, mem);
    op_type_checks(win, mem);
    MPI_Win_free(&win);
    double_ops();
    loc_ops();
    long_get_accumulate();
    return mpitest_finish();
}
