/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_T initialisation, control variables (the tunables table, launcher rows
 * left out), enumerations and categories (the modules named by the
 * tunables, pvars and events tables).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/info.h"
#include "core/mpit/mpit.h"
#include "core/mpit/mpit_internal.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"
#include "util/tunables.h"

/* Longest value a string control variable reads or writes (count of MPI_CHAR). */
#define MPIT_STRING_MAX 1024

extern int weft_api_arg_check; /* core/runtime.c; WEFT_ARG_CHECK may change at any time */

static pthread_mutex_t mpit_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int             init_count; /* MPI_T_init_thread calls minus MPI_T_finalize calls */

void mpit_lock(void)
{
    pthread_mutex_lock(&mpit_mutex);
}

void mpit_unlock(void)
{
    pthread_mutex_unlock(&mpit_mutex);
}

int weft_mpit_active(void)
{
    return init_count > 0;
}

void mpit_string_out(const char *s, char *buf, int *len)
{
    int n = (int)strlen(s);

    if (len == NULL) {
        return;
    }
    if (buf == NULL || *len <= 0) {
        *len = n + 1;
        return;
    }
    if (n > *len - 1) {
        n = *len - 1;
    }
    memcpy(buf, s, (size_t)n);
    buf[n] = '\0';
    *len   = n + 1;
}

int mpit_verbosity(const char *tier)
{
    if (strcmp(tier, "USER_BASIC") == 0) return MPI_T_VERBOSITY_USER_BASIC;
    if (strcmp(tier, "TUNER_BASIC") == 0) return MPI_T_VERBOSITY_TUNER_BASIC;
    if (strcmp(tier, "TUNER_DETAIL") == 0) return MPI_T_VERBOSITY_TUNER_DETAIL;
    return MPI_T_VERBOSITY_MPIDEV_ALL;
}

/* ---- init / finalize ----------------------------------------------------- */

int weft_mpit_init_thread(int required, int *provided)
{
    char errbuf[512];

    if (required != MPI_THREAD_SINGLE && required != MPI_THREAD_FUNNELED &&
        required != MPI_THREAD_SERIALIZED && required != MPI_THREAD_MULTIPLE) {
        return MPI_T_ERR_INVALID;
    }
    if (provided == NULL) {
        return MPI_T_ERR_INVALID;
    }
    if (init_count == 0 && weft_runtime.state == WEFT_STATE_UNINITIALIZED && !weft_runtime.core_up) {
        /* Show the environment's values before MPI_Init; a bad value is
         * reported by MPI_Init, which loads again (keeping MPI_T writes). */
        (void)weft_tunables_load(errbuf, sizeof(errbuf));
    }
    init_count++;
    *provided = MPI_THREAD_MULTIPLE; /* every MPI_T call takes the MPI_T lock */
    return MPI_SUCCESS;
}

int weft_mpit_finalize(void)
{
    if (init_count == 0) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (--init_count == 0) {
        /* Handles and sessions die with the last finalize. */
        mpit_pvar_free_all();
        mpit_event_free_all();
    }
    return MPI_SUCCESS;
}

/* ---- enumerations ---------------------------------------------------------- */

static struct MPI_ABI_T_enum cvar_enums[WEFT_TUNABLE_COUNT];

static MPI_T_enum cvar_enum(int id)
{
    struct MPI_ABI_T_enum *e = &cvar_enums[id];

    if (weft_tunable_descs[id].kind != WEFT_TKIND_ENUM) {
        return MPI_T_ENUM_NULL;
    }
    if (e->magic != MPIT_MAGIC_ENUM) {
        e->name       = weft_tunable_descs[id].name;
        e->count      = weft_tunables_enum_count(id);
        e->bar_values = weft_tunable_descs[id].values;
        e->magic      = MPIT_MAGIC_ENUM;
    }
    return e;
}

static int enum_valid(MPI_T_enum e)
{
    return e != MPI_T_ENUM_NULL && (uintptr_t)e >= 4096 && e->magic == MPIT_MAGIC_ENUM;
}

