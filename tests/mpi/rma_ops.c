/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One-sided operations x synchronisation modes x window flavours against a
 * serial reference. Every rank starts with win[i] = rank * 1000 + i, then in
 * one epoch: puts 8 ints (contiguous) and 4 ints (strided target type) to
 * rank+1, gets 8 ints from rank+2 (contiguous into a strided origin type),
 * accumulates SUM into rank 0 (derived types both sides) and MAX into
 * rank+1, get_accumulates into rank 0, fetch_and_op +1 and compare_and_swap
 * on rank 0. After the epoch every rank checks its whole window byte for byte.
 */
#include <stdint.h>
#include "mpitest.h"

#define N 64

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_DYNAMIC, NFLAVORS };
enum { S_FENCE, S_PSCW, S_LOCK, S_LOCK_ALL, S_REQUESTS, NSYNCS };
static const char *fname[] = {"create", "allocate", "allocate_shared", "dynamic"};
static const char *sname[] = {"fence", "pscw", "lock", "lock_all", "requests"};

static int      rank, size;
static MPI_Aint dyn_base[1024];
static int      flavor;

static MPI_Aint disp_of(int target, int i)
{
    return flavor == F_DYNAMIC ? dyn_base[target] + (MPI_Aint)i * (MPI_Aint)sizeof(int) : i;
}

static int initial(int r, int i)
{
    return r * 1000 + i;
}

/* Expected contents of rank me's window after one epoch. */
static void reference(int me, int *ref)
{
    int left = (me - 1 + size) % size, left2 = (me - 2 + size) % size;
    (void)left2;
    for (int i = 0; i < N; i++) {
        ref[i] = initial(me, i);
    }
    /* put from left: slots 0..7 = left*100 + k */
    for (int k = 0; k < 8; k++) {
        ref[k] = left * 100 + k;
    }
    /* strided put from left: slots 16,18,20,22 = -(left+1)*10 - k */
    for (int k = 0; k < 4; k++) {
        ref[16 + 2 * k] = -(left + 1) * 10 - k;
    }
    /* MAX from left into 24..27: max(initial, left*2000 + k) */
    for (int k = 0; k < 4; k++) {
        int v = left * 2000 + k;
        ref[24 + k] = v > ref[24 + k] ? v : ref[24 + k];
    }
    if (me == 0) {
        /* SUM from every rank into 32,34,36,38 (strided): + (r+1)*(k+1) */
        for (int r = 0; r < size; r++) {
            for (int k = 0; k < 4; k++) {
                ref[32 + 2 * k] += (r + 1) * (k + 1);
            }
        }
        /* get_accumulate SUM of 1 into 40..43 from everyone */
        for (int k = 0; k < 4; k++) {
            ref[40 + k] += size;
        }
        ref[44] += size; /* fetch_and_op */
        /* 45: compare_and_swap: one rank swapped initial -> -1 - r; checked separately */
    }
}

static void do_ops(MPI_Win win, MPI_Datatype strided4, MPI_Datatype strided8, int sync,
                   int *got, int *fetched, int *fop_old, int *cas_old)
{
    int          right = (rank + 1) % size, right2 = (rank + 2) % size;
    int          put8[8], put4[4], max4[4], sum4[4], one4[4] = {1, 1, 1, 1}, one = 1;
    int          swap = -1 - rank, compare = initial(0, 45);
    MPI_Request  reqs[8];
    int          nreq = 0, req = sync == S_REQUESTS;

    for (int k = 0; k < 8; k++) {
        put8[k] = rank * 100 + k;
    }
    for (int k = 0; k < 4; k++) {
        put4[k] = -(rank + 1) * 10 - k;
        max4[k] = rank * 2000 + k;
        sum4[k] = (rank + 1) * (k + 1);
    }
    if (req) {
        CHECK_OK(MPI_Rput(put8, 8, MPI_INT, right, disp_of(right, 0), 8, MPI_INT, win, &reqs[nreq++]));
        CHECK_OK(MPI_Rput(put4, 4, MPI_INT, right, disp_of(right, 16), 1, strided4, win, &reqs[nreq++]));
        CHECK_OK(MPI_Rget(got, 1, strided8, right2, disp_of(right2, 48), 8, MPI_INT, win, &reqs[nreq++]));
        CHECK_OK(MPI_Raccumulate(max4, 4, MPI_INT, right, disp_of(right, 24), 4, MPI_INT, MPI_MAX, win, &reqs[nreq++]));
        CHECK_OK(MPI_Raccumulate(sum4, 4, MPI_INT, 0, disp_of(0, 32), 1, strided4, MPI_SUM, win, &reqs[nreq++]));
        CHECK_OK(MPI_Rget_accumulate(one4, 4, MPI_INT, fetched, 4, MPI_INT, 0, disp_of(0, 40), 4, MPI_INT, MPI_SUM, win, &reqs[nreq++]));
        CHECK_OK(MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE));
    } else {
        CHECK_OK(MPI_Put(put8, 8, MPI_INT, right, disp_of(right, 0), 8, MPI_INT, win));
        CHECK_OK(MPI_Put(put4, 4, MPI_INT, right, disp_of(right, 16), 1, strided4, win));
        CHECK_OK(MPI_Get(got, 1, strided8, right2, disp_of(right2, 48), 8, MPI_INT, win));
        CHECK_OK(MPI_Accumulate(max4, 4, MPI_INT, right, disp_of(right, 24), 4, MPI_INT, MPI_MAX, win));
        CHECK_OK(MPI_Accumulate(sum4, 4, MPI_INT, 0, disp_of(0, 32), 1, strided4, MPI_SUM, win));
        CHECK_OK(MPI_Get_accumulate(one4, 4, MPI_INT, fetched, 4, MPI_INT, 0, disp_of(0, 40), 4, MPI_INT, MPI_SUM, win));
    }
    CHECK_OK(MPI_Fetch_and_op(&one, fop_old, MPI_INT, 0, disp_of(0, 44), MPI_SUM, win));
    CHECK_OK(MPI_Compare_and_swap(&swap, &compare, cas_old, MPI_INT, 0, disp_of(0, 45), win));
}

