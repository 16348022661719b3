/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * slurm_ring: a small MPI program for tests/launcher/test_slurm.py (built by
 * the test with the installed mpicc). Checks that rank and size agree with
 * the launcher's view (PMI_RANK/PMIX_RANK/SLURM_PROCID, PMI_SIZE/SLURM_NTASKS,
 * the first one set), passes a 4 KiB pattern twice around a ring comparing every byte, and
 * checks an allreduce. Prints "ring ok R of N" and exits 0, or names the
 * failure and exits 1.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING_BYTES 4096

static int env_or(const char *name, int dflt)
{
    const char *v = getenv(name);
    return v != NULL ? atoi(v) : dflt;
}

int main(int argc, char **argv)
{
    int rank, size, bad = 0, sum = 0;
    unsigned char out[RING_BYTES], in[RING_BYTES];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* PMI_RANK first: ranks that mpirun starts inside an allocation inherit
     * the SLURM_* variables of their proxy's one-task step. */
    int want_rank = env_or("PMI_RANK", env_or("PMIX_RANK", env_or("SLURM_PROCID", rank)));
    int want_size = env_or("PMI_SIZE", env_or("SLURM_NTASKS", size));
    if (rank != want_rank || size != want_size) {
        fprintf(stderr, "ring: rank %d size %d, launcher says %d of %d\n", rank, size, want_rank,
                want_size);
        bad = 1;
    }
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int lap = 0; lap < 2 && !bad; lap++) {
        /* Each rank sends a pattern made from its rank and the lap and checks
         * the one from its predecessor. */
        for (int i = 0; i < RING_BYTES; i++) {
            out[i] = (unsigned char)(rank * 31 + lap * 7 + i);
        }
        MPI_Sendrecv(out, RING_BYTES, MPI_BYTE, next, lap, in, RING_BYTES, MPI_BYTE, prev, lap,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < RING_BYTES; i++) {
            if (in[i] != (unsigned char)(prev * 31 + lap * 7 + i)) {
                fprintf(stderr, "ring: rank %d lap %d byte %d is %u\n", rank, lap, i, in[i]);
                bad = 1;
                break;
            }
        }
    }
    MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (sum != size * (size - 1) / 2) {
        fprintf(stderr, "ring: rank %d allreduce gave %d\n", rank, sum);
        bad = 1;
    }
    if (!bad) {
        printf("ring ok %d of %d\n", rank, size);
    }
    MPI_Finalize();
    return bad;
}
