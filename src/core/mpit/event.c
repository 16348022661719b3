/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_T events (events.def) and the one event source, the monotonic clock.
 * Events are raised inside the library, so a callback is called only if it
 * was registered for MPI_T_CB_REQUIRE_MPI_RESTRICTED or a stricter level
 * (THREAD_SAFE under MPI_THREAD_MULTIPLE); the least strict suitable one is
 * used. With none suitable the event is dropped and counted, and the
 * registration's dropped handler hears of it before its next delivery.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/info.h"
#include "core/mpit/event.h"
#include "core/mpit/mpit.h"
#include "core/mpit/mpit_internal.h"
#include "core/mpit/pvar.h"
#include "core/runtime.h"

#define MAX_ELEMENTS 4
#define NSAFETY      4

int weft_event_armed[WEFT_EVENT_COUNT];

static const struct {
    const char *name;
    const char *module;
    const char *verbosity;
    const char *elements;
    const char *help;
} event_descs[WEFT_EVENT_COUNT] = {
#define WEFT_EVENT(_name, _cat, _verb, _elems, _help) {#_name, #_cat, #_verb, _elems, _help},
#include "core/mpit/events.def"
#undef WEFT_EVENT
};

static const MPI_T_cb_safety safety_levels[NSAFETY] = {
    MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_T_CB_REQUIRE_THREAD_SAFE,
    MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE};

struct MPI_ABI_T_event_registration {
    uint32_t                              magic;
    int                                   id;
    MPI_T_event_cb_function              *cb[NSAFETY];
    void                                 *user_data[NSAFETY];
    MPI_T_event_dropped_cb_function      *dropped_cb;
    MPI_Count                             dropped;
    struct MPI_ABI_T_event_registration *next;
};

struct MPI_ABI_T_event_instance {
    uint32_t magic;
    int      id;
    uint64_t timestamp;
    int64_t  elements[MAX_ELEMENTS];
};

static struct MPI_ABI_T_event_registration *registrations;

int mpit_event_num(void)
{
    return WEFT_EVENT_COUNT;
}

const char *mpit_event_module(int index)
{
    return event_descs[index].module;
}

static int element_count(int id)
{
    int         n = 1;
    const char *p = event_descs[id].elements;

    while ((p = strchr(p, ',')) != NULL) {
        p++;
        n++;
    }
    return n;
}

static int safety_slot(MPI_T_cb_safety s)
{
    for (int i = 0; i < NSAFETY; i++) {
        if (safety_levels[i] == s) {
            return i;
        }
    }
    return -1;
}

static void rearm(int id)
{
    int armed = 0;
    for (struct MPI_ABI_T_event_registration *r = registrations; r; r = r->next) {
        for (int s = 0; s < NSAFETY; s++) {
            armed |= r->id == id && r->cb[s] != NULL;
        }
    }
    weft_event_armed[id] = armed;
}

void weft_event_raise(weft_event_id_t id, int64_t e0, int64_t e1, int64_t e2, int64_t e3)
{
    struct MPI_ABI_T_event_instance inst = {MPIT_MAGIC_EVINST, (int)id, weft_pvar_now_ns(),
                                            {e0, e1, e2, e3}};
    /* Inside the library: callbacks must at least be MPI-restricted. */
    const int need = weft_runtime.thread_level == MPI_THREAD_MULTIPLE ? 2 : 1;
    struct {
        struct MPI_ABI_T_event_registration *reg;
        MPI_T_event_cb_function             *cb;
        void                                *user_data;
        MPI_T_cb_safety                      safety;
        MPI_T_event_dropped_cb_function     *dropped_cb;
        MPI_Count                            dropped;
    } calls[16];
    int ncalls = 0;

    mpit_lock();
    for (struct MPI_ABI_T_event_registration *r = registrations; r; r = r->next) {
        int slot = -1;
        if (r->id != (int)id) {
            continue;
        }
        for (int s = need; s < NSAFETY && slot < 0; s++) {
            slot = r->cb[s] ? s : -1;
        }
        if (slot < 0 || ncalls == (int)(sizeof(calls) / sizeof(calls[0]))) {
            r->dropped++;
            continue;
        }
        calls[ncalls].reg        = r;
        calls[ncalls].cb         = r->cb[slot];
        calls[ncalls].user_data  = r->user_data[slot];
        calls[ncalls].safety     = safety_levels[slot];
        calls[ncalls].dropped_cb = r->dropped_cb;
        calls[ncalls].dropped    = r->dropped;
        r->dropped               = 0;
        ncalls++;
    }
    mpit_unlock();
    for (int i = 0; i < ncalls; i++) {
        if (calls[i].dropped > 0 && calls[i].dropped_cb != NULL) {
            calls[i].dropped_cb(calls[i].dropped, calls[i].reg, 0, calls[i].safety, calls[i].user_data);
        }
        calls[i].cb(&inst, calls[i].reg, calls[i].safety, calls[i].user_data);
    }
}

