/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Global and static data as symmetric objects. Every PE runs the same
 * executable, so a global sits at the same offset from the start of the
 * executable's writable segment (data + bss) on every PE, even under ASLR.
 * At shmem_init each PE moves that range onto a memfd of its own: it copies
 * the pages into the memfd and maps the memfd MAP_FIXED over the original
 * addresses, so the program sees the same values at the same addresses. Each
 * PE then maps the memfd of every peer on its node (opened through
 * /proc/<pid>/fd/<n>; PEs on other nodes reach globals by messages), so a
 * put, get or atomic on a global is a load, store or CPU atomic at
 *   peer_base[pe] + (addr - my_base),
 * exactly as for the symmetric heap, and shmem_ptr works on globals too.
 *
 * Limits (docs/design.md "OpenSHMEM"): the remap must happen while no other
 * thread of the program writes its globals (shmem_init time); a process that
 * fork()s without exec shares its globals with the child afterwards; MPI
 * operations must not be pending on global buffers across shmem_init.
 * WEFT_SHMEM_SYMMETRIC_GLOBALS=0 turns this off. */
#include "shmem/shmem_internal.h"
#include "util/tunables.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static char *data_lo;      /* this PE's writable segment, page aligned */
static size_t data_len;    /* 0 while global data is not symmetric */
static char **data_base;   /* data_base[pe]: PE pe's segment mapped here */
static size_t mapped_len;  /* length of each peer mapping in data_base */
static char why_not[160] = "not set up";

struct segment {
    uintptr_t lo, hi;
};

/* The first object dl_iterate_phdr reports is the executable. */
static int find_exe_segment(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct segment *seg = arg;
    uintptr_t relro_end = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_GNU_RELRO) {
            relro_end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W)) {
            uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
            if (relro_end > lo && relro_end <= hi) {
                lo = relro_end; /* the loader made the RELRO part read-only: leave it */
            }
            uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
            seg->lo = lo & ~(page - 1);
            seg->hi = (hi + page - 1) & ~(page - 1); /* the loader protects whole pages below */
            break;
        }
    }
    return 1; /* stop after the executable */
}

/* Copies the whole segment, redzones of instrumented globals included, so
 * AddressSanitizer must not check it; volatile keeps the compiler from
 * turning the loop back into a (checked) memcpy call. */
__attribute__((no_sanitize_address)) static void copy_segment(char *to, const char *from, size_t len)
{
    volatile uint64_t *d = (volatile uint64_t *)(void *)to;
    const uint64_t *s = (const uint64_t *)(const void *)from;
    for (size_t i = 0; i < len / sizeof *d; i++) {
        d[i] = s[i];
    }
}

