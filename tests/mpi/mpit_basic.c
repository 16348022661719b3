/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_T end to end: before MPI_Init (nested MPI_T_init_thread, every cvar
 * read, the eager threshold written to 64 bytes), then the protocol counters
 * of a ring of known sizes match exactly, every pvar class (session isolation,
 * reset, write, readreset, watermarks, start/stop rules), categories cover
 * every variable once, an event callback fires for an unexpected message,
 * bad input gets the standard's classes, and MPI_T still works after
 * MPI_Finalize.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors;
static int rank = -1;

#define T_CHECK(_cond, ...)                                                                  \
    do {                                                                                     \
        if (!(_cond)) {                                                                      \
            fprintf(stderr, "FAIL rank %d %s:%d: %s: ", rank, __FILE__, __LINE__, #_cond);   \
            fprintf(stderr, __VA_ARGS__);                                                    \
            fprintf(stderr, "\n");                                                           \
            errors++;                                                                        \
        }                                                                                    \
    } while (0)
/* MPI_T calls return their class; compare it directly. */
#define T_RC(_call, _want)                                                                   \
    do {                                                                                     \
        int _rc = (_call);                                                                   \
        T_CHECK(_rc == (_want), "%s returned %d, expected %d (%s)", #_call, _rc, (int)(_want), \
                #_want);                                                                     \
    } while (0)
#define T_OK(_call) T_RC(_call, MPI_SUCCESS)

#define EAGER_WRITTEN 64
#define NSMALL        5 /* 32-byte messages: eager */
#define NLARGE        3 /* 1000-byte messages: rendezvous once the threshold is 64 */

static int cvar_index(const char *name)
{
    int i = -1;
    T_OK(MPI_T_cvar_get_index(name, &i));
    return i;
}

static int pvar_index(const char *name, int cls)
{
    int i = -1;
    T_OK(MPI_T_pvar_get_index(name, cls, &i));
    return i;
}

static void read_every_cvar(void)
{
    int num = 0;
    T_OK(MPI_T_cvar_get_num(&num));
    T_CHECK(num > 30, "only %d cvars", num);
    for (int i = 0; i < num; i++) {
        char              name[128], desc[512];
        int               nlen = sizeof(name), dlen = sizeof(desc), verb, bind, scope, count, back;
        MPI_Datatype      dt;
        MPI_T_enum        en;
        MPI_T_cvar_handle h;
        union {
            int           i;
            unsigned long ul;
            char          s[1024];
        } v;
        T_OK(MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind, &scope));
        T_CHECK(strncmp(name, "WEFT_", 5) == 0 && nlen == (int)strlen(name) + 1, "name %s", name);
        T_CHECK(strncmp(name, "WEFT_CPU_", 9) != 0, "launcher row %s is a cvar", name);
        T_CHECK(dlen > 1 && bind == MPI_T_BIND_NO_OBJECT, "%s", name);
        T_CHECK(scope >= MPI_T_SCOPE_CONSTANT && scope <= MPI_T_SCOPE_ALL_EQ, "%s scope %d", name, scope);
        T_OK(MPI_T_cvar_get_index(name, &back));
        T_CHECK(back == i, "%s index %d != %d", name, back, i);
        T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        memset(&v, 0x5a, sizeof(v));
        T_OK(MPI_T_cvar_read(h, &v));
        if (dt == MPI_CHAR) {
            T_CHECK(count == 1024 && memchr(v.s, '\0', sizeof(v.s)) != NULL, "%s", name);
        } else {
            T_CHECK(count == 1, "%s count %d", name, count);
        }
        if (en != MPI_T_ENUM_NULL) {
            int  n = 0, val = -1;
            char item[64];
            int  ilen = sizeof(item);
            T_OK(MPI_T_enum_get_info(en, &n, NULL, NULL));
            T_CHECK(dt == MPI_INT && v.i >= 0 && v.i < n, "%s value %d of %d", name, v.i, n);
            T_OK(MPI_T_enum_get_item(en, 0, &val, item, &ilen));
            T_CHECK(val == 0, "%s", name);
            if (strstr(name, "_ALGORITHM")) {
                T_CHECK(strcmp(item, "auto") == 0, "%s item 0 is %s", name, item);
            }
            T_RC(MPI_T_enum_get_item(en, n, &val, item, &ilen), MPI_T_ERR_INVALID_ITEM);
        }
        T_OK(MPI_T_cvar_handle_free(&h));
        T_CHECK(h == MPI_T_CVAR_HANDLE_NULL, "%s handle not nulled", name);
    }
    T_RC(MPI_T_cvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_get_index("WEFT_SMP_EAGERSZE", &num), MPI_T_ERR_INVALID_NAME);
}

/* Write every cvar with the value it has: before MPI_Init all but the
 * read-only ones take it; after, only the ANYTIME rows do (the others are
 * read once at start-up: MPI_T_ERR_CVAR_SET_NOT_NOW). */
static void write_every_cvar(int initialized)
{
    static const char *const anytime[] = {"WEFT_ARG_CHECK", "WEFT_REPORT", "WEFT_REPORT_FILE",
                                          "WEFT_IO_CB_BUFFER_SIZE", "WEFT_IO_CB_NODES", "WEFT_IO_CB_READ_PER_NODE",
                                          "WEFT_IO_DS_BUFFER_SIZE"};
    int                      num = 0;

    T_OK(MPI_T_cvar_get_num(&num));
    for (int i = 0; i < num; i++) {
        char              name[128], v[1024];
        int               nlen = sizeof(name), scope, count, want = MPI_SUCCESS;
        MPI_T_cvar_handle h;

        T_OK(MPI_T_cvar_get_info(i, name, &nlen, NULL, NULL, NULL, NULL, NULL, NULL, &scope));
        T_OK(MPI_T_cvar_handle_alloc(i, NULL, &h, &count));
        T_OK(MPI_T_cvar_read(h, v));
        if (scope == MPI_T_SCOPE_READONLY || scope == MPI_T_SCOPE_CONSTANT) {
            want = MPI_T_ERR_CVAR_SET_NEVER;
        } else if (initialized) {
            want = MPI_T_ERR_CVAR_SET_NOT_NOW;
            for (size_t k = 0; k < sizeof(anytime) / sizeof(anytime[0]); k++) {
                want = strcmp(name, anytime[k]) == 0 ? MPI_SUCCESS : want;
            }
        }
        int rc = MPI_T_cvar_write(h, v);
        T_CHECK(rc == want, "writing %s: %d, want %d", name, rc, want);
        MPI_T_cvar_handle_free(&h);
    }
}

static void write_cvar_int(const char *name, int value, int want)
{
    MPI_T_cvar_handle h;
    int               count;
    T_OK(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count));
    T_RC(MPI_T_cvar_write(h, &value), want);
    MPI_T_cvar_handle_free(&h);
}

