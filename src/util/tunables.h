/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The tunables table (tunables.def) expanded into a typed struct, a descriptor
 * array and a loader. Everything that reads a knob reads weft_tunables.NAME
 * after weft_tunables_load(); nothing re-reads the environment later.
 */
#ifndef WEFT_UTIL_TUNABLES_H
#define WEFT_UTIL_TUNABLES_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    WEFT_TKIND_BOOL,
    WEFT_TKIND_INT,
    WEFT_TKIND_SIZE,
    WEFT_TKIND_STRING,
    WEFT_TKIND_ENUM
} weft_tunable_kind_t;

/* When a write of a row can take effect (the WHEN column). */
typedef enum {
    WEFT_TWHEN_NEVER,   /* read-only */
    WEFT_TWHEN_INIT,    /* before MPI_Init (or the first session) only */
    WEFT_TWHEN_ANYTIME,
    WEFT_TWHEN_LAUNCHER /* read by the launcher only; not an MPI_T control variable */
} weft_tunable_when_t;

/* Where the current value of a row came from. */
typedef enum {
    WEFT_TSOURCE_DEFAULT,
    WEFT_TSOURCE_ALIAS_ENV, /* an MV2_* alias */
    WEFT_TSOURCE_ENV,       /* WEFT_<NAME> */
    WEFT_TSOURCE_MPIT       /* written through MPI_T */
} weft_tunable_source_t;

#define WEFT_TUNABLE_CTYPE_BOOL   int
#define WEFT_TUNABLE_CTYPE_INT    long
#define WEFT_TUNABLE_CTYPE_SIZE   size_t
#define WEFT_TUNABLE_CTYPE_STRING const char *
#define WEFT_TUNABLE_CTYPE_ENUM   int

typedef enum {
#define WEFT_TUNABLE(_name, _kind, _def, _values, _cat, _verb, _scope, _when, _aliases, _help) \
    WEFT_TUNABLE_##_name,
#include "tunables.def"
#undef WEFT_TUNABLE
    WEFT_TUNABLE_COUNT
} weft_tunable_id_t;

struct weft_tunables {
#define WEFT_TUNABLE(_name, _kind, _def, _values, _cat, _verb, _scope, _when, _aliases, _help) \
    WEFT_TUNABLE_CTYPE_##_kind _name;
#include "tunables.def"
#undef WEFT_TUNABLE
};

typedef struct {
    const char          *name;      /* without the WEFT_ prefix */
    weft_tunable_kind_t  kind;
    const char          *default_value;
    const char          *values;    /* ENUM value names "a|b|c", else "" */
    const char          *category;
    const char          *verbosity;
    const char          *scope;     /* MPI_T scope name without MPI_T_SCOPE_ */
    weft_tunable_when_t  when;
    const char          *aliases;   /* comma-separated, may be "" */
    const char          *help;
    size_t               offset;    /* of the field in struct weft_tunables */
} weft_tunable_desc_t;

extern struct weft_tunables      weft_tunables;
extern const weft_tunable_desc_t weft_tunable_descs[WEFT_TUNABLE_COUNT];

/* Load defaults, then MV2_* aliases, then WEFT_* names, from the environment.
 * On a bad value returns -1 and writes a one-line message naming the variable
 * and the accepted form into errbuf; values already parsed stay set.
 * A second call re-reads the environment, except for rows written through
 * MPI_T (source WEFT_TSOURCE_MPIT), which keep their value. */
int weft_tunables_load(char *errbuf, size_t errlen);

/* Source of the current value of row id. */
weft_tunable_source_t weft_tunables_source(weft_tunable_id_t id);

/* The env variable that set the row ("WEFT_X", an alias, or NULL for default). */
const char *weft_tunables_origin(weft_tunable_id_t id);

/* Parse text as a value of row id's kind into the live table (used by the
 * loader and MPI_T cvar writes). Returns 0, or -1 with a message in errbuf. */
int weft_tunables_set(weft_tunable_id_t id, const char *text, weft_tunable_source_t source,
                      char *errbuf, size_t errlen);

/* Format the current value of row id as text ("16384", "bunch", "1"). */
void weft_tunables_format(weft_tunable_id_t id, char *buf, size_t len);

/* Id of the row named name (without WEFT_), or -1. */
int weft_tunables_find(const char *name);

/* Name of enum value index of row id ("bunch"), or NULL when out of range. */
const char *weft_tunables_enum_name(weft_tunable_id_t id, int index, size_t *len_p);

/* Number of values of an ENUM row (0 for other kinds). */
int weft_tunables_enum_count(weft_tunable_id_t id);

/* Unknown WEFT_* / MV2_* variables in env (NULL: the process environment):
 * calls warn(name, closest, arg) for each one no row (or alias) knows, with
 * the closest known name. Names the launcher and the test tools set are
 * skipped. Returns the number found. */
int weft_tunables_check_env(char **env, void (*warn)(const char *name, const char *closest, void *arg),
                            void *arg);

/* Typed parsers, also used by tests. Return 0 on success, -1 on bad text. */
int weft_parse_size(const char *text, size_t *value_p);
int weft_parse_long(const char *text, long *value_p);
int weft_parse_bool(const char *text, int *value_p);
int weft_parse_enum(const char *text, const char *values, int *index_p);

#endif
