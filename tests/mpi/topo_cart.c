/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Topologies against hand-computed answers: MPI_Dims_create, cartesian
 * create/coords/rank/shift/get/sub/map, graph create/get/neighbors/map,
 * distributed graph (adjacent and general forms, weights), topo_test,
 * and the topology surviving MPI_Comm_dup.
 */
#include "mpitest.h"

static void dims_case(int nnodes, int ndims, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, sizeof(int) * (size_t)ndims);
    CHECK_OK(MPI_Dims_create(nnodes, ndims, d));
    for (int i = 0; i < ndims; i++) {
        CHECK(d[i] == want[i], "Dims_create(%d, %d): dims[%d]=%d want %d", nnodes, ndims, i, d[i], want[i]);
    }
}

int main(int argc, char **argv)
{
    int rank, size, status;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN); /* calls without a communicator */

    /* Dims_create */
    dims_case(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims_case(16, 3, (int[]){0, 0, 0}, (int[]){4, 2, 2});
    dims_case(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims_case(24, 3, (int[]){0, 3, 0}, (int[]){4, 3, 2});
    dims_case(7, 3, (int[]){0, 0, 0}, (int[]){7, 1, 1});
    dims_case(1, 2, (int[]){0, 0}, (int[]){1, 1});
    dims_case(8, 2, (int[]){2, 4}, (int[]){2, 4});
    {
        int d[2] = {0, 5};
        CHECK_CLASS(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS);
        d[1] = -1;
        CHECK_CLASS(MPI_Dims_create(12, 2, d), MPI_ERR_DIMS);
    }

    MPI_Topo_test(MPI_COMM_WORLD, &status);
    CHECK(status == MPI_UNDEFINED, "WORLD topo_test %d", status);

    /* 2-D cart: dims from Dims_create, periodic in dim 0 only */
    {
        int      dims[2] = {0, 0}, periods[2] = {1, 0}, coords[2], r, src, dst, nd;
        MPI_Comm cart, cdup, row, col;
        MPI_Dims_create(size, 2, dims);
        CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
        MPI_Topo_test(cart, &status);
        CHECK(status == MPI_CART, "cart topo_test %d", status);
        MPI_Cartdim_get(cart, &nd);
        CHECK(nd == 2, "cartdim %d", nd);
        MPI_Cart_coords(cart, rank, 2, coords);
        CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1], "coords of %d: (%d,%d)", rank,
              coords[0], coords[1]);
        MPI_Cart_rank(cart, coords, &r);
        CHECK(r == rank, "cart_rank(coords(%d)) = %d", rank, r);
        /* periodic wrap in dim 0 */
        int c2[2] = {coords[0] + dims[0], coords[1]};
        MPI_Cart_rank(cart, c2, &r);
        CHECK(r == rank, "cart_rank wraps periodic dim: %d", r);
        c2[0] = coords[0];
        c2[1] = dims[1];
        CHECK_CLASS(MPI_Cart_rank(cart, c2, &r), MPI_ERR_ARG);
        /* shift along dim 0 (periodic) */
        MPI_Cart_shift(cart, 0, 1, &src, &dst);
        CHECK(src == ((coords[0] + dims[0] - 1) % dims[0]) * dims[1] + coords[1], "shift0 src %d", src);
        CHECK(dst == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1], "shift0 dst %d", dst);
        /* shift along dim 1 (not periodic): PROC_NULL at the ends */
        MPI_Cart_shift(cart, 1, 1, &src, &dst);
        CHECK(src == (coords[1] == 0 ? MPI_PROC_NULL : rank - 1), "shift1 src %d", src);
        CHECK(dst == (coords[1] == dims[1] - 1 ? MPI_PROC_NULL : rank + 1), "shift1 dst %d", dst);
        CHECK_CLASS(MPI_Cart_shift(cart, 2, 1, &src, &dst), MPI_ERR_DIMS);
        {
            int gd[2], gp[2], gc[2];
            MPI_Cart_get(cart, 2, gd, gp, gc);
            CHECK(gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 1 && gp[1] == 0 && gc[0] == coords[0] &&
                      gc[1] == coords[1],
                  "cart_get");
        }
        /* dup keeps the topology */
        MPI_Comm_dup(cart, &cdup);
        MPI_Topo_test(cdup, &status);
        CHECK(status == MPI_CART, "dup of cart topo_test %d", status);
        MPI_Comm_free(&cdup);
        /* sub: rows (keep dim 1) and columns (keep dim 0) */
        CHECK_OK(MPI_Cart_sub(cart, (int[]){0, 1}, &row));
        MPI_Comm_rank(row, &r);
        MPI_Cartdim_get(row, &nd);
        CHECK(r == coords[1] && nd == 1, "row rank %d ndims %d", r, nd);
        {
            int n;
            MPI_Comm_size(row, &n);
            CHECK(n == dims[1], "row size %d", n);
        }
        CHECK_OK(MPI_Cart_sub(cart, (int[]){1, 0}, &col));
        MPI_Comm_rank(col, &r);
        CHECK(r == coords[0], "col rank %d", r);
        {
            int gd[1], gp[1], gc[1];
            MPI_Cart_get(col, 1, gd, gp, gc);
            CHECK(gd[0] == dims[0] && gp[0] == 1 && gc[0] == coords[0], "col cart_get");
        }
        /* neighbor exchange along the column ring uses the topology */
        {
            int s, d, v = rank, got = -1;
            MPI_Cart_shift(col, 0, 1, &s, &d);
            MPI_Sendrecv(&v, 1, MPI_INT, d, 3, &got, 1, MPI_INT, s, 3, col, MPI_STATUS_IGNORE);
            CHECK(got == ((coords[0] + dims[0] - 1) % dims[0]) * dims[1] + coords[1], "column ring got %d", got);
        }
        MPI_Comm_free(&row);
        MPI_Comm_free(&col);
        /* sub with nothing kept: a 0-d cart of size 1 */
        CHECK_OK(MPI_Cart_sub(cart, (int[]){0, 0}, &row));
        {
            int n;
            MPI_Comm_size(row, &n);
            MPI_Cartdim_get(row, &nd);
            CHECK(n == 1 && nd == 0, "empty sub size %d ndims %d", n, nd);
        }
        MPI_Comm_free(&row);
        MPI_Cart_map(MPI_COMM_WORLD, 2, dims, periods, &r);
        CHECK(r == rank, "cart_map %d", r);
        MPI_Comm_free(&cart);
    }
    /* cart smaller than the communicator: extra ranks get MPI_COMM_NULL */
    {
        MPI_Comm cart;
        int      dims[1] = {size > 1 ? size - 1 : 1}, periods[1] = {0};
        CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 1, &cart));
        if (rank < dims[0]) {
            CHECK(cart != MPI_COMM_NULL, "member got MPI_COMM_NULL");
            MPI_Comm_free(&cart);
        } else {
            CHECK(cart == MPI_COMM_NULL, "extra rank got a cart communicator");
        }
        dims[0] = size + 1;
        CHECK_CLASS(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart), MPI_ERR_TOPOLOGY);
        CHECK_CLASS(MPI_Cartdim_get(MPI_COMM_WORLD, &dims[0]), MPI_ERR_TOPOLOGY);
    }

    /* graph: ring with an extra edge 0 -> every node (undirected listing) */
    {
        int      nnodes = size, *index = malloc(sizeof(int) * (size_t)size), edges[1024], ne = 0;
        MPI_Comm graph;
        for (int i = 0; i < size; i++) {
            if (size > 1) {
                edges[ne++] = (i + 1) % size;
                edges[ne++] = (i + size - 1) % size;
            }
            index[i] = ne;
        }
        CHECK_OK(MPI_Graph_create(MPI_COMM_WORLD, nnodes, index, edges, 0, &graph));
        MPI_Topo_test(graph, &status);
        CHECK(status == MPI_GRAPH, "graph topo_test %d", status);
        int nn, nedges, cnt, nb[2];
        MPI_Graphdims_get(graph, &nn, &nedges);
        CHECK(nn == size && nedges == ne, "graphdims %d %d", nn, nedges);
        MPI_Graph_neighbors_count(graph, rank, &cnt);
        CHECK(cnt == (size > 1 ? 2 : 0), "neighbors count %d", cnt);
        if (size > 1) {
            MPI_Graph_neighbors(graph, rank, 2, nb);
            CHECK(nb[0] == (rank + 1) % size && nb[1] == (rank + size - 1) % size, "neighbors %d %d", nb[0], nb[1]);
        }
        int *gi = malloc(sizeof(int) * (size_t)size), ge[1024];
        MPI_Graph_get(graph, size, ne, gi, ge);
        for (int i = 0; i < size; i++) {
            CHECK(gi[i] == index[i], "graph_get index[%d]", i);
        }
        for (int i = 0; i < ne; i++) {
            CHECK(ge[i] == edges[i], "graph_get edges[%d]", i);
        }
        int r;
        MPI_Graph_map(MPI_COMM_WORLD, nnodes, index, edges, &r);
        CHECK(r == rank, "graph_map %d", r);
        CHECK_CLASS(MPI_Cart_shift(graph, 0, 1, &r, &r), MPI_ERR_TOPOLOGY);
        free(gi);
        free(index);
        MPI_Comm_free(&graph);
    }

    /* dist graph adjacent: rank -> rank+1 (weight rank), from rank-1 */
    {
        MPI_Comm dg;
        int      src = (rank + size - 1) % size, dst = (rank + 1) % size, sw = src, dw = rank;
        int      in, out, weighted, s[2], swt[2], d[2], dwt[2];
        CHECK_OK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &sw, 1, &dst, &dw, MPI_INFO_NULL, 0,
                                                &dg));
        MPI_Topo_test(dg, &status);
        CHECK(status == MPI_DIST_GRAPH, "dist graph topo_test %d", status);
        MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
        CHECK(in == 1 && out == 1 && weighted, "adjacent counts %d %d %d", in, out, weighted);
        MPI_Dist_graph_neighbors(dg, 2, s, swt, 2, d, dwt);
        CHECK(s[0] == src && swt[0] == src && d[0] == dst && dwt[0] == rank, "adjacent neighbors");
        MPI_Comm_free(&dg);
    }
    /* general dist graph: rank 0 declares every edge i -> (i+1)%size with weight 10*i,
     * every other rank declares nothing */
    {
        MPI_Comm dg;
        int      n = rank == 0 ? size : 0, *srcs = malloc(sizeof(int) * (size_t)size),
            *deg = malloc(sizeof(int) * (size_t)size), *dsts = malloc(sizeof(int) * (size_t)size),
            *w = malloc(sizeof(int) * (size_t)size);
        for (int i = 0; i < size; i++) {
            srcs[i] = i;
            deg[i]  = 1;
            dsts[i] = (i + 1) % size;
            w[i]    = 10 * i;
        }
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, dsts, rank == 0 ? w : MPI_WEIGHTS_EMPTY,
                                       MPI_INFO_NULL, 0, &dg));
        int in, out, weighted, s[4], swt[4], d[4], dwt[4];
        MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
        CHECK(in == 1 && out == 1 && weighted, "general counts %d %d %d", in, out, weighted);
        MPI_Dist_graph_neighbors(dg, 4, s, swt, 4, d, dwt);
        CHECK(s[0] == (rank + size - 1) % size && swt[0] == 10 * ((rank + size - 1) % size), "general in %d/%d",
              s[0], swt[0]);
        CHECK(d[0] == (rank + 1) % size && dwt[0] == 10 * rank, "general out %d/%d", d[0], dwt[0]);
        MPI_Comm_free(&dg);
        /* unweighted */
        CHECK_OK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, deg, dsts, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &dg));
        MPI_Dist_graph_neighbors_count(dg, &in, &out, &weighted);
        CHECK(in == 1 && out == 1 && !weighted, "unweighted counts %d %d %d", in, out, weighted);
        MPI_Comm_free(&dg);
        free(srcs);
        free(deg);
        free(dsts);
        free(w);
    }
    return mpitest_finish();
}
