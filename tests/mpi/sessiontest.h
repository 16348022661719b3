/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Check helpers for programs that use only the sessions model (no
 * MPI_Init, so mpitest.h's MPI_COMM_WORLD calls are not available): set
 * `me` to the rank once known; a program exits non-zero when `errors`.
 */
#ifndef WEFT_SESSIONTEST_H
#define WEFT_SESSIONTEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int errors, me = -1;

#define CHECK_COUNTER  errors
#define CHECK_WHO      me
#define CHECK_WHO_NAME "rank"
#include "checks.h"

#define CHECK_CLASS(_call, _want)                                                       \
    do {                                                                                \
        int _rc = (_call), _cls = -1;                                                   \
        MPI_Error_class(_rc, &_cls);                                                    \
        CHECK(_cls == (_want), "%s: class %d, want %s", #_call, _cls, #_want);          \
    } while (0)
#define CHECK_OK(_call) CHECK_CLASS(_call, MPI_SUCCESS)

#endif
