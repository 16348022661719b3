/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * PMI client side of dynamic processes: spawn and the name service
 * (contracts in pmi.h), in the documented PMI-1 and PMI-2 wire forms
 * (pmi_msgs.def), so Weft's mpiexec and MPICH's hydra both serve them.
 * Without a launcher (singleton) a spawn starts an mpiexec for the children
 * itself (pmi_spawn.h). Under PMIx these report WEFT_PMI_ERR_UNSUPPORTED.
 */
#include "pmi.h"
#include "pmi_client_private.h"
#include "pmi_spawn.h"
#include "util/tunables.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void set_msg(char *errmsg, size_t len, const char *text)
{
    if (errmsg != NULL && len > 0) {
        snprintf(errmsg, len, "%s", text);
    }
}

/* dir/mpiexec when it is Weft's (weft-proxy next to it): other MPIs'
 * mpiexecs do not know --spawn-fd. */
static int weft_mpiexec_in(const char *dir, size_t n, char *out, size_t len)
{
    char proxy[PATH_MAX];

    snprintf(proxy, sizeof(proxy), "%.*s/weft-proxy", (int)n, dir);
    snprintf(out, len, "%.*s/mpiexec", (int)n, dir);
    return n > 0 && access(out, X_OK) == 0 && access(proxy, X_OK) == 0 ? 0 : -1;
}

/* Weft's mpiexec next to this library (prefix/lib/libmpi.so -> prefix/bin),
 * else the first in PATH. */
static int find_mpiexec(char *out, size_t len)
{
    Dl_info     dli;
    const char *path = getenv("PATH");

    if (dladdr((void *)find_mpiexec, &dli) != 0 && dli.dli_fname != NULL) {
        char  lib[PATH_MAX];
        char *slash;
        snprintf(lib, sizeof(lib), "%s", dli.dli_fname);
        if ((slash = strrchr(lib, '/')) != NULL) {
            *slash = '\0';
            if ((slash = strrchr(lib, '/')) != NULL) {
                *slash = '\0';
                strncat(lib, "/bin", sizeof(lib) - strlen(lib) - 1);
                if (weft_mpiexec_in(lib, strlen(lib), out, len) == 0) {
                    return 0;
                }
            }
        }
    }
    while (path != NULL && *path != '\0') {
        const char *colon = strchr(path, ':');
        int         n     = colon ? (int)(colon - path) : (int)strlen(path);
        if (weft_mpiexec_in(path, (size_t)n, out, len) == 0) {
            return 0;
        }
        path = colon ? colon + 1 : NULL;
    }
    return -1;
}

static int spawn_singleton(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                           const char *const *keys, const char *const *vals, int *errcodes,
                           char *errmsg, size_t errmsg_len)
{
    weft_pmi_spawn_req_t req;
    char                 mpiexec[PATH_MAX], *packed = NULL;
    size_t               len;
    int                  rc, pid;

    if (find_mpiexec(mpiexec, sizeof(mpiexec)) != 0) {
        for (int c = 0, k = 0; c < count; c++) {
            for (int j = 0; j < cmds[c].maxprocs; j++) {
                errcodes[k++] = 1;
            }
        }
        set_msg(errmsg, errmsg_len, "spawn without a launcher needs Weft's mpiexec: not found "
                                    "next to the library nor in PATH");
        return WEFT_PMI_ERR_SPAWN;
    }
    if (weft_pmi_spawn_pack(count, cmds, npreput, keys, vals, &packed, &len) != 0 ||
        weft_pmi_spawn_unpack(packed, len, &req) != 0) {
        free(packed);
        set_msg(errmsg, errmsg_len, "out of memory");
        return WEFT_PMI_ERR_GENERIC;
    }
    free(packed);
    rc = weft_pmi_spawn_start(mpiexec, &req, NULL, 0, NULL, weft_tunables.SPAWN_TIMEOUT * 1000,
                              &pid, errcodes, errmsg, errmsg_len);
    if (rc != 0 && pid > 0) {
        waitpid(pid, NULL, 0); /* it failed and is ending: do not leave a zombie */
    }
    weft_pmi_spawn_req_free(&req);
    return rc;
}

