/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node thresholds in force for this job. Local rank 0 describes the
 * CPU (hwloc) and transport/shm measures the mechanisms at init; every
 * local rank then applies shm_thresholds.c to the same inputs, so they all
 * agree (precedence: shm_thresholds.h). The values
 * and costs are MPI_T pvars (weft_shm_eager_limit, ...); weft-info --tuning
 * shows the same choice outside a job.
 */
#include "core/pt2pt/proto_internal.h"

#include <stdint.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/errors.h"
#include "core/hwinfo.h"
#include "core/mpit/pvar.h"
#include "core/progress.h"
#include "core/pt2pt/shm_thresholds.h"
#include "util/log.h"
#include "util/tunables.h"

void p2p_shm_node_facts(weft_shm_costs_t *facts)
{
    weft_hw_cpu_t cpu;

    memset(facts, 0, sizeof(*facts));
    weft_hw_cpu_id(&cpu); /* unknown fields stay unknown */
    memcpy(facts->cpu_vendor, cpu.vendor, sizeof(facts->cpu_vendor) - 1); /* GenuineIntel fits */
    facts->cpu_family = cpu.family;
    facts->cpu_model  = cpu.model;
    facts->l2_bytes   = cpu.l2_bytes;
}

int p2p_shm_tune(size_t ring_payload)
{
    weft_p2p_thresholds_t *t = &p2p.tuning;
    weft_shm_costs_t       costs;
    char                   err[400];
    int                    foreign = 0;

    weft_shm_costs(&costs);
    /* oversubscribed: the same on every rank of the node */
    if (weft_p2p_thresholds_choose(&costs, ring_payload, weft_progress_oversubscribed(), t, &foreign,
                                   err, sizeof(err)) != 0) {
        return weft_error(MPI_ERR_OTHER, "%s", err);
    }
    if (foreign > 0 && p2p.me_world == 0) {
        weft_log_warn("WEFT_TUNING_FILE=%s: %d line(s) not for pt2pt skipped "
                      "(collective rules go to WEFT_COLL_TUNING_FILE)",
                      weft_tunables.TUNING_FILE, foreign);
    }
    p2p.eager_limit   = t->eager_limit;
    p2p.cma_threshold = t->cma_threshold;
    p2p.coop_threshold = t->coop_threshold;
    p2p.held_limit    = weft_tunables.SMP_HELD_LIMIT;
    WEFT_PVAR_SET(SHM_EAGER_LIMIT, p2p.eager_limit);
    WEFT_PVAR_SET(SHM_CMA_THRESHOLD, p2p.cma_threshold);
    WEFT_PVAR_SET(SHM_COOP_THRESHOLD, p2p.coop_threshold);
    WEFT_PVAR_SET(SHM_CMA_COST_NS, costs.cma_ns);
    WEFT_PVAR_SET(SHM_COPY_COST_NS, costs.copy_ns);
    WEFT_PVAR_SET(SHM_XCOPY_COST_NS, costs.xcopy_ns);
    WEFT_PVAR_SET(SHM_XCOPY_STEP_NS, costs.xcopy_step_ns);
    return MPI_SUCCESS;
}

size_t weft_p2p_shm_cma_from(void)
{
    if (!p2p.cma) {
        return SIZE_MAX;
    }
    size_t from = p2p.eager_limit + 1; /* the protocol's own rule: above eager, by CMA from */
    return p2p.cma_threshold > from ? p2p.cma_threshold : from;
}

size_t weft_p2p_shm_coop_from(void)
{
    return p2p.cma ? p2p.coop_threshold : SIZE_MAX;
}
