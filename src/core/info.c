/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "core/info.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_impl.h"
#include "core/errors.h"
#include "core/objpool.h"
#include "core/runtime.h"

weft_info_t *weft_builtin_info[2];
static weft_info_t info_env;
static weft_objpool_t info_pool = WEFT_OBJPOOL_INIT(weft_info_t);

weft_info_t *weft_info_new(void)
{
    weft_info_t *info = weft_objpool_alloc(&info_pool);

    if (info != NULL) {
        weft_object_init(&info->hdr, WEFT_KIND_INFO, 0);
    }
    return info;
}

int weft_info_put(weft_info_t *info, const char *key, const char *value)
{
    weft_info_entry_t **link = &info->head;
    char               *v    = strdup(value);

    if (v == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (; *link != NULL; link = &(*link)->next) {
        if (strcmp((*link)->key, key) == 0) {
            free((*link)->value);
            (*link)->value = v;
            return MPI_SUCCESS;
        }
    }
    weft_info_entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL || (e->key = strdup(key)) == NULL) {
        free(e);
        free(v);
        return MPI_ERR_NO_MEM;
    }
    e->value = v;
    *link    = e; /* append: keys keep their insertion order */
    info->nkeys++;
    return MPI_SUCCESS;
}

const char *weft_info_lookup(const weft_info_t *info, const char *key)
{
    for (const weft_info_entry_t *e = info ? info->head : NULL; e != NULL; e = e->next) {
        if (strcmp(e->key, key) == 0) {
            return e->value;
        }
    }
    return NULL;
}

weft_info_t *weft_info_clone(const weft_info_t *info)
{
    weft_info_t *copy = weft_info_new();

    for (const weft_info_entry_t *e = info ? info->head : NULL; copy && e; e = e->next) {
        if (weft_info_put(copy, e->key, e->value) != MPI_SUCCESS) {
            weft_info_release(copy);
            return NULL;
        }
    }
    return copy;
}

void weft_info_release(weft_info_t *info)
{
    if (info == NULL || info->hdr.handle != 0 || --info->hdr.refcount > 0) {
        return;
    }
    for (weft_info_entry_t *e = info->head, *next; e != NULL; e = next) {
        next = e->next;
        free(e->key);
        free(e->value);
        free(e);
    }
    weft_objpool_free(&info_pool, info);
}

/* What MPI_INFO_ENV says about how this process was started. The same
 * keys before MPI_Init (MPI_Info_create_env may be called then) as after:
 * the launcher's environment gives the job size before PMI is up.
 * thread_level is only known once the library is initialized. */
static void env_info_fill(weft_info_t *info)
{
    char        buf[4096];
    const char *size_env = getenv("PMI_SIZE");
    ssize_t     n        = readlink("/proc/self/exe", buf, sizeof(buf) - 1);

    if (n > 0) {
        buf[n] = '\0';
        weft_info_put(info, "command", buf);
    }
    if (weft_runtime.core_up) {
        weft_info_put(info, "host", weft_runtime.processor_name);
    } else if (gethostname(buf, sizeof(buf) - 1) == 0) {
        buf[sizeof(buf) - 1] = '\0';
        weft_info_put(info, "host", buf);
    }
    if (weft_runtime.core_up) {
        snprintf(buf, sizeof(buf), "%d", weft_runtime.pmi.size);
        weft_info_put(info, "maxprocs", buf);
    } else {
        weft_info_put(info, "maxprocs", size_env != NULL && atoi(size_env) > 0 ? size_env : "1");
    }
    if (getcwd(buf, sizeof(buf)) != NULL) {
        weft_info_put(info, "wdir", buf);
    }
    if (weft_runtime.core_up) {
        weft_info_put(info, "thread_level",
                      weft_runtime.thread_level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
                      : weft_runtime.thread_level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
                      : weft_runtime.thread_level == MPI_THREAD_FUNNELED  ? "MPI_THREAD_FUNNELED"
                                                                          : "MPI_THREAD_SINGLE");
    }
}

int weft_info_module_init(void)
{
    weft_object_init(&info_env.hdr, WEFT_KIND_INFO, (uintptr_t)MPI_INFO_ENV);
    weft_builtin_info[0] = NULL;
    weft_builtin_info[1] = &info_env;
    env_info_fill(&info_env);
    return MPI_SUCCESS;
}

int weft_info_remove(weft_info_t *info, const char *key)
{
    for (weft_info_entry_t **link = &info->head; *link != NULL; link = &(*link)->next) {
        weft_info_entry_t *e = *link;
        if (strcmp(e->key, key) == 0) {
            *link = e->next;
            free(e->key);
            free(e->value);
            free(e);
            info->nkeys--;
            return 1;
        }
    }
    return 0;
}

/* ---- MPI functions ------------------------------------------------------ */

static int info_out(weft_info_t *info, MPI_Info *out)
{
    if (info == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an info object");
    }
    *out = (MPI_Info)weft_object_handle(info);
    return MPI_SUCCESS;
}

static int check_key(const char *key)
{
    size_t n;

    if (key == NULL) {
        return weft_error(MPI_ERR_INFO_KEY, "argument key: NULL pointer");
    }
    n = strlen(key);
    if (n == 0 || n >= MPI_MAX_INFO_KEY) {
        return weft_error(MPI_ERR_INFO_KEY, "argument key: length %zu is not in 1..%d", n,
                          MPI_MAX_INFO_KEY - 1);
    }
    return MPI_SUCCESS;
}

int weft_info_create_impl(MPI_Info *info)
{
    return info_out(weft_info_new(), info);
}

