/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * CPU binding at launch. mpiexec reads the settings (tunables + -bind-to) and
 * checks their syntax; each weft-proxy plans the binding of its local ranks on
 * its own node's hwloc topology; each rank's child process applies its set
 * with sched_setaffinity before exec.
 */
#ifndef WEFT_LAUNCHER_BINDING_H
#define WEFT_LAUNCHER_BINDING_H

#include <sched.h>
#include <stddef.h>

/* Same order as the CPU_BINDING_POLICY and CPU_BINDING_LEVEL tunable rows. */
enum { WEFT_BIND_BUNCH, WEFT_BIND_SCATTER, WEFT_BIND_NONE };
enum { WEFT_BIND_CORE, WEFT_BIND_SOCKET, WEFT_BIND_NUMA };

typedef struct {
    int  enable;        /* WEFT_ENABLE_AFFINITY */
    int  policy;        /* WEFT_BIND_BUNCH | SCATTER | NONE */
    int  level;         /* WEFT_BIND_CORE | SOCKET | NUMA */
    int  show;          /* WEFT_SHOW_CPU_BINDING */
    char mapping[1024]; /* WEFT_CPU_MAPPING, "" for none */
} weft_binding_conf_t;

typedef struct {
    int        nlocal;
    int       *bound;   /* per local rank: 1 if sets[i] must be applied */
    cpu_set_t *sets;    /* per local rank */
    char     **text;    /* per local rank: CPU list for SHOW ("0", "0-1", "0,2") */
    char       note[256]; /* why nothing is bound, "" when bound */
} weft_binding_plan_t;

/* Check the syntax of an explicit mapping ("0:1:4:5", "0,2-4:1"). 0 or -1 + err. */
int weft_binding_check_mapping(const char *mapping, char *err, size_t errlen);

/* Plan nlocal ranks on this node. 0, or -1 with a one-line reason in err. */
int weft_binding_plan(const weft_binding_conf_t *conf, int nlocal, weft_binding_plan_t *plan,
                      char *err, size_t errlen);
void weft_binding_plan_free(weft_binding_plan_t *plan);

/* In the child, before exec: apply the plan for local rank i. 0 or -1. */
int weft_binding_apply(const weft_binding_plan_t *plan, int i);

#endif
