/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The raw floor under the netmod: one TCP connection, no MPI, no libfabric.
 *   tcp_pingpong server PORT
 *   tcp_pingpong client HOST PORT [MAX_BYTES]
 * The client prints, per size from 0 B up to MAX_BYTES (default 4 MiB),
 * the one-way latency (half the round trip of a ping-pong, averaged over
 * many) and the streaming bandwidth (a window of 64 sends, then a 1-byte
 * ack), in the column layout of weft-bench. TCP_NODELAY on both ends, as
 * every MPI library sets it; both sides busy-poll non-blocking calls, as
 * MPI libraries do (a blocking recv adds ~20 us of sleep and wake-up).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define WINDOW 64

static void die(const char *what)
{
    perror(what);
    exit(1);
}

static void xfer(int fd, char *buf, size_t n, int sending)
{
    while (n > 0) {
        ssize_t r = sending ? send(fd, buf, n, MSG_DONTWAIT) : recv(fd, buf, n, MSG_DONTWAIT);
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            continue; /* busy-poll, as MPI libraries do: no sleep and wake-up per message */
        }
        if (r <= 0) {
            die(sending ? "send" : "recv");
        }
        buf += r;
        n -= (size_t)r;
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int iterations(size_t size, int small)
{
    return size <= 8192 ? small : size <= (1u << 20) ? small / 10 : small / 100;
}

/* Both ends run the same schedule; the client also times it. */
static void run(int fd, int client, size_t max)
{
    char *buf = calloc(1, max ? max : 1);
    char  ack = 0;

    if (client) {
        printf("# tcp_pingpong: one TCP connection, TCP_NODELAY\n");
        printf("%-12s %14s %14s\n", "# Size", "Latency (us)", "BW (MB/s)");
    }
    for (size_t size = 1; size <= max; size *= 2) { /* TCP cannot send 0 bytes */
        int    n = iterations(size, 10000), warm = n / 10 + 1;
        double t0 = 0, lat, bw;

        for (int i = 0; i < n + warm; i++) {
            if (i == warm) {
                t0 = now();
            }
            if (client) {
                xfer(fd, buf, size, 1);
                xfer(fd, buf, size, 0);
            } else {
                xfer(fd, buf, size, 0);
                xfer(fd, buf, size, 1);
            }
        }
        lat = (now() - t0) * 1e6 / n / 2;
        n = iterations(size, 200) + 1;
        for (int i = 0; i < n + 1; i++) {
            if (i == 1) {
                t0 = now();
            }
            for (int w = 0; w < WINDOW; w++) {
                xfer(fd, buf, size, client);
            }
            xfer(fd, &ack, 1, !client);
        }
        bw = (double)size * WINDOW * n / (now() - t0) / 1e6;
        if (client) {
            printf("%-12zu %14.2f %14.2f\n", size, lat, bw);
            fflush(stdout);
        }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    int one = 1, fd;

    if (argc >= 3 && strcmp(argv[1], "server") == 0) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
        int                ls = socket(AF_INET, SOCK_STREAM, 0);
        size_t             max;
        setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(ls, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(ls, 1) != 0) {
            die("bind/listen");
        }
        if ((fd = accept(ls, NULL, NULL)) < 0) {
            die("accept");
        }
        close(ls);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        xfer(fd, (char *)&max, sizeof(max), 0); /* the client says how far to go */
        run(fd, 0, max);
    } else if (argc >= 4 && strcmp(argv[1], "client") == 0) {
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res;
        size_t          max   = argc > 4 ? (size_t)strtoull(argv[4], NULL, 0) : (size_t)4 << 20;
        if (getaddrinfo(argv[2], argv[3], &hints, &res) != 0) {
            die("getaddrinfo");
        }
        for (int tries = 0;; tries++) { /* the server may not listen yet: 5 s */
            fd = socket(AF_INET, SOCK_STREAM, 0);
            if (connect(fd, res->ai_addr, res->ai_addrlen) == 0) {
                break;
            }
            close(fd);
            if (tries == 50) {
                die("connect");
            }
            usleep(100000);
        }
        freeaddrinfo(res);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        xfer(fd, (char *)&max, sizeof(max), 1);
        run(fd, 1, max);
    } else {
        fprintf(stderr, "usage: %s server PORT | client HOST PORT [MAX_BYTES]\n", argv[0]);
        return 2;
    }
    close(fd);
    return 0;
}
