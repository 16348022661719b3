/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The collective module's spine: the algorithm registry (algorithms.def),
 * per-communicator state (tags, node layout, two-level sub-communicators),
 * algorithm selection and the WEFT_REPORT summary.
 *
 * Selection, strongest first: the force tunable WEFT_<COLL>_ALGORITHM (a
 * name from algorithms.def; if its restrictions fail the call, warn once and
 * fall through), then the rules of WEFT_COLL_TUNING_FILE if set, else the
 * shipped src/coll/tuning/default.rules (compiled in as default_rules.inc).
 * Rules are "coll kind cond... : algorithm", first match whose algorithm
 * accepts the call wins; the fallback is the collective's first registry
 * row. Every input of a decision agrees across the ranks of a call (comm
 * layout, op, in-place, message size computed from arguments that must
 * match), so all ranks pick the same algorithm without communicating.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "coll/coll_internal.h"
#include "core/comm.h"
#include "core/dev/peer.h"
#include "core/errors.h"
#include "core/group.h"
#include "core/pt2pt.h"
#include "core/runtime.h"
#include "util/log.h"
#include "util/tunables.h"
#include "core/mpit/event.h"
#include "core/mpit/pvar.h"

const char *const weft_coll_names[WEFT_COLL_COUNT] = {
#define X(_U, _l) #_l,
    WEFT_COLL_LIST(X)
#undef X
};

#define WEFT_COLL_KIND_INTRA 0
#define WEFT_COLL_KIND_INTER 1

const weft_coll_alg_t weft_coll_algs[WEFT_ALG_COUNT] = {
#define WEFT_COLL_ALG(_coll, _lcoll, _kind, _lkind, _name, _flags, _forms, _desc)              \
    { WEFT_COLL_##_coll, WEFT_COLL_KIND_##_kind, #_name, (_flags),                             \
      WEFT_COLL_BUILD_OF_##_forms(weft_coll_##_lcoll##_##_lkind##_##_name),                   \
      WEFT_COLL_RUN_OF_##_forms(weft_coll_##_lcoll##_##_lkind##_##_name), _desc },
#include "coll/algorithms.def"
#undef WEFT_COLL_ALG
};

/* ---- per-communicator state ---------------------------------------------- */

static void coll_comm_destroy(weft_comm_t *comm);

struct weft_coll_comm *weft_coll_comm_get(weft_comm_t *comm)
{
    if (comm->coll == NULL) {
        /* idempotent; here so it is in place whenever some state exists */
        weft_comm_destroy_register(coll_comm_destroy);
        comm->coll = calloc(1, sizeof(*comm->coll));
        if (comm->coll == NULL) {
            weft_runtime_abort(1, "out of memory (collective state)");
        }
    }
    return comm->coll;
}

int weft_coll_next_tag(weft_comm_t *comm)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(comm);
    int                    t  = (int)(cc->seq & 0x3fffffffu);
    cc->seq++;
    return t;
}

int weft_coll_send_now(const void *buf, MPI_Count count, weft_datatype_t *dt, int dest, int tag,
                       weft_comm_t *comm)
{
    if (weft_send_eager_now(buf, count, dt, dest, tag, comm, WEFT_CTX_COLL)) {
        return MPI_SUCCESS;
    }
    return weft_send(buf, count, dt, dest, tag, comm, WEFT_CTX_COLL);
}

static void coll_comm_destroy(weft_comm_t *comm)
{
    struct weft_coll_comm *cc = comm->coll;
    if (cc == NULL) {
        return;
    }
    comm->coll = NULL;
    weft_coll_shm_free(cc);
    if (cc->node_comm) {
        weft_comm_release(cc->node_comm);
    }
    if (cc->leader_comm) {
        weft_comm_release(cc->leader_comm);
    }
    free(cc->leader_of);
    free(cc->node_index);
    free(cc);
}

static int node_of_world(int w)
{
    if (weft_tunables.COLL_FAKE_PPN > 0) {
        return (int)(w / weft_tunables.COLL_FAKE_PPN);
    }
    if (w >= weft_runtime.pmi.size) { /* a process of another job */
        return weft_dev_host_of(w);
    }
    if (weft_runtime.pmi.node_of_rank == NULL) {
        return 0;
    }
    return weft_runtime.pmi.node_of_rank[w];
}

