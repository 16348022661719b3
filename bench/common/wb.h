/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft-bench common module: option parsing, timing, buffers, data patterns,
 * MPI error checking and output (OSU-style columns, CSV, JSON).
 *
 * Every benchmark is one small .c file that calls wb_init() first and
 * wb_finish() last. Only <mpi.h> is used, so one build runs on any MPI-5 ABI
 * library by changing LD_LIBRARY_PATH.
 *
 * Exit codes: 0 success, 1 validation failure or MPI error, 2 usage error,
 * 77 (WB_EXIT_MISSING) when the library reports a needed function as
 * MPI_ERR_UNSUPPORTED_OPERATION.
 */
#ifndef WB_H
#define WB_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#define WB_VERSION "0.1"

#define WB_EXIT_FAIL 1
#define WB_EXIT_USAGE 2
#define WB_EXIT_MISSING 77

#define WB_MAX_METRICS 8

/* Options a benchmark accepts beyond the common ones (-i -x -f -c -h
 * --csv --json). */
enum {
    WB_F_SIZES = 1u << 0,   /* -m min:max */
    WB_F_WINDOW = 1u << 1,  /* -W window */
    WB_F_ROOT = 1u << 2,    /* -r root */
    WB_F_INPLACE = 1u << 3, /* -I / --in-place */
    WB_F_DTYPE = 1u << 4,   /* -d char|int|float|double */
    WB_F_THREADS = 1u << 5, /* -t threads */
    WB_F_RMA = 1u << 6,     /* -w create|allocate, -s sync */
    WB_F_THREAD_MULTIPLE = 1u << 7, /* init with MPI_THREAD_MULTIPLE */
    WB_F_PAIRS = 1u << 8,   /* even np, ranks paired i <-> i + np/2 */
    WB_F_TWO = 1u << 9,     /* exactly two ranks */
    WB_F_B2B = 1u << 10,    /* -B / --back-to-back (blocking collectives) */
    WB_F_MEDIAN = 1u << 11, /* --median (a barrier-per-iteration loop) */
    WB_F_TOUCH = 1u << 12   /* --touch (point-to-point: read what arrives) */
};

typedef enum { WB_SYNC_FLUSH, WB_SYNC_LOCK, WB_SYNC_LOCK_ALL, WB_SYNC_FENCE, WB_SYNC_PSCW } wb_sync_t;

typedef struct wb_defaults {
    size_t min_size, max_size;
    int iters, iters_large;
    int warmup, warmup_large;
    int window;
    wb_sync_t sync;
    const char *dtype; /* NULL: "char" */
} wb_defaults_t;

typedef struct wb_opts {
    size_t min_size, max_size;
    size_t large_size; /* sizes above this use the large counts */
    int iters, iters_large;
    int warmup, warmup_large;
    int window;
    int full;
    int validate;
    int root;
    int in_place;
    int back_to_back; /* no barrier between timed calls */
    int median;       /* per-iteration times: each rank's median, not its mean */
    int touch;        /* read every received byte before going on, as a program would */
    int threads;
    int win_allocate; /* 1: MPI_Win_allocate, 0: MPI_Win_create */
    wb_sync_t sync;
    const char *dtype_name;
    MPI_Datatype dtype;  /* for data movement */
    MPI_Datatype rtype;  /* for reductions (signed char for "char") */
    int dsize;
    int dkind;           /* 0 char, 1 int, 2 float, 3 double */
    const char *csv_path;
    const char *json_path;
} wb_opts_t;

typedef struct wb_metric {
    const char *key;    /* CSV/JSON name, e.g. "latency_us" */
    const char *head;   /* column heading, e.g. "Latency (us)" */
    int is_int;
} wb_metric_t;

typedef struct wb_record {
    long long size; /* -1: no size column */
    double v[WB_MAX_METRICS];
    int valid; /* -1 not checked, 0 fail, 1 pass */
} wb_record_t;

typedef struct wb_ctx {
    const char *name;
    const char *title;
    unsigned features;
    wb_opts_t o;
    MPI_Comm comm;
    int rank, np;
    int thread_provided;
    double init_seconds; /* wall time spent in MPI_Init(_thread) */
    char library[256];
    int nmetrics;
    wb_metric_t m[WB_MAX_METRICS];
    int size_column;
    int header_done;
    int no_table; /* summary-style output: never print the column header */
    wb_record_t *rec;
    int nrec, caprec;
    int failed;
} wb_ctx_t;

