/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The job report: every rank sends one fixed-size record (its counters since
 * MPI_Init, its row of the traffic matrix, its collective and algorithm
 * calls, its host) to rank 0, which prints a summary (WEFT_REPORT=1; =2 adds
 * the rank x rank matrix) and/or writes JSON (WEFT_REPORT_FILE). The format
 * is documented in docs/job-report.md; the monitoring UI reads it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/comm.h"
#include "core/dev/peer.h"
#include "api_impl.h"
#include "core/datatype.h"
#include "core/mpit/mpi_time.h"
#include "core/mpit/pvar.h"
#include "core/mpit/report.h"
#include "core/pt2pt.h"
#include "core/op.h"
#include "core/runtime.h"
#include "util/log.h"
#include "util/tunables.h"

#define REPORT_TAG  0x5745 /* on MPI_COMM_WORLD's internal context */
#define HOST_BYTES  64
#define TOP_PAIRS   10

/* Scalars of a rank's record, in order. */
enum {
    R_EAGER_MSGS,
    R_RNDV_MSGS,
    R_MSGS_RECEIVED,
    R_UNEXP_MSGS,
    R_UNEXP_HWM,
    R_WAIT_NS,
    R_WALL_NS,
    R_MPI_TIMED, /* 1 if this rank timed its MPI calls (the report was on at MPI_Init) */
    R_MPI_NS,    /* WEFT_CALL_NCLASSES words: ns inside MPI calls per call class */
    R_NSCALARS = R_MPI_NS + WEFT_CALL_NCLASSES
};

static const weft_pvar_id_t counted[R_NSCALARS] = {
    WEFT_PVAR_EAGER_MSGS_SENT, WEFT_PVAR_RNDV_MSGS_SENT, WEFT_PVAR_MSGS_RECEIVED,
    WEFT_PVAR_UNEXP_MSGS,      WEFT_PVAR_NONE,           WEFT_PVAR_WAIT_TIME, WEFT_PVAR_NONE,
    WEFT_PVAR_NONE,            WEFT_PVAR_NONE,           WEFT_PVAR_NONE,      WEFT_PVAR_NONE,
    WEFT_PVAR_NONE,            WEFT_PVAR_NONE};

static const char *const call_class_names[WEFT_CALL_NCLASSES] = WEFT_CALL_CLASS_NAMES;

/* ---- time inside MPI calls (mpi_time.h) ---- */

int      weft_mpi_time_on;
uint64_t weft_mpi_time_ns[WEFT_CALL_NCLASSES];

static __thread __attribute__((tls_model("initial-exec"))) int      call_depth;
static __thread __attribute__((tls_model("initial-exec"))) uint64_t call_start_ns;

void weft_mpi_time_enter(void)
{
    if (call_depth++ == 0) {
        call_start_ns = weft_pvar_now_ns();
    }
}

void weft_mpi_time_exit(weft_call_class_t cls)
{
    /* depth 0: timing was switched on inside this call; it never started. */
    if (call_depth > 0 && --call_depth == 0) {
        __atomic_fetch_add(&weft_mpi_time_ns[cls], weft_pvar_now_ns() - call_start_ns,
                           __ATOMIC_RELAXED);
    }
}

static int report_wanted(void)
{
    const char *file = weft_tunables.REPORT_FILE;
    return weft_tunables.REPORT > 0 || (file != NULL && file[0] != '\0');
}

static uint64_t  start_scalars[R_NSCALARS];
static uint64_t *start_colls, *start_algs;
static uint64_t  start_ns;
static int       nranks, ncolls, nalgs;

