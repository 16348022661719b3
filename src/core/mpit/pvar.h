/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Performance-variable storage (pvars.def) and the hot-path macros: a
 * per-process array of 64-bit counters indexed by WEFT_PVAR_<NAME>. The cost
 * of a count is one non-atomic add; a level change also updates three
 * running extremes (compare and store, no lock). Sessions, handles and the
 * MPI_T view are in mpit/pvar.c.
 */
#ifndef WEFT_CORE_MPIT_PVAR_H
#define WEFT_CORE_MPIT_PVAR_H

#include <stdint.h>

typedef enum {
#define WEFT_PVAR(_name, _class, _cat, _verb, _level, _bind, _help) WEFT_PVAR_##_name,
#include "core/mpit/pvars.def"
#undef WEFT_PVAR
    WEFT_PVAR_COUNT,
    WEFT_PVAR_NONE = -1
} weft_pvar_id_t;

extern uint64_t weft_pvar[WEFT_PVAR_COUNT];
/* Of LEVEL rows: highest since the job report's start; highest and lowest
 * since MPI_T last folded them into the started watermark handles. */
extern uint64_t weft_pvar_peak[WEFT_PVAR_COUNT];
extern uint64_t weft_pvar_hi[WEFT_PVAR_COUNT];
extern uint64_t weft_pvar_lo[WEFT_PVAR_COUNT];

#define WEFT_PVAR_INC(_name)     (weft_pvar[WEFT_PVAR_##_name]++)
#define WEFT_PVAR_ADD(_name, _v) (weft_pvar[WEFT_PVAR_##_name] += (uint64_t)(_v))
#define WEFT_PVAR_SET(_name, _v) (weft_pvar[WEFT_PVAR_##_name] = (uint64_t)(_v))
#define WEFT_PVAR_LEVEL_INC(_name) weft_pvar_level_moved(WEFT_PVAR_##_name, ++weft_pvar[WEFT_PVAR_##_name])
#define WEFT_PVAR_LEVEL_DEC(_name) weft_pvar_level_moved(WEFT_PVAR_##_name, --weft_pvar[WEFT_PVAR_##_name])

static inline void weft_pvar_level_moved(int id, uint64_t value)
{
    if (value > weft_pvar_peak[id]) {
        weft_pvar_peak[id] = value;
    }
    if (value > weft_pvar_hi[id]) {
        weft_pvar_hi[id] = value;
    }
    if (value < weft_pvar_lo[id]) {
        weft_pvar_lo[id] = value;
    }
}

/* Messages and payload bytes this process sent to each world rank (the job
 * report's traffic matrix); NULL until MPI_Init has finished. */
typedef struct {
    uint64_t msgs, bytes;
} weft_traffic_t;
extern weft_traffic_t *weft_traffic;
extern int             weft_traffic_ranks; /* entries: job ranks (other jobs' processes are not counted) */

#define WEFT_TRAFFIC(_world, _bytes)                             \
    do {                                                         \
        if (weft_traffic != NULL && (_world) < weft_traffic_ranks) { \
            weft_traffic[_world].msgs++;                         \
            weft_traffic[_world].bytes += (uint64_t)(_bytes);    \
        }                                                        \
    } while (0)

/* Per-communicator counters (the COMM-bound rows): fields of weft_comm_t. */
#define WEFT_PVAR_COMM_SENT(_comm, _bytes)                     \
    do {                                                       \
        (_comm)->pvar_msgs_sent++;                             \
        (_comm)->pvar_bytes_sent += (uint64_t)(_bytes);        \
    } while (0)

/* Let an array (count elements, owned by the caller and updated by it) stand
 * for pvar id; MPI_T handles of id then have count elements. */
void weft_pvar_bind_array(weft_pvar_id_t id, const uint64_t *values, int count);

/* Names of the elements of a bound array (the job report prints them). */
void        weft_pvar_bind_names(weft_pvar_id_t id, const char *const *names);
const char *weft_pvar_element_name(weft_pvar_id_t id, int i);
int         weft_pvar_element_count(weft_pvar_id_t id);
uint64_t    weft_pvar_element(weft_pvar_id_t id, int i);

/* Monotonic nanoseconds, the clock of TIMER pvars and of the event source. */
uint64_t weft_pvar_now_ns(void);

#endif
