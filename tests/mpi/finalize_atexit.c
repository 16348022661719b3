/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Finalize called from the application's own atexit handler (registered
 * before MPI_Init, so it runs after Weft's): the job must still end cleanly
 * (exit code 0, no "exited without finalizing"), since the PMI connection
 * is now closed at exit rather than in MPI_Finalize (runtime.c). argv[1]
 * "session": the handler also opens and closes a session after MPI_Finalize
 * (a restart of the runtime during exit).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int with_session;

static void finalize_at_exit(void)
{
    MPI_Finalize();
    if (with_session) {
        MPI_Session s;
        if (MPI_Session_init(MPI_INFO_NULL, MPI_ERRORS_RETURN, &s) != MPI_SUCCESS ||
            MPI_Session_finalize(&s) != MPI_SUCCESS) {
            fprintf(stderr, "FAIL: session after MPI_Finalize in atexit\n");
            _exit(1);
        }
    }
}

int main(int argc, char **argv)
{
    int rank, flag;

    with_session = argc > 1 && strcmp(argv[1], "session") == 0;
    atexit(finalize_at_exit);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalized(&flag);
    if (flag) {
        fprintf(stderr, "FAIL: MPI_Finalized true before MPI_Finalize\n");
        return 1;
    }
    if (rank == 0) {
        printf("No Errors\n");
    }
    return 0;
}
