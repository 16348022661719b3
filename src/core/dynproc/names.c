/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_join over a connected socket, and the name service
 * (MPI_Publish_name & co.) through the launcher's (pmi/ weft_pmi_*_name).
 *
 * Join: both sides open a port and swap the names over the socket (length,
 * then text); the side whose name sorts first accepts on its port, the other
 * connects to it. Names differ (they carry each process's uid).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "api_impl.h"
#include "core/comm.h"
#include "core/dynproc/dynproc.h"
#include "core/errors.h"
#include "pmi/pmi.h"

/* ---- MPI_Comm_join ------------------------------------------------------ */

/* Move exactly len bytes over a (blocking) socket: 0, or -1 on error or
 * end of stream. */
static int transfer_all(int fd, void *buf, size_t len, int writing)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n = writing ? write(fd, p, len) : read(fd, p, len);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
    return transfer_all(fd, (void *)buf, len, 1);
}

static int read_all(int fd, void *buf, size_t len)
{
    return transfer_all(fd, buf, len, 0);
}

/* The other end of the socket may be on another host: a Unix socket or a
 * loopback address is this host; anything else may not be. */
static int peer_may_be_remote(int fd)
{
    struct sockaddr_storage a;
    socklen_t               len = sizeof(a);

    if (getpeername(fd, (struct sockaddr *)&a, &len) != 0) {
        return 1;
    }
    if (a.ss_family == AF_UNIX) {
        return 0;
    }
    if (a.ss_family == AF_INET) {
        return (ntohl(((struct sockaddr_in *)&a)->sin_addr.s_addr) >> 24) != 127;
    }
    if (a.ss_family == AF_INET6) {
        const struct in6_addr *v6 = &((struct sockaddr_in6 *)&a)->sin6_addr;
        return !IN6_IS_ADDR_LOOPBACK(v6) &&
               !(IN6_IS_ADDR_V4MAPPED(v6) && v6->s6_addr[12] == 127);
    }
    return 1;
}

int weft_comm_join_impl(int fd, MPI_Comm *intercomm)
{
    char     mine[MPI_MAX_PORT_NAME], theirs[MPI_MAX_PORT_NAME];
    uint32_t len, rlen = 0;
    int      rc;

    if (fd < 0) {
        return weft_error(MPI_ERR_ARG, "argument fd: %d is not a file descriptor", fd);
    }
    rc = weft_dynproc_open_port(mine, peer_may_be_remote(fd));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    len = (uint32_t)strlen(mine);
    if (write_all(fd, &len, sizeof(len)) != 0 || write_all(fd, mine, len) != 0 ||
        read_all(fd, &rlen, sizeof(rlen)) != 0 || rlen == 0 || rlen >= sizeof(theirs) ||
        read_all(fd, theirs, rlen) != 0) {
        weft_close_port_impl(mine);
        return weft_error(MPI_ERR_ARG, "argument fd: cannot swap port names over socket %d "
                                       "(%s)", fd, errno ? strerror(errno) : "closed or garbled");
    }
    theirs[rlen] = '\0';
    if (strcmp(mine, theirs) < 0) {
        rc = weft_comm_accept_impl(mine, NULL, 0, &weft_comm_self, intercomm);
    } else {
        rc = weft_comm_connect_impl(theirs, NULL, 0, &weft_comm_self, intercomm);
    }
    weft_close_port_impl(mine);
    return rc;
}

/* ---- name service ------------------------------------------------------- */

static int pmi_error(int prc, const char *call, const char *service, int not_found_class)
{
    switch (prc) {
    case 0:
        return MPI_SUCCESS;
    case WEFT_PMI_ERR_DUPLICATE:
        return weft_error(MPI_ERR_SERVICE, "%s: service \"%.100s\" is already published", call,
                          service);
    case WEFT_PMI_ERR_NOT_FOUND:
        return weft_error(not_found_class, "%s: service \"%.100s\" is not published", call,
                          service);
    case WEFT_PMI_ERR_UNSUPPORTED:
        return weft_error(MPI_ERR_UNSUPPORTED_OPERATION, "%s: this process manager has no name "
                                                         "service", call);
    default:
        return weft_error(MPI_ERR_OTHER, "%s: the name service failed (see the message above)",
                          call);
    }
}

static int check_service(const char *service, const char *port, int need_port)
{
    if (service == NULL || service[0] == '\0') {
        return weft_error(MPI_ERR_ARG, "argument service_name: empty or NULL");
    }
    if (need_port && (port == NULL || port[0] == '\0')) {
        return weft_error(MPI_ERR_ARG, "argument port_name: empty or NULL");
    }
    return MPI_SUCCESS;
}

int weft_publish_name_impl(const char *service_name, weft_info_t *info, const char *port_name)
{
    int rc = check_service(service_name, port_name, 1);

    (void)info;
    return rc != MPI_SUCCESS ? rc
                             : pmi_error(weft_pmi_publish_name(service_name, port_name),
                                         "MPI_Publish_name", service_name, MPI_ERR_SERVICE);
}

int weft_lookup_name_impl(const char *service_name, weft_info_t *info, char *port_name)
{
    int rc = check_service(service_name, "x", 0);

    (void)info;
    if (rc == MPI_SUCCESS && port_name == NULL) {
        rc = weft_error(MPI_ERR_ARG, "argument port_name: NULL pointer");
    }
    return rc != MPI_SUCCESS ? rc
                             : pmi_error(weft_pmi_lookup_name(service_name, port_name,
                                                              MPI_MAX_PORT_NAME),
                                         "MPI_Lookup_name", service_name, MPI_ERR_NAME);
}

int weft_unpublish_name_impl(const char *service_name, weft_info_t *info, const char *port_name)
{
    int rc = check_service(service_name, port_name, 0);

    (void)info;
    (void)port_name;
    return rc != MPI_SUCCESS ? rc
                             : pmi_error(weft_pmi_unpublish_name(service_name),
                                         "MPI_Unpublish_name", service_name, MPI_ERR_SERVICE);
}
