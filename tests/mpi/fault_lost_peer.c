/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * fault_lost_peer MODE: a process dies (SIGKILL) while others wait for it.
 * Run by tests/mpi/test_fault.py (needs mpirun -disable-auto-cleanup; not in
 * the manifest: the job's exit code is the dead rank's).
 *
 *   return  (np >= 2) MPI_ERRORS_RETURN. The last rank posts a receive and
 *           kills itself. Rank 0 has a receive and a rendezvous send pending
 *           on it: both complete with MPI_ERR_OTHER (the ABI has no
 *           MPI_ERR_PROC_FAILED), as do a new send to it and an ANY_SOURCE
 *           receive on MPI_COMM_WORLD; the other survivors' blocking receives
 *           from it fail too. Then every survivor checks data over
 *           MPI_COMM_SELF and an allreduce over a communicator without the
 *           dead rank, prints "survivor R ok", and finalizes.
 *   fatal   the same death with MPI_ERRORS_ARE_FATAL: rank 0's receive must
 *           end the job (the message names the lost rank). Never prints ok.
 *   poll    (np >= 2) MPI_ERRORS_RETURN; the last rank, which never
 *           exchanges a message, kills itself while every survivor polls
 *           MPI_Test (never a wait) on a receive from it: the test must complete with MPI_ERR_OTHER (the loss is
 *           noticed from the progress engine, not only inside waits).
 *           FAULT_VICTIM=R makes rank R the one that dies.
 *   rma     (np >= 2) a window (MPI_Win_allocate, MPI_ERRORS_RETURN); the
 *           last rank takes an exclusive lock on rank 0's memory, tells the
 *           others and kills itself. The survivors' exclusive lock of rank
 *           0 (the dead rank holds it) is granted or fails, a fence (the dead rank never comes)
 *           and an access epoch on a group holding the dead rank (it never
 *           posts) fail with MPI_ERR_OTHER instead of waiting forever.
 *   rmaput  (np >= 2) a window in a passive epoch (lock_all) that is not in
 *           shared memory (WEFT_USE_SHM_ONE_SIDED=0, or ranks on different
 *           hosts: a shared-memory window stays mapped, so access to a dead
 *           rank's part completes); the last rank kills itself; rank 0's
 *           puts and gets to it, then MPI_Win_flush_all, must fail with
 *           MPI_ERR_OTHER, never wait for completions a dead target cannot
 *           send (active messages, and libfabric RMA with
 *           WEFT_RMA_NET=native), and finalize must not wait for them.
 *   spawn   (np 1) spawns one child (this program, "child"), which answers
 *           once and kills itself; the parent's pending receive on the
 *           intercommunicator fails with MPI_ERR_OTHER, MPI_Comm_disconnect
 *           returns, the parent finalizes.
 *   spawn-poll  the same, the parent polling MPI_Test on that receive.
 */
#include <signal.h>
#include <unistd.h>

#include "mpitest.h"

#define BIG (4 << 20) /* above every eager threshold: a rendezvous */

static void die_soon(void)
{
    fflush(stdout);
    fflush(stderr);
    usleep(300000); /* the others are waiting by now */
    raise(SIGKILL);
}

/* Rank and size of MPI_COMM_WORLD; 0 (and the skip printed) below 2 processes. */
static int two_or_more(int *rank, int *size)
{
    MPI_Comm_rank(MPI_COMM_WORLD, rank);
    MPI_Comm_size(MPI_COMM_WORLD, size);
    if (*size < 2) {
        printf("fault_lost_peer needs 2 processes or more; skipped\nNo Errors\n");
        return 0;
    }
    return 1;
}

static void survivor_checks(int rank, MPI_Comm rest, int nrest)
{
    int out = rank * 7 + 1, in = -1, sum = -1;

    CHECK_OK(MPI_Sendrecv(&out, 1, MPI_INT, 0, 5, &in, 1, MPI_INT, 0, 5, MPI_COMM_SELF,
                          MPI_STATUS_IGNORE));
    CHECK(in == out, "COMM_SELF sendrecv got %d, expected %d", in, out);
    CHECK_OK(MPI_Allreduce(&out, &sum, 1, MPI_INT, MPI_SUM, rest));
    int want = 0;
    for (int r = 0; r < nrest; r++) {
        want += r * 7 + 1;
    }
    CHECK(sum == want, "allreduce without the dead rank: %d, expected %d", sum, want);
}

static void run_world(int fatal)
{
    int      rank, size, victim, cls;
    MPI_Comm rest;

    if (!two_or_more(&rank, &size)) {
        return;
    }
    victim = size - 1;
    if (!fatal) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    }
    /* Everyone has talked to the victim (the netmod watches peers it has
     * exchanged messages with), and the communicator without it exists. */
    int token = rank;
    if (rank != victim) {
        CHECK_OK(MPI_Send(&token, 1, MPI_INT, victim, 1, MPI_COMM_WORLD));
        CHECK_OK(MPI_Recv(&token, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    } else {
        for (int r = 0; r < size - 1; r++) {
            MPI_Status st;
            MPI_Recv(&token, 1, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st);
            MPI_Send(&token, 1, MPI_INT, st.MPI_SOURCE, 1, MPI_COMM_WORLD);
        }
    }
    MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &rest);
    /* a collective before the loss: the node's shared-memory region exists,
     * so the collectives below must not wait on its counters forever */
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

    if (rank == victim) {
        MPI_Request r;
        MPI_Irecv(&token, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &r);
        die_soon();
    }
    if (rank == 0) {
        char       *big = malloc(BIG);
        int         got = -1;
        MPI_Request reqs[2];
        MPI_Status  st;
        memset(big, 0x5a, BIG);
        CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, victim, 3, MPI_COMM_WORLD, &reqs[0]));
        CHECK_OK(MPI_Isend(big, BIG, MPI_CHAR, victim, 4, MPI_COMM_WORLD, &reqs[1]));
        int rc = MPI_Wait(&reqs[0], &st); /* fatal mode ends here */
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "pending receive from the dead rank: class %d", cls);
        rc = MPI_Wait(&reqs[1], MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "pending rendezvous send to the dead rank: class %d", cls);
        rc = MPI_Send(&got, 1, MPI_INT, victim, 5, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "new send to the dead rank: class %d", cls);
        rc = MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &st);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "ANY_SOURCE receive with a dead rank in the comm: class %d",
              cls);
        free(big);
    } else {
        int got = -1;
        int rc  = MPI_Recv(&got, 1, MPI_INT, victim, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "blocking receive from the dead rank: class %d", cls);
    }
    /* collectives on a communicator holding the dead rank fail, never hang */
    int rc = MPI_Barrier(MPI_COMM_WORLD);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "barrier with the dead rank: class %d", cls);
    int one = 1, sum = 0;
    MPI_Request cr;
    rc = MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &cr);
    if (rc == MPI_SUCCESS) {
        rc = MPI_Wait(&cr, MPI_STATUS_IGNORE);
    }
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "iallreduce with the dead rank: class %d", cls);
    survivor_checks(rank, rest, size - 1);
    MPI_Comm_free(&rest);
    printf("survivor %d ok\n", rank);
    fflush(stdout);
}

