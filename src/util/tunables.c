/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "tunables.h"

#include "weft_coll_alg_values.h" /* VALUES of the *_ALGORITHM rows */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct weft_tunables weft_tunables;

const weft_tunable_desc_t weft_tunable_descs[WEFT_TUNABLE_COUNT] = {
#define WEFT_TUNABLE(_name, _kind, _def, _values, _cat, _verb, _scope, _when, _aliases, _help) \
    {#_name,   WEFT_TKIND_##_kind, _def,   _values, #_cat,                                      \
     #_verb,   #_scope,            WEFT_TWHEN_##_when, _aliases, _help,                         \
     offsetof(struct weft_tunables, _name)},
#include "tunables.def"
#undef WEFT_TUNABLE
};

static weft_tunable_source_t tunable_sources[WEFT_TUNABLE_COUNT];
static const char           *tunable_origins[WEFT_TUNABLE_COUNT];
/* STRING values own their storage; keep it per row so reloads do not leak. */
static char                 *tunable_strings[WEFT_TUNABLE_COUNT];

int weft_parse_long(const char *text, long *value_p)
{
    char *end;
    long  value;

    errno = 0;
    value = strtol(text, &end, 0);
    if (errno != 0 || end == text || *end != '\0') {
        return -1;
    }
    *value_p = value;
    return 0;
}

int weft_parse_size(const char *text, size_t *value_p)
{
    char              *end;
    unsigned long long value;
    unsigned long long scale = 1;

    if (text[0] == '-' || !isdigit((unsigned char)text[0])) {
        return -1;
    }
    errno = 0;
    value = strtoull(text, &end, 10);
    if (errno != 0 || end == text) {
        return -1;
    }
    switch (tolower((unsigned char)*end)) {
    case '\0': break;
    case 'b': break; /* plain bytes, "4096b" */
    case 'k': scale = 1ull << 10; end++; break;
    case 'm': scale = 1ull << 20; end++; break;
    case 'g': scale = 1ull << 30; end++; break;
    default: return -1;
    }
    if (*end == 'b' || *end == 'B') {
        end++;
    }
    if (*end != '\0' || value > (~0ull) / scale) {
        return -1;
    }
    *value_p = (size_t)(value * scale);
    return 0;
}

int weft_parse_bool(const char *text, int *value_p)
{
    static const char *const yes[] = {"1", "yes", "true", "on", "y"};
    static const char *const no[]  = {"0", "no", "false", "off", "n"};

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        if (strcasecmp(text, yes[i]) == 0) {
            *value_p = 1;
            return 0;
        }
        if (strcasecmp(text, no[i]) == 0) {
            *value_p = 0;
            return 0;
        }
    }
    return -1;
}

int weft_parse_enum(const char *text, const char *values, int *index_p)
{
    size_t      len   = strlen(text);
    int         index = 0;
    const char *p     = values;

    while (*p != '\0') {
        const char *bar = strchr(p, '|');
        size_t      n   = bar ? (size_t)(bar - p) : strlen(p);

        if (n == len && strncasecmp(p, text, n) == 0) {
            *index_p = index;
            return 0;
        }
        index++;
        p += n + (bar ? 1 : 0);
    }
    return -1;
}

static const char *kind_form(const weft_tunable_desc_t *desc, char *buf, size_t len)
{
    switch (desc->kind) {
    case WEFT_TKIND_BOOL: return "a boolean (0/1, yes/no, true/false, on/off)";
    case WEFT_TKIND_INT: return "an integer";
    case WEFT_TKIND_SIZE: return "a size in bytes (e.g. 8192, 16k, 1m, 2g)";
    case WEFT_TKIND_STRING: return "a string";
    case WEFT_TKIND_ENUM: snprintf(buf, len, "one of %s", desc->values); return buf;
    }
    return "?";
}

