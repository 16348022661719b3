/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Shared-memory PMI snapshot: writer for weft-proxy, reader for ranks (see
 * pmi_shm.h).
 */
#include "pmi_shm.h"

#include "util/tunables.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

uint64_t weft_pmi_shm_hash(const char *key)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *key; key++) {
        h = (h ^ (unsigned char)*key) * 1099511628211ull;
    }
    return h;
}

/* Create name (mode 0600, it must not exist) of size bytes, mapped
 * read-write: its base, or NULL with errno (nothing left behind). */
static char *create_node_segment(const char *name, size_t size)
{
    char *base;
    int   fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600), saved;

    if (fd < 0) {
        return NULL;
    }
    if (ftruncate(fd, (off_t)size) != 0 ||
        (base = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        saved = errno;
        close(fd);
        shm_unlink(name);
        errno = saved;
        return NULL;
    }
    close(fd);
    return base;
}

int weft_pmi_shm_write(const char *name, uint32_t fence, size_t count, const char *const *keys,
                       const char *const *vals)
{
    uint32_t nslots = 16;
    uint64_t strbytes = 0, size, off;
    char    *base;

    while (nslots < 2 * count) {
        nslots *= 2;
    }
    for (size_t i = 0; i < count; i++) {
        strbytes += strlen(keys[i]) + strlen(vals[i]) + 2;
    }
    off  = sizeof(weft_pmi_shm_hdr_t) + (uint64_t)nslots * sizeof(uint32_t);
    size = off + strbytes;
    if (size > UINT32_MAX) {
        errno = EFBIG;
        return -1;
    }
    if ((base = create_node_segment(name, size)) == NULL) {
        return -1;
    }
    uint32_t *slots = (uint32_t *)(base + sizeof(weft_pmi_shm_hdr_t));
    for (size_t i = 0; i < count; i++) {
        size_t klen = strlen(keys[i]) + 1, vlen = strlen(vals[i]) + 1;
        uint32_t s  = (uint32_t)(weft_pmi_shm_hash(keys[i]) & (nslots - 1));
        while (slots[s] != 0) {
            s = (s + 1) & (nslots - 1);
        }
        slots[s] = (uint32_t)off;
        memcpy(base + off, keys[i], klen);
        memcpy(base + off + klen, vals[i], vlen);
        off += klen + vlen;
    }
    weft_pmi_shm_hdr_t hdr = {.magic  = WEFT_PMI_SHM_MAGIC,
                              .fence  = fence,
                              .nslots = nslots,
                              .count  = (uint32_t)count,
                              .size   = size};
    memcpy(base, &hdr, sizeof(hdr));
    munmap(base, size);
    return 0;
}

/* Map "<WEFT_PMI_SHM_NAME><suffix>" read-only when it holds at least min
 * bytes: its base and *size, or NULL (no prefix, WEFT_PMI_SHM=0, missing). */
static void *map_node_segment(const char *suffix, size_t min, size_t *size)
{
    const char *prefix = weft_tunables.PMI_SHM_NAME;
    char        name[256];
    struct stat st;
    void       *base;
    int         fd;

    if (prefix == NULL || *prefix == '\0' || !weft_tunables.PMI_SHM) {
        return NULL;
    }
    snprintf(name, sizeof(name), "%s%s", prefix, suffix);
    fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        return NULL;
    }
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < min ||
        (base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0)) == MAP_FAILED) {
        close(fd);
        return NULL;
    }
    close(fd);
    *size = (size_t)st.st_size;
    return base;
}

static struct {
    const char *base;
    size_t      size;
} reader;

void weft_pmi_shm_detach(void)
{
    if (reader.base != NULL) {
        munmap((void *)reader.base, reader.size);
    }
    reader.base = NULL;
    reader.size = 0;
}

void weft_pmi_shm_attach(uint32_t fence)
{
    char   suffix[16];
    size_t size = 0;
    void  *base;

    weft_pmi_shm_detach();
    snprintf(suffix, sizeof(suffix), ".%u", fence);
    base = map_node_segment(suffix, sizeof(weft_pmi_shm_hdr_t), &size);
    if (base == NULL) {
        return;
    }
    const weft_pmi_shm_hdr_t *hdr = base;
    if (hdr->magic != WEFT_PMI_SHM_MAGIC || hdr->fence != fence ||
        hdr->size != (uint64_t)size || hdr->nslots == 0 ||
        (hdr->nslots & (hdr->nslots - 1)) != 0 ||
        sizeof(*hdr) + (uint64_t)hdr->nslots * sizeof(uint32_t) > hdr->size) {
        munmap(base, size);
        return;
    }
    reader.base = base;
    reader.size = size;
}