/* Node layout of the members (no communication: node ids come from PMI). */
static void layout(weft_comm_t *comm, struct weft_coll_comm *cc)
{
    int  n     = comm->size;
    int *node  = malloc((size_t)n * sizeof(int));
    int *lead  = malloc((size_t)n * sizeof(int));
    int *count = calloc((size_t)n, sizeof(int));
    int *first = malloc((size_t)n * sizeof(int)); /* node index -> leader rank */

    if (!node || !lead || !count || !first) {
        weft_runtime_abort(1, "out of memory (collective layout)");
    }
    cc->nodes = 0;
    for (int r = 0; r < n; r++) {
        int w  = comm->is_inter ? comm->group->world_ranks[r] : comm->group->world_ranks[r];
        int nd = node_of_world(w);
        int k;
        /* node index in order of first appearance: leaders are the lowest
         * rank of their node */
        for (k = 0; k < cc->nodes; k++) {
            if (node_of_world(comm->group->world_ranks[first[k]]) == nd) {
                break;
            }
        }
        if (k == cc->nodes) {
            first[cc->nodes++] = r;
        }
        node[r] = k;
        lead[r] = first[k];
        count[k]++;
    }
    cc->max_ppn = 0;
    for (int k = 0; k < cc->nodes; k++) {
        if (count[k] > cc->max_ppn) {
            cc->max_ppn = count[k];
        }
    }
    cc->node_id     = node[comm->rank];
    cc->is_leader   = lead[comm->rank] == comm->rank;
    cc->node_index  = node;
    cc->leader_of   = lead;
    cc->layout_done = 1;
    free(count);
    free(first);
}

int weft_coll_comm_two_level(weft_comm_t *comm)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(comm);
    int                    rc;

    if (cc->sub_built) {
        return MPI_SUCCESS;
    }
    rc = weft_comm_split_raw(comm, cc->node_id, comm->rank, &cc->node_comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = weft_comm_split_raw(comm, cc->is_leader ? 0 : MPI_UNDEFINED, comm->rank, &cc->leader_comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    cc->sub_built = 1;
    return MPI_SUCCESS;
}

int weft_coll_comm_prepare(weft_comm_t *comm, int shm)
{
    struct weft_coll_comm *cc = weft_coll_comm_get(comm);

    if (!cc->layout_done) {
        layout(comm, cc);
    }
    if (comm->size < 2) {
        return MPI_SUCCESS;
    }
    if (!shm && cc->shm_state == 0) {
        cc->shm_state = -1; /* as after a failed setup: every rank picks point-to-point algorithms */
    }
    if (cc->shm_state == 0 && cc->max_ppn >= 2 && weft_tunables.WAIT_POLICY != 3 /* shm_allowed's conditions */) {
        return weft_coll_shm_setup(comm); /* with the two-level communicators on several nodes */
    }
    return cc->nodes > 1 ? weft_coll_comm_two_level(comm) : MPI_SUCCESS;
}

/* ---- rules ---------------------------------------------------------------- */

enum { V_SIZE = 1, V_MSG, V_NODES, V_PPN, V_POF2, V_COMMUTATIVE, V_INPLACE, V_CMA, V_BLOCKING };
enum { C_LT = 1, C_LE, C_GT, C_GE, C_EQ, C_TRUE, C_FALSE };

typedef struct {
    int       var, cmp;
    long long value;
} cond_t;

#define MAX_CONDS 8

typedef struct {
    int    coll, inter, alg, nconds;
    cond_t conds[MAX_CONDS];
} rule_t;

static rule_t *rules;
static int     nrules;
/* Where each (collective, intra/inter)'s rules start: selection skips the
 * rules of every collective listed before it (up to ~100 compares per
 * call otherwise, for the collectives near the end of default.rules). */
static int rules_from[WEFT_COLL_COUNT][2];

static const char *const default_rules_text =
#include "coll/tuning/default_rules.inc"
    ;

static int find_alg(int coll, int inter, const char *name)
{
    for (int i = 0; i < WEFT_ALG_COUNT; i++) {
        if (weft_coll_algs[i].coll == coll && weft_coll_algs[i].inter == inter &&
            strcmp(weft_coll_algs[i].name, name) == 0) {
            return i;
        }
    }
    return -1;
}

static int find_coll(const char *name)
{
    for (int c = 0; c < WEFT_COLL_COUNT; c++) {
        if (strcmp(weft_coll_names[c], name) == 0) {
            return c;
        }
    }
    return -1;
}

static int parse_size(const char *s, long long *v)
{
    char     *end;
    long long x = strtoll(s, &end, 10);
    if (end == s) {
        return -1;
    }
    switch (tolower((unsigned char)*end)) {
    case 'k': x <<= 10; end++; break;
    case 'm': x <<= 20; end++; break;
    case 'g': x <<= 30; end++; break;
    default: break;
    }
    if (*end != '\0') {
        return -1;
    }
    *v = x;
    return 0;
}

static int parse_cond(const char *w, cond_t *c)
{
    static const struct {
        const char *name;
        int         var;
        int         flag; /* may stand alone (true/false), "!" allowed */
    } vars[] = { { "size", V_SIZE, 0 },       { "msg", V_MSG, 0 },
                 { "nodes", V_NODES, 0 },     { "ppn", V_PPN, 0 },
                 { "pof2", V_POF2, 1 },       { "commutative", V_COMMUTATIVE, 1 },
                 { "inplace", V_INPLACE, 1 }, { "cma", V_CMA, 1 },
                 { "blocking", V_BLOCKING, 1 } };
    int neg = 0;
    if (*w == '!') {
        neg = 1;
        w++;
    }
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        size_t n = strlen(vars[i].name);
        if (strncmp(w, vars[i].name, n) != 0) {
            continue;
        }
        const char *op = w + n;
        c->var         = vars[i].var;
        if (*op == '\0') {
            if (!vars[i].flag) {
                return -1;
            }
            c->cmp = neg ? C_FALSE : C_TRUE;
            return 0;
        }
        if (neg) {
            return -1;
        }
        if (op[0] == '<' && op[1] == '=') {
            c->cmp = C_LE, op += 2;
        } else if (op[0] == '>' && op[1] == '=') {
            c->cmp = C_GE, op += 2;
        } else if (op[0] == '<') {
            c->cmp = C_LT, op += 1;
        } else if (op[0] == '>') {
            c->cmp = C_GT, op += 1;
        } else if (op[0] == '=') {
            c->cmp = C_EQ, op += 1;
        } else {
            return -1;
        }
        return parse_size(op, &c->value);
    }
    return -1;
}