int weft_info_set_impl(weft_info_t *info, const char *key, const char *value)
{
    int rc = check_key(key);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (value == NULL) {
        return weft_error(MPI_ERR_INFO_VALUE, "argument value: NULL pointer");
    }
    if (strlen(value) >= MPI_MAX_INFO_VAL) {
        return weft_error(MPI_ERR_INFO_VALUE, "argument value: longer than MPI_MAX_INFO_VAL-1 (%d)",
                          MPI_MAX_INFO_VAL - 1);
    }
    if (weft_info_put(info, key, value) != MPI_SUCCESS) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for an info entry");
    }
    return MPI_SUCCESS;
}

int weft_info_get_impl(weft_info_t *info, const char *key, int valuelen, char *value, int *flag)
{
    const char *v;
    size_t      n;
    int         rc = check_key(key);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (valuelen < 0) {
        return weft_error(MPI_ERR_ARG, "argument valuelen: %d is negative", valuelen);
    }
    v = weft_info_lookup(info, key);
    if (v == NULL) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    if (value == NULL) {
        return weft_error(MPI_ERR_ARG, "argument value: NULL pointer");
    }
    n = strlen(v);
    if (n > (size_t)valuelen) {
        n = (size_t)valuelen;
    }
    memcpy(value, v, n);
    value[n] = '\0';
    *flag    = 1;
    return MPI_SUCCESS;
}

int weft_info_get_string_impl(weft_info_t *info, const char *key, int *buflen, char *value, int *flag)
{
    const char *v;
    size_t      n;
    int         rc = check_key(key);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    v = weft_info_lookup(info, key);
    if (v == NULL) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    n = strlen(v);
    if (*buflen > 0) {
        size_t k = n < (size_t)*buflen - 1 ? n : (size_t)*buflen - 1;
        if (value == NULL) {
            return weft_error(MPI_ERR_ARG, "argument value: NULL pointer with buflen %d", *buflen);
        }
        memcpy(value, v, k);
        value[k] = '\0';
    }
    *buflen = (int)n + 1;
    *flag   = 1;
    return MPI_SUCCESS;
}

int weft_info_get_valuelen_impl(weft_info_t *info, const char *key, int *valuelen, int *flag)
{
    const char *v;
    int         rc = check_key(key);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    v     = weft_info_lookup(info, key);
    *flag = v != NULL;
    if (v != NULL) {
        *valuelen = (int)strlen(v);
    }
    return MPI_SUCCESS;
}

int weft_info_get_nkeys_impl(weft_info_t *info, int *nkeys)
{
    *nkeys = info->nkeys;
    return MPI_SUCCESS;
}

int weft_info_get_nthkey_impl(weft_info_t *info, int n, char *key)
{
    const weft_info_entry_t *e = info->head;

    if (n < 0 || n >= info->nkeys) {
        return weft_error(MPI_ERR_ARG, "argument n: %d is not in 0..%d", n, info->nkeys - 1);
    }
    if (key == NULL) {
        return weft_error(MPI_ERR_ARG, "argument key: NULL pointer");
    }
    for (int i = 0; i < n; i++) {
        e = e->next;
    }
    snprintf(key, MPI_MAX_INFO_KEY, "%s", e->key);
    return MPI_SUCCESS;
}

int weft_info_delete_impl(weft_info_t *info, const char *key)
{
    int rc = check_key(key);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (!weft_info_remove(info, key)) {
        return weft_error(MPI_ERR_INFO_NOKEY, "argument key: \"%s\" is not in the info object", key);
    }
    return MPI_SUCCESS;
}

int weft_info_dup_impl(weft_info_t *info, MPI_Info *newinfo)
{
    return info_out(weft_info_clone(info), newinfo);
}

int weft_info_free_impl(MPI_Info *info)
{
    weft_info_t *i;

    if (info == NULL) {
        return weft_error(MPI_ERR_ARG, "argument info: NULL pointer");
    }
    i = weft_info_from_handle(*info);
    if (i == NULL) {
        return weft_error(MPI_ERR_INFO, "argument info: invalid info object%s",
                          *info == MPI_INFO_NULL ? " (null handle)" : "");
    }
    if (i->hdr.handle != 0) {
        return weft_error(MPI_ERR_INFO, "argument info: MPI_INFO_ENV cannot be freed");
    }
    weft_info_release(i);
    *info = MPI_INFO_NULL;
    return MPI_SUCCESS;
}

/* MPI_Info_create_env may run before MPI_Init: the environment info (built
 * the same way before and after), plus what its arguments say. */
int weft_info_create_env_impl(int argc, char *argv[], MPI_Info *info)
{
    weft_info_t *i = info_env.hdr.magic ? weft_info_clone(&info_env) : weft_info_new();

    if (i != NULL && !info_env.hdr.magic) {
        env_info_fill(i);
    }
    if (i != NULL && argc > 0 && argv != NULL && argv[0] != NULL) {
        size_t len = 1;
        char  *args;
        weft_info_put(i, "command", argv[0]);
        for (int k = 1; k < argc && argv[k] != NULL; k++) {
            len += strlen(argv[k]) + 1;
        }
        args = calloc(1, len);
        if (args != NULL) {
            for (int k = 1; k < argc && argv[k] != NULL; k++) {
                if (k > 1) {
                    strcat(args, " ");
                }
                strcat(args, argv[k]);
            }
            if (argc > 1 && strlen(args) < MPI_MAX_INFO_VAL) {
                weft_info_put(i, "argv", args);
            }
            free(args);
        }
    }
    return info_out(i, info);
}