int weft_tunables_set(weft_tunable_id_t id, const char *text, weft_tunable_source_t source,
                      char *errbuf, size_t errlen)
{
    const weft_tunable_desc_t *desc  = &weft_tunable_descs[id];
    char                      *field = (char *)&weft_tunables + desc->offset;
    int                        rc    = 0;
    char                       form[256];

    switch (desc->kind) {
    case WEFT_TKIND_BOOL: {
        int v;
        rc = weft_parse_bool(text, &v);
        if (rc == 0) memcpy(field, &v, sizeof(v));
        break;
    }
    case WEFT_TKIND_INT: {
        long v;
        rc = weft_parse_long(text, &v);
        if (rc == 0) memcpy(field, &v, sizeof(v));
        break;
    }
    case WEFT_TKIND_SIZE: {
        size_t v;
        rc = weft_parse_size(text, &v);
        if (rc == 0) memcpy(field, &v, sizeof(v));
        break;
    }
    case WEFT_TKIND_ENUM: {
        int v;
        rc = weft_parse_enum(text, desc->values, &v);
        if (rc == 0) memcpy(field, &v, sizeof(v));
        break;
    }
    case WEFT_TKIND_STRING: {
        char *copy = strdup(text);
        if (copy == NULL) {
            snprintf(errbuf, errlen, "out of memory storing WEFT_%s", desc->name);
            return -1;
        }
        free(tunable_strings[id]);
        tunable_strings[id] = copy;
        memcpy(field, &tunable_strings[id], sizeof(char *));
        break;
    }
    }
    if (rc != 0) {
        snprintf(errbuf, errlen, "invalid value '%s' for %s: expected %s", text,
                 tunable_origins[id] && source != WEFT_TSOURCE_DEFAULT ? tunable_origins[id]
                                                                        : desc->name,
                 kind_form(desc, form, sizeof(form)));
        return -1;
    }
    tunable_sources[id] = source;
    return 0;
}

weft_tunable_source_t weft_tunables_source(weft_tunable_id_t id)
{
    return tunable_sources[id];
}

const char *weft_tunables_origin(weft_tunable_id_t id)
{
    return tunable_origins[id];
}

void weft_tunables_format(weft_tunable_id_t id, char *buf, size_t len)
{
    const weft_tunable_desc_t *desc  = &weft_tunable_descs[id];
    const char                *field = (const char *)&weft_tunables + desc->offset;

    switch (desc->kind) {
    case WEFT_TKIND_BOOL: {
        int v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, "%d", v);
        break;
    }
    case WEFT_TKIND_INT: {
        long v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, "%ld", v);
        break;
    }
    case WEFT_TKIND_SIZE: {
        size_t v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, "%zu", v);
        break;
    }
    case WEFT_TKIND_STRING: {
        const char *v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, "%s", v ? v : "");
        break;
    }
    case WEFT_TKIND_ENUM: {
        int         v, i = 0;
        const char *p = desc->values;
        memcpy(&v, field, sizeof(v));
        while (i < v && (p = strchr(p, '|')) != NULL) {
            p++;
            i++;
        }
        if (p == NULL) {
            snprintf(buf, len, "%d", v);
        } else {
            snprintf(buf, len, "%.*s", (int)strcspn(p, "|"), p);
        }
        break;
    }
    }
}

int weft_tunables_load(char *errbuf, size_t errlen)
{
    static char env_names[WEFT_TUNABLE_COUNT][64];
    int         rc = 0;

    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        const weft_tunable_desc_t *desc  = &weft_tunable_descs[id];
        const char                *text  = NULL;
        weft_tunable_source_t      src   = WEFT_TSOURCE_DEFAULT;
        char                       alias[64];
        const char                *p     = desc->aliases;

        if (tunable_sources[id] == WEFT_TSOURCE_MPIT) {
            continue; /* written through MPI_T before init: that write stands */
        }
        tunable_origins[id] = NULL;
        if (weft_tunables_set(id, desc->default_value, WEFT_TSOURCE_DEFAULT, errbuf, errlen) != 0) {
            return -1; /* a bad default is a build bug; the unit test catches it */
        }
        /* The primary WEFT_ name wins over any MV2_ alias. */
        while (*p != '\0') {
            size_t n = strcspn(p, ",");
            if (n < sizeof(alias)) {
                memcpy(alias, p, n);
                alias[n] = '\0';
                if (text == NULL && getenv(alias) != NULL) {
                    text = getenv(alias);
                    src  = WEFT_TSOURCE_ALIAS_ENV;
                    snprintf(env_names[id], sizeof(env_names[id]), "%s", alias);
                }
            }
            p += n + (p[n] == ',' ? 1 : 0);
        }
        snprintf(alias, sizeof(alias), "WEFT_%s", desc->name);
        if (getenv(alias) != NULL) {
            text = getenv(alias);
            src  = WEFT_TSOURCE_ENV;
            snprintf(env_names[id], sizeof(env_names[id]), "%s", alias);
        }
        if (text != NULL) {
            tunable_origins[id] = env_names[id];
            if (rc == 0 && weft_tunables_set(id, text, src, errbuf, errlen) != 0) {
                rc = -1; /* report the first bad variable, keep loading the rest */
            }
        }
    }
    return rc;
}

