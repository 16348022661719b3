/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * weft-info: version, build configuration and every tunable with its current
 * value and where that value came from (default, WEFT_X, or an MV2_X alias).
 * `--tunables --markdown` writes the tunables reference (docs/tunables.md).
 * `--tuning` shows the intra-node thresholds a job here would use and why.
 * Built from the util objects, weft_build_config.h and the self-contained
 * threshold files (core/hwcpu.c, core/pt2pt/shm_thresholds.c,
 * transport/shm/shm_cost.c), never from the MPI library, so it runs even
 * where the library cannot initialise.
 */
#include "core/hwinfo.h"
#include "core/pt2pt/shm_thresholds.h"
#include "transport/shm/shm.h"
#include "util/tunables.h"
#include "weft_build_config.h"

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { SHOW_VERSION = 1, SHOW_CONFIG = 2, SHOW_TUNABLES = 4, SHOW_PVARS = 8, SHOW_TUNING = 16 };

static const char *kind_name(weft_tunable_kind_t kind)
{
    switch (kind) {
    case WEFT_TKIND_BOOL: return "bool";
    case WEFT_TKIND_INT: return "int";
    case WEFT_TKIND_SIZE: return "size";
    case WEFT_TKIND_STRING: return "string";
    case WEFT_TKIND_ENUM: return "enum";
    }
    return "?";
}

static void usage(FILE *out)
{
    fprintf(out, "usage: weft-info [-a|--all] [-v|--version] [-c|--config] [-t|--tunables] "
                 "[-p|--pvars] [--tuning] [--markdown] [-h|--help]\n"
                 "  (no option)     version and build configuration\n"
                 "  -a, --all       version, build configuration and every tunable\n"
                 "  -v, --version   version line only\n"
                 "  -c, --config    build configuration only\n"
                 "  -t, --tunables  every tunable: current value and its source\n"
                 "  -p, --pvars     MPI_T performance variables and events (names, classes)\n"
                 "  --tuning        intra-node protocol thresholds a job here would use, and\n"
                 "                  why (measures CMA and memcpy with a child process)\n"
                 "  --markdown      the tunables reference as Markdown (docs/tunables.md);\n"
                 "                  defaults only, the environment is not read\n");
}

/* The MPI_T view of the library's counters and events, from their tables
 * (names as MPI_T_pvar_get_index / MPI_T_event_get_index take them). */
static const char *mpit_name(const char *upper, char *buf, size_t len)
{
    size_t n = (size_t)snprintf(buf, len, "weft_%s", upper);
    for (size_t i = 5; i < n && i < len; i++) {
        buf[i] = (char)(buf[i] >= 'A' && buf[i] <= 'Z' ? buf[i] - 'A' + 'a' : buf[i]);
    }
    return buf;
}

