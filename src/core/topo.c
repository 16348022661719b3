/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * Cartesian, graph and distributed-graph topologies. reorder is accepted
 * and ignored: ranks keep their order (a valid mapping by the standard).
 */
#include "core/topo.h"

#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "core/comm_ctx.h"
#include "core/comm_internal.h"
#include "core/errors.h"

static int *int_dup(const int *src, int n)
{
    int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (p != NULL && n > 0 && src != NULL) {
        memcpy(p, src, sizeof(int) * (size_t)n);
    }
    return p;
}

void weft_topo_free(weft_topo_t *t)
{
    if (t == NULL) {
        return;
    }
    free(t->dims);
    free(t->periods);
    free(t->coords);
    free(t->index);
    free(t->edges);
    free(t->sourceweights);
    free(t->destweights);
    free(t->sources);
    free(t->dests);
    free(t);
}

weft_topo_t *weft_topo_dup(const weft_topo_t *t)
{
    weft_topo_t *c;

    if (t == NULL) {
        return NULL;
    }
    c = calloc(1, sizeof(*c));
    if (c == NULL) {
        return NULL;
    }
    *c               = *t;
    c->dims          = int_dup(t->dims, t->ndims);
    c->periods       = int_dup(t->periods, t->ndims);
    c->coords        = int_dup(t->coords, t->ndims);
    c->index         = int_dup(t->index, t->nnodes);
    c->edges         = int_dup(t->edges, t->nedges);
    c->sourceweights = int_dup(t->sourceweights, t->weighted ? t->indegree : 0);
    c->destweights   = int_dup(t->destweights, t->weighted ? t->outdegree : 0);
    c->sources       = int_dup(t->sources, t->indegree);
    c->dests         = int_dup(t->dests, t->outdegree);
    if (!c->dims || !c->periods || !c->coords || !c->index || !c->edges || !c->sourceweights ||
        !c->destweights || !c->sources || !c->dests) {
        weft_topo_free(c);
        return NULL;
    }
    return c;
}

int weft_topo_neighbors(weft_comm_t *comm, int *indegree, const int **sources, int *outdegree,
                        const int **dests)
{
    weft_topo_t *t = comm->topo;

    if (t == NULL) {
        return weft_error(MPI_ERR_TOPOLOGY, "the communicator has no topology");
    }
    *indegree  = t->indegree;
    *sources   = t->sources;
    *outdegree = t->outdegree;
    *dests     = t->dests;
    return MPI_SUCCESS;
}

static weft_topo_t *topo_of(weft_comm_t *comm, int kind, int *rc)
{
    weft_topo_t *t = comm->topo;

    if (t == NULL || (kind != 0 && t->kind != kind)) {
        *rc = weft_comm_arg_error(MPI_ERR_TOPOLOGY, "comm", "the communicator has %s topology",
                                  t == NULL                   ? "no"
                                  : t->kind == MPI_CART       ? "a cartesian"
                                  : t->kind == MPI_GRAPH      ? "a graph"
                                                              : "a distributed graph");
        return NULL;
    }
    *rc = MPI_SUCCESS;
    return t;
}

static void attach(weft_comm_t *comm, weft_topo_t *t)
{
    weft_topo_free(comm->topo);
    comm->topo      = t;
    comm->topo_kind = t->kind;
}

/* ---- cartesian --------------------------------------------------------- */

