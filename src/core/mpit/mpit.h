/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The MPI_T tool interface (MPI-4 chapter 15): control variables from the
 * tunables table, performance variables from pvars.def, categories, events
 * and sources. Every function has the signature and error classes of the
 * MPI_T function of the same name; src/api/custom/mpit.c exports them. They
 * work before MPI_Init and after MPI_Finalize, return their error class and
 * never call an error handler (MPI_T has none).
 */
#ifndef WEFT_CORE_MPIT_MPIT_H
#define WEFT_CORE_MPIT_MPIT_H

#include <mpi.h>

#define WEFT_MPIT_FN(_ret, _name, _params, _args) _ret weft_mpit_##_name _params;
#include "core/mpit/mpit_functions.def"
#undef WEFT_MPIT_FN

/* The MPI_T lock (recursive), held by every MPI_T entry point; all MPI_T
 * state is under it (MPI_T is thread-safe whatever the MPI thread level).
 * Event callbacks run without it. */
void mpit_lock(void);
void mpit_unlock(void);

/* MPI_T_init_thread has been called more times than MPI_T_finalize. */
int weft_mpit_active(void);


#endif
