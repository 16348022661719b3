#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
    int rank, np, n = argc > 1 ? atoi(argv[1]) : 200; size_t size = (argc > 2 ? atoi(argv[2]) : 1024) * 1024;
    MPI_Init(&argc, &argv); MPI_Comm_rank(MPI_COMM_WORLD, &rank); MPI_Comm_size(MPI_COMM_WORLD, &np);
    MPI_Datatype one, ft; MPI_Type_contiguous(1024, MPI_BYTE, &one); MPI_Type_create_resized(one, 0, 1024 * np, &ft); MPI_Type_commit(&ft);
    char *buf = malloc(size); memset(buf, rank + 1, size);
    double tot = 0;
    for (int rep = 0; rep < 8; rep++) {
        MPI_File fh; if (rank == 0) MPI_File_delete("/dev/shm/cw.dat", MPI_INFO_NULL); MPI_Barrier(MPI_COMM_WORLD);
        MPI_File_open(MPI_COMM_WORLD, "/dev/shm/cw.dat", MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh);
        MPI_File_set_view(fh, rank * 1024, MPI_BYTE, ft, "native", MPI_INFO_NULL);
        MPI_Barrier(MPI_COMM_WORLD); double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) MPI_File_write_at_all(fh, (MPI_Offset)i * size, buf, (int)size, MPI_BYTE, MPI_STATUS_IGNORE);
        MPI_Barrier(MPI_COMM_WORLD); double t = MPI_Wtime() - t0; if (rep) tot += t;
        MPI_File_close(&fh);
    }
    if (rank == 0) { printf("coll write %zu KiB/rank: %.0f MB/s\n", size >> 10, 7.0 * np * n * size / tot / 1e6); MPI_File_delete("/dev/shm/cw.dat", MPI_INFO_NULL); }
    MPI_Finalize(); return 0; }