static void cart_coords_of(const weft_topo_t *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Rank of coords (wrapping periodic dims); -1 if outside a non-periodic dim. */
static int cart_rank_of(const weft_topo_t *t, const int *coords)
{
    int rank = 0;

    for (int i = 0; i < t->ndims; i++) {
        int c = coords[i];
        if (t->periods[i]) {
            c %= t->dims[i];
            if (c < 0) {
                c += t->dims[i];
            }
        } else if (c < 0 || c >= t->dims[i]) {
            return -1;
        }
        rank = rank * t->dims[i] + c;
    }
    return rank;
}

static void cart_shift_of(const weft_topo_t *t, int dir, int disp, int *src, int *dst)
{
    int *c = int_dup(t->coords, t->ndims), r;

    if (c == NULL) {
        *src = *dst = MPI_PROC_NULL;
        return;
    }
    c[dir] = t->coords[dir] + disp;
    r      = cart_rank_of(t, c);
    *dst   = r < 0 ? MPI_PROC_NULL : r;
    c[dir] = t->coords[dir] - disp;
    r      = cart_rank_of(t, c);
    *src   = r < 0 ? MPI_PROC_NULL : r;
    free(c);
}

static weft_topo_t *cart_new(int ndims, const int *dims, const int *periods, int rank)
{
    weft_topo_t *t = calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    t->kind          = MPI_CART;
    t->ndims         = ndims;
    t->dims          = int_dup(dims, ndims);
    t->periods       = malloc(sizeof(int) * (size_t)(ndims > 0 ? ndims : 1));
    t->coords        = malloc(sizeof(int) * (size_t)(ndims > 0 ? ndims : 1));
    t->indegree      = t->outdegree = 2 * ndims;
    t->sources       = malloc(sizeof(int) * (size_t)(ndims > 0 ? 2 * ndims : 1));
    t->dests         = malloc(sizeof(int) * (size_t)(ndims > 0 ? 2 * ndims : 1));
    t->index         = int_dup(NULL, 0);
    t->edges         = int_dup(NULL, 0);
    t->sourceweights = int_dup(NULL, 0);
    t->destweights   = int_dup(NULL, 0);
    if (!t->dims || !t->periods || !t->coords || !t->sources || !t->dests || !t->index ||
        !t->edges || !t->sourceweights || !t->destweights) {
        weft_topo_free(t);
        return NULL;
    }
    for (int i = 0; i < ndims; i++) {
        t->periods[i] = periods && periods[i] ? 1 : 0;
    }
    cart_coords_of(t, rank, t->coords);
    for (int d = 0; d < ndims; d++) {
        int src, dst;
        cart_shift_of(t, d, 1, &src, &dst);
        t->sources[2 * d] = t->dests[2 * d] = src;
        t->sources[2 * d + 1] = t->dests[2 * d + 1] = dst;
    }
    return t;
}

static int check_dims(int ndims, const int dims[], long *nnodes_p)
{
    long nnodes = 1;

    if (ndims < 0) {
        return weft_comm_arg_error(MPI_ERR_DIMS, "ndims", "%d is negative", ndims);
    }
    if (ndims > 0 && dims == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "dims", "NULL array");
    }
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0) {
            return weft_comm_arg_error(MPI_ERR_DIMS, "dims", "dims[%d]=%d is not positive", i, dims[i]);
        }
        nnodes *= dims[i];
        if (nnodes > 0x7fffffff) {
            return weft_comm_arg_error(MPI_ERR_DIMS, "dims", "the grid has too many points");
        }
    }
    *nnodes_p = nnodes;
    return MPI_SUCCESS;
}

int weft_cart_create_impl(weft_comm_t *comm_old, int ndims, const int dims[], const int periods[],
                          int reorder, MPI_Comm *comm_cart)
{
    weft_comm_t *nc = NULL;
    weft_topo_t *t;
    long         nnodes;
    int          rc;

    (void)reorder;
    rc = check_dims(ndims, dims, &nnodes);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (ndims > 0 && periods == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "periods", "NULL array");
    }
    if (nnodes > comm_old->size) {
        return weft_comm_arg_error(MPI_ERR_TOPOLOGY, "dims",
                                   "the grid has %ld points but the communicator only %d ranks",
                                   nnodes, comm_old->size);
    }
    rc = weft_comm_split_raw(comm_old, comm_old->rank < nnodes ? 0 : MPI_UNDEFINED, comm_old->rank, &nc);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (nc != NULL) {
        t = cart_new(ndims, dims, periods, nc->rank);
        if (t == NULL) {
            weft_comm_release(nc);
            return weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
        }
        attach(nc, t);
    }
    *comm_cart = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

