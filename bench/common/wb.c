/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "wb.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const char *wb_g_name = "weft-bench";
static int wb_g_rank = 0;

static double wb_mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

double wb_now(void)
{
    return MPI_Wtime();
}

void wb_missing(const char *what)
{
    /* Every rank prints the line on stdout: the first rank to exit may get
     * the others killed by the launcher before rank 0 has printed, and the
     * harness looks for the line on stdout. */
    if (wb_g_rank == 0)
        printf("# %s: %s not supported by this library\n", wb_g_name, what);
    else
        printf("# %s: %s not supported by this library (rank %d)\n", wb_g_name, what,
               wb_g_rank);
    fflush(stdout);
    _exit(WB_EXIT_MISSING);
}

void wb_check(int rc, const char *what, const char *file, int line)
{
    char fn[128];
    size_t n = 0;
    int cls = rc, len = 0;
    char msg[MPI_MAX_ERROR_STRING];

    if (rc == MPI_SUCCESS)
        return;
    while (what[n] && what[n] != '(' && n + 1 < sizeof(fn)) {
        fn[n] = what[n];
        n++;
    }
    fn[n] = '\0';
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS)
        cls = rc;
    if (cls == MPI_ERR_UNSUPPORTED_OPERATION)
        wb_missing(fn);
    msg[0] = '\0';
    if (MPI_Error_string(rc, msg, &len) != MPI_SUCCESS)
        snprintf(msg, sizeof(msg), "error code %d", rc);
    fprintf(stderr, "# %s: rank %d: %s failed at %s:%d: class %d: %s\n", wb_g_name, wb_g_rank, fn,
            file, line, cls, msg);
    fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, WB_EXIT_FAIL);
    _exit(WB_EXIT_FAIL);
}

void wb_usage_fail(wb_ctx_t *c, const char *msg)
{
    if (c->rank == 0) {
        fprintf(stderr, "# %s: %s\n", c->name, msg);
        fflush(stderr);
    }
    MPI_Finalize();
    exit(WB_EXIT_USAGE);
}

/* ---- options ---------------------------------------------------------- */

static int wb_parse_size(const char *s, size_t *out)
{
    char *end;
    unsigned long long v;

    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || end == s)
        return -1;
    switch (toupper((unsigned char)*end)) {
    case 'K': v <<= 10; end++; break;
    case 'M': v <<= 20; end++; break;
    case 'G': v <<= 30; end++; break;
    default: break;
    }
    if (*end == 'B' || *end == 'b')
        end++;
    if (*end)
        return -1;
    *out = (size_t)v;
    return 0;
}

static int wb_parse_int(const char *s, int *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > 1000000000L)
        return -1;
    *out = (int)v;
    return 0;
}

/* "N" or "N:L" */
static int wb_parse_pair(const char *s, int *a, int *b)
{
    char buf[64];
    char *colon;

    snprintf(buf, sizeof(buf), "%s", s);
    colon = strchr(buf, ':');
    if (colon) {
        *colon = '\0';
        if (wb_parse_int(buf, a) || wb_parse_int(colon + 1, b))
            return -1;
    } else {
        if (wb_parse_int(buf, a))
            return -1;
        *b = *a;
    }
    return 0;
}