void weft_report_start(void)
{
    weft_mpi_time_on = 0;
    nranks = weft_comm_world.size;
    ncolls = weft_pvar_element_count(WEFT_PVAR_COLL_CALLS);
    nalgs  = weft_pvar_element_count(WEFT_PVAR_COLL_ALG_CALLS);
    free(weft_traffic);
    free(start_colls);
    weft_traffic = calloc((size_t)nranks, sizeof(*weft_traffic));
    weft_traffic_ranks = nranks;
    start_colls  = calloc((size_t)(ncolls + nalgs), sizeof(uint64_t));
    start_algs   = start_colls ? start_colls + ncolls : NULL;
    if (weft_traffic == NULL || start_colls == NULL) {
        weft_log_warn("no memory for the job report's counters: WEFT_REPORT will be empty");
        free(weft_traffic);
        weft_traffic = NULL;
        return;
    }
    for (int i = 0; i < R_NSCALARS; i++) {
        start_scalars[i] = counted[i] == WEFT_PVAR_NONE ? 0 : weft_pvar[counted[i]];
    }
    for (int i = 0; i < ncolls; i++) {
        start_colls[i] = weft_pvar_element(WEFT_PVAR_COLL_CALLS, i);
    }
    for (int i = 0; i < nalgs; i++) {
        start_algs[i] = weft_pvar_element(WEFT_PVAR_COLL_ALG_CALLS, i);
    }
    weft_pvar_peak[WEFT_PVAR_UNEXP_QUEUE_LEN] = weft_pvar[WEFT_PVAR_UNEXP_QUEUE_LEN];
    start_ns = weft_pvar_now_ns();
    /* Timing every call costs two clock reads per call: only when the report
     * is asked for at init (a report switched on later through MPI_T shows
     * the time in MPI as not measured). */
    for (int c = 0; c < WEFT_CALL_NCLASSES; c++) {
        __atomic_store_n(&weft_mpi_time_ns[c], 0, __ATOMIC_RELAXED);
    }
    weft_mpi_time_on = report_wanted();
}

/* Record: scalars, traffic (msgs, bytes) per destination, coll calls, alg calls, host. */
static size_t record_words(void)
{
    return (size_t)R_NSCALARS + 2 * (size_t)nranks + (size_t)ncolls + (size_t)nalgs + HOST_BYTES / 8;
}

static void fill_record(uint64_t *rec)
{
    uint64_t *p = rec;

    for (int i = 0; i < R_NSCALARS; i++) {
        p[i] = counted[i] == WEFT_PVAR_NONE ? 0 : weft_pvar[counted[i]] - start_scalars[i];
    }
    p[R_UNEXP_HWM] = weft_pvar_peak[WEFT_PVAR_UNEXP_QUEUE_LEN];
    p[R_WALL_NS]   = weft_pvar_now_ns() - start_ns;
    p[R_MPI_TIMED] = (uint64_t)weft_mpi_time_on;
    for (int c = 0; c < WEFT_CALL_NCLASSES; c++) {
        p[R_MPI_NS + c] = __atomic_load_n(&weft_mpi_time_ns[c], __ATOMIC_RELAXED);
    }
    p += R_NSCALARS;
    for (int d = 0; d < nranks; d++) {
        *p++ = weft_traffic[d].msgs;
        *p++ = weft_traffic[d].bytes;
    }
    for (int i = 0; i < ncolls; i++) {
        *p++ = weft_pvar_element(WEFT_PVAR_COLL_CALLS, i) - start_colls[i];
    }
    for (int i = 0; i < nalgs; i++) {
        *p++ = weft_pvar_element(WEFT_PVAR_COLL_ALG_CALLS, i) - start_algs[i];
    }
    snprintf((char *)p, HOST_BYTES, "%.*s", HOST_BYTES - 1, weft_runtime.processor_name);
}

/* Accessors into the gathered records. */
static uint64_t *recs;
#define REC(r)          (recs + (size_t)(r) * record_words())
#define SCALAR(r, i)    (REC(r)[i])
#define MSGS(s, d)      (REC(s)[R_NSCALARS + 2 * (size_t)(d)])
#define BYTES(s, d)     (REC(s)[R_NSCALARS + 2 * (size_t)(d) + 1])
#define COLL(r, i)      (REC(r)[R_NSCALARS + 2 * (size_t)nranks + (size_t)(i)])
#define ALG(r, i)       (REC(r)[R_NSCALARS + 2 * (size_t)nranks + (size_t)ncolls + (size_t)(i)])
#define HOST(r)         ((const char *)(REC(r) + R_NSCALARS + 2 * (size_t)nranks + ncolls + nalgs))

static uint64_t row_sum(int r, int bytes)
{
    uint64_t s = 0;
    for (int d = 0; d < nranks; d++) {
        s += bytes ? BYTES(r, d) : MSGS(r, d);
    }
    return s;
}

static uint64_t mpi_ns(int r)
{
    uint64_t s = 0;
    for (int c = 0; c < WEFT_CALL_NCLASSES; c++) {
        s += SCALAR(r, R_MPI_NS + c);
    }
    return s;
}

typedef struct {
    int      src, dst;
    uint64_t msgs, bytes;
} pair_t;

static int by_bytes(const void *a, const void *b)
{
    const pair_t *x = a, *y = b;
    if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
    if (x->msgs != y->msgs) return x->msgs < y->msgs ? 1 : -1;
    return x->src != y->src ? x->src - y->src : x->dst - y->dst;
}