/* Parse rule text; on error write a message and return -1. */
int weft_coll_rules_parse(const char *text, const char *origin, void **out, int *n_out,
                          char *err, size_t errlen)
{
    rule_t *list = NULL;
    int     n = 0, cap = 0, lineno = 0;
    char   *copy = strdup(text), *save = NULL;

    if (copy == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash) {
            *hash = '\0';
        }
        char *colon = strchr(line, ':');
        char *words[16];
        int   nw = 0;
        char *ws = NULL;
        if (colon == NULL) {
            int blank = 1;
            for (char *p = line; *p; p++) {
                blank &= isspace((unsigned char)*p) != 0;
            }
            if (blank) {
                continue;
            }
            snprintf(err, errlen, "%s:%d: missing ': algorithm'", origin, lineno);
            goto fail;
        }
        *colon = '\0';
        for (char *w = strtok_r(line, " \t\r", &ws); w && nw < 16; w = strtok_r(NULL, " \t\r", &ws)) {
            words[nw++] = w;
        }
        char *alg = colon + 1;
        while (isspace((unsigned char)*alg)) {
            alg++;
        }
        for (char *e = alg + strlen(alg); e > alg && isspace((unsigned char)e[-1]);) {
            *--e = '\0';
        }
        if (nw < 2) {
            snprintf(err, errlen, "%s:%d: expected 'collective intra|inter ...'", origin, lineno);
            goto fail;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 32;
            rule_t *nl = realloc(list, (size_t)cap * sizeof(*nl));
            if (nl == NULL) {
                snprintf(err, errlen, "out of memory");
                goto fail;
            }
            list = nl;
        }
        rule_t *r = &list[n];
        memset(r, 0, sizeof(*r));
        r->coll = find_coll(words[0]);
        if (r->coll < 0) {
            snprintf(err, errlen, "%s:%d: unknown collective '%s'", origin, lineno, words[0]);
            goto fail;
        }
        if (strcmp(words[1], "intra") == 0) {
            r->inter = 0;
        } else if (strcmp(words[1], "inter") == 0) {
            r->inter = 1;
        } else {
            snprintf(err, errlen, "%s:%d: expected intra or inter, not '%s'", origin, lineno,
                     words[1]);
            goto fail;
        }
        for (int i = 2; i < nw; i++) {
            if (r->nconds == MAX_CONDS || parse_cond(words[i], &r->conds[r->nconds]) != 0) {
                snprintf(err, errlen, "%s:%d: bad condition '%s'", origin, lineno, words[i]);
                goto fail;
            }
            r->nconds++;
        }
        r->alg = find_alg(r->coll, r->inter, alg);
        if (r->alg < 0) {
            snprintf(err, errlen, "%s:%d: no %s %s algorithm '%s'", origin, lineno, words[0],
                     words[1], alg);
            goto fail;
        }
        n++;
    }
    free(copy);
    *out   = list;
    *n_out = n;
    return 0;
