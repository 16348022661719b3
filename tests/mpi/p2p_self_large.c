/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Issue 19 bug 13: a self-send above the eager size is a rendezvous with the
 * future receive. MPI_Isend_c to self with no receive posted returns at once
 * and copies nothing (resident memory does not grow by the message); the
 * receive gets the bytes with one copy; MPI_Cancel of such a pending send
 * completes it as cancelled. Also a non-contiguous (vector) large self-send
 * into a contiguous receive, and an Issend that completes only at the match.
 * Argument: message bytes (default 64 MiB; the manifest also runs 2^31).
 */
#include "mpitest.h"

#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

static long resident_bytes(void)
{
    long  pages = 0, rss = 0;
    FILE *f     = fopen("/proc/self/statm", "r");
    if (f == NULL) {
        return -1;
    }
    if (fscanf(f, "%ld %ld", &pages, &rss) != 2) {
        rss = -1;
    }
    fclose(f);
    return rss < 0 ? -1 : rss * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Count      n  = argc > 1 ? (MPI_Count)strtoll(argv[1], NULL, 0) : (MPI_Count)64 << 20;
    unsigned char *sb = malloc((size_t)n), *rb = malloc((size_t)n);
    CHECK(sb && rb, "cannot allocate 2 x %lld bytes", (long long)n);
    if (!sb || !rb) {
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    mpitest_fill(sb, (size_t)n, 13u);
    memset(rb, 0, (size_t)n); /* touch it: only a hidden copy may grow the resident set */

    /* 1. Isend_c with nothing posted: at once, no copy. */
    MPI_Request sreq, rreq;
    long        rss0 = resident_bytes();
    double      t0   = MPI_Wtime();
    CHECK_OK(MPI_Isend_c(sb, n, MPI_BYTE, me, 7, MPI_COMM_WORLD, &sreq));
    double dt   = MPI_Wtime() - t0;
    long   rss1 = resident_bytes();
    CHECK(dt < 0.5, "Isend_c of %lld bytes to self took %.3f s (should not copy)", (long long)n, dt);
    CHECK(rss0 < 0 || rss1 - rss0 < n / 4, "resident memory grew by %ld bytes for a %lld-byte self-send",
          rss1 - rss0, (long long)n);
    int flag = 1;
    CHECK_OK(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0 || n <= 65536, "a large self-send completed before any receive matched it");
    MPI_Status st;
    MPI_Count  got = -1;
    CHECK_OK(MPI_Irecv_c(rb, n, MPI_BYTE, me, 7, MPI_COMM_WORLD, &rreq));
    CHECK_OK(MPI_Wait(&rreq, &st));
    CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    MPI_Get_count_c(&st, MPI_BYTE, &got);
    CHECK(got == n && st.MPI_SOURCE == me && st.MPI_TAG == 7, "count %lld source %d tag %d",
          (long long)got, st.MPI_SOURCE, st.MPI_TAG);
    long bad = mpitest_verify(rb, (size_t)n, 13u);
    CHECK(bad < 0, "large self-send: first bad byte at %ld", bad);

    /* 2. Cancel a pending large self-send: completes, cancelled; nothing arrives. */
    int cancelled = 0;
    CHECK_OK(MPI_Isend_c(sb, n, MPI_BYTE, me, 8, MPI_COMM_WORLD, &sreq));
    CHECK_OK(MPI_Cancel(&sreq));
    CHECK_OK(MPI_Wait(&sreq, &st));
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled, "a pending large self-send was not cancelled");
    CHECK_OK(MPI_Iprobe(me, 8, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "a cancelled self-send can still be probed");

    /* 3. Non-contiguous send (every other 4 KiB block) into a contiguous receive,
     * synchronous: completes only once the receive is posted. */
    MPI_Count    blocks = n / 8192;
    MPI_Datatype vec;
    CHECK_OK(MPI_Type_vector_c(blocks, 4096, 8192, MPI_BYTE, &vec));
    CHECK_OK(MPI_Type_commit(&vec));
    CHECK_OK(MPI_Issend(sb, 1, vec, me, 9, MPI_COMM_WORLD, &sreq));
    CHECK_OK(MPI_Test(&sreq, &flag, MPI_STATUS_IGNORE));
    CHECK(!flag, "Issend to self completed before the receive");
    CHECK_OK(MPI_Recv_c(rb, blocks * 4096, MPI_BYTE, me, 9, MPI_COMM_WORLD, &st));
    CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    for (MPI_Count b = 0; b < blocks && bad < 0; b++) {
        for (MPI_Count i = 0; i < 4096; i++) {
            if (rb[b * 4096 + i] != mpitest_byte(13u, (size_t)(b * 8192 + i))) {
                bad = (long)(b * 4096 + i);
                break;
            }
        }
    }
    CHECK(bad < 0, "vector self-send: first bad byte at %ld", bad);
    MPI_Type_free(&vec);

    /* 4. Truncation: a shorter receive gets MPI_ERR_TRUNCATE and what fits. */
    CHECK_OK(MPI_Isend_c(sb, n, MPI_BYTE, me, 10, MPI_COMM_WORLD, &sreq));
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    memset(rb, 0, (size_t)n);
    CHECK_CLASS(MPI_Recv_c(rb, n / 2, MPI_BYTE, me, 10, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                MPI_ERR_TRUNCATE);
    CHECK_OK(MPI_Wait(&sreq, MPI_STATUS_IGNORE));
    bad = mpitest_verify(rb, (size_t)(n / 2), 13u);
    CHECK(bad < 0, "truncated self-send: first bad byte at %ld", bad);

    free(sb);
    free(rb);
    return mpitest_finish();
}
