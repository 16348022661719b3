/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Non-blocking independent file access runs in the background and its
 * request completes only when the data is there.
 *  1. Blocked transfer: a child process holds a POSIX write lock on the
 *     range; in atomic mode the transfer must take a lock on it, so it cannot
 *     finish. MPI_File_iwrite_at / iread_at return at once, MPI_Test polls
 *     say "not complete" for 0.3 s while the file (or the read buffer) is
 *     untouched; once the child lets go, MPI_Wait completes and the bytes are
 *     compared with plain POSIX (write) or with what was written (read).
 *  2. Many in flight: 8 MPI_File_iwrite with a strided memory type through
 *     the individual pointer (which moves when each call returns), then 8
 *     iread_shared, waited with MPI_Waitall and compared byte for byte.
 * Each rank works on its own file (MPI_COMM_SELF), so every np exercises
 * several processes' workers at once.
 */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include "mpitest.h"
#include "io_util.h"

#define BIG   (1 << 20)
#define CHUNK 4096
#define NCH   8

/* Fork a child holding a write lock on [0, BIG) of path; returns its pid and
 * the pipe to release it (write a byte or close). */
static pid_t lock_in_child(const char *path, int *release_fd)
{
    int   up[2], down[2];
    char  c = 0;
    pid_t pid;

    if (pipe(up) != 0 || pipe(down) != 0) {
        return -1;
    }
    pid = fork();
    if (pid == 0) {
        close(down[1]); /* so the parent's close is our end of file */
        close(up[0]);
        int          fd = open(path, O_RDWR);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = BIG};
        if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0) {
            _exit(3);
        }
        if (write(up[1], &c, 1) != 1 || read(down[0], &c, 1) < 0) {
            _exit(4);
        }
        _exit(0); /* the lock goes with the process */
    }
    close(up[1]);
    close(down[0]);
    if (pid < 0 || read(up[0], &c, 1) != 1) {
        close(up[0]);
        return -1;
    }
    close(up[0]);
    *release_fd = down[1];
    return pid;
}

static void release_child(pid_t pid, int fd)
{
    int st;
    close(fd);
    waitpid(pid, &st, 0);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "lock holder exited with %d", st);
}

/* Poll req for secs: it must stay incomplete. */
static void stays_pending(MPI_Request *req, double secs, const char *what)
{
    int    flag = 0, polls = 0;
    double end  = mpitest_now() + secs;
    while (mpitest_now() < end && !flag) {
        MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        polls++;
    }
    CHECK(!flag, "%s completed while its range was locked by another process (poll %d)", what, polls);
}

static void blocked_transfer(const char *path, unsigned char *buf, unsigned char *back)
{
    MPI_File    fh;
    MPI_Request req;
    MPI_Status  st;
    int         rel, count;
    long        len;
    pid_t       pid;

    CHECK_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    CHECK_OK(MPI_File_set_atomicity(fh, 1));
    if ((pid = lock_in_child(path, &rel)) < 0) {
        CHECK(0, "cannot start the lock-holding child");
        return;
    }
    CHECK_OK(MPI_File_iwrite_at(fh, 0, buf, BIG, MPI_BYTE, &req));
    stays_pending(&req, 0.3, "MPI_File_iwrite_at");
    unsigned char *b = io_slurp(path, &len);
    CHECK(len == 0, "the file has %ld bytes before the write could take its lock", len);
    free(b);
    release_child(pid, rel);
    CHECK_OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == BIG, "iwrite_at status count %d", count);
    b = io_slurp(path, &len);
    CHECK(len == BIG && b && !memcmp(b, buf, BIG), "file bytes differ after iwrite_at (size %ld)", len);
    free(b);

    memset(back, 0, BIG);
    if ((pid = lock_in_child(path, &rel)) < 0) {
        CHECK(0, "cannot start the lock-holding child");
        return;
    }
    CHECK_OK(MPI_File_iread_at(fh, 0, back, BIG, MPI_BYTE, &req));
    stays_pending(&req, 0.2, "MPI_File_iread_at");