int weft_mpit_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    if (!enum_valid(enumtype)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (num == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num = enumtype->count;
    mpit_string_out(enumtype->name, name, name_len);
    return MPI_SUCCESS;
}

int weft_mpit_enum_get_item(MPI_T_enum enumtype, int indx, int *value, char *name, int *name_len)
{
    char item[128];

    if (!enum_valid(enumtype)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (indx < 0 || indx >= enumtype->count) {
        return MPI_T_ERR_INVALID_ITEM;
    }
    if (value == NULL) {
        return MPI_T_ERR_INVALID;
    }
    if (enumtype->items != NULL) {
        snprintf(item, sizeof(item), "%s", enumtype->items[indx]);
    } else {
        const char *p = enumtype->bar_values;
        for (int i = 0; i < indx; i++) {
            p = strchr(p, '|') + 1;
        }
        snprintf(item, sizeof(item), "%.*s", (int)strcspn(p, "|"), p);
    }
    *value = indx;
    mpit_string_out(item, name, name_len);
    return MPI_SUCCESS;
}

/* ---- control variables ----------------------------------------------------- */

/* MPI_T index -> tunables row; the launcher's rows are not control variables. */
static int cvar_rows[WEFT_TUNABLE_COUNT];
static int ncvars = -1;

static int cvar_count(void)
{
    if (ncvars < 0) {
        int n = 0;
        for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
            if (weft_tunable_descs[id].when != WEFT_TWHEN_LAUNCHER) {
                cvar_rows[n++] = id;
            }
        }
        ncvars = n;
    }
    return ncvars;
}

/* Control variables are bound to no object, so one handle per row serves
 * every allocation: nothing to leak, and a stale handle is never a dangling
 * pointer. */
struct MPI_ABI_T_cvar_handle {
    uint32_t magic;
    int      row;
};
static struct MPI_ABI_T_cvar_handle cvar_handles[WEFT_TUNABLE_COUNT];

static int cvar_scope(const char *scope)
{
    static const char *const names[] = {"CONSTANT", "READONLY", "LOCAL", "GROUP",
                                        "GROUP_EQ", "ALL", "ALL_EQ"};
    static const int         values[] = {MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY,
                                         MPI_T_SCOPE_LOCAL,    MPI_T_SCOPE_GROUP,
                                         MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,
                                         MPI_T_SCOPE_ALL_EQ};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        if (strcmp(scope, names[i]) == 0) {
            return values[i];
        }
    }
    return MPI_T_SCOPE_LOCAL;
}

static MPI_Datatype cvar_datatype(weft_tunable_kind_t kind)
{
    switch (kind) {
    case WEFT_TKIND_BOOL:
    case WEFT_TKIND_INT:
    case WEFT_TKIND_ENUM: return MPI_INT;
    case WEFT_TKIND_SIZE: return MPI_UNSIGNED_LONG;
    case WEFT_TKIND_STRING: return MPI_CHAR;
    }
    return MPI_INT;
}

