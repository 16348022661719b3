/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Performance variables: the counters of pvars.def, MPI_T sessions and
 * handles. A session's view of a counter is its own: the handle remembers the
 * counter at start/reset (base) and what it accumulated while started
 * (accum), so sessions never disturb each other or the library's counters.
 * Watermarks: the level macros keep the highest and lowest value since the
 * last fold (weft_pvar_hi/lo); whenever a watermark handle of that level
 * starts, resets or is written, every started handle of the level first
 * folds them into its own mark and they restart from the current level. A
 * started handle's value is its mark combined with them, so each handle sees
 * the extreme since its own start with no lock on the hot path.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/mpit/mpit.h"
#include "core/mpit/mpit_internal.h"
#include "core/mpit/pvar.h"
#include "core/comm.h"
#include "core/runtime.h"

uint64_t weft_pvar[WEFT_PVAR_COUNT];
uint64_t weft_pvar_peak[WEFT_PVAR_COUNT];
uint64_t weft_pvar_hi[WEFT_PVAR_COUNT];
uint64_t weft_pvar_lo[WEFT_PVAR_COUNT];

#define WEFT_PVAR_BIND_NO_OBJECT MPI_T_BIND_NO_OBJECT
#define WEFT_PVAR_BIND_COMM      MPI_T_BIND_MPI_COMM

