/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * MPI_Comm_join and the name service.
 *   no arguments: ranks 2k and 2k+1 of one job open a TCP connection over
 *     loopback and join over it: a 1x1 intercommunicator, data both ways,
 *     disconnect; MPI_Comm_join(-1) gives MPI_ERR_ARG; looking up a name
 *     nobody published gives MPI_ERR_NAME, unpublishing it MPI_ERR_SERVICE.
 *   "join-listen FILE" / "join-connect FILE" (two mpiexecs, one process
 *     each; tests/mpi/test_dynproc_ports.py): the same join across jobs, the
 *     TCP port handed over through FILE.
 *   "publish FILE" / "lookup FILE": the first job publishes a service name
 *     for its port (a duplicate publish gives MPI_ERR_SERVICE), writes FILE
 *     when ready and accepts; the second looks the name up and connects.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpitest.h"

#define SERVICE "weft-dynproc-test-service"

static void write_file(const char *file, const char *text)
{
    char  tmp[4096];
    FILE *f;

    snprintf(tmp, sizeof(tmp), "%s.tmp", file);
    f = fopen(tmp, "w");
    fprintf(f, "%s\n", text);
    fclose(f);
    rename(tmp, file);
}

static int read_file(const char *file, char *text, size_t len)
{
    FILE *f = NULL;

    for (int i = 0; i < 1200 && (f = fopen(file, "r")) == NULL; i++) {
        usleep(50000);
    }
    if (f == NULL || fgets(text, (int)len, f) == NULL) {
        return -1;
    }
    fclose(f);
    text[strcspn(text, "\n")] = '\0';
    return 0;
}

/* A listening socket on 127.0.0.1; *port_p gets its port. */
static int listen_any(int *port_p)
{
    struct sockaddr_in a = {0};
    socklen_t          al = sizeof(a);
    int                s  = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_family      = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof(a)) != 0 || listen(s, 1) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &al) != 0) {
        return -1;
    }
    *port_p = ntohs(a.sin_port);
    return s;
}

static int connect_to(int port)
{
    struct sockaddr_in a = {0};
    int                s = socket(AF_INET, SOCK_STREAM, 0);

    a.sin_family      = AF_INET;
    a.sin_port        = htons((uint16_t)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    return s >= 0 && connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 ? s : -1;
}

/* Over a joined (or connected) intercomm: each side sends a tagged value. */
static void talk(MPI_Comm inter, int side)
{
    int rsize = -1, out = 100 + side, in = -1;

    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 1, "remote size %d", rsize);
    MPI_Sendrecv(&out, 1, MPI_INT, 0, 3, &in, 1, MPI_INT, 0, 3, inter, MPI_STATUS_IGNORE);
    CHECK(in == 100 + !side, "got %d, expected %d", in, 100 + !side);
}

static void join_fd(int fd, int side)
{
    MPI_Comm inter = MPI_COMM_NULL;

    CHECK(fd >= 0, "no TCP connection");
    if (fd < 0) {
        return;
    }
    CHECK_OK(MPI_Comm_join(fd, &inter));
    if (inter != MPI_COMM_NULL) {
        talk(inter, side);
        CHECK_OK(MPI_Comm_disconnect(&inter));
    }
    close(fd);
}

int main(int argc, char **argv)
{
    int  rank, size;
    char text[MPI_MAX_PORT_NAME];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);

    if (argc >= 3 && strcmp(argv[1], "join-listen") == 0) {
        int port, ls = listen_any(&port), fd;
        snprintf(text, sizeof(text), "%d", port);
        write_file(argv[2], text);
        fd = accept(ls, NULL, NULL);
        join_fd(fd, 0);
        close(ls);
    } else if (argc >= 3 && strcmp(argv[1], "join-connect") == 0) {
        CHECK(read_file(argv[2], text, sizeof(text)) == 0, "no file %s", argv[2]);
        join_fd(connect_to(atoi(text)), 1);
    } else if (argc >= 3 && strcmp(argv[1], "publish") == 0) {
        char     port[MPI_MAX_PORT_NAME];
        MPI_Comm inter;
        CHECK_OK(MPI_Open_port(MPI_INFO_NULL, port));
        CHECK_OK(MPI_Publish_name(SERVICE, MPI_INFO_NULL, port));
        CHECK_CLASS(MPI_Publish_name(SERVICE, MPI_INFO_NULL, port), MPI_ERR_SERVICE);
        write_file(argv[2], "ready");
        CHECK_OK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        talk(inter, 0);
        CHECK_OK(MPI_Comm_disconnect(&inter));
        CHECK_OK(MPI_Unpublish_name(SERVICE, MPI_INFO_NULL, port));
        CHECK_OK(MPI_Close_port(port));
    } else if (argc >= 3 && strcmp(argv[1], "lookup") == 0) {
        char     port[MPI_MAX_PORT_NAME];
        MPI_Comm inter;
        CHECK(read_file(argv[2], text, sizeof(text)) == 0, "no file %s", argv[2]);
        CHECK_OK(MPI_Lookup_name(SERVICE, MPI_INFO_NULL, port));
        CHECK_OK(MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter));
        talk(inter, 1);
        CHECK_OK(MPI_Comm_disconnect(&inter));
    } else {
        MPI_Comm inter;
        char     port[MPI_MAX_PORT_NAME];
        CHECK_CLASS(MPI_Comm_join(-1, &inter), MPI_ERR_ARG);
        if (rank == 0) {
            CHECK_CLASS(MPI_Lookup_name("weft-nobody-published-this", MPI_INFO_NULL, port),
                        MPI_ERR_NAME);
            CHECK_CLASS(MPI_Unpublish_name("weft-nobody-published-this", MPI_INFO_NULL, port),
                        MPI_ERR_SERVICE);
        }
        if (rank % 2 == 0 && rank + 1 < size) {
            int port_no, ls = listen_any(&port_no);
            MPI_Send(&port_no, 1, MPI_INT, rank + 1, 0, MPI_COMM_WORLD);
            join_fd(accept(ls, NULL, NULL), 0);
            close(ls);
        } else if (rank % 2 == 1) {
            int port_no;
            MPI_Recv(&port_no, 1, MPI_INT, rank - 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            join_fd(connect_to(port_no), 1);
        }
    }
    return mpitest_finish();
}