int weft_cart_sub_impl(weft_comm_t *comm, const int remain_dims[], MPI_Comm *newcomm)
{
    weft_comm_t *nc = NULL;
    int          color = 0, key = 0, nd = 0, rc, *dims, *periods;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc), *nt;

    if (t == NULL) {
        return rc;
    }
    if (t->ndims > 0 && remain_dims == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "remain_dims", "NULL array");
    }
    dims    = malloc(sizeof(int) * (size_t)(t->ndims + 1));
    periods = malloc(sizeof(int) * (size_t)(t->ndims + 1));
    if (dims == NULL || periods == NULL) {
        free(dims);
        free(periods);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
    }
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            key          = key * t->dims[i] + t->coords[i];
            dims[nd]     = t->dims[i];
            periods[nd]  = t->periods[i];
            nd++;
        } else {
            color = color * t->dims[i] + t->coords[i];
        }
    }
    rc = weft_comm_split_raw(comm, color, key, &nc);
    if (rc == MPI_SUCCESS) {
        nt = cart_new(nd, dims, periods, nc->rank);
        if (nt == NULL) {
            weft_comm_release(nc);
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
        } else {
            attach(nc, nt);
            *newcomm = weft_comm_handle_out(nc);
        }
    }
    free(dims);
    free(periods);
    return rc;
}

int weft_cart_coords_impl(weft_comm_t *comm, int rank, int maxdims, int coords[])
{
    int          rc, *c;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc);

    if (t == NULL) {
        return rc;
    }
    if (maxdims < t->ndims) {
        return weft_comm_arg_error(MPI_ERR_ARG, "maxdims", "%d is less than the %d dimensions",
                                   maxdims, t->ndims);
    }
    if (t->ndims > 0 && coords == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "coords", "NULL array");
    }
    c = int_dup(NULL, t->ndims);
    if (c == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    cart_coords_of(t, rank, c);
    memcpy(coords, c, sizeof(int) * (size_t)t->ndims);
    free(c);
    return MPI_SUCCESS;
}

int weft_cart_rank_impl(weft_comm_t *comm, const int coords[], int *rank)
{
    int          rc, r;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc);

    if (t == NULL) {
        return rc;
    }
    if (t->ndims > 0 && coords == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "coords", "NULL array");
    }
    r = cart_rank_of(t, coords);
    if (r < 0) {
        for (int i = 0; i < t->ndims; i++) {
            if (!t->periods[i] && (coords[i] < 0 || coords[i] >= t->dims[i])) {
                return weft_comm_arg_error(MPI_ERR_ARG, "coords",
                                           "coords[%d]=%d is outside non-periodic dimension of size %d",
                                           i, coords[i], t->dims[i]);
            }
        }
    }
    *rank = r;
    return MPI_SUCCESS;
}

int weft_cart_shift_impl(weft_comm_t *comm, int direction, int disp, int *rank_source,
                         int *rank_dest)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc);

    if (t == NULL) {
        return rc;
    }
    if (direction < 0 || direction >= t->ndims) {
        return weft_comm_arg_error(MPI_ERR_DIMS, "direction", "%d is not a dimension (0..%d)",
                                   direction, t->ndims - 1);
    }
    cart_shift_of(t, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}

int weft_cart_get_impl(weft_comm_t *comm, int maxdims, int dims[], int periods[], int coords[])
{
    int          rc, n;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc);

    if (t == NULL) {
        return rc;
    }
    if (maxdims < 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, "maxdims", "%d is negative", maxdims);
    }
    n = maxdims < t->ndims ? maxdims : t->ndims;
    if (n > 0 && (dims == NULL || periods == NULL || coords == NULL)) {
        return weft_comm_arg_error(MPI_ERR_ARG, dims == NULL ? "dims" : periods == NULL ? "periods" : "coords",
                                   "NULL array");
    }
    for (int i = 0; i < n; i++) {
        dims[i]    = t->dims[i];
        periods[i] = t->periods[i];
        coords[i]  = t->coords[i];
    }
    return MPI_SUCCESS;
}

