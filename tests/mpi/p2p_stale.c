/* SPDX-License-Identifier: BSD-3-Clause
 * Regression test for stale ring contents mistaken for messages.
 *
 * Run with WEFT_SMP_QUEUE_LENGTH=64k (a ring of 1024 64-byte cells; the
 * header takes 20 bytes of a message's first cell). Lap 1: rank 0 sends
 * 16-cell messages whose payload words at every later cell boundary hold
 * exactly the sequence value the receiver will expect at that cell when it
 * looks for a header there in lap 2 (position + 1, one lap later). Lap 2:
 * rank 0 sends one-cell messages slowly, so rank 1 polls cells still
 * holding lap-1 payload. A ring that trusted those words would deliver
 * garbage; every message must arrive intact and in order. On any other MPI
 * library the test is an ordinary ordered-delivery check. */
#include <stdint.h>
#include <unistd.h>

#include "mpitest.h"

#define CELLS      1024
#define CELL       64
#define HDR        20
#define BIG_CELLS  16
#define BIG_BYTES  (BIG_CELLS * CELL - HDR)
#define LAP1_MSGS  (CELLS / BIG_CELLS - 2) /* stay clear of the end: no wrap */

int main(int argc, char **argv)
{
    int           rank, size;
    unsigned char big[BIG_BYTES];
    uint32_t      small[4];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        return mpitest_finish();
    }
    if (rank == 0) {
        for (int m = 0; m < LAP1_MSGS; m++) {
            memset(big, m, sizeof(big));
            for (int k = 1; k < BIG_CELLS; k++) {
                uint32_t pos   = (uint32_t)(m * BIG_CELLS + k);
                uint32_t trap  = pos + CELLS + 1; /* expected there next lap */
                memcpy(big + (CELL - HDR) + (k - 1) * CELL, &trap, sizeof(trap));
            }
            MPI_Send(big, BIG_BYTES, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        }
        /* fill the rest of the lap with one-cell messages, then go slowly */
        for (int i = 0; i < 3 * CELLS / 2; i++) {
            small[0] = (uint32_t)i;
            small[1] = ~(uint32_t)i;
            MPI_Send(small, 8, MPI_BYTE, 1, 2, MPI_COMM_WORLD);
            if (i > CELLS / 4 && i % 64 == 0) {
                usleep(200); /* let the receiver run ahead onto stale cells */
            }
        }
    } else if (rank == 1) {
        for (int m = 0; m < LAP1_MSGS; m++) {
            MPI_Recv(big, BIG_BYTES, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            CHECK(big[0] == (unsigned char)m && big[BIG_BYTES - 1] == (unsigned char)m,
                  "lap-1 message %d corrupted", m);
        }
        for (int i = 0; i < 3 * CELLS / 2; i++) {
            MPI_Status st;
            int        count = -1;
            memset(small, 0, sizeof(small));
            MPI_Recv(small, 16, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &st);
            MPI_Get_count(&st, MPI_BYTE, &count);
            CHECK(count == 8 && small[0] == (uint32_t)i && small[1] == ~(uint32_t)i,
                  "message %d: count %d words %u %u", i, count, small[0], small[1]);
            if (mpitest_errors > 5) {
                break;
            }
        }
    }
    return mpitest_finish();
}
