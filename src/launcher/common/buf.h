/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Growable byte buffer and small fd helpers shared by mpiexec and weft-proxy.
 */
#ifndef WEFT_LAUNCHER_BUF_H
#define WEFT_LAUNCHER_BUF_H

#include <stddef.h>

typedef struct {
    char  *data;
    size_t len;
    size_t cap;
} weft_buf_t;

/* Append n bytes. Returns 0, or -1 when out of memory. */
int  weft_buf_append(weft_buf_t *buf, const void *data, size_t n);
/* Append a NUL-terminated string including its NUL. */
int  weft_buf_append_str0(weft_buf_t *buf, const char *s);
/* Drop n bytes from the front. */
void weft_buf_consume(weft_buf_t *buf, size_t n);
void weft_buf_free(weft_buf_t *buf);

int weft_fd_set_nonblock(int fd);
int weft_fd_set_cloexec(int fd, int on);
/* TCP_NODELAY on a launcher connection: its messages are small writes in
 * a row (a header, then its payload), which Nagle would hold back until the
 * peer's delayed ACK, 40 ms later. */
int weft_fd_set_nodelay(int fd);

/* Milliseconds on the monotonic clock. */
long long weft_now_ms(void);

#endif
