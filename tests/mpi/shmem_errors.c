/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM bad input; argv[1] picks the case. Each case must abort the job
 * with a message naming the call (tests/mpi/test_shmem_errors.py checks it);
 * reaching the end prints "NOT ABORTED" and exits 0, which the test fails. */
#include <shmem.h>
#include <stdio.h>
#include <string.h>

static int global_var;

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "before-init")) {
        shmem_my_pe();
    }
    shmem_init();
    int *sym = shmem_malloc(4 * sizeof(int)), v = 1;
    if (!strcmp(c, "bad-pe")) {
        shmem_int_put(sym, &v, 1, shmem_n_pes());
    } else if (!strcmp(c, "not-symmetric")) {
        int on_stack = 0;
        shmem_int_put(&on_stack, &v, 1, 0);
    } else if (!strcmp(c, "globals-off")) { /* run with WEFT_SHMEM_SYMMETRIC_GLOBALS=0 */
        shmem_int_put(&global_var, &v, 1, 0);
    } else if (!strcmp(c, "active-not-member")) {
        static long psync[SHMEM_BARRIER_SYNC_SIZE];
        if (shmem_my_pe() == 1) {
            shmem_barrier(0, 0, 1, psync); /* the set is PE 0 alone */
        }
        shmem_barrier_all(); /* PE 1 aborts the job */
    } else if (!strcmp(c, "ctx-invalid")) {
        shmem_ctx_int_put(SHMEM_CTX_INVALID, sym, &v, 1, 0);
    } else if (!strcmp(c, "ctx-options")) {
        shmem_ctx_t ctx;
        shmem_ctx_create(1L << 20, &ctx);
    } else if (!strcmp(c, "ctx-destroy-default")) {
        shmem_ctx_destroy(SHMEM_CTX_DEFAULT);
    } else if (!strcmp(c, "ctx-team-pe")) { /* a 1-PE team's context addresses PE 0 only */
        shmem_team_t solo;
        shmem_ctx_t ctx;
        shmem_team_split_strided(SHMEM_TEAM_WORLD, 0, 1, 1, NULL, 0, &solo);
        if (shmem_my_pe() == 0) {
            shmem_team_create_ctx(solo, 0, &ctx);
            shmem_ctx_int_p(ctx, sym, 1, 1);
        }
        shmem_barrier_all(); /* PE 0 aborts the job */
    } else if (!strcmp(c, "remote-past-heap-end")) { /* PE 0 aims at the last PE (another node) */
        if (shmem_my_pe() == 0) {
            shmem_int_get(&v, sym, 1 << 30, shmem_n_pes() - 1);
        }
        shmem_barrier_all();
    } else if (!strcmp(c, "remote-not-symmetric")) {
        int on_stack = 0;
        if (shmem_my_pe() == 0) {
            shmem_int_put(&on_stack, &v, 1, shmem_n_pes() - 1);
        }
        shmem_barrier_all();
    } else if (!strcmp(c, "past-heap-end")) {
        shmem_int_get(&v, sym, 1 << 30, 0);
    } else if (!strcmp(c, "heap-exhausted")) {
        shmem_malloc((size_t)1 << 40);
    } else if (!strcmp(c, "asymmetric-malloc")) {
        shmem_malloc(64 + (size_t)shmem_my_pe());
    } else if (!strcmp(c, "bad-cmp")) {
        shmem_int_wait_until(sym, 42, 0);
    }
    printf("NOT ABORTED (%s)\n", c);
    shmem_finalize();
    return 0;
}