fail:
    free(copy);
    free(list);
    return -1;
}

/* ---- selection -------------------------------------------------------------- */

/* The WEFT_<COLL>_ALGORITHM rows (enums: value 0 is "auto", then the names). */
static const int force_tunable[WEFT_COLL_COUNT] = {
    [WEFT_COLL_BARRIER]              = WEFT_TUNABLE_BARRIER_ALGORITHM,
    [WEFT_COLL_BCAST]                = WEFT_TUNABLE_BCAST_ALGORITHM,
    [WEFT_COLL_GATHER]               = WEFT_TUNABLE_GATHER_ALGORITHM,
    [WEFT_COLL_GATHERV]              = WEFT_TUNABLE_GATHERV_ALGORITHM,
    [WEFT_COLL_SCATTER]              = WEFT_TUNABLE_SCATTER_ALGORITHM,
    [WEFT_COLL_SCATTERV]             = WEFT_TUNABLE_SCATTERV_ALGORITHM,
    [WEFT_COLL_ALLGATHER]            = WEFT_TUNABLE_ALLGATHER_ALGORITHM,
    [WEFT_COLL_ALLGATHERV]           = WEFT_TUNABLE_ALLGATHERV_ALGORITHM,
    [WEFT_COLL_ALLTOALL]             = WEFT_TUNABLE_ALLTOALL_ALGORITHM,
    [WEFT_COLL_ALLTOALLV]            = WEFT_TUNABLE_ALLTOALLV_ALGORITHM,
    [WEFT_COLL_ALLTOALLW]            = WEFT_TUNABLE_ALLTOALLW_ALGORITHM,
    [WEFT_COLL_REDUCE]               = WEFT_TUNABLE_REDUCE_ALGORITHM,
    [WEFT_COLL_ALLREDUCE]            = WEFT_TUNABLE_ALLREDUCE_ALGORITHM,
    [WEFT_COLL_REDUCE_SCATTER]       = WEFT_TUNABLE_REDUCE_SCATTER_ALGORITHM,
    [WEFT_COLL_REDUCE_SCATTER_BLOCK] = WEFT_TUNABLE_REDUCE_SCATTER_BLOCK_ALGORITHM,
    [WEFT_COLL_SCAN]                 = WEFT_TUNABLE_SCAN_ALGORITHM,
    [WEFT_COLL_EXSCAN]               = WEFT_TUNABLE_EXSCAN_ALGORITHM,
};

static const char *upper(const char *s, char *buf, size_t n)
{
    size_t i = 0;
    for (; s[i] && i + 1 < n; i++) {
        buf[i] = (char)toupper((unsigned char)s[i]);
    }
    buf[i] = '\0';
    return buf;
}

static int      forced[WEFT_COLL_COUNT][2]; /* alg id + 1, 0 = none */
static int      warned[WEFT_ALG_COUNT];
static uint64_t alg_calls[WEFT_ALG_COUNT];   /* the weft_coll_alg_calls pvar */
static uint64_t coll_calls[WEFT_COLL_COUNT]; /* the weft_coll_calls pvar (not nested calls) */

static char        alg_names[WEFT_ALG_COUNT][64]; /* "allreduce:intra:ring" */
static const char *alg_name_ptrs[WEFT_ALG_COUNT];