static void wb_usage(const wb_ctx_t *c, FILE *f)
{
    unsigned ft = c->features;

    fprintf(f, "Usage: %s [options]\n", c->name);
    fprintf(f, "weft-bench %s: %s\n\nOptions:\n", WB_VERSION, c->title);
    if (ft & WB_F_SIZES)
        fprintf(f, "  -m, --message-size [MIN:]MAX  message sizes in bytes, K/M suffixes (default %zu:%zu)\n",
                c->o.min_size, c->o.max_size);
    fprintf(f, "  -i, --iterations N[:L]        timed iterations (small[:large] messages)\n");
    fprintf(f, "  -x, --warmup N[:L]            warm-up iterations (small[:large] messages)\n");
    if (ft & WB_F_WINDOW)
        fprintf(f, "  -W, --window-size N           messages in flight per iteration (default %d)\n",
                c->o.window);
    fprintf(f, "  -f, --full                    min/max/avg across ranks and iteration count\n");
    fprintf(f, "  -c, --validation              check every received byte; exit 1 on mismatch\n");
    if (ft & WB_F_ROOT)
        fprintf(f, "  -r, --root R                  root rank (default 0)\n");
    if (ft & WB_F_INPLACE)
        fprintf(f, "  -I, --in-place                use MPI_IN_PLACE\n");
    if (ft & WB_F_B2B)
        fprintf(f, "  -B, --back-to-back            no barrier between timed calls (time per call)\n");
    if (ft & WB_F_MEDIAN)
        fprintf(f, "      --median                  each rank's median iteration time (robust to\n"
                   "                                preemption on a loaded machine), not its mean\n");
    if (ft & WB_F_TOUCH)
        fprintf(f, "      --touch                   read every received byte before going on (as a\n"
                   "                                program uses its data; timed)\n");
    if (ft & WB_F_DTYPE)
        fprintf(f, "  -d, --datatype T              char|int|float|double\n");
    if (ft & WB_F_THREADS)
        fprintf(f, "  -t, --threads N               threads per rank (default %d)\n", c->o.threads);
    if (ft & WB_F_RMA) {
        fprintf(f, "  -w, --win create|allocate     window creation (default allocate)\n");
        fprintf(f, "  -s, --sync flush|lock|lock_all|fence|pscw  synchronisation\n");
    }
    fprintf(f, "      --large-size BYTES        sizes above use the large counts (default 8192)\n");
    fprintf(f, "      --csv FILE                write records as CSV (rank 0)\n");
    fprintf(f, "      --json FILE               write records as JSON (rank 0)\n");
    fprintf(f, "  -h, --help                    this text\n  -v, --version                 version\n");
}

static int wb_set_dtype(wb_opts_t *o, const char *t)
{
    o->dtype_name = t;
    if (!strcmp(t, "char")) {
        o->dtype = MPI_CHAR;
        o->rtype = MPI_SIGNED_CHAR;
        o->dsize = 1;
        o->dkind = 0;
    } else if (!strcmp(t, "int")) {
        o->dtype = o->rtype = MPI_INT;
        o->dsize = (int)sizeof(int);
        o->dkind = 1;
    } else if (!strcmp(t, "float")) {
        o->dtype = o->rtype = MPI_FLOAT;
        o->dsize = (int)sizeof(float);
        o->dkind = 2;
    } else if (!strcmp(t, "double")) {
        o->dtype = o->rtype = MPI_DOUBLE;
        o->dsize = (int)sizeof(double);
        o->dkind = 3;
    } else {
        return -1;
    }
    return 0;
}

static const char *wb_sync_name(wb_sync_t s)
{
    switch (s) {
    case WB_SYNC_FLUSH: return "flush";
    case WB_SYNC_LOCK: return "lock";
    case WB_SYNC_LOCK_ALL: return "lock_all";
    case WB_SYNC_FENCE: return "fence";
    case WB_SYNC_PSCW: return "pscw";
    }
    return "?";
}

/* 1 (with the message in err) when the benchmark has no use for option
 * `name`, i.e. its features lack `feature`; else 0. */
static int unused_option(unsigned features, unsigned feature, const char *name, char *err,
                         size_t errlen)
{
    if (features & feature) {
        return 0;
    }
    snprintf(err, errlen, "%s is not used by this benchmark", name);
    return 1;
}

