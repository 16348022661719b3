/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "hosts.h"

#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int host_add(const char *spec, size_t n, weft_host_t **hosts, int *count, char *err,
                    size_t errlen, const char *where)
{
    weft_host_t *grown;
    const char  *colon;
    size_t       namelen;
    long         slots = 1;

    while (n > 0 && isspace((unsigned char)spec[0])) {
        spec++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)spec[n - 1])) {
        n--;
    }
    if (n == 0) {
        snprintf(err, errlen, "empty host name in %s", where);
        return -1;
    }
    colon   = memchr(spec, ':', n);
    namelen = colon ? (size_t)(colon - spec) : n;
    if (colon != NULL) {
        char  num[32];
        char *end;
        size_t ln = n - namelen - 1;
        if (ln == 0 || ln >= sizeof(num)) {
            snprintf(err, errlen, "bad slot count in '%.*s' (%s)", (int)n, spec, where);
            return -1;
        }
        memcpy(num, colon + 1, ln);
        num[ln] = '\0';
        slots   = strtol(num, &end, 10);
        if (*end != '\0' || slots < 1 || slots > 1000000) {
            snprintf(err, errlen, "bad slot count in '%.*s' (%s): expected a positive integer",
                     (int)n, spec, where);
            return -1;
        }
    }
    if (namelen == 0 || namelen >= sizeof((*hosts)->name)) {
        snprintf(err, errlen, "bad host name '%.*s' (%s)", (int)n, spec, where);
        return -1;
    }
    for (size_t i = 0; i < namelen; i++) {
        if (isspace((unsigned char)spec[i])) {
            snprintf(err, errlen, "bad host entry '%.*s' (%s): expected host[:slots]", (int)n,
                     spec, where);
            return -1;
        }
    }
    grown = realloc(*hosts, sizeof(**hosts) * (size_t)(*count + 1));
    if (grown == NULL) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    *hosts = grown;
    memcpy(grown[*count].name, spec, namelen);
    grown[*count].name[namelen] = '\0';
    grown[*count].slots         = (int)slots;
    (*count)++;
    return 0;
}

int weft_hosts_parse_list(const char *list, weft_host_t **hosts, int *n, char *err, size_t errlen)
{
    const char *p = list;

    for (;;) {
        size_t len = strcspn(p, ",");
        if (host_add(p, len, hosts, n, err, errlen, "-hosts") != 0) {
            return -1;
        }
        if (p[len] == '\0') {
            return 0;
        }
        p += len + 1;
    }
}

