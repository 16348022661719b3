/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Parallel HDF5 over Weft's MPI-IO (issue 17): one file opened with
 * H5Pset_fapl_mpio on MPI_COMM_WORLD holds 2-D datasets in contiguous,
 * chunked and (when deflate is built in) chunked+deflate layouts, each
 * written by hyperslabs in two patterns: a block of whole rows per rank
 * (contiguous in the file) and every nprocs-th column per rank (strided),
 * with collective and with independent transfer. File and dataset
 * attributes are written too. After collective writes
 * H5Pget_mpio_actual_io_mode must report collective I/O; after independent
 * ones, none. The file is closed, reopened read-only, and every rank reads
 * each whole dataset back (collectively and independently) and compares
 * every element with the formula that wrote it.
 *
 * Prints the path of the MPI library it runs on (the test driver checks it
 * is the Weft under test) and "No Errors" on rank 0 when all checks pass.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <mpi.h>
#include <hdf5.h>

#define ROWS_PER_RANK 6
#define COLS          40 /* columns; rank r owns columns r, r+np, ... in the strided pattern */
#define CHUNK_R       4
#define CHUNK_C       8

static int rank, nprocs, errors;

static void fail(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    fprintf(stderr, "FAIL rank %d: ", rank);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    errors++;
}

#define H5OK(_call)                                                                                 \
    do {                                                                                            \
        if ((_call) < 0) {                                                                          \
            fail("%s:%d: %s failed", __FILE__, __LINE__, #_call);                                   \
        }                                                                                           \
    } while (0)

enum { L_CONTIG, L_CHUNKED, L_DEFLATE, NLAYOUT };
enum { P_ROWS, P_COLS, NPATTERN };
static const char *layout_name[NLAYOUT]   = {"contig", "chunked", "deflate"};
static const char *pattern_name[NPATTERN] = {"rows", "cols"};

static long value(int ds, hsize_t i, hsize_t j)
{
    return (long)ds * 1000000L + (long)i * COLS + (long)j + 1;
}

/* This rank's part of the dataset for a pattern: the file hyperslab. */
static hid_t my_selection(hid_t fspace, int pattern, hsize_t nrows, hsize_t *nelem)
{
    if (pattern == P_ROWS) {
        hsize_t start[2] = {(hsize_t)rank * ROWS_PER_RANK, 0}, count[2] = {ROWS_PER_RANK, COLS};
        H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL));
        *nelem = ROWS_PER_RANK * COLS;
    } else {
        hsize_t ncols    = (COLS - rank + nprocs - 1) / nprocs;
        hsize_t start[2] = {0, (hsize_t)rank}, stride[2] = {1, (hsize_t)nprocs};
        hsize_t count[2] = {nrows, ncols}, block[2] = {1, 1};
        if (ncols == 0) {
            H5OK(H5Sselect_none(fspace));
        } else {
            H5OK(H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, stride, count, block));
        }
        *nelem = nrows * ncols;
    }
    return fspace;
}

/* Values of this rank's selection, in the order HDF5 walks it (row-major). */
static void my_values(int ds, int pattern, hsize_t nrows, long *buf)
{
    size_t k = 0;

    for (hsize_t i = 0; i < nrows; i++) {
        for (hsize_t j = 0; j < COLS; j++) {
            int mine = pattern == P_ROWS ? i / ROWS_PER_RANK == (hsize_t)rank : j % nprocs == (hsize_t)rank;
            if (mine) {
                buf[k++] = value(ds, i, j);
            }
        }
    }
}

static hid_t xfer_plist(int collective)
{
    hid_t dxpl = H5Pcreate(H5P_DATASET_XFER);
    H5OK(H5Pset_dxpl_mpio(dxpl, collective ? H5FD_MPIO_COLLECTIVE : H5FD_MPIO_INDEPENDENT));
    return dxpl;
}

