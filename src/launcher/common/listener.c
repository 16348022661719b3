/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "listener.h"

#include "buf.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A peer has this long to answer the challenge. */
#define LISTENER_AUTH_MS 10000

struct weft_pending {
    int       fd;
    uint8_t   nonce[WEFT_AUTH_NONCE_LEN];
    uint8_t   in[WEFT_AUTH_REPLY_LEN];
    size_t    got;
    long long deadline;
    char      peer[64];
};

int weft_pick_address(const char *iface, char *addr, size_t addrlen, char *iface_out,
                      size_t ifacelen, char *err, size_t errlen)
{
    struct ifaddrs *ifs, *i;
    int             named = iface != NULL && iface[0] != '\0', found = 0, exists = 0;

    if (getifaddrs(&ifs) != 0) {
        snprintf(err, errlen, "cannot list network interfaces: %s", strerror(errno));
        return -1;
    }
    for (i = ifs; i != NULL && !found; i = i->ifa_next) {
        if (named && strcmp(i->ifa_name, iface) != 0) {
            continue;
        }
        exists = 1;
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != AF_INET ||
            !(i->ifa_flags & IFF_UP)) {
            continue;
        }
        struct in_addr a = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
        if ((i->ifa_flags & IFF_LOOPBACK) || (ntohl(a.s_addr) >> 24) == 127) {
            continue; /* other hosts cannot reach us there */
        }
        inet_ntop(AF_INET, &a, addr, (socklen_t)addrlen);
        snprintf(iface_out, ifacelen, "%s", i->ifa_name);
        found = 1;
    }
    freeifaddrs(ifs);
    if (found) {
        return 0;
    }
    if (named && !exists) {
        snprintf(err, errlen, "network interface '%s' does not exist (-iface/WEFT_IFACE)", iface);
    } else if (named) {
        snprintf(err, errlen,
                 "network interface '%s' has no non-loopback IPv4 address that is up "
                 "(-iface/WEFT_IFACE)",
                 iface);
    } else {
        snprintf(err, errlen, "no network interface with a non-loopback IPv4 address is up; "
                              "remote hosts could not reach mpiexec (choose one with -iface)");
    }
    return -1;
}

int weft_listener_open(weft_listener_t *l, const char *iface, const weft_secret_t *secret,
                       char *err, size_t errlen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    socklen_t          sl = sizeof(sa);

    memset(l, 0, sizeof(*l));
    l->fd     = -1;
    l->secret = secret;
    if (weft_auth_load(err, errlen) != 0) {
        return -1;
    }
    if (weft_pick_address(iface, l->addr, sizeof(l->addr), l->iface, sizeof(l->iface), err,
                          errlen) != 0) {
        return -1;
    }
    inet_pton(AF_INET, l->addr, &sa.sin_addr);
    l->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
        listen(l->fd, 128) != 0 || getsockname(l->fd, (struct sockaddr *)&sa, &sl) != 0) {
        snprintf(err, errlen, "cannot listen on %s (%s): %s", l->addr, l->iface, strerror(errno));
        if (l->fd >= 0) {
            close(l->fd);
        }
        l->fd = -1;
        return -1;
    }
    l->port = ntohs(sa.sin_port);
    return 0;
}

static void pending_drop(weft_listener_t *l, int k)
{
    close(l->pending[k].fd);
    l->pending[k] = l->pending[--l->npending];
}

void weft_listener_close(weft_listener_t *l)
{
    while (l->npending > 0) {
        pending_drop(l, 0);
    }
    free(l->pending);
    l->pending = NULL;
    if (l->fd >= 0) {
        close(l->fd);
    }
    l->fd = -1;
}

int weft_listener_nfds(const weft_listener_t *l)
{
    return l->fd >= 0 ? 1 + l->npending : 0;
}

void weft_listener_fill(const weft_listener_t *l, struct pollfd *pfds)
{
    if (l->fd < 0) {
        return;
    }
    pfds[0] = (struct pollfd){.fd = l->fd, .events = POLLIN};
    for (int k = 0; k < l->npending; k++) {
        pfds[1 + k] = (struct pollfd){.fd = l->pending[k].fd, .events = POLLIN};
    }
}

