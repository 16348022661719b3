/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * coll_region_wait SECONDS: rank 0 enters a barrier on a new communicator at
 * once (so it makes the node's shared-memory collective region and waits
 * for the others to map it) while the other ranks sleep SECONDS first: the
 * region's name stays in /dev/shm for that long. Run by
 * tests/mpi/test_fault.py, which kills rank 0 in that window and checks the
 * launcher's cleanup removes the file (not in the manifest).
 */
#include <stdlib.h>
#include <unistd.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int      rank, seconds = argc > 1 ? atoi(argv[1]) : 3;
    MPI_Comm comm;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    if (rank != 0) {
        sleep((unsigned)seconds);
    }
    CHECK_OK(MPI_Barrier(comm));
    CHECK_OK(MPI_Comm_free(&comm));
    return mpitest_finish();
}