/* Poll req with MPI_Test until it completes (30 s at most); its error class. */
static int test_until_done(MPI_Request *req)
{
    double t0 = MPI_Wtime();
    int    flag = 0, rc = MPI_SUCCESS, cls = -1;

    while (!flag && MPI_Wtime() - t0 < 30.0) {
        rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    }
    CHECK(flag, "MPI_Test never completed the receive from the dead process");
    MPI_Error_class(rc, &cls);
    return cls;
}

static void run_poll(void)
{
    int rank, size, token = 0;

    if (!two_or_more(&rank, &size)) {
        return;
    }
    const char *v      = getenv("FAULT_VICTIM"); /* default: the last rank */
    int         victim = v ? atoi(v) : size - 1;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    /* No message ever goes to or from the victim (no connection, so no
     * network keepalive): only the pid watch on its host, or the launcher's
     * report elsewhere, can tell the others. */
    if (rank == victim) {
        die_soon();
    }
    MPI_Request r;
    CHECK_OK(MPI_Irecv(&token, 1, MPI_INT, victim, 7, MPI_COMM_WORLD, &r));
    int cls = test_until_done(&r);
    CHECK(cls == MPI_ERR_OTHER, "polled receive from the dead rank: class %d", cls);
    printf("survivor %d ok\n", rank);
    fflush(stdout);
}