static void check_io_mode(hid_t dxpl, int collective, const char *what)
{
    H5D_mpio_actual_io_mode_t mode = H5D_MPIO_NO_COLLECTIVE;
    uint32_t                  local = 0, global = 0;

    H5OK(H5Pget_mpio_actual_io_mode(dxpl, &mode));
    if (collective && mode == H5D_MPIO_NO_COLLECTIVE) {
        H5Pget_mpio_no_collective_cause(dxpl, &local, &global);
        fail("%s: collective transfer did no collective I/O (causes local 0x%x global 0x%x)", what,
             (unsigned)local, (unsigned)global);
    }
    if (!collective && mode != H5D_MPIO_NO_COLLECTIVE) {
        fail("%s: independent transfer reported I/O mode %d", what, (int)mode);
    }
}

static int deflate_available(void)
{
    unsigned info = 0;

    return H5Zfilter_avail(H5Z_FILTER_DEFLATE) > 0 && H5Zget_filter_info(H5Z_FILTER_DEFLATE, &info) >= 0 &&
           (info & H5Z_FILTER_CONFIG_ENCODE_ENABLED);
}

static void write_file(const char *path, hsize_t nrows, int nlayout)
{
    hid_t   fapl = H5Pcreate(H5P_FILE_ACCESS), file, fspace, aspace, attr;
    hsize_t dims[2] = {nrows, COLS}, cdims[2] = {CHUNK_R, CHUNK_C}, one = 1;
    long    nprocs_attr = nprocs;
    long   *buf = malloc(nrows * COLS * sizeof(long));

    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    if (file < 0) {
        fail("H5Fcreate(%s) failed", path);
        exit(1);
    }
    /* File attribute: metadata written collectively by HDF5. */
    aspace = H5Screate_simple(1, &one, NULL);
    attr   = H5Acreate2(file, "nprocs", H5T_NATIVE_LONG, aspace, H5P_DEFAULT, H5P_DEFAULT);
    H5OK(H5Awrite(attr, H5T_NATIVE_LONG, &nprocs_attr));
    H5OK(H5Aclose(attr));
    fspace = H5Screate_simple(2, dims, NULL);
    for (int l = 0; l < nlayout; l++) {
        for (int p = 0; p < NPATTERN; p++) {
            for (int c = 0; c <= 1; c++) {
                int   ds   = (l * NPATTERN + p) * 2 + c;
                hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE), dset, dxpl, sel, mspace;
                char  name[64], what[128];
                hsize_t nelem = 0;

                /* Filtered datasets are written collectively only (HDF5's rule). */
                if (l == L_DEFLATE && !c) {
                    H5Pclose(dcpl);
                    continue;
                }
                snprintf(name, sizeof(name), "%s_%s_%s", layout_name[l], pattern_name[p], c ? "coll" : "ind");
                snprintf(what, sizeof(what), "write %s", name);
                if (l != L_CONTIG) {
                    H5OK(H5Pset_chunk(dcpl, 2, cdims));
                }
                if (l == L_DEFLATE) {
                    H5OK(H5Pset_deflate(dcpl, 6));
                }
                dset = H5Dcreate2(file, name, H5T_NATIVE_LONG, fspace, H5P_DEFAULT, dcpl, H5P_DEFAULT);
                if (dset < 0) {
                    fail("%s: H5Dcreate2 failed", what);
                    H5Pclose(dcpl);
                    continue;
                }
                attr = H5Acreate2(dset, "id", H5T_NATIVE_INT, aspace, H5P_DEFAULT, H5P_DEFAULT);
                H5OK(H5Awrite(attr, H5T_NATIVE_INT, &ds));
                H5OK(H5Aclose(attr));
                sel = H5Scopy(fspace);
                my_selection(sel, p, nrows, &nelem);
                mspace = H5Screate_simple(1, &nelem, NULL);
                if (nelem == 0) {
                    H5OK(H5Sselect_none(mspace));
                }
                my_values(ds, p, nrows, buf);
                dxpl = xfer_plist(c);
                H5OK(H5Dwrite(dset, H5T_NATIVE_LONG, mspace, sel, dxpl, buf));
                check_io_mode(dxpl, c, what);
                H5Pclose(dxpl);
                H5Sclose(mspace);
                H5Sclose(sel);
                H5Dclose(dset);
                H5Pclose(dcpl);
            }
        }
    }
    H5Sclose(aspace);
    H5Sclose(fspace);
    H5OK(H5Fclose(file));
    H5Pclose(fapl);
    free(buf);
}