/* Initialise MPI, set MPI_ERRORS_RETURN on MPI_COMM_WORLD, parse options
 * (exit 2 on bad ones, after printing usage on rank 0), read the library
 * version and print the banner on rank 0. */
void wb_init(wb_ctx_t *c, int *argc, char ***argv, const char *name, const char *title,
             unsigned features, const wb_defaults_t *d);

/* Write CSV/JSON, finalize MPI, and return the process exit code
 * (1 if any validation failed). */
int wb_finish(wb_ctx_t *c);

/* Check an MPI return code. Unsupported operations exit 77 with the
 * "# <bench>: <function> not supported by this library" line; any other
 * error prints the error string and aborts. 'what' is the call text; its
 * function name is everything before the first '('. */
void wb_check(int rc, const char *what, const char *file, int line);
#define WB(call) wb_check((call), #call, __FILE__, __LINE__)

/* Exit 77 with the standard "not supported" line (e.g. thread level). */
void wb_missing(const char *what);
/* Print a message on rank 0 and exit 2 (wrong number of ranks etc.). */
void wb_usage_fail(wb_ctx_t *c, const char *msg);

/* Columns. Call wb_columns() once before the first wb_row(). */
void wb_columns(wb_ctx_t *c, int size_column, int n, const wb_metric_t *m);
/* Record (and on rank 0 print) one row. valid: -1 unchecked, 0/1. */
void wb_row(wb_ctx_t *c, long long size, const double *v, int valid);
/* Record a row for CSV/JSON only (no table line). */
void wb_record(wb_ctx_t *c, long long size, const double *v, int valid);
/* Print a comment line on rank 0. */
void wb_note(wb_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Message sizes: first and next in the -m range (powers of two, starting
 * at min; 0 is followed by 1). Returns 0 past the end via wb_size_ok. */
size_t wb_size_first(const wb_ctx_t *c);
size_t wb_size_next(const wb_ctx_t *c, size_t s);
int wb_size_ok(const wb_ctx_t *c, size_t s);
int wb_iters(const wb_ctx_t *c, size_t size);
int wb_warmup(const wb_ctx_t *c, size_t size);

/* Page-aligned, zeroed buffer; exits on failure. */
void *wb_alloc(size_t bytes);
void wb_free(void *p);
/* Median of v[0..n) (sorts v in place). */
double wb_median(double *v, int n);

/* Byte patterns for data-movement validation. The seed names the sender,
 * the receiver and the iteration, so a misplaced block is caught too. */
unsigned wb_seed(int a, int b, int it);
void wb_fill(void *buf, size_t bytes, unsigned seed);
/* Returns 0 if every byte matches; otherwise prints the first mismatch
 * (with 'what' and the rank) and returns 1. */
int wb_verify(const wb_ctx_t *c, const void *buf, size_t bytes, unsigned seed, const char *what);
/* Reads every 8-byte word of buf (--touch): the cost a program pays to use
 * what it received, which depends on where the transport left those lines. */
void wb_touch(const void *buf, size_t bytes);

/* Typed values for reduction validation: element i of rank r at iteration
 * it is a small integer, so every sum is exact in every datatype. */
void wb_fill_typed(const wb_ctx_t *c, void *buf, size_t count, int r, int it);
/* Checks that buf[i] (element index i + first) equals the sum of the
 * values of ranks [r_lo, r_hi). */
int wb_verify_sum(const wb_ctx_t *c, const void *buf, size_t count, size_t first, int r_lo, int r_hi,
                  int it, const char *what);
/* Value of element i for rank r at iteration it (as a double). */
double wb_value(int i, int r, int it);
/* Store / load element i of a typed buffer. */
void wb_store(const wb_ctx_t *c, void *buf, size_t i, double v);
double wb_load(const wb_ctx_t *c, const void *buf, size_t i);

/* Logical AND of the local "ok" flags of all ranks (1 = all passed). */
int wb_agree(wb_ctx_t *c, int ok);

/* Across-rank statistics of a per-rank value (result valid everywhere). */
void wb_stats(wb_ctx_t *c, double local, double *avg, double *min, double *max);

/* Spin (no MPI calls) for about 'us' microseconds; returns the time spent
 * in seconds. Used as the compute phase of the overlap benchmarks. */
double wb_compute(double us);

double wb_now(void); /* MPI_Wtime() */

#endif
