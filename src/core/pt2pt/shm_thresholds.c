/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Intra-node thresholds by architecture.
 *
 * Model (costs from transport/shm's init probe: CMA reads of 4 and 16 KiB
 * from another process, whose line through both gives CMA's fixed cost F
 * (system call, page pinning) and its copy rate B across processes; and
 * one in-process memcpy of 16 KiB, rate C):
 *   eager       two copies (sender into the ring, receiver out of it),
 *               no handshake
 *   pipeline    two copies through cache-sized slots after an RTS/CTS; the
 *               two sides copy at once, so it moves data at the rate P of
 *               one copy between the cores' caches, P = C / 6 (the family
 *               26 AMD VM:
 *               C 117-149 GB/s, the lower in a job where the other rank
 *               runs on the sibling; pipeline bw 19-60 GB/s, i.e. C / 7.5
 *               to C / 2.5 depending on how the VM places the two vCPUs)
 *   CMA         one copy at B plus 1.5 F (the rendezvous's RTS and FIN
 *               on top of the probe's call: the family 25 AMD VM measured
 *               1.3-1.4 F at 4-64 KiB)
 * A lone message pays eager's two copies one after the other; against CMA
 * it moves at E, measured by the probe (local rank 1 copies 16 KiB into
 * shared lines local rank 0 last read, rank 0 copies them out: on the
 * family 25 AMD VM the copy in runs at ~8 GB/s, as it must take every line
 * from the other core's cache, the copy out at ~40, and its memcpy at 58;
 * the VM's copy between its vCPUs also drops to ~2 GB/s at times), else
 * taken as E = 1 / (1/C + 1/P). CMA beats it from
 * n* = 1.5 F / (1/E - 1/B) when B > E. That bounds eager, whose lone
 * message copies in turn. The pipeline overlaps the copies of successive
 * slots; the probe streams 256 KiB through two shared half-slots the same
 * way and times it (S). Against CMA the pipeline is taken to move at S
 * less a margin (PIPE_STREAM_MARGIN), as it needs both ranks on their
 * cores and lines moving between them at once, and CMA does not: where
 * that still beats B it keeps the cached sizes, else it runs up to its
 * own crossover with CMA, 1.5 F / (margin/S - 1/B), at most the cached
 * sizes; where both sides copy a CMA message (below), CMA moves at 2 B
 * from that size, and the pipeline stops there unless it still beats
 * that (1.5 F / (margin/S - 1/2B)); none where the end is below eager:
 *   - the family 26 VM: pipeline bw 33-37 GB/s in a slow phase (E 10, B
 *     17), 55-63 in a fast one, against CMA's 13-17;
 *   - the family 25 VM: S 6-14 GB/s, B ~14.5, pipeline bw 7-8.5 at 64
 *     KiB-1 MiB against CMA's 13-15, and 2.2 when its vCPUs trade lines
 *     slowly (CMA 14 then). The old probe timed the slower copy alone on
 *     16 KiB hot in cache (7-17 GB/s), and picked the pipeline in some
 *     jobs.
 * When even the two copies in turn are at least as fast as CMA and S
 * passes (the family 26 AMD VM: P ~20-25, E ~21, B ~17 GB/s; measured bw
 * 128 KiB-8 MiB: pipeline 15-60 GB/s, CMA 13-19), the pipeline is used
 * while the data stay in the last-level cache (8 x L2) and, beyond, while
 * CMA's fixed cost still outweighs the second copy at the same rate
 * (n* = 4 F B: both copy at B, the eager copies on both cores at once),
 * whichever is larger; S unknown (no stream measured) keeps this rule on
 * E alone. n* is rounded to the nearest power of two (stable against
 * probe noise). Eager carries what fits in the ring with room for a few
 * messages in flight (a quarter of it); the pipeline the rest up to n*;
 * CMA everything larger. Before issue 18 the model took P = B, so the AMD
 * VM switched from eager 64 KiB (2 copies, 62 GB/s) to CMA at 128 KiB
 * (15 GB/s): the bandwidth cliff.
 *
 * Where CMA follows eager and both sides copy a CMA message (below), eager
 * stops at the power of two at or under that size: the cooperative copy
 * halves CMA's copy, and eager's two copies lose to it (family 25 VM,
 * eager to 32 against to 64 KiB: latency 64 KiB 4.1 against 5.2 us, bw
 * level; a probe that read E ~ B had put eager at 64 KiB).
 *
 * Cooperative copy (a contiguous CMA message copied half by the receiver,
 * half by the sender at once): halving the copy saves n / 2B and costs the
 * sender's CMA call, F, so it pays from n = 2 F B (the family 25 AMD VM:
 * F 1.4 us, B 14.6 GB/s -> 42 KiB; measured latency 48 KiB 6.2 -> 4.9 us,
 * 128 KiB 12.2 -> 5.8, 32 KiB level), rounded up to a page and never above
 * the 256 KiB used before it was measured. On a node with more ranks than
 * CPUs there is none: every core already runs some rank, so the sender's
 * half only takes the CPU from a rank that would run, and a sender
 * descheduled with a chunk claimed holds its receiver up (family 26 AMD
 * VM, np 4 on 2 cores, 13 collectives at 32 KiB-2 MiB without it: 58 rows
 * faster, 27 slower, geometric mean 0.90x; np 8 0.98x).
 *
 * The model above times the copy alone, and so did the benchmarks that
 * chose it: weft-bench never read what it received. A program does, and
 * the sender's half of a cooperative copy sits in the other core's cache,
 * so the first read pulls every one of its lines across (the family 6
 * model 167 Intel VM moves ~5 GB/s between its cores). Measured there, np
 * 2, each side reading its message before answering (`latency --touch`, 3
 * alternating rounds): 64 KiB 11.1 us with it against 5.5 without, 128 KiB
 * 17.6 against 10.2, 512 KiB 49 against 38, 1 MiB level (95 against 90),
 * 2-4 MiB 1.2x faster with it; Open MPI took 5.6-36 us at 64-512 KiB. The
 * same held for a reduction's operand (np 2 reduce 64-256 KiB 2x) and for
 * a window of sends, where the receiver copies message after message
 * anyway (np 2 bw 64-128 KiB +15-21% without). So the modelled size is a
 * floor only: both sides copy from half the L2 (COOP_L2_DIVISOR), where a
 * message's source and destination no longer fit in the L2 together, so
 * its lines leave the caches either way and the second core's copy adds
 * memory bandwidth; 512 KiB when L2 is unknown.
 */