static unsigned long read_cvar_ulong(const char *name)
{
    MPI_T_cvar_handle h;
    int               count;
    unsigned long     v = 0;
    T_OK(MPI_T_cvar_handle_alloc(cvar_index(name), NULL, &h, &count));
    T_OK(MPI_T_cvar_read(h, &v));
    MPI_T_cvar_handle_free(&h);
    return v;
}

static void before_init(void)
{
    int               provided = -1, count;
    unsigned long     eager    = EAGER_WRITTEN;
    MPI_T_cvar_handle h;

    T_RC(MPI_T_cvar_get_num(&count), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_init_thread(42, &provided), MPI_T_ERR_INVALID);
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
    T_CHECK(provided == MPI_THREAD_MULTIPLE, "provided %d", provided);
    T_OK(MPI_T_init_thread(MPI_THREAD_MULTIPLE, &provided)); /* nested: count 2 */
    T_OK(MPI_T_init_thread(MPI_THREAD_FUNNELED, &provided)); /* count 3 */
    T_OK(MPI_T_finalize());                                  /* count 2 */
    read_every_cvar();
    write_every_cvar(0);
    /* The eager threshold before init: MPI_Init's tunables load keeps it. */
    T_OK(MPI_T_cvar_handle_alloc(cvar_index("WEFT_SMP_EAGERSIZE"), NULL, &h, &count));
    T_OK(MPI_T_cvar_write(h, &eager));
    MPI_T_cvar_handle_free(&h);
    write_cvar_int("WEFT_JOBID", 0, MPI_T_ERR_CVAR_SET_NEVER);
    write_cvar_int("WEFT_BARRIER_ALGORITHM", 1000, MPI_T_ERR_INVALID); /* not an item */
}

