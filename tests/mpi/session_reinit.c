/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Re-initialisation with sessions (MPI-4): after the last session is
 * finalized, MPI_Session_init starts the runtime again. Five cycles of
 * Session_init -> communicator from mpi://WORLD -> traffic (ring exchange
 * of eager and rendezvous sizes, allreduce, a buffered send through a
 * session buffer, a partitioned exchange) -> Comm_free -> Session_finalize,
 * each checked byte for byte, with MPI_Initialized / MPI_Finalized
 * unchanged by the cycles. argv[1]: "sessions" (only sessions),
 * "world-first" (MPI_Init/MPI_Finalize before the cycles) or "world-last"
 * (MPI_Init/MPI_Finalize after them, which is allowed since the world model
 * never started), or "threads" (MPI_THREAD_MULTIPLE sessions, then a world
 * round with MPI_Init_thread(MPI_THREAD_MULTIPLE); each time a second
 * thread runs an allreduce on a duplicate communicator while the first
 * runs its own: the big lock must be free after every Session_finalize, or
 * the second thread waits forever).
 */
#include "sessiontest.h"

#include <pthread.h>

enum { CYCLES = 5, BIG = 100000 };

static int threads_mode;

typedef struct {
    MPI_Comm comm;
    int      cycle, rank, sum;
} helper_arg_t;

static void *helper_allreduce(void *p)
{
    helper_arg_t *a = p;
    int           v = a->rank + 1000 * a->cycle;

    CHECK_OK(MPI_Allreduce(&v, &a->sum, 1, MPI_INT, MPI_SUM, a->comm));
    return NULL;
}

/* Two threads in MPI at once: an allreduce on comm and, in a second
 * thread, one on a duplicate of it (cycle c). */
