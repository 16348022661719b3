/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node protocol thresholds from measured costs or a rules file. Pure
 * functions of their inputs (only util/ below them), so every local rank,
 * given rank 0's measurement, derives the same values, and weft-info can
 * show the choice without starting a job. Format: docs/tuning.md.
 */
#ifndef WEFT_CORE_PT2PT_SHM_THRESHOLDS_H
#define WEFT_CORE_PT2PT_SHM_THRESHOLDS_H

#include <stddef.h>

#include "transport/shm/shm.h"

typedef struct {
    size_t eager_limit;   /* largest eager message */
    size_t cma_threshold; /* rendezvous from here on uses CMA, below it the 2-copy pipeline */
    size_t coop_threshold; /* contiguous CMA rendezvous from here on: both sides copy at once */
    char   table[200];    /* where the values come from */
    char   why[512];      /* the reasoning, one line */
} weft_p2p_thresholds_t;

/* The choice from measured costs (costs->copy_ns > 0), or the fixed
 * defaults when nothing was measured. ring_payload: the largest eager
 * message the rings carry; oversubscribed: more ranks on the node than
 * CPUs (no cooperative copy, so it does not bound eager either). */
void weft_p2p_thresholds_measured(const weft_shm_costs_t *costs, size_t ring_payload,
                                  int oversubscribed, weft_p2p_thresholds_t *t);

/* The first `pt2pt intra` rule of the file text whose conditions hold for
 * costs overrides the fields it names. Returns 1 when a rule matched, 0 when
 * none did, -1 on a syntax error (message in err). *foreign counts lines for
 * other layers (collective rules), which are skipped. */
int weft_p2p_thresholds_rules(const char *text, const char *path, const weft_shm_costs_t *costs,
                              weft_p2p_thresholds_t *t, int *foreign, char *err, size_t errlen);

/* The thresholds in force: WEFT_SMP_TUNING=fixed, else the first matching
 * rule of WEFT_TUNING_FILE, else the measured choice; an
 * explicitly set WEFT_SMP_EAGERSIZE / WEFT_SMP_CMA_THRESHOLD /
 * WEFT_SMP_COOP_THRESHOLD wins over either; the eager limit is capped at
 * ring_payload. 0, or -1 with a message in err (file unreadable or bad).
 * *foreign as above. */
int weft_p2p_thresholds_choose(const weft_shm_costs_t *costs, size_t ring_payload,
                               int oversubscribed, weft_p2p_thresholds_t *t, int *foreign, char *err,
                               size_t errlen);

/* Bytes of ring per ordered pair of a node with local_size ranks:
 * WEFT_SMP_QUEUE_LENGTH when set; else 1 MiB up to 8 local ranks (a
 * window of 64 messages of 2 KiB in each direction streams without the
 * sender waiting for room: np 2 bibw 1-2 KiB 1.4x, 8 ranks use 64 MiB of
 * rings) and the tunable's default of 256 KiB above. */
size_t weft_p2p_ring_bytes(int local_size);

#endif