static void check_protocol_counters(int size)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle  h[5];
    const char *names[5] = {"weft_eager_msgs_sent", "weft_eager_bytes_sent", "weft_rndv_msgs_sent",
                            "weft_rndv_bytes_sent", "weft_msgs_received"};
    const int   cls[5]   = {MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE,
                            MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE,
                            MPI_T_PVAR_CLASS_COUNTER};
    unsigned long long v[5];
    char               sbuf[1000], rbuf[1000];
    int                right = (rank + 1) % size, left = (rank + size - 1) % size, count;

    T_CHECK(read_cvar_ulong("WEFT_SMP_EAGERSIZE") == EAGER_WRITTEN, "eager %lu",
            read_cvar_ulong("WEFT_SMP_EAGERSIZE"));
    T_OK(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < 5; i++) {
        T_OK(MPI_T_pvar_handle_alloc(s, pvar_index(names[i], cls[i]), NULL, &h[i], &count));
        T_CHECK(count == 1, "%s", names[i]);
    }
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    memset(sbuf, rank, sizeof(sbuf));
    for (int i = 0; i < NSMALL; i++) {
        MPI_Sendrecv(sbuf, 32, MPI_BYTE, right, i, rbuf, 32, MPI_BYTE, left, i, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
    }
    for (int i = 0; i < NLARGE; i++) {
        MPI_Sendrecv(sbuf, 1000, MPI_BYTE, right, 100 + i, rbuf, 1000, MPI_BYTE, left, 100 + i,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        T_CHECK(rbuf[999] == (char)left, "payload from %d", left);
    }
    T_OK(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    for (int i = 0; i < 5; i++) {
        T_OK(MPI_T_pvar_read(s, h[i], &v[i]));
    }
    if (size == 1) { /* to ourselves: always the eager (copy) path */
        T_CHECK(v[0] == NSMALL + NLARGE && v[1] == 32 * NSMALL + 1000 * NLARGE && v[2] == 0 &&
                    v[3] == 0, "self: %llu %llu %llu %llu", v[0], v[1], v[2], v[3]);
    } else {
        T_CHECK(v[0] == NSMALL && v[1] == 32 * NSMALL, "eager %llu msgs %llu bytes", v[0], v[1]);
        T_CHECK(v[2] == NLARGE && v[3] == 1000 * NLARGE, "rndv %llu msgs %llu bytes", v[2], v[3]);
    }
    T_CHECK(v[4] == NSMALL + NLARGE, "received %llu", v[4]);
    for (int i = 0; i < 5; i++) {
        T_OK(MPI_T_pvar_handle_free(s, &h[i]));
    }
    T_OK(MPI_T_pvar_session_free(&s));
    T_CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not nulled");
}

/* Handles bound to a communicator count only its traffic, and outlive MPI_Comm_free. */
static void check_comm_bound(int size)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle  hm, hb;
    MPI_Comm           dup, null = MPI_COMM_NULL;
    int                im = pvar_index("weft_comm_msgs_sent", MPI_T_PVAR_CLASS_COUNTER);
    int                ib = pvar_index("weft_comm_bytes_sent", MPI_T_PVAR_CLASS_AGGREGATE);
    int                bind = -1, count;
    unsigned long long msgs, bytes;
    char               sbuf[8] = {0}, rbuf[8];

    T_OK(MPI_T_pvar_get_info(im, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind, NULL, NULL,
                             NULL));
    T_CHECK(bind == MPI_T_BIND_MPI_COMM, "bind %d", bind);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    T_OK(MPI_T_pvar_session_create(&s));
    T_RC(MPI_T_pvar_handle_alloc(s, im, NULL, &hm, &count), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_handle_alloc(s, im, &null, &hm, &count), MPI_T_ERR_INVALID_HANDLE);
    T_OK(MPI_T_pvar_handle_alloc(s, im, &dup, &hm, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, ib, &dup, &hb, &count));
    T_OK(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    for (int i = 0; i < 3; i++) {
        MPI_Sendrecv(sbuf, 8, MPI_BYTE, (rank + 1) % size, 0, rbuf, 8, MPI_BYTE,
                     (rank + size - 1) % size, 0, dup, MPI_STATUS_IGNORE);
    }
    MPI_Sendrecv(sbuf, 8, MPI_BYTE, (rank + 1) % size, 0, rbuf, 8, MPI_BYTE, (rank + size - 1) % size,
                 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE); /* another communicator: not counted */
    MPI_Comm_free(&dup);
    T_OK(MPI_T_pvar_read(s, hm, &msgs));
    T_OK(MPI_T_pvar_read(s, hb, &bytes));
    T_CHECK(msgs == 3 && bytes == 24, "on the dup: %llu msgs %llu bytes, want 3 and 24", msgs, bytes);
    T_OK(MPI_T_pvar_session_free(&s)); /* releases the communicator */
}

/* Two sessions count the same traffic independently; reset and write touch one. */
static void check_sessions(void)
{
    MPI_T_pvar_session a, b;
    MPI_T_pvar_handle  ha, hb, hlevel, hb_in_a_check;
    int                idx = pvar_index("weft_eager_msgs_sent", MPI_T_PVAR_CLASS_COUNTER), count;
    unsigned long long va, vb, w = 100;
    char               byte = 1;

    T_OK(MPI_T_pvar_session_create(&a));
    T_OK(MPI_T_pvar_session_create(&b));
    T_OK(MPI_T_pvar_handle_alloc(a, idx, NULL, &ha, &count));
    T_OK(MPI_T_pvar_handle_alloc(b, idx, NULL, &hb, &count));
    T_OK(MPI_T_pvar_start(a, ha));
    T_OK(MPI_T_pvar_start(b, hb));
    for (int i = 0; i < 4; i++) {
        MPI_Sendrecv(&byte, 1, MPI_BYTE, 0, 9, &byte, 1, MPI_BYTE, 0, 9, MPI_COMM_SELF,
                     MPI_STATUS_IGNORE);
    }
    T_OK(MPI_T_pvar_read(a, ha, &va));
    T_OK(MPI_T_pvar_read(b, hb, &vb));
    T_CHECK(va == 4 && vb == 4, "a %llu b %llu", va, vb);
    T_OK(MPI_T_pvar_reset(a, ha));
    T_OK(MPI_T_pvar_read(a, ha, &va));
    T_OK(MPI_T_pvar_read(b, hb, &vb));
    T_CHECK(va == 0 && vb == 4, "after reset of a: a %llu b %llu", va, vb);
    T_OK(MPI_T_pvar_write(a, ha, &w));
    MPI_Sendrecv(&byte, 1, MPI_BYTE, 0, 9, &byte, 1, MPI_BYTE, 0, 9, MPI_COMM_SELF,
                 MPI_STATUS_IGNORE);
    T_OK(MPI_T_pvar_readreset(a, ha, &va));
    T_OK(MPI_T_pvar_read(b, hb, &vb));
    T_CHECK(va == 101 && vb == 5, "after write 100 + 1 message: a %llu b %llu", va, vb);
    T_OK(MPI_T_pvar_read(a, ha, &va));
    T_CHECK(va == 0, "readreset left %llu", va);
    /* Stopped handles do not count. */
    T_OK(MPI_T_pvar_stop(b, hb));
    MPI_Sendrecv(&byte, 1, MPI_BYTE, 0, 9, &byte, 1, MPI_BYTE, 0, 9, MPI_COMM_SELF,
                 MPI_STATUS_IGNORE);
    T_OK(MPI_T_pvar_read(b, hb, &vb));
    T_CHECK(vb == 5, "stopped handle moved to %llu", vb);
    /* Bad handles and sessions. */
    T_RC(MPI_T_pvar_read(b, ha, &va), MPI_T_ERR_INVALID_HANDLE); /* a's handle in b */
    T_RC(MPI_T_pvar_read(a, MPI_T_PVAR_HANDLE_NULL, &va), MPI_T_ERR_INVALID_HANDLE);
    T_RC(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, ha, &va), MPI_T_ERR_INVALID_SESSION);
    T_RC(MPI_T_pvar_handle_alloc(a, 100000, NULL, &hb_in_a_check, &count), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_cvar_read(MPI_T_CVAR_HANDLE_NULL, &va), MPI_T_ERR_INVALID_HANDLE);
    /* A LEVEL is continuous and read-only. */
    T_OK(MPI_T_pvar_handle_alloc(a, pvar_index("weft_posted_queue_len", MPI_T_PVAR_CLASS_LEVEL),
                                 NULL, &hlevel, &count));
    T_RC(MPI_T_pvar_start(a, hlevel), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_RC(MPI_T_pvar_stop(a, hlevel), MPI_T_ERR_PVAR_NO_STARTSTOP);
    T_RC(MPI_T_pvar_write(a, hlevel, &w), MPI_T_ERR_PVAR_NO_WRITE);
    T_RC(MPI_T_pvar_reset(a, hlevel), MPI_T_ERR_PVAR_NO_WRITE);
    T_OK(MPI_T_pvar_read(a, hlevel, &va));
    T_CHECK(va == 0, "posted queue %llu with nothing posted", va);
    T_OK(MPI_T_pvar_session_free(&a)); /* frees its handles */
    T_OK(MPI_T_pvar_session_free(&b));
    T_RC(MPI_T_pvar_session_free(&b), MPI_T_ERR_INVALID_SESSION);
}

/* The other classes: HIGHWATERMARK, LOWWATERMARK, TIMER, STATE, SIZE, PERCENTAGE, arrays. */
static void check_classes(int size)
{
    MPI_T_pvar_session s;
    MPI_T_pvar_handle  hwm, lwm, timer, state, sz, pct, colls;
    unsigned long long v, calls_before[64], calls_after[64];
    double             frac = -1;
    int                st = -1, count, ncoll, k = 6;
    char               buf[8] = {0};
    MPI_Request        reqs[6];

    T_OK(MPI_T_pvar_session_create(&s));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_unexp_queue_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK),
                                 NULL, &hwm, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_posted_queue_lwm", MPI_T_PVAR_CLASS_LOWWATERMARK),
                                 NULL, &lwm, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_unexp_queue_time", MPI_T_PVAR_CLASS_TIMER),
                                 NULL, &timer, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_runtime_state", MPI_T_PVAR_CLASS_STATE), NULL,
                                 &state, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_shm_ring_bytes", MPI_T_PVAR_CLASS_SIZE), NULL,
                                 &sz, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_unexp_fraction", MPI_T_PVAR_CLASS_PERCENTAGE),
                                 NULL, &pct, &count));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_coll_calls", MPI_T_PVAR_CLASS_COUNTER), NULL,
                                 &colls, &ncoll));
    T_CHECK(ncoll > 10 && ncoll <= 64, "weft_coll_calls has %d elements", ncoll);

    /* A second session's high watermark, started first, must not see s's reset. */
    MPI_T_pvar_session s2;
    MPI_T_pvar_handle  hwm2;
    T_OK(MPI_T_pvar_session_create(&s2));
    T_OK(MPI_T_pvar_handle_alloc(s2, pvar_index("weft_unexp_queue_hwm", MPI_T_PVAR_CLASS_HIGHWATERMARK),
                                 NULL, &hwm2, &count));
    T_OK(MPI_T_pvar_start(s2, hwm2));

    /* k messages to ourselves with no receive posted: the unexpected queue reaches k. */
    T_OK(MPI_T_pvar_start(s, hwm));
    T_OK(MPI_T_pvar_start(s, timer));
    for (int i = 0; i < k; i++) {
        MPI_Send(buf, 8, MPI_BYTE, 0, 50 + i, MPI_COMM_SELF);
    }
    for (int i = 0; i < k; i++) {
        MPI_Recv(buf, 8, MPI_BYTE, 0, 50 + i, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    }
    T_OK(MPI_T_pvar_read(s, hwm, &v));
    /* Faster ranks may already be in the barrier below: their messages can
     * be unexpected here too (at most a few per rank). */
    T_CHECK(v >= (unsigned long long)k && v <= (unsigned long long)(k + 2 * size),
            "unexpected-queue high watermark %llu, want %d", v, k);
    T_OK(MPI_T_pvar_reset(s, hwm));
    T_OK(MPI_T_pvar_read(s, hwm, &v));
    T_CHECK(v <= (unsigned long long)(2 * size), "high watermark after reset %llu (queue is empty)", v);
    T_OK(MPI_T_pvar_read(s2, hwm2, &v));
    T_CHECK(v >= (unsigned long long)k, "other session's high watermark %llu after s's reset", v);
    T_OK(MPI_T_pvar_stop(s2, hwm2));
    T_OK(MPI_T_pvar_read(s2, hwm2, &v));
    T_CHECK(v >= (unsigned long long)k, "stopped high watermark %llu", v);
    T_OK(MPI_T_pvar_session_free(&s2));
    T_OK(MPI_T_pvar_read(s, timer, &v));
    T_CHECK(v > 0, "no time in the unexpected queue");
    T_OK(MPI_T_pvar_read(s, pct, &frac));
    T_CHECK(frac > 0 && frac <= 1, "unexpected fraction %g", frac);

    /* k receives posted, then matched: the posted queue's low watermark goes k -> 0. */
    for (int i = 0; i < k; i++) {
        MPI_Irecv(buf, 8, MPI_BYTE, 0, 70 + i, MPI_COMM_SELF, &reqs[i]);
    }
    T_OK(MPI_T_pvar_start(s, lwm));
    T_OK(MPI_T_pvar_read(s, lwm, &v));
    T_CHECK(v == (unsigned long long)k, "low watermark at start %llu, want %d", v, k);
    for (int i = 0; i < k; i++) {
        MPI_Send(buf, 8, MPI_BYTE, 0, 70 + i, MPI_COMM_SELF);
    }
    MPI_Waitall(k, reqs, MPI_STATUSES_IGNORE);
    T_OK(MPI_T_pvar_read(s, lwm, &v));
    T_CHECK(v == 0, "low watermark %llu after the matches", v);

    T_OK(MPI_T_pvar_read(s, state, &st));
    T_CHECK(st == 1, "runtime state %d", st);
    T_OK(MPI_T_pvar_read(s, sz, &v));
    T_CHECK(size == 1 || v > 0, "shm ring bytes %llu", v);

    /* One barrier is one call of one collective. */
    T_OK(MPI_T_pvar_start(s, colls));
    T_OK(MPI_T_pvar_read(s, colls, calls_before));
    MPI_Barrier(MPI_COMM_WORLD);
    T_OK(MPI_T_pvar_read(s, colls, calls_after));
    unsigned long long total = 0;
    for (int i = 0; i < ncoll; i++) {
        total += calls_after[i] - calls_before[i];
    }
    T_CHECK(total == 1, "one barrier counted %llu collective calls", total);
    T_OK(MPI_T_pvar_session_free(&s));
}