static int top_pairs(pair_t *top)
{
    int n = 0;
    for (int s = 0; s < nranks; s++) {
        for (int d = 0; d < nranks; d++) {
            if (MSGS(s, d) == 0) {
                continue;
            }
            pair_t p = {s, d, MSGS(s, d), BYTES(s, d)};
            if (n < TOP_PAIRS) {
                top[n++] = p;
            } else if (by_bytes(&p, &top[n - 1]) < 0) {
                top[n - 1] = p;
            } else {
                continue;
            }
            qsort(top, (size_t)n, sizeof(*top), by_bytes);
        }
    }
    return n;
}

static void print_text(int level)
{
    pair_t top[TOP_PAIRS];
    int    ntop = top_pairs(top);

    fprintf(stderr, "weft report: job %s, %d rank%s\n", weft_runtime.jobid, nranks,
            nranks == 1 ? "" : "s");
    fprintf(stderr, "weft report: %5s %10s %14s %10s %10s %10s %10s %9s %10s %10s %10s  %s\n", "rank",
            "msgs_sent", "bytes_sent", "eager", "rndv", "msgs_recv", "unexpected", "unexp_hwm",
            "mpi_s", "wait_s", "wall_s", "host");
    for (int r = 0; r < nranks; r++) {
        char mpi_s[32] = "-"; /* not measured on that rank */
        if (SCALAR(r, R_MPI_TIMED)) {
            snprintf(mpi_s, sizeof(mpi_s), "%.6f", 1e-9 * (double)mpi_ns(r));
        }
        fprintf(stderr,
                "weft report: %5d %10llu %14llu %10llu %10llu %10llu %10llu %9llu %10s %10.6f %10.6f  %s\n",
                r, (unsigned long long)row_sum(r, 0), (unsigned long long)row_sum(r, 1),
                (unsigned long long)SCALAR(r, R_EAGER_MSGS), (unsigned long long)SCALAR(r, R_RNDV_MSGS),
                (unsigned long long)SCALAR(r, R_MSGS_RECEIVED),
                (unsigned long long)SCALAR(r, R_UNEXP_MSGS), (unsigned long long)SCALAR(r, R_UNEXP_HWM),
                mpi_s, 1e-9 * (double)SCALAR(r, R_WAIT_NS), 1e-9 * (double)SCALAR(r, R_WALL_NS), HOST(r));
    }
    for (int i = 0; i < nalgs; i++) {
        uint64_t lo = ALG(0, i), hi = ALG(0, i);
        for (int r = 1; r < nranks; r++) {
            lo = ALG(r, i) < lo ? ALG(r, i) : lo;
            hi = ALG(r, i) > hi ? ALG(r, i) : hi;
        }
        if (hi > 0) {
            fprintf(stderr, "weft report: collective %s: %llu..%llu calls per rank\n",
                    weft_pvar_element_name(WEFT_PVAR_COLL_ALG_CALLS, i), (unsigned long long)lo,
                    (unsigned long long)hi);
        }
    }
    for (int i = 0; i < ntop; i++) {
        fprintf(stderr, "weft report: top pair %d -> %d: %llu msgs, %llu bytes\n", top[i].src,
                top[i].dst, (unsigned long long)top[i].msgs, (unsigned long long)top[i].bytes);
    }
    if (level >= 2) {
        fprintf(stderr, "weft report: bytes sent, row = source rank, column = destination rank\n");
        for (int s = 0; s < nranks; s++) {
            fprintf(stderr, "weft report: %5d", s);
            for (int d = 0; d < nranks; d++) {
                fprintf(stderr, " %llu", (unsigned long long)BYTES(s, d));
            }
            fprintf(stderr, "\n");
        }
    }
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') {
            fprintf(f, "\\%c", *s);
        } else if ((unsigned char)*s < 0x20) {
            fprintf(f, "\\u%04x", (unsigned char)*s);
        } else {
            fputc(*s, f);
        }
    }
    fputc('"', f);
}

static void json_row(FILE *f, int src, int bytes)
{
    fputc('[', f);
    for (int d = 0; d < nranks; d++) {
        fprintf(f, "%s%llu", d ? "," : "", (unsigned long long)(bytes ? BYTES(src, d) : MSGS(src, d)));
    }
    fputc(']', f);
}