/* Before main, so MPI_T sees the arrays' sizes even before MPI_Init. */
__attribute__((constructor)) static void bind_pvars(void)
{
    weft_pvar_bind_array(WEFT_PVAR_COLL_ALG_CALLS, alg_calls, WEFT_ALG_COUNT);
    weft_pvar_bind_array(WEFT_PVAR_COLL_CALLS, coll_calls, WEFT_COLL_COUNT);
    weft_pvar_bind_names(WEFT_PVAR_COLL_CALLS, weft_coll_names);
    for (int i = 0; i < WEFT_ALG_COUNT; i++) {
        snprintf(alg_names[i], sizeof(alg_names[i]), "%s:%s:%s", weft_coll_names[weft_coll_algs[i].coll],
                 weft_coll_algs[i].inter ? "inter" : "intra", weft_coll_algs[i].name);
        alg_name_ptrs[i] = alg_names[i];
    }
    weft_pvar_bind_names(WEFT_PVAR_COLL_ALG_CALLS, alg_name_ptrs);
}
static int      initialized;

/* Algorithm calls so far (tests, MPI_T). */
unsigned long long weft_coll_alg_calls(int alg)
{
    return alg >= 0 && alg < WEFT_ALG_COUNT ? alg_calls[alg] : 0;
}

static void module_init(void)
{
    char        err[512];
    const char *file = weft_tunables.COLL_TUNING_FILE;
    void       *list = NULL;

    initialized = 1;
    for (int c = 0; c < WEFT_COLL_COUNT; c++) {
        char v[64];
        if (force_tunable[c] == 0) {
            continue; /* a collective without a row */
        }
        weft_tunables_format(force_tunable[c], v, sizeof(v));
        if (strcmp(v, "auto") == 0) {
            continue;
        }
        int intra = find_alg(c, 0, v), inter = find_alg(c, 1, v);
        forced[c][0] = intra + 1;
        forced[c][1] = inter + 1;
        if (intra < 0 && inter < 0 && weft_runtime.pmi.rank == 0) {
            char u[64];
            weft_log_warn("WEFT_%s_ALGORITHM=%s: no such algorithm; using the selection rules",
                          upper(weft_coll_names[c], u, sizeof(u)), v);
        }
    }
    if (file && file[0]) {
        FILE *f = fopen(file, "r");
        char *text = NULL;
        long  len  = 0;
        if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
            (text = calloc(1, (size_t)len + 1)) && fread(text, 1, (size_t)len, f) == (size_t)len &&
            weft_coll_rules_parse(text, file, &list, &nrules, err, sizeof(err)) == 0) {
            rules = list;
        } else {
            weft_log_fatal(1, "WEFT_COLL_TUNING_FILE=%s: %s", file,
                           f == NULL ? "cannot open the file" : text == NULL ? "cannot read it" : err);
        }
        free(text);
        fclose(f);
        return;
    }
    if (weft_coll_rules_parse(default_rules_text, "default.rules", &list, &nrules, err,
                              sizeof(err)) != 0) {
        weft_log_fatal(1, "shipped collective rules: %s", err);
    }
    rules = list;
}

static MPI_Count msg_bytes(const weft_coll_args_t *a)
{
    weft_comm_t *comm = a->comm;
    switch (a->coll) {
    case WEFT_COLL_BCAST:
    case WEFT_COLL_REDUCE:
    case WEFT_COLL_ALLREDUCE:
    case WEFT_COLL_SCAN:
    case WEFT_COLL_EXSCAN:
        return a->count * a->dt->size;
    case WEFT_COLL_REDUCE_SCATTER_BLOCK:
        return a->rcount * a->dt->size;
    case WEFT_COLL_REDUCE_SCATTER: {
        MPI_Count t = 0;
        for (int i = 0; i < comm->size; i++) {
            t += a->rcounts[i];
        }
        return t * a->dt->size;
    }
    case WEFT_COLL_GATHER:
        return (comm->is_inter ? a->root == MPI_ROOT : comm->rank == a->root)
                   ? a->rcount * a->rdt->size
                   : a->scount * a->sdt->size;
    case WEFT_COLL_SCATTER:
        return (comm->is_inter ? a->root == MPI_ROOT : comm->rank == a->root)
                   ? a->scount * a->sdt->size
                   : a->rcount * a->rdt->size;
    case WEFT_COLL_ALLGATHER:
    case WEFT_COLL_ALLTOALL:
        return a->rcount * a->rdt->size;
    case WEFT_COLL_ALLGATHERV: {
        MPI_Count t = 0;
        for (int i = 0; i < comm->peer_size; i++) {
            t += a->rcounts[i];
        }
        return t * a->rdt->size / (comm->peer_size ? comm->peer_size : 1);
    }
    default:
        return 0;
    }
}