static void run_rma(void)
{
    int      rank, size, cls, note = 0;
    int     *base = NULL;
    MPI_Win  win;

    if (!two_or_more(&rank, &size)) {
        return;
    }
    int      victim = size - 1;
    MPI_Comm rest;
    MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &rest);
    CHECK_OK(MPI_Win_allocate(sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        for (int r = 0; r < victim; r++) {
            MPI_Send(&note, 1, MPI_INT, r, 8, MPI_COMM_WORLD);
        }
        for (int r = 0; r < victim; r++) { /* delivered (a netmod may hold sends until progress) */
            MPI_Recv(&note, 1, MPI_INT, r, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        die_soon();
    }
    CHECK_OK(MPI_Recv(&note, 1, MPI_INT, victim, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Send(&note, 1, MPI_INT, victim, 9, MPI_COMM_WORLD));
    /* The active-message path hands the lock on (rank 0's service forgets
     * the dead holder); the shared-memory lock word cannot tell who holds
     * it, so that wait fails. Either way it returns. */
    int rc = MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER || cls == MPI_SUCCESS, "exclusive lock held by the dead rank: class %d",
          cls);
    if (cls == MPI_SUCCESS) {
        CHECK_OK(MPI_Win_unlock(0, win));
    }
    rc = MPI_Win_fence(0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "fence with the dead rank: class %d", cls);
    MPI_Group world_group, dead_group;
    MPI_Comm_group(MPI_COMM_WORLD, &world_group);
    MPI_Group_incl(world_group, 1, &victim, &dead_group);
    rc = MPI_Win_start(dead_group, 0, win);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_OTHER, "access epoch waiting for the dead rank's post: class %d", cls);
    MPI_Group_free(&dead_group);
    MPI_Group_free(&world_group);
    /* rank 0 serves the others' lock requests (active messages) until all are done */
    CHECK_OK(MPI_Barrier(rest));
    MPI_Comm_free(&rest);
    printf("survivor %d ok\n", rank);
    fflush(stdout);
}

static void run_rmaput(void)
{
    int      rank, size, cls;
    char    *base = NULL;
    MPI_Win  win;
    enum { BYTES = 1 << 20 };

    if (!two_or_more(&rank, &size)) {
        return;
    }
    int victim = size - 1;
    CHECK_OK(MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Win_lock_all(0, win));
    CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
    if (rank == victim) {
        die_soon();
    }
    if (rank == 0) {
        char *buf = malloc(BYTES);
        memset(buf, 0x3c, BYTES);
        usleep(600000); /* it is dead by now */
        int rc = MPI_SUCCESS;
        for (int i = 0; i < 8 && rc == MPI_SUCCESS; i++) {
            rc = MPI_Put(buf, BYTES, MPI_CHAR, victim, 0, BYTES, MPI_CHAR, win);
            if (rc == MPI_SUCCESS) {
                rc = MPI_Get(buf, BYTES / 2, MPI_CHAR, victim, 0, BYTES / 2, MPI_CHAR, win);
            }
        }
        if (rc == MPI_SUCCESS) {
            rc = MPI_Win_flush_all(win);
        }
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_OTHER, "puts and gets to the dead rank, then flush: class %d", cls);
        free(buf);
    }
    printf("survivor %d ok\n", rank);
    fflush(stdout);
}

static void run_spawn(char *prog, int poll_only)
{
    MPI_Comm parent, child;
    int      errcode = -1, got = -1, cls;

    MPI_Comm_get_parent(&parent);
    if (parent != MPI_COMM_NULL) { /* the child */
        int v = 42;
        MPI_Send(&v, 1, MPI_INT, 0, 1, parent);
        die_soon();
    }
    char *args[] = {poll_only ? "spawn-poll" : "spawn", NULL};
    CHECK_OK(MPI_Comm_spawn(prog, args, 1, MPI_INFO_NULL, 0, MPI_COMM_SELF, &child, &errcode));
    CHECK(errcode == MPI_SUCCESS, "errcode %d", errcode);
    MPI_Comm_set_errhandler(child, MPI_ERRORS_RETURN);
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, 0, 1, child, MPI_STATUS_IGNORE));
    CHECK(got == 42, "child sent %d", got);
    MPI_Request r;
    CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, 0, 2, child, &r));
    if (poll_only) {
        cls = test_until_done(&r);
    } else {
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        MPI_Error_class(rc, &cls);
    }
    CHECK(cls == MPI_ERR_OTHER, "receive from the dead child: class %d", cls);
    CHECK_OK(MPI_Comm_disconnect(&child));
    CHECK(child == MPI_COMM_NULL, "disconnect left the handle");
    printf("parent ok\n");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "return";

    MPI_Init(&argc, &argv);
    if (strncmp(mode, "spawn", 5) == 0) {
        run_spawn(argv[0], strcmp(mode, "spawn-poll") == 0);
    } else if (strcmp(mode, "poll") == 0) {
        run_poll();
    } else if (strcmp(mode, "rma") == 0) {
        run_rma();
    } else if (strcmp(mode, "rmaput") == 0) {
        run_rmaput();
    } else {
        run_world(strcmp(mode, "fatal") == 0);
    }
    return mpitest_finish();
}