int weft_mpit_cvar_get_num(int *num_cvar)
{
    if (num_cvar == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_cvar = cvar_count();
    return MPI_SUCCESS;
}

int weft_mpit_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                            MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                            int *bind, int *scope)
{
    char full[96];

    if (cvar_index < 0 || cvar_index >= cvar_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    const int                  row = cvar_rows[cvar_index];
    const weft_tunable_desc_t *d   = &weft_tunable_descs[row];

    snprintf(full, sizeof(full), "WEFT_%s", d->name);
    mpit_string_out(full, name, name_len);
    mpit_string_out(d->help, desc, desc_len);
    if (verbosity) *verbosity = mpit_verbosity(d->verbosity);
    if (datatype) *datatype = cvar_datatype(d->kind);
    if (enumtype) *enumtype = cvar_enum(row);
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (scope) *scope = cvar_scope(d->scope);
    return MPI_SUCCESS;
}

int weft_mpit_cvar_get_index(const char *name, int *cvar_index)
{
    if (name == NULL || cvar_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    for (int i = 0; i < cvar_count(); i++) {
        const char *n = weft_tunable_descs[cvar_rows[i]].name;
        if (strncmp(name, "WEFT_", 5) == 0 && strcmp(name + 5, n) == 0) {
            *cvar_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int weft_mpit_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle, int *count)
{
    (void)obj_handle; /* every control variable is bound to no object */
    if (cvar_index < 0 || cvar_index >= cvar_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (handle == NULL || count == NULL) {
        return MPI_T_ERR_INVALID;
    }
    struct MPI_ABI_T_cvar_handle *h = &cvar_handles[cvar_rows[cvar_index]];
    h->magic = MPIT_MAGIC_CVAR;
    h->row   = cvar_rows[cvar_index];
    *count   = weft_tunable_descs[h->row].kind == WEFT_TKIND_STRING ? MPIT_STRING_MAX : 1;
    *handle  = h;
    return MPI_SUCCESS;
}

static int cvar_handle_valid(MPI_T_cvar_handle h)
{
    return h >= cvar_handles && h < cvar_handles + WEFT_TUNABLE_COUNT && h->magic == MPIT_MAGIC_CVAR;
}

int weft_mpit_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    if (handle == NULL || !cvar_handle_valid(*handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    *handle = MPI_T_CVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

int weft_mpit_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    if (!cvar_handle_valid(handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return MPI_T_ERR_INVALID;
    }
    const weft_tunable_desc_t *d     = &weft_tunable_descs[handle->row];
    const char                *field = (const char *)&weft_tunables + d->offset;

    switch (d->kind) {
    case WEFT_TKIND_BOOL:
    case WEFT_TKIND_ENUM: memcpy(buf, field, sizeof(int)); break;
    case WEFT_TKIND_INT: {
        long v;
        memcpy(&v, field, sizeof(v));
        int iv = v > 0x7fffffffL ? 0x7fffffff : v < -0x7fffffffL - 1 ? -0x7fffffff - 1 : (int)v;
        memcpy(buf, &iv, sizeof(iv));
        break;
    }
    case WEFT_TKIND_SIZE: {
        size_t        v;
        unsigned long ul;
        memcpy(&v, field, sizeof(v));
        ul = (unsigned long)v;
        memcpy(buf, &ul, sizeof(ul));
        break;
    }
    case WEFT_TKIND_STRING: {
        const char *s;
        memcpy(&s, field, sizeof(s));
        snprintf(buf, MPIT_STRING_MAX, "%s", s ? s : "");
        break;
    }
    }
    return MPI_SUCCESS;
}

int weft_mpit_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    char text[MPIT_STRING_MAX + 1];
    char errbuf[512];

    if (!cvar_handle_valid(handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return MPI_T_ERR_INVALID;
    }
    const int                  row = handle->row;
    const weft_tunable_desc_t *d   = &weft_tunable_descs[row];

    if (d->when == WEFT_TWHEN_NEVER) {
        return MPI_T_ERR_CVAR_SET_NEVER;
    }
    if (d->when == WEFT_TWHEN_INIT &&
        (weft_runtime.state != WEFT_STATE_UNINITIALIZED || weft_runtime.core_up)) {
        return MPI_T_ERR_CVAR_SET_NOT_NOW; /* read once at start-up: too late */
    }
    switch (d->kind) {
    case WEFT_TKIND_BOOL: {
        int v;
        memcpy(&v, buf, sizeof(v));
        snprintf(text, sizeof(text), "%d", v != 0);
        break;
    }
    case WEFT_TKIND_INT: {
        int v;
        memcpy(&v, buf, sizeof(v));
        snprintf(text, sizeof(text), "%d", v);
        break;
    }
    case WEFT_TKIND_ENUM: {
        int    v;
        size_t n;
        memcpy(&v, buf, sizeof(v));
        const char *item = weft_tunables_enum_name(row, v, &n);
        if (item == NULL) {
            return MPI_T_ERR_INVALID; /* not a value of the enumeration */
        }
        snprintf(text, sizeof(text), "%.*s", (int)n, item);
        break;
    }
    case WEFT_TKIND_SIZE: {
        unsigned long v;
        memcpy(&v, buf, sizeof(v));
        snprintf(text, sizeof(text), "%lu", v);
        break;
    }
    case WEFT_TKIND_STRING:
        snprintf(text, sizeof(text), "%.*s", MPIT_STRING_MAX - 1, (const char *)buf);
        break;
    }
    if (weft_tunables_set(row, text, WEFT_TSOURCE_MPIT, errbuf, sizeof(errbuf)) != 0) {
        return MPI_T_ERR_INVALID;
    }
    if (row == WEFT_TUNABLE_ARG_CHECK && weft_runtime.state == WEFT_STATE_INITIALIZED) {
        weft_api_arg_check = weft_tunables.ARG_CHECK; /* the copy the entry points read */
    }
    return MPI_SUCCESS;
}

/* ---- categories ------------------------------------------------------------ */

static const struct {
    const char *module;
    const char *desc;
} category_descs[] = {
    {"CORE", "Core runtime: argument checks, waiting, the job report"},
    {"PT2PT", "Point-to-point messaging: protocols and matching queues"},
    {"SHM", "Shared-memory transport within a node"},
    {"NETMOD", "Network module (libfabric) and inter-node protocols"},
    {"COLL", "Collective operations: algorithm selection and use"},
    {"PMI", "Process-manager interface client"},
    {"RMA", "One-sided communication: windows and RMA operations"},
    {"IO", "MPI-IO: collective buffering and data sieving"},
};
#define NCATEGORY_MAX 32

static const char *categories[NCATEGORY_MAX];
static int         ncategories = -1;

static void add_category(const char *module)
{
    for (int i = 0; i < ncategories; i++) {
        if (strcmp(categories[i], module) == 0) {
            return;
        }
    }
    if (ncategories < NCATEGORY_MAX) {
        categories[ncategories++] = module;
    }
}

static int category_count(void)
{
    if (ncategories < 0) {
        ncategories = 0;
        for (size_t i = 0; i < sizeof(category_descs) / sizeof(category_descs[0]); i++) {
            add_category(category_descs[i].module);
        }
        for (int i = 0; i < cvar_count(); i++) {
            add_category(weft_tunable_descs[cvar_rows[i]].category);
        }
        for (int i = 0; i < mpit_pvar_num(); i++) {
            add_category(mpit_pvar_module(i));
        }
        for (int i = 0; i < mpit_event_num(); i++) {
            add_category(mpit_event_module(i));
        }
    }
    return ncategories;
}

const char *mpit_category_name(int cat, char *buf, size_t len)
{
    size_t i = 0;

    snprintf(buf, len, "weft_");
    for (const char *p = categories[cat]; *p && i + 6 < len; p++, i++) {
        buf[5 + i] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    }
    buf[5 + i] = '\0';
    return buf;
}

int weft_mpit_category_get_num(int *num_cat)
{
    if (num_cat == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_cat = category_count();
    return MPI_SUCCESS;
}

/* Members of category cat among n items whose module is module_of(i). */
static int members(int cat, int n, const char *(*module_of)(int), int len, int indices[])
{
    int found = 0;

    for (int i = 0; i < n; i++) {
        if (strcmp(module_of(i), categories[cat]) == 0) {
            if (indices != NULL && found < len) {
                indices[found] = i;
            }
            found++;
        }
    }
    return found;
}

static const char *cvar_module(int i)
{
    return weft_tunable_descs[cvar_rows[i]].category;
}

int weft_mpit_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                                int *num_cvars, int *num_pvars, int *num_categories)
{
    char        buf[64];
    const char *text = "Weft module";

    if (cat_index < 0 || cat_index >= category_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    for (size_t i = 0; i < sizeof(category_descs) / sizeof(category_descs[0]); i++) {
        if (strcmp(category_descs[i].module, categories[cat_index]) == 0) {
            text = category_descs[i].desc;
        }
    }
    mpit_string_out(mpit_category_name(cat_index, buf, sizeof(buf)), name, name_len);
    mpit_string_out(text, desc, desc_len);
    if (num_cvars) *num_cvars = members(cat_index, cvar_count(), cvar_module, 0, NULL);
    if (num_pvars) *num_pvars = members(cat_index, mpit_pvar_num(), mpit_pvar_module, 0, NULL);
    if (num_categories) *num_categories = 0; /* modules are flat */
    return MPI_SUCCESS;
}

int weft_mpit_category_get_num_events(int cat_index, int *num_events)
{
    if (cat_index < 0 || cat_index >= category_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (num_events == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_events = members(cat_index, mpit_event_num(), mpit_event_module, 0, NULL);
    return MPI_SUCCESS;
}

int weft_mpit_category_get_index(const char *name, int *cat_index)
{
    char buf[64];

    if (name == NULL || cat_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    for (int i = 0; i < category_count(); i++) {
        if (strcmp(name, mpit_category_name(i, buf, sizeof(buf))) == 0) {
            *cat_index = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

static int category_list(int cat_index, int len, int indices[], int n, const char *(*module_of)(int))
{
    if (cat_index < 0 || cat_index >= category_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (len < 0 || (len > 0 && indices == NULL)) {
        return MPI_T_ERR_INVALID;
    }
    (void)members(cat_index, n, module_of, len, indices);
    return MPI_SUCCESS;
}

int weft_mpit_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, cvar_count(), cvar_module);
}

int weft_mpit_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, mpit_pvar_num(), mpit_pvar_module);
}

int weft_mpit_category_get_events(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, mpit_event_num(), mpit_event_module);
}

int weft_mpit_category_get_categories(int cat_index, int len, int indices[])
{
    (void)indices; /* no sub-categories */
    if (cat_index < 0 || cat_index >= category_count()) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    return len < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}

int weft_mpit_category_changed(int *update_number)
{
    if (update_number == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *update_number = 0; /* variables are fixed at build time */
    return MPI_SUCCESS;
}