/* Element i of the array as a JSON list over ranks, if it is nonzero anywhere. */
static int json_per_rank(FILE *f, int first, const char *name, int alg, int i)
{
    int any = 0;
    for (int r = 0; r < nranks; r++) {
        any |= (alg ? ALG(r, i) : COLL(r, i)) != 0;
    }
    if (!any) {
        return first;
    }
    fprintf(f, "%s\n    ", first ? "" : ",");
    json_string(f, name);
    fputs(": [", f);
    for (int r = 0; r < nranks; r++) {
        fprintf(f, "%s%llu", r ? "," : "", (unsigned long long)(alg ? ALG(r, i) : COLL(r, i)));
    }
    fputc(']', f);
    return 0;
}

static int write_json(const char *path)
{
    pair_t top[TOP_PAIRS];
    int    ntop  = top_pairs(top), first;
    FILE  *f     = fopen(path, "w");

    if (f == NULL) {
        return -1;
    }
    fprintf(f, "{\n  \"schema\": \"weft-job-report/1\",\n  \"jobid\": ");
    json_string(f, weft_runtime.jobid);
    fprintf(f, ",\n  \"nranks\": %d,\n  \"ranks\": [", nranks);
    for (int r = 0; r < nranks; r++) {
        fprintf(f, "%s\n    {\"rank\": %d, \"host\": ", r ? "," : "", r);
        json_string(f, HOST(r));
        fprintf(f,
                ", \"msgs_sent\": %llu, \"bytes_sent\": %llu, \"eager_msgs_sent\": %llu, "
                "\"rndv_msgs_sent\": %llu, \"msgs_received\": %llu, \"unexpected_msgs\": %llu, "
                "\"unexpected_queue_hwm\": %llu, \"wait_seconds\": %.9f, \"wall_seconds\": %.9f, ",
                (unsigned long long)row_sum(r, 0), (unsigned long long)row_sum(r, 1),
                (unsigned long long)SCALAR(r, R_EAGER_MSGS), (unsigned long long)SCALAR(r, R_RNDV_MSGS),
                (unsigned long long)SCALAR(r, R_MSGS_RECEIVED),
                (unsigned long long)SCALAR(r, R_UNEXP_MSGS), (unsigned long long)SCALAR(r, R_UNEXP_HWM),
                1e-9 * (double)SCALAR(r, R_WAIT_NS), 1e-9 * (double)SCALAR(r, R_WALL_NS));
        if (!SCALAR(r, R_MPI_TIMED)) {
            fputs("\"mpi_seconds\": null, \"mpi_seconds_by_class\": null}", f);
            continue;
        }
        fprintf(f, "\"mpi_seconds\": %.9f, \"mpi_seconds_by_class\": {", 1e-9 * (double)mpi_ns(r));
        for (int c = 0; c < WEFT_CALL_NCLASSES; c++) {
            fprintf(f, "%s\"%s\": %.9f", c ? ", " : "", call_class_names[c],
                    1e-9 * (double)SCALAR(r, R_MPI_NS + c));
        }
        fputs("}}", f);
    }
    fputs("\n  ],\n  \"collective_calls\": {", f);
    first = 1;
    for (int i = 0; i < ncolls; i++) {
        first = json_per_rank(f, first, weft_pvar_element_name(WEFT_PVAR_COLL_CALLS, i), 0, i);
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"algorithm_calls\": {", f);
    first = 1;
    for (int i = 0; i < nalgs; i++) {
        first = json_per_rank(f, first, weft_pvar_element_name(WEFT_PVAR_COLL_ALG_CALLS, i), 1, i);
    }
    fputs(first ? "},\n" : "\n  },\n", f);
    fputs("  \"top_pairs\": [", f);
    for (int i = 0; i < ntop; i++) {
        fprintf(f, "%s\n    {\"src\": %d, \"dst\": %d, \"msgs\": %llu, \"bytes\": %llu}", i ? "," : "",
                top[i].src, top[i].dst, (unsigned long long)top[i].msgs, (unsigned long long)top[i].bytes);
    }
    fputs(ntop ? "\n  ],\n" : "],\n", f);
    fputs("  \"traffic\": {\n    \"msgs\": [", f);
    for (int s = 0; s < nranks; s++) {
        fputs(s ? ",\n      " : "\n      ", f);
        json_row(f, s, 0);
    }
    fputs("\n    ],\n    \"bytes\": [", f);
    for (int s = 0; s < nranks; s++) {
        fputs(s ? ",\n      " : "\n      ", f);
        json_row(f, s, 1);
    }
    fputs("\n    ]\n  }\n}\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

/* Every rank says what it wants and whether it has its record; all learn
 * the most anyone asked for, so ranks whose WEFT_REPORT / WEFT_REPORT_FILE
 * differ (a user error: scope ALL_EQ) still take part and nobody waits in
 * vain. Costs one small allreduce at MPI_Finalize, report on or off. */
enum { A_LEVEL, A_FILE, A_NO_RECORD, A_NEG_LEVEL, A_NEG_FILE, A_N };

static int agree_on_report(int agreed[A_N], int have_record)
{
    const char *file = weft_tunables.REPORT_FILE;
    int         want[A_N];

    want[A_LEVEL]     = weft_tunables.REPORT;
    want[A_FILE]      = file != NULL && file[0] != '\0';
    want[A_NO_RECORD] = !have_record;
    want[A_NEG_LEVEL] = -want[A_LEVEL];
    want[A_NEG_FILE]  = -want[A_FILE];
    memcpy(agreed, want, sizeof(want));
    /* A rank of this job was lost: no job-wide report (and no warning); the
     * allreduce below would include it. A lost process of another job (a
     * parent that finalized first, noticed by some ranks only) does not count:
     * skipping here while the others went in would leave them waiting. */
    if (weft_dev.nfailed_job > 0) {
        return -1;
    }
    if (weft_comm_world.size > 1 &&
        weft_allreduce_impl(want, agreed, A_N, weft_datatype_from_handle(MPI_INT),
                            weft_op_from_handle(MPI_MAX), &weft_comm_world) != MPI_SUCCESS) {
        weft_log_warn("the job report: ranks could not agree whether to write it; none is written");
        return -1;
    }
    return 0;
}

void weft_report_finish(void)
{
    const char *file = weft_tunables.REPORT_FILE;
    int         me   = weft_comm_world.rank;
    size_t      words;
    uint64_t   *mine = NULL;
    int         agreed[A_N];

    /* The record first: the agreement below is itself traffic. */
    if (weft_traffic != NULL) {
        words = record_words();
        mine  = calloc(words, sizeof(uint64_t));
        if (mine != NULL) {
            fill_record(mine);
        }
    }
    weft_mpi_time_on = 0;
    if (agree_on_report(agreed, mine != NULL) != 0 || (agreed[A_LEVEL] == 0 && agreed[A_FILE] == 0)) {
        free(mine);
        return;
    }
    if (me == 0 && (-agreed[A_NEG_LEVEL] != agreed[A_LEVEL] || -agreed[A_NEG_FILE] != agreed[A_FILE])) {
        const char *where = !agreed[A_FILE] ? "no" : agreed[A_NEG_FILE] ? "all" : "some";
        weft_log_warn("WEFT_REPORT (%d..%d) or WEFT_REPORT_FILE (set on %s ranks) differs between ranks: "
                      "reporting at WEFT_REPORT=%d%s",
                      -agreed[A_NEG_LEVEL], agreed[A_LEVEL], where, agreed[A_LEVEL],
                      (file == NULL || file[0] == '\0') && agreed[A_FILE]
                          ? ", without JSON (rank 0 has no WEFT_REPORT_FILE)"
                          : "");
    }
    if (agreed[A_NO_RECORD]) {
        if (me == 0) {
            weft_log_warn("no memory for the job report on some rank: no report");
        }
        free(mine);
        return;
    }
    words = record_words();
    if (me != 0) {
        weft_send_bytes(mine, words * sizeof(uint64_t), 0, REPORT_TAG, &weft_comm_world);
        free(mine);
        return;
    }
    recs = calloc(words * (size_t)nranks, sizeof(uint64_t));
    if (recs == NULL) { /* still receive, so nobody waits for us in vain */
        for (int r = 1; r < nranks; r++) {
            weft_recv_bytes(mine, words * sizeof(uint64_t), r, REPORT_TAG, &weft_comm_world);
        }
        weft_log_warn("no memory to gather the job report");
        free(mine);
        return;
    }
    memcpy(REC(0), mine, words * sizeof(uint64_t));
    free(mine);
    for (int r = 1; r < nranks; r++) {
        weft_recv_bytes(REC(r), words * sizeof(uint64_t), r, REPORT_TAG, &weft_comm_world);
    }
    if (agreed[A_LEVEL] > 0) {
        print_text(agreed[A_LEVEL]);
    }
    if (file != NULL && file[0] != '\0' && write_json(file) != 0) {
        weft_log_warn("WEFT_REPORT_FILE=%s: cannot write the job report", file);
    }
    free(recs);
    recs = NULL;
}
