/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Named regions for node-local collectives (see shm_coll.h).
 */
#include "transport/shm/shm_coll.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "util/log.h"

static char job_prefix[96] = "/weft-nojob";

void weft_shm_region_set_job(const char *jobid)
{
    snprintf(job_prefix, sizeof(job_prefix), "/weft-%.80s", jobid && jobid[0] ? jobid : "nojob");
    for (char *p = job_prefix + 1; *p; p++) {
        if (*p == '/') {
            *p = '_';
        }
    }
}

static void *map_fd(int fd, size_t bytes)
{
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return p == MAP_FAILED ? NULL : p;
}

void *weft_shm_region_create(size_t bytes, char name[WEFT_SHM_REGION_NAME_MAX])
{
    static unsigned serial;
    static int      warned;
    int             fd;
    void           *p;

    /* job prefix (for the launcher's cleanup) + pid + per-process serial:
     * unique on the node while we live */
    snprintf(name, WEFT_SHM_REGION_NAME_MAX, "%s-coll-%ld-%u", job_prefix, (long)getpid(), serial++);
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0 && ftruncate(fd, (off_t)bytes) != 0) {
        int e = errno;
        close(fd);
        shm_unlink(name);
        fd    = -1;
        errno = e;
    }
    p = fd >= 0 ? map_fd(fd, bytes) : NULL;
    if (p == NULL) {
        if (!warned) {
            warned = 1;
            weft_log_warn("cannot create shared-memory collective region %s (%zu bytes): %s; "
                          "collectives use point-to-point instead", name, bytes, strerror(errno));
        }
        if (fd >= 0) {
            shm_unlink(name);
        }
    }
    return p;
}

void *weft_shm_region_attach(const char *name, size_t bytes)
{
    int fd = shm_open(name, O_RDWR, 0600);
    return fd >= 0 ? map_fd(fd, bytes) : NULL;
}

void weft_shm_region_unlink(const char *name)
{
    shm_unlink(name);
}

void weft_shm_region_prefault(void *addr, size_t bytes)
{
#ifdef MADV_POPULATE_WRITE
    uintptr_t page  = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~(page - 1);
    uintptr_t end   = ((uintptr_t)addr + bytes + page - 1) & ~(page - 1);
    if (bytes > 0) {
        (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE); /* else: faults later */
    }
#else
    (void)addr;
    (void)bytes;
#endif
}

void weft_shm_region_unmap(void *base, size_t bytes)
{
    if (base != NULL) {
        munmap(base, bytes);
    }
}

int weft_shm_region_cma_copy(int pid, void *local, const void *remote, size_t bytes,
                             int to_remote)
{
    size_t done = 0;

    while (done < bytes) {
        struct iovec l = {(char *)local + done, bytes - done};
        struct iovec r = {(char *)(uintptr_t)remote + done, bytes - done};
        ssize_t      n = to_remote ? process_vm_writev((pid_t)pid, &l, 1, &r, 1, 0)
                                   : process_vm_readv((pid_t)pid, &l, 1, &r, 1, 0);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? errno : EFAULT;
        }
        done += (size_t)n;
    }
    return 0;
}