static void run(int sync, MPI_Datatype strided4, MPI_Datatype strided8)
{
    MPI_Win  win;
    int     *mem = NULL, ref[N], got[16], fetched[4], fop_old = -7, cas_old = -7;
    int      right = (rank + 1) % size, right2 = (rank + 2) % size;
    MPI_Aint addr;

    switch (flavor) {
    case F_CREATE:
        mem = malloc(N * sizeof(int));
        CHECK_OK(MPI_Win_create(mem, N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        break;
    case F_ALLOCATE:
        CHECK_OK(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        break;
    case F_SHARED:
        CHECK_OK(MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win));
        break;
    default:
        mem = malloc(N * sizeof(int));
        CHECK_OK(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
        CHECK_OK(MPI_Win_attach(win, mem, N * sizeof(int)));
        MPI_Get_address(mem, &addr);
        MPI_Allgather(&addr, 1, MPI_AINT, dyn_base, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    for (int i = 0; i < N; i++) {
        mem[i] = initial(rank, i);
    }
    for (int i = 0; i < 16; i++) {
        got[i] = -5;
    }
    MPI_Barrier(MPI_COMM_WORLD);

    if (sync == S_FENCE) {
        CHECK_OK(MPI_Win_fence(MPI_MODE_NOPRECEDE, win));
        do_ops(win, strided4, strided8, sync, got, fetched, &fop_old, &cas_old);
        CHECK_OK(MPI_Win_fence(MPI_MODE_NOSUCCEED, win));
    } else if (sync == S_PSCW) {
        /* Access group: right, right2, 0; exposure group: whoever targets me. */
        int       acc[3] = {right, right2, 0}, nacc = 0, exp[1024], nexp = 0, uniq[3];
        MPI_Group world, ga, ge;
        for (int i = 0; i < 3; i++) {
            int dup = 0;
            for (int j = 0; j < nacc; j++) dup |= uniq[j] == acc[i];
            if (!dup) uniq[nacc++] = acc[i];
        }
        for (int o = 0; o < size; o++) {
            if ((o + 1) % size == rank || (o + 2) % size == rank || rank == 0) {
                exp[nexp++] = o;
            }
        }
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Group_incl(world, nacc, uniq, &ga);
        MPI_Group_incl(world, nexp, exp, &ge);
        CHECK_OK(MPI_Win_post(ge, 0, win));
        CHECK_OK(MPI_Win_start(ga, 0, win));
        do_ops(win, strided4, strided8, sync, got, fetched, &fop_old, &cas_old);
        CHECK_OK(MPI_Win_complete(win));
        if (rank % 2) {
            int flag = 0;
            while (!flag) CHECK_OK(MPI_Win_test(win, &flag));
        } else {
            CHECK_OK(MPI_Win_wait(win));
        }
        MPI_Group_free(&ga);
        MPI_Group_free(&ge);
        MPI_Group_free(&world);
    } else if (sync == S_LOCK) {
        /* Lock each distinct target once; exclusive on rank 0. */
        int tg[3] = {right, right2, 0};
        for (int i = 0; i < 3; i++) {
            int dup = 0;
            for (int j = 0; j < i; j++) dup |= tg[j] == tg[i];
            if (!dup) CHECK_OK(MPI_Win_lock(tg[i] == 0 ? MPI_LOCK_EXCLUSIVE : MPI_LOCK_SHARED, tg[i], 0, win));
        }
        do_ops(win, strided4, strided8, sync, got, fetched, &fop_old, &cas_old);
        CHECK_OK(MPI_Win_flush_all(win));
        for (int i = 0; i < 3; i++) {
            int dup = 0;
            for (int j = 0; j < i; j++) dup |= tg[j] == tg[i];
            if (!dup) CHECK_OK(MPI_Win_unlock(tg[i], win));
        }
        MPI_Barrier(MPI_COMM_WORLD);
    } else {
        CHECK_OK(MPI_Win_lock_all(0, win));
        do_ops(win, strided4, strided8, sync, got, fetched, &fop_old, &cas_old);
        CHECK_OK(MPI_Win_flush(0, win));
        CHECK_OK(MPI_Win_flush_local_all(win));
        CHECK_OK(MPI_Win_unlock_all(win));
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_OK(MPI_Win_sync(win));

    /* The gets read rank+2's untouched slots 48..55 into every other int. */
    for (int k = 0; k < 8; k++) {
        CHECK(got[2 * k] == initial(right2, 48 + k), "%s/%s: get[%d] = %d, want %d", fname[flavor],
              sname[sync], k, got[2 * k], initial(right2, 48 + k));
        CHECK(got[2 * k + 1] == -5, "%s/%s: get wrote a gap", fname[flavor], sname[sync]);
    }
    /* Fetched values are initial + (number of earlier adders): in range. */
    for (int k = 0; k < 4; k++) {
        int base = initial(0, 40 + k);
        CHECK(fetched[k] >= base && fetched[k] < base + size, "%s/%s: get_accumulate fetched %d",
              fname[flavor], sname[sync], fetched[k]);
    }
    CHECK(fop_old >= initial(0, 44) && fop_old < initial(0, 44) + size,
          "%s/%s: fetch_and_op fetched %d", fname[flavor], sname[sync], fop_old);
    {
        /* Exactly one compare_and_swap saw the initial value; fop results are distinct. */
        int won = cas_old == initial(0, 45), nwon = 0, olds[1024];
        MPI_Allreduce(&won, &nwon, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        CHECK(nwon == 1, "%s/%s: %d ranks won the compare_and_swap", fname[flavor], sname[sync], nwon);
        MPI_Allgather(&fop_old, 1, MPI_INT, olds, 1, MPI_INT, MPI_COMM_WORLD);
        for (int a = 0; a < size; a++)
            for (int b = a + 1; b < size; b++)
                CHECK(olds[a] != olds[b], "%s/%s: two fetch_and_op got %d", fname[flavor], sname[sync], olds[a]);
    }
    reference(rank, ref);
    for (int i = 0; i < N; i++) {
        if (rank == 0 && i == 45) {
            CHECK(mem[i] <= -1 && mem[i] >= -size, "%s/%s: cas slot %d", fname[flavor], sname[sync], mem[i]);
            continue;
        }
        CHECK(mem[i] == ref[i], "%s/%s: rank %d slot %d = %d, want %d", fname[flavor], sname[sync],
              rank, i, mem[i], ref[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (flavor == F_DYNAMIC) {
        CHECK_OK(MPI_Win_detach(win, mem));
    }
    CHECK_OK(MPI_Win_free(&win));
    CHECK(win == MPI_WIN_NULL, "win not reset");
    if (flavor == F_CREATE || flavor == F_DYNAMIC) {
        free(mem);
    }
}

int main(int argc, char **argv)
{
    MPI_Datatype strided4, strided8;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Type_vector(4, 1, 2, MPI_INT, &strided4);
    MPI_Type_commit(&strided4);
    MPI_Type_vector(8, 1, 2, MPI_INT, &strided8);
    MPI_Type_commit(&strided8);
    for (flavor = 0; flavor < NFLAVORS; flavor++) {
        const char *ppn = getenv("WEFT_RMA_FAKE_PPN");
        if (flavor == F_SHARED && ppn != NULL && atoi(ppn) > 0 && atoi(ppn) < size) {
            if (rank == 0) {
                printf("allocate_shared: skipped (WEFT_RMA_FAKE_PPN splits the ranks into nodes)\n");
            }
            continue;
        }
        for (int sync = 0; sync < NSYNCS; sync++) {
            run(sync, strided4, strided8);
        }
    }
    MPI_Type_free(&strided4);
    MPI_Type_free(&strided8);
    return mpitest_finish();
}