/* PMI-1: one "mcmd=spawn" block per command, one reply after the last. */
static int spawn_v1(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                    const char *const *keys, const char *const *vals, weft_pmi_msg_t *r)
{
    weft_pmi_msg_t q;
    char           k[32];

    for (int c = 0; c < count; c++) {
        int argc = 0;
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_SPAWN);
        weft_pmi_msg_addf(&q, "nprocs", "%d", cmds[c].maxprocs);
        weft_pmi_msg_add(&q, "execname", cmds[c].command);
        weft_pmi_msg_addf(&q, "totspawns", "%d", count);
        weft_pmi_msg_addf(&q, "spawnssofar", "%d", c + 1);
        while (cmds[c].argv != NULL && cmds[c].argv[argc] != NULL) {
            argc++;
        }
        weft_pmi_msg_addf(&q, "argcnt", "%d", argc);
        for (int a = 0; a < argc; a++) {
            snprintf(k, sizeof(k), "arg%d", a + 1);
            weft_pmi_msg_add(&q, k, cmds[c].argv[a]);
        }
        weft_pmi_msg_addf(&q, "preput_num", "%d", npreput);
        for (int p = 0; p < npreput; p++) {
            snprintf(k, sizeof(k), "preput_key_%d", p);
            weft_pmi_msg_add(&q, k, keys[p]);
            snprintf(k, sizeof(k), "preput_val_%d", p);
            weft_pmi_msg_add(&q, k, vals[p]);
        }
        weft_pmi_msg_addf(&q, "info_num", "%d", cmds[c].ninfo);
        for (int i = 0; i < cmds[c].ninfo; i++) {
            snprintf(k, sizeof(k), "info_key_%d", i);
            weft_pmi_msg_add(&q, k, cmds[c].info_keys[i]);
            snprintf(k, sizeof(k), "info_val_%d", i);
            if (weft_pmi_msg_add(&q, k, cmds[c].info_values[i]) != 0) {
                return -1; /* too many attributes */
            }
        }
        if (c < count - 1 ? weft_pmi_client_send(&q) != 0 : weft_pmi_client_call(&q, r) != 0) {
            return -1;
        }
    }
    return 0;
}

/* PMI-2: one message; per-command keys repeat in order. */
static int spawn_v2(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                    const char *const *keys, const char *const *vals, weft_pmi_msg_t *r)
{
    weft_pmi_msg_t q;
    char           k[32];
    int            bad;

    weft_pmi_msg_init(&q, WEFT_PMI_MSG_SPAWN2);
    bad = weft_pmi_msg_addf(&q, "ncmds", "%d", count);
    bad |= weft_pmi_msg_addf(&q, "preputcount", "%d", npreput);
    for (int p = 0; p < npreput; p++) {
        snprintf(k, sizeof(k), "ppkey%d", p);
        bad |= weft_pmi_msg_add(&q, k, keys[p]);
        snprintf(k, sizeof(k), "ppval%d", p);
        bad |= weft_pmi_msg_add(&q, k, vals[p]);
    }
    for (int c = 0; c < count; c++) {
        int argc = 0;
        while (cmds[c].argv != NULL && cmds[c].argv[argc] != NULL) {
            argc++;
        }
        bad |= weft_pmi_msg_add(&q, "subcmd", cmds[c].command);
        bad |= weft_pmi_msg_addf(&q, "maxprocs", "%d", cmds[c].maxprocs);
        bad |= weft_pmi_msg_addf(&q, "argc", "%d", argc);
        for (int a = 0; a < argc; a++) {
            snprintf(k, sizeof(k), "argv%d", a);
            bad |= weft_pmi_msg_add(&q, k, cmds[c].argv[a]);
        }
        bad |= weft_pmi_msg_addf(&q, "infokeycount", "%d", cmds[c].ninfo);
        for (int i = 0; i < cmds[c].ninfo; i++) {
            snprintf(k, sizeof(k), "infokey%d", i);
            bad |= weft_pmi_msg_add(&q, k, cmds[c].info_keys[i]);
            snprintf(k, sizeof(k), "infoval%d", i);
            bad |= weft_pmi_msg_add(&q, k, cmds[c].info_values[i]);
        }
    }
    if (bad) {
        return -1;
    }
    return weft_pmi_client_call(&q, r);
}

