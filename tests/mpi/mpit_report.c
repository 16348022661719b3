/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Known traffic for the job report (tests/mpi/test_mpit_report.py checks the
 * numbers): rank r sends 3 messages of 100*(r+1) bytes and one of 50000 bytes
 * to rank r+1 (mod size), nothing else, and checks what it receives. With an
 * argument, the program itself asks for the JSON report there by writing the
 * WEFT_REPORT_FILE control variable through MPI_T after MPI_Init.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
    static char sbuf[50000], rbuf[50000];
    int         rank, size, count;
    MPI_Status  st;

    MPI_Init(&argc, &argv);
    if (argc > 1) {
        MPI_T_cvar_handle h;
        int               provided, index, n;
        CHECK(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) == MPI_SUCCESS, "MPI_T_init_thread");
        CHECK(MPI_T_cvar_get_index("WEFT_REPORT_FILE", &index) == MPI_SUCCESS, "no WEFT_REPORT_FILE");
        CHECK(MPI_T_cvar_handle_alloc(index, NULL, &h, &n) == MPI_SUCCESS, "handle");
        CHECK(MPI_T_cvar_write(h, argv[1]) == MPI_SUCCESS, "write %s", argv[1]);
        MPI_T_cvar_handle_free(&h);
        MPI_T_finalize();
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    mpitest_fill(sbuf, sizeof(sbuf), (unsigned)rank);
    for (int i = 0; i < 3; i++) {
        MPI_Sendrecv(sbuf, 100 * (rank + 1), MPI_BYTE, right, i, rbuf, (int)sizeof(rbuf), MPI_BYTE,
                     left, i, MPI_COMM_WORLD, &st);
        MPI_Get_count(&st, MPI_BYTE, &count);
        CHECK(count == 100 * (left + 1) && mpitest_verify(rbuf, (size_t)count, (unsigned)left) < 0,
              "message %d from %d: %d bytes", i, left, count);
    }
    MPI_Sendrecv(sbuf, 50000, MPI_BYTE, right, 3, rbuf, 50000, MPI_BYTE, left, 3, MPI_COMM_WORLD, &st);
    CHECK(mpitest_verify(rbuf, sizeof(rbuf), (unsigned)left) < 0, "large message from %d", left);
    /* No collective here: the report must show only the ring. Errors are
     * reported by the exit code; "No Errors" needs no communication. */
    if (rank == 0 && mpitest_errors == 0) {
        printf("No Errors\n");
    }
    fflush(stdout);
    MPI_Finalize();
    return mpitest_errors ? 1 : 0;
}