const char *weft_pmi_shm_lookup(const char *key)
{
    const weft_pmi_shm_hdr_t *hdr;
    const uint32_t           *slots;
    uint32_t                  s;

    if (reader.base == NULL) {
        return NULL;
    }
    hdr   = (const weft_pmi_shm_hdr_t *)reader.base;
    slots = (const uint32_t *)(reader.base + sizeof(*hdr));
    s     = (uint32_t)(weft_pmi_shm_hash(key) & (hdr->nslots - 1));
    for (uint32_t n = 0; n < hdr->nslots && slots[s] != 0; n++) {
        const char *k = reader.base + slots[s];
        if (slots[s] < reader.size && strcmp(k, key) == 0) {
            return k + strlen(k) + 1;
        }
        s = (s + 1) & (hdr->nslots - 1);
    }
    return NULL;
}

/* ---- ranks the launcher reported lost ----------------------------------- */

static struct {
    weft_pmi_lost_hdr_t *hdr; /* the writer's or the reader's mapping */
    size_t               size;
    uint32_t             seen;     /* reader: entries already handed out */
    int                  tried;    /* reader: the list was looked for */
    char                 name[256]; /* writer: removed at close */
} lost;

static size_t lost_bytes(uint32_t capacity)
{
    return sizeof(weft_pmi_lost_hdr_t) + (size_t)capacity * sizeof(int32_t);
}

int weft_pmi_lost_create(const char *prefix, int size)
{
    char  name[256];
    void *base;

    if (size <= 0) {
        errno = EINVAL;
        return -1;
    }
    snprintf(name, sizeof(name), "%s.lost", prefix);
    if ((base = create_node_segment(name, lost_bytes((uint32_t)size))) == NULL) {
        return -1;
    }
    lost.hdr           = base;
    lost.size          = lost_bytes((uint32_t)size);
    snprintf(lost.name, sizeof(lost.name), "%s", name);
    lost.hdr->capacity = (uint32_t)size;
    __atomic_store_n(&lost.hdr->magic, WEFT_PMI_LOST_MAGIC, __ATOMIC_RELEASE);
    return 0;
}

void weft_pmi_lost_add(int rank)
{
    int32_t *ranks;
    uint32_t n;

    if (lost.hdr == NULL || rank < 0 || (uint32_t)rank >= lost.hdr->capacity) {
        return;
    }
    ranks = (int32_t *)(lost.hdr + 1);
    n     = lost.hdr->count;
    for (uint32_t i = 0; i < n; i++) {
        if (ranks[i] == rank) {
            return;
        }
    }
    if (n < lost.hdr->capacity) {
        ranks[n] = rank;
        __atomic_store_n(&lost.hdr->count, n + 1, __ATOMIC_RELEASE);
    }
}

void weft_pmi_lost_close(void)
{
    if (lost.hdr != NULL) {
        munmap(lost.hdr, lost.size);
    }
    if (lost.name[0] != '\0') {
        shm_unlink(lost.name);
    }
    memset(&lost, 0, sizeof(lost));
}

static void lost_attach(void)
{
    size_t size = 0;

    lost.tried = 1;
    weft_pmi_lost_hdr_t *hdr = map_node_segment(".lost", sizeof(weft_pmi_lost_hdr_t), &size);
    if (hdr == NULL) {
        return;
    }
    if (__atomic_load_n(&hdr->magic, __ATOMIC_ACQUIRE) != WEFT_PMI_LOST_MAGIC ||
        lost_bytes(hdr->capacity) > size) {
        munmap(hdr, size);
        return;
    }
    lost.hdr  = hdr;
    lost.size = size;
}

void weft_pmi_lost_poll(void (*fn)(int rank))
{
    if (!lost.tried) {
        lost_attach();
    }
    if (lost.hdr == NULL) {
        return;
    }
    uint32_t n = __atomic_load_n(&lost.hdr->count, __ATOMIC_ACQUIRE);
    if (n > lost.hdr->capacity) {
        return;
    }
    const int32_t *ranks = (const int32_t *)(lost.hdr + 1);
    for (; lost.seen < n; lost.seen++) {
        fn(ranks[lost.seen]);
    }
}
