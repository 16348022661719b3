/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The one TCP port mpiexec opens when a job has remote hosts: bound to the
 * address it advertises (never a loopback address, never the wildcard), it
 * accepts connections and runs the job-secret challenge (auth.h) on each
 * without blocking the job. A connection that fails the challenge or stays
 * silent is closed and reported; the job goes on.
 */
#ifndef WEFT_LAUNCHER_LISTENER_H
#define WEFT_LAUNCHER_LISTENER_H

#include "auth.h"

#include <poll.h>
#include <stddef.h>

typedef struct weft_pending weft_pending_t;

typedef struct {
    int                  fd;
    char                 addr[64]; /* numeric address we advertise */
    char                 iface[64];
    int                  port;
    const weft_secret_t *secret;
    weft_pending_t      *pending;
    int                  npending;
    int                  refused; /* connections refused so far */
} weft_listener_t;

/* The IPv4 address of interface iface (NULL or "": the first interface that
 * is up and not loopback) into addr. 0, or -1 with err. */
int weft_pick_address(const char *iface, char *addr, size_t addrlen, char *iface_out,
                      size_t ifacelen, char *err, size_t errlen);

/* Listen on the chosen address, ephemeral port. 0, or -1 with err. */
int weft_listener_open(weft_listener_t *l, const char *iface, const weft_secret_t *secret,
                       char *err, size_t errlen);
void weft_listener_close(weft_listener_t *l);

/* How many pollfds weft_listener_fill writes. */
int weft_listener_nfds(const weft_listener_t *l);
void weft_listener_fill(const weft_listener_t *l, struct pollfd *pfds);
/* Shortest time until a pending connection's deadline (ms), or -1. */
int weft_listener_timeout(const weft_listener_t *l);

/* Act on the revents of the pollfds filled before. For every connection that
 * proves the secret, on_conn(ctx, fd, index) takes the fd; it returns 0 to
 * accept it or -1 to have it closed (unknown or duplicate index). Refusals
 * are reported through on_refuse(ctx, text). */
void weft_listener_service(weft_listener_t *l, const struct pollfd *pfds,
                           int (*on_conn)(void *ctx, int fd, unsigned index),
                           void (*on_refuse)(void *ctx, const char *text), void *ctx);

#endif
