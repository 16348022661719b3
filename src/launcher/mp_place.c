/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Binding, placing ranks on hosts, PMI mapping, rank environment.
 */
#include "mpiexec.h"

void mp_load_binding(void)
{
    char err[1200];

    mp.bind.enable = weft_tunables.ENABLE_AFFINITY;
    mp.bind.policy = weft_tunables.CPU_BINDING_POLICY;
    mp.bind.level  = weft_tunables.CPU_BINDING_LEVEL;
    mp.bind.show   = weft_tunables.SHOW_CPU_BINDING;
    snprintf(mp.bind.mapping, sizeof(mp.bind.mapping), "%s",
             weft_tunables.CPU_MAPPING ? weft_tunables.CPU_MAPPING : "");
    if (mp.bindto != NULL) {
        if (!strcmp(mp.bindto, "none")) {
            mp.bind.policy = WEFT_BIND_NONE;
        } else {
            if (mp.bind.policy == WEFT_BIND_NONE) {
                mp.bind.policy = WEFT_BIND_BUNCH;
            }
            mp.bind.level = !strcmp(mp.bindto, "core")     ? WEFT_BIND_CORE
                            : !strcmp(mp.bindto, "socket") ? WEFT_BIND_SOCKET
                                                           : WEFT_BIND_NUMA;
            mp.bind.mapping[0] = '\0'; /* an explicit flag beats an inherited map */
        }
    }
    if (mp.bind.mapping[0] != '\0' &&
        weft_binding_check_mapping(mp.bind.mapping, err, sizeof(err)) != 0) {
        const char *origin = weft_tunables_origin(WEFT_TUNABLE_CPU_MAPPING);
        mp_die(MP_EXIT_USAGE, "%s: %s", origin ? origin : "WEFT_CPU_MAPPING", err);
    }
}

/* Place ranks on hosts and group them into one proxy per distinct host. */
void mp_place(void)
{
    int r = 0;

    if (mp.nhosts == 0) {
        mp.hosts  = calloc(1, sizeof(weft_host_t));
        mp.nhosts = 1;
        if (gethostname(mp.hosts[0].name, sizeof(mp.hosts[0].name)) != 0) {
            snprintf(mp.hosts[0].name, sizeof(mp.hosts[0].name), "localhost");
        }
        mp.hosts[0].name[sizeof(mp.hosts[0].name) - 1] = '\0';
        mp.hosts[0].slots = mp.np;
        mp.proxies        = calloc(1, sizeof(mp_proxy_t));
        mp.proxies[0].is_local = 1;
        snprintf(mp.proxies[0].host, sizeof(mp.proxies[0].host), "%s", mp.hosts[0].name);
        mp.nproxies = 1;
    } else {
        mp.proxies = calloc((size_t)mp.nhosts, sizeof(mp_proxy_t));
        if (mp.proxies == NULL) {
            mp_die(1, "out of memory");
        }
        for (int h = 0; h < mp.nhosts; h++) { /* one proxy per distinct name */
            int p;
            for (p = 0; p < mp.nproxies; p++) {
                if (!strcmp(mp.proxies[p].host, mp.hosts[h].name)) {
                    break;
                }
            }
            if (p == mp.nproxies) {
                snprintf(mp.proxies[p].host, sizeof(mp.proxies[p].host), "%s", mp.hosts[h].name);
                mp.nproxies++;
            }
        }
        if (mp.all_local || mp.slurm_boot) {
            for (int p = 0; p < mp.nproxies; p++) {
                mp.proxies[p].is_local = mp.all_local;
            }
        } else {
            /* Names that do not resolve here are remote: they go to the
             * launcher command as given. */
            const char **names = calloc((size_t)mp.nproxies, sizeof(*names));
            int         *local = calloc((size_t)mp.nproxies, sizeof(*local));
            if (names == NULL || local == NULL) {
                mp_die(1, "out of memory");
            }
            for (int p = 0; p < mp.nproxies; p++) {
                names[p] = mp.proxies[p].host;
            }
            weft_hosts_find_local(names, mp.nproxies, local, MP_HOST_LOOKUP_MS);
            for (int p = 0; p < mp.nproxies; p++) {
                mp.proxies[p].is_local = local[p];
            }
            free(names);
            free(local);
        }
    }
    mp.ranks        = calloc((size_t)mp.np, sizeof(mp_rank_t));
    mp.node_of_rank = calloc((size_t)mp.np, sizeof(int));
    if (mp.proxies == NULL || mp.ranks == NULL || mp.node_of_rank == NULL) {
        mp_die(1, "out of memory");
    }
    /* Hosts in order, each taking -ppn (or its slot count) ranks, wrapping
     * around when every host is full. */
    while (r < mp.np) {
        for (int h = 0; h < mp.nhosts && r < mp.np; h++) {
            int block = mp.ppn > 0 ? mp.ppn : mp.hosts[h].slots;
            int p;
            for (p = 0; p < mp.nproxies; p++) {
                if (!strcmp(mp.proxies[p].host, mp.hosts[h].name)) {
                    break;
                }
            }
            for (int k = 0; k < block && r < mp.np; k++, r++) {
                mp_proxy_t *px = &mp.proxies[p];
                px->ranks      = realloc(px->ranks, sizeof(int) * (size_t)(px->nranks + 1));
                px->ranks[px->nranks++] = r;
                mp.ranks[r].proxy       = p;
                mp.node_of_rank[r]      = p;
            }
        }
    }
    /* Hosts that got no rank (-n below the slot count) get no proxy. */
    int kept = 0;
    for (int p = 0; p < mp.nproxies; p++) {
        if (mp.proxies[p].nranks == 0) {
            continue;
        }
        for (int k = 0; k < mp.proxies[p].nranks; k++) {
            int rank                = mp.proxies[p].ranks[k];
            mp.ranks[rank].proxy    = kept;
            mp.node_of_rank[rank]   = kept;
        }
        mp.proxies[kept++] = mp.proxies[p];
    }
    mp.nproxies = kept;
}

