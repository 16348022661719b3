/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The netmod sizes ofi_rxm's eager buffer for its own eager messages
 * (ofi_quirks.c): once a rank has talked through the netmod,
 * FI_OFI_RXM_BUFFER_SIZE in its environment holds at least the eager
 * threshold (argv[1], bytes) plus a header, or, when argv[2] is given, the
 * user's own value unchanged. A message of exactly the threshold travels
 * both ways byte for byte. Run with WEFT_NETMOD_ONLY=1 at np 2 or more.
 */
#include <stdlib.h>

#include "mpitest.h"

int main(int argc, char **argv)
{
    int    rank, size;
    size_t eager = argc > 1 ? strtoul(argv[1], NULL, 0) : 16384;

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
        const char *v = getenv("FI_OFI_RXM_BUFFER_SIZE");
        CHECK(v != NULL, "FI_OFI_RXM_BUFFER_SIZE not set after the netmod started");
        if (v != NULL && argc > 2) {
            CHECK(strcmp(v, argv[2]) == 0, "the user's FI_OFI_RXM_BUFFER_SIZE=%s became %s",
                  argv[2], v);
        } else if (v != NULL) {
            CHECK(strtoul(v, NULL, 0) > eager, "rxm buffer %s does not hold a %zu-byte eager "
                                               "message and its header", v, eager);
        }
    }
    free(buf);
    return mpitest_finish();
}
