/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Session buffers (MPI-4.1) without MPI_Init: MPI_Session_attach_buffer(_c),
 * _detach_buffer(_c), _flush_buffer, _iflush_buffer and MPI_BUFFER_AUTOMATIC.
 * A buffered send on a communicator uses the communicator's buffer, else
 * its session's, else the process's (checked by attaching buffers that are
 * too small at one level and seeing MPI_ERR_BUFFER or success); data
 * compared byte for byte; detach returns the attached address and size;
 * bad input gives MPI_ERR_BUFFER / MPI_ERR_SESSION / MPI_ERR_ARG;
 * Session_finalize with a buffer still attached works. Ranks pair up (0,1),
 * (2,3)...; a lone rank sends to itself.
 */
#include "sessiontest.h"

enum { N = 3000 };

static MPI_Comm comm_of(MPI_Session s)
{
    MPI_Group g;
    MPI_Comm  c = MPI_COMM_NULL;
    CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
    CHECK_OK(MPI_Comm_create_from_group(g, "weft.test.session_buffer", MPI_INFO_NULL,
                                        MPI_ERRORS_RETURN, &c));
    MPI_Group_free(&g);
    return c;
}

/* Bsend n bytes of pattern seed to peer (a rank in c) on c, expecting class
 * want, and if it succeeded receive and check the peer's. */
static void exchange(MPI_Comm c, int peer, int n, int seed, int want, const char *what)
{
    unsigned char *s = malloc((size_t)n), *r = malloc((size_t)n);
    int            rc, cls, ok = 1, all, mine;

    MPI_Comm_rank(c, &mine);
    for (int i = 0; i < n; i++) {
        s[i] = (unsigned char)(i * 7 + seed + mine);
    }
    rc = MPI_Bsend(s, n, MPI_BYTE, peer, seed, c);
    MPI_Error_class(rc, &cls);
    CHECK(cls == want, "%s: MPI_Bsend class %d, want %d", what, cls, want);
    memset(s, 0, (size_t)n); /* Bsend copied it */
    ok = cls == MPI_SUCCESS;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, c);
    if (ok) {
        CHECK_OK(MPI_Recv(r, n, MPI_BYTE, peer, seed, c, MPI_STATUS_IGNORE));
        for (int i = 0; i < n; i++) {
            if (r[i] != (unsigned char)(i * 7 + seed + peer)) {
                CHECK(0, "%s: byte %d is %d", what, i, r[i]);
                break;
            }
        }
    }
    free(s);
    free(r);
}

