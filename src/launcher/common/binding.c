/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "binding.h"

#include <hwloc.h>

#include "util/hwloc_init.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parse one CPU list "0,2-4" into set (may be NULL for a syntax check). */
static int parse_cpu_list(const char *s, size_t n, hwloc_bitmap_t set)
{
    const char *end = s + n;

    if (n == 0) {
        return -1;
    }
    while (s < end) {
        char *e;
        long  lo = strtol(s, &e, 10), hi;
        if (e == s || lo < 0 || lo > 65535) {
            return -1;
        }
        hi = lo;
        s  = e;
        if (s < end && *s == '-') {
            hi = strtol(s + 1, &e, 10);
            if (e == s + 1 || hi < lo || hi > 65535) {
                return -1;
            }
            s = e;
        }
        if (set != NULL) {
            hwloc_bitmap_set_range(set, (unsigned)lo, (int)hi);
        }
        if (s < end) {
            if (*s != ',') {
                return -1;
            }
            s++;
            if (s == end) {
                return -1;
            }
        }
    }
    return 0;
}

int weft_binding_check_mapping(const char *mapping, char *err, size_t errlen)
{
    const char *p     = mapping;
    int         entry = 0;

    for (;;) {
        size_t n = strcspn(p, ":");
        if (parse_cpu_list(p, n, NULL) != 0) {
            snprintf(err, errlen,
                     "invalid CPU mapping '%s': entry %d ('%.*s') is not a CPU list like 0,2-4 "
                     "(entries are separated by ':')",
                     mapping, entry, (int)n, p);
            return -1;
        }
        entry++;
        if (p[n] == '\0') {
            return 0;
        }
        p += n + 1;
    }
}

static void plan_set_text(weft_binding_plan_t *plan, int i, hwloc_const_bitmap_t set)
{
    char buf[1024];

    hwloc_bitmap_list_snprintf(buf, sizeof(buf), set);
    plan->text[i] = strdup(buf);
}

static void plan_store(weft_binding_plan_t *plan, int i, hwloc_const_bitmap_t set, int bound)
{
    int cpu;

    CPU_ZERO(&plan->sets[i]);
    hwloc_bitmap_foreach_begin(cpu, set)
    {
        if (cpu < CPU_SETSIZE) {
            CPU_SET(cpu, &plan->sets[i]);
        }
    }
    hwloc_bitmap_foreach_end();
    plan->bound[i] = bound;
    plan_set_text(plan, i, set);
}

/* The plans that bind nothing and need no topology: binding off, or (with
 * no explicit mapping) more local ranks than CPUs we may run on, so more
 * than cores. Every rank keeps our CPUs (sched_getaffinity: a
 * taskset/cgroup restriction of mpirun is kept). 0 when planned, 1 when the
 * topology is needed. */
static int plan_unbound_without_topology(const weft_binding_conf_t *conf, int nlocal,
                                         weft_binding_plan_t *plan)
{
    cpu_set_t      mine;
    hwloc_bitmap_t set;
    int            off = !conf->enable || conf->policy == WEFT_BIND_NONE, ncpus;

    if (sched_getaffinity(0, sizeof(mine), &mine) != 0) {
        return 1;
    }
    ncpus = CPU_COUNT(&mine);
    if (!off && (conf->mapping[0] != '\0' || nlocal <= ncpus)) {
        return 1;
    }
    set = hwloc_bitmap_alloc();
    if (set == NULL) {
        return 1;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &mine)) {
            hwloc_bitmap_set(set, (unsigned)cpu);
        }
    }
    if (off) {
        snprintf(plan->note, sizeof(plan->note), "CPU binding disabled (%s)",
                 conf->enable ? "policy none" : "affinity off");
    } else {
        snprintf(plan->note, sizeof(plan->note),
                 "CPU binding disabled: %d local ranks on %d CPUs (oversubscribed)", nlocal,
                 ncpus);
    }
    for (int i = 0; i < nlocal; i++) {
        plan_store(plan, i, set, 0);
    }
    hwloc_bitmap_free(set);
    return 0;
}

