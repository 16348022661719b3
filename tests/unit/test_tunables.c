/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The tunables table and its typed parsers: every default parses, sizes,
 * bools, enums, ints, environment precedence (WEFT_ beats MV2_), bad values.
 */
#include "util/tunables.h"

#include "unit_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The shipped default of WEFT_SMP_EAGERSIZE, parsed from the table itself
 * (the value is tuned by measurement; the test checks the loader, not it). */
static size_t default_eager(void)
{
    size_t v = 0;
    weft_parse_size(weft_tunable_descs[WEFT_TUNABLE_SMP_EAGERSIZE].default_value, &v);
    return v;
}

/* Every name that could set a row, so tests start from a clean environment. */
static void clear_env(void)
{
    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        const weft_tunable_desc_t *d = &weft_tunable_descs[id];
        char                       name[96];
        const char                *p = d->aliases;

        snprintf(name, sizeof(name), "WEFT_%s", d->name);
        unsetenv(name);
        while (*p != '\0') {
            size_t n = strcspn(p, ",");
            if (n < sizeof(name)) {
                memcpy(name, p, n);
                name[n] = '\0';
                unsetenv(name);
            }
            p += n + (p[n] == ',' ? 1 : 0);
        }
    }
}

static weft_tunable_id_t find(const char *name)
{
    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        if (strcmp(weft_tunable_descs[id].name, name) == 0) {
            return (weft_tunable_id_t)id;
        }
    }
    fprintf(stderr, "no tunable %s in the table\n", name);
    exit(1);
}

static void test_defaults(void)
{
    char errbuf[256];

    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        const weft_tunable_desc_t *d = &weft_tunable_descs[id];

        errbuf[0] = '\0';
        if (weft_tunables_set(id, d->default_value, WEFT_TSOURCE_DEFAULT, errbuf, sizeof(errbuf))
            != 0) {
            fprintf(stderr, "default of %s ('%s') does not parse: %s\n", d->name,
                    d->default_value, errbuf);
            failures++;
        }
        /* Metadata every row must carry (MPI_T needs it). */
        CHECK(d->help[0] != '\0');
        CHECK(d->category[0] != '\0');
        CHECK(strcmp(d->verbosity, "USER_BASIC") == 0 || strcmp(d->verbosity, "TUNER_BASIC") == 0
              || strcmp(d->verbosity, "TUNER_DETAIL") == 0);
        CHECK(strcmp(d->scope, "CONSTANT") == 0 || strcmp(d->scope, "READONLY") == 0
              || strcmp(d->scope, "LOCAL") == 0 || strcmp(d->scope, "GROUP") == 0
              || strcmp(d->scope, "GROUP_EQ") == 0 || strcmp(d->scope, "ALL") == 0
              || strcmp(d->scope, "ALL_EQ") == 0);
        /* Read-only scopes and read-only rows go together. */
        CHECK((strcmp(d->scope, "CONSTANT") == 0 || strcmp(d->scope, "READONLY") == 0)
              == (d->when == WEFT_TWHEN_NEVER));
        CHECK((strcmp(d->category, "LAUNCHER") == 0) == (d->when == WEFT_TWHEN_LAUNCHER));
        if (strstr(d->name, "_ALGORITHM") != NULL) {
            CHECK(d->kind == WEFT_TKIND_ENUM && strncmp(d->values, "auto|", 5) == 0);
        }
        CHECK((d->kind == WEFT_TKIND_ENUM) == (d->values[0] != '\0'));
        for (int j = 0; j < id; j++) {
            CHECK(strcmp(weft_tunable_descs[j].name, d->name) != 0);
        }
    }
    clear_env();
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    for (int id = 0; id < WEFT_TUNABLE_COUNT; id++) {
        CHECK(weft_tunables_source(id) == WEFT_TSOURCE_DEFAULT);
        CHECK(weft_tunables_origin(id) == NULL);
    }
    CHECK(weft_tunables.SMP_EAGERSIZE == default_eager());
}