/* Moves [lo, lo+len) onto a new memfd in place; returns the fd or -1. */
static int remap_onto_memfd(char *lo, size_t len)
{
    int fd = memfd_create("weft-shmem-globals", MFD_CLOEXEC);
    if (fd < 0) {
        snprintf(why_not, sizeof why_not, "memfd_create failed: %m");
        return -1;
    }
    if (ftruncate(fd, (off_t)len) != 0) {
        snprintf(why_not, sizeof why_not, "ftruncate of the globals memfd failed: %m");
        close(fd);
        return -1;
    }
    char *copy = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (copy == MAP_FAILED) {
        snprintf(why_not, sizeof why_not, "mapping the globals memfd failed: %m");
        close(fd);
        return -1;
    }
    copy_segment(copy, lo, len); /* len is whole pages */
    /* MAP_FIXED replaces the old pages atomically: no instant without data. */
    void *at = mmap(lo, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
    munmap(copy, len);
    if (at != lo) {
        snprintf(why_not, sizeof why_not, "remapping the data segment failed: %m");
        close(fd);
        return -1; /* MAP_FIXED failing leaves the old mapping in place */
    }
    return fd;
}

void weft_shmem_data_setup(MPI_Comm world)
{
    int me = weft_shmem.my_pe, n = weft_shmem.n_pes;
    long mine[3] = {(long)getpid(), -1, 0}; /* pid, memfd, length */
    struct segment seg = {0, 0};
    data_len = 0;
    if (!weft_tunables.SHMEM_SYMMETRIC_GLOBALS) {
        snprintf(why_not, sizeof why_not, "WEFT_SHMEM_SYMMETRIC_GLOBALS=0");
    } else {
        dl_iterate_phdr(find_exe_segment, &seg);
        if (seg.hi <= seg.lo) {
            snprintf(why_not, sizeof why_not, "the executable has no writable segment");
        } else {
            mine[2] = (long)(seg.hi - seg.lo);
            mine[1] = remap_onto_memfd((char *)seg.lo, seg.hi - seg.lo);
        }
    }
    long *all = malloc(3 * sizeof(long) * (size_t)n);
    data_base = calloc((size_t)n, sizeof *data_base);
    if (!all || !data_base) {
        weft_shmem_fail("shmem_init", "out of memory");
    }
    PMPI_Allgather(mine, 3, MPI_LONG, all, 3, MPI_LONG, world);
    int ok = 1;
    mapped_len = (size_t)mine[2];
    for (int pe = 0; pe < n && ok; pe++) {
        if (all[3 * pe + 1] < 0) {
            ok = 0;
            if (mine[1] >= 0) {
                snprintf(why_not, sizeof why_not, "PE %d could not set up its globals", pe);
            }
        } else if (all[3 * pe + 2] != mine[2]) {
            ok = 0;
            snprintf(why_not, sizeof why_not,
                     "PEs run executables with different data segments (%ld bytes on PE %d, %ld here)",
                     all[3 * pe + 2], pe, mine[2]);
        }
    }
    for (int pe = 0; pe < n && ok; pe++) {
        if (pe == me) {
            data_base[pe] = (char *)seg.lo;
            continue;
        }
        if (!weft_shmem.heap_base[pe]) {
            continue; /* on another node: reached by messages (shmem_net.c), not mapped */
        }
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/fd/%ld", all[3 * pe], all[3 * pe + 1]);
        int fd = open(path, O_RDWR | O_CLOEXEC);
        void *p = fd < 0 ? MAP_FAILED : mmap(NULL, (size_t)mine[2], PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (fd >= 0) {
            close(fd);
        }
        if (p == MAP_FAILED) {
            snprintf(why_not, sizeof why_not, "cannot map PE %d's globals through %s: %m", pe, path);
            ok = 0;
        } else {
            data_base[pe] = p;
        }
    }
    int all_ok = 0;
    PMPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, world); /* also: every peer has opened our fd */
    if (mine[1] >= 0) {
        close((int)mine[1]); /* the mappings keep the memory */
    }
    free(all);
    if (!all_ok) {
        if (ok) {
            snprintf(why_not, sizeof why_not, "another PE could not map the globals");
        }
        weft_shmem_data_teardown();
        return;
    }
    data_lo = (char *)seg.lo;
    data_len = (size_t)mine[2];
}

void weft_shmem_data_teardown(void)
{
    for (int pe = 0; data_base && pe < weft_shmem.n_pes; pe++) {
        if (data_base[pe] && pe != weft_shmem.my_pe) {
            munmap(data_base[pe], mapped_len);
        }
    }
    free(data_base);
    data_base = NULL;
    data_len = 0;
}

void *weft_shmem_data_remote(const void *addr, size_t bytes, int pe)
{
    const char *p = addr;
    if (!data_len || p < data_lo || p >= data_lo + data_len || bytes > (size_t)(data_lo + data_len - p)) {
        return NULL;
    }
    return data_base[pe] ? data_base[pe] + (p - data_lo) : NULL;
}

bool weft_shmem_data_offset(const void *addr, size_t bytes, uint64_t *off)
{
    const char *p = addr;
    if (!data_len || p < data_lo || p >= data_lo + data_len || bytes > (size_t)(data_lo + data_len - p)) {
        return false;
    }
    *off = (uint64_t)(p - data_lo);
    return true;
}

void *weft_shmem_data_at(uint64_t off, size_t bytes)
{
    if (!data_len || off > data_len || bytes > data_len - off) {
        return NULL;
    }
    return data_lo + off;
}

void *weft_shmem_data_range(size_t *len)
{
    *len = data_len;
    return data_len ? data_lo : NULL;
}

const char *weft_shmem_data_why_not(void)
{
    return data_len ? NULL : why_not;
}