int weft_cartdim_get_impl(weft_comm_t *comm, int *ndims)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_CART, &rc);

    if (t == NULL) {
        return rc;
    }
    *ndims = t->ndims;
    return MPI_SUCCESS;
}

int weft_cart_map_impl(weft_comm_t *comm, int ndims, const int dims[], const int periods[],
                       int *newrank)
{
    long nnodes;
    int  rc = check_dims(ndims, dims, &nnodes);

    (void)periods;
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (nnodes > comm->size) {
        return weft_comm_arg_error(MPI_ERR_DIMS, "dims",
                                   "the grid has %ld points but the communicator only %d ranks",
                                   nnodes, comm->size);
    }
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* Search for the most balanced factorization of m into k factors: factors
 * listed in non-increasing order, the smallest spread (largest - smallest)
 * wins, ties go to the lexicographically smaller list (the smaller largest
 * factor). Candidates are the divisors of m (at most 1536 for an int); the
 * first factor of the rest is at most the previous one and its
 * (k - pos)-th power at least what is left, which keeps the search small. */
typedef struct {
    int        k;
    int       *cur, *best;
    long       best_spread;
    const int *divs; /* divisors of m, ascending */
    int        ndivs;
} dims_search_t;

static int dims_better(const dims_search_t *s, long spread)
{
    if (s->best_spread < 0 || spread != s->best_spread) {
        return s->best_spread < 0 || spread < s->best_spread;
    }
    for (int i = 0; i < s->k; i++) {
        if (s->cur[i] != s->best[i]) {
            return s->cur[i] < s->best[i];
        }
    }
    return 0;
}

/* f^e >= m, without overflow */
static int pow_at_least(long f, int e, long m)
{
    long p = 1;
    for (int i = 0; i < e; i++) {
        p *= f;
        if (p >= m) {
            return 1;
        }
    }
    return p >= m;
}

static void dims_search(dims_search_t *s, int pos, long m, long maxf)
{
    if (pos == s->k - 1) {
        long spread = (pos == 0 ? m : s->cur[0]) - m;
        if (m > maxf) {
            return;
        }
        s->cur[pos] = (int)m;
        if (dims_better(s, spread)) {
            memcpy(s->best, s->cur, sizeof(int) * (size_t)s->k);
            s->best_spread = spread;
        }
        return;
    }
    for (int i = s->ndivs - 1; i >= 0; i--) {
        long f = s->divs[i];
        if (f > maxf || m % f != 0) {
            continue;
        }
        if (!pow_at_least(f, s->k - pos, m)) {
            break; /* f cannot be the largest of the remaining factors */
        }
        if (pos > 0 && s->best_spread >= 0 && s->cur[0] - f > s->best_spread) {
            break; /* the smallest factor will be <= f: spread only grows */
        }
        s->cur[pos] = (int)f;
        dims_search(s, pos + 1, m / f, f);
    }
}

static int *divisors_of(long m, int *n)
{
    int *d = malloc(sizeof(int) * 2048), lo = 0, hi = 0, tail[1024];

    if (d == NULL) {
        return NULL;
    }
    for (long f = 1; f * f <= m; f++) {
        if (m % f == 0) {
            d[lo++] = (int)f;
            if (f != m / f) {
                tail[hi++] = (int)(m / f);
            }
        }
    }
    while (hi > 0) {
        d[lo++] = tail[--hi];
    }
    *n = lo;
    return d;
}

/* MPI_Dims_create: the free dimensions get a factorization of what the
 * fixed ones leave that is "as close to each other as possible", in
 * non-increasing order. */
int weft_dims_create_impl(int nnodes, int ndims, int dims[])
{
    long          fixed = 1, m;
    int           nfree = 0, nf = 0;
    dims_search_t s;

    if (nnodes <= 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, "nnodes", "%d is not positive", nnodes);
    }
    if (ndims < 0) {
        return weft_comm_arg_error(MPI_ERR_DIMS, "ndims", "%d is negative", ndims);
    }
    if (ndims > 0 && dims == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "dims", "NULL array");
    }
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0) {
            return weft_comm_arg_error(MPI_ERR_DIMS, "dims", "dims[%d]=%d is negative", i, dims[i]);
        }
        if (dims[i] > 0) {
            fixed *= dims[i];
            if (fixed > nnodes) {
                break;
            }
        } else {
            nfree++;
        }
    }
    if (fixed > nnodes || nnodes % fixed != 0) {
        return weft_comm_arg_error(MPI_ERR_DIMS, "dims",
                                   "the fixed dimensions (product %ld) do not divide nnodes=%d", fixed,
                                   nnodes);
    }
    m = nnodes / fixed;
    if (nfree == 0) {
        if (m != 1) {
            return weft_comm_arg_error(MPI_ERR_DIMS, "dims",
                                       "the dimensions multiply to %ld, not nnodes=%d", fixed, nnodes);
        }
        return MPI_SUCCESS;
    }
    s.k           = nfree;
    s.best_spread = -1;
    s.cur         = malloc(sizeof(int) * (size_t)nfree);
    s.best        = malloc(sizeof(int) * (size_t)nfree);
    s.divs        = divisors_of(m, &s.ndivs);
    if (s.cur == NULL || s.best == NULL || s.divs == NULL) {
        free(s.cur);
        free(s.best);
        free((void *)s.divs);
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    dims_search(&s, 0, m, m);
    for (int i = 0; i < ndims; i++) {
        if (dims[i] == 0) {
            dims[i] = s.best[nf++];
        }
    }
    free(s.cur);
    free(s.best);
    free((void *)s.divs);
    return MPI_SUCCESS;
}