int weft_binding_plan(const weft_binding_conf_t *conf, int nlocal, weft_binding_plan_t *plan,
                      char *err, size_t errlen)
{
    hwloc_topology_t     topo;
    hwloc_const_bitmap_t allowed;
    hwloc_bitmap_t       set;
    int                  rc = -1, ncores, nobj;
    hwloc_obj_type_t     type;

    memset(plan, 0, sizeof(*plan));
    plan->nlocal = nlocal;
    plan->bound  = calloc((size_t)nlocal, sizeof(int));
    plan->sets   = calloc((size_t)nlocal, sizeof(cpu_set_t));
    plan->text   = calloc((size_t)nlocal, sizeof(char *));
    if (!plan->bound || !plan->sets || !plan->text) {
        snprintf(err, errlen, "out of memory planning CPU binding");
        return -1;
    }
    /* Startup cost: the topology (0.9 ms for the first load in a process on
     * the 2-core VM) is loaded only when the plan binds something, which
     * needs the cores. Binding off, or more ranks than this process may run
     * on CPUs, leaves every rank on those CPUs: no topology needed. */
    if (plan_unbound_without_topology(conf, nlocal, plan) == 0) {
        return 0;
    }
    /* The plan needs packages, NUMA nodes, cores and PUs only
     * (util/hwloc_init.h says what else is left out, and why). */
    if (weft_hwloc_topology_init(&topo) != 0) {
        snprintf(err, errlen, "hwloc could not load the node topology");
        return -1;
    }
    hwloc_topology_set_cache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    hwloc_topology_set_icache_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
    if (hwloc_topology_load(topo) != 0) {
        snprintf(err, errlen, "hwloc could not load the node topology");
        return -1;
    }
    allowed = hwloc_topology_get_allowed_cpuset(topo);
    set     = hwloc_bitmap_alloc();
    ncores  = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE);
    if (ncores <= 0) {
        ncores = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU);
    }

    if (!conf->enable || conf->policy == WEFT_BIND_NONE) {
        snprintf(plan->note, sizeof(plan->note), "CPU binding disabled (%s)",
                 conf->enable ? "policy none" : "affinity off");
        for (int i = 0; i < nlocal; i++) {
            plan_store(plan, i, allowed, 0);
        }
        rc = 0;
        goto out;
    }

    if (conf->mapping[0] != '\0') {
        const char *p = conf->mapping;
        int         nent = 0;
        const char *ent[1024];
        size_t      len[1024];

        for (;;) {
            size_t n = strcspn(p, ":");
            if (nent == 1024) {
                break;
            }
            ent[nent]   = p;
            len[nent++] = n;
            if (p[n] == '\0') {
                break;
            }
            p += n + 1;
        }
        for (int i = 0; i < nlocal; i++) {
            int e = i % nent;
            hwloc_bitmap_zero(set);
            if (parse_cpu_list(ent[e], len[e], set) != 0) {
                snprintf(err, errlen, "invalid CPU mapping '%s'", conf->mapping);
                goto out;
            }
            hwloc_bitmap_and(set, set, allowed);
            if (hwloc_bitmap_iszero(set)) {
                char avail[256];
                hwloc_bitmap_list_snprintf(avail, sizeof(avail), allowed);
                snprintf(err, errlen,
                         "CPU mapping entry %d ('%.*s') names no CPU available on this node "
                         "(available: %s)",
                         e, (int)len[e], ent[e], avail);
                goto out;
            }
            plan_store(plan, i, set, 1);
        }
        rc = 0;
        goto out;
    }

    if (nlocal > ncores) {
        snprintf(plan->note, sizeof(plan->note),
                 "CPU binding disabled: %d local ranks on %d cores (oversubscribed)", nlocal,
                 ncores);
        for (int i = 0; i < nlocal; i++) {
            plan_store(plan, i, allowed, 0);
        }
        rc = 0;
        goto out;
    }

    /* Rank i gets core c(i): bunch fills cores in topology order; scatter
     * deals cores round-robin over the packages (or NUMA nodes). The chosen
     * level then widens the set to the core's package or NUMA node. */
    type = conf->level == WEFT_BIND_NUMA ? HWLOC_OBJ_NUMANODE : HWLOC_OBJ_PACKAGE;
    nobj = hwloc_get_nbobjs_inside_cpuset_by_type(topo, allowed, type);
    if (nobj <= 0) {
        nobj = 1;
    }
    for (int i = 0; i < nlocal; i++) {
        hwloc_obj_t core;
        int         idx = i;

        if (conf->policy == WEFT_BIND_SCATTER && nobj > 1) {
            /* i-th rank goes to domain i % nobj, to that domain's (i / nobj)-th core. */
            int         dom = i % nobj, k = i / nobj, seen = 0;
            hwloc_obj_t d   = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, type, (unsigned)dom);
            idx             = -1;
            for (int c = 0; c < ncores && d != NULL; c++) {
                hwloc_obj_t cc = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE,
                                                                     (unsigned)c);
                if (cc && hwloc_bitmap_isincluded(cc->cpuset, d->cpuset) && seen++ == k) {
                    idx = c;
                    break;
                }
            }
            if (idx < 0) {
                idx = i; /* unbalanced domains: fall back to bunch order */
            }
        }
        core = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_CORE, (unsigned)idx);
        if (core == NULL) {
            core = hwloc_get_obj_inside_cpuset_by_type(topo, allowed, HWLOC_OBJ_PU, (unsigned)idx);
        }
        if (core == NULL) {
            snprintf(err, errlen, "no core %d in the topology", idx);
            goto out;
        }
        if (conf->level == WEFT_BIND_CORE) {
            hwloc_bitmap_and(set, core->cpuset, allowed);
        } else {
            hwloc_obj_t up = hwloc_get_ancestor_obj_by_type(topo, type, core);
            if (up == NULL && type == HWLOC_OBJ_NUMANODE) {
                /* hwloc 2: NUMA nodes hang off the side; use the local NUMA set. */
                hwloc_obj_t a = core->parent;
                while (a != NULL && a->memory_arity == 0) {
                    a = a->parent;
                }
                up = a;
            }
            hwloc_bitmap_and(set, up ? up->cpuset : allowed, allowed);
        }
        plan_store(plan, i, set, 1);
    }
    rc = 0;

out:
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return rc;
}

void weft_binding_plan_free(weft_binding_plan_t *plan)
{
    for (int i = 0; plan->text != NULL && i < plan->nlocal; i++) {
        free(plan->text[i]);
    }
    free(plan->text);
    free(plan->bound);
    free(plan->sets);
    memset(plan, 0, sizeof(*plan));
}

int weft_binding_apply(const weft_binding_plan_t *plan, int i)
{
    if (i < 0 || i >= plan->nlocal || !plan->bound[i]) {
        return 0;
    }
    return sched_setaffinity(0, sizeof(cpu_set_t), &plan->sets[i]);
}
