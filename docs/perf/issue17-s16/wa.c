#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, n = atoi(argv[1]); size_t size = atoi(argv[2]);
    MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char *buf = malloc(size); memset(buf, 1, size); char path[256]; snprintf(path, sizeof path, "%s/wa.dat", argv[3]);
    MPI_File fh; MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE, MPI_INFO_NULL, &fh);
    double best[2] = {1e9, 1e9};
    for (int rep = 0; rep < 5; rep++) {
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_File_write_at(fh, (MPI_Offset)i * size, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        double t1 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_File_read_at(fh, (MPI_Offset)i * size, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        double t2 = MPI_Wtime();
        if (t1 - t0 < best[0]) best[0] = t1 - t0; if (t2 - t1 < best[1]) best[1] = t2 - t1;
    }
    printf("%zu B: write_at %.3f us/call, read_at %.3f us/call\n", size, best[0] / n * 1e6, best[1] / n * 1e6);
    MPI_File_close(&fh); MPI_Finalize(); return 0; }
