/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Raising MPI_T events (events.def) from the library: one predictable branch
 * on a flag that is set only while some tool holds a registration for the
 * event. Callbacks run synchronously in the raising thread, inside the
 * library, so only callbacks registered as MPI_T_CB_REQUIRE_MPI_RESTRICTED or
 * stricter are called; others count as dropped events.
 */
#ifndef WEFT_CORE_MPIT_EVENT_H
#define WEFT_CORE_MPIT_EVENT_H

#include <stdint.h>

typedef enum {
#define WEFT_EVENT(_name, _cat, _verb, _elems, _help) WEFT_EVENT_##_name,
#include "core/mpit/events.def"
#undef WEFT_EVENT
    WEFT_EVENT_COUNT
} weft_event_id_t;

extern int weft_event_armed[WEFT_EVENT_COUNT];

void weft_event_raise(weft_event_id_t id, int64_t e0, int64_t e1, int64_t e2, int64_t e3);

#define WEFT_EVENT_RAISE(_name, _e0, _e1, _e2, _e3)                                              \
    do {                                                                                       \
        if (__builtin_expect(weft_event_armed[WEFT_EVENT_##_name] != 0, 0)) {                  \
            weft_event_raise(WEFT_EVENT_##_name, (int64_t)(_e0), (int64_t)(_e1), (int64_t)(_e2), \
                             (int64_t)(_e3));                                                  \
        }                                                                                      \
    } while (0)

#endif