/* ---- events ---- */
static int        seen_events, seen_dropped;
static MPI_Count  seen[3], seen_time;
static int        seen_source = -1;

static void on_unexpected(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety safety,
                          void *user)
{
    (void)r;
    (void)user;
    if (safety < MPI_T_CB_REQUIRE_MPI_RESTRICTED) {
        errors++;
    }
    for (int i = 0; i < 3; i++) {
        MPI_T_event_read(e, i, &seen[i]);
    }
    MPI_T_event_get_timestamp(e, &seen_time);
    MPI_T_event_get_source(e, &seen_source);
    seen_events++;
}

static void on_unexpected_anywhere(MPI_T_event_instance e, MPI_T_event_registration r,
                                   MPI_T_cb_safety safety, void *user)
{
    (void)e;
    (void)r;
    (void)safety;
    ++*(int *)user;
}

static void on_dropped(MPI_Count count, MPI_T_event_registration r, int source, MPI_T_cb_safety safety,
                       void *user)
{
    (void)r;
    (void)source;
    (void)safety;
    (void)user;
    seen_dropped += (int)count;
}

static int       rndv_events[2], coll_top_events, coll_events;
static MPI_Count rndv_bytes[2], coll_size;

static void on_rndv(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety safety,
                    void *user)
{
    MPI_Count v[3];
    int       which = *(int *)user;
    (void)r;
    (void)safety;
    MPI_T_event_copy(e, v);
    rndv_events[which]++;
    rndv_bytes[which] = v[2];
}

