/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Ports, MPI_Comm_connect/MPI_Comm_accept between the two halves of
 * MPI_COMM_WORLD (low half accepts, high half connects), data both ways over
 * the intercommunicator (eager and rendezvous sizes), MPI_Intercomm_merge,
 * a collective over the intercommunicator, MPI_Comm_disconnect; failures: a
 * wrong token and a closed port give MPI_ERR_PORT, a malformed port name
 * MPI_ERR_PORT, MPI_Comm_disconnect(MPI_COMM_NULL) MPI_ERR_COMM.
 *
 * As two separate mpiexecs (tests/mpi/test_dynproc_ports.py): argv "accept FILE"
 * and "connect FILE" run the two sides, the port name handed over through
 * FILE; "open-close FILE" leaves the name of a closed port of a job that
 * then ends, which "connect-closed FILE" must fail to reach (MPI_ERR_PORT).
 */
#include <unistd.h>

#include <stdlib.h>

#include "mpitest.h"

#define BIG (1 << 20)

/* Data both ways between local rank r and remote rank r % rsize, then a
 * merge and an allreduce over the merged communicator. */
static void exchange(MPI_Comm inter, int is_low)
{
    int            rank, size, rsize, flag = 0;
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    MPI_Comm       merged;

    MPI_Comm_test_inter(inter, &flag);
    CHECK(flag, "the result is not an intercommunicator");
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);

    /* Every local rank sends to every remote rank a small and a big
     * message; seeds name the pair and the direction. */
    for (int peer = 0; peer < rsize; peer++) {
        unsigned    seed_out = (unsigned)(is_low * 1000 + rank * 10 + peer);
        unsigned    seed_in  = (unsigned)((!is_low) * 1000 + peer * 10 + rank);
        MPI_Request rq[4];
        size_t      n = 100 + (size_t)(is_low ? rank * 7 + peer : peer * 7 + rank); /* same at both ends */
        long        bad;

        mpitest_fill(out, BIG, seed_out);
        memset(in, 0, BIG);
        MPI_Isend(out, (int)n, MPI_BYTE, peer, 1, inter, &rq[0]);
        MPI_Irecv(in, (int)n, MPI_BYTE, peer, 1, inter, &rq[1]);
        MPI_Waitall(2, rq, MPI_STATUSES_IGNORE);
        bad = mpitest_verify(in, n, seed_in);
        CHECK(bad < 0, "small message from remote %d wrong at byte %ld", peer, bad);
        MPI_Isend(out, BIG, MPI_BYTE, peer, 2, inter, &rq[2]);
        MPI_Irecv(in, BIG, MPI_BYTE, peer, 2, inter, &rq[3]);
        MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE);
        bad = mpitest_verify(in, BIG, seed_in);
        CHECK(bad < 0, "1 MiB message from remote %d wrong at byte %ld", peer, bad);
    }

    /* Intercommunicator collective: the low group's root broadcasts. */
    {
        int v = is_low ? 4242 : -1;
        if (is_low) {
            MPI_Bcast(&v, 1, MPI_INT, rank == 0 ? MPI_ROOT : MPI_PROC_NULL, inter);
        } else {
            MPI_Bcast(&v, 1, MPI_INT, 0, inter);
            CHECK(v == 4242, "intercomm bcast gave %d", v);
        }
    }

    /* Merge: the connecting (high) group second. */
    CHECK_OK(MPI_Intercomm_merge(inter, !is_low, &merged));
    {
        int mrank, msize, sum = 0, want = 0, one;
        MPI_Comm_rank(merged, &mrank);
        MPI_Comm_size(merged, &msize);
        CHECK(msize == size + rsize, "merged size %d, expected %d", msize, size + rsize);
        CHECK(mrank == (is_low ? rank : rsize + rank), "merged rank %d (local rank %d)", mrank,
              rank);
        one = mrank + 1;
        MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, merged);
        for (int i = 1; i <= msize; i++) {
            want += i;
        }
        CHECK(sum == want, "allreduce over the merged communicator: %d, expected %d", sum, want);
        MPI_Comm_free(&merged);
    }
    free(out);
    free(in);
}

static void write_port(const char *file, const char *port)
{
    char  tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    f = fopen(tmp, "w");
    fprintf(f, "%s\n", port);
    fclose(f);
    rename(tmp, file); /* the other job sees a complete file */
}