static void test_size(void)
{
    static const struct {
        const char *text;
        size_t      value;
    } good[] = {
        {"0", 0},
        {"8192", 8192},
        {"16k", 16 << 10},
        {"16K", 16 << 10},
        {"16kb", 16 << 10},
        {"1m", 1 << 20},
        {"1M", 1 << 20},
        {"2g", (size_t)2 << 30},
        {"2GB", (size_t)2 << 30},
    };
    static const char *const bad[] = {
        "banana", "", "-1", "-16k", " 16", "16 k", "16q", "16kk", "k", "1.5m", "0x10",
        "99999999999999999999999",     /* overflows unsigned long long */
        "18446744073709551616",        /* 2^64 */
        "17179869184g",                /* 2^34 g = 2^64 */
        "18014398509481984k",          /* 2^54 k = 2^64 */
    };
    size_t v;

    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        v = 12345;
        if (weft_parse_size(good[i].text, &v) != 0 || v != good[i].value) {
            fprintf(stderr, "weft_parse_size(\"%s\") gave %zu, want %zu\n", good[i].text, v,
                    good[i].value);
            failures++;
        }
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        v = 12345;
        if (weft_parse_size(bad[i], &v) == 0 || v != 12345) {
            fprintf(stderr, "weft_parse_size(\"%s\") accepted (%zu)\n", bad[i], v);
            failures++;
        }
    }
    CHECK(weft_parse_size("18446744073709551615", &v) == 0 && v == SIZE_MAX);
}

static void test_bool_long_enum(void)
{
    static const char *const yes[] = {"1", "yes", "YES", "true", "True", "on", "y"};
    static const char *const no[]  = {"0", "no", "false", "OFF", "n"};
    static const char *const bad[] = {"", "2", "maybe", "yess", "-1", "o"};
    int                      b, idx;
    long                     l;

    for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
        b = -1;
        CHECK(weft_parse_bool(yes[i], &b) == 0 && b == 1);
    }
    for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
        b = -1;
        CHECK(weft_parse_bool(no[i], &b) == 0 && b == 0);
    }
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        b = -1;
        if (weft_parse_bool(bad[i], &b) == 0 || b != -1) {
            fprintf(stderr, "weft_parse_bool(\"%s\") accepted\n", bad[i]);
            failures++;
        }
    }

    CHECK(weft_parse_long("32", &l) == 0 && l == 32);
    CHECK(weft_parse_long("-7", &l) == 0 && l == -7);
    CHECK(weft_parse_long("0x10", &l) == 0 && l == 16);
    CHECK(weft_parse_long("", &l) != 0);
    CHECK(weft_parse_long("12abc", &l) != 0);
    CHECK(weft_parse_long("banana", &l) != 0);
    CHECK(weft_parse_long("99999999999999999999999", &l) != 0);

    CHECK(weft_parse_enum("bunch", "bunch|scatter|none", &idx) == 0 && idx == 0);
    CHECK(weft_parse_enum("scatter", "bunch|scatter|none", &idx) == 0 && idx == 1);
    CHECK(weft_parse_enum("NONE", "bunch|scatter|none", &idx) == 0 && idx == 2);
    CHECK(weft_parse_enum("scat", "bunch|scatter|none", &idx) != 0);
    CHECK(weft_parse_enum("scatterx", "bunch|scatter|none", &idx) != 0);
    CHECK(weft_parse_enum("", "bunch|scatter|none", &idx) != 0);
    CHECK(weft_parse_enum("bunch|scatter", "bunch|scatter|none", &idx) != 0);
}