#include "core/pt2pt/shm_thresholds.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/tunables.h"

/* Without a measurement (no second local rank): the old fixed values. */
#define FIXED_EAGER (8u << 10)
#define MIN_EAGER   (4u << 10)
/* The pipeline's copy rate: the probe's in-process memcpy rate over this
 * (see top). */
#define PIPE_COPY_SLOWDOWN 6.0
/* A rendezvous's CMA fixed cost over the probe's (see top). */
#define CMA_FIXED_FACTOR 1.5
/* n* = RNDV_OVERHEAD_FACTOR * F * B where the pipeline copies as fast as
 * CMA (see top) */
#define RNDV_OVERHEAD_FACTOR 4.0
/* The pipeline's streamed copies count at S / this against CMA (see top) */
#define PIPE_STREAM_MARGIN 1.5
/* Cooperative copy from n = COOP_SPLIT_FACTOR * F * B (see top), at most
 * COOP_MAX_THRESHOLD (the fixed value before the model). */
#define COOP_SPLIT_FACTOR  2.0
#define COOP_MAX_THRESHOLD ((size_t)256 << 10)
/* ...and never below L2 / COOP_L2_DIVISOR (COOP_UNKNOWN_L2 when L2 is
 * unknown), see top. */
#define COOP_L2_DIVISOR 2u
#define COOP_UNKNOWN_L2 ((size_t)1 << 20)
/* Rings of small nodes (weft_p2p_ring_bytes). */
#define SMALL_NODE_RANKS 8
#define SMALL_NODE_RING  ((size_t)1 << 20)
/* Eager never carries more than this, whatever the ring holds: larger eager
 * messages were never measured to win (the rings of small nodes grew to
 * 1 MiB for streaming, not for larger messages). */
#define EAGER_RING_CAP_MAX ((size_t)64 << 10)
/* The pipeline's working set stays in the last-level cache up to this many
 * times L2 (1 MiB assumed when L2 is unknown). */
#define PIPE_CACHE_L2_TIMES 8u

static size_t pow2_floor(size_t v)
{
    size_t p = 1;
    while (p <= v / 2) {
        p *= 2;
    }
    return v == 0 ? 0 : p;
}