#ifndef __SANITIZE_THREAD__
    /* A peek at the buffer of a pending read: ThreadSanitizer cannot see
     * that the worker's pread waits for the child's file lock, so it would
     * report the peek as a race with that pread. */
    for (int i = 0; i < BIG; i++) {
        if (back[i] != 0) {
            CHECK(0, "read buffer written before the read could take its lock (byte %d)", i);
            break;
        }
    }
#endif
    release_child(pid, rel);
    CHECK_OK(MPI_Wait(&req, &st));
    MPI_Get_count(&st, MPI_BYTE, &count);
    CHECK(count == BIG && !memcmp(back, buf, BIG), "iread_at: count %d or bytes differ", count);
    CHECK_OK(MPI_File_close(&fh));
}

static void many_in_flight(const char *path, unsigned char *buf, unsigned char *back)
{
    MPI_File     fh;
    MPI_Request  reqs[NCH];
    MPI_Status   sts[NCH];
    MPI_Datatype strided;
    MPI_Offset   pos;
    long         len;
    int          count;

    /* memory: every other 64-byte block of buf (CHUNK bytes of data per element) */
    MPI_Type_vector(CHUNK / 64, 64, 128, MPI_BYTE, &strided);
    MPI_Type_commit(&strided);
    CHECK_OK(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh));
    for (int i = 0; i < NCH; i++) {
        CHECK_OK(MPI_File_iwrite(fh, buf + (size_t)i * 2 * CHUNK, 1, strided, &reqs[i]));
    }
    CHECK_OK(MPI_File_get_position(fh, &pos));
    CHECK(pos == (MPI_Offset)NCH * CHUNK, "individual pointer %lld after the posts, want %d", (long long)pos,
          NCH * CHUNK);
    CHECK_OK(MPI_Waitall(NCH, reqs, sts));
    for (int i = 0; i < NCH; i++) {
        MPI_Get_count(&sts[i], strided, &count);
        CHECK(count == 1, "iwrite %d status count %d", i, count);
    }
    unsigned char *b = io_slurp(path, &len);
    CHECK(len == NCH * CHUNK, "file size %ld", len);
    for (int i = 0; b && len == NCH * CHUNK && i < NCH * CHUNK / 64; i++) {
        if (memcmp(b + (size_t)i * 64, buf + (size_t)i * 128, 64) != 0) {
            CHECK(0, "file block %d differs from the strided source", i);
            break;
        }
    }
    free(b);
    memset(back, 0, BIG);
    for (int i = 0; i < NCH; i++) {
        CHECK_OK(MPI_File_iread_shared(fh, back + (size_t)i * CHUNK, CHUNK, MPI_BYTE, &reqs[i]));
    }
    CHECK_OK(MPI_Waitall(NCH, reqs, MPI_STATUSES_IGNORE));
    for (int i = 0; i < NCH * CHUNK / 64; i++) {
        if (memcmp(back + (size_t)i * 64, buf + (size_t)i * 128, 64) != 0) {
            CHECK(0, "iread_shared block %d differs", i);
            break;
        }
    }
    CHECK_OK(MPI_File_close(&fh));
    MPI_Type_free(&strided);
}

int main(int argc, char **argv)
{
    char           path[600], name[64];
    int            rank;
    unsigned char *buf, *back;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    io_dir_make();
    buf  = malloc(BIG);
    back = malloc(BIG);
    for (int i = 0; i < BIG; i++) {
        buf[i] = (unsigned char)(i * 31 + rank * 7 + (i >> 12));
    }
    snprintf(name, sizeof(name), "blocked%d.dat", rank);
    io_path(path, sizeof(path), name);
    blocked_transfer(path, buf, back);
    snprintf(name, sizeof(name), "many%d.dat", rank);
    io_path(path, sizeof(path), name);
    many_in_flight(path, buf, back);
    free(buf);
    free(back);
    io_dir_remove();
    return mpitest_finish();
}
