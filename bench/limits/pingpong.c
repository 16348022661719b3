/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Hardware latency limit: two processes (fork) pinned to two CPUs toggle
 * one shared cache line. Rank 0 writes 2k+1 and waits for 2k+2; rank 1
 * answers. One-way latency = round trip / 2. Nothing an MPI library does
 * on shared memory can beat this number.
 *
 * --lines 2: one line per direction instead (rank 0 writes k into line A
 * and waits for k in line B; rank 1 the reverse), the layout of any
 * channel whose two directions carry independent messages, such as a pair
 * of rings. On the Sapphire Rapids VM of docs/performance.md this floor is
 * about twice the single-line one: the writer must first take the line
 * back from the reader that is polling it, and that ownership transfer is
 * not overlapped with the reader's fetch as it is when one line bounces.
 *
 * Usage: pingpong [-i iterations] [-c cpu0,cpu1] [--lines 1|2] [--json FILE]
 */
#include "lim.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    _Alignas(64) _Atomic uint64_t flag;
    char pad[56];
} line_t;

static void pause_cpu(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

int main(int argc, char **argv)
{
    long iters = 1000000, warm = 10000, i;
    int cpu0, cpu1, status = 0, have = 0, lines = 1;
    const char *json = NULL;
    line_t *line;
    pid_t pid;
    double t0, t1, oneway;

    if (lim_two_cpus(&cpu0, &cpu1) == 0)
        have = 1;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-i") && i + 1 < argc)
            iters = atol(argv[++i]);
        else if (!strcmp(argv[i], "-c") && i + 1 < argc) {
            if (sscanf(argv[++i], "%d,%d", &cpu0, &cpu1) == 2)
                have = 1;
        } else if (!strcmp(argv[i], "--lines") && i + 1 < argc) {
            lines = atoi(argv[++i]);
            if (lines != 1 && lines != 2) {
                fprintf(stderr, "%s: --lines takes 1 or 2\n", argv[0]);
                return 2;
            }
        } else if (!strcmp(argv[i], "--json") && i + 1 < argc)
            json = argv[++i];
        else {
            fprintf(stderr, "usage: %s [-i iterations] [-c cpu0,cpu1] [--lines 1|2] [--json FILE]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters < 1)
        iters = 1;
    line = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (line == MAP_FAILED) {
        perror("mmap");
        return 1;
    }
    atomic_store(&line[0].flag, 0);
    atomic_store(&line[1].flag, 0);

    pid = fork();
    if (pid < 0) {
        perror("fork");
        return 1;
    }
    if (pid == 0) {
        uint64_t want;
        if (have)
            lim_pin(cpu1);
        for (want = 1; want < (uint64_t)(2 * (iters + warm)); want += 2) {
            line_t *in = &line[0], *out = &line[lines - 1];
            uint64_t seen = lines == 1 ? want : (want + 1) / 2, reply = lines == 1 ? want + 1 : seen;
            while (atomic_load_explicit(&in->flag, memory_order_acquire) != seen)
                pause_cpu();
            atomic_store_explicit(&out->flag, reply, memory_order_release);
        }
        _exit(0);
    }
    if (have)
        lim_pin(cpu0);
    t0 = 0;
    for (i = 0; i < iters + warm; i++) {
        /* one line: write 2i+1, wait for 2i+2; two lines: write i+1 to
         * line 0, wait for i+1 in line 1 */
        uint64_t v = lines == 1 ? 2 * (uint64_t)i + 1 : (uint64_t)i + 1;
        uint64_t back = lines == 1 ? v + 1 : v;
        if (i == warm)
            t0 = lim_now();
        atomic_store_explicit(&line[0].flag, v, memory_order_release);
        while (atomic_load_explicit(&line[lines - 1].flag, memory_order_acquire) != back)
            pause_cpu();
    }
    t1 = lim_now();
    waitpid(pid, &status, 0);
    oneway = (t1 - t0) * 1e6 / (2.0 * iters);

    printf("# weft-bench limit: shared-memory cache-line ping-pong (%s)\n",
           lines == 1 ? "one line" : "one line per direction");
    if (have)
        printf("# CPUs: %d and %d\n", cpu0, cpu1);
    else
        printf("# CPUs: not pinned (fewer than two CPUs available)\n");
    printf("# Iterations: %ld\n", iters);
    printf("%-24s%18s\n", "# Measure", "Latency (us)");
    printf("%-24s%18.3f\n", "one-way", oneway);
    printf("%-24s%18.3f\n", "round-trip", 2 * oneway);
    if (json) {
        FILE *f = fopen(json, "w");
        if (!f) {
            perror(json);
            return 1;
        }
        fprintf(f,
                "{\"format\": \"weft-bench-1\", \"benchmark\": \"limit_pingpong\", \"library\": "
                "\"hardware limit\", \"nprocs\": 2, \"records\": [{\"benchmark\": \"limit_pingpong\", "
                "\"library\": \"hardware limit\", \"nprocs\": 2, \"size\": 0, \"latency_us\": %.4f, "
                "\"lines\": %d, \"cpus\": [%d, %d]}]}\n",
                oneway, lines, cpu0, cpu1);
        fclose(f);
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