/* ---- event types ------------------------------------------------------------ */

static void event_name(int id, char *buf, size_t len)
{
    size_t i = 0;
    snprintf(buf, len, "weft_");
    for (const char *p = event_descs[id].name; *p && i + 6 < len; p++, i++) {
        buf[5 + i] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    }
    buf[5 + i] = '\0';
}

int weft_mpit_event_get_num(int *num_events)
{
    if (num_events == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_events = WEFT_EVENT_COUNT;
    return MPI_SUCCESS;
}

int weft_mpit_event_get_index(const char *name, int *event_index)
{
    char buf[96];

    if (name == NULL || event_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    for (int id = 0; id < WEFT_EVENT_COUNT; id++) {
        event_name(id, buf, sizeof(buf));
        if (strcmp(buf, name) == 0) {
            *event_index = id;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

static int new_info(MPI_Info *info)
{
    weft_info_t *obj = weft_info_new();
    if (obj == NULL) {
        return MPI_T_ERR_MEMORY;
    }
    *info = weft_object_handle(obj);
    return MPI_SUCCESS;
}

int weft_mpit_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                             MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                             int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                             int *desc_len, int *bind)
{
    char buf[96];

    if (event_index < 0 || event_index >= WEFT_EVENT_COUNT) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    const int n = element_count(event_index);
    event_name(event_index, buf, sizeof(buf));
    mpit_string_out(buf, name, name_len);
    mpit_string_out(event_descs[event_index].help, desc, desc_len);
    if (verbosity) *verbosity = mpit_verbosity(event_descs[event_index].verbosity);
    if (num_elements) {
        for (int i = 0; i < n && i < *num_elements; i++) {
            if (array_of_datatypes) array_of_datatypes[i] = MPI_COUNT;
            if (array_of_displacements) array_of_displacements[i] = (MPI_Aint)(i * sizeof(int64_t));
        }
        *num_elements = n;
    }
    if (enumtype) *enumtype = MPI_T_ENUM_NULL;
    if (bind) *bind = MPI_T_BIND_NO_OBJECT;
    if (info) {
        return new_info(info);
    }
    return MPI_SUCCESS;
}

/* ---- registrations ---------------------------------------------------------- */

/* Live registrations are the ones on the list: a freed or foreign handle is
 * rejected without being dereferenced. */
static int reg_valid(MPI_T_event_registration r)
{
    for (struct MPI_ABI_T_event_registration *x = registrations; x; x = x->next) {
        if (x == r) {
            return 1;
        }
    }
    return 0;
}

static int inst_valid(MPI_T_event_instance e)
{
    return e != NULL && (uintptr_t)e >= 4096 && e->magic == MPIT_MAGIC_EVINST;
}

int weft_mpit_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                                 MPI_T_event_registration *event_registration)
{
    (void)obj_handle; /* events are per process */
    (void)info;       /* no hints are understood */
    if (event_index < 0 || event_index >= WEFT_EVENT_COUNT) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (event_registration == NULL) {
        return MPI_T_ERR_INVALID;
    }
    struct MPI_ABI_T_event_registration *r = calloc(1, sizeof(*r));
    if (r == NULL) {
        return MPI_T_ERR_OUT_OF_HANDLES;
    }
    r->magic            = MPIT_MAGIC_EVREG;
    r->id               = event_index;
    r->next             = registrations;
    registrations       = r;
    *event_registration = r;
    return MPI_SUCCESS;
}

static void reg_unlink(struct MPI_ABI_T_event_registration *r)
{
    struct MPI_ABI_T_event_registration **pp = &registrations;
    while (*pp && *pp != r) {
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = r->next;
    }
    rearm(r->id);
    r->magic = MPIT_MAGIC_FREED;
}

int weft_mpit_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                                MPI_T_event_free_cb_function *free_cb_function)
{
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    reg_unlink(event_registration);
    if (free_cb_function != NULL) {
        /* Called from the MPI_T call itself: no restriction applies. */
        mpit_unlock();
        free_cb_function(event_registration, MPI_T_CB_REQUIRE_NONE, user_data);
        mpit_lock();
    }
    free(event_registration);
    return MPI_SUCCESS;
}

void mpit_event_free_all(void)
{
    while (registrations) {
        struct MPI_ABI_T_event_registration *r = registrations;
        reg_unlink(r);
        free(r);
    }
}

int weft_mpit_event_register_callback(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                      MPI_T_event_cb_function *event_cb_function)
{
    (void)info;
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    int slot = safety_slot(cb_safety);
    if (slot < 0) {
        return MPI_T_ERR_INVALID;
    }
    event_registration->cb[slot]        = event_cb_function; /* NULL removes it */
    event_registration->user_data[slot] = user_data;
    rearm(event_registration->id);
    return MPI_SUCCESS;
}

int weft_mpit_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                        MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    event_registration->dropped_cb = dropped_cb_function;
    return MPI_SUCCESS;
}

int weft_mpit_event_callback_get_info(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (safety_slot(cb_safety) < 0 || info_used == NULL) {
        return MPI_T_ERR_INVALID;
    }
    return new_info(info_used);
}

int weft_mpit_event_callback_set_info(MPI_T_event_registration event_registration,
                                      MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)info; /* no hints are understood */
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    return safety_slot(cb_safety) < 0 ? MPI_T_ERR_INVALID : MPI_SUCCESS;
}

