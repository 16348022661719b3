/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_T netmod counters: rank 0 sends K messages of known sizes (eager and
 * rendezvous) to every other rank. argv[1] "net" (run with WEFT_NETMOD_ONLY=1):
 * rank 0's netmod_ams_sent and netmod_bytes_sent are at least the messages
 * and payload bytes it sent (control messages and keepalives only add), and
 * the receivers' netmod_rget_bytes plus rank 0's bytes cover the rendezvous
 * payload; argv[1] "shm": every counter stays 0.
 */
#include "mpitest.h"

#define K 10
static const int sizes[] = {8, 1000, 200000};

/* A started handle counts from its start: read it after the traffic. */
static MPI_T_pvar_handle started(MPI_T_pvar_session s, const char *name, int cls)
{
    int               idx = -1, count = 0;
    MPI_T_pvar_handle h   = MPI_T_PVAR_HANDLE_NULL;

    CHECK_OK(MPI_T_pvar_get_index(name, cls, &idx));
    CHECK_OK(MPI_T_pvar_handle_alloc(s, idx, NULL, &h, &count));
    CHECK_OK(MPI_T_pvar_start(s, h));
    return h;
}

static unsigned long long value(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = ~0ULL;
    CHECK_OK(MPI_T_pvar_read(s, h, &v));
    CHECK_OK(MPI_T_pvar_handle_free(s, &h));
    return v;
}

int main(int argc, char **argv)
{
    int                provided, rank, size, net = argc > 1 && strcmp(argv[1], "net") == 0;
    MPI_T_pvar_session s;
    char              *buf = calloc(1, 200000);

    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_OK(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle ams_h = started(s, "weft_netmod_ams_sent", MPI_T_PVAR_CLASS_COUNTER);
    MPI_T_pvar_handle byt_h = started(s, "weft_netmod_bytes_sent", MPI_T_PVAR_CLASS_AGGREGATE);
    MPI_T_pvar_handle rget_h = started(s, "weft_netmod_rget_bytes", MPI_T_PVAR_CLASS_AGGREGATE);

    unsigned long long msgs = 0, bytes = 0;
    for (int k = 0; k < K; k++) {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            for (int p = 1; p < size; p++) {
                if (rank == 0) {
                    memset(buf, k + (int)i, (size_t)sizes[i]);
                    CHECK_OK(MPI_Send(buf, sizes[i], MPI_BYTE, p, 5, MPI_COMM_WORLD));
                    msgs++;
                    bytes += (unsigned long long)sizes[i];
                } else if (rank == p) {
                    CHECK_OK(MPI_Recv(buf, sizes[i], MPI_BYTE, 0, 5, MPI_COMM_WORLD,
                                      MPI_STATUS_IGNORE));
                    CHECK(buf[0] == (char)(k + (int)i) && buf[sizes[i] - 1] == (char)(k + (int)i),
                          "message %d/%zu corrupt", k, i);
                }
            }
        }
    }
    unsigned long long ams  = value(s, ams_h);
    unsigned long long byt  = value(s, byt_h);
    unsigned long long rget = value(s, rget_h);
    unsigned long long moved[2] = {byt, rget}, total[2];
    MPI_Allreduce(moved, total, 2, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    unsigned long long payload = (unsigned long long)K * (size - 1) * (8 + 1000 + 200000);
    if (net) {
        if (rank == 0) {
            CHECK(ams >= msgs, "netmod_ams_sent %llu < %llu messages sent", ams, msgs);
        }
        CHECK(total[0] + total[1] >= payload, "netmod moved %llu + %llu bytes < %llu payload",
              total[0], total[1], payload);
    } else {
        CHECK(ams == 0 && byt == 0 && rget == 0,
              "shared memory only, but netmod counters moved: %llu AMs, %llu + %llu bytes", ams,
              byt, rget);
    }
    CHECK_OK(MPI_T_pvar_session_free(&s));
    free(buf);
    int rc = mpitest_finish();
    MPI_T_finalize();
    return rc;
}