static int inplace_of(const weft_coll_args_t *a)
{
    return a->sbuf == MPI_IN_PLACE;
}

/* WEFT_USE_SHMEM_COLL and the per-collective WEFT_USE_SHMEM_<COLL>: may a
 * node-aware variant (two_level or shm) run for this call? */
static int shmem_coll_enabled(const weft_coll_args_t *a)
{
    if (!weft_tunables.USE_SHMEM_COLL || a->comm->is_inter) {
        return 0;
    }
    switch (a->coll) {
    case WEFT_COLL_ALLREDUCE: return weft_tunables.USE_SHMEM_ALLREDUCE;
    case WEFT_COLL_BARRIER: return weft_tunables.USE_SHMEM_BARRIER;
    case WEFT_COLL_BCAST: return weft_tunables.USE_SHMEM_BCAST;
    case WEFT_COLL_REDUCE: return weft_tunables.USE_SHMEM_REDUCE;
    default: return 1;
    }
}

/* Non-blocking and persistent calls only once a blocking call has built the
 * node and leader communicators: splitting waits for every rank. */
static int two_level_allowed(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    return shmem_coll_enabled(a) && cc->nodes > 1 && cc->max_ppn > 1 &&
           (a->blocking || cc->sub_built);
}

/* The shared-memory algorithms: blocking calls on a communicator with a node
 * holding several of its ranks. Every input agrees across the ranks (for
 * reductions the datatype is the same everywhere, so is its contiguity).
 * Not under WEFT_WAIT_POLICY=blocking: a rank asleep in a futex is woken by
 * ring messages, not by counters in the region. */
static int shm_allowed(const weft_coll_args_t *a, struct weft_coll_comm *cc)
{
    if (!shmem_coll_enabled(a) || cc->shm_state < 0 || cc->max_ppn < 2 ||
        weft_tunables.WAIT_POLICY == 3 /* blocking */) {
        return 0;
    }
    /* non-blocking and persistent (rows with a schedule form: a poll step,
     * src/coll/shm/shm_sched.c): on one node, and only once a blocking
     * collective has made the region. Making it waits for every rank of the
     * node, which a non-blocking call must not do (every rank sees the
     * region appear in the same call, so they all choose alike). */
    if (!a->blocking && (cc->nodes != 1 || a->nested || cc->shm_state == 0)) {
        return 0;
    }
    switch (a->coll) {
    case WEFT_COLL_ALLTOALL:
    case WEFT_COLL_SCATTER:
    case WEFT_COLL_ALLTOALLV:
    case WEFT_COLL_GATHERV:
    case WEFT_COLL_SCATTERV:
    case WEFT_COLL_ALLGATHERV:
        return cc->nodes == 1;
    case WEFT_COLL_REDUCE:
    case WEFT_COLL_ALLREDUCE:
        return a->dt->is_contig && (cc->nodes == 1 || weft_op_is_commutative(a->op));
    case WEFT_COLL_REDUCE_SCATTER:
    case WEFT_COLL_REDUCE_SCATTER_BLOCK:
        return a->dt->is_contig && cc->nodes == 1;
    default:
        return 1;
    }
}

int weft_coll_alg_ok(int alg, const weft_coll_args_t *a)
{
    const weft_coll_alg_t *d    = &weft_coll_algs[alg];
    weft_comm_t           *comm = a->comm;
    unsigned               f    = d->flags;

    if (d->coll != a->coll || d->inter != comm->is_inter) {
        return 0;
    }
    if (!a->blocking && d->build == NULL) { /* a direct run only */
        return 0;
    }
    if ((f & WEFT_R_COMMUTATIVE) && a->op && !weft_op_is_commutative(a->op)) {
        return 0;
    }
    if ((f & WEFT_R_BUILTIN_OP) && a->op && !weft_op_is_builtin(a->op)) {
        return 0;
    }
    if ((f & WEFT_R_ALONE) && comm->size != 1) {
        return 0;
    }
    if ((f & WEFT_R_POF2) && !weft_coll_is_pof2(comm->size)) {
        return 0;
    }
    if ((f & WEFT_R_NO_INPLACE) && inplace_of(a)) {
        return 0;
    }
    if ((f & WEFT_R_COUNT_POF2) && a->count < weft_coll_pof2_floor(comm->size)) {
        return 0;
    }
    if (f & WEFT_R_TWO_LEVEL) {
        struct weft_coll_comm *cc = weft_coll_comm_get(comm);
        if (!cc->layout_done) {
            layout(comm, cc);
        }
        if (!two_level_allowed(a, cc)) {
            return 0;
        }
    }
    if ((f & WEFT_R_SHM) && !shm_allowed(a, weft_coll_comm_get(comm))) {
        return 0;
    }
    return 1;
}