static int two_jobs(const char *mode, const char *file)
{
    char     port[MPI_MAX_PORT_NAME] = "";
    MPI_Comm inter;
    int      rank, is_low = strcmp(mode, "accept") == 0;

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (strcmp(mode, "open-close") == 0) { /* a port that is gone with its job */
        if (rank == 0) {
            CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
            CHECK_OK(MPI_Close_port(port));
            write_port(file, port);
        }
        return 0;
    }
    if (is_low) {
        if (rank == 0) {
            CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
            write_port(file, port);
        }
        CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    } else {
        if (rank == 0) {
            FILE *f;
            for (int i = 0; i < 600 && (f = fopen(file, "r")) == NULL; i++) {
                usleep(50000);
            }
            f = fopen(file, "r");
            CHECK(f != NULL, "no port file %s", file);
            if (f == NULL || fgets(port, sizeof(port), f) == NULL) {
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            fclose(f);
            port[strcspn(port, "\n")] = '\0';
        }
        if (strcmp(mode, "connect-closed") == 0) {
            double t0 = MPI_Wtime();
            CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter),
                        MPI_ERR_PORT);
            if (rank == 0) {
                printf("connect to a closed port failed after %.2f s\n", MPI_Wtime() - t0);
            }
            return 0;
        }
        CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter));
    }
    exchange(inter, is_low);
    CHECK_OK(MPI_Comm_disconnect(&inter));
    CHECK(inter == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");
    if (getenv("WEFT_TEST_NO_FABRIC") != NULL) { /* one host: shared memory, never libfabric */
        FILE *f = fopen("/proc/self/maps", "r");
        char  line[4096];
        int   mapped = 0;
        CHECK(f != NULL, "cannot read /proc/self/maps");
        while (f != NULL && fgets(line, sizeof(line), f)) {
            mapped |= strstr(line, "libfabric") != NULL;
        }
        if (f != NULL) {
            fclose(f);
        }
        CHECK(!mapped, "%s job rank %d: libfabric is mapped", mode, rank);
    }
    if (is_low && rank == 0) {
        CHECK_OK(MPI_Close_port(port));
    }
    return 0;
}

int main(int argc, char **argv)
{
    int      rank, size, is_low;
    MPI_Comm half, inter, null = MPI_COMM_NULL, parent;
    char     port[MPI_MAX_PORT_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    if (argc >= 3) {
        two_jobs(argv[1], argv[2]);
        return mpitest_finish();
    }

    /* Single-process checks. */
    CHECK_OK(MPI_Comm_get_parent(&parent));
    CHECK(parent == MPI_COMM_NULL, "not spawned, yet a parent");
    CHECK_CLASS(MPI_Comm_disconnect(&null), MPI_ERR_COMM);
    CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
    CHECK(strlen(port) > 0 && strlen(port) < MPI_MAX_PORT_NAME, "port name length %zu",
          strlen(port));
    {
        char other[MPI_MAX_PORT_NAME];
        CHECK_OK(MPI_Open_port(MPI_INFO_NULL, other));
        CHECK(strcmp(port, other) != 0, "two ports with one name");
        CHECK_OK(MPI_Close_port(other));
        CHECK_CLASS(MPI_Close_port(other), MPI_ERR_PORT);
    }
    CHECK_CLASS(MPI_Comm_connect("no such port", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter),
                MPI_ERR_PORT);
    CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter), MPI_ERR_PORT);
    CHECK_OK(MPI_Close_port(port));

    if (size >= 2) {
        char bad[MPI_MAX_PORT_NAME];
        int  lroot;

        is_low = rank < size / 2;
        lroot  = is_low ? 0 : size / 2; /* world rank of each half's root */
        MPI_Comm_split(MPI_COMM_WORLD, is_low, rank, &half);
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        (void)lroot;

        /* 1. a good connection */
        if (is_low) {
            if (rank == 0) {
                CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
                MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size / 2, 0, MPI_COMM_WORLD);
            }
            CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, half, &inter));
        } else {
            if (rank == size / 2) {
                MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
            }
            CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter));
        }
        exchange(inter, is_low);
        CHECK_OK(MPI_Comm_disconnect(&inter));
        CHECK(inter == MPI_COMM_NULL, "disconnect did not set MPI_COMM_NULL");

        /* 2. a wrong token is rejected; the port still works afterwards */
        if (rank == size / 2) {
            char *tok;
            MPI_Recv(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            strcpy(bad, port);
            tok = strchr(strchr(bad, ':') + 1, ':') + 1; /* first token digit */
            *tok = *tok == '0' ? '1' : '0';
        } else if (rank == 0) {
            MPI_Send(port, MPI_MAX_PORT_NAME, MPI_CHAR, size / 2, 1, MPI_COMM_WORLD);
        }
        if (!is_low) {
            CHECK_CLASS(MPI_Comm_connect(bad, MPI_INFO_NULL, 0, half, &inter), MPI_ERR_PORT);
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* 3. the port closed: connecting fails */
        if (rank == 0) {
            CHECK_OK(MPI_Close_port(port));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        if (!is_low) {
            double t0 = MPI_Wtime();
            CHECK_CLASS(MPI_Comm_connect(port, MPI_INFO_NULL, 0, half, &inter), MPI_ERR_PORT);
            CHECK(MPI_Wtime() - t0 < 30, "connect to a closed port took %.1f s",
                  MPI_Wtime() - t0);
        }
        MPI_Comm_free(&half);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return mpitest_finish();
}