/* ---- graph -------------------------------------------------------------- */

int weft_graph_create_impl(weft_comm_t *comm_old, int nnodes, const int indx[], const int edges[],
                           int reorder, MPI_Comm *comm_graph)
{
    weft_comm_t *nc = NULL;
    weft_topo_t *t;
    int          nedges, rc;

    (void)reorder;
    if (nnodes < 0 || nnodes > comm_old->size) {
        return weft_comm_arg_error(MPI_ERR_ARG, "nnodes", "%d is not in 0..%d", nnodes, comm_old->size);
    }
    if (nnodes > 0 && indx == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "indx", "NULL array");
    }
    nedges = nnodes > 0 ? indx[nnodes - 1] : 0;
    for (int i = 0; i < nnodes; i++) {
        if (indx[i] < (i > 0 ? indx[i - 1] : 0)) {
            return weft_comm_arg_error(MPI_ERR_ARG, "indx", "indx[%d]=%d is decreasing", i, indx[i]);
        }
    }
    if (nedges > 0 && edges == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "edges", "NULL array");
    }
    for (int i = 0; i < nedges; i++) {
        if (edges[i] < 0 || edges[i] >= nnodes) {
            return weft_comm_arg_error(MPI_ERR_ARG, "edges", "edges[%d]=%d is not a node (0..%d)", i,
                                       edges[i], nnodes - 1);
        }
    }
    rc = weft_comm_split_raw(comm_old, comm_old->rank < nnodes ? 0 : MPI_UNDEFINED, comm_old->rank,
                             &nc);
    if (rc != MPI_SUCCESS || nc == NULL) {
        if (rc == MPI_SUCCESS) {
            *comm_graph = MPI_COMM_NULL;
        }
        return rc;
    }
    t = calloc(1, sizeof(*t));
    if (t != NULL) {
        int me = nc->rank, first = me > 0 ? indx[me - 1] : 0;
        t->kind          = MPI_GRAPH;
        t->nnodes        = nnodes;
        t->nedges        = nedges;
        t->index         = int_dup(indx, nnodes);
        t->edges         = int_dup(edges, nedges);
        t->indegree      = t->outdegree = indx[me] - first;
        t->sources       = int_dup(edges + first, t->indegree);
        t->dests         = int_dup(edges + first, t->indegree);
        t->dims          = int_dup(NULL, 0);
        t->periods       = int_dup(NULL, 0);
        t->coords        = int_dup(NULL, 0);
        t->sourceweights = int_dup(NULL, 0);
        t->destweights   = int_dup(NULL, 0);
        if (!t->index || !t->edges || !t->sources || !t->dests || !t->dims || !t->periods ||
            !t->coords || !t->sourceweights || !t->destweights) {
            weft_topo_free(t);
            t = NULL;
        }
    }
    if (t == NULL) {
        weft_comm_release(nc);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
    }
    attach(nc, t);
    *comm_graph = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