static long long var_value(int var, const weft_coll_args_t *a, struct weft_coll_comm *cc,
                           MPI_Count msg)
{
    switch (var) {
    case V_SIZE: return a->comm->size;
    case V_MSG: return msg;
    case V_NODES: return cc->nodes;
    case V_PPN: return cc->max_ppn;
    case V_POF2: return weft_coll_is_pof2(a->comm->size);
    case V_COMMUTATIVE: return a->op == NULL || weft_op_is_commutative(a->op);
    case V_INPLACE: return inplace_of(a);
    /* point-to-point between ranks of this node moves msg bytes by CMA */
    case V_CMA: return msg > 0 && (size_t)msg >= weft_p2p_shm_cma_from();
    /* a blocking call, not a non-blocking or persistent one (part of the selection key) */
    case V_BLOCKING: return a->blocking != 0;
    default: return 0;
    }
}

static int rule_matches(const rule_t *r, const weft_coll_args_t *a, struct weft_coll_comm *cc,
                        MPI_Count msg)
{
    for (int i = 0; i < r->nconds; i++) {
        long long v = var_value(r->conds[i].var, a, cc, msg), x = r->conds[i].value;
        int       ok;
        switch (r->conds[i].cmp) {
        case C_LT: ok = v < x; break;
        case C_LE: ok = v <= x; break;
        case C_GT: ok = v > x; break;
        case C_GE: ok = v >= x; break;
        case C_EQ: ok = v == x; break;
        case C_TRUE: ok = v != 0; break;
        case C_FALSE: ok = v == 0; break;
        default: ok = 0; break;
        }
        if (!ok) {
            return 0;
        }
    }
    return 1;
}

static int pick(const weft_coll_args_t *a)
{
    int                    inter = a->comm->is_inter;
    struct weft_coll_comm *cc    = weft_coll_comm_get(a->comm);

    if (!cc->layout_done) {
        layout(a->comm, cc);
    }
    int f = a->nested ? -1 : forced[a->coll][inter] - 1;
    if (f >= 0) {
        if (weft_coll_alg_ok(f, a)) {
            return f;
        }
        if (!warned[f] && weft_runtime.pmi.rank == 0) {
            warned[f] = 1;
            char u[64];
            weft_log_warn("WEFT_%s_ALGORITHM=%s does not apply to this call (restrictions); "
                          "using the selection rules", upper(weft_coll_names[a->coll], u, sizeof(u)),
                          weft_coll_algs[f].name);
        }
    }
    MPI_Count msg = msg_bytes(a);
    for (int i = rules_from[a->coll][inter]; i < nrules; i++) {
        const rule_t *r = &rules[i];
        if (r->coll == a->coll && r->inter == inter && rule_matches(r, a, cc, msg) &&
            weft_coll_alg_ok(r->alg, a)) {
            return r->alg;
        }
    }
    for (int i = 0; i < WEFT_ALG_COUNT; i++) {
        if (weft_coll_algs[i].coll == a->coll && weft_coll_algs[i].inter == inter) {
            return i;
        }
    }
    return -1;
}

static void index_rules(void)
{
    for (int c = 0; c < WEFT_COLL_COUNT; c++) {
        rules_from[c][0] = rules_from[c][1] = nrules;
    }
    for (int i = nrules - 1; i >= 0; i--) {
        rules_from[rules[i].coll][rules[i].inter] = i;
    }
}

/* Everything besides the message size and count that pick's answer for a
 * call on this communicator can depend on: the call's flags (the rules'
 * in-place and commutative conditions, the algorithms' restrictions) and
 * the communicator's state that changes (the region made or given up, the
 * node communicators built). The forced algorithms, the rules, the layout
 * and the tunables read here are fixed once the first call has run. Never 0. */
