/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The netmod sizes ofi_rxm's eager limit for its own eager messages
 * (ofi_quirks.c, before libfabric starts, whichever provider is then chosen):
 * FI_OFI_RXM_EAGER_LIMIT in its environment holds at least the eager
 * threshold (argv[1], bytes) plus a header, and FI_OFI_RXM_BUFFER_SIZE, rxm's
 * bounce buffers, is left alone: unset, or when argv[2] is given, the user's
 * own value unchanged; FI_OFI_RXM_ENABLE_PASSTHRU is 1 (rxm hands calls to
 * the tcp provider's own protocol). A message of exactly the threshold
 * travels both ways byte for byte, and so does a flood of them sent while
 * the receiver sleeps: more than the netmod has receives posted, so the
 * provider holds them unexpected (with rxm, although they are larger than
 * its bounce buffers). Run with WEFT_NETMOD_ONLY=1 at np 2 or more.
 */
#include <stdlib.h>
#include <unistd.h>

enum { FLOOD = 100 }; /* > OFI_RX_BUFS (src/transport/ofi/ofi_internal.h) */

#include "mpitest.h"

int main(int argc, char **argv)
{
    int    rank, size;
    size_t eager = argc > 1 ? strtoul(argv[1], NULL, 0) : 65536;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *buf = malloc(eager);
    if (size >= 2 && rank < 2) {
        int peer = 1 - rank;
        mpitest_fill(buf, eager, (unsigned)rank);
        CHECK_OK(MPI_Sendrecv_replace(buf, (int)eager, MPI_BYTE, peer, 1, peer, 1, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE));
        CHECK(mpitest_verify(buf, eager, (unsigned)peer) < 0, "eager message corrupted");
        const char *limit  = getenv("FI_OFI_RXM_EAGER_LIMIT");
        const char *buffer = getenv("FI_OFI_RXM_BUFFER_SIZE");
        CHECK(limit != NULL, "FI_OFI_RXM_EAGER_LIMIT not set after the netmod started");
        if (limit != NULL) {
            CHECK(strtoul(limit, NULL, 0) > eager, "rxm eager limit %s does not hold a %zu-byte "
                                                   "eager message and its header", limit, eager);
        }
        const char *pass = getenv("FI_OFI_RXM_ENABLE_PASSTHRU");
        CHECK(pass != NULL && strcmp(pass, "1") == 0, "FI_OFI_RXM_ENABLE_PASSTHRU is %s, not 1",
              pass ? pass : "(unset)");
        if (argc > 2) {
            CHECK(buffer != NULL && strcmp(buffer, argv[2]) == 0,
                  "the user's FI_OFI_RXM_BUFFER_SIZE=%s became %s", argv[2],
                  buffer ? buffer : "(unset)");
        } else {
            CHECK(buffer == NULL, "FI_OFI_RXM_BUFFER_SIZE=%s set: rxm's pools grow with it", buffer);
        }
        char        *many = malloc(eager * FLOOD);
        MPI_Request  reqs[FLOOD];
        for (int i = 0; i < FLOOD; i++) {
            if (rank == 0) {
                mpitest_fill(many + eager * (size_t)i, eager, (unsigned)i);
                CHECK_OK(MPI_Isend(many + eager * (size_t)i, (int)eager, MPI_BYTE, 1, 2 + i,
                                   MPI_COMM_WORLD, &reqs[i]));
            }
        }
        if (rank == 1) {
            usleep(500000); /* let them all arrive unexpected */
            memset(many, 0, eager * FLOOD);
            for (int i = FLOOD - 1; i >= 0; i--) { /* posted in reverse: matched by tag */
                CHECK_OK(MPI_Irecv(many + eager * (size_t)i, (int)eager, MPI_BYTE, 0, 2 + i,
                                   MPI_COMM_WORLD, &reqs[i]));
            }
        }
        CHECK_OK(MPI_Waitall(FLOOD, reqs, MPI_STATUSES_IGNORE));
        for (int i = 0; rank == 1 && i < FLOOD; i++) {
            CHECK(mpitest_verify(many + eager * (size_t)i, eager, (unsigned)i) < 0,
                  "flooded message %d corrupted", i);
        }
        free(many);
    }
    free(buf);
    return mpitest_finish();
}
