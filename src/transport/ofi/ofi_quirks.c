/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * libfabric settings and work-arounds: startup cost Weft does not need,
 * removed after dlopen; ofi_rxm's eager limit and pass-through, set before.
 *
 * libfabric's verbs provider, built into the Debian library, reads
 * /proc/kallsyms twice at its first fi_getinfo, line by line, looking for
 * the kernel's dma-buf and peer-memory registration symbols (GPU memory over
 * RDMA). Reading that file costs 0.1-0.25 s of kernel CPU per process, paid
 * by every rank that opens the netmod, whichever provider it then uses: with
 * 16 ranks on 2 cores it is seconds of startup. Weft registers host memory
 * only, so the answer does not matter to it. We therefore point libfabric's
 * own import of fopen (its GOT entry, the way memory-hook libraries
 * intercept calls) at a wrapper that refuses that one path and passes every
 * other call through. Only libfabric's calls are affected, never the
 * application's. WEFT_OFI_KERNEL_SYMBOLS=1 leaves libfabric untouched.
 *
 * ofi_rxm (the RDM layer over tcp and verbs) sends a message up to its
 * eager limit (FI_OFI_RXM_EAGER_LIMIT, 16 KiB by default) at once and
 * anything larger by segments or a rendezvous of its own. Our largest
 * eager message is the eager threshold plus our header, so it must fit
 * under that limit: when a 16 KiB message crossed it, it took 36.5 us
 * instead of 12.2 us, 754 instead of 1733 MB/s across two namespace hosts.
 * Over tcp the limit can exceed rxm's bounce buffers (FI_OFI_RXM_BUFFER_SIZE):
 * the tcp provider places a message straight into our posted receive
 * buffer and sends from ours, so only the limit is raised and rxm's pools
 * (thousands of buffers) stay small; sizing the buffers for a 64 KiB
 * threshold instead grew each rank by 300 MB. Over verbs rxm requires the
 * two to be equal, so there the buffers are sized too.
 *
 * Over tcp, rxm can also pass every call straight to the tcp provider's own
 * reliable-datagram protocol (FI_OFI_RXM_ENABLE_PASSTHRU; Weft asks only
 * for what that path offers: messages and RMA). Across two namespace hosts
 * that took 1 us off the 0-2 KiB latency (medians 8.3-9.3 against 9.4-10.9
 * us; MPICH 9.3-11.1) and raised bw 1.2-1.3x from 2 KiB to 1 MiB; bibw
 * stayed level. It changes the wire protocol, so every rank of a job must
 * agree: it is set here, in every rank, from the same defaults.
 *
 * Values the user set stay; all of it before libfabric starts.
 *
 * Debian's libfabric is also linked against the PSM libraries (Omni-Path,
 * InfiniPath), whose constructors each pin the thread to CPU 0 and sleep
 * for 0.1 s to time the CPU clock: every rank that opened the netmod waited
 * 0.2 s, on hosts without such hardware too (4 namespace hosts x 1 rank,
 * MPI_Init 211 ms). Where no PSM device exists and no psm provider is asked
 * for, inert stand-ins with the same sonames, versions and functions
 * (gen_psm_standins.py, installed in <libdir>/weft/ofi-psm) are loaded
 * first, so libfabric binds to them; their functions fail as without a
 * device, and libfabric's psm providers report themselves unavailable.
 * WEFT_OFI_PSM=load loads the real ones.
 */
#include "transport/ofi/ofi_quirks.h"

#include <dirent.h>
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <glob.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/tunables.h"

#define RXM_DEFAULT_BUFFER 16384 /* libfabric 1.x's FI_OFI_RXM_BUFFER_SIZE and EAGER_LIMIT default */

static FILE *fopen_without_kallsyms(const char *path, const char *mode)
{
    if (path != NULL && strcmp(path, "/proc/kallsyms") == 0) {
        errno = EACCES; /* what an unprivileged reader of a locked-down kernel sees */
        return NULL;
    }
    return fopen(path, mode);
}

#if defined(__LP64__) /* 64-bit ELF with RELA relocations: x86_64, aarch64, ppc64le */
static uintptr_t at_runtime(const struct link_map *map, uintptr_t p)
{
    return p < map->l_addr ? p + map->l_addr : p;
}

/* Rewrite the GOT slot at addr; 0 or -1. The slot may sit in RELRO (read-only
 * after relocation): make its page writable for the store, then read-only
 * again. */
static int patch_slot(void **addr, void *fn)
{
    long      page  = sysconf(_SC_PAGESIZE);
    uintptr_t start = (uintptr_t)addr & ~(uintptr_t)(page - 1);
    size_t    len   = (uintptr_t)(addr + 1) - start > (uintptr_t)page ? 2 * (size_t)page
                                                                         : (size_t)page;

    if (mprotect((void *)start, len, PROT_READ | PROT_WRITE) != 0) {
        return -1;
    }
    *addr = fn;
    mprotect((void *)start, len, PROT_READ); /* RELRO again; a writable GOT would also work */
    return 0;
}