int weft_hosts_parse_file(const char *path, weft_host_t **hosts, int *n, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    char  line[1024], where[1100];
    int   lineno = 0, before = *n;

    if (f == NULL) {
        snprintf(err, errlen, "cannot open hostfile '%s': %s", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char *hash = strchr(line, '#');
        char *p    = line;
        lineno++;
        if (hash != NULL) {
            *hash = '\0';
        }
        while (isspace((unsigned char)*p)) {
            p++;
        }
        if (*p == '\0') {
            continue;
        }
        snprintf(where, sizeof(where), "%s line %d", path, lineno);
        if (host_add(p, strlen(p), hosts, n, err, errlen, where) != 0) {
            fclose(f);
            return -1;
        }
    }
    fclose(f);
    if (*n == before) {
        snprintf(err, errlen, "hostfile '%s' names no hosts", path);
        return -1;
    }
    return 0;
}

/* Expand one hostlist item (text[0..len), may hold [a-b,c] groups) into
 * hosts, recursing over the groups left to right. */
static int slurm_expand(const char *text, size_t len, weft_host_t **hosts, int *count, char *err,
                        size_t errlen)
{
    const char *open = memchr(text, '[', len);
    const char *close;
    char        name[256];

    if (open == NULL) {
        return host_add(text, len, hosts, count, err, errlen, "SLURM_JOB_NODELIST");
    }
    close = memchr(open, ']', len - (size_t)(open - text));
    if (close == NULL) {
        snprintf(err, errlen, "SLURM_JOB_NODELIST: unbalanced '[' in '%.*s'", (int)len, text);
        return -1;
    }
    for (const char *r = open + 1; r < close;) {
        const char *comma = memchr(r, ',', (size_t)(close - r));
        const char *end   = comma ? comma : close;
        char       *stop;
        long        lo    = strtol(r, &stop, 10), hi = lo;
        int         width = (int)(stop - r);
        if (stop == r || (stop < end && *stop != '-')) {
            snprintf(err, errlen, "SLURM_JOB_NODELIST: bad range in '%.*s'", (int)len, text);
            return -1;
        }
        if (stop < end) {
            const char *h = stop + 1;
            hi            = strtol(h, &stop, 10);
            if (stop != end || hi < lo || hi - lo > 100000) {
                snprintf(err, errlen, "SLURM_JOB_NODELIST: bad range in '%.*s'", (int)len, text);
                return -1;
            }
        }
        for (long v = lo; v <= hi; v++) {
            int k = snprintf(name, sizeof(name), "%.*s%0*ld%.*s", (int)(open - text), text, width,
                             v, (int)(len - (size_t)(close + 1 - text)), close + 1);
            if (k < 0 || (size_t)k >= sizeof(name) ||
                slurm_expand(name, (size_t)k, hosts, count, err, errlen) != 0) {
                if (k >= 0 && (size_t)k >= sizeof(name)) {
                    snprintf(err, errlen, "SLURM_JOB_NODELIST: host name too long");
                }
                return -1;
            }
        }
        r = comma ? comma + 1 : close;
    }
    return 0;
}

int weft_hosts_parse_slurm(const char *nodelist, const char *tasks_per_node, weft_host_t **hosts,
                           int *n, char *err, size_t errlen)
{
    int         before = *n, depth = 0;
    const char *item   = nodelist;

    for (const char *p = nodelist;; p++) {
        if (*p == '[') {
            depth++;
        } else if (*p == ']') {
            depth--;
        } else if ((*p == ',' && depth == 0) || *p == '\0') {
            if (p > item && slurm_expand(item, (size_t)(p - item), hosts, n, err, errlen) != 0) {
                return -1;
            }
            item = p + 1;
            if (*p == '\0') {
                break;
            }
        }
    }
    if (*n == before) {
        snprintf(err, errlen, "SLURM_JOB_NODELIST names no hosts");
        return -1;
    }
    /* "2(x3),1": counts, each repeated (xN) times, one per node in order. */
    const char *t = tasks_per_node ? tasks_per_node : "";
    for (int h = before; h < *n && *t != '\0';) {
        char *end;
        long  slots = strtol(t, &end, 10), rep = 1;
        if (end == t || slots < 1) {
            snprintf(err, errlen, "SLURM_TASKS_PER_NODE: cannot parse '%s'", tasks_per_node);
            return -1;
        }
        if (end[0] == '(' && end[1] == 'x') {
            rep = strtol(end + 2, &end, 10);
            if (*end != ')' || rep < 1) {
                snprintf(err, errlen, "SLURM_TASKS_PER_NODE: cannot parse '%s'", tasks_per_node);
                return -1;
            }
            end++;
        }
        for (long k = 0; k < rep && h < *n; k++) {
            (*hosts)[h++].slots = (int)slots;
        }
        t = *end == ',' ? end + 1 : end;
    }
    return 0;
}

static int addr_is_local(const struct sockaddr *sa, struct ifaddrs *ifs)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        if ((ntohl(in->sin_addr.s_addr) >> 24) == 127) {
            return 1;
        }
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        if (IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr)) {
            return 1;
        }
    }
    for (struct ifaddrs *i = ifs; i != NULL; i = i->ifa_next) {
        if (i->ifa_addr == NULL || i->ifa_addr->sa_family != sa->sa_family) {
            continue;
        }
        if (sa->sa_family == AF_INET &&
            ((const struct sockaddr_in *)sa)->sin_addr.s_addr ==
                ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr) {
            return 1;
        }
        if (sa->sa_family == AF_INET6 &&
            memcmp(&((const struct sockaddr_in6 *)sa)->sin6_addr,
                   &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, sizeof(struct in6_addr)) == 0) {
            return 1;
        }
    }
    return 0;
}

int weft_host_is_local(const char *name, char *err, size_t errlen)
{
    char             self[256];
    struct addrinfo  hints = {.ai_socktype = SOCK_STREAM}, *res, *ai;
    struct ifaddrs  *ifs   = NULL;
    int              local = 0, rc;

    if (gethostname(self, sizeof(self)) == 0) {
        self[sizeof(self) - 1] = '\0';
        size_t n               = strcspn(self, ".");
        if (strcmp(name, self) == 0 || (strncmp(name, self, n) == 0 && name[n] == '\0')) {
            return 1;
        }
    }
    if (strcmp(name, "localhost") == 0) {
        return 1;
    }
    rc = getaddrinfo(name, NULL, &hints, &res);
    if (rc != 0) {
        snprintf(err, errlen, "unknown host '%s' (%s)", name, gai_strerror(rc));
        return -1;
    }
    if (getifaddrs(&ifs) != 0) {
        ifs = NULL;
    }
    for (ai = res; ai != NULL && !local; ai = ai->ai_next) {
        local = addr_is_local(ai->ai_addr, ifs);
    }
    if (ifs != NULL) {
        freeifaddrs(ifs);
    }
    freeaddrinfo(res);
    return local;
}
