/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * launcher_helper MODE ...: misbehaving ranks for tests/launcher.
 *   crash RANK     RANK segfaults after 0.3 s; the others (and a child each)
 *                  sleep. Every rank first creates /dev/shm/weft-$WEFT_JOBID-rN.
 *   exit RANK CODE RANK exits with CODE after 0.3 s; the others sleep.
 *   sleep SECONDS  every rank sleeps (with a child that sleeps too).
 *   ignore-term    every rank ignores SIGTERM and sleeps.
 *   stdin          print "rank R read N bytes: <first line>" after reading stdin to EOF.
 *   print N        print N numbered lines to stdout and to stderr.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int env_rank(void)
{
    const char *r = getenv("PMI_RANK");
    return r ? atoi(r) : 0;
}

static void linger(int seconds, int with_child)
{
    if (with_child && fork() == 0) {
        sleep((unsigned)seconds);
        _exit(0);
    }
    sleep((unsigned)seconds);
}

static void make_shm(int rank)
{
    char        path[256];
    const char *job = getenv("WEFT_JOBID");
    if (job == NULL) {
        return;
    }
    snprintf(path, sizeof(path), "/dev/shm/weft-%s-r%d", job, rank);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    if (fd >= 0) {
        close(fd);
    }
}

int main(int argc, char **argv)
{
    int rank = env_rank();

    if (argc < 2) {
        return 2;
    }
    if (!strcmp(argv[1], "crash") && argc >= 3) {
        make_shm(rank);
        if (rank == 0) {
            printf("jobid=%s\n", getenv("WEFT_JOBID") ? getenv("WEFT_JOBID") : "");
            fflush(stdout);
        }
        if (rank == atoi(argv[2])) {
            usleep(300000);
            raise(SIGSEGV);
        }
        linger(60, 1);
        return 0;
    }
    if (!strcmp(argv[1], "exit") && argc >= 4) {
        if (rank == atoi(argv[2])) {
            usleep(300000);
            return atoi(argv[3]);
        }
        linger(60, 1);
        return 0;
    }
    if (!strcmp(argv[1], "sleep") && argc >= 3) {
        printf("rank %d sleeping\n", rank);
        fflush(stdout);
        linger(atoi(argv[2]), 1);
        return 0;
    }
    if (!strcmp(argv[1], "ignore-term")) {
        signal(SIGTERM, SIG_IGN);
        printf("rank %d ignoring SIGTERM\n", rank);
        fflush(stdout);
        linger(60, 0);
        return 0;
    }
    if (!strcmp(argv[1], "stdin")) {
        char   buf[65536], first[256] = "";
        size_t total = 0;
        ssize_t n;
        while ((n = read(0, buf, sizeof(buf))) > 0) {
            if (total == 0) {
                size_t l = strcspn(buf, "\n");
                if (l >= sizeof(first)) {
                    l = sizeof(first) - 1;
                }
                if (l > (size_t)n) {
                    l = (size_t)n;
                }
                memcpy(first, buf, l);
                first[l] = '\0';
            }
            total += (size_t)n;
        }
        printf("rank %d read %zu bytes: %s\n", rank, total, first);
        return 0;
    }
    if (!strcmp(argv[1], "print") && argc >= 3) {
        int n = atoi(argv[2]);
        for (int i = 0; i < n; i++) {
            printf("out rank %d line %d\n", rank, i);
            fprintf(stderr, "err rank %d line %d\n", rank, i);
        }
        return 0;
    }
    return 2;
}