/* PMI_process_mapping: one (node,1,count) block per run of ranks. */
char *mp_mapping(void)
{
    weft_buf_t b = {0};
    char       item[64];

    weft_buf_append(&b, "(vector", 7);
    for (int r = 0; r < mp.np;) {
        int s = r;
        while (r < mp.np && mp.node_of_rank[r] == mp.node_of_rank[s]) {
            r++;
        }
        snprintf(item, sizeof(item), ",(%d,1,%d)", mp.node_of_rank[s], r - s);
        weft_buf_append(&b, item, strlen(item));
    }
    weft_buf_append(&b, ")", 2);
    if (b.len > 1000) {
        b.data[0] = '\0'; /* too long for one PMI value: clients use host names */
    }
    return b.data;
}

char **mp_build_env(int *n_p)
{
    /* A job started from inside another job's rank is not spawned by it. */
    static const char *const strip[] = {"PMI_FD=",    "PMI_PORT=",       "PMI_ID=",
                                        "PMI_RANK=",  "PMI_SIZE=",       "PMI_JOBID=",
                                        "WEFT_JOBID=", "PMI_SPAWNED=",   "WEFT_PMI_PREPUT=",
                                        "WEFT_PMI_JOB="};
    char **env = NULL;
    int    n   = 0;

    if (!mp.genvnone) {
        for (char **e = environ; *e != NULL; e++) {
            int skip = 0;
            for (size_t s = 0; s < sizeof(strip) / sizeof(strip[0]) && !skip; s++) {
                skip = strncmp(*e, strip[s], strlen(strip[s])) == 0;
            }
            if (!skip) {
                env      = realloc(env, sizeof(char *) * (size_t)(n + 1));
                env[n++] = *e;
            }
        }
    }
    for (int i = 0; i < mp.nenvset; i++) {
        size_t len = strcspn(mp.envset[i], "=") + 1;
        int    j;
        for (j = 0; j < n; j++) {
            if (strncmp(env[j], mp.envset[i], len) == 0) {
                break;
            }
        }
        if (j == n) {
            env = realloc(env, sizeof(char *) * (size_t)(n + 1));
            n++;
        }
        env[j] = mp.envset[i];
    }
    *n_p = n;
    return env;
}