/* A size threshold: the power of two nearest to bytes (stable against
 * probe noise), at most 2^40. */
static size_t pow2_nearest(double bytes)
{
    return bytes >= (double)((size_t)1 << 40) ? (size_t)1 << 40 : pow2_floor((size_t)(bytes * 1.41421356));
}

size_t weft_p2p_ring_bytes(int local_size)
{
    if (weft_tunables_source(WEFT_TUNABLE_SMP_QUEUE_LENGTH) != WEFT_TSOURCE_DEFAULT) {
        return weft_tunables.SMP_QUEUE_LENGTH;
    }
    return local_size <= SMALL_NODE_RANKS ? SMALL_NODE_RING : weft_tunables.SMP_QUEUE_LENGTH;
}

/* The cooperative copy's size floor: half the L2 (see top). */
static size_t coop_floor(const weft_shm_costs_t *c)
{
    return (c->l2_bytes ? (size_t)c->l2_bytes : COOP_UNKNOWN_L2) / COOP_L2_DIVISOR;
}

static void measured_choice(const weft_shm_costs_t *c, size_t ring_payload, int oversubscribed,
                            weft_p2p_thresholds_t *t)
{
    /* a quarter of the ring (ring_payload is half of it, less a header),
     * at most EAGER_RING_CAP_MAX */
    size_t ring_cap = pow2_floor(ring_payload + WEFT_SHM_HDR_SIZE) / 2;
    ring_cap        = ring_cap < EAGER_RING_CAP_MAX ? ring_cap : EAGER_RING_CAP_MAX;

    t->coop_threshold = COOP_MAX_THRESHOLD;
    if (c->copy_ns == 0) {
        t->eager_limit   = FIXED_EAGER;
        t->cma_threshold = 0;
        snprintf(t->table, sizeof(t->table), "fixed");
        snprintf(t->why, sizeof(t->why), "no other local rank: nothing measured");
        return;
    }
    if (c->cma_ns == 0) { /* no CMA: the pipeline is the only rendezvous */
        t->eager_limit   = ring_cap;
        t->cma_threshold = 0;
        snprintf(t->table, sizeof(t->table), "measured");
        snprintf(t->why, sizeof(t->why),
                 "no CMA: eager up to a quarter of the ring (%zu), then the 2-copy pipeline",
                 ring_cap);
        return;
    }
    /* the line through (probe/4, cma_page_ns) and (probe, cma_ns) */
    double q        = (double)c->probe_bytes / 4.0;
    double slope    = ((double)c->cma_ns - (double)c->cma_page_ns) / (3.0 * q); /* ns per byte */
    double min_rate = (double)c->probe_bytes / (double)c->copy_ns / 16.0; /* sanity floor */
    double rate     = slope > 0 && 1.0 / slope > min_rate ? 1.0 / slope : min_rate;
    double fixed_ns = (double)c->cma_page_ns - q / rate;
    if (fixed_ns < 0) {
        fixed_ns = 0;
    }
    double copy_rate  = (double)c->probe_bytes / (double)c->copy_ns;
    double pipe_rate  = copy_rate / PIPE_COPY_SLOWDOWN;
    double eager_rate = c->xcopy_ns ? (double)c->probe_bytes / (double)c->xcopy_ns
                                    : 1.0 / (1.0 / copy_rate + 1.0 / pipe_rate); /* in turn */
    double cache      = (double)PIPE_CACHE_L2_TIMES * (double)(c->l2_bytes ? c->l2_bytes : 1u << 20);
    /* the pipeline's reach where it copies at least as fast as CMA (see top) */
    double kept       = RNDV_OVERHEAD_FACTOR * fixed_ns * rate;
    kept              = kept > cache ? kept : cache;
    /* eager against CMA: a lone message's copies in turn (n*, see top) */
    double cross      = eager_rate >= rate ? kept
                                           : CMA_FIXED_FACTOR * fixed_ns / (1.0 / eager_rate - 1.0 / rate);
    size_t eager      = pow2_nearest(cross);
    eager             = eager < ring_cap ? eager : ring_cap;
    /* the pipeline against CMA: its streamed copies S, less the margin,
     * where measured (see top); else the lone message's rule above */
    double step_rate  = c->xcopy_step_ns ? (double)c->probe_bytes / (double)c->xcopy_step_ns : 0;
    double stream     = step_rate / PIPE_STREAM_MARGIN;
    double pipe_to    = !c->xcopy_step_ns ? cross
                      : stream >= rate    ? kept
                                          : CMA_FIXED_FACTOR * fixed_ns / (1.0 / stream - 1.0 / rate);
    int    overlap    = c->xcopy_step_ns && stream >= rate; /* keeps the cached sizes */
    double coop       = COOP_SPLIT_FACTOR * fixed_ns * rate;
    if (coop < (double)COOP_MAX_THRESHOLD) {
        t->coop_threshold = ((size_t)coop + 4095) & ~(size_t)4095;
    }
    int    at_coop    = 0; /* the pipeline ends where both sides' CMA starts */
    if (c->xcopy_step_ns && !overlap && !oversubscribed && pipe_to > (double)t->coop_threshold) {
        /* from the cooperative size CMA copies at 2 B (see top) */
        double vs_coop = stream >= 2.0 * rate
                             ? kept
                             : CMA_FIXED_FACTOR * fixed_ns / (1.0 / stream - 0.5 / rate);
        at_coop = vs_coop <= (double)t->coop_threshold;
        pipe_to = at_coop ? (double)t->coop_threshold : vs_coop;
    }
    pipe_to           = c->xcopy_step_ns && pipe_to > kept ? kept : pipe_to;
    /* rounded down at the cooperative size, so as not to pass it */
    size_t nstar      = at_coop ? pow2_floor(t->coop_threshold) : pow2_nearest(pipe_to);
    if (eager < MIN_EAGER) {
        eager = MIN_EAGER;
    }
    char why_eager[96];
    if (c->xcopy_ns) {
        snprintf(why_eager, sizeof(why_eager), "a lone message's two copies (measured) ");
    } else {
        snprintf(why_eager, sizeof(why_eager), "pipeline copy ~%.1f GB/s (memcpy / %.0f, not "
                 "measured), a lone message's two copies ", pipe_rate, PIPE_COPY_SLOWDOWN);
    }
    int cma_next = nstar <= eager; /* CMA right above eager */
    int coop_cut = 0;
    if (cma_next && !oversubscribed && eager > t->coop_threshold) {
        eager    = pow2_floor(t->coop_threshold) > MIN_EAGER ? pow2_floor(t->coop_threshold) : MIN_EAGER;
        coop_cut = 1; /* eager's two copies lose to both sides' CMA (see top) */
    }
    t->eager_limit   = eager;
    t->cma_threshold = cma_next ? 0 : nstar; /* 0: CMA from the eager limit on */
    char why_stream[64] = "";
    if (c->xcopy_step_ns) {
        snprintf(why_stream, sizeof(why_stream), ", streamed %.1f GB/s", step_rate);
    }
    snprintf(t->table, sizeof(t->table), "measured");
    snprintf(t->why, sizeof(t->why),
             "%s family %d, L2 %llu KiB: CMA %llu ns per 4 KiB, %llu ns per 16 KiB -> fixed "
             "cost %.0f ns, %.1f GB/s; %s%.1f GB/s%s -> n* %.1f KiB "
             "-> eager <= %zu (ring cap %zu%s), %s%zu; both sides copy from 2 F B = %zu",
             c->cpu_vendor[0] ? c->cpu_vendor : "unknown CPU", (int)c->cpu_family,
             (unsigned long long)(c->l2_bytes >> 10), (unsigned long long)c->cma_page_ns,
             (unsigned long long)c->cma_ns, fixed_ns, rate, why_eager, eager_rate, why_stream,
             cross / 1024.0, eager, ring_cap, coop_cut ? ", under both sides' CMA" : "",
             !cma_next ? (overlap ? "2-copy pipeline (its streamed copies beat CMA) up to CMA from "
                                  : "2-copy pipeline up to CMA from ")
                       : "CMA above ",
             !cma_next ? t->cma_threshold : eager, t->coop_threshold);
}

