/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * pmi_probe: exercises the PMI client (src/pmi) under a launcher.
 *   pmi_probe [--rounds N] [--allgather BYTES] [--abort RANK CODE]
 *             [--no-finalize RANK] [--exit RANK CODE] [--time-gets N]
 *             [--linger-node NODE MS]
 * --time-gets N: after the rounds, N passes of gets of every rank's last key;
 * prints "probe: rank=R gets=G usec_per_get=U shm=S" (S: 1 when the
 * proxy's shared-memory snapshot answered them, pmi_shm.h).
 * --linger-node NODE MS: that node's ranks wait MS after the rounds and map
 * the snapshot again before the gets (no PMI fence in init: rounds = fences).
 * Prints one "probe:" line with what PMI said, checks put/fence/get rounds
 * and allgather across all ranks, prints "probe: rank=R ok" at the end.
 * Exit 0 on success, 3 on a data mismatch, 4 on a PMI failure.
 */
#include "pmi/pmi.h"
#include "pmi/pmi_shm.h"
#include "util/tunables.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    weft_pmi_info_t info;
    char            err[512], key[64], val[WEFT_PMI_MAX_VAL], want[WEFT_PMI_MAX_VAL];
    int             rounds = 1, agbytes = 0, abort_rank = -1, abort_code = 0;
    int             nofin_rank = -1, exit_rank = -1, exit_code = 0, time_gets = 0;
    int             linger_node = -1, linger_ms = 0;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--rounds") && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--allgather") && i + 1 < argc) {
            agbytes = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--abort") && i + 2 < argc) {
            abort_rank = atoi(argv[++i]);
            abort_code = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--no-finalize") && i + 1 < argc) {
            nofin_rank = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--time-gets") && i + 1 < argc) {
            time_gets = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--linger-node") && i + 2 < argc) {
            linger_node = atoi(argv[++i]);
            linger_ms   = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--exit") && i + 2 < argc) {
            exit_rank = atoi(argv[++i]);
            exit_code = atoi(argv[++i]);
        } else {
            fprintf(stderr, "pmi_probe: unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    if (weft_tunables_load(err, sizeof(err)) != 0) {
        fprintf(stderr, "pmi_probe: %s\n", err);
        return 2;
    }
    if (weft_pmi_init(&info) != 0) {
        return 4;
    }
    printf("probe: rank=%d size=%d local_rank=%d local_size=%d node=%d nodes=%d version=%d "
           "universe=%d singleton=%d local_ranks=",
           info.rank, info.size, info.local_rank, info.local_size, info.node_id, info.node_count,
           info.pmi_version, weft_pmi_universe_size(), info.is_singleton);
    for (int i = 0; i < info.local_size; i++) {
        printf("%s%d", i ? "," : "", info.local_ranks[i]);
    }
    printf("\n");
    fflush(stdout);

    if (info.rank == abort_rank) {
        weft_pmi_abort(abort_code, "probe abort requested");
    }
    if (info.rank == exit_rank) {
        _exit(exit_code);
    }
    for (int round = 0; round < rounds; round++) {
        snprintf(key, sizeof(key), "probe%d", round);
        snprintf(val, sizeof(val), "value-%d-of-rank-%d", round, info.rank);
        if (weft_pmi_put(key, val) != 0 || weft_pmi_fence() != 0) {
            return 4;
        }
        for (int r = 0; r < info.size; r++) {
            snprintf(want, sizeof(want), "value-%d-of-rank-%d", round, r);
            if (weft_pmi_get(r, key, val, sizeof(val)) != 0) {
                return 4;
            }
            if (strcmp(val, want) != 0) {
                fprintf(stderr, "probe: rank=%d round %d: rank %d gave '%s', want '%s'\n",
                        info.rank, round, r, val, want);
                return 3;
            }
        }
    }
    if (info.node_id == linger_node) {
        /* Lets the other hosts' ranks and proxies end first, then maps the
         * last fence's snapshot again by name, as a rank slow to leave that
         * fence would: their cleanup must have left it in place. */
        usleep((useconds_t)linger_ms * 1000);
        weft_pmi_shm_attach((uint32_t)rounds);
    }
    if (time_gets > 0 && rounds > 0) {
        struct timespec t0, t1;
        snprintf(key, sizeof(key), "probe%d-0", rounds - 1); /* the client's wire key */
        int shm = weft_pmi_shm_lookup(key) != NULL;
        snprintf(key, sizeof(key), "probe%d", rounds - 1);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int pass = 0; pass < time_gets; pass++) {
            for (int r = 0; r < info.size; r++) {
                if (weft_pmi_get(r, key, val, sizeof(val)) != 0) {
                    return 4;
                }
            }
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double usec = ((double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec)) /
                      1e3 / ((double)time_gets * info.size);
        printf("probe: rank=%d gets=%d usec_per_get=%.3f shm=%d\n", info.rank,
               time_gets * info.size, usec, shm);
    }
    if (agbytes > 0) {
        unsigned char *mine = malloc((size_t)agbytes);
        unsigned char *all  = malloc((size_t)agbytes * (size_t)info.size);
        for (int i = 0; i < agbytes; i++) {
            mine[i] = (unsigned char)(info.rank * 31 + i);
        }
        if (weft_pmi_allgather(mine, (size_t)agbytes, all) != 0) {
            return 4;
        }
        for (int r = 0; r < info.size; r++) {
            for (int i = 0; i < agbytes; i++) {
                if (all[(size_t)r * (size_t)agbytes + (size_t)i] != (unsigned char)(r * 31 + i)) {
                    fprintf(stderr, "probe: rank=%d allgather byte %d of rank %d wrong\n",
                            info.rank, i, r);
                    return 3;
                }
            }
        }
        free(mine);
        free(all);
    }
    printf("probe: rank=%d ok\n", info.rank);
    fflush(stdout);
    if (info.rank == nofin_rank) {
        return 0;
    }
    return weft_pmi_finalize() == 0 ? 0 : 4;
}
