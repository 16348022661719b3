/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ranks' output lines and rank 0's stdin.
 */
#include "mpiexec.h"

void mp_emit_line(int rank, int stream, const char *data, size_t len)
{
    char   prefix[32];
    size_t plen = 0;

    if (mp.prepend) {
        plen = (size_t)snprintf(prefix, sizeof(prefix), "[%d] ", rank);
    }
    if (plen == 0) {
        mp_write_all(stream, data, len);
        return;
    }
    /* One write per line keeps prefixed lines whole. */
    char  small[4096];
    char *buf = plen + len <= sizeof(small) ? small : malloc(plen + len);
    if (buf == NULL) {
        mp_write_all(stream, prefix, plen);
        mp_write_all(stream, data, len);
        return;
    }
    memcpy(buf, prefix, plen);
    memcpy(buf + plen, data, len);
    mp_write_all(stream, buf, plen + len);
    if (buf != small) {
        free(buf);
    }
}

void mp_flush_partial(int rank, int s)
{
    weft_buf_t *b = &mp.ranks[rank].line[s];

    if (b->len > 0) {
        mp_emit_line(rank, s + 1, b->data, b->len);
        b->len = 0;
    }
}

void mp_output(int rank, int stream, const char *data, size_t len)
{
    int         s = stream == 2 ? 1 : 0;
    weft_buf_t *b;
    size_t      start = 0;

    if (rank < 0 || rank >= mp.np) {
        return;
    }
    b = &mp.ranks[rank].line[s];
    if (len == 0) {
        mp_flush_partial(rank, s);
        return;
    }
    weft_buf_append(b, data, len);
    for (size_t i = 0; i < b->len; i++) {
        if (b->data[i] == '\n') {
            mp_emit_line(rank, s + 1, b->data + start, i + 1 - start);
            start = i + 1;
        }
    }
    weft_buf_consume(b, start);
    if (b->len > 65536) {
        mp_flush_partial(rank, s);
    }
    mp.ranks[rank].line_ms[s] = weft_now_ms();
}

int mp_stdin_usable(void)
{
    /* Reading a terminal from the background would stop us (SIGTTIN). */
    if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) != getpgrp()) {
        return 0;
    }
    return fcntl(STDIN_FILENO, F_GETFD) >= 0;
}

void mp_read_stdin(void)
{
    char    chunk[65536];
    int     p0 = mp.ranks[0].proxy;
    ssize_t n  = read(STDIN_FILENO, chunk, sizeof(chunk));

    if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
        return;
    }
    if (n <= 0) {
        mp.stdin_open = 0;
        mp_send_to(p0, WEFT_CTL_STDIN, 0, 0, NULL, 0);
        return;
    }
    mp.stdin_outstanding += n;
    mp_send_to(p0, WEFT_CTL_STDIN, 0, 0, chunk, (size_t)n);
}
