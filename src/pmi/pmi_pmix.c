/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMIx backend (see pmi_pmix.h). libpmix is opened at run time from the
 * directory pkg-config named at build time (Debian keeps it outside the
 * loader path), so the library has no link-time dependency on it.
 */
#include "pmi_pmix.h"

#include <dlfcn.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef WEFT_HAVE_PMIX
#include <pmix.h>

static struct {
    void       *lib;
    pmix_proc_t me;
    pmix_status_t (*init)(pmix_proc_t *, pmix_info_t *, size_t);
    pmix_status_t (*finalize)(const pmix_info_t *, size_t);
    pmix_status_t (*abort)(int, const char *, pmix_proc_t *, size_t);
    pmix_status_t (*put)(pmix_scope_t, const pmix_key_t, pmix_value_t *);
    pmix_status_t (*commit)(void);
    pmix_status_t (*fence)(const pmix_proc_t *, size_t, const pmix_info_t *, size_t);
    pmix_status_t (*get)(const pmix_proc_t *, const pmix_key_t, const pmix_info_t *, size_t,
                         pmix_value_t **);
    void (*value_destruct)(pmix_value_t *);
    /* Dynamic processes: optional (older or minimal libraries lack them). */
    pmix_status_t (*publish)(const pmix_info_t[], size_t);
    pmix_status_t (*lookup)(pmix_pdata_t[], size_t, const pmix_info_t[], size_t);
    pmix_status_t (*unpublish)(char **, const pmix_info_t[], size_t);
    pmix_status_t (*spawn)(const pmix_info_t[], size_t, const pmix_app_t[], size_t,
                           pmix_nspace_t);
    const char *(*error_string)(pmix_status_t);
} px;