static void on_coll(MPI_T_event_instance e, MPI_T_event_registration r, MPI_T_cb_safety safety,
                    void *user)
{
    MPI_Count v[4];
    (void)r;
    (void)safety;
    (void)user;
    MPI_T_event_copy(e, v);
    coll_events++;
    if (v[3] == 0) { /* the call itself, not a step of a two-level algorithm */
        coll_top_events++;
        coll_size = v[2];
    }
}

/* Rendezvous start/finish around one large ring message; the algorithm event of a barrier. */
static void check_more_events(int size)
{
    static int               start = 0, finish = 1;
    int                      i_start, i_finish, i_coll;
    MPI_T_event_registration r_start, r_finish, r_coll;
    char                     sbuf[1000] = {0}, rbuf[1000];

    T_OK(MPI_T_event_get_index("weft_rndv_start", &i_start));
    T_OK(MPI_T_event_get_index("weft_rndv_finish", &i_finish));
    T_OK(MPI_T_event_get_index("weft_coll_algorithm", &i_coll));
    T_OK(MPI_T_event_handle_alloc(i_start, NULL, MPI_INFO_NULL, &r_start));
    T_OK(MPI_T_event_handle_alloc(i_finish, NULL, MPI_INFO_NULL, &r_finish));
    T_OK(MPI_T_event_handle_alloc(i_coll, NULL, MPI_INFO_NULL, &r_coll));
    T_OK(MPI_T_event_register_callback(r_start, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE, MPI_INFO_NULL,
                                       &start, on_rndv));
    T_OK(MPI_T_event_register_callback(r_finish, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                       &finish, on_rndv));
    T_OK(MPI_T_event_register_callback(r_coll, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL,
                                       on_coll));
    MPI_Sendrecv(sbuf, 1000, MPI_BYTE, (rank + 1) % size, 5, rbuf, 1000, MPI_BYTE,
                 (rank + size - 1) % size, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (size > 1) { /* 1000 B > the 64 B eager threshold written before MPI_Init */
        T_CHECK(rndv_events[0] == 1 && rndv_bytes[0] == 1000, "rndv start: %d events, %lld bytes",
                rndv_events[0], (long long)rndv_bytes[0]);
        T_CHECK(rndv_events[1] == 1 && rndv_bytes[1] == 1000, "rndv finish: %d events, %lld bytes",
                rndv_events[1], (long long)rndv_bytes[1]);
    } else {
        T_CHECK(rndv_events[0] == 0 && rndv_events[1] == 0, "rendezvous to oneself");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    T_CHECK(coll_top_events == 1 && coll_size == size && coll_events >= 1,
            "barrier: %d algorithm events (%d top level), comm size %lld", coll_events,
            coll_top_events, (long long)coll_size);
    T_OK(MPI_T_event_handle_free(r_start, NULL, NULL));
    T_OK(MPI_T_event_handle_free(r_finish, NULL, NULL));
    T_OK(MPI_T_event_handle_free(r_coll, NULL, NULL));
}

static void check_events(void)
{
    int                      idx = -1, num, nelem = 8, none_calls = 0;
    MPI_T_event_registration reg, reg_none;
    MPI_Datatype             types[8];
    MPI_Aint                 displs[8];
    MPI_Count                t0, t1, ticks;
    char                     buf[24] = {0};

    T_OK(MPI_T_event_get_num(&num));
    T_CHECK(num >= 4, "%d event types", num);
    T_OK(MPI_T_event_get_index("weft_unexpected_message", &idx));
    T_OK(MPI_T_event_get_info(idx, NULL, NULL, NULL, types, displs, &nelem, NULL, NULL, NULL, NULL,
                              NULL));
    T_CHECK(nelem == 4 && types[2] == MPI_COUNT && displs[2] == 16, "elements %d", nelem);
    T_RC(MPI_T_event_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg));
    T_OK(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL, NULL,
                                       on_unexpected));
    /* A callback that needs no restriction cannot run inside the library: dropped. */
    T_OK(MPI_T_event_handle_alloc(idx, NULL, MPI_INFO_NULL, &reg_none));
    T_OK(MPI_T_event_register_callback(reg_none, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, &none_calls,
                                       on_unexpected_anywhere));
    T_OK(MPI_T_event_set_dropped_handler(reg_none, on_dropped));
    T_OK(MPI_T_source_get_timestamp(0, &t0));
    MPI_Send(buf, 24, MPI_BYTE, 0, 77, MPI_COMM_SELF); /* nobody waits: unexpected */
    T_OK(MPI_T_source_get_timestamp(0, &t1));
    T_CHECK(seen_events == 1, "callback fired %d times", seen_events);
    T_CHECK(seen[0] == 0 && seen[1] == 77 && seen[2] == 24, "event source %lld tag %lld bytes %lld",
            (long long)seen[0], (long long)seen[1], (long long)seen[2]);
    T_CHECK(seen_source == 0 && seen_time >= t0 && seen_time <= t1, "timestamp out of order");
    T_CHECK(none_calls == 0, "REQUIRE_NONE callback called inside the library");
    /* Once a restricted callback is there too, the drop is reported before delivery. */
    T_OK(MPI_T_event_register_callback(reg_none, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                       &none_calls, on_unexpected_anywhere));
    MPI_Send(buf, 24, MPI_BYTE, 0, 78, MPI_COMM_SELF);
    T_CHECK(seen_dropped == 1 && none_calls == 1, "dropped %d, calls %d", seen_dropped, none_calls);
    MPI_Recv(buf, 24, MPI_BYTE, 0, 77, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    MPI_Recv(buf, 24, MPI_BYTE, 0, 78, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    T_OK(MPI_T_event_handle_free(reg, NULL, NULL));
    T_OK(MPI_T_event_handle_free(reg_none, NULL, NULL));
    T_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_unexpected),
         MPI_T_ERR_INVALID_HANDLE);
    MPI_Send(buf, 24, MPI_BYTE, 0, 79, MPI_COMM_SELF);
    MPI_Recv(buf, 24, MPI_BYTE, 0, 79, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    T_CHECK(seen_events == 2, "callback fired after its registration was freed");
    T_OK(MPI_T_source_get_num(&num));
    T_OK(MPI_T_source_get_info(0, NULL, NULL, NULL, NULL, NULL, &ticks, NULL, NULL));
    T_CHECK(num == 1 && ticks == 1000000000, "sources %d ticks %lld", num, (long long)ticks);
}

/* Every cvar, pvar and event is in exactly one category. */
static void check_categories(void)
{
    int ncat, ncvar, npvar, nev, sc = 0, sp = 0, se = 0, idx;
    T_OK(MPI_T_category_get_num(&ncat));
    T_OK(MPI_T_cvar_get_num(&ncvar));
    T_OK(MPI_T_pvar_get_num(&npvar));
    T_OK(MPI_T_event_get_num(&nev));
    for (int c = 0; c < ncat; c++) {
        int nc, np, nsub, ne, list[256];
        T_OK(MPI_T_category_get_info(c, NULL, NULL, NULL, NULL, &nc, &np, &nsub));
        T_OK(MPI_T_category_get_num_events(c, &ne));
        T_OK(MPI_T_category_get_cvars(c, 256, list));
        for (int i = 0; i < nc; i++) {
            T_CHECK(list[i] >= 0 && list[i] < ncvar, "cvar index %d", list[i]);
        }
        sc += nc;
        sp += np;
        se += ne;
    }
    T_CHECK(sc == ncvar && sp == npvar && se == nev, "categories hold %d/%d cvars %d/%d pvars %d/%d events",
            sc, ncvar, sp, npvar, se, nev);
    T_OK(MPI_T_category_get_index("weft_pt2pt", &idx));
    T_RC(MPI_T_category_get_info(ncat, NULL, NULL, NULL, NULL, NULL, NULL, NULL), MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_pvar_get_info(npvar, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
         MPI_T_ERR_INVALID_INDEX);
    T_RC(MPI_T_pvar_get_index("weft_eager_msgs_sent", MPI_T_PVAR_CLASS_LEVEL, &idx), MPI_T_ERR_INVALID_NAME);
}

int main(int argc, char **argv)
{
    int size, all, provided;

    before_init();
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    check_protocol_counters(size);
    write_every_cvar(1);
    write_cvar_int("WEFT_SPIN_COUNT", 10, MPI_T_ERR_CVAR_SET_NOT_NOW); /* read at init */
    write_cvar_int("WEFT_ARG_CHECK", 1, MPI_SUCCESS);                 /* any time */
    check_sessions();
    check_comm_bound(size);
    check_classes(size);
    check_events();
    check_more_events(size);
    check_categories();
    MPI_Allreduce(&errors, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();

    /* MPI_T outlives MPI. */
    MPI_T_pvar_session s;
    MPI_T_pvar_handle  h;
    int                st = -1, count;
    T_OK(MPI_T_pvar_session_create(&s));
    T_OK(MPI_T_pvar_handle_alloc(s, pvar_index("weft_runtime_state", MPI_T_PVAR_CLASS_STATE), NULL,
                                 &h, &count));
    T_OK(MPI_T_pvar_read(s, h, &st));
    T_CHECK(st == 2, "state after MPI_Finalize %d", st);
    T_CHECK(read_cvar_ulong("WEFT_SMP_EAGERSIZE") == EAGER_WRITTEN, "eager after finalize");
    write_cvar_int("WEFT_SPIN_COUNT", 10, MPI_T_ERR_CVAR_SET_NOT_NOW);
    T_OK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided)); /* count 3 */
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_finalize());
    T_OK(MPI_T_pvar_read(s, h, &st)); /* one MPI_T_init_thread still open: valid */
    T_OK(MPI_T_finalize());           /* last: sessions are gone */
    T_RC(MPI_T_pvar_read(s, h, &st), MPI_T_ERR_NOT_INITIALIZED);
    T_RC(MPI_T_finalize(), MPI_T_ERR_NOT_INITIALIZED);
    if (rank == 0 && all + errors == 0) {
        printf("No Errors\n");
    }
    return errors || all ? 1 : 0;
}