static void wb_parse(wb_ctx_t *c, int argc, char **argv)
{
    static const struct option lopts[] = {
        {"message-size", required_argument, 0, 'm'},
        {"iterations", required_argument, 0, 'i'},
        {"warmup", required_argument, 0, 'x'},
        {"window-size", required_argument, 0, 'W'},
        {"full", no_argument, 0, 'f'},
        {"validation", no_argument, 0, 'c'},
        {"root", required_argument, 0, 'r'},
        {"in-place", no_argument, 0, 'I'},
        {"back-to-back", no_argument, 0, 'B'},
        {"median", no_argument, 0, 'M'},
        {"touch", no_argument, 0, 'T'},
        {"datatype", required_argument, 0, 'd'},
        {"threads", required_argument, 0, 't'},
        {"win", required_argument, 0, 'w'},
        {"sync", required_argument, 0, 's'},
        {"large-size", required_argument, 0, 'L'},
        {"csv", required_argument, 0, 'C'},
        {"json", required_argument, 0, 'J'},
        {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'v'},
        {0, 0, 0, 0}};
    wb_opts_t *o = &c->o;
    unsigned ft = c->features;
    int ch, bad = 0;
    char err[256] = "";

    opterr = 0;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "m:i:x:W:fcr:IBd:t:w:s:hv", lopts, NULL)) != -1) {
        switch (ch) {
        case 'm': {
            char buf[64], *colon;
            snprintf(buf, sizeof(buf), "%s", optarg);
            colon = strchr(buf, ':');
            if (unused_option(ft, WB_F_SIZES, "-m", err, sizeof(err))) {
                bad = 1;
            } else if (colon) {
                *colon = '\0';
                if ((buf[0] && wb_parse_size(buf, &o->min_size)) ||
                    wb_parse_size(colon + 1, &o->max_size))
                    bad = 1;
            } else if (wb_parse_size(buf, &o->max_size)) {
                bad = 1;
            }
            break;
        }
        case 'i': bad |= wb_parse_pair(optarg, &o->iters, &o->iters_large) != 0; break;
        case 'x': bad |= wb_parse_pair(optarg, &o->warmup, &o->warmup_large) != 0; break;
        case 'W':
            bad |= !(ft & WB_F_WINDOW) || wb_parse_int(optarg, &o->window) || o->window < 1;
            break;
        case 'f': o->full = 1; break;
        case 'c': o->validate = 1; break;
        case 'r': bad |= !(ft & WB_F_ROOT) || wb_parse_int(optarg, &o->root); break;
        case 'I': bad |= !(ft & WB_F_INPLACE); o->in_place = 1; break;
        case 'B': bad |= !(ft & WB_F_B2B); o->back_to_back = 1; break;
        case 'M':
            bad |= unused_option(ft, WB_F_MEDIAN, "--median", err, sizeof(err));
            o->median = 1;
            break;
        case 'T':
            bad |= unused_option(ft, WB_F_TOUCH, "--touch", err, sizeof(err));
            o->touch = 1;
            break;
        case 'd':
            bad |= !(ft & WB_F_DTYPE) || wb_set_dtype(o, optarg);
            break;
        case 't':
            bad |= !(ft & WB_F_THREADS) || wb_parse_int(optarg, &o->threads) || o->threads < 1;
            break;
        case 'w':
            if (!(ft & WB_F_RMA))
                bad = 1;
            else if (!strcmp(optarg, "create"))
                o->win_allocate = 0;
            else if (!strcmp(optarg, "allocate"))
                o->win_allocate = 1;
            else
                bad = 1;
            break;
        case 's':
            if (!(ft & WB_F_RMA))
                bad = 1;
            else if (!strcmp(optarg, "flush"))
                o->sync = WB_SYNC_FLUSH;
            else if (!strcmp(optarg, "lock"))
                o->sync = WB_SYNC_LOCK;
            else if (!strcmp(optarg, "lock_all"))
                o->sync = WB_SYNC_LOCK_ALL;
            else if (!strcmp(optarg, "fence"))
                o->sync = WB_SYNC_FENCE;
            else if (!strcmp(optarg, "pscw"))
                o->sync = WB_SYNC_PSCW;
            else
                bad = 1;
            break;
        case 'L': bad |= wb_parse_size(optarg, &o->large_size) != 0; break;
        case 'C': o->csv_path = optarg; break;
        case 'J': o->json_path = optarg; break;
        case 'h':
            if (c->rank == 0)
                wb_usage(c, stdout);
            MPI_Finalize();
            exit(0);
        case 'v':
            if (c->rank == 0)
                printf("weft-bench %s %s\n", WB_VERSION, c->name);
            MPI_Finalize();
            exit(0);
        default:
            bad = 1;
            snprintf(err, sizeof(err), "unknown option '%s'", argv[optind - 1]);
            break;
        }
        if (bad && !err[0])
            snprintf(err, sizeof(err), "bad or unsupported option -%c%s%s", ch, optarg ? " " : "",
                     optarg ? optarg : "");
        if (bad)
            break;
    }
    if (!bad && optind < argc) {
        bad = 1;
        snprintf(err, sizeof(err), "unexpected argument '%s'", argv[optind]);
    }
    if (!bad && o->median && o->back_to_back) {
        bad = 1;
        snprintf(err, sizeof(err), "--median needs per-iteration times: not with -B");
    }
    if (!bad && o->min_size > o->max_size) {
        bad = 1;
        snprintf(err, sizeof(err), "minimum size above maximum size");
    }
    if (!bad && (ft & WB_F_ROOT) && o->root >= c->np) {
        bad = 1;
        snprintf(err, sizeof(err), "root %d out of range (np %d)", o->root, c->np);
    }
    if (bad) {
        if (c->rank == 0) {
            fprintf(stderr, "# %s: %s\n", c->name, err);
            wb_usage(c, stderr);
        }
        MPI_Finalize();
        exit(WB_EXIT_USAGE);
    }
}

