/* Write ceiling of one shared file (issue 17): NPROC processes, process p
 * pinned to CPU p, each write N pieces of SIZE bytes with pwrite into a
 * fresh file in DIR (SAME=1: one file, the processes' pieces interleaved;
 * SAME=0: a file each). Prints the aggregate MB/s of 5 repetitions.
 *   cc -O2 -o write_ceiling write_ceiling.c
 *   ./write_ceiling NPROC SAME SIZE N DIR */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: %s NPROC SAME SIZE N DIR\n", argv[0]);
        return 2;
    }
    int    nproc = atoi(argv[1]), same = atoi(argv[2]), n = atoi(argv[4]);
    size_t size  = (size_t)atol(argv[3]);
    char   f0[512], f1[512], *buf;

    snprintf(f0, sizeof(f0), "%s/write-ceiling-0", argv[5]);
    snprintf(f1, sizeof(f1), "%s/write-ceiling-1", argv[5]);
    if (posix_memalign((void **)&buf, 4096, size) != 0) {
        return 1;
    }
    memset(buf, 7, size);
    for (int rep = 0; rep < 5; rep++) {
        unlink(f0);
        unlink(f1);
        double t0 = now();
        for (int p = 0; p < nproc; p++) {
            if (fork() == 0) {
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(p, &set);
                sched_setaffinity(0, sizeof(set), &set);
                int fd = open(same || p == 0 ? f0 : f1, O_CREAT | O_WRONLY, 0600);
                for (int i = 0; i < n; i++) {
                    off_t off = same ? ((off_t)i * nproc + p) * (off_t)size : (off_t)i * (off_t)size;
                    if (pwrite(fd, buf, size, off) != (ssize_t)size) {
                        _exit(1);
                    }
                }
                _exit(0);
            }
        }
        for (int p = 0; p < nproc; p++) {
            wait(NULL);
        }
        double t = now() - t0;
        printf("np %d same-file %d size %zu: %.0f MB/s\n", nproc, same, size,
               (double)nproc * n * (double)size / t / 1e6);
    }
    unlink(f0);
    unlink(f1);
    return 0;
}