int main(void)
{
    MPI_Session s, s2;
    MPI_Comm    c, c2, cdup;
    int         size, peer, isize;
    MPI_Count   csize;
    void       *addr;
    int         big = 4 * (N + MPI_BSEND_OVERHEAD);
    char       *sbuf = malloc((size_t)big), *pbuf = malloc((size_t)big), *tiny = malloc(64);

    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s));
    CHECK_OK(MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s2));
    c  = comm_of(s);
    c2 = comm_of(s2);
    MPI_Comm_rank(c, &me);
    MPI_Comm_size(c, &size);
    peer = (me ^ 1) < size ? me ^ 1 : me;

    /* nothing attached anywhere */
    exchange(c, peer, N, 1, MPI_ERR_BUFFER, "no buffer");

    /* the session's buffer serves its communicators (and their dups) only */
    CHECK_OK(MPI_Session_attach_buffer(s, sbuf, big));
    CHECK_CLASS(MPI_Session_attach_buffer(s, sbuf, big), MPI_ERR_BUFFER);
    exchange(c, peer, N, 2, MPI_SUCCESS, "session buffer");
    CHECK_OK(MPI_Comm_dup(c, &cdup));
    exchange(cdup, peer, N, 3, MPI_SUCCESS, "session buffer, dup");
    exchange(c2, peer, N, 4, MPI_ERR_BUFFER, "other session");
    {
        /* a group derived from the session's group still belongs to it */
        MPI_Group g, gi;
        MPI_Comm  ci;
        int       all[64];
        for (int i = 0; i < size && i < 64; i++) {
            all[i] = size - 1 - i; /* reversed order: a different group, same members */
        }
        CHECK_OK(MPI_Group_from_session_pset(s, "mpi://WORLD", &g));
        CHECK_OK(MPI_Group_incl(g, size, all, &gi));
        CHECK_OK(MPI_Comm_create_from_group(gi, "weft.test.session_buffer.incl", MPI_INFO_NULL,
                                            MPI_ERRORS_RETURN, &ci));
        int r;
        MPI_Comm_rank(ci, &r);
        int p2 = (r ^ 1) < size ? r ^ 1 : r;
        exchange(ci, p2, N, 12, MPI_SUCCESS, "session buffer, group from Group_incl");
        MPI_Comm_free(&ci);
        MPI_Group_free(&gi);
        MPI_Group_free(&g);
    }

    /* a communicator's buffer comes first, even when too small */
    CHECK_OK(MPI_Comm_attach_buffer(c, tiny, 64));
    exchange(c, peer, N, 5, MPI_ERR_BUFFER, "comm buffer first");
    exchange(cdup, peer, N, 6, MPI_SUCCESS, "dup still uses the session's");
    CHECK_OK(MPI_Comm_detach_buffer(c, &addr, &isize));
    CHECK(addr == tiny && isize == 64, "comm detach %p %d", addr, isize);

    /* flush, iflush, detach (with messages the peer receives later) */
    CHECK_OK(MPI_Session_flush_buffer(s));
    {
        MPI_Request r;
        CHECK_OK(MPI_Session_iflush_buffer(s, &r));
        CHECK_OK(MPI_Wait(&r, MPI_STATUS_IGNORE));
        CHECK(r == MPI_REQUEST_NULL, "iflush request not freed");
    }
    CHECK_OK(MPI_Session_detach_buffer_c(s, &addr, &csize));
    CHECK(addr == sbuf && csize == big, "session detach_c %p %lld", addr, (long long)csize);
    CHECK_CLASS(MPI_Session_detach_buffer(s, &addr, &isize), MPI_ERR_BUFFER);
    exchange(c, peer, N, 7, MPI_ERR_BUFFER, "detached");

    /* the process buffer is the last resort */
    CHECK_OK(MPI_Buffer_attach(pbuf, big));
    exchange(c2, peer, N, 8, MPI_SUCCESS, "process buffer");
    CHECK_OK(MPI_Session_attach_buffer_c(s2, tiny, 64));
    exchange(c2, peer, N, 9, MPI_ERR_BUFFER, "session before process");
    CHECK_OK(MPI_Session_detach_buffer(s2, &addr, &isize));
    CHECK(addr == tiny && isize == 64, "session detach %p %d", addr, isize);
    CHECK_OK(MPI_Buffer_detach(&addr, &isize));
    CHECK(addr == pbuf && isize == big, "process detach %p %d", addr, isize);

    /* MPI_BUFFER_AUTOMATIC: any size fits; detach returns the constant */
    CHECK_OK(MPI_Session_attach_buffer(s, MPI_BUFFER_AUTOMATIC, 0));
    exchange(c, peer, 1 << 20, 10, MPI_SUCCESS, "automatic");
    CHECK_OK(MPI_Session_detach_buffer(s, &addr, &isize));
    CHECK(addr == MPI_BUFFER_AUTOMATIC, "automatic detach gave %p", addr);

    /* a communicator freed with its buffer still attached forgets it: a
     * new communicator at the same address (the object pool reuses it)
     * must not inherit the freed one's buffer. First with a buffered send
     * in flight (its request holds the last reference, so the buffer is
     * forgotten while reaping it), then without. */
    for (int pending = 1; pending >= 0; pending--) {
        MPI_Comm dead, fresh;
        CHECK_OK(MPI_Comm_dup(c, &dead));
        CHECK_OK(MPI_Comm_attach_buffer(dead, sbuf, big));
        if (pending) {
            exchange(dead, peer, N, 12, MPI_SUCCESS, "comm buffer before free");
        }
        MPI_Comm was = dead;
        CHECK_OK(MPI_Comm_free(&dead));
        CHECK_OK(MPI_Comm_dup(c, &fresh));
        if (!pending && fresh != was) {
            printf("note: the freed communicator's memory was not reused\n");
        }
        exchange(fresh, peer, N, 13, MPI_ERR_BUFFER, "fresh comm after a freed one");
        CHECK_OK(MPI_Comm_free(&fresh));
    }

    /* bad handles */
    CHECK_CLASS(MPI_Session_attach_buffer(MPI_SESSION_NULL, sbuf, big), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_flush_buffer(MPI_SESSION_NULL), MPI_ERR_SESSION);
    CHECK_CLASS(MPI_Session_attach_buffer(s, sbuf, -1), MPI_ERR_ARG);

    /* a buffer still attached at MPI_Session_finalize is flushed and detached */
    {
        unsigned char m[N], r[N];
        for (int i = 0; i < N; i++) {
            m[i] = (unsigned char)(i + me);
        }
        MPI_Barrier(c2);
        CHECK_OK(MPI_Session_attach_buffer(s2, sbuf, big));
        CHECK_OK(MPI_Bsend(m, N, MPI_BYTE, peer, 11, c2));
        MPI_Request rr;
        CHECK_OK(MPI_Irecv(r, N, MPI_BYTE, peer, 11, c2, &rr));
        CHECK_OK(MPI_Wait(&rr, MPI_STATUS_IGNORE));
        for (int i = 0; i < N; i++) {
            if (r[i] != (unsigned char)(i + peer)) {
                CHECK(0, "in-flight byte %d", i);
                break;
            }
        }
    }

    MPI_Comm_free(&cdup);
    MPI_Comm_free(&c);
    MPI_Comm_free(&c2);
    CHECK_OK(MPI_Session_finalize(&s2));
    CHECK_OK(MPI_Session_finalize(&s));
    free(sbuf);
    free(pbuf);
    free(tiny);
    if (me == 0 && errors == 0) {
        printf("No Errors\n");
    }
    return errors ? 1 : 0;
}
