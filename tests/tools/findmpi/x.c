/* SPDX-License-Identifier: BSD-3-Clause */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int rank, size, version, subversion;

    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_version(&version, &subversion);
    printf("findmpi-c rank %d of %d, MPI %d.%d\n", rank, size, version, subversion);
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
