/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Copy bandwidth per message size: memcpy within one process (the cost of
 * one copy through a shared buffer; an eager shm transfer does two), and
 * process_vm_readv from another process (single-copy CMA). The CMA column
 * is "n/a" when the kernel or container forbids it. The two processes are
 * pinned to different CPUs when two are available. These numbers guide
 * the eager / CMA thresholds.
 *
 * Usage: copy_bw [-m min:max] [--json FILE]
 */
#include "lim.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

static long reps_for(size_t size)
{
    size_t target = (size_t)256 << 20; /* ~256 MiB copied per size */
    long r = (long)(target / (size ? size : 1));
    if (r < 20)
        r = 20;
    if (r > 200000)
        r = 200000;
    return r;
}

int main(int argc, char **argv)
{
    size_t min = 64, max = 64 << 20, size;
    const char *json = NULL;
    char *src, *dst;
    int cpu0, cpu1, have, sync_pipe[2], i;
    pid_t pid;
    FILE *jf = NULL;
    int first = 1;
    volatile char *remote;

    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char *colon = strchr(argv[++i], ':');
            if (colon) {
                *colon = '\0';
                min = lim_size(argv[i]);
                max = lim_size(colon + 1);
            } else {
                max = lim_size(argv[i]);
            }
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc) {
            json = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [-m min:max] [--json FILE]\n", argv[0]);
            return 2;
        }
    }
    if (min < 1)
        min = 1;
    have = lim_two_cpus(&cpu0, &cpu1) == 0;

    /* the source lives in a child so that process_vm_readv crosses processes */
    src = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    dst = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (src == MAP_FAILED || dst == MAP_FAILED || pipe(sync_pipe)) {
        perror("setup");
        return 1;
    }
    memset(src, 1, max);
    memset(dst, 2, max);
    remote = (volatile char *)src;
    (void)remote;

    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        char ch;
        if (have)
            lim_pin(cpu1);
        close(sync_pipe[1]);
        /* touch our pages, then wait until the parent closes the pipe */
        memset(src, 3, max);
        while (read(sync_pipe[0], &ch, 1) > 0)
            ;
        _exit(0);
    }
    close(sync_pipe[0]);
    if (have)
        lim_pin(cpu0);
    usleep(100000);

    if (json) {
        jf = fopen(json, "w");
        if (!jf) {
            perror(json);
            return 1;
        }
        fprintf(jf, "{\"format\": \"weft-bench-1\", \"benchmark\": \"limit_copy_bw\", \"library\": "
                    "\"hardware limit\", \"nprocs\": 2, \"records\": [\n");
    }
    printf("# weft-bench limit: copy bandwidth (memcpy, process_vm_readv)\n");
    if (have)
        printf("# CPUs: reader %d, owner %d\n", cpu0, cpu1);
    printf("%-10s%18s%18s\n", "# Size", "memcpy (MB/s)", "CMA (MB/s)");
    for (size = min; size <= max; size *= 2) {
        long reps = reps_for(size), r;
        double t0, tm, tc = -1;
        struct iovec lv = {dst, size}, rv = {src, size};

        memcpy(dst, src, size); /* warm */
        t0 = lim_now();
        for (r = 0; r < reps; r++) {
            memcpy(dst, src, size);
            __asm__ __volatile__("" ::: "memory");
        }
        tm = lim_now() - t0;

        if (process_vm_readv(pid, &lv, 1, &rv, 1, 0) == (ssize_t)size) {
            t0 = lim_now();
            for (r = 0; r < reps; r++)
                if (process_vm_readv(pid, &lv, 1, &rv, 1, 0) != (ssize_t)size)
                    break;
            tc = r == reps ? lim_now() - t0 : -1;
        }
        if (tc > 0)
            printf("%-10zu%18.2f%18.2f\n", size, size * reps / tm / 1e6, size * reps / tc / 1e6);
        else
            printf("%-10zu%18.2f%18s\n", size, size * reps / tm / 1e6, "n/a");
        fflush(stdout);
        if (jf) {
            fprintf(jf, "%s  {\"benchmark\": \"limit_copy_bw\", \"library\": \"hardware limit\", "
                        "\"nprocs\": 2, \"size\": %zu, \"memcpy_mbs\": %.2f",
                    first ? "" : ",\n", size, size * reps / tm / 1e6);
            if (tc > 0)
                fprintf(jf, ", \"cma_mbs\": %.2f", size * reps / tc / 1e6);
            fprintf(jf, "}");
            first = 0;
        }
    }
    if (jf) {
        fprintf(jf, "\n]}\n");
        fclose(jf);
    }
    close(sync_pipe[1]);
    waitpid(pid, NULL, 0);
    return 0;
}
