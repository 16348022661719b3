/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Process topologies (cartesian, graph, distributed graph) attached to a
 * communicator (comm->topo, comm->topo_kind), and the neighbor lists the
 * neighborhood collectives use.
 */
#ifndef WEFT_CORE_TOPO_H
#define WEFT_CORE_TOPO_H

#include "core/comm.h"

typedef struct weft_topo {
    int  kind; /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    /* MPI_CART */
    int  ndims;
    int *dims, *periods, *coords; /* coords: this process's */
    /* MPI_GRAPH (the whole graph, as given) */
    int  nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH (this process's adjacency) */
    int  weighted;
    int *sourceweights, *destweights;
    /* Neighbor lists of every kind, in the order the neighborhood
     * collectives use: cart: for each dimension d, the -1 then the +1
     * neighbor (MPI_PROC_NULL at a non-periodic border), same list in and
     * out; graph: the rank's neighbors in and out; dist graph: sources in,
     * destinations out. */
    int  indegree, outdegree;
    int *sources, *dests;
} weft_topo_t;

/* Neighbor lists of comm's topology for neighborhood collectives. Returns
 * MPI_SUCCESS, or MPI_ERR_TOPOLOGY (reason recorded) when comm has none.
 * The arrays belong to the communicator. */
int weft_topo_neighbors(weft_comm_t *comm, int *indegree, const int **sources, int *outdegree,
                        const int **dests);

/* Deep copy (NULL on no memory) and free; both accept NULL. */
weft_topo_t *weft_topo_dup(const weft_topo_t *topo);
void         weft_topo_free(weft_topo_t *topo);

#endif
