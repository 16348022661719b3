// SPDX-License-Identifier: BSD-3-Clause
#include <mpi.h>

#include <iostream>
#include <string>
#include <vector>

int main(int argc, char **argv)
{
    if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        return 1;
    }
    int rank = -1, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    std::vector<std::string> words{"findmpi-cxx", "rank", std::to_string(rank), "of",
                                   std::to_string(size)};
    std::string line;
    for (const auto &w : words) {
        line += (line.empty() ? "" : " ") + w;
    }
    std::cout << line << std::endl;
    return MPI_Finalize() == MPI_SUCCESS ? 0 : 1;
}