void wb_init(wb_ctx_t *c, int *argc, char ***argv, const char *name, const char *title,
             unsigned features, const wb_defaults_t *d)
{
    double t0, t1;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    size_t i;

    memset(c, 0, sizeof(*c));
    c->name = name;
    c->title = title;
    c->features = features;
    wb_g_name = name;

    c->o.min_size = d->min_size;
    c->o.max_size = d->max_size;
    c->o.iters = d->iters;
    c->o.iters_large = d->iters_large;
    c->o.warmup = d->warmup;
    c->o.warmup_large = d->warmup_large;
    c->o.window = d->window > 0 ? d->window : 64;
    c->o.sync = d->sync;
    c->o.large_size = 8192;
    c->o.threads = 2;
    c->o.win_allocate = 1;
    if (wb_set_dtype(&c->o, d->dtype ? d->dtype : "char"))
        wb_set_dtype(&c->o, "char");

    t0 = wb_mono();
    if (features & WB_F_THREAD_MULTIPLE) {
        if (MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &c->thread_provided) != MPI_SUCCESS) {
            fprintf(stderr, "# %s: MPI_Init_thread failed\n", name);
            exit(WB_EXIT_FAIL);
        }
    } else {
        if (MPI_Init(argc, argv) != MPI_SUCCESS) {
            fprintf(stderr, "# %s: MPI_Init failed\n", name);
            exit(WB_EXIT_FAIL);
        }
        c->thread_provided = MPI_THREAD_SINGLE;
    }
    t1 = wb_mono();
    c->init_seconds = t1 - t0;

    c->comm = MPI_COMM_WORLD;
    WB(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    WB(MPI_Comm_rank(c->comm, &c->rank));
    WB(MPI_Comm_size(c->comm, &c->np));
    wb_g_rank = c->rank;

    wb_parse(c, *argc, *argv);

    lib[0] = '\0';
    WB(MPI_Get_library_version(lib, &len));
    for (i = 0; lib[i] && lib[i] != '\n' && i + 1 < sizeof(c->library); i++)
        c->library[i] = lib[i];
    c->library[i] = '\0';
    while (i > 0 && isspace((unsigned char)c->library[i - 1]))
        c->library[--i] = '\0';
    /* collapse runs of blanks ("MPICH Version:      5.0.2") */
    {
        char *r = c->library, *w = c->library;
        int sp = 0;
        for (; *r; r++) {
            if (isspace((unsigned char)*r)) {
                if (!sp)
                    *w++ = ' ';
                sp = 1;
            } else {
                *w++ = *r;
                sp = 0;
            }
        }
        *w = '\0';
    }

    if ((features & WB_F_TWO) && c->np != 2)
        wb_usage_fail(c, "this benchmark needs exactly 2 processes");
    if ((features & WB_F_PAIRS) && (c->np < 2 || c->np % 2))
        wb_usage_fail(c, "this benchmark needs an even number of processes");
    if ((features & WB_F_THREAD_MULTIPLE) && c->thread_provided < MPI_THREAD_MULTIPLE)
        wb_missing("MPI_THREAD_MULTIPLE");

    if (c->rank == 0) {
        printf("# weft-bench %s v%s\n", title, WB_VERSION);
        printf("# Library: %s\n", c->library);
        printf("# Processes: %d\n", c->np);
        if (features & WB_F_DTYPE)
            printf("# Datatype: %s\n", c->o.dtype_name);
        if (features & WB_F_WINDOW)
            printf("# Window size: %d\n", c->o.window);
        if (features & WB_F_ROOT)
            printf("# Root: %d\n", c->o.root);
        if (c->o.in_place)
            printf("# In place: yes\n");
        if (c->o.median)
            printf("# Statistic: each rank's median iteration time, averaged over ranks\n");
        if (features & WB_F_THREADS)
            printf("# Threads per rank: %d\n", c->o.threads);
        if (features & WB_F_RMA)
            printf("# Window creation: %s, synchronization: %s\n",
                   c->o.win_allocate ? "MPI_Win_allocate" : "MPI_Win_create",
                   wb_sync_name(c->o.sync));
        fflush(stdout);
    }
}