static const struct {
    const char *name;
    int         var_class;
    const char *module;
    const char *verbosity;
    int         level; /* watched LEVEL row of a watermark, else -1 */
    int         bind;  /* MPI_T_BIND_NO_OBJECT or MPI_T_BIND_MPI_COMM */
    const char *help;
} pvar_descs[WEFT_PVAR_COUNT] = {
#define WEFT_PVAR(_name, _class, _cat, _verb, _level, _bind, _help) \
    {#_name, MPI_T_PVAR_CLASS_##_class, #_cat, #_verb, WEFT_PVAR_##_level, WEFT_PVAR_BIND_##_bind, _help},
#include "core/mpit/pvars.def"
#undef WEFT_PVAR
};

static const uint64_t *bound_values[WEFT_PVAR_COUNT];
static int             bound_count[WEFT_PVAR_COUNT];

static const char *const *bound_names[WEFT_PVAR_COUNT];
weft_traffic_t            *weft_traffic;
int                        weft_traffic_ranks;

void weft_pvar_bind_array(weft_pvar_id_t id, const uint64_t *values, int count)
{
    bound_values[id] = values;
    bound_count[id]  = count;
}

void weft_pvar_bind_names(weft_pvar_id_t id, const char *const *names)
{
    bound_names[id] = names;
}

const char *weft_pvar_element_name(weft_pvar_id_t id, int i)
{
    return bound_names[id] ? bound_names[id][i] : "";
}

int weft_pvar_element_count(weft_pvar_id_t id)
{
    return bound_values[id] ? bound_count[id] : 1;
}

uint64_t weft_pvar_element(weft_pvar_id_t id, int i)
{
    return bound_values[id] ? bound_values[id][i] : weft_pvar[id];
}

uint64_t weft_pvar_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int mpit_pvar_num(void)
{
    return WEFT_PVAR_COUNT;
}

const char *mpit_pvar_module(int index)
{
    return pvar_descs[index].module;
}

static const char *const state_items[] = {"uninitialized", "initialized", "finalized"};
static struct MPI_ABI_T_enum state_enum = {MPIT_MAGIC_ENUM, "weft_runtime_state", 3, NULL, state_items};

MPI_T_enum mpit_pvar_state_enum(void)
{
    return &state_enum;
}

static int is_current_value(int cls)
{
    return cls == MPI_T_PVAR_CLASS_LEVEL || cls == MPI_T_PVAR_CLASS_SIZE ||
           cls == MPI_T_PVAR_CLASS_STATE || cls == MPI_T_PVAR_CLASS_PERCENTAGE;
}

static int is_watermark(int cls)
{
    return cls == MPI_T_PVAR_CLASS_HIGHWATERMARK || cls == MPI_T_PVAR_CLASS_LOWWATERMARK;
}

static int pvar_count(int id)
{
    return bound_values[id] ? bound_count[id] : 1;
}

/* The library's current value of element i of pvar id (comm: of a COMM-bound row). */
static uint64_t current_of(int id, int i, const weft_comm_t *comm)
{
    switch (id) {
    case WEFT_PVAR_COMM_MSGS_SENT: return comm->pvar_msgs_sent;
    case WEFT_PVAR_COMM_BYTES_SENT: return comm->pvar_bytes_sent;
    case WEFT_PVAR_RUNTIME_STATE: return (uint64_t)weft_runtime.state;
    default: break;
    }
    if (is_watermark(pvar_descs[id].var_class)) {
        return weft_pvar[pvar_descs[id].level];
    }
    return bound_values[id] ? bound_values[id][i] : weft_pvar[id];
}


static double unexpected_fraction(void)
{
    uint64_t recv = weft_pvar[WEFT_PVAR_MSGS_RECEIVED];
    return recv ? (double)weft_pvar[WEFT_PVAR_UNEXP_MSGS] / (double)recv : 0.0;
}

/* ---- sessions and handles -------------------------------------------------- */

struct MPI_ABI_T_pvar_handle {
    uint32_t                      magic;
    MPI_T_pvar_session            session;
    int                           id;
    int                           count;
    int                           started;
    weft_comm_t                  *comm;  /* COMM-bound rows: the communicator (retained) */
    uint64_t                     *accum; /* counters: value while started; watermarks: the mark */
    uint64_t                     *base;  /* counters: library value at start/reset */
    struct MPI_ABI_T_pvar_handle *next;  /* in the session */
    struct MPI_ABI_T_pvar_handle *next_watch;
};

struct MPI_ABI_T_pvar_session {
    uint32_t                       magic;
    struct MPI_ABI_T_pvar_handle  *handles;
    struct MPI_ABI_T_pvar_session *next;
};

static struct MPI_ABI_T_pvar_session *sessions;
static struct MPI_ABI_T_pvar_handle  *watching; /* started watermark handles */

/* A watermark handle's mark combined with the extremes since the last fold. */
static uint64_t watermark(const struct MPI_ABI_T_pvar_handle *h)
{
    int      level = pvar_descs[h->id].level;
    uint64_t mark  = h->accum[0];

    if (!h->started) {
        return mark;
    }
    if (pvar_descs[h->id].var_class == MPI_T_PVAR_CLASS_HIGHWATERMARK) {
        return weft_pvar_hi[level] > mark ? weft_pvar_hi[level] : mark;
    }
    return weft_pvar_lo[level] < mark ? weft_pvar_lo[level] : mark;
}

/* Fold the extremes of level into every started handle, restart them. */
static void fold(int level)
{
    for (struct MPI_ABI_T_pvar_handle *h = watching; h; h = h->next_watch) {
        if (pvar_descs[h->id].level == level) {
            h->accum[0] = watermark(h);
        }
    }
    weft_pvar_hi[level] = weft_pvar_lo[level] = weft_pvar[level];
}

static void watch(struct MPI_ABI_T_pvar_handle *h, int on)
{
    struct MPI_ABI_T_pvar_handle **pp = &watching;

    while (*pp && *pp != h) {
        pp = &(*pp)->next_watch;
    }
    if (on && *pp == NULL) {
        h->next_watch = watching;
        watching      = h;
    } else if (!on && *pp == h) {
        *pp = h->next_watch;
    }
}

/* Live sessions and handles are the ones on the lists: a freed or foreign
 * handle is rejected without being dereferenced. */
static int session_valid(MPI_T_pvar_session s)
{
    for (struct MPI_ABI_T_pvar_session *x = sessions; x; x = x->next) {
        if (x == s) {
            return 1;
        }
    }
    return 0;
}

/* s must be valid. */
static int handle_in(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    for (struct MPI_ABI_T_pvar_handle *x = s->handles; x; x = x->next) {
        if (x == h) {
            return 1;
        }
    }
    return 0;
}

int weft_mpit_pvar_get_num(int *num_pvar)
{
    if (num_pvar == NULL) {
        return MPI_T_ERR_INVALID;
    }
    *num_pvar = WEFT_PVAR_COUNT;
    return MPI_SUCCESS;
}

static void pvar_name(int id, char *buf, size_t len)
{
    size_t i = 0;
    snprintf(buf, len, "weft_");
    for (const char *p = pvar_descs[id].name; *p && i + 6 < len; p++, i++) {
        buf[5 + i] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    }
    buf[5 + i] = '\0';
}

static MPI_Datatype pvar_datatype(int cls)
{
    return cls == MPI_T_PVAR_CLASS_STATE        ? MPI_INT
           : cls == MPI_T_PVAR_CLASS_PERCENTAGE ? MPI_DOUBLE
                                                : MPI_UNSIGNED_LONG_LONG;
}

int weft_mpit_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                            MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                            int *bind, int *readonly, int *continuous, int *atomic)
{
    char buf[96];

    if (pvar_index < 0 || pvar_index >= WEFT_PVAR_COUNT) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    const int cls = pvar_descs[pvar_index].var_class;
    pvar_name(pvar_index, buf, sizeof(buf));
    mpit_string_out(buf, name, name_len);
    mpit_string_out(pvar_descs[pvar_index].help, desc, desc_len);
    if (verbosity) *verbosity = mpit_verbosity(pvar_descs[pvar_index].verbosity);
    if (var_class) *var_class = cls;
    if (datatype) *datatype = pvar_datatype(cls);
    if (enumtype) *enumtype = cls == MPI_T_PVAR_CLASS_STATE ? mpit_pvar_state_enum() : MPI_T_ENUM_NULL;
    if (bind) *bind = pvar_descs[pvar_index].bind;
    if (readonly) *readonly = is_current_value(cls);
    if (continuous) *continuous = is_current_value(cls);
    if (atomic) *atomic = 0; /* the library updates counters without atomics */
    return MPI_SUCCESS;
}