/* Point every relocation of symbol name in the object of map at fn; the count. */
static int redirect_import(struct link_map *map, const char *name, void *fn)
{
    const Elf64_Sym *symtab = NULL;
    const char      *strtab = NULL;
    const char      *tables[2] = {NULL, NULL};
    size_t           sizes[2]  = {0, 0};
    int              patched   = 0;

    for (const ElfW(Dyn) *d = map->l_ld; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (const Elf64_Sym *)d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
        case DT_JMPREL: tables[0] = (const char *)d->d_un.d_ptr; break;
        case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
        case DT_RELA: tables[1] = (const char *)d->d_un.d_ptr; break;
        case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
        default: break;
        }
    }
    if (symtab == NULL || strtab == NULL) {
        return 0;
    }
    /* glibc relocates these entries to run-time addresses on most targets
     * (not where the dynamic section is read-only): rebase what it left */
    symtab = (const Elf64_Sym *)at_runtime(map, (uintptr_t)symtab);
    strtab = (const char *)at_runtime(map, (uintptr_t)strtab);
    for (int t = 0; t < 2; t++) {
        tables[t] = tables[t] ? (const char *)at_runtime(map, (uintptr_t)tables[t]) : NULL;
    }
    for (int t = 0; t < 2; t++) {
        for (size_t off = 0; tables[t] != NULL && off + sizeof(Elf64_Rela) <= sizes[t];
             off += sizeof(Elf64_Rela)) {
            const Elf64_Rela *r   = (const Elf64_Rela *)(tables[t] + off);
            size_t            sym = ELF64_R_SYM(r->r_info);
            if (sym != 0 && strcmp(strtab + symtab[sym].st_name, name) == 0 &&
                patch_slot((void **)(map->l_addr + r->r_offset), fn) == 0) {
                patched++;
            }
        }
    }
    return patched;
}

#endif

void ofi_quirks_before_dlopen(size_t eager_message_bytes, const char *provider)
{
    size_t want       = (eager_message_bytes + 63) & ~(size_t)63;
    int    over_verbs = provider != NULL && strstr(provider, "verbs") != NULL;
    char   value[32];

    if (!over_verbs) {
        setenv("FI_OFI_RXM_ENABLE_PASSTHRU", "1", 0); /* a value the user set stays */
    }
    if (want <= RXM_DEFAULT_BUFFER) {
        return; /* rxm's defaults fit */
    }
    snprintf(value, sizeof(value), "%zu", want);
    if (!over_verbs) {
        setenv("FI_OFI_RXM_EAGER_LIMIT", value, 0);
    } else if (getenv("FI_OFI_RXM_BUFFER_SIZE") == NULL &&
               getenv("FI_OFI_RXM_EAGER_LIMIT") == NULL) {
        setenv("FI_OFI_RXM_BUFFER_SIZE", value, 0); /* over verbs limit == buffer: */
        setenv("FI_OFI_RXM_EAGER_LIMIT", value, 0); /* both, or (the user's) neither */
    }
}

void ofi_quirks_after_dlopen(void *lib)
{
    struct link_map *map = NULL;

    if (weft_tunables.OFI_KERNEL_SYMBOLS) {
        return;
    }
#if defined(__LP64__)
    if (dlinfo(lib, RTLD_DI_LINKMAP, &map) == 0 && map != NULL) {
        /* none patched (a libfabric without the import): nothing to skip */
        (void)redirect_import(map, "fopen", (void *)fopen_without_kallsyms);
    }
#else
    (void)lib;
    (void)map;
#endif
}

/* ---- PSM stand-ins ----------------------------------------------------- */

#define PSM_STANDINS_MAX 4

enum { OFI_PSM_AUTO, OFI_PSM_LOAD, OFI_PSM_SKIP }; /* WEFT_OFI_PSM's values, in order */

static void *psm_standins[PSM_STANDINS_MAX];
static int   psm_nstandins;

static int psm_device_present(void)
{
    static const char *const patterns[] = {"/dev/hfi1*", "/dev/ipath*"};

    for (size_t i = 0; i < sizeof(patterns) / sizeof(patterns[0]); i++) {
        glob_t g;
        int    found = glob(patterns[i], 0, NULL, &g) == 0 && g.gl_pathc > 0;
        globfree(&g);
        if (found) {
            return 1;
        }
    }
    return 0;
}

int ofi_quirks_psm_standins(const char *provider)
{
    int            mode = weft_tunables.OFI_PSM;
    Dl_info        self;
    char           dir[4096];
    char          *slash;
    DIR           *d;
    struct dirent *e;

    if (mode == OFI_PSM_LOAD ||
        (mode == OFI_PSM_AUTO && ((provider != NULL && strstr(provider, "psm") != NULL) ||
                                  psm_device_present()))) {
        return 0;
    }
    /* <libdir>/weft/ofi-psm, next to this library */
    if (dladdr((void *)ofi_quirks_psm_standins, &self) == 0 || self.dli_fname == NULL) {
        return 0;
    }
    snprintf(dir, sizeof(dir), "%s", self.dli_fname);
    if ((slash = strrchr(dir, '/')) == NULL) {
        return 0;
    }
    snprintf(slash, sizeof(dir) - (size_t)(slash - dir), "/weft/ofi-psm");
    if ((d = opendir(dir)) == NULL) {
        return 0; /* none built: this libfabric links no PSM library */
    }
    while ((e = readdir(d)) != NULL && psm_nstandins < PSM_STANDINS_MAX) {
        char  path[4096 + 256];
        void *h;
        if (strncmp(e->d_name, "lib", 3) != 0 || strstr(e->d_name, ".so.") == NULL) {
            continue;
        }
        if ((h = dlopen(e->d_name, RTLD_NOW | RTLD_NOLOAD)) != NULL) {
            dlclose(h); /* the real one is in the process already: keep it */
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) != NULL) {
            psm_standins[psm_nstandins++] = h;
        }
    }
    closedir(d);
    return psm_nstandins;
}

void ofi_quirks_psm_standins_drop(void)
{
    while (psm_nstandins > 0) {
        dlclose(psm_standins[--psm_nstandins]);
    }
}
