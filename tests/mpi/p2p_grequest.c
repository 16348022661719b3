/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Generalized requests: Grequest_start; Test before completion gives flag 0
 * and calls neither query_fn nor free_fn; Grequest_complete from the same
 * thread and from another thread (MPI_THREAD_MULTIPLE); Wait calls query_fn
 * (status set with MPI_Status_set_source/tag/elements/cancelled) and free_fn
 * exactly once; Waitall mixing a generalized and a point-to-point request;
 * Request_free of a generalized request before completion; Cancel calls
 * cancel_fn with complete=0/1. Every rank does it independently.
 */
#include "mpitest.h"

#include <pthread.h>
#include <unistd.h>

struct state {
    int queries, frees, cancels, last_complete;
    int src, tag, elems;
    int release; /* for the completing thread */
    MPI_Request req;
};

static int query_fn(void *extra, MPI_Status *st)
{
    struct state *s = extra;
    s->queries++;
    MPI_Status_set_source(st, s->src);
    MPI_Status_set_tag(st, s->tag);
    MPI_Status_set_elements(st, MPI_BYTE, s->elems);
    MPI_Status_set_cancelled(st, 0);
    return MPI_SUCCESS;
}

static int free_fn(void *extra)
{
    ((struct state *)extra)->frees++;
    return MPI_SUCCESS;
}

static int cancel_fn(void *extra, int complete)
{
    struct state *s = extra;
    s->cancels++;
    s->last_complete = complete;
    return MPI_SUCCESS;
}

static void *completer(void *arg)
{
    struct state *s = arg;
    usleep(100000);
    MPI_Grequest_complete(s->req);
    return NULL;
}

int main(int argc, char **argv)
{
    int rank, size, provided = -1;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* 1. same-thread completion */
    {
        struct state s = {.src = rank, .tag = 1234, .elems = 42};
        MPI_Request  r;
        MPI_Status   st;
        int          flag = -1, count = -1;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
        CHECK(r != MPI_REQUEST_NULL, "Grequest_start gave MPI_REQUEST_NULL");
        for (int i = 0; i < 10; i++) {
            CHECK_OK(MPI_Test(&r, &flag, &st));
            CHECK(flag == 0, "Test before Grequest_complete: flag %d", flag);
        }
        CHECK(s.queries == 0 && s.frees == 0, "callbacks before completion: query %d free %d", s.queries, s.frees);
        CHECK(r != MPI_REQUEST_NULL, "incomplete generalized request freed by Test");
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(r == MPI_REQUEST_NULL, "Wait did not free the generalized request");
        CHECK(s.queries == 1 && s.frees == 1, "after Wait: query called %d times, free %d times", s.queries, s.frees);
        MPI_Get_count(&st, MPI_BYTE, &count);
        flag = 1;
        MPI_Test_cancelled(&st, &flag);
        CHECK(st.MPI_SOURCE == rank && st.MPI_TAG == 1234 && count == 42 && flag == 0,
              "status from query_fn: source %d tag %d count %d cancelled %d", st.MPI_SOURCE, st.MPI_TAG, count, flag);
        CHECK(s.cancels == 0, "cancel_fn called %d times without MPI_Cancel", s.cancels);
    }

    /* 2. completion from another thread while Wait blocks */
    if (provided == MPI_THREAD_MULTIPLE) {
        struct state s = {.src = 7, .tag = 8, .elems = 9};
        MPI_Status   st;
        pthread_t    th;
        int          count = -1;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &s.req));
        MPI_Request r = s.req;
        pthread_create(&th, NULL, completer, &s);
        CHECK_OK(MPI_Wait(&r, &st));
        pthread_join(th, NULL);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(s.queries == 1 && s.frees == 1 && st.MPI_SOURCE == 7 && st.MPI_TAG == 8 && count == 9,
              "thread completion: query %d free %d source %d tag %d count %d", s.queries, s.frees, st.MPI_SOURCE,
              st.MPI_TAG, count);
    } else if (rank == 0) {
        printf("p2p_grequest: MPI_THREAD_MULTIPLE not provided (%d), thread completion skipped\n", provided);
    }

    /* 3. Waitall with a generalized request and a ring exchange; Testall
     * reports incomplete while the grequest is pending. */
    {
        struct state s = {.src = 1, .tag = 2, .elems = 3};
        MPI_Request  r[3];
        MPI_Status   st[3];
        int          v = rank, w = -1, flag = -1;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r[0]));
        CHECK_OK(MPI_Irecv(&w, 1, MPI_INT, (rank + size - 1) % size, 5, MPI_COMM_WORLD, &r[1]));
        CHECK_OK(MPI_Isend(&v, 1, MPI_INT, (rank + 1) % size, 5, MPI_COMM_WORLD, &r[2]));
        CHECK_OK(MPI_Testall(3, r, &flag, MPI_STATUSES_IGNORE));
        CHECK(flag == 0, "Testall with a pending generalized request: flag %d", flag);
        CHECK_OK(MPI_Wait(&r[1], MPI_STATUS_IGNORE));
        CHECK_OK(MPI_Grequest_complete(r[0]));
        CHECK_OK(MPI_Waitall(3, r, st));
        CHECK(w == (rank + size - 1) % size, "ring value %d", w);
        CHECK(s.frees == 1 && s.queries >= 1 && st[0].MPI_SOURCE == 1 && st[0].MPI_TAG == 2,
              "Waitall grequest: query %d free %d source %d tag %d", s.queries, s.frees, st[0].MPI_SOURCE, st[0].MPI_TAG);
    }

    /* 4. Request_free before completion: free_fn runs after completion */
    {
        struct state s = {0};
        MPI_Request  r, keep;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
        keep = r;
        CHECK_OK(MPI_Request_free(&r));
        CHECK(r == MPI_REQUEST_NULL, "Request_free did not null the handle");
        CHECK(s.frees == 0, "free_fn called before Grequest_complete");
        CHECK_OK(MPI_Grequest_complete(keep));
        CHECK(s.frees == 1, "free_fn called %d times after complete of a freed request", s.frees);
    }

    /* 5. Cancel: cancel_fn(complete=0) before, (complete=1) after completion */
    {
        struct state s = {.src = 3, .tag = 4, .elems = 0};
        MPI_Request  r;
        MPI_Status   st;
        CHECK_OK(MPI_Grequest_start(query_fn, free_fn, cancel_fn, &s, &r));
        CHECK_OK(MPI_Cancel(&r));
        CHECK(s.cancels == 1 && s.last_complete == 0, "cancel_fn: %d calls, complete=%d", s.cancels, s.last_complete);
        CHECK_OK(MPI_Grequest_complete(r));
        CHECK_OK(MPI_Cancel(&r));
        CHECK(s.cancels == 2 && s.last_complete == 1, "cancel_fn after complete: %d calls, complete=%d", s.cancels,
              s.last_complete);
        CHECK_OK(MPI_Wait(&r, &st));
        CHECK(s.frees == 1 && s.queries == 1, "after cancel+wait: query %d free %d", s.queries, s.frees);
    }

    int t = 0;
    if (rank == 0) {
        for (int q = 1; q < size; q++) {
            MPI_Recv(&t, 1, MPI_INT, q, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
    } else {
        MPI_Send(&t, 1, MPI_INT, 0, 9, MPI_COMM_WORLD);
    }
    return mpitest_finish();
}