/* ---- sizes and counts ---------------------------------------------------- */

size_t wb_size_first(const wb_ctx_t *c)
{
    return c->o.min_size;
}

size_t wb_size_next(const wb_ctx_t *c, size_t s)
{
    (void)c;
    return s ? s * 2 : 1;
}

int wb_size_ok(const wb_ctx_t *c, size_t s)
{
    return s <= c->o.max_size;
}

int wb_iters(const wb_ctx_t *c, size_t size)
{
    int n = size > c->o.large_size ? c->o.iters_large : c->o.iters;
    return n > 0 ? n : 1;
}

int wb_warmup(const wb_ctx_t *c, size_t size)
{
    return size > c->o.large_size ? c->o.warmup_large : c->o.warmup;
}

/* ---- buffers and patterns ------------------------------------------------ */

void *wb_alloc(size_t bytes)
{
    void *p = NULL;
    long pg = sysconf(_SC_PAGESIZE);

    if (pg <= 0)
        pg = 4096;
    if (posix_memalign(&p, (size_t)pg, bytes ? bytes : 1)) {
        fprintf(stderr, "# %s: out of memory (%zu bytes)\n", wb_g_name, bytes);
        MPI_Abort(MPI_COMM_WORLD, WB_EXIT_FAIL);
        _exit(WB_EXIT_FAIL);
    }
    memset(p, 0, bytes ? bytes : 1);
    return p;
}

void wb_free(void *p)
{
    free(p);
}

