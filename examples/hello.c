/* SPDX-License-Identifier: BSD-3-Clause
 * The demo program: every rank reports itself. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int  rank, size, len;
    char host[MPI_MAX_PROCESSOR_NAME];
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_processor_name(host, &len);
    if (rank == 0) {
        MPI_Get_library_version(lib, &len);
        printf("library: %.*s\n", (int)(strchr(lib, '\n') ? strchr(lib, '\n') - lib : len), lib);
    }
    printf("hello from rank %d of %d on %s\n", rank, size, host);
    MPI_Finalize();
    return 0;
}
