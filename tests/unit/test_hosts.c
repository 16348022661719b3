/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * mpiexec's test of which -hosts names are this machine
 * (weft_hosts_find_local, src/launcher/common/hosts.c): its own names and
 * address literals without a lookup, a name unknown here counted as
 * another machine, and the lookup budget bounding the wait, also against a
 * resolver that never answers (as root: a child in its own network and
 * mount namespaces, /etc/resolv.conf naming a silent UDP port on its lo).
 */
#include "launcher/common/hosts.h"

#include "unit_check.h"

#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>


static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Three names with a 0.3 s budget: the two that need the resolver are
 * another machine, localhost is this one, and the call took between
 * at_least and 1.5 s. */
static void check_lookups(const char *a, const char *b, double at_least, const char *what)
{
    const char *names[] = {a, b, "localhost"};
    int         local[3] = {-1, -1, -1};
    double      t0       = now_s();
    weft_hosts_find_local(names, 3, local, 300);
    double took = now_s() - t0;
    CHECK(local[0] == 0);
    CHECK(local[1] == 0);
    CHECK(local[2] == 1);
    CHECK(took >= at_least && took < 1.5);
    if (!(took >= at_least && took < 1.5)) {
        fprintf(stderr, "%s: lookups took %.2f s against a 0.3 s budget\n", what, took);
    }
}

/* In a forked child: names the resolver never answers are another machine
 * after the budget, not after the resolver's timeout. 0 passed, 1 failed,
 * 77 could not set up the silent resolver. */
static int silent_resolver_child(void)
{
    char               conf[] = "/tmp/weft-test-resolv-XXXXXX";
    struct ifreq       ifr    = {0};
    struct sockaddr_in dns    = {.sin_family = AF_INET, .sin_port = htons(53)};
    int                fd, sock;

    if (unshare(CLONE_NEWNS | CLONE_NEWNET) != 0 ||
        mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0) {
        return 77;
    }
    sock = socket(AF_INET, SOCK_DGRAM, 0); /* lo up, then a port that never answers */
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
    if (sock < 0 || ioctl(sock, SIOCGIFFLAGS, &ifr) != 0) {
        return 77;
    }
    ifr.ifr_flags |= IFF_UP;
    dns.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (ioctl(sock, SIOCSIFFLAGS, &ifr) != 0 ||
        bind(sock, (struct sockaddr *)&dns, sizeof(dns)) != 0) {
        return 77;
    }
    fd = mkstemp(conf);
    if (fd < 0 || write(fd, "nameserver 127.0.0.1\noptions timeout:5 attempts:2\n", 50) != 50 ||
        mount(conf, "/etc/resolv.conf", NULL, MS_BIND, NULL) != 0) {
        return 77;
    }
    close(fd);
    unlink(conf);

    /* the resolver never answers: the budget, not its 10 s, ends the wait */
    check_lookups("weft-silent-1.example", "weft-silent-2.example", 0.25, "silent resolver");
    return failures != 0;
}

int main(void)
{
    char self[256], short_self[256], with_domain[300];

    if (gethostname(self, sizeof(self)) != 0) {
        printf("SKIP: gethostname failed\n");
        return 77;
    }
    self[sizeof(self) - 1] = '\0';
    snprintf(short_self, sizeof(short_self), "%.*s", (int)strcspn(self, "."), self);
    /* this machine's short name with a domain it may not have: the first
     * labels agree and one side has no domain */
    snprintf(with_domain, sizeof(with_domain), "%s.weft-test.invalid", short_self);

    {
        /* decided without a lookup, whatever the resolver does */
        const char *names[] = {"localhost", self, short_self, "127.0.0.1", "192.0.2.7",
                               strchr(self, '.') ? short_self : with_domain};
        int         local[6] = {-1, -1, -1, -1, -1, -1};
        weft_hosts_find_local(names, 6, local, 1000);
        CHECK(local[0] == 1);
        CHECK(local[1] == 1);
        CHECK(local[2] == 1);
        CHECK(local[3] == 1); /* loopback literal */
        CHECK(local[4] == 0); /* TEST-NET-1 literal: no interface has it */
        CHECK(local[5] == 1);
    }
    /* names unknown here are other machines, within the budget even if the
     * resolver would take its 5 s timeout */
    check_lookups("weft-no-such-host-1.invalid", "weft-no-such-host-2.invalid", 0, "resolver");
    {
        int local[1] = {-1};
        weft_hosts_find_local(NULL, 0, local, 100); /* nothing to look up */
        CHECK(local[0] == -1);
    }
    {
        pid_t pid = fork();
        int   st  = 0;
        if (pid == 0) {
            _exit(silent_resolver_child());
        }
        if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) {
            CHECK(!"silent-resolver child did not exit normally");
        } else if (WEXITSTATUS(st) == 77) {
            printf("test_hosts: silent-resolver case skipped (needs root for network and mount "
                   "namespaces)\n");
        } else {
            CHECK(WEXITSTATUS(st) == 0);
        }
    }
    if (failures == 0) {
        printf("test_hosts: all checks passed\n");
    }
    return failures != 0;
}