static int wb_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double wb_median(double *v, int n)
{
    if (n <= 0)
        return 0;
    qsort(v, (size_t)n, sizeof(*v), wb_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

unsigned wb_seed(int a, int b, int it)
{
    return (unsigned)a * 7919u + (unsigned)b * 104729u + (unsigned)it * 131u + 17u;
}

static inline uint8_t wb_byte(unsigned seed, size_t i)
{
    return (uint8_t)(seed + i * 7u + (i >> 8) * 13u + (seed >> 8));
}

void wb_fill(void *buf, size_t bytes, unsigned seed)
{
    uint8_t *p = buf;
    size_t i;

    for (i = 0; i < bytes; i++)
        p[i] = wb_byte(seed, i);
}

void wb_touch(const void *buf, size_t bytes)
{
    const unsigned char *p   = buf;
    uint64_t             sum = 0, w;

    for (size_t i = 0; i + sizeof(w) <= bytes; i += sizeof(w)) {
        memcpy(&w, p + i, sizeof(w));
        sum += w;
    }
    __asm__ volatile("" : : "r"(sum)); /* the reads must happen */
}

int wb_verify(const wb_ctx_t *c, const void *buf, size_t bytes, unsigned seed, const char *what)
{
    const uint8_t *p = buf;
    size_t i;

    for (i = 0; i < bytes; i++) {
        if (p[i] != wb_byte(seed, i)) {
            fprintf(stderr,
                    "# %s: validation failed on rank %d: %s: byte %zu of %zu is 0x%02x, expected 0x%02x\n",
                    c->name, c->rank, what, i, bytes, p[i], wb_byte(seed, i));
            return 1;
        }
    }
    return 0;
}

double wb_value(int i, int r, int it)
{
    return (double)((i + r * 3 + it) % 3 + 1);
}

void wb_store(const wb_ctx_t *c, void *buf, size_t i, double v)
{
    switch (c->o.dkind) {
    case 0: ((signed char *)buf)[i] = (signed char)v; break;
    case 1: ((int *)buf)[i] = (int)v; break;
    case 2: ((float *)buf)[i] = (float)v; break;
    default: ((double *)buf)[i] = v; break;
    }
}

double wb_load(const wb_ctx_t *c, const void *buf, size_t i)
{
    switch (c->o.dkind) {
    case 0: return ((const signed char *)buf)[i];
    case 1: return ((const int *)buf)[i];
    case 2: return ((const float *)buf)[i];
    default: return ((const double *)buf)[i];
    }
}

void wb_fill_typed(const wb_ctx_t *c, void *buf, size_t count, int r, int it)
{
    size_t i;

    for (i = 0; i < count; i++)
        wb_store(c, buf, i, wb_value((int)i, r, it));
}

int wb_verify_sum(const wb_ctx_t *c, const void *buf, size_t count, size_t first, int r_lo, int r_hi,
                  int it, const char *what)
{
    size_t i;
    int r;

    for (i = 0; i < count; i++) {
        double want = 0, got = wb_load(c, buf, i);
        for (r = r_lo; r < r_hi; r++)
            want += wb_value((int)(i + first), r, it);
        if (got != want) {
            fprintf(stderr,
                    "# %s: validation failed on rank %d: %s: element %zu is %g, expected %g\n",
                    c->name, c->rank, what, i + first, got, want);
            return 1;
        }
    }
    return 0;
}

int wb_agree(wb_ctx_t *c, int ok)
{
    int all = 0;

    WB(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, c->comm));
    return all;
}

void wb_stats(wb_ctx_t *c, double local, double *avg, double *min, double *max)
{
    double s = 0;

    WB(MPI_Allreduce(&local, &s, 1, MPI_DOUBLE, MPI_SUM, c->comm));
    WB(MPI_Allreduce(&local, min, 1, MPI_DOUBLE, MPI_MIN, c->comm));
    WB(MPI_Allreduce(&local, max, 1, MPI_DOUBLE, MPI_MAX, c->comm));
    *avg = s / c->np;
}

double wb_compute(double us)
{
    double t0 = wb_mono(), t;
    volatile double x = 1.0;

    do {
        int k;
        for (k = 0; k < 64; k++)
            x = x * 1.0000001 + 1e-9;
        t = wb_mono();
    } while ((t - t0) * 1e6 < us);
    return t - t0;
}

/* ---- output ---------------------------------------------------------------- */

static int wb_col_width(const wb_metric_t *m)
{
    int w = (int)strlen(m->head) + 2;
    return w < 18 ? 18 : w;
}

void wb_columns(wb_ctx_t *c, int size_column, int n, const wb_metric_t *m)
{
    int i;

    c->size_column = size_column;
    c->nmetrics = n < WB_MAX_METRICS ? n : WB_MAX_METRICS;
    for (i = 0; i < c->nmetrics; i++)
        c->m[i] = m[i];
}

static void wb_header(wb_ctx_t *c)
{
    int i;

    if (c->header_done || c->rank != 0)
        return;
    c->header_done = 1;
    printf("%-10s", c->size_column ? "# Size" : "#");
    for (i = 0; i < c->nmetrics; i++)
        printf("%*s", wb_col_width(&c->m[i]), c->m[i].head);
    if (c->o.validate)
        printf("%*s", 12, "Validation");
    printf("\n");
    fflush(stdout);
}

void wb_note(wb_ctx_t *c, const char *fmt, ...)
{
    va_list ap;

    if (c->rank != 0)
        return;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

void wb_record(wb_ctx_t *c, long long size, const double *v, int valid)
{
    wb_record_t *r;
    int i;

    if (valid == 0)
        c->failed = 1;
    if (c->rank != 0)
        return;
    if (c->nrec == c->caprec) {
        c->caprec = c->caprec ? c->caprec * 2 : 32;
        c->rec = realloc(c->rec, (size_t)c->caprec * sizeof(*c->rec));
        if (!c->rec) {
            fprintf(stderr, "# %s: out of memory\n", c->name);
            exit(WB_EXIT_FAIL);
        }
    }
    r = &c->rec[c->nrec++];
    memset(r, 0, sizeof(*r));
    r->size = c->size_column ? size : -1;
    for (i = 0; i < c->nmetrics; i++)
        r->v[i] = v[i];
    r->valid = valid;
}

void wb_row(wb_ctx_t *c, long long size, const double *v, int valid)
{
    int i;

    if (c->rank == 0) {
        wb_header(c);
        if (c->size_column)
            printf("%-10lld", size);
        else
            printf("%-10s", "");
        for (i = 0; i < c->nmetrics; i++) {
            if (c->m[i].is_int)
                printf("%*.0f", wb_col_width(&c->m[i]), v[i]);
            else
                printf("%*.2f", wb_col_width(&c->m[i]), v[i]);
        }
        if (c->o.validate)
            printf("%*s", 12, valid == 1 ? "Pass" : valid == 0 ? "Fail" : "-");
        printf("\n");
        fflush(stdout);
    }
    wb_record(c, size, v, valid);
}

static void wb_json_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void wb_csv_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void wb_num(FILE *f, double v, int is_int)
{
    if (is_int)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.4f", v);
}

static int wb_write_csv(wb_ctx_t *c)
{
    FILE *f = fopen(c->o.csv_path, "w");
    int i, k;

    if (!f) {
        fprintf(stderr, "# %s: cannot write %s\n", c->name, c->o.csv_path);
        return -1;
    }
    fprintf(f, "benchmark,library,nprocs,size");
    for (k = 0; k < c->nmetrics; k++)
        fprintf(f, ",%s", c->m[k].key);
    fprintf(f, ",datatype,validation\n");
    for (i = 0; i < c->nrec; i++) {
        wb_record_t *r = &c->rec[i];
        fprintf(f, "%s,", c->name);
        wb_csv_str(f, c->library);
        fprintf(f, ",%d,", c->np);
        if (r->size >= 0)
            fprintf(f, "%lld", r->size);
        for (k = 0; k < c->nmetrics; k++) {
            fputc(',', f);
            wb_num(f, r->v[k], c->m[k].is_int);
        }
        fprintf(f, ",%s,%s\n", (c->features & WB_F_DTYPE) ? c->o.dtype_name : "",
                r->valid == 1 ? "pass" : r->valid == 0 ? "fail" : "");
    }
    return fclose(f);
}

static int wb_write_json(wb_ctx_t *c)
{
    FILE *f = fopen(c->o.json_path, "w");
    int i, k;

    if (!f) {
        fprintf(stderr, "# %s: cannot write %s\n", c->name, c->o.json_path);
        return -1;
    }
    fprintf(f, "{\n  \"format\": \"weft-bench-1\",\n  \"benchmark\": \"%s\",\n  \"title\": ", c->name);
    wb_json_str(f, c->title);
    fprintf(f, ",\n  \"library\": ");
    wb_json_str(f, c->library);
    fprintf(f, ",\n  \"nprocs\": %d,\n", c->np);
    fprintf(f, "  \"statistic\": \"%s\",\n", c->o.median ? "median" : "mean");
    fprintf(f, "  \"metrics\": [");
    for (k = 0; k < c->nmetrics; k++) {
        fprintf(f, "%s{\"key\": ", k ? ", " : "");
        wb_json_str(f, c->m[k].key);
        fprintf(f, ", \"head\": ");
        wb_json_str(f, c->m[k].head);
        fprintf(f, "}");
    }
    fprintf(f, "],\n  \"records\": [\n");
    for (i = 0; i < c->nrec; i++) {
        wb_record_t *r = &c->rec[i];
        fprintf(f, "    {\"benchmark\": \"%s\", \"library\": ", c->name);
        wb_json_str(f, c->library);
        fprintf(f, ", \"nprocs\": %d, \"size\": ", c->np);
        if (r->size >= 0)
            fprintf(f, "%lld", r->size);
        else
            fprintf(f, "null");
        if (c->features & WB_F_DTYPE)
            fprintf(f, ", \"datatype\": \"%s\"", c->o.dtype_name);
        for (k = 0; k < c->nmetrics; k++) {
            fprintf(f, ", \"%s\": ", c->m[k].key);
            wb_num(f, r->v[k], c->m[k].is_int);
        }
        if (r->valid >= 0)
            fprintf(f, ", \"validation\": \"%s\"", r->valid ? "pass" : "fail");
        fprintf(f, "}%s\n", i + 1 < c->nrec ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return fclose(f);
}

int wb_finish(wb_ctx_t *c)
{
    int rc = 0;

    if (c->rank == 0) {
        if (c->nrec == 0 && c->nmetrics > 0 && !c->no_table)
            wb_header(c);
        if (c->o.csv_path && wb_write_csv(c))
            rc = WB_EXIT_FAIL;
        if (c->o.json_path && wb_write_json(c))
            rc = WB_EXIT_FAIL;
    }
    free(c->rec);
    c->rec = NULL;
    WB(MPI_Finalize());
    if (c->failed) {
        if (c->rank == 0)
            fprintf(stderr, "# %s: VALIDATION FAILED\n", c->name);
        return WB_EXIT_FAIL;
    }
    return rc;
}
