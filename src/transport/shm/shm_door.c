/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * A door: the inbox where processes of other jobs on this host knock before
 * we know them (a connect to one of our ports: we then attach the bridge it
 * made). Many knockers, one owner: a knocker claims a free slot with a
 * compare-and-swap, fills it, marks it full and rings the owner's wake
 * socket; the owner takes full slots in its accept loop. The segment lives
 * under the job's /dev/shm name prefix, so the launcher removes it after a
 * kill -9; a normal run unlinks it at finalize.
 */
#include "transport/shm/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "util/log.h"

#define DOOR_MAGIC 0x57444f52u /* "WDOR" */
#define DOOR_SLOTS 16

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_FULL };

typedef struct {
    uint32_t state;
    uint32_t len;
    char     data[WEFT_SHM_DOOR_RECORD];
} door_slot_t;

typedef struct {
    uint32_t    magic;
    uint32_t    pad;
    char        wake[104]; /* the owner's wake socket name */
    door_slot_t slot[DOOR_SLOTS];
} door_t;

static struct {
    door_t *door;
    char    name[320];
    int     next; /* slot to look at first */
} own;

int weft_shm_door_open(const char *name)
{
    int fd;

    if (own.door != NULL) {
        return 0;
    }
    fd = shm_open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)sizeof(door_t)) != 0) {
        weft_log_error("cannot create shared memory segment %s: %s", name, strerror(errno));
        if (fd >= 0) {
            close(fd);
        }
        return -1;
    }
    door_t *d = mmap(NULL, sizeof(door_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (d == MAP_FAILED) {
        shm_unlink(name);
        weft_log_error("cannot map shared memory segment %s: %s", name, strerror(errno));
        return -1;
    }
    weft_shm_wake_address(d->wake, sizeof(d->wake));
    __atomic_store_n(&d->magic, DOOR_MAGIC, __ATOMIC_RELEASE);
    snprintf(own.name, sizeof(own.name), "%s", name);
    own.door = d;
    return 0;
}

void weft_shm_door_close(void)
{
    if (own.door != NULL) {
        shm_unlink(own.name);
        munmap(own.door, sizeof(door_t));
        own.door = NULL;
    }
}

int weft_shm_door_knock(const char *name, const void *rec, size_t len)
{
    int     fd, rc = -1;
    door_t *d;

    if (len > WEFT_SHM_DOOR_RECORD) {
        return -1;
    }
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        return -1; /* no door (yet, or any more) */
    }
    d = mmap(NULL, sizeof(door_t), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (d == MAP_FAILED) {
        return -1;
    }
    if (__atomic_load_n(&d->magic, __ATOMIC_ACQUIRE) == DOOR_MAGIC) {
        for (int i = 0; i < DOOR_SLOTS && rc != 0; i++) {
            uint32_t want = SLOT_FREE;
            if (__atomic_compare_exchange_n(&d->slot[i].state, &want, SLOT_FILLING, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) {
                memcpy(d->slot[i].data, rec, len);
                d->slot[i].len = (uint32_t)len;
                __atomic_store_n(&d->slot[i].state, SLOT_FULL, __ATOMIC_RELEASE);
                rc = 0;
            }
        }
        if (rc == 0) {
            char wake[sizeof(d->wake)];
            memcpy(wake, d->wake, sizeof(wake));
            wake[sizeof(wake) - 1] = '\0';
            weft_shm_wake_named(wake, sizeof(wake)); /* the owner may sleep on its wake socket */
        }
    }
    munmap(d, sizeof(door_t));
    return rc;
}

size_t weft_shm_door_take(void *rec)
{
    if (own.door == NULL) {
        return 0;
    }
    for (int n = 0; n < DOOR_SLOTS; n++) {
        door_slot_t *s = &own.door->slot[(own.next + n) % DOOR_SLOTS];
        if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == SLOT_FULL) {
            size_t len = s->len <= WEFT_SHM_DOOR_RECORD ? s->len : 0;
            memcpy(rec, s->data, len);
            __atomic_store_n(&s->state, SLOT_FREE, __ATOMIC_RELEASE);
            own.next = (own.next + n + 1) % DOOR_SLOTS;
            return len;
        }
    }
    return 0;
}
