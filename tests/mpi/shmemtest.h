/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * CHECK for OpenSHMEM test programs: failures are reported by PE, and
 * shmemtest_finish() turns the count into the exit code and the "No Errors"
 * line (over all PEs). The macro itself is tests/mpi/checks.h. */
#ifndef WEFT_SHMEMTEST_H
#define WEFT_SHMEMTEST_H

#include <shmem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errs;
#define CHECK_COUNTER  errs
#define CHECK_WHO      shmem_my_pe()
#define CHECK_WHO_NAME "PE"
#include "checks.h"

/* Is pe on this PE's node (shmem_ptr gives a pointer only then)? */
static inline int shmemtest_same_node(int pe)
{
    return shmem_team_translate_pe(SHMEM_TEAM_WORLD, pe, SHMEM_TEAM_SHARED) >= 0;
}

/* Sums errs over all PEs; PE 0 prints "No Errors" when there were none.
 * Call before shmem_finalize; returns the exit code. */
static inline int shmemtest_finish(void)
{
    int *t = shmem_malloc(sizeof(int)), *m = shmem_malloc(sizeof(int));
    *m = errs;
    shmem_int_sum_reduce(SHMEM_TEAM_WORLD, t, m, 1);
    int total = *t;
    shmem_free(t);
    shmem_free(m);
    if (shmem_my_pe() == 0 && total == 0) {
        printf("No Errors\n");
    }
    return total != 0;
}

#endif