int weft_mpit_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    if (!reg_valid(event_registration)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (info_used == NULL) {
        return MPI_T_ERR_INVALID;
    }
    return new_info(info_used);
}

int weft_mpit_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)info;
    return reg_valid(event_registration) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

/* ---- instances (valid during the callback) ---------------------------------- */

int weft_mpit_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    if (!inst_valid(event_instance)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (element_index < 0 || element_index >= element_count(event_instance->id)) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (buffer == NULL) {
        return MPI_T_ERR_INVALID;
    }
    memcpy(buffer, &event_instance->elements[element_index], sizeof(int64_t));
    return MPI_SUCCESS;
}

int weft_mpit_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    if (!inst_valid(event_instance)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buffer == NULL) {
        return MPI_T_ERR_INVALID;
    }
    memcpy(buffer, event_instance->elements,
           (size_t)element_count(event_instance->id) * sizeof(int64_t));
    return MPI_SUCCESS;
}

int weft_mpit_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    if (!inst_valid(event_instance)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (event_timestamp == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *event_timestamp = (MPI_Count)event_instance->timestamp;
    return MPI_SUCCESS;
}

int weft_mpit_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    if (!inst_valid(event_instance)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (source_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *source_index = 0; /* the monotonic clock */
    return MPI_SUCCESS;
}

/* ---- sources ------------------------------------------------------------------ */

int weft_mpit_source_get_num(int *num_sources)
{
    if (num_sources == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_sources = 1;
    return MPI_SUCCESS;
}

int weft_mpit_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                              MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                              MPI_Count *max_ticks, MPI_Info *info)
{
    if (source_index != 0) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    mpit_string_out("weft_monotonic_clock", name, name_len);
    mpit_string_out("CLOCK_MONOTONIC in nanoseconds; events of one process are ordered", desc,
                    desc_len);
    if (ordering) *ordering = MPI_T_SOURCE_ORDERED;
    if (ticks_per_second) *ticks_per_second = 1000000000;
    if (max_ticks) *max_ticks = INT64_MAX;
    if (info) {
        return new_info(info);
    }
    return MPI_SUCCESS;
}

int weft_mpit_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    if (source_index != 0) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (timestamp == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *timestamp = (MPI_Count)weft_pvar_now_ns();
    return MPI_SUCCESS;
}