/* ---- rules file ---------------------------------------------------------- */

/* One condition word: key op value. Returns 1 holds, 0 not, -1 bad word. */
static int condition(const char *w, const weft_shm_costs_t *c)
{
    static const char *keys[] = {"vendor", "family", "model", "l2", "cma_ns", "copy_ns", "xcopy_ns"};
    size_t              klen  = strcspn(w, "<>=");
    int                 k     = -1;

    for (int i = 0; i < (int)(sizeof(keys) / sizeof(keys[0])); i++) {
        if (strlen(keys[i]) == klen && strncmp(w, keys[i], klen) == 0) {
            k = i;
        }
    }
    if (k < 0 || w[klen] == '\0') {
        return -1;
    }
    const char *op  = w + klen;
    size_t      ol  = op[1] == '=' ? 2 : 1;
    const char *val = op + ol;
    if (k == 0) { /* vendor: equality only */
        return op[0] == '=' && ol == 1 ? strcmp(val, c->cpu_vendor) == 0 : -1;
    }
    size_t v;
    if (weft_parse_size(val, &v) != 0) {
        return -1;
    }
    long long have = k == 1 ? c->cpu_family : k == 2 ? c->cpu_model
                   : k == 3 ? (long long)c->l2_bytes : k == 4 ? (long long)c->cma_ns
                   : k == 5 ? (long long)c->copy_ns : (long long)c->xcopy_ns;
    long long want = (long long)v;
    if (op[0] == '=' && ol == 1) {
        return have == want;
    }
    if (op[0] == '<') {
        return ol == 2 ? have <= want : have < want;
    }
    if (op[0] == '>') {
        return ol == 2 ? have >= want : have > want;
    }
    return -1;
}