int weft_pmi_spawn(int count, const weft_pmi_spawn_cmd_t *cmds, int npreput,
                   const char *const *preput_keys, const char *const *preput_values,
                   int *errcodes, char *errmsg, size_t errmsg_len)
{
    weft_pmi_msg_t r;
    int            wire = weft_pmi_client_wire(), nchildren = 0, rc;
    const char    *codes, *why;

    for (int c = 0; c < count; c++) {
        if (cmds[c].command == NULL || cmds[c].command[0] == '\0' || cmds[c].maxprocs <= 0) {
            set_msg(errmsg, errmsg_len, "spawn: empty command or maxprocs <= 0");
            return WEFT_PMI_ERR_GENERIC;
        }
        nchildren += cmds[c].maxprocs;
    }
    for (int k = 0; k < nchildren; k++) {
        errcodes[k] = 0;
    }
    if (count <= 0) {
        set_msg(errmsg, errmsg_len, "spawn: no command");
        return WEFT_PMI_ERR_GENERIC;
    }
    if (wire == 3) {
        set_msg(errmsg, errmsg_len, "spawn under a PMIx server is not implemented yet by "
                                    "Weft's PMI client");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    if (wire == 0) {
        return spawn_singleton(count, cmds, npreput, preput_keys, preput_values, errcodes, errmsg,
                               errmsg_len);
    }
    rc = wire == 2 ? spawn_v2(count, cmds, npreput, preput_keys, preput_values, &r)
                   : spawn_v1(count, cmds, npreput, preput_keys, preput_values, &r);
    if (rc != 0) {
        set_msg(errmsg, errmsg_len, "spawn: the request could not be sent to the PMI server "
                                    "(too large, or the server is gone)");
        return WEFT_PMI_ERR_GENERIC;
    }
    codes = weft_pmi_msg_get(&r, "errcodes");
    why   = weft_pmi_msg_get(&r, wire == 2 ? "errmsg" : "msg");
    if (weft_pmi_msg_rc(&r) == 0) {
        return 0;
    }
    char line[1200];
    snprintf(line, sizeof(line), "fail %s %s", codes && codes[0] ? codes : "-",
             why ? why : "the PMI server could not start the processes");
    weft_pmi_spawn_parse_fail(line, nchildren, errcodes, errmsg, errmsg_len);
    for (char *p = errmsg; errmsg != NULL && *p; p++) {
        *p = *p == '_' ? ' ' : *p; /* PMI-1 words back to text */
    }
    if (why != NULL && (strstr(why, "cannot_spawn") || strstr(why, "cannot spawn") ||
                        strstr(why, "not_implemented") || strstr(why, "not implemented"))) {
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    return WEFT_PMI_ERR_SPAWN;
}

int weft_pmi_is_spawned(void)
{
    const char *v = getenv("PMI_SPAWNED");
    return v != NULL && strcmp(v, "1") == 0;
}

int weft_pmi_get_preput(const char *key, char *value, size_t len)
{
    const char    *hex = getenv("WEFT_PMI_PREPUT");
    weft_pmi_msg_t q, r;
    int            wire = weft_pmi_client_wire();

    if (hex != NULL) {
        size_t               n    = strlen(hex) / 2;
        char                *data = malloc(n + 1);
        weft_pmi_spawn_req_t req;
        int                  rc = WEFT_PMI_ERR_NOT_FOUND;

        if (data == NULL || weft_pmi_decode(hex, data, n) != 0 ||
            weft_pmi_spawn_unpack(data, n, &req) != 0) {
            free(data);
            return WEFT_PMI_ERR_NOT_FOUND;
        }
        for (int k = 0; k < req.npreput && rc != 0; k++) {
            if (strcmp(req.pp_keys[k], key) == 0) {
                snprintf(value, len, "%s", req.pp_vals[k]);
                rc = 0;
            }
        }
        weft_pmi_spawn_req_free(&req);
        free(data);
        return rc;
    }
    /* Hydra keeps the pairs in the spawned job's KVS. */
    if (wire == 1) {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_GET);
        weft_pmi_msg_add(&q, "kvsname", weft_pmi_client_kvsname());
        weft_pmi_msg_add(&q, "key", key);
    } else if (wire == 2) {
        weft_pmi_msg_init(&q, WEFT_PMI_MSG_KVS_GET);
        weft_pmi_msg_add(&q, "key", key);
    } else {
        return WEFT_PMI_ERR_NOT_FOUND;
    }
    if (weft_pmi_client_call(&q, &r) != 0 || weft_pmi_msg_rc(&r) != 0 ||
        weft_pmi_msg_get(&r, "value") == NULL ||
        (wire == 2 && (weft_pmi_msg_get(&r, "found") == NULL ||
                       strcmp(weft_pmi_msg_get(&r, "found"), "TRUE") != 0))) {
        return WEFT_PMI_ERR_NOT_FOUND;
    }
    snprintf(value, len, "%s", weft_pmi_msg_get(&r, "value"));
    return 0;
}

/* ---- name service ---- */

static int name_rc(const weft_pmi_msg_t *r, int wire, int op)
{
    const char *why = weft_pmi_msg_get(r, wire == 2 ? "errmsg" : "msg");

    if (weft_pmi_msg_rc(r) == 0) {
        return 0;
    }
    if (why != NULL && (strstr(why, "duplicate") || strstr(why, "already"))) {
        return WEFT_PMI_ERR_DUPLICATE;
    }
    if (why != NULL && (strstr(why, "not_found") || strstr(why, "not found"))) {
        return WEFT_PMI_ERR_NOT_FOUND;
    }
    if (why != NULL && (strstr(why, "unavailable") || strstr(why, "name_service_error"))) {
        return WEFT_PMI_ERR_GENERIC;
    }
    if (why != NULL && (strstr(why, "unsupported") || strstr(why, "no_name_service") ||
                        strstr(why, "no name service"))) {
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    /* Other servers say less: a failed publish is most likely a duplicate
     * only when they say so; lookups and unpublishes fail on absent names. */
    return op == 'P' ? WEFT_PMI_ERR_GENERIC : WEFT_PMI_ERR_NOT_FOUND;
}

static int name_call(int op, const char *service, const char *port, char *out, size_t len)
{
    weft_pmi_msg_t q, r;
    int            wire = weft_pmi_client_wire(), rc;
    const char    *v;

    if (service == NULL || service[0] == '\0' || strpbrk(service, " \n;") != NULL ||
        (op == 'P' && (port == NULL || port[0] == '\0' || strpbrk(port, " \n") != NULL))) {
        return WEFT_PMI_ERR_GENERIC; /* PMI cannot carry it */
    }
    if (wire == 0 || wire == 3) {
        fprintf(stderr, "weft: pmi: the name service needs Weft's mpiexec or hydra (%s)\n",
                wire == 0 ? "this process runs without a launcher"
                          : "not implemented under PMIx yet");
        return WEFT_PMI_ERR_UNSUPPORTED;
    }
    if (wire == 2) {
        weft_pmi_msg_init(&q, op == 'P'   ? WEFT_PMI_MSG_NAME_PUBLISH
                              : op == 'L' ? WEFT_PMI_MSG_NAME_LOOKUP
                                          : WEFT_PMI_MSG_NAME_UNPUBLISH);
        weft_pmi_msg_add(&q, "name", service);
    } else {
        weft_pmi_msg_init(&q, op == 'P'   ? WEFT_PMI_MSG_PUBLISH
                              : op == 'L' ? WEFT_PMI_MSG_LOOKUP
                                          : WEFT_PMI_MSG_UNPUBLISH);
        weft_pmi_msg_add(&q, "service", service);
    }
    if (op == 'P') {
        weft_pmi_msg_add(&q, "port", port);
    }
    if (weft_pmi_client_call(&q, &r) != 0) {
        return WEFT_PMI_ERR_GENERIC;
    }
    rc = name_rc(&r, wire, op);
    if (rc == 0 && op == 'L') {
        /* PMI-2 servers differ: MPICH 4's hydra says port=, older ones value=. */
        v = weft_pmi_msg_get(&r, "port");
        if (v == NULL && wire == 2) {
            v = weft_pmi_msg_get(&r, "value");
        }
        if (v == NULL) {
            return WEFT_PMI_ERR_NOT_FOUND;
        }
        snprintf(out, len, "%s", v);
    }
    return rc;
}

int weft_pmi_publish_name(const char *service, const char *port)
{
    return name_call('P', service, port, NULL, 0);
}

int weft_pmi_lookup_name(const char *service, char *port, size_t len)
{
    return name_call('L', service, NULL, port, len);
}

int weft_pmi_unpublish_name(const char *service)
{
    return name_call('U', service, NULL, NULL, 0);
}
