/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "buf.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

int weft_buf_append(weft_buf_t *buf, const void *data, size_t n)
{
    if (buf->len + n > buf->cap) {
        size_t cap  = buf->cap ? buf->cap : 256;
        char  *grown;
        while (cap < buf->len + n) {
            cap *= 2;
        }
        grown = realloc(buf->data, cap);
        if (grown == NULL) {
            return -1;
        }
        buf->data = grown;
        buf->cap  = cap;
    }
    if (n > 0) {
        memcpy(buf->data + buf->len, data, n);
    }
    buf->len += n;
    return 0;
}

int weft_buf_append_str0(weft_buf_t *buf, const char *s)
{
    return weft_buf_append(buf, s, strlen(s) + 1);
}

void weft_buf_consume(weft_buf_t *buf, size_t n)
{
    if (n >= buf->len) {
        buf->len = 0;
        return;
    }
    memmove(buf->data, buf->data + n, buf->len - n);
    buf->len -= n;
}

void weft_buf_free(weft_buf_t *buf)
{
    free(buf->data);
    buf->data = NULL;
    buf->len = buf->cap = 0;
}

int weft_fd_set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL);
    return fl < 0 ? -1 : fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

int weft_fd_set_nodelay(int fd)
{
    int on = 1;
    return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
}

int weft_fd_set_cloexec(int fd, int on)
{
    int fl = fcntl(fd, F_GETFD);
    if (fl < 0) {
        return -1;
    }
    return fcntl(fd, F_SETFD, on ? (fl | FD_CLOEXEC) : (fl & ~FD_CLOEXEC));
}

long long weft_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
