/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Host lists (-hosts a,b:2 and hostfiles with "host[:slots]" lines) and the
 * question "is this host the machine we run on".
 */
#ifndef WEFT_LAUNCHER_HOSTS_H
#define WEFT_LAUNCHER_HOSTS_H

#include <stddef.h>

typedef struct {
    char name[256];
    int  slots; /* >= 1 */
} weft_host_t;

/* Append the hosts of "a,b:2" to (*hosts, *n). 0, or -1 with err. */
int weft_hosts_parse_list(const char *list, weft_host_t **hosts, int *n, char *err, size_t errlen);
/* Append the hosts of a hostfile (# comments, blank lines allowed). */
int weft_hosts_parse_file(const char *path, weft_host_t **hosts, int *n, char *err, size_t errlen);
/* Append the hosts of a Slurm allocation: nodelist in Slurm's compressed
 * form ("node[01-03,7],gpu1"), slots from tasks_per_node ("2(x3),1"; NULL or
 * "": 1 per node). 0, or -1 with err. */
int weft_hosts_parse_slurm(const char *nodelist, const char *tasks_per_node, weft_host_t **hosts,
                           int *n, char *err, size_t errlen);
/* For each of n names, local[i] = 1 when it names this machine (its host
 * name, "localhost", or a name or address of one of its interfaces), else
 * 0. Names are looked up at once; one not answered within budget_ms, or
 * unknown here, counts as another machine. */
void weft_hosts_find_local(const char *const *names, int n, int *local, int budget_ms);

#endif
