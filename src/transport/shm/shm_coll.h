/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Named shared-memory regions for the collective layer's node-local phase
 * (one region per communicator and node). The creator makes the region,
 * the other ranks of the node attach by name (the name travels over
 * point-to-point, which the collective layer owns), and once everyone has
 * it mapped the creator unlinks it. The name starts with the job's prefix
 * ("/weft-<jobid>-"), so a rank killed between create and unlink leaves a
 * file the launcher's cleanup of the job's segments removes.
 */
#ifndef WEFT_TRANSPORT_SHM_COLL_H
#define WEFT_TRANSPORT_SHM_COLL_H

#include <stddef.h>

#define WEFT_SHM_REGION_NAME_MAX 128

/* The job id for region names (weft_shm_init sets it). */
void  weft_shm_region_set_job(const char *jobid);

/* Create and map a zeroed region of bytes (mode 0600); its name goes to
 * name. NULL on failure (the reason is logged once). */
void *weft_shm_region_create(size_t bytes, char name[WEFT_SHM_REGION_NAME_MAX]);
/* Map a region another rank created. NULL on failure. */
void *weft_shm_region_attach(const char *name, size_t bytes);
/* Map [addr, addr + bytes) of a region into this process's page tables
 * now, allocating missing pages (instead of a page fault at each first
 * touch); does nothing where the kernel cannot (before Linux 5.14). */
void  weft_shm_region_prefault(void *addr, size_t bytes);
/* Copy bytes between local (in this process) and remote (in process pid,
 * a rank of this node) by CMA: to_remote 0 reads remote into local
 * (process_vm_readv), 1 writes local to remote (process_vm_writev);
 * repeated over partial copies. 0, or an errno. */
int   weft_shm_region_cma_copy(int pid, void *local, const void *remote, size_t bytes,
                               int to_remote);
/* Remove the name (mappings stay valid). */
void  weft_shm_region_unlink(const char *name);
void  weft_shm_region_unmap(void *base, size_t bytes);

#endif
