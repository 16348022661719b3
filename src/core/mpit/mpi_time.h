/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Time spent inside MPI calls, for the job report. The generated entry points
 * (WEFT_API_ENTER / WEFT_API_EXIT_AS in src/api/api.h) read the clock only
 * when the report is on; when it is off the cost is one predictable branch
 * on weft_mpi_time_on. Nested calls (a callback calling MPI) count once: only
 * the outermost call of a thread reads the clock.
 */
#ifndef WEFT_CORE_MPIT_MPI_TIME_H
#define WEFT_CORE_MPIT_MPI_TIME_H

#include <stdint.h>

/* Call classes: the category of the function in maint/abi/functions.tsv
 * (pt2pt includes the completion calls MPI_Wait/Test*, whatever they complete). */
typedef enum {
    WEFT_CALL_PT2PT,
    WEFT_CALL_COLL,
    WEFT_CALL_RMA,
    WEFT_CALL_IO,
    WEFT_CALL_OTHER,
    WEFT_CALL_NCLASSES
} weft_call_class_t;

#define WEFT_CALL_CLASS_NAMES {"pt2pt", "coll", "rma", "io", "other"}

/* Set at the end of MPI_Init when the report is wanted, cleared at finalize. */
extern int weft_mpi_time_on;
/* Nanoseconds inside MPI calls, per class, summed over the process's threads. */
extern uint64_t weft_mpi_time_ns[WEFT_CALL_NCLASSES];

void weft_mpi_time_enter(void);
void weft_mpi_time_exit(weft_call_class_t cls);

#endif
