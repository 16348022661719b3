/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 */
#include "hosts.h"

#include "buf.h"

#include <ctype.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
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

/* This machine's own names, decided without a lookup: its host name (a
 * name and the host name agree when one is the other's first label, so
 * "node1" matches "node1.cluster"), "localhost", and address literals of
 * its interfaces. 1 local, 0 another machine, -1 a name to look up. */
static int host_is_self_name(const char *name, struct ifaddrs *ifs)
{
    struct addrinfo hints = {.ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST}, *res;
    char            self[256];

    if (strcmp(name, "localhost") == 0) {
        return 1;
    }
    if (gethostname(self, sizeof(self)) == 0) {
        self[sizeof(self) - 1] = '\0';
        size_t n_self = strcspn(self, "."), n_name = strcspn(name, ".");
        if (strcmp(name, self) == 0 || (n_self == n_name && strncmp(name, self, n_self) == 0 &&
                                        (name[n_name] == '\0' || self[n_self] == '\0'))) {
            return 1;
        }
    }
    if (getaddrinfo(name, NULL, &hints, &res) == 0) { /* an address literal */
        int local = addr_is_local(res->ai_addr, ifs);
        freeaddrinfo(res);
        return local;
    }
    return -1;
}

/* A lookup still unanswered is asked again (a new query: a lost UDP reply
 * is otherwise waited for until the resolver's own 5 s timeout), after
 * HOST_LOOKUP_RETRY_MS, then after gaps twice as long each time. */
#define HOST_LOOKUP_RETRY_MS 100
#define HOST_LOOKUP_TRIES    8

/* The lookups of one call, try t of name k at cbs[t * n + k]. The
 * resolver's thread may touch a lookup after reporting it finished (it
 * notifies waiters next), or still run one we stopped waiting for, so a
 * batch handed to it is never freed: it stays reachable from kept_batches
 * until the process ends (mpiexec looks its hosts up once). */
typedef struct host_batch {
    struct host_batch *next;
    struct addrinfo    hints;
    char             **names; /* copies: a running lookup may read its name late */
    struct gaicb       cbs[];
} host_batch_t;

static host_batch_t *kept_batches;

/* Ask try t for every name not yet answered. */
static void lookup_try(host_batch_t *b, const char *const *names, const int *answered, int n,
                       int t)
{
    struct gaicb *list[n > 0 ? n : 1];
    int           m = 0;

    for (int k = 0; k < n; k++) {
        if (!answered[k]) {
            struct gaicb *cb = &b->cbs[t * n + k];
            cb->ar_name      = names[k];
            cb->ar_request   = &b->hints;
            list[m++]        = cb;
        }
    }
    if (m > 0) {
        /* On failure (no memory for the resolver's queue) an unqueued
         * lookup reads as answered with no address: another machine. */
        (void)getaddrinfo_a(GAI_NOWAIT, list, m, NULL);
    }
}

void weft_hosts_find_local(const char *const *names, int n, int *local, int budget_ms)
{
    struct ifaddrs *ifs      = NULL;
    const char    **ask      = calloc((size_t)(n > 0 ? n : 1), sizeof(*ask));
    int            *at       = calloc((size_t)(n > 0 ? n : 1), sizeof(*at)); /* names[at[k]] */
    int            *answered = calloc((size_t)(n > 0 ? n : 1), sizeof(*answered));
    host_batch_t   *b        = NULL;
    int             nl = 0, tries = 0;
    long long       start = weft_now_ms(), retry_ms = HOST_LOOKUP_RETRY_MS;

    if (getifaddrs(&ifs) != 0) {
        ifs = NULL;
    }
    for (int i = 0; i < n; i++) {
        int self = host_is_self_name(names[i], ifs);
        local[i] = self == 1;
        if (self < 0 && ask != NULL && at != NULL) {
            ask[nl]  = names[i];
            at[nl++] = i;
        }
    }
    if (nl > 0 && answered != NULL) {
        b = calloc(1, sizeof(*b) + (size_t)(HOST_LOOKUP_TRIES * nl) * sizeof(struct gaicb));
    }
    if (b != NULL && (b->names = calloc((size_t)nl, sizeof(char *))) == NULL) {
        free(b);
        b = NULL;
    }
    for (int k = 0; b != NULL && k < nl; k++) {
        b->names[k] = strdup(ask[k]);
        answered[k] = b->names[k] == NULL; /* out of memory: not asked, another machine */
        ask[k]      = b->names[k];
    }
    if (b != NULL) {
        b->hints.ai_socktype = SOCK_STREAM;
        b->next              = kept_batches;
        kept_batches         = b;
        /* Every name at once: a cluster's resolver answers well within the
         * budget. A name still unanswered after it counts as another
         * machine (its proxy then starts through the launcher command,
         * which works for this machine too). */
        for (;;) {
            long long now = weft_now_ms();
            int       left = 0;
            if (tries < HOST_LOOKUP_TRIES && now >= start + retry_ms * ((1LL << tries) - 1)) {
                lookup_try(b, ask, answered, nl, tries++);
            }
            for (int k = 0; k < nl; k++) {
                for (int t = 0; t < tries && !answered[k]; t++) {
                    struct gaicb *cb = &b->cbs[t * nl + k];
                    if (cb->ar_name == NULL || gai_error(cb) == EAI_INPROGRESS) {
                        continue;
                    }
                    answered[k] = 1; /* found, or unknown here: another machine */
                    for (struct addrinfo *ai = gai_error(cb) == 0 ? cb->ar_result : NULL;
                         ai != NULL && !local[at[k]]; ai = ai->ai_next) {
                        local[at[k]] = addr_is_local(ai->ai_addr, ifs);
                    }
                }
                left += !answered[k];
            }
            if (left == 0 || now >= start + budget_ms) {
                break;
            }
            /* Polled, not gai_suspend: glibc 2.36's resolver thread crashed
             * notifying gai_suspend's waiters after it had timed out. */
            struct timespec nap = {0, 250 * 1000};
            nanosleep(&nap, NULL);
        }
        for (int c = 0; c < tries * nl; c++) { /* free what finished; stop the rest */
            struct gaicb *cb = &b->cbs[c];
            if (cb->ar_name != NULL && gai_error(cb) == EAI_INPROGRESS) {
                (void)gai_cancel(cb);
            } else if (cb->ar_result != NULL) {
                freeaddrinfo(cb->ar_result);
                cb->ar_result = NULL;
            }
        }
    }
    if (ifs != NULL) {
        freeifaddrs(ifs);
    }
    free(ask);
    free(at);
    free(answered);
}