static unsigned selection_key(const weft_coll_args_t *a, const struct weft_coll_comm *cc)
{
    unsigned k = 1u;
    k |= (unsigned)(a->nested != 0) << 1;
    k |= (unsigned)(a->blocking != 0) << 2;
    k |= (unsigned)inplace_of(a) << 3;
    k |= (unsigned)(a->op != NULL && weft_op_is_commutative(a->op)) << 4;
    k |= (unsigned)(a->op != NULL && weft_op_is_builtin(a->op)) << 5;
    k |= (unsigned)(a->dt != NULL && a->dt->is_contig) << 6;
    k |= (unsigned)(cc->shm_state + 1) << 7; /* 0, 1 or 2 */
    k |= (unsigned)(cc->sub_built != 0) << 9;
    k |= (unsigned)(cc->layout_done != 0) << 10;
    return k;
}

int weft_coll_select(const weft_coll_args_t *a, int *rc)
{
    *rc = MPI_SUCCESS;
    if (!initialized) {
        module_init();
        index_rules();
    }
    /* A collective called again with the same inputs (an application's
     * loop) gets the same algorithm without walking the rules: at np 2 the
     * walk was 15% of a back-to-back 8-byte gather's cycles at its root. */
    struct weft_coll_comm *cc  = weft_coll_comm_get(a->comm);
    MPI_Count              msg = msg_bytes(a);
    unsigned               key = selection_key(a, cc);
    if (cc->chosen[a->coll].key == key && cc->chosen[a->coll].msg == msg &&
        cc->chosen[a->coll].count == a->count) {
        int alg = cc->chosen[a->coll].alg;
        alg_calls[alg]++;
        coll_calls[a->coll] += !a->nested;
        WEFT_EVENT_RAISE(COLL_ALGORITHM, a->coll, alg, a->comm->size, a->nested);
        return alg;
    }
    int alg = pick(a);
    if (alg >= 0 && (weft_coll_algs[alg].flags & WEFT_R_SHM) &&
        weft_coll_comm_get(a->comm)->shm_state == 0) {
        /* first shm call on this communicator: make the region; if that
         * failed anywhere, every rank now refuses shm and picks again */
        if ((*rc = weft_coll_shm_setup(a->comm)) != MPI_SUCCESS) {
            return -1;
        }
        alg = pick(a);
    }
    if (alg >= 0) {
        alg_calls[alg]++;
        coll_calls[a->coll] += !a->nested;
        WEFT_EVENT_RAISE(COLL_ALGORITHM, a->coll, alg, a->comm->size, a->nested);
        if ((weft_coll_algs[alg].flags & WEFT_R_TWO_LEVEL) &&
            weft_coll_comm_two_level(a->comm) != MPI_SUCCESS) {
            return -1;
        }
        /* after the region and the node communicators were made: the key
         * of the next call sees them */
        cc->chosen[a->coll].key   = selection_key(a, cc);
        cc->chosen[a->coll].msg   = msg;
        cc->chosen[a->coll].count = a->count;
        cc->chosen[a->coll].alg   = alg;
    }
    return alg;
}

weft_sched_t *weft_coll_schedule(int alg, const weft_coll_args_t *a, int *rc)
{
    weft_sched_t *s = weft_sched_new(a->comm);

    if (s == NULL) {
        *rc = weft_error(MPI_ERR_NO_MEM, "no memory for a collective schedule");
        return NULL;
    }
    *rc = weft_coll_build(s, alg, a);
    if (*rc != MPI_SUCCESS) {
        weft_sched_free(s);
        if (*rc == MPI_ERR_NO_MEM) {
            *rc = weft_error(*rc, "no memory for a collective schedule");
        }
        return NULL;
    }
    return s;
}

int weft_coll_run_blocking(int alg, const weft_coll_args_t *a)
{
    weft_sched_t *s;
    int           rc;

    if (weft_coll_algs[alg].run != NULL) {
        struct weft_coll_comm *cc = weft_coll_comm_get(a->comm);
        return cc->shm != NULL
                   ? weft_coll_shm_run(cc, weft_coll_algs[alg].run, a, weft_coll_names[a->coll])
                   : weft_coll_algs[alg].run(a);
    }
    s = weft_coll_schedule(alg, a, &rc);
    return s == NULL ? rc : weft_sched_run(s);
}

int weft_coll_build(weft_sched_t *s, int alg, const weft_coll_args_t *a)
{
    int rc;

    if (weft_coll_algs[alg].build == NULL) {
        return weft_error(MPI_ERR_INTERN, "collective algorithm %s has no schedule form",
                          weft_coll_algs[alg].name);
    }
    rc = weft_sched_use(s, a->comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return weft_coll_algs[alg].build(s, a);
}
