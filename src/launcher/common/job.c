/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int put_kv(weft_buf_t *out, const char *key, const char *val)
{
    return weft_buf_append(out, key, strlen(key)) || weft_buf_append(out, "=", 1) ||
           weft_buf_append_str0(out, val);
}

static int put_int(weft_buf_t *out, const char *key, int v)
{
    char num[32];
    snprintf(num, sizeof(num), "%d", v);
    return put_kv(out, key, num);
}

int weft_job_pack(const weft_job_t *job, weft_buf_t *out)
{
    int rc = 0;

    rc |= put_kv(out, "jobid", job->jobid);
    rc |= put_kv(out, "kvsname", job->kvsname);
    rc |= put_kv(out, "host", job->host);
    rc |= put_kv(out, "cwd", job->cwd);
    rc |= put_kv(out, "mapping", job->mapping ? job->mapping : "");
    rc |= put_int(out, "size", job->size);
    rc |= put_int(out, "universe", job->universe);
    rc |= put_int(out, "node_id", job->node_id);
    rc |= put_int(out, "node_count", job->node_count);
    rc |= put_int(out, "bind_enable", job->bind.enable);
    rc |= put_int(out, "bind_policy", job->bind.policy);
    rc |= put_int(out, "bind_level", job->bind.level);
    rc |= put_int(out, "bind_show", job->bind.show);
    rc |= put_kv(out, "bind_map", job->bind.mapping);
    for (int i = 0; i < job->nlocal; i++) {
        rc |= put_int(out, "rank", job->ranks[i]);
    }
    for (int i = 0; i < job->argc; i++) {
        rc |= put_kv(out, "arg", job->argv[i]);
    }
    for (int i = 0; i < job->nenv; i++) {
        rc |= put_kv(out, "env", job->env[i]);
    }
    for (int k = 1; k < job->napps; k++) {
        rc |= put_int(out, "app", job->app_first[k]);
        for (int a = 0; a < job->app_argc[k]; a++) {
            rc |= put_kv(out, "app_arg", job->app_argv[k][a]);
        }
    }
    return rc ? -1 : 0;
}

static int push_str(char ***arr, int *n, const char *s)
{
    char **grown = realloc(*arr, sizeof(char *) * (size_t)(*n + 2));
    if (grown == NULL) {
        return -1;
    }
    *arr          = grown;
    grown[*n]     = strdup(s);
    grown[*n + 1] = NULL;
    return grown[(*n)++] ? 0 : -1;
}

int weft_job_unpack(const char *data, size_t len, weft_job_t *job)
{
    const char *p = data, *end = data + len;

    memset(job, 0, sizeof(*job));
    while (p < end) {
        const char *rec = p, *eq;
        size_t      n   = strnlen(p, (size_t)(end - p));
        if (p + n == end) {
            return -1; /* unterminated record */
        }
        p += n + 1;
        eq = memchr(rec, '=', n);
        if (eq == NULL) {
            return -1;
        }
        size_t      klen = (size_t)(eq - rec);
        const char *v    = eq + 1;
#define KEY(_k) (klen == strlen(_k) && memcmp(rec, _k, klen) == 0)
        if (KEY("jobid")) {
            snprintf(job->jobid, sizeof(job->jobid), "%s", v);
        } else if (KEY("kvsname")) {
            snprintf(job->kvsname, sizeof(job->kvsname), "%s", v);
        } else if (KEY("host")) {
            snprintf(job->host, sizeof(job->host), "%s", v);
        } else if (KEY("cwd")) {
            snprintf(job->cwd, sizeof(job->cwd), "%s", v);
        } else if (KEY("mapping")) {
            free(job->mapping);
            job->mapping = strdup(v);
        } else if (KEY("size")) {
            job->size = atoi(v);
        } else if (KEY("universe")) {
            job->universe = atoi(v);
        } else if (KEY("node_id")) {
            job->node_id = atoi(v);
        } else if (KEY("node_count")) {
            job->node_count = atoi(v);
        } else if (KEY("bind_enable")) {
            job->bind.enable = atoi(v);
        } else if (KEY("bind_policy")) {
            job->bind.policy = atoi(v);
        } else if (KEY("bind_level")) {
            job->bind.level = atoi(v);
        } else if (KEY("bind_show")) {
            job->bind.show = atoi(v);
        } else if (KEY("bind_map")) {
            snprintf(job->bind.mapping, sizeof(job->bind.mapping), "%s", v);
        } else if (KEY("rank")) {
            int *grown = realloc(job->ranks, sizeof(int) * (size_t)(job->nlocal + 1));
            if (grown == NULL) {
                return -1;
            }
            job->ranks                = grown;
            job->ranks[job->nlocal++] = atoi(v);
        } else if (KEY("arg")) {
            if (push_str(&job->argv, &job->argc, v) != 0) {
                return -1;
            }
        } else if (KEY("app")) {
            int    k     = job->napps ? job->napps : 1;
            int   *first = realloc(job->app_first, sizeof(int) * (size_t)(k + 1));
            int   *argc  = first ? realloc(job->app_argc, sizeof(int) * (size_t)(k + 1)) : NULL;
            char ***argv = argc ? realloc(job->app_argv, sizeof(char **) * (size_t)(k + 1)) : NULL;
            if (first) {
                job->app_first = first;
            }
            if (argc) {
                job->app_argc = argc;
            }
            if (argv == NULL) {
                return -1;
            }
            job->app_argv = argv;
            first[0]      = 0; /* app 0 starts at rank 0; its argv is job->argv */
            argc[0]       = 0;
            argv[0]       = NULL;
            first[k]      = atoi(v);
            argc[k]       = 0;
            argv[k]       = NULL;
            job->napps    = k + 1;
        } else if (KEY("app_arg")) {
            int k = job->napps - 1;
            if (k < 1 || push_str(&job->app_argv[k], &job->app_argc[k], v) != 0) {
                return -1;
            }
        } else if (KEY("env")) {
            if (push_str(&job->env, &job->nenv, v) != 0) {
                return -1;
            }
        }
#undef KEY
    }
    if (job->napps == 0) {
        job->napps = 1;
    }
    for (int k = 1; k < job->napps; k++) {
        if (job->app_argc[k] <= 0 || job->app_first[k] <= job->app_first[k - 1]) {
            return -1;
        }
    }
    if (job->size <= 0 || job->nlocal <= 0 || job->argc <= 0 || job->jobid[0] == '\0') {
        return -1;
    }
    return 0;
}

void weft_job_free(weft_job_t *job)
{
    for (int i = 0; i < job->argc; i++) {
        free(job->argv[i]);
    }
    for (int i = 0; i < job->nenv; i++) {
        free(job->env[i]);
    }
    free(job->argv);
    for (int k = 1; k < job->napps; k++) {
        for (int a = 0; a < job->app_argc[k]; a++) {
            free(job->app_argv[k][a]);
        }
        free(job->app_argv[k]);
    }
    free(job->app_first);
    free(job->app_argc);
    free(job->app_argv);
    free(job->env);
    free(job->ranks);
    free(job->mapping);
    memset(job, 0, sizeof(*job));
}

int weft_job_app_of(const weft_job_t *job, int rank)
{
    int app = 0;

    for (int k = 1; k < job->napps; k++) {
        if (rank >= job->app_first[k]) {
            app = k;
        }
    }
    return app;
}