int weft_graphdims_get_impl(weft_comm_t *comm, int *nnodes, int *nedges)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    *nnodes = t->nnodes;
    *nedges = t->nedges;
    return MPI_SUCCESS;
}

int weft_graph_get_impl(weft_comm_t *comm, int maxindex, int maxedges, int indx[], int edges[])
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    if (maxindex < 0 || maxedges < 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, maxindex < 0 ? "maxindex" : "maxedges", "negative");
    }
    for (int i = 0; i < t->nnodes && i < maxindex; i++) {
        indx[i] = t->index[i];
    }
    for (int i = 0; i < t->nedges && i < maxedges; i++) {
        edges[i] = t->edges[i];
    }
    return MPI_SUCCESS;
}

int weft_graph_neighbors_count_impl(weft_comm_t *comm, int rank, int *nneighbors)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    *nneighbors = t->index[rank] - (rank > 0 ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}

int weft_graph_neighbors_impl(weft_comm_t *comm, int rank, int maxneighbors, int neighbors[])
{
    int          rc, first, n;
    weft_topo_t *t = topo_of(comm, MPI_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    first = rank > 0 ? t->index[rank - 1] : 0;
    n     = t->index[rank] - first;
    for (int i = 0; i < n && i < maxneighbors; i++) {
        neighbors[i] = t->edges[first + i];
    }
    return MPI_SUCCESS;
}

int weft_graph_map_impl(weft_comm_t *comm, int nnodes, const int indx[], const int edges[], int *newrank)
{
    (void)indx;
    (void)edges;
    if (nnodes < 0 || nnodes > comm->size) {
        return weft_comm_arg_error(MPI_ERR_ARG, "nnodes", "%d is not in 0..%d", nnodes, comm->size);
    }
    *newrank = comm->rank < nnodes ? comm->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

int weft_topo_test_impl(weft_comm_t *comm, int *status)
{
    *status = comm->topo ? ((weft_topo_t *)comm->topo)->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- distributed graph ------------------------------------------------- */

/* A communicator over the same group as comm_old (context id agreed). */
static int same_group_comm(weft_comm_t *comm_old, weft_comm_t **new_p)
{
    uint32_t     ctx;
    weft_comm_t *nc = NULL;
    int          rc = weft_comm_agree_ids(comm_old, 1, &ctx, WEFT_XTAG_TOPO);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    nc = weft_comm_derive(comm_old, comm_old->group, NULL, ctx, 0);
    if (nc == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory for a communicator");
    }
    *new_p = nc;
    return MPI_SUCCESS;
}

static weft_topo_t *dist_new(int indegree, const int *sources, const int *sw, int outdegree,
                             const int *dests, const int *dw, int weighted)
{
    weft_topo_t *t = calloc(1, sizeof(*t));

    if (t == NULL) {
        return NULL;
    }
    t->kind          = MPI_DIST_GRAPH;
    t->weighted      = weighted;
    t->indegree      = indegree;
    t->outdegree     = outdegree;
    t->sources       = int_dup(sources, indegree);
    t->dests         = int_dup(dests, outdegree);
    t->sourceweights = int_dup(weighted ? sw : NULL, indegree);
    t->destweights   = int_dup(weighted ? dw : NULL, outdegree);
    t->dims          = int_dup(NULL, 0);
    t->periods       = int_dup(NULL, 0);
    t->coords        = int_dup(NULL, 0);
    t->index         = int_dup(NULL, 0);
    t->edges         = int_dup(NULL, 0);
    if (!t->sources || !t->dests || !t->sourceweights || !t->destweights || !t->dims ||
        !t->periods || !t->coords || !t->index || !t->edges) {
        weft_topo_free(t);
        return NULL;
    }
    return t;
}

static int is_unweighted(const int *w)
{
    return w == MPI_UNWEIGHTED;
}

static const int *real_weights(const int *w)
{
    return (w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY) ? NULL : w;
}

static int check_ranks(const char *arg, int n, const int *r, int size)
{
    if (n > 0 && r == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, arg, "NULL array");
    }
    for (int i = 0; i < n; i++) {
        if (r[i] < 0 || r[i] >= size) {
            return weft_comm_arg_error(MPI_ERR_RANK, arg, "%s[%d]=%d is out of range (communicator has %d ranks)",
                                       arg, i, r[i], size);
        }
    }
    return MPI_SUCCESS;
}

int weft_dist_graph_create_adjacent_impl(weft_comm_t *comm_old, int indegree, const int sources[],
                                         const int *sourceweights, int outdegree,
                                         const int destinations[], const int *destweights,
                                         weft_info_t *info, int reorder, MPI_Comm *comm_dist_graph)
{
    weft_comm_t *nc = NULL;
    weft_topo_t *t;
    int          weighted, rc;

    (void)info;
    (void)reorder;
    if (indegree < 0 || outdegree < 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, indegree < 0 ? "indegree" : "outdegree", "negative degree");
    }
    if ((rc = check_ranks("sources", indegree, sources, comm_old->size)) != MPI_SUCCESS ||
        (rc = check_ranks("destinations", outdegree, destinations, comm_old->size)) != MPI_SUCCESS) {
        return rc;
    }
    weighted = !is_unweighted(sourceweights) && !is_unweighted(destweights);
    if (weighted && ((indegree > 0 && real_weights(sourceweights) == NULL) ||
                     (outdegree > 0 && real_weights(destweights) == NULL))) {
        return weft_comm_arg_error(MPI_ERR_ARG, "sourceweights", "missing weights");
    }
    rc = same_group_comm(comm_old, &nc);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    t = dist_new(indegree, sources, real_weights(sourceweights), outdegree, destinations,
                 real_weights(destweights), weighted);
    if (t == NULL) {
        weft_comm_release(nc);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
    }
    attach(nc, t);
    *comm_dist_graph = weft_comm_handle_out(nc);
    return MPI_SUCCESS;
}

/* Every process's edges are gathered everywhere (edge = source, dest,
 * weight); each keeps those that touch it, in (contributor rank, position)
 * order. Simple and O(total edges) per process: fine for the graph sizes
 * MPI_Dist_graph_create sees in practice; the adjacent form scales. */
int weft_dist_graph_create_impl(weft_comm_t *comm_old, int n, const int sources[], const int degrees[],
                                const int destinations[], const int *weights, weft_info_t *info,
                                int reorder, MPI_Comm *comm_dist_graph)
{
    weft_xgroup_t x;
    weft_comm_t  *nc = NULL;
    weft_topo_t  *t;
    int          *mine, *all = NULL, k = 0, total = 0, rc, weighted, me = comm_old->rank;
    int          *in = NULL, *inw = NULL, *out = NULL, *outw = NULL, nin = 0, nout = 0;
    size_t       *lens;
    const int    *w = real_weights(weights);

    (void)info;
    (void)reorder;
    if (n < 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, "n", "%d is negative", n);
    }
    if ((rc = check_ranks("sources", n, sources, comm_old->size)) != MPI_SUCCESS) {
        return rc;
    }
    if (n > 0 && degrees == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "degrees", "NULL array");
    }
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0) {
            return weft_comm_arg_error(MPI_ERR_ARG, "degrees", "degrees[%d]=%d is negative", i, degrees[i]);
        }
        total += degrees[i];
    }
    if ((rc = check_ranks("destinations", total, destinations, comm_old->size)) != MPI_SUCCESS) {
        return rc;
    }
    weighted = !is_unweighted(weights);
    if (weighted && total > 0 && w == NULL) {
        return weft_comm_arg_error(MPI_ERR_ARG, "weights", "MPI_WEIGHTS_EMPTY with edges");
    }
    mine = malloc(sizeof(int) * 3 * (size_t)(total + 1));
    lens = malloc(sizeof(size_t) * (size_t)comm_old->size);
    if (mine == NULL || lens == NULL) {
        free(mine);
        free(lens);
        return weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
    }
    for (int i = 0, e = 0; i < n; i++) {
        for (int j = 0; j < degrees[i]; j++, e++) {
            mine[3 * k]     = sources[i];
            mine[3 * k + 1] = destinations[e];
            mine[3 * k + 2] = w ? w[e] : 1;
            k++;
        }
    }
    weft_xgroup_of_comm(&x, comm_old);
    rc = weft_x_allgatherv(&x, mine, sizeof(int) * 3 * (size_t)k, (void **)&all, lens, WEFT_XTAG_TOPO + 8);
    free(mine);
    if (rc == MPI_SUCCESS) {
        size_t nall = 0;
        for (int i = 0; i < comm_old->size; i++) {
            nall += lens[i] / (3 * sizeof(int));
        }
        in   = malloc(sizeof(int) * (nall + 1));
        inw  = malloc(sizeof(int) * (nall + 1));
        out  = malloc(sizeof(int) * (nall + 1));
        outw = malloc(sizeof(int) * (nall + 1));
        if (!in || !inw || !out || !outw) {
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
        } else {
            for (size_t e = 0; e < nall; e++) {
                if (all[3 * e + 1] == me) {
                    in[nin]    = all[3 * e];
                    inw[nin++] = all[3 * e + 2];
                }
                if (all[3 * e] == me) {
                    out[nout]    = all[3 * e + 1];
                    outw[nout++] = all[3 * e + 2];
                }
            }
            rc = same_group_comm(comm_old, &nc);
        }
    }
    if (rc == MPI_SUCCESS) {
        t = dist_new(nin, in, inw, nout, out, outw, weighted);
        if (t == NULL) {
            weft_comm_release(nc);
            rc = weft_error(MPI_ERR_NO_MEM, "no memory for a topology");
        } else {
            attach(nc, t);
            *comm_dist_graph = weft_comm_handle_out(nc);
        }
    }
    free(all);
    free(lens);
    free(in);
    free(inw);
    free(out);
    free(outw);
    return rc;
}