static void pmix_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void pmix_error(const char *fmt, ...)
{
    char    text[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(text, sizeof(text), fmt, ap);
    va_end(ap);
    fprintf(stderr, "weft: pmix error (rank %d): %s\n", (int)px.me.rank, text);
}

static const char *errstr(pmix_status_t rc)
{
    return px.error_string ? px.error_string(rc) : "?";
}

static int pmix_load(void)
{
    static const char *const path = WEFT_PMIX_LIBDIR "/libpmix.so.2";

    px.lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
    if (px.lib == NULL) {
        pmix_error("a PMIx server started this process but %s cannot be loaded: %s", path,
                   dlerror());
        return -1;
    }
#define PMIX_SYM(field, name)                                           \
    do {                                                                \
        *(void **)&px.field = dlsym(px.lib, name);                      \
        if (px.field == NULL) {                                         \
            pmix_error("%s lacks %s", path, name);                      \
            return -1;                                                  \
        }                                                               \
    } while (0)
    PMIX_SYM(init, "PMIx_Init");
    PMIX_SYM(finalize, "PMIx_Finalize");
    PMIX_SYM(abort, "PMIx_Abort");
    PMIX_SYM(put, "PMIx_Put");
    PMIX_SYM(commit, "PMIx_Commit");
    PMIX_SYM(fence, "PMIx_Fence");
    PMIX_SYM(get, "PMIx_Get");
    PMIX_SYM(value_destruct, "PMIx_Value_destruct");
    PMIX_SYM(error_string, "PMIx_Error_string");
#undef PMIX_SYM
    *(void **)&px.publish   = dlsym(px.lib, "PMIx_Publish");
    *(void **)&px.lookup    = dlsym(px.lib, "PMIx_Lookup");
    *(void **)&px.unpublish = dlsym(px.lib, "PMIx_Unpublish");
    *(void **)&px.spawn     = dlsym(px.lib, "PMIx_Spawn");
    return 0;
}

/* An integer-typed value (servers differ in the width they use). */
static int value_int(const pmix_value_t *v, long *out)
{
    switch (v->type) {
    case PMIX_UINT32: *out = (long)v->data.uint32; return 0;
    case PMIX_INT32: *out = (long)v->data.int32; return 0;
    case PMIX_UINT16: *out = (long)v->data.uint16; return 0;
    case PMIX_INT: *out = (long)v->data.integer; return 0;
    case PMIX_UINT: *out = (long)v->data.uint; return 0;
    case PMIX_UINT64: *out = (long)v->data.uint64; return 0;
    case PMIX_SIZE: *out = (long)v->data.size; return 0;
    default: return -1;
    }
}

/* Read an integer attribute of proc (rank PMIX_RANK_WILDCARD: of the job). */
static int get_int(pmix_rank_t rank, const char *key, long *out)
{
    pmix_proc_t   proc = px.me;
    pmix_value_t *v    = NULL;
    int           rc;

    proc.rank = rank;
    if (px.get(&proc, key, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) {
        return -1;
    }
    rc = value_int(v, out);
    px.value_destruct(v);
    free(v);
    return rc;
}

int weft_pmix_offered(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

int weft_pmix_init(int *rank, int *size, int *appnum, char *nspace, size_t nspace_len)
{
    pmix_status_t rc;
    long          v;

    if (pmix_load() != 0) {
        return -1;
    }
    rc = px.init(&px.me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        pmix_error("PMIx_Init failed: %s", errstr(rc));
        return -1;
    }
    if (get_int(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, &v) != 0) {
        pmix_error("the PMIx server does not tell the job size (%s)", PMIX_JOB_SIZE);
        return -1;
    }
    *rank   = (int)px.me.rank;
    *size   = (int)v;
    *appnum = get_int(px.me.rank, PMIX_APPNUM, &v) == 0 ? (int)v : 0;
    snprintf(nspace, nspace_len, "%s", px.me.nspace);
    return 0;
}

int weft_pmix_node_ids(int size, int *node_of_rank)
{
    long v;

    for (int r = 0; r < size; r++) {
        if (get_int((pmix_rank_t)r, PMIX_NODEID, &v) != 0) {
            return -1;
        }
        node_of_rank[r] = (int)v;
    }
    return 0;
}

int weft_pmix_put(const char *wkey, const char *value)
{
    pmix_value_t  v;
    pmix_status_t rc;

    memset(&v, 0, sizeof(v));
    v.type        = PMIX_STRING;
    v.data.string = (char *)value; /* PMIx_Put copies it */
    rc            = px.put(PMIX_GLOBAL, wkey, &v);
    if (rc != PMIX_SUCCESS) {
        pmix_error("PMIx_Put '%s' failed: %s", wkey, errstr(rc));
        return -1;
    }
    return 0;
}

int weft_pmix_fence(void)
{
    pmix_info_t   info;
    pmix_proc_t   all = px.me;
    pmix_status_t rc  = px.commit();

    if (rc != PMIX_SUCCESS) {
        pmix_error("PMIx_Commit failed: %s", errstr(rc));
        return -1;
    }
    /* Collect the data at the fence: every rank reads most keys afterwards,
     * so one exchange beats a server round trip per get. */
    memset(&info, 0, sizeof(info));
    snprintf(info.key, sizeof(info.key), "%s", PMIX_COLLECT_DATA);
    info.value.type      = PMIX_BOOL;
    info.value.data.flag = true;
    all.rank             = PMIX_RANK_WILDCARD;
    rc                   = px.fence(&all, 1, &info, 1);
    if (rc != PMIX_SUCCESS) {
        pmix_error("PMIx_Fence failed: %s", errstr(rc));
        return -1;
    }
    return 0;
}

int weft_pmix_get(int rank, const char *wkey, char *value, size_t len)
{
    pmix_proc_t   proc = px.me;
    pmix_value_t *v    = NULL;
    int           rc   = -1;

    proc.rank = (pmix_rank_t)rank;
    if (px.get(&proc, wkey, NULL, 0, &v) != PMIX_SUCCESS || v == NULL) {
        return -1;
    }
    if (v->type == PMIX_STRING && v->data.string != NULL && strlen(v->data.string) < len) {
        memcpy(value, v->data.string, strlen(v->data.string) + 1);
        rc = 0;
    } else {
        pmix_error("value of key '%s' of rank %d is not a string that fits %zu bytes", wkey, rank,
                   len);
    }
    px.value_destruct(v);
    free(v);
    return rc;
}

int weft_pmix_universe_size(void)
{
    long v;

    return get_int(PMIX_RANK_WILDCARD, PMIX_UNIV_SIZE, &v) == 0 && v > 0 ? (int)v : 0;
}

void weft_pmix_abort(int exitcode, const char *msg)
{
    if (px.abort != NULL) {
        /* NULL procs: the whole namespace. Returns once the server acts. */
        px.abort(exitcode, msg, NULL, 0);
    }
}

int weft_pmix_finalize(void)
{
    pmix_status_t rc = px.finalize ? px.finalize(NULL, 0) : PMIX_SUCCESS;

    /* libpmix keeps threads and handlers: never dlclose it. */
    if (rc != PMIX_SUCCESS) {
        pmix_error("PMIx_Finalize failed: %s", errstr(rc));
        return -1;
    }
    return 0;
}

/* ---- dynamic processes ---- */

static void info_str(pmix_info_t *info, const char *key, const char *val)
{
    memset(info, 0, sizeof(*info));
    snprintf(info->key, sizeof(info->key), "%s", key);
    info->value.type        = PMIX_STRING;
    info->value.data.string = (char *)val;
}

/* WEFT_PMI_ERR_* for a PMIx status of a dynamic-process call. */
static int dyn_rc(pmix_status_t rc, const char *what, int not_found)
{
    if (rc == PMIX_SUCCESS) {
        return 0;
    }
    if (rc == PMIX_ERR_NOT_SUPPORTED) {
        pmix_error("%s: the PMIx server does not support it", what);
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    if (rc == PMIX_ERR_NOT_FOUND) {
        return not_found;
    }
    if (rc == PMIX_EXISTS || rc == PMIX_ERR_DUPLICATE_KEY) {
        return WEFT_PMI_ERR_DUPLICATE;
    }
    pmix_error("%s failed: %s", what, errstr(rc));
    return WEFT_PMI_ERR_GENERIC;
}

int weft_pmix_publish(const char *service, const char *port)
{
    pmix_info_t info;

    if (px.publish == NULL) {
        pmix_error("PMIx_Publish is missing from libpmix");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    info_str(&info, service, port);
    return dyn_rc(px.publish(&info, 1), "PMIx_Publish", WEFT_PMI_ERR_GENERIC);
}

int weft_pmix_lookup(const char *service, char *port, size_t len)
{
    pmix_pdata_t data;
    int          rc;

    if (px.lookup == NULL) {
        pmix_error("PMIx_Lookup is missing from libpmix");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    memset(&data, 0, sizeof(data));
    snprintf(data.key, sizeof(data.key), "%s", service);
    rc = dyn_rc(px.lookup(&data, 1, NULL, 0), "PMIx_Lookup", WEFT_PMI_ERR_NOT_FOUND);
    if (rc == 0) {
        if (data.value.type != PMIX_STRING || data.value.data.string == NULL) {
            rc = WEFT_PMI_ERR_NOT_FOUND;
        } else {
            snprintf(port, len, "%s", data.value.data.string);
        }
        px.value_destruct(&data.value);
    }
    return rc;
}

int weft_pmix_unpublish(const char *service)
{
    char *keys[2] = {(char *)service, NULL};

    if (px.unpublish == NULL) {
        pmix_error("PMIx_Unpublish is missing from libpmix");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    return dyn_rc(px.unpublish(keys, NULL, 0), "PMIx_Unpublish", WEFT_PMI_ERR_NOT_FOUND);
}

/* PMIx has no preput: the pairs travel in the children's environment
 * (env_extra: "WEFT_PMI_PREPUT=..." and "PMI_SPAWNED=1"), as with Weft's
 * own launcher. Info keys host, hostfile, wdir map to PMIx attributes. */
int weft_pmix_spawn(int count, const weft_pmi_spawn_cmd_t *cmds, const char *const *env_extra,
                    char *errmsg, size_t errmsg_len)
{
    extern char **environ;
    pmix_app_t    apps[count];
    pmix_info_t   infos[count][3];
    char        **envs[count], **argvs[count];
    pmix_nspace_t nspace;
    int           nenv = 0, nextra = 0, rc = 0;
    pmix_status_t st;

    if (px.spawn == NULL) {
        snprintf(errmsg, errmsg_len, "PMIx_Spawn is missing from libpmix");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    while (environ[nenv] != NULL) {
        nenv++;
    }
    while (env_extra[nextra] != NULL) {
        nextra++;
    }
    memset(apps, 0, sizeof(apps));
    for (int c = 0; c < count; c++) {
        int argc = 0, ni = 0;
        while (cmds[c].argv != NULL && cmds[c].argv[argc] != NULL) {
            argc++;
        }
        argvs[c] = calloc((size_t)argc + 2, sizeof(char *));
        envs[c]  = calloc((size_t)(nenv + nextra) + 1, sizeof(char *));
        if (argvs[c] == NULL || envs[c] == NULL) {
            for (int k = 0; k <= c; k++) {
                free(argvs[k]);
                free(envs[k]);
            }
            snprintf(errmsg, errmsg_len, "out of memory");
            return WEFT_PMI_ERR_GENERIC;
        }
        argvs[c][0] = (char *)cmds[c].command;
        for (int a = 0; a < argc; a++) {
            argvs[c][a + 1] = (char *)cmds[c].argv[a];
        }
        memcpy(envs[c], environ, sizeof(char *) * (size_t)nenv);
        for (int k = 0; k < nextra; k++) {
            envs[c][nenv + k] = (char *)env_extra[k];
        }
        for (int k = 0; k < cmds[c].ninfo && ni < 3; k++) {
            const char *key = cmds[c].info_keys[k];
            const char *pk  = !strcmp(key, "host")       ? PMIX_HOST
                              : !strcmp(key, "hostfile") ? PMIX_HOSTFILE
                              : !strcmp(key, "wdir")     ? PMIX_WDIR
                                                         : NULL;
            if (pk != NULL) {
                info_str(&infos[c][ni++], pk, cmds[c].info_values[k]);
            }
        }
        apps[c].cmd      = (char *)cmds[c].command;
        apps[c].argv     = argvs[c];
        apps[c].env      = envs[c];
        apps[c].maxprocs = cmds[c].maxprocs;
        apps[c].info     = ni ? infos[c] : NULL;
        apps[c].ninfo    = (size_t)ni;
    }
    memset(nspace, 0, sizeof(nspace));
    st = px.spawn(NULL, 0, apps, (size_t)count, nspace);
    if (st != PMIX_SUCCESS) {
        snprintf(errmsg, errmsg_len, "PMIx_Spawn: %s", st == PMIX_ERR_NOT_SUPPORTED
                                                          ? "the PMIx server does not support it"
                                                          : errstr(st));
        rc = st == PMIX_ERR_NOT_SUPPORTED ? WEFT_PMI_ERR_UNSUPPORTED : WEFT_PMI_ERR_SPAWN;
    }
    for (int c = 0; c < count; c++) {
        free(argvs[c]);
        free(envs[c]);
    }
    return rc;
}

#else /* !WEFT_HAVE_PMIX */

int weft_pmix_offered(void)
{
    return getenv("PMIX_NAMESPACE") != NULL && getenv("PMIX_RANK") != NULL;
}

int weft_pmix_init(int *rank, int *size, int *appnum, char *nspace, size_t nspace_len)
{
    (void)rank, (void)size, (void)appnum, (void)nspace, (void)nspace_len;
    fprintf(stderr, "weft: a PMIx server started this process but Weft was built without PMIx "
                    "(install libpmix-dev and rebuild), or set WEFT_PMI_VERSION=2 under srun "
                    "--mpi=pmi2\n");
    return -1;
}
int weft_pmix_node_ids(int size, int *node_of_rank) { (void)size, (void)node_of_rank; return -1; }
int weft_pmix_put(const char *wkey, const char *value) { (void)wkey, (void)value; return -1; }
int weft_pmix_fence(void) { return -1; }
int weft_pmix_get(int rank, const char *wkey, char *value, size_t len)
{
    (void)rank, (void)wkey, (void)value, (void)len;
    return -1;
}
int weft_pmix_universe_size(void) { return 0; }
void weft_pmix_abort(int exitcode, const char *msg) { (void)exitcode, (void)msg; }
int weft_pmix_finalize(void) { return 0; }
int weft_pmix_publish(const char *service, const char *port)
{
    (void)service, (void)port;
    return WEFT_PMI_ERR_UNSUPPORTED;
}
int weft_pmix_lookup(const char *service, char *port, size_t len)
{
    (void)service, (void)port, (void)len;
    return WEFT_PMI_ERR_UNSUPPORTED;
}
int weft_pmix_unpublish(const char *service)
{
    (void)service;
    return WEFT_PMI_ERR_UNSUPPORTED;
}
int weft_pmix_spawn(int count, const weft_pmi_spawn_cmd_t *cmds, const char *const *env_extra,
                    char *errmsg, size_t errmsg_len)
{
    (void)count, (void)cmds, (void)env_extra;
    snprintf(errmsg, errmsg_len, "Weft was built without PMIx");
    return WEFT_PMI_ERR_UNSUPPORTED;
}

#endif
