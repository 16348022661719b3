/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The one CHECK macro of test programs whose "who am I" is not
 * MPI_Comm_rank(MPI_COMM_WORLD) (sessions-only and OpenSHMEM programs).
 * The includer defines CHECK_COUNTER (the failure count variable),
 * CHECK_WHO (an int expression: rank or PE) and CHECK_WHO_NAME ("rank", "PE"). */
#ifndef WEFT_CHECKS_H
#define WEFT_CHECKS_H

#include <stdio.h>

#define CHECK(_c, ...)                                                                             \
    do {                                                                                          \
        if (!(_c)) {                                                                              \
            fprintf(stderr, "FAIL %s %d %s:%d: %s: ", CHECK_WHO_NAME, (int)(CHECK_WHO), __FILE__, \
                    __LINE__, #_c);                                                               \
            fprintf(stderr, __VA_ARGS__);                                                         \
            fputc('\n', stderr);                                                                  \
            CHECK_COUNTER++;                                                                      \
        }                                                                                         \
    } while (0)

#endif
