/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Shared between the MPI_T files: the lock, string return, enums, categories.
 */
#ifndef WEFT_CORE_MPIT_MPIT_INTERNAL_H
#define WEFT_CORE_MPIT_MPIT_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <mpi.h>

#include "core/mpit/mpit.h" /* mpit_lock / mpit_unlock */

#define MPIT_MAGIC_ENUM    0x4d54454eu
#define MPIT_MAGIC_CVAR    0x4d544356u
#define MPIT_MAGIC_SESSION 0x4d545353u
#define MPIT_MAGIC_PVAR    0x4d545056u
#define MPIT_MAGIC_EVREG   0x4d544552u
#define MPIT_MAGIC_EVINST  0x4d544549u
#define MPIT_MAGIC_FREED   0xdeadbeefu

/* An enumeration: items from a "a|b|c" string or an array of names. */
struct MPI_ABI_T_enum {
    uint32_t           magic;
    const char        *name;
    int                count;
    const char        *bar_values;
    const char *const *items;
};

/* Copy s into buf of *len bytes (MPI_T string rules: *len 0 or buf NULL
 * returns only the needed length; otherwise truncate and set the length used). */
void mpit_string_out(const char *s, char *buf, int *len);

int         mpit_verbosity(const char *tier);
const char *mpit_category_name(int cat, char *buf, size_t len);

/* pvar.c / event.c pieces used by the category functions and finalize. */
int         mpit_pvar_num(void);
const char *mpit_pvar_module(int index);
int         mpit_event_num(void);
const char *mpit_event_module(int index);
void        mpit_pvar_free_all(void);
void        mpit_event_free_all(void);
MPI_T_enum  mpit_pvar_state_enum(void);

#endif
