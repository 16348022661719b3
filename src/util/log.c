/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char log_prefix[64] = "weft";

void weft_log_set_prefix(const char *prefix)
{
    snprintf(log_prefix, sizeof(log_prefix), "%s", prefix);
}

static void log_emit(const char *level, const char *fmt, va_list ap)
{
    char line[2048];
    int  n = snprintf(line, sizeof(line), "%s: %s: ", log_prefix, level);

    if (n < 0 || (size_t)n >= sizeof(line)) {
        n = 0;
    }
    vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    n = (int)strlen(line);
    if (n == (int)sizeof(line) - 1) {
        n--;
    }
    line[n++] = '\n';
    /* One write() so lines from different ranks do not interleave. */
    if (write(STDERR_FILENO, line, (size_t)n) < 0) {
        /* nothing more we can do */
    }
}

void weft_log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("error", fmt, ap);
    va_end(ap);
}

void weft_log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("warning", fmt, ap);
    va_end(ap);
}

void weft_log_fatal(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_emit("error", fmt, ap);
    va_end(ap);
    exit(code);
}