static void two_thread_allreduce(MPI_Comm comm, int c)
{
    helper_arg_t a = {.cycle = c};
    pthread_t    th;
    int          size, sum = 0;

    MPI_Comm_rank(comm, &a.rank);
    MPI_Comm_size(comm, &size);
    CHECK_OK(MPI_Comm_dup(comm, &a.comm));
    pthread_create(&th, NULL, helper_allreduce, &a);
    CHECK_OK(MPI_Allreduce(&a.rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    pthread_join(th, NULL);
    CHECK(sum == size * (size - 1) / 2, "cycle %d allreduce %d", c, sum);
    CHECK(a.sum == size * (size - 1) / 2 + 1000 * c * size, "cycle %d helper allreduce %d", c,
          a.sum);
    CHECK_OK(MPI_Comm_free(&a.comm));
}

static void world_round(void)
{
    int rank, size, sum = 0, provided = 0;
    MPI_Init_thread(NULL, NULL, threads_mode ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    me = rank;
    if (threads_mode) {
        CHECK(provided == MPI_THREAD_MULTIPLE, "world: provided %d", provided);
        two_thread_allreduce(MPI_COMM_WORLD, CYCLES);
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size * (size - 1) / 2, "world allreduce %d", sum);
    MPI_Finalize();
}

static void cycle(int c)
{
    MPI_Session s;
    MPI_Group   g;
    MPI_Comm    comm;
    int         rank, size, next, prev, sum = 0;
    char       *sbuf = malloc(BIG), *rbuf = malloc(BIG);
    char       *bbuf = malloc(BIG + MPI_BSEND_OVERHEAD);

    MPI_Info info = MPI_INFO_NULL;

    if (threads_mode) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "thread_level", "MPI_THREAD_MULTIPLE");
    }
    CHECK_OK(MPI_Session_init(info, MPI_ERRORS_RETURN, &s));
    if (info != MPI_INFO_NULL) {
        char level[32];
        int  len = (int)sizeof(level), flag = 0;
        MPI_Info_free(&info);
        CHECK_OK(MPI_Session_get_info(s, &info));
        MPI_Info_get_string(info, "thread_level", &len, level, &flag);
        MPI_Info_free(&info);
        CHECK(flag && strcmp(level, "MPI_THREAD_MULTIPLE") == 0, "cycle %d: thread_level %s", c,
              flag ? level : "(unset)");
    }
    CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_OK(MPI_Comm_create_from_group(g, "weft.test.reinit", MPI_INFO_NULL, MPI_ERRORS_RETURN,
                                        &comm));
    MPI_Group_free(&g);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    me   = rank;
    next = (rank + 1) % size;
    prev = (rank + size - 1) % size;

    /* ring exchange: eager and rendezvous sizes */
    for (int n = 1; n <= BIG; n *= 10) {
        for (int i = 0; i < n; i++) {
            sbuf[i] = (char)(i + rank + c);
        }
        CHECK_OK(MPI_Sendrecv(sbuf, n, MPI_CHAR, next, c, rbuf, n, MPI_CHAR, prev, c, comm,
                              MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            if (rbuf[i] != (char)(i + prev + c)) {
                CHECK(0, "cycle %d size %d: byte %d", c, n, i);
                break;
            }
        }
    }
    if (threads_mode) {
        two_thread_allreduce(comm, c);
    }
    CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm));
    CHECK(sum == size * (size - 1) / 2, "cycle %d allreduce %d", c, sum);

    /* buffered send through the session's buffer */
    CHECK_OK(MPI_Session_attach_buffer(s, bbuf, BIG + MPI_BSEND_OVERHEAD));
    memset(sbuf, c + rank, BIG);
    CHECK_OK(MPI_Bsend(sbuf, BIG, MPI_CHAR, next, 99, comm));
    memset(sbuf, 0, BIG);
    CHECK_OK(MPI_Recv(rbuf, BIG, MPI_CHAR, prev, 99, comm, MPI_STATUS_IGNORE));
    CHECK(rbuf[0] == (char)(c + prev) && rbuf[BIG - 1] == (char)(c + prev), "cycle %d bsend", c);

    /* partitioned exchange, 3 send partitions into 2 receive partitions */
    {
        int         sp[6], rp[6];
        MPI_Request r[2];
        for (int i = 0; i < 6; i++) {
            sp[i] = 100 * c + 10 * rank + i;
            rp[i] = -1;
        }
        CHECK_OK(MPI_Psend_init(sp, 3, 2, MPI_INT, next, 5, comm, MPI_INFO_NULL, &r[0]));
        CHECK_OK(MPI_Precv_init(rp, 2, 3, MPI_INT, prev, 5, comm, MPI_INFO_NULL, &r[1]));
        CHECK_OK(MPI_Startall(2, r));
        CHECK_OK(MPI_Pready_range(0, 2, r[0]));
        CHECK_OK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
        for (int i = 0; i < 6; i++) {
            CHECK(rp[i] == 100 * c + 10 * prev + i, "cycle %d partitioned [%d] = %d", c, i, rp[i]);
        }
        MPI_Request_free(&r[0]);
        MPI_Request_free(&r[1]);
    }

    CHECK_OK(MPI_Comm_free(&comm));
    CHECK_OK(MPI_Session_finalize(&s)); /* the buffer is flushed and detached */
    CHECK(s == MPI_SESSION_NULL, "session handle not reset");
    free(sbuf);
    free(rbuf);
    free(bbuf);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "sessions";
    int         world_first = strcmp(mode, "world-first") == 0;
    int         world_last  = strcmp(mode, "world-last") == 0 || strcmp(mode, "threads") == 0;
    int         flag;

    threads_mode = strcmp(mode, "threads") == 0;
    if (world_first) {
        world_round();
    }
    for (int c = 0; c < CYCLES; c++) {
        cycle(c);
        MPI_Initialized(&flag);
        CHECK(flag == world_first, "cycle %d: MPI_Initialized %d", c, flag);
        MPI_Finalized(&flag);
        CHECK(flag == world_first, "cycle %d: MPI_Finalized %d", c, flag);
    }
    if (world_last) {
        world_round();
        MPI_Finalized(&flag);
        CHECK(flag, "MPI_Finalized false after MPI_Finalize");
    }
    if (me == 0 && errors == 0) {
        printf("No Errors\n");
    }
    return errors ? 1 : 0;
}