int weft_dist_graph_neighbors_count_impl(weft_comm_t *comm, int *indegree, int *outdegree, int *weighted)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_DIST_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    *indegree  = t->indegree;
    *outdegree = t->outdegree;
    *weighted  = t->weighted;
    return MPI_SUCCESS;
}

int weft_dist_graph_neighbors_impl(weft_comm_t *comm, int maxindegree, int sources[], int *sourceweights,
                                   int maxoutdegree, int destinations[], int *destweights)
{
    int          rc;
    weft_topo_t *t = topo_of(comm, MPI_DIST_GRAPH, &rc);

    if (t == NULL) {
        return rc;
    }
    if (maxindegree < 0 || maxoutdegree < 0) {
        return weft_comm_arg_error(MPI_ERR_ARG, maxindegree < 0 ? "maxindegree" : "maxoutdegree", "negative");
    }
    for (int i = 0; i < t->indegree && i < maxindegree; i++) {
        sources[i] = t->sources[i];
        if (t->weighted && real_weights(sourceweights) != NULL) {
            sourceweights[i] = t->sourceweights[i];
        }
    }
    for (int i = 0; i < t->outdegree && i < maxoutdegree; i++) {
        destinations[i] = t->dests[i];
        if (t->weighted && real_weights(destweights) != NULL) {
            destweights[i] = t->destweights[i];
        }
    }
    return MPI_SUCCESS;
}
