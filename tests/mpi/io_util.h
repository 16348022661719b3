/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Helpers of the MPI-IO tests: a private temp directory made by rank 0 and
 * removed at the end, and whole-file reads with plain POSIX for comparing
 * against serial references.
 */
#ifndef WEFT_IO_UTIL_H
#define WEFT_IO_UTIL_H

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <mpi.h>

static char io_dir[512];

static void io_dir_make(void)
{
    int rank;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        const char *t = getenv("TMPDIR");
        snprintf(io_dir, sizeof(io_dir), "%s/weft-io-test-XXXXXX", t && *t ? t : "/tmp");
        if (mkdtemp(io_dir) == NULL) {
            perror("mkdtemp");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    MPI_Bcast(io_dir, sizeof(io_dir), MPI_CHAR, 0, MPI_COMM_WORLD);
}

static void io_dir_remove(void)
{
    int  rank;
    DIR *d;

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank != 0 || (d = opendir(io_dir)) == NULL) {
        return;
    }
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        char p[1024];
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
            continue;
        }
        snprintf(p, sizeof(p), "%s/%s", io_dir, e->d_name);
        chmod(p, 0700);
        if (unlink(p) != 0) {
            rmdir(p);
        }
    }
    closedir(d);
    if (rmdir(io_dir) != 0) {
        perror("rmdir test dir");
    }
}

static void io_path(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", io_dir, name);
}

/* Whole file into a malloc'd buffer; *len gets its size (-1 on error). */
static unsigned char *io_slurp(const char *path, long *len)
{
    struct stat    st;
    unsigned char *b;
    int            fd = open(path, O_RDONLY);

    *len = -1;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0) {
            close(fd);
        }
        return NULL;
    }
    b = malloc(st.st_size + 1);
    if (b && read(fd, b, st.st_size) == st.st_size) {
        *len = (long)st.st_size;
    }
    close(fd);
    return b;
}

#endif
