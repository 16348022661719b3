/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "ctl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CTL_MAX_PAYLOAD (64u << 20)

void weft_ctl_conn_init(weft_ctl_conn_t *conn, int fd)
{
    memset(conn, 0, sizeof(*conn));
    conn->fd = fd;
    weft_fd_set_nonblock(fd);
}

void weft_ctl_conn_fini(weft_ctl_conn_t *conn)
{
    if (conn->fd >= 0) {
        close(conn->fd);
    }
    conn->fd = -1;
    weft_buf_free(&conn->in);
    weft_buf_free(&conn->out);
}

int weft_ctl_flush(weft_ctl_conn_t *conn)
{
    while (conn->out.len > 0 && conn->fd >= 0) {
        ssize_t n = send(conn->fd, conn->out.data, conn->out.len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 0;
        }
        if (n <= 0) {
            return -1;
        }
        weft_buf_consume(&conn->out, (size_t)n);
    }
    return 0;
}

void weft_ctl_flush_wait(weft_ctl_conn_t *conn, int timeout_ms)
{
    long long deadline = weft_now_ms() + timeout_ms;

    while (conn->out.len > 0 && conn->fd >= 0) {
        struct pollfd pfd  = {.fd = conn->fd, .events = POLLOUT};
        long long     left = deadline - weft_now_ms();
        if (left <= 0 || weft_ctl_flush(conn) != 0) {
            return;
        }
        if (conn->out.len > 0) {
            poll(&pfd, 1, (int)left);
        }
    }
}

int weft_ctl_encode(weft_buf_t *out, int type, int a0, int a1, const void *data, size_t len)
{
    weft_ctl_hdr_t hdr = {htonl((uint32_t)type), htonl((uint32_t)len), (int32_t)htonl((uint32_t)a0),
                          (int32_t)htonl((uint32_t)a1)};

    if (weft_buf_append(out, &hdr, sizeof(hdr)) != 0 || weft_buf_append(out, data, len) != 0) {
        return -1;
    }
    return 0;
}

int weft_ctl_decode(const char *data, size_t len, weft_ctl_hdr_t *hdr, const char **payload_p)
{
    weft_ctl_hdr_t raw;

    if (len < sizeof(raw)) {
        return -1;
    }
    memcpy(&raw, data, sizeof(raw));
    hdr->type = ntohl(raw.type);
    hdr->len  = ntohl(raw.len);
    hdr->a0   = (int32_t)ntohl((uint32_t)raw.a0);
    hdr->a1   = (int32_t)ntohl((uint32_t)raw.a1);
    if (hdr->len != len - sizeof(raw)) {
        return -1;
    }
    *payload_p = data + sizeof(raw);
    return 0;
}

int weft_ctl_send(weft_ctl_conn_t *conn, int type, int a0, int a1, const void *data, size_t len)
{
    if (weft_ctl_encode(&conn->out, type, a0, a1, data, len) != 0) {
        return -1;
    }
    return weft_ctl_flush(conn);
}

int weft_ctl_read(weft_ctl_conn_t *conn)
{
    char chunk[65536];

    for (;;) {
        ssize_t n = read(conn->fd, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            return 1;
        }
        if (n < 0) {
            return -1;
        }
        if (n == 0) {
            conn->eof = 1;
            return 0;
        }
        if (weft_buf_append(&conn->in, chunk, (size_t)n) != 0) {
            return -1;
        }
        if ((size_t)n < sizeof(chunk)) {
            return 1;
        }
    }
}

int weft_ctl_next(weft_ctl_conn_t *conn, weft_ctl_hdr_t *hdr, char **payload_p)
{
    weft_ctl_hdr_t raw;
    char          *payload;

    if (conn->in.len < sizeof(raw)) {
        return 0;
    }
    memcpy(&raw, conn->in.data, sizeof(raw));
    hdr->type = ntohl(raw.type);
    hdr->len  = ntohl(raw.len);
    hdr->a0   = (int32_t)ntohl((uint32_t)raw.a0);
    hdr->a1   = (int32_t)ntohl((uint32_t)raw.a1);
    if (hdr->len > CTL_MAX_PAYLOAD || conn->in.len < sizeof(raw) + hdr->len) {
        return 0;
    }
    payload = malloc(hdr->len + 1);
    if (payload == NULL) {
        return 0;
    }
    memcpy(payload, conn->in.data + sizeof(raw), hdr->len);
    payload[hdr->len] = '\0';
    weft_buf_consume(&conn->in, sizeof(raw) + hdr->len);
    *payload_p = payload;
    return 1;
}