/* One result word: eager_limit=SIZE, cma_threshold=SIZE or coop_threshold=SIZE. */
static int result(const char *w, weft_p2p_thresholds_t *t, int apply)
{
    size_t v;
    if (strncmp(w, "eager_limit=", 12) == 0 && weft_parse_size(w + 12, &v) == 0) {
        t->eager_limit = apply ? v : t->eager_limit;
        return 0;
    }
    if (strncmp(w, "cma_threshold=", 14) == 0 && weft_parse_size(w + 14, &v) == 0) {
        t->cma_threshold = apply ? v : t->cma_threshold;
        return 0;
    }
    if (strncmp(w, "coop_threshold=", 15) == 0 && weft_parse_size(w + 15, &v) == 0) {
        t->coop_threshold = apply ? v : t->coop_threshold;
        return 0;
    }
    return -1;
}

int weft_p2p_thresholds_rules(const char *text, const char *path, const weft_shm_costs_t *costs,
                              weft_p2p_thresholds_t *t, int *foreign, char *err, size_t errlen)
{
    int lineno = 0, matched = 0;

    *foreign = 0;
    for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        char  buf[512], *words[32], *save = NULL;
        int   n = 0, colon = -1, holds = 1;
        size_t len = strcspn(line, "\n");

        lineno++;
        if (len >= sizeof(buf)) {
            snprintf(err, errlen, "%s:%d: line too long", path, lineno);
            return -1;
        }
        memcpy(buf, line, len);
        buf[len] = '\0';
        buf[strcspn(buf, "#")] = '\0';
        for (char *w = strtok_r(buf, " \t\r", &save); w && n < 32; w = strtok_r(NULL, " \t\r", &save)) {
            if (strcmp(w, ":") == 0 && colon < 0) {
                colon = n;
            }
            words[n++] = w;
        }
        if (n == 0) {
            continue;
        }
        if (strcmp(words[0], "pt2pt") != 0) {
            (*foreign)++;
            continue;
        }
        if (n < 4 || strcmp(words[1], "intra") != 0 || colon < 2 || colon == n - 1) {
            snprintf(err, errlen, "%s:%d: expected 'pt2pt intra [condition ...] : "
                     "eager_limit=SIZE cma_threshold=SIZE [coop_threshold=SIZE]'", path, lineno);
            return -1;
        }
        for (int i = 2; i < colon; i++) {
            int h = condition(words[i], costs);
            if (h < 0) {
                snprintf(err, errlen, "%s:%d: bad condition '%s' (vendor=S family/model/l2/"
                         "cma_ns/copy_ns/xcopy_ns =,<,<=,>,>= N)", path, lineno, words[i]);
                return -1;
            }
            holds = holds && h;
        }
        for (int i = colon + 1; i < n; i++) {
            if (result(words[i], t, 0) != 0) {
                snprintf(err, errlen, "%s:%d: bad setting '%s' (eager_limit=SIZE, "
                         "cma_threshold=SIZE, coop_threshold=SIZE)", path, lineno, words[i]);
                return -1;
            }
        }
        if (!holds || matched) { /* later lines are still checked */
            continue;
        }
        for (int i = colon + 1; i < n; i++) {
            result(words[i], t, 1);
        }
        snprintf(t->table, sizeof(t->table), "%s line %d", path, lineno);
        matched = 1;
    }
    return matched;
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