static void test_env(void)
{
    weft_tunable_id_t eager  = find("SMP_EAGERSIZE");
    weft_tunable_id_t policy = find("CPU_BINDING_POLICY");
    weft_tunable_id_t cma    = find("SMP_USE_CMA");
    char              errbuf[256], buf[64];

    /* An alias alone sets the value and is reported as the origin. */
    clear_env();
    setenv("MV2_SMP_EAGERSIZE", "32k", 1);
    setenv("MV2_CPU_BINDING_POLICY", "scatter", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SMP_EAGERSIZE == 32 * 1024);
    CHECK(weft_tunables_source(eager) == WEFT_TSOURCE_ALIAS_ENV);
    CHECK(weft_tunables_origin(eager) && strcmp(weft_tunables_origin(eager), "MV2_SMP_EAGERSIZE") == 0);
    CHECK(weft_tunables.CPU_BINDING_POLICY == 1);
    weft_tunables_format(policy, buf, sizeof(buf));
    CHECK(strcmp(buf, "scatter") == 0);
    weft_tunables_format(eager, buf, sizeof(buf));
    CHECK(strcmp(buf, "32768") == 0);

    /* WEFT_ beats the MV2_ alias whatever the order they were set in. */
    setenv("WEFT_SMP_EAGERSIZE", "64k", 1);
    setenv("WEFT_SMP_USE_CMA", "off", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SMP_EAGERSIZE == 64 * 1024);
    CHECK(weft_tunables_source(eager) == WEFT_TSOURCE_ENV);
    CHECK(weft_tunables_origin(eager) && strcmp(weft_tunables_origin(eager), "WEFT_SMP_EAGERSIZE") == 0);
    CHECK(weft_tunables.SMP_USE_CMA == 0);
    CHECK(weft_tunables_source(cma) == WEFT_TSOURCE_ENV);

    /* Reload after unsetting returns to the default (the loader is idempotent). */
    clear_env();
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SMP_EAGERSIZE == default_eager());
    CHECK(weft_tunables_source(eager) == WEFT_TSOURCE_DEFAULT);
    CHECK(weft_tunables.CPU_BINDING_POLICY == 0);

    /* STRING rows keep their text; reloading frees the old copy. */
    setenv("WEFT_CPU_MAPPING", "0:1:4:5", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.CPU_MAPPING && strcmp(weft_tunables.CPU_MAPPING, "0:1:4:5") == 0);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.CPU_MAPPING && strcmp(weft_tunables.CPU_MAPPING, "0:1:4:5") == 0);
    clear_env();
}

static void test_bad_values(void)
{
    static const struct {
        const char *var;
        const char *text;
        const char *form; /* part of the accepted-form text */
    } cases[] = {
        {"WEFT_SMP_EAGERSIZE", "banana", "size"},
        {"WEFT_SMP_EAGERSIZE", "-1", "size"},
        {"MV2_SMP_EAGERSIZE", "lots", "size"},
        {"WEFT_ENABLE_AFFINITY", "maybe", "boolean"},
        {"WEFT_CPU_BINDING_POLICY", "diagonal", "bunch|scatter|none"},
        {"MV2_CPU_BINDING_LEVEL", "rack", "core|socket|numanode"},
        {"WEFT_MT_DEGREE", "many", "integer"},
    };
    char errbuf[256];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        clear_env();
        setenv(cases[i].var, cases[i].text, 1);
        errbuf[0] = '\0';
        if (weft_tunables_load(errbuf, sizeof(errbuf)) != -1) {
            fprintf(stderr, "%s=%s was accepted\n", cases[i].var, cases[i].text);
            failures++;
            continue;
        }
        if (strstr(errbuf, cases[i].var) == NULL || strstr(errbuf, cases[i].text) == NULL
            || strstr(errbuf, cases[i].form) == NULL || strchr(errbuf, '\n') != NULL) {
            fprintf(stderr, "%s=%s: message '%s' should name the variable, the value and '%s' "
                            "on one line\n",
                    cases[i].var, cases[i].text, errbuf, cases[i].form);
            failures++;
        }
    }

    /* The first bad variable is reported; the other rows still load. */
    clear_env();
    setenv("WEFT_SMP_EAGERSIZE", "banana", 1);
    setenv("WEFT_SPIN_COUNT", "77", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == -1);
    CHECK(weft_tunables.SPIN_COUNT == 77);
    CHECK(weft_tunables.SMP_EAGERSIZE == default_eager());

    /* A bad value must not be hidden by a good alias: WEFT_ wins, so it fails. */
    clear_env();
    setenv("MV2_SMP_EAGERSIZE", "32k", 1);
    setenv("WEFT_SMP_EAGERSIZE", "banana", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == -1);
    CHECK(strstr(errbuf, "WEFT_SMP_EAGERSIZE") != NULL);
    clear_env();
}