int weft_tunables_find(const char *name)
{
    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        if (strcmp(weft_tunable_descs[id].name, name) == 0) {
            return id;
        }
    }
    return -1;
}

const char *weft_tunables_enum_name(weft_tunable_id_t id, int index, size_t *len_p)
{
    const char *p = weft_tunable_descs[id].values;

    if (weft_tunable_descs[id].kind != WEFT_TKIND_ENUM || index < 0) {
        return NULL;
    }
    for (int i = 0; i < index; i++) {
        p = strchr(p, '|');
        if (p == NULL) {
            return NULL;
        }
        p++;
    }
    *len_p = strcspn(p, "|");
    return p;
}

int weft_tunables_enum_count(weft_tunable_id_t id)
{
    const char *p = weft_tunable_descs[id].values;
    int         n = 1;

    if (weft_tunable_descs[id].kind != WEFT_TKIND_ENUM) {
        return 0;
    }
    while ((p = strchr(p, '|')) != NULL) {
        p++;
        n++;
    }
    return n;
}

/* Edit distance of a and b (case-insensitive), for "did you mean". */
static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[128];

    if (lb >= sizeof(row) / sizeof(row[0])) {
        return (size_t)-1;
    }
    for (size_t j = 0; j <= lb; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0]      = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up   = row[j];
            size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
            size_t best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag   = up;
        }
    }
    return row[lb];
}

/* Calls f(name, arg) for every name a row answers to; stops when f returns nonzero. */
static int each_known_name(int (*f)(const char *name, void *arg), void *arg)
{
    char name[96];

    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        const char *p = weft_tunable_descs[id].aliases;

        snprintf(name, sizeof(name), "WEFT_%s", weft_tunable_descs[id].name);
        if (f(name, arg)) {
            return 1;
        }
        while (*p != '\0') {
            size_t n = strcspn(p, ",");
            if (n < sizeof(name)) {
                memcpy(name, p, n);
                name[n] = '\0';
                if (f(name, arg)) {
                    return 1;
                }
            }
            p += n + (p[n] == ',' ? 1 : 0);
        }
    }
    return 0;
}

typedef struct {
    const char *name;
    size_t      best;
    char        closest[96];
} closest_search_t;

static int is_name(const char *known, void *arg)
{
    return strcmp(known, ((closest_search_t *)arg)->name) == 0;
}

static int nearer(const char *known, void *arg)
{
    closest_search_t *s = arg;
    size_t            d = edit_distance(s->name, known);

    if (d < s->best) {
        s->best = d;
        snprintf(s->closest, sizeof(s->closest), "%s", known);
    }
    return 0;
}

int weft_tunables_check_env(char **env, void (*warn)(const char *name, const char *closest, void *arg),
                            void *arg)
{
    /* Read by the compiler wrappers, the test harness and weft-bench, not by
     * the library (a trailing '_' is a prefix). */
    static const char *const not_knobs[] = {"WEFT_PREFIX", "WEFT_BUILD", "WEFT_BUILD_DIR",
                                            "WEFT_CC", "WEFT_CXX", "WEFT_SKIP_MPI4PY",
                                            "WEFT_TEST_", "WEFT_MPI4PY_", "WEFT_BENCH_",
                                            "WEFT_PEER_"};
    extern char **environ;
    int           found = 0;

    for (char **e = env ? env : environ; *e != NULL; e++) {
        closest_search_t s;
        char             name[96];
        size_t           n = strcspn(*e, "=");
        int              skip = 0;

        if (n >= sizeof(name) || (strncmp(*e, "WEFT_", 5) != 0 && strncmp(*e, "MV2_", 4) != 0)) {
            continue;
        }
        memcpy(name, *e, n);
        name[n] = '\0';
        for (size_t i = 0; i < sizeof(not_knobs) / sizeof(not_knobs[0]); i++) {
            size_t len = strlen(not_knobs[i]);
            skip |= not_knobs[i][len - 1] == '_' ? strncmp(name, not_knobs[i], len) == 0
                                                 : strcmp(name, not_knobs[i]) == 0;
        }
        s.name = name;
        if (skip || each_known_name(is_name, &s)) {
            continue;
        }
        s.best       = (size_t)-1;
        s.closest[0] = '\0';
        each_known_name(nearer, &s);
        warn(name, s.closest, arg);
        found++;
    }
    return found;
}
