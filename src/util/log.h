/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * One-line diagnostics on stderr, prefixed "weft" (and the rank once known).
 */
#ifndef WEFT_UTIL_LOG_H
#define WEFT_UTIL_LOG_H

#include <stdarg.h>

/* Set the prefix printed before each message, e.g. "weft[3]". */
void weft_log_set_prefix(const char *prefix);

void weft_log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void weft_log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print and exit(code). */
void weft_log_fatal(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3), noreturn));

#endif