int weft_mpit_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    char buf[96];

    if (name == NULL || pvar_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    for (int id = 0; id < WEFT_PVAR_COUNT; id++) {
        pvar_name(id, buf, sizeof(buf));
        if (strcmp(buf, name) == 0 && pvar_descs[id].var_class == var_class) {
            *pvar_index = id;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_NAME;
}

int weft_mpit_pvar_session_create(MPI_T_pvar_session *session)
{
    if (session == NULL) {
        return MPI_T_ERR_INVALID;
    }
    struct MPI_ABI_T_pvar_session *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return MPI_T_ERR_OUT_OF_SESSIONS;
    }
    s->magic = MPIT_MAGIC_SESSION;
    s->next  = sessions;
    sessions = s;
    *session = s;
    return MPI_SUCCESS;
}

static void handle_destroy(struct MPI_ABI_T_pvar_handle *h)
{
    watch(h, 0);
    if (h->comm != NULL) {
        weft_comm_release(h->comm);
    }
    h->magic = MPIT_MAGIC_FREED;
    free(h->accum);
    free(h);
}

static void session_destroy(struct MPI_ABI_T_pvar_session *s)
{
    struct MPI_ABI_T_pvar_session **pp = &sessions;

    while (s->handles) {
        struct MPI_ABI_T_pvar_handle *h = s->handles;
        s->handles                      = h->next;
        handle_destroy(h);
    }
    while (*pp && *pp != s) {
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = s->next;
    }
    s->magic = MPIT_MAGIC_FREED;
    free(s);
}

int weft_mpit_pvar_session_free(MPI_T_pvar_session *session)
{
    if (session == NULL || !session_valid(*session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    session_destroy(*session);
    *session = MPI_T_PVAR_SESSION_NULL;
    return MPI_SUCCESS;
}

void mpit_pvar_free_all(void)
{
    while (sessions) {
        session_destroy(sessions);
    }
}

/* Counter: what the session has seen; watermark: its mark. */
static uint64_t session_value(const struct MPI_ABI_T_pvar_handle *h, int i)
{
    if (is_watermark(pvar_descs[h->id].var_class)) {
        return watermark(h);
    }
    return h->accum[i] + (h->started ? current_of(h->id, i, h->comm) - h->base[i] : 0);
}

static void restart(struct MPI_ABI_T_pvar_handle *h)
{
    if (is_watermark(pvar_descs[h->id].var_class) && h->started) {
        fold(pvar_descs[h->id].level);
    }
    for (int i = 0; i < h->count; i++) {
        h->accum[i] = is_watermark(pvar_descs[h->id].var_class) ? current_of(h->id, i, h->comm) : 0;
        h->base[i]  = current_of(h->id, i, h->comm);
    }
}

int weft_mpit_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                                MPI_T_pvar_handle *handle, int *count)
{
    weft_comm_t *comm = NULL;

    if (!session_valid(session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    if (pvar_index < 0 || pvar_index >= WEFT_PVAR_COUNT) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    if (handle == NULL || count == NULL) {
        return MPI_T_ERR_INVALID;
    }
    if (pvar_descs[pvar_index].bind == MPI_T_BIND_MPI_COMM) {
        /* obj_handle points to the MPI_Comm the handle is for. */
        comm = obj_handle ? weft_comm_from_handle(*(const MPI_Comm *)obj_handle) : NULL;
        if (comm == NULL) {
            return MPI_T_ERR_INVALID_HANDLE;
        }
    }
    struct MPI_ABI_T_pvar_handle *h = calloc(1, sizeof(*h));
    int                           n = pvar_count(pvar_index);
    if (h == NULL || (h->accum = calloc(2 * (size_t)(n > 0 ? n : 1), sizeof(uint64_t))) == NULL) {
        free(h);
        return MPI_T_ERR_OUT_OF_HANDLES;
    }
    h->magic   = MPIT_MAGIC_PVAR;
    h->comm    = comm;
    if (comm != NULL) {
        weft_comm_retain(comm); /* the counters outlive MPI_Comm_free while the handle lives */
    }
    h->session = session;
    h->id      = pvar_index;
    h->count   = n;
    h->base    = h->accum + (n > 0 ? n : 1);
    h->started = is_current_value(pvar_descs[pvar_index].var_class); /* continuous */
    restart(h);
    h->next          = session->handles;
    session->handles = h;
    *handle          = h;
    *count           = n;
    return MPI_SUCCESS;
}

int weft_mpit_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    if (!session_valid(session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    if (handle == NULL || !handle_in(session, *handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    struct MPI_ABI_T_pvar_handle **pp = &session->handles;
    while (*pp != *handle) {
        pp = &(*pp)->next;
    }
    *pp = (*handle)->next;
    handle_destroy(*handle);
    *handle = MPI_T_PVAR_HANDLE_NULL;
    return MPI_SUCCESS;
}

static int start_one(struct MPI_ABI_T_pvar_handle *h)
{
    if (is_current_value(pvar_descs[h->id].var_class)) {
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    }
    if (!h->started) {
        for (int i = 0; i < h->count; i++) {
            h->base[i] = current_of(h->id, i, h->comm);
        }
        if (is_watermark(pvar_descs[h->id].var_class)) {
            fold(pvar_descs[h->id].level);
            h->accum[0] = current_of(h->id, 0, h->comm); /* the mark starts at the level now */
            watch(h, 1);
        }
        h->started = 1;
    }
    return MPI_SUCCESS;
}

static int stop_one(struct MPI_ABI_T_pvar_handle *h)
{
    if (is_current_value(pvar_descs[h->id].var_class)) {
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    }
    if (h->started) {
        for (int i = 0; i < h->count; i++) {
            h->accum[i] = session_value(h, i);
        }
        watch(h, 0);
        h->started = 0;
    }
    return MPI_SUCCESS;
}

static int reset_one(struct MPI_ABI_T_pvar_handle *h)
{
    if (is_current_value(pvar_descs[h->id].var_class)) {
        return MPI_T_ERR_PVAR_NO_WRITE;
    }
    restart(h);
    return MPI_SUCCESS;
}

/* Apply op to one handle, or to every handle of the session it applies to. */
static int each_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle,
                       int (*op)(struct MPI_ABI_T_pvar_handle *))
{
    if (!session_valid(session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        for (struct MPI_ABI_T_pvar_handle *h = session->handles; h; h = h->next) {
            if (!is_current_value(pvar_descs[h->id].var_class)) {
                (void)op(h);
            }
        }
        return MPI_SUCCESS;
    }
    if (!handle_in(session, handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    return op(handle);
}

int weft_mpit_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each_handle(session, handle, start_one);
}

int weft_mpit_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each_handle(session, handle, stop_one);
}

int weft_mpit_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return each_handle(session, handle, reset_one);
}

int weft_mpit_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    if (!session_valid(session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    if (!handle_in(session, handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return MPI_T_ERR_INVALID;
    }
    switch (pvar_descs[handle->id].var_class) {
    case MPI_T_PVAR_CLASS_STATE: {
        int v = (int)current_of(handle->id, 0, handle->comm);
        memcpy(buf, &v, sizeof(v));
        return MPI_SUCCESS;
    }
    case MPI_T_PVAR_CLASS_PERCENTAGE: {
        double v = unexpected_fraction();
        memcpy(buf, &v, sizeof(v));
        return MPI_SUCCESS;
    }
    default: break;
    }
    for (int i = 0; i < handle->count; i++) {
        uint64_t v = is_current_value(pvar_descs[handle->id].var_class) ? current_of(handle->id, i, handle->comm)
                                                                         : session_value(handle, i);
        memcpy((char *)buf + (size_t)i * sizeof(v), &v, sizeof(v));
    }
    return MPI_SUCCESS;
}

int weft_mpit_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    int rc;

    if (session_valid(session) && handle_in(session, handle) &&
        is_current_value(pvar_descs[handle->id].var_class)) {
        return MPI_T_ERR_PVAR_NO_WRITE;
    }
    rc = weft_mpit_pvar_read(session, handle, buf);
    return rc == MPI_SUCCESS ? reset_one(handle) : rc;
}

int weft_mpit_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    if (!session_valid(session)) {
        return MPI_T_ERR_INVALID_SESSION;
    }
    if (!handle_in(session, handle)) {
        return MPI_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return MPI_T_ERR_INVALID;
    }
    if (is_current_value(pvar_descs[handle->id].var_class)) {
        return MPI_T_ERR_PVAR_NO_WRITE;
    }
    /* The session's value becomes buf; later changes add to it. */
    if (is_watermark(pvar_descs[handle->id].var_class) && handle->started) {
        fold(pvar_descs[handle->id].level);
    }
    for (int i = 0; i < handle->count; i++) {
        memcpy(&handle->accum[i], (const char *)buf + (size_t)i * sizeof(uint64_t), sizeof(uint64_t));
        handle->base[i] = current_of(handle->id, i, handle->comm);
    }
    return MPI_SUCCESS;
}