static void print_pvars(void)
{
    char name[96];

    printf("MPI_T performance variables (src/core/mpit/pvars.def):\n");
#define WEFT_PVAR(_name, _class, _cat, _verb, _level, _bind, _help)                              \
    printf("  %-28s %-13s %-5s %s\n", mpit_name(#_name, name, sizeof(name)), #_class,           \
           strcmp(#_bind, "COMM") == 0 ? "comm" : "-", _help);
#include "core/mpit/pvars.def"
#undef WEFT_PVAR
    printf("MPI_T events (src/core/mpit/events.def):\n");
#define WEFT_EVENT(_name, _cat, _verb, _elems, _help) \
    printf("  %-28s (%s) %s\n", mpit_name(#_name, name, sizeof(name)), _elems, _help);
#include "core/mpit/events.def"
#undef WEFT_EVENT
}

static void print_version(void)
{
    printf("Weft %s (MPI 5.0, standard ABI 1.0: libmpi_abi.so.1)\n", WEFT_VERSION);
}

/* The costs the job's local rank 0 would measure, against a forked child
 * (same address space layout: the child's copy of probe is at &probe). */
static void measure_here(weft_shm_costs_t *costs)
{
    static char   probe[WEFT_SHM_COST_PROBE_BYTES] __attribute__((aligned(4096)));
    weft_hw_cpu_t cpu;
    int           fds[2];
    pid_t         child;

    memset(costs, 0, sizeof(*costs));
    weft_hw_cpu_id(&cpu);
    memcpy(costs->cpu_vendor, cpu.vendor, sizeof(costs->cpu_vendor) - 1);
    costs->cpu_family = cpu.family;
    costs->cpu_model  = cpu.model;
    costs->l2_bytes   = cpu.l2_bytes;
    memset(probe, 1, sizeof(probe));
    weft_shm_xcopy_area_t *xcopy = mmap(NULL, sizeof(*xcopy), PROT_READ | PROT_WRITE,
                                        MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (xcopy == MAP_FAILED) {
        return;
    }
    /* The copy probe wants the two processes on two CPUs, as a job's
     * bound ranks are: the parent stays on its CPU, the child takes
     * another one of the parent's set. */
    cpu_set_t was, here;
    int       mine = sched_getcpu(), other = -1;
    CPU_ZERO(&was);
    if (sched_getaffinity(0, sizeof(was), &was) == 0 && mine >= 0) {
        for (int i = 0; i < CPU_SETSIZE && other < 0; i++) {
            other = i != mine && CPU_ISSET(i, &was) ? i : -1;
        }
        CPU_ZERO(&here);
        CPU_SET(mine, &here);
        (void)sched_setaffinity(0, sizeof(here), &here);
    }
    if (pipe(fds) != 0 || (child = fork()) < 0) {
        munmap(xcopy, sizeof(*xcopy));
        (void)sched_setaffinity(0, sizeof(was), &was);
        return;
    }
    if (child == 0) { /* write the copy probe's data, then hold still until the parent has read */
        char c;
        close(fds[1]);
        if (other >= 0) {
            CPU_ZERO(&here);
            CPU_SET(other, &here);
            (void)sched_setaffinity(0, sizeof(here), &here);
        }
        weft_shm_xcopy_follow(xcopy);
        while (read(fds[0], &c, 1) < 0) {
        }
        _exit(0);
    }
    close(fds[0]);
    weft_shm_measure_costs(child, probe, probe, weft_tunables.SMP_USE_CMA,
                           weft_tunables.SMP_CMA_EXTRA_COST, costs);
    costs->xcopy_ns = weft_shm_xcopy_lead(xcopy, &costs->xcopy_step_ns);
    close(fds[1]);
    waitpid(child, NULL, 0);
    munmap(xcopy, sizeof(*xcopy));
    (void)sched_setaffinity(0, sizeof(was), &was);
}

static int print_tuning(void)
{
    weft_shm_costs_t      costs;
    weft_p2p_thresholds_t t;
    char                  err[400];
    int                   foreign = 0;
    size_t                payload = weft_shm_ring_payload(weft_p2p_ring_bytes(2));

    measure_here(&costs);
    if (weft_p2p_thresholds_choose(&costs, payload, 0, &t, &foreign, err, sizeof(err)) != 0) {
        fprintf(stderr, "weft-info: %s\n", err);
        return 1;
    }
    printf("Intra-node point-to-point thresholds (measured now; a job measures again at init,\n"
           "on its local rank 0; MPI_T pvars weft_shm_* show the values in force there):\n");
    printf("  %-14s %s family %d model %d, L2 %llu KiB\n", "CPU",
           costs.cpu_vendor[0] ? costs.cpu_vendor : "unknown", (int)costs.cpu_family,
           (int)costs.cpu_model, (unsigned long long)(costs.l2_bytes >> 10));
    if (costs.cma_ns > 0) {
        printf("  %-14s CMA %llu ns, memcpy %llu ns, between the cores %llu ns (streamed "
               "%u) per %llu KiB\n",
               "costs", (unsigned long long)costs.cma_ns, (unsigned long long)costs.copy_ns,
               (unsigned long long)costs.xcopy_ns, costs.xcopy_step_ns,
               (unsigned long long)(costs.probe_bytes >> 10));
    } else {
        printf("  %-14s CMA unavailable (disabled or not permitted), memcpy %llu ns, between "
               "the cores %llu ns per %llu KiB\n", "costs", (unsigned long long)costs.copy_ns,
               (unsigned long long)costs.xcopy_ns, (unsigned long long)(costs.probe_bytes >> 10));
    }
    printf("  %-14s %s\n", "table", t.table);
    printf("  %-14s %zu\n", "eager limit", t.eager_limit);
    printf("  %-14s %zu%s\n", "CMA from", t.cma_threshold,
           t.cma_threshold > t.eager_limit ? " (2-copy pipeline between the eager limit and this)"
                                           : " (every rendezvous)");
    printf("  %-14s %zu (contiguous CMA messages: sender and receiver copy at once; none in a\n"
           "  %-14s job with more ranks on a node than CPUs)\n", "coop from", t.coop_threshold, "");
    printf("  %-14s %s\n", "why", t.why);
    if (foreign > 0) {
        printf("  %-14s %d line(s) of WEFT_TUNING_FILE are not pt2pt rules (skipped)\n", "note",
               foreign);
    }
    return 0;
}

static void print_config(void)
{
    const char *san = WEFT_SANITIZE_FLAGS[0] != '\0' ? WEFT_SANITIZE_FLAGS : "none";

    printf("Build configuration:\n");
    printf("  %-12s %s\n", "prefix", WEFT_PREFIX);
    printf("  %-12s %s\n", "build type", WEFT_BUILD_TYPE[0] ? WEFT_BUILD_TYPE : "(none)");
    printf("  %-12s %s\n", "C compiler", WEFT_C_COMPILER);
    printf("  %-12s %s\n", "hwloc", WEFT_HWLOC_VERSION[0] ? WEFT_HWLOC_VERSION : "unknown");
    printf("  %-12s %s\n", "CMA",
           WEFT_HAVE_CMA ? "yes (build-time probe; the run-time probe at init decides)"
                         : "no (build-time probe found no process_vm_readv)");
    printf("  %-12s %s\n", "sanitizers", san);
}

static void source_text(weft_tunable_id_t id, char *buf, size_t len)
{
    const char *origin = weft_tunables_origin(id);

    switch (weft_tunables_source(id)) {
    case WEFT_TSOURCE_DEFAULT: snprintf(buf, len, "default"); break;
    case WEFT_TSOURCE_ENV: snprintf(buf, len, "env %s", origin ? origin : "?"); break;
    case WEFT_TSOURCE_ALIAS_ENV: snprintf(buf, len, "alias %s", origin ? origin : "?"); break;
    case WEFT_TSOURCE_MPIT: snprintf(buf, len, "MPI_T"); break;
    }
}

static void print_tunables(void)
{
    int  name_w = 0, value_w = 0;
    char value[512], source[96];

    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        int n = (int)strlen(weft_tunable_descs[id].name) + 5; /* "WEFT_" */
        name_w = n > name_w ? n : name_w;
        weft_tunables_format(id, value, sizeof(value));
        n = (int)strlen(value);
        value_w = n > value_w ? n : value_w;
    }
    if (value_w < 5) {
        value_w = 5;
    }
    printf("Tunables (%d):\n", (int)WEFT_TUNABLE_COUNT);
    printf("  %-*s  %-*s  %s\n", name_w, "variable", value_w, "value", "source");
    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        char name[128];

        snprintf(name, sizeof(name), "WEFT_%s", weft_tunable_descs[id].name);
        weft_tunables_format(id, value, sizeof(value));
        source_text(id, source, sizeof(source));
        printf("  %-*s  %-*s  %s\n", name_w, name, value_w, value[0] ? value : "\"\"", source);
    }
}

static const char *when_name(weft_tunable_when_t when)
{
    switch (when) {
    case WEFT_TWHEN_NEVER: return "never";
    case WEFT_TWHEN_INIT: return "init";
    case WEFT_TWHEN_ANYTIME: return "anytime";
    case WEFT_TWHEN_LAUNCHER: return "launcher";
    }
    return "?";
}

/* Print text as a Markdown table cell: '|' escaped, list separators spaced. */
static void md_cell(const char *text, const char *sep)
{
    for (const char *p = text; *p != '\0'; p++) {
        if (sep != NULL && (*p == '|' || *p == ',')) {
            fputs(sep, stdout);
        } else if (*p == '|') {
            fputs("\\|", stdout);
        } else {
            putchar(*p);
        }
    }
}

static void md_code_list(const char *list)
{
    if (list[0] == '\0') {
        fputs("-", stdout);
        return;
    }
    putchar('`');
    md_cell(list, "`, `");
    putchar('`');
}

static void print_markdown(void)
{
    const char *done[WEFT_TUNABLE_COUNT];
    int         ndone = 0;

    printf("# Weft tunables reference\n\n"
           "<!-- Generated by `weft-info --tunables --markdown` from src/util/tunables.def; "
           "do not edit. -->\n\n"
           "Every tunable is one row of `src/util/tunables.def` and is read from the\n"
           "environment as `WEFT_<NAME>`. Where MVAPICH2 has a knob with exactly the same\n"
           "meaning, its `MV2_*` name is accepted as an alias; when both are set the `WEFT_`\n"
           "name wins. A value that does not parse stops start-up with a one-line message\n"
           "naming the variable and the accepted form. `weft-info --tunables` shows the\n"
           "current value of each tunable and where it came from.\n\n"
           "Value forms:\n\n"
           "* **bool**: `1`/`0`, `yes`/`no`, `true`/`false`, `on`/`off`, `y`/`n` (any case).\n"
           "* **int**: a decimal integer (`0x` hex and leading-`0` octal are accepted).\n"
           "* **size**: bytes, with an optional `k`, `m` or `g` suffix (powers of 1024,\n"
           "  any case; `kb`, `mb`, `gb` also accepted): `8192`, `16k`, `1m`, `2g`.\n"
           "  Negative values are rejected.\n"
           "* **enum**: one of the listed names (any case).\n"
           "* **string**: any text.\n\n"
           "Verbosity follows the MPI_T tiers: `USER_BASIC` knobs are the ones most users\n"
           "need; `TUNER_*` knobs are for performance tuning. Scope is the MPI_T scope:\n"
           "`ALL_EQ` means the value must be the same in every rank of a job, `LOCAL` may\n"
           "differ per rank, `READONLY` cannot be changed.\n\n"
           "Every row except the launcher's is also an MPI_T control variable named\n"
           "`WEFT_<NAME>`. Column *write* says when a write through MPI_T takes effect:\n"
           "`init` before `MPI_Init` only (later writes fail with\n"
           "`MPI_T_ERR_CVAR_SET_NOT_NOW`), `anytime`, `never` (`MPI_T_ERR_CVAR_SET_NEVER`);\n"
           "`launcher` rows are read by `mpiexec` only and are not control variables.\n"
           "A `WEFT_*` or `MV2_*` variable that no row knows gets a warning at start naming\n"
           "the closest known one (`WEFT_WARN_UNKNOWN_ENV=0` silences it).\n");

    for (int first = 0; first < WEFT_TUNABLE_COUNT; first++) {
        const char *cat  = weft_tunable_descs[first].category;
        int         seen = 0;

        for (int i = 0; i < ndone; i++) {
            seen |= strcmp(done[i], cat) == 0;
        }
        if (seen) {
            continue;
        }
        done[ndone++] = cat;
        printf("\n## %s\n\n", cat);
        printf("| variable | aliases | kind | default | values | verbosity | scope | write | description |\n");
        printf("|---|---|---|---|---|---|---|---|---|\n");
        for (int id = first; id < WEFT_TUNABLE_COUNT; id++) {
            const weft_tunable_desc_t *d = &weft_tunable_descs[id];

            if (strcmp(d->category, cat) != 0) {
                continue;
            }
            printf("| `WEFT_%s` | ", d->name);
            md_code_list(d->aliases);
            printf(" | %s | ", kind_name(d->kind));
            if (d->default_value[0] != '\0') {
                printf("`%s`", d->default_value);
            } else {
                printf("(empty)");
            }
            printf(" | ");
            md_code_list(d->values);
            printf(" | %s | %s | %s | ", d->verbosity, d->scope, when_name(d->when));
            md_cell(d->help, NULL);
            printf(" |\n");
        }
    }
}

int main(int argc, char **argv)
{
    int  show     = 0;
    int  markdown = 0;
    char errbuf[512];

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];

        if (strcmp(a, "-a") == 0 || strcmp(a, "--all") == 0) {
            show |= SHOW_VERSION | SHOW_CONFIG | SHOW_TUNABLES | SHOW_PVARS;
        } else if (strcmp(a, "-v") == 0 || strcmp(a, "--version") == 0) {
            show |= SHOW_VERSION;
        } else if (strcmp(a, "-c") == 0 || strcmp(a, "--config") == 0) {
            show |= SHOW_CONFIG;
        } else if (strcmp(a, "-t") == 0 || strcmp(a, "--tunables") == 0) {
            show |= SHOW_TUNABLES;
        } else if (strcmp(a, "-p") == 0 || strcmp(a, "--pvars") == 0) {
            show |= SHOW_PVARS;
        } else if (strcmp(a, "--tuning") == 0) {
            show |= SHOW_TUNING;
        } else if (strcmp(a, "--markdown") == 0) {
            markdown = 1;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "weft-info: unknown option '%s'\n", a);
            usage(stderr);
            return 2;
        }
    }
    if (markdown) {
        /* The reference documents the table, not this shell's environment. */
        print_markdown();
        return 0;
    }
    if (show == 0) {
        show = SHOW_VERSION | SHOW_CONFIG;
    }
    /* Load even when tunables are not printed: a bad value is worth reporting. */
    if (weft_tunables_load(errbuf, sizeof(errbuf)) != 0) {
        fprintf(stderr, "weft-info: %s\n", errbuf);
        return 1;
    }
    if (show & SHOW_VERSION) {
        print_version();
    }
    if (show & SHOW_CONFIG) {
        print_config();
    }
    if (show & SHOW_TUNABLES) {
        print_tunables();
    }
    if (show & SHOW_PVARS) {
        print_pvars();
    }
    if (show & SHOW_TUNING) {
        return print_tuning();
    }
    return 0;
}