static void append(char *buf, size_t cap, const char *text)
{
    size_t used = strlen(buf);
    snprintf(buf + used, cap - used, "%s", text);
}

void weft_p2p_thresholds_measured(const weft_shm_costs_t *c, size_t ring_payload,
                                  int oversubscribed, weft_p2p_thresholds_t *t)
{
    /* The model's choices (eager, pipeline) use the modelled cooperative
     * size; only the copy itself waits for the floor (see top). */
    measured_choice(c, ring_payload, oversubscribed, t);
    size_t floor_bytes = coop_floor(c);
    if (c->copy_ns != 0 && t->coop_threshold < floor_bytes) { /* measured */
        t->coop_threshold = floor_bytes;
        char floor[96];
        snprintf(floor, sizeof(floor), ", raised to half the L2 (%zu)", t->coop_threshold);
        append(t->why, sizeof(t->why), floor);
    }
}

int weft_p2p_thresholds_choose(const weft_shm_costs_t *costs, size_t ring_payload,
                               int oversubscribed, weft_p2p_thresholds_t *t, int *foreign, char *err,
                               size_t errlen)
{
    const char *file = weft_tunables.TUNING_FILE;

    *foreign = 0;
    weft_p2p_thresholds_measured(costs, ring_payload, oversubscribed, t);
    if (oversubscribed) {
        t->coop_threshold = SIZE_MAX;
        append(t->why, sizeof(t->why), "; no cooperative copy: more ranks on the node than CPUs");
    }
    if (weft_tunables.SMP_TUNING == 1) { /* fixed */
        t->eager_limit   = weft_tunables.SMP_EAGERSIZE;
        t->cma_threshold = weft_tunables.SMP_CMA_THRESHOLD;
        t->coop_threshold = weft_tunables.SMP_COOP_THRESHOLD;
        snprintf(t->table, sizeof(t->table), "fixed");
        snprintf(t->why, sizeof(t->why), "WEFT_SMP_TUNING=fixed");
    } else if (file != NULL && file[0] != '\0') {
        char *text = read_file(file);
        if (text == NULL) {
            snprintf(err, errlen, "WEFT_TUNING_FILE=%s: cannot read the file", file);
            return -1;
        }
        int rc = weft_p2p_thresholds_rules(text, file, costs, t, foreign, err, errlen);
        free(text);
        if (rc < 0) {
            return -1;
        }
        if (rc > 0) {
            snprintf(t->why, sizeof(t->why), "first pt2pt rule matching %s family %d "
                     "(CMA %llu ns, copy %llu ns)", costs->cpu_vendor, (int)costs->cpu_family,
                     (unsigned long long)costs->cma_ns, (unsigned long long)costs->copy_ns);
        } else {
            append(t->why, sizeof(t->why), " (no pt2pt rule of WEFT_TUNING_FILE matched)");
        }
    }
    if (weft_tunables_source(WEFT_TUNABLE_SMP_EAGERSIZE) != WEFT_TSOURCE_DEFAULT) {
        t->eager_limit = weft_tunables.SMP_EAGERSIZE;
        append(t->why, sizeof(t->why), "; eager limit set by WEFT_SMP_EAGERSIZE");
    }
    if (weft_tunables_source(WEFT_TUNABLE_SMP_CMA_THRESHOLD) != WEFT_TSOURCE_DEFAULT) {
        t->cma_threshold = weft_tunables.SMP_CMA_THRESHOLD;
        append(t->why, sizeof(t->why), "; CMA threshold set by WEFT_SMP_CMA_THRESHOLD");
    }
    if (weft_tunables_source(WEFT_TUNABLE_SMP_COOP_THRESHOLD) != WEFT_TSOURCE_DEFAULT) {
        t->coop_threshold = weft_tunables.SMP_COOP_THRESHOLD;
        append(t->why, sizeof(t->why), "; cooperative copy set by WEFT_SMP_COOP_THRESHOLD");
    }
    if (t->eager_limit > ring_payload) {
        t->eager_limit = ring_payload;
        append(t->why, sizeof(t->why), "; eager limit capped by WEFT_SMP_QUEUE_LENGTH");
    }
    return 0;
}
