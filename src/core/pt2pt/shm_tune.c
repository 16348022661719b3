/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node thresholds in force for this job. Local rank 0 describes the
 * CPU (hwloc) and transport/shm measures the mechanisms at init; every
 * local rank then applies shm_thresholds.c to the same inputs, so they all
 * agree. Precedence: WEFT_SMP_TUNING=fixed, else a matching rule of
 * WEFT_TUNING_FILE, else the measured choice; an explicitly set
 * WEFT_SMP_EAGERSIZE / WEFT_SMP_CMA_THRESHOLD wins over either. The values
 * and costs are MPI_T pvars (weft_shm_eager_limit, ...); weft-info --tuning
 * shows the same choice outside a job.
 */
#include "core/pt2pt/proto_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/hwinfo.h"
#include "core/mpit/pvar.h"
#include "core/pt2pt/shm_thresholds.h"
#include "util/log.h"
#include "util/tunables.h"

void p2p_shm_node_facts(weft_shm_costs_t *facts)
{
    weft_hw_cpu_t cpu;

    memset(facts, 0, sizeof(*facts));
    weft_hw_cpu(&cpu); /* unknown fields stay unknown */
    memcpy(facts->cpu_vendor, cpu.vendor, sizeof(facts->cpu_vendor) - 1); /* GenuineIntel fits */
    facts->cpu_family = cpu.family;
    facts->cpu_model  = cpu.model;
    facts->l2_bytes   = cpu.l2_bytes;
}

static char *read_file(const char *path)
{
    FILE *f    = fopen(path, "r");
    char *text = NULL;
    long  len;

    if (f && fseek(f, 0, SEEK_END) == 0 && (len = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (text = calloc(1, (size_t)len + 1)) && fread(text, 1, (size_t)len, f) != (size_t)len) {
        free(text);
        text = NULL;
    }
    if (f) {
        fclose(f);
    }
    return text;
}

int p2p_shm_tune(size_t ring_payload)
{
    weft_p2p_thresholds_t *t = &p2p.tuning;
    weft_shm_costs_t       costs;
    const char            *file = weft_tunables.TUNING_FILE;

    weft_shm_costs(&costs);
    weft_p2p_thresholds_measured(&costs, ring_payload, t);
    if (weft_tunables.SMP_TUNING == 1) { /* fixed */
        t->eager_limit   = weft_tunables.SMP_EAGERSIZE;
        t->cma_threshold = weft_tunables.SMP_CMA_THRESHOLD;
        snprintf(t->table, sizeof(t->table), "fixed");
        snprintf(t->why, sizeof(t->why), "WEFT_SMP_TUNING=fixed");
    } else if (file != NULL && file[0] != '\0') {
        char  err[300];
        int   foreign = 0;
        char *text    = read_file(file);
        if (text == NULL) {
            return weft_error(MPI_ERR_OTHER, "WEFT_TUNING_FILE=%s: cannot read the file", file);
        }
        int rc = weft_p2p_thresholds_rules(text, file, &costs, t, &foreign, err, sizeof(err));
        free(text);
        if (rc < 0) {
            return weft_error(MPI_ERR_OTHER, "WEFT_TUNING_FILE: %s", err);
        }
        if (rc > 0) {
            snprintf(t->why, sizeof(t->why), "first pt2pt rule matching %s family %d "
                     "(CMA %llu ns, copy %llu ns)", costs.cpu_vendor, (int)costs.cpu_family,
                     (unsigned long long)costs.cma_ns, (unsigned long long)costs.copy_ns);
        } else {
            size_t used = strlen(t->why);
            snprintf(t->why + used, sizeof(t->why) - used, " (no pt2pt rule of %s matched)", file);
        }
        if (foreign > 0 && p2p.me_world == 0) {
            weft_log_warn("WEFT_TUNING_FILE=%s: %d line(s) not for pt2pt skipped "
                          "(collective rules go to WEFT_COLL_TUNING_FILE)", file, foreign);
        }
    }
    if (weft_tunables_source(WEFT_TUNABLE_SMP_EAGERSIZE) != WEFT_TSOURCE_DEFAULT) {
        t->eager_limit = weft_tunables.SMP_EAGERSIZE;
        strncat(t->why, "; eager limit set by WEFT_SMP_EAGERSIZE", sizeof(t->why) - strlen(t->why) - 1);
    }
    if (weft_tunables_source(WEFT_TUNABLE_SMP_CMA_THRESHOLD) != WEFT_TSOURCE_DEFAULT) {
        t->cma_threshold = weft_tunables.SMP_CMA_THRESHOLD;
        strncat(t->why, "; CMA threshold set by WEFT_SMP_CMA_THRESHOLD",
                sizeof(t->why) - strlen(t->why) - 1);
    }
    if (t->eager_limit > ring_payload) {
        weft_log_warn("eager limit %zu exceeds what WEFT_SMP_QUEUE_LENGTH allows; using %zu",
                      t->eager_limit, ring_payload);
        t->eager_limit = ring_payload;
    }
    p2p.eager_limit   = t->eager_limit;
    p2p.cma_threshold = t->cma_threshold;
    WEFT_PVAR_SET(SHM_EAGER_LIMIT, p2p.eager_limit);
    WEFT_PVAR_SET(SHM_CMA_THRESHOLD, p2p.cma_threshold);
    WEFT_PVAR_SET(SHM_CMA_COST_NS, costs.cma_ns);
    WEFT_PVAR_SET(SHM_COPY_COST_NS, costs.copy_ns);
    return MPI_SUCCESS;
}