int weft_listener_timeout(const weft_listener_t *l)
{
    long long now = weft_now_ms(), best = -1;

    for (int k = 0; k < l->npending; k++) {
        long long left = l->pending[k].deadline - now;
        if (left < 0) {
            left = 0;
        }
        if (best < 0 || left < best) {
            best = left;
        }
    }
    return (int)best;
}

static void listener_accept(weft_listener_t *l, void (*on_refuse)(void *, const char *), void *ctx)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t          sl = sizeof(sa);
        uint8_t            hello[WEFT_AUTH_HELLO_LEN];
        weft_pending_t     pd = {0};
        char               text[160];
        int                fd = accept4(l->fd, (struct sockaddr *)&sa, &sl,
                                        SOCK_CLOEXEC | SOCK_NONBLOCK);

        if (fd < 0) {
            return; /* EAGAIN or a transient error: poll again */
        }
        pd.fd = fd;
        (void)weft_fd_set_nodelay(fd);
        snprintf(pd.peer, sizeof(pd.peer), "?");
        if (sa.sin_family == AF_INET) {
            char a[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &sa.sin_addr, a, sizeof(a));
            snprintf(pd.peer, sizeof(pd.peer), "%s:%d", a, ntohs(sa.sin_port));
        }
        /* 40 bytes into a fresh socket's empty send buffer: never partial. */
        if (weft_auth_hello(pd.nonce, hello) != 0 ||
            send(fd, hello, sizeof(hello), MSG_NOSIGNAL) != (ssize_t)sizeof(hello)) {
            snprintf(text, sizeof(text), "connection from %s dropped before the challenge",
                     pd.peer);
            on_refuse(ctx, text);
            close(fd);
            continue;
        }
        pd.deadline = weft_now_ms() + LISTENER_AUTH_MS;
        weft_pending_t *grown =
            realloc(l->pending, sizeof(*grown) * (size_t)(l->npending + 1));
        if (grown == NULL) {
            close(fd);
            continue;
        }
        l->pending               = grown;
        l->pending[l->npending++] = pd;
    }
}

void weft_listener_service(weft_listener_t *l, const struct pollfd *pfds,
                           int (*on_conn)(void *ctx, int fd, unsigned index),
                           void (*on_refuse)(void *ctx, const char *text), void *ctx)
{
    long long now = weft_now_ms();
    int       n   = l->npending;
    char      text[256];

    if (l->fd < 0) {
        return;
    }
    /* Pending entries first (their pollfds are 1..n), newest accepted last. */
    for (int k = n - 1; k >= 0; k--) {
        weft_pending_t *pd = &l->pending[k];
        if (pfds[1 + k].revents) {
            ssize_t r = recv(pd->fd, pd->in + pd->got, sizeof(pd->in) - pd->got, 0);
            if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR)) {
                snprintf(text, sizeof(text),
                         "refused a connection from %s: closed before proving the job secret",
                         pd->peer);
                l->refused++;
                on_refuse(ctx, text);
                pending_drop(l, k);
                continue;
            }
            if (r > 0) {
                pd->got += (size_t)r;
            }
        }
        if (pd->got == sizeof(pd->in)) {
            uint8_t  mac_s[WEFT_AUTH_MAC_LEN];
            uint32_t index;
            int      fd = pd->fd;
            if (weft_auth_check(l->secret, pd->nonce, pd->in, &index, mac_s) != 0) {
                snprintf(text, sizeof(text),
                         "refused a connection from %s: it does not know the job secret",
                         pd->peer);
                l->refused++;
                on_refuse(ctx, text);
                pending_drop(l, k);
                continue;
            }
            pd->fd        = -1;
            l->pending[k] = l->pending[--l->npending];
            if (send(fd, mac_s, sizeof(mac_s), MSG_NOSIGNAL) != (ssize_t)sizeof(mac_s) ||
                on_conn(ctx, fd, index) != 0) {
                close(fd);
            }
            continue;
        }
        if (now >= pd->deadline) {
            snprintf(text, sizeof(text),
                     "refused a connection from %s: no answer to the challenge in %d s",
                     pd->peer, LISTENER_AUTH_MS / 1000);
            l->refused++;
            on_refuse(ctx, text);
            pending_drop(l, k);
        }
    }
    if (pfds[0].revents & POLLIN) {
        listener_accept(l, on_refuse, ctx);
    }
}
