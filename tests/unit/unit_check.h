/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * CHECK for the C unit tests: a failed condition is printed with its line
 * and counted in `failures`, and the test goes on.
 */
#ifndef WEFT_UNIT_CHECK_H
#define WEFT_UNIT_CHECK_H

#include <stdio.h>

static int failures;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        if (!(cond)) {                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
            failures++;                                                                \
        }                                                                              \
    } while (0)

#endif