/* A row written through MPI_T keeps its value when the table is loaded again
 * (MPI_Init after MPI_T_init_thread), even against the environment. */
static void test_mpit_write_survives_load(void)
{
    char errbuf[256];

    clear_env();
    setenv("WEFT_SMP_EAGERSIZE", "16k", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SMP_EAGERSIZE == 16384);
    CHECK(weft_tunables_set(WEFT_TUNABLE_SMP_EAGERSIZE, "64", WEFT_TSOURCE_MPIT, errbuf,
                            sizeof(errbuf)) == 0);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SMP_EAGERSIZE == 64);
    CHECK(weft_tunables_source(WEFT_TUNABLE_SMP_EAGERSIZE) == WEFT_TSOURCE_MPIT);
    /* Other rows still follow the environment. */
    setenv("WEFT_SPIN_COUNT", "77", 1);
    CHECK(weft_tunables_load(errbuf, sizeof(errbuf)) == 0);
    CHECK(weft_tunables.SPIN_COUNT == 77);
    clear_env();
    /* Back to a clean table for later tests: a default write is not an MPI_T write. */
    CHECK(weft_tunables_set(WEFT_TUNABLE_SMP_EAGERSIZE, "8k", WEFT_TSOURCE_DEFAULT, errbuf,
                            sizeof(errbuf)) == 0);
}

static void test_enum_helpers(void)
{
    size_t      n;
    const char *item;

    CHECK(weft_tunables_find("BCAST_ALGORITHM") == WEFT_TUNABLE_BCAST_ALGORITHM);
    CHECK(weft_tunables_find("NO_SUCH_ROW") == -1);
    CHECK(weft_tunables_enum_count(WEFT_TUNABLE_CPU_BINDING_LEVEL) == 3);
    CHECK(weft_tunables_enum_count(WEFT_TUNABLE_SMP_EAGERSIZE) == 0);
    item = weft_tunables_enum_name(WEFT_TUNABLE_CPU_BINDING_LEVEL, 2, &n);
    CHECK(item != NULL && n == 8 && strncmp(item, "numanode", n) == 0);
    CHECK(weft_tunables_enum_name(WEFT_TUNABLE_CPU_BINDING_LEVEL, 3, &n) == NULL);
    item = weft_tunables_enum_name(WEFT_TUNABLE_BCAST_ALGORITHM, 1, &n);
    CHECK(item != NULL && strncmp(item, "binomial", n) == 0);
}

static int  nwarned;
static char warned_closest[4][96];

static void collect_warning(const char *name, const char *closest, void *arg)
{
    (void)name;
    (void)arg;
    if (nwarned < 4) {
        snprintf(warned_closest[nwarned], sizeof(warned_closest[0]), "%s", closest);
    }
    nwarned++;
}

static void test_unknown_env(void)
{
    char *env[] = {"WEFT_SMP_EAGERSZE=4k",      "MV2_SMP_USE_CAM=0", "WEFT_SMP_EAGERSIZE=1k",
                   "MV2_SMPI_LENGTH_QUEUE=64k", "WEFT_TEST_QUICK=1", "WEFT_PREFIX=/x",
                   "WEFT_PEER_MPICH_PREFIX=/y", "PATH=/bin",         NULL};

    nwarned = 0;
    CHECK(weft_tunables_check_env(env, collect_warning, NULL) == 2);
    CHECK(nwarned == 2);
    CHECK(strcmp(warned_closest[0], "WEFT_SMP_EAGERSIZE") == 0);
    CHECK(strcmp(warned_closest[1], "MV2_SMP_USE_CMA") == 0);
}

int main(void)
{
    test_defaults();
    test_size();
    test_bool_long_enum();
    test_env();
    test_bad_values();
    test_mpit_write_survives_load();
    test_enum_helpers();
    test_unknown_env();
    if (failures != 0) {
        fprintf(stderr, "test_tunables: %d check(s) failed\n", failures);
        return 1;
    }
    printf("test_tunables: ok (%d tunables)\n", (int)WEFT_TUNABLE_COUNT);
    return 0;
}