static void read_file(const char *path, hsize_t nrows, int nlayout)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS), file, attr;
    long  nprocs_attr = -1;
    long *buf         = malloc(nrows * COLS * sizeof(long));

    H5OK(H5Pset_fapl_mpio(fapl, MPI_COMM_WORLD, MPI_INFO_NULL));
    file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
    if (file < 0) {
        fail("H5Fopen(%s) failed", path);
        exit(1);
    }
    attr = H5Aopen(file, "nprocs", H5P_DEFAULT);
    H5OK(H5Aread(attr, H5T_NATIVE_LONG, &nprocs_attr));
    H5Aclose(attr);
    if (nprocs_attr != nprocs) {
        fail("file attribute nprocs is %ld, want %d", nprocs_attr, nprocs);
    }
    for (int l = 0; l < nlayout; l++) {
        for (int p = 0; p < NPATTERN; p++) {
            for (int c = 0; c <= 1; c++) {
                int   ds = (l * NPATTERN + p) * 2 + c, id = -1;
                char  name[64], what[128];
                hid_t dset, dxpl;
                long  bad = 0;

                if (l == L_DEFLATE && !c) {
                    continue;
                }
                snprintf(name, sizeof(name), "%s_%s_%s", layout_name[l], pattern_name[p], c ? "coll" : "ind");
                snprintf(what, sizeof(what), "read %s", name);
                dset = H5Dopen2(file, name, H5P_DEFAULT);
                if (dset < 0) {
                    fail("%s: H5Dopen2 failed", what);
                    continue;
                }
                attr = H5Aopen(dset, "id", H5P_DEFAULT);
                H5OK(H5Aread(attr, H5T_NATIVE_INT, &id));
                H5Aclose(attr);
                if (id != ds) {
                    fail("%s: attribute id is %d, want %d", what, id, ds);
                }
                /* Every rank reads the whole dataset, alternating the transfer mode. */
                memset(buf, 0, nrows * COLS * sizeof(long));
                dxpl = xfer_plist((ds + 1) % 2);
                H5OK(H5Dread(dset, H5T_NATIVE_LONG, H5S_ALL, H5S_ALL, dxpl, buf));
                check_io_mode(dxpl, (ds + 1) % 2, what);
                for (hsize_t i = 0; i < nrows; i++) {
                    for (hsize_t j = 0; j < COLS; j++) {
                        long want = value(ds, i, j), got = buf[i * COLS + j];
                        if (got != want && bad++ < 3) {
                            fail("%s: element [%llu][%llu] is %ld, want %ld", what, (unsigned long long)i,
                                 (unsigned long long)j, got, want);
                        }
                    }
                }
                if (bad) {
                    fail("%s: %ld of %llu elements differ", what, bad, (unsigned long long)(nrows * COLS));
                }
                H5Pclose(dxpl);
                H5Dclose(dset);
            }
        }
    }
    H5OK(H5Fclose(file));
    H5Pclose(fapl);
    free(buf);
}

int main(int argc, char **argv)
{
    char    path[1024];
    hsize_t nrows;
    int     nlayout, total = 0;
    Dl_info dl;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    if (argc < 2) {
        if (rank == 0) {
            fprintf(stderr, "usage: %s FILE.h5\n", argv[0]);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    snprintf(path, sizeof(path), "%s", argv[1]);
    nrows   = (hsize_t)nprocs * ROWS_PER_RANK;
    nlayout = deflate_available() ? NLAYOUT : L_DEFLATE;
    if (rank == 0) {
        if (dladdr((void *)MPI_Init, &dl) && dl.dli_fname) {
            printf("MPI library: %s\n", dl.dli_fname);
        }
        printf("layouts: %d (deflate %s)\n", nlayout, nlayout == NLAYOUT ? "on" : "not built in");
    }
    write_file(path, nrows, nlayout);
    MPI_Barrier(MPI_COMM_WORLD);
    read_file(path, nrows, nlayout);
    MPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        if (total == 0) {
            printf("No Errors\n");
        } else {
            printf("Found %d errors\n", total);
        }
        remove(path);
    }
    MPI_Finalize();
    return total != 0;
}
