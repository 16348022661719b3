/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * OpenSHMEM teams and team collectives. A team is an MPI communicator (with
 * the map back to world PEs); the collectives are Weft's MPI collectives on
 * it, so they use the same tuned algorithms as MPI programs. Results land in
 * each PE's own dest, so no remote writes are needed. */
#include "shmem/shmem_internal.h"

#include <stdlib.h>
#include <string.h>

int weft_shmem_team_fill(struct weft_shmem_team *t, MPI_Comm comm);

static struct weft_shmem_team *team_of(const char *call, shmem_team_t team)
{
    weft_shmem_check_init(call);
    if (team == SHMEM_TEAM_INVALID) {
        weft_shmem_fail(call, "team is SHMEM_TEAM_INVALID");
    }
    return team;
}

int shmem_team_my_pe(shmem_team_t team)
{
    return team == SHMEM_TEAM_INVALID ? -1 : team_of("shmem_team_my_pe", team)->my_pe;
}

int shmem_team_n_pes(shmem_team_t team)
{
    return team == SHMEM_TEAM_INVALID ? -1 : team_of("shmem_team_n_pes", team)->n_pes;
}

/* The configuration given at the team's creation, for the fields in
 * config_mask (the predefined teams were made with none: 0 contexts). Weft
 * needs no reservation for contexts, so any number can be created anyway. */
int shmem_team_get_config(shmem_team_t team, long config_mask, shmem_team_config_t *config)
{
    weft_shmem_check_init("shmem_team_get_config");
    if (team == SHMEM_TEAM_INVALID || config == NULL) {
        return -1;
    }
    if (config_mask & SHMEM_TEAM_NUM_CONTEXTS) {
        config->num_contexts = team->config_num_contexts;
    }
    return 0;
}

int shmem_team_translate_pe(shmem_team_t src_team, int src_pe, shmem_team_t dest_team)
{
    weft_shmem_check_init("shmem_team_translate_pe");
    if (src_team == SHMEM_TEAM_INVALID || dest_team == SHMEM_TEAM_INVALID || src_pe < 0 ||
        src_pe >= src_team->n_pes) {
        return -1;
    }
    int world = src_team->world_pe[src_pe];
    for (int i = 0; i < dest_team->n_pes; i++) {
        if (dest_team->world_pe[i] == world) {
            return i;
        }
    }
    return -1;
}

/* Collective over parent: color 0 joins the new team (key = its index in it). */
static int team_split(const char *call, struct weft_shmem_team *parent, int color, int key,
                      const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    MPI_Comm comm;
    PMPI_Comm_split(parent->comm, color, key, &comm);
    *new_team = SHMEM_TEAM_INVALID;
    if (comm == MPI_COMM_NULL) {
        return 0;
    }
    struct weft_shmem_team *t = calloc(1, sizeof *t);
    if (!t || weft_shmem_team_fill(t, comm)) {
        weft_shmem_fail(call, "out of memory");
    }
    if (config != NULL && (config_mask & SHMEM_TEAM_NUM_CONTEXTS)) {
        t->config_num_contexts = config->num_contexts;
    }
    *new_team = t;
    return 0;
}

int shmem_team_split_strided(shmem_team_t parent_team, int start, int stride, int size,
                             const shmem_team_config_t *config, long config_mask, shmem_team_t *new_team)
{
    struct weft_shmem_team *p = team_of("shmem_team_split_strided", parent_team);
    long last = (long)start + (long)stride * (size - 1);
    if (size < 1 || start < 0 || start >= p->n_pes || last < 0 || last >= p->n_pes ||
        (stride == 0 && size != 1)) {
        /* Every PE sees the same arguments, so every PE returns the error: no hang. */
        *new_team = SHMEM_TEAM_INVALID;
        return -1;
    }
    int idx = -1, off = p->my_pe - start;
    if (stride == 0) {
        idx = off == 0 ? 0 : -1;
    } else if (off % stride == 0 && off / stride >= 0 && off / stride < size) {
        idx = off / stride;
    }
    return team_split("shmem_team_split_strided", p, idx >= 0 ? 0 : MPI_UNDEFINED, idx, config,
                      config_mask, new_team);
}

int shmem_team_split_2d(shmem_team_t parent_team, int xrange, const shmem_team_config_t *xaxis_config,
                        long xaxis_mask, shmem_team_t *xaxis_team, const shmem_team_config_t *yaxis_config,
                        long yaxis_mask, shmem_team_t *yaxis_team)
{
    struct weft_shmem_team *p = team_of("shmem_team_split_2d", parent_team);
    if (xrange < 1) {
        *xaxis_team = *yaxis_team = SHMEM_TEAM_INVALID;
        return -1;
    }
    if (xrange > p->n_pes) {
        xrange = p->n_pes;
    }
    int x = p->my_pe % xrange, y = p->my_pe / xrange;
    team_split("shmem_team_split_2d", p, y, x, xaxis_config, xaxis_mask, xaxis_team);
    team_split("shmem_team_split_2d", p, x, y, yaxis_config, yaxis_mask, yaxis_team);
    return 0;
}

void shmem_team_destroy(shmem_team_t team)
{
    weft_shmem_check_init("shmem_team_destroy");
    if (team == SHMEM_TEAM_INVALID || team == SHMEM_TEAM_WORLD || team == SHMEM_TEAM_SHARED) {
        return; /* the predefined teams live until shmem_finalize */
    }
    PMPI_Comm_free(&team->comm);
    free(team->world_pe);
    free(team);
}

int shmem_team_sync(shmem_team_t team)
{
    struct weft_shmem_team *t = team_of("shmem_team_sync", team);
    return PMPI_Barrier(t->comm) == MPI_SUCCESS ? 0 : -1;
}

/* --- collectives, byte-wise -------------------------------------------------------- */
static int ok(int rc)
{
    return rc == MPI_SUCCESS ? 0 : -1;
}

static int count_check(const char *call, size_t bytes)
{
    if (bytes > (size_t)0x7fffffff) {
        weft_shmem_fail(call, "%zu bytes per PE is more than Weft's collectives take in one call", bytes);
    }
    return (int)bytes;
}

static int bcast_bytes(const char *call, shmem_team_t team, void *dest, const void *source, size_t bytes,
                       int root)
{
    struct weft_shmem_team *t = team_of(call, team);
    if (root < 0 || root >= t->n_pes) {
        weft_shmem_fail(call, "PE_root %d out of range (0..%d)", root, t->n_pes - 1);
    }
    if (t->my_pe == root && dest != source) {
        memmove(dest, source, bytes);
    }
    return ok(PMPI_Bcast(dest, count_check(call, bytes), MPI_BYTE, root, t->comm));
}

static int fcollect_bytes(const char *call, shmem_team_t team, void *dest, const void *source, size_t bytes)
{
    struct weft_shmem_team *t = team_of(call, team);
    int n = count_check(call, bytes);
    return ok(PMPI_Allgather(source, n, MPI_BYTE, dest, n, MPI_BYTE, t->comm));
}

static int collect_bytes(const char *call, shmem_team_t team, void *dest, const void *source, size_t bytes)
{
    struct weft_shmem_team *t = team_of(call, team);
    int n = count_check(call, bytes);
    int *counts = malloc(2 * (size_t)t->n_pes * sizeof(int));
    if (!counts) {
        weft_shmem_fail(call, "out of memory");
    }
    int *displs = counts + t->n_pes;
    PMPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, t->comm);
    long total = 0;
    for (int i = 0; i < t->n_pes; i++) {
        displs[i] = (int)total;
        total += counts[i];
    }
    if (total > 0x7fffffffL) {
        weft_shmem_fail(call, "%ld bytes in all is more than Weft's collectives take in one call", total);
    }
    int rc = PMPI_Allgatherv(source, n, MPI_BYTE, dest, counts, displs, MPI_BYTE, t->comm);
    free(counts);
    return ok(rc);
}

static int alltoall_bytes(const char *call, shmem_team_t team, void *dest, const void *source, size_t bytes)
{
    struct weft_shmem_team *t = team_of(call, team);
    int n = count_check(call, bytes);
    return ok(PMPI_Alltoall(source, n, MPI_BYTE, dest, n, MPI_BYTE, t->comm));
}

/* Strided: element j for PE k is source[(k * nelems + j) * sst]; packed, exchanged, unpacked. */
static int alltoalls_bytes(const char *call, shmem_team_t team, void *dest, const void *source, ptrdiff_t dst,
                           ptrdiff_t sst, size_t nelems, size_t esize)
{
    struct weft_shmem_team *t = team_of(call, team);
    if (dst < 1 || sst < 1) {
        weft_shmem_fail(call, "strides must be at least 1 (dst %td, sst %td)", dst, sst);
    }
    size_t total = nelems * (size_t)t->n_pes;
    char *in = calloc(total + 1, esize), *out = calloc(total + 1, esize);
    if (!in || !out) {
        weft_shmem_fail(call, "out of memory");
    }
    for (size_t i = 0; i < total; i++) {
        memcpy(in + i * esize, (const char *)source + (ptrdiff_t)i * sst * (ptrdiff_t)esize, esize);
    }
    int n = count_check(call, nelems * esize);
    int rc = PMPI_Alltoall(in, n, MPI_BYTE, out, n, MPI_BYTE, t->comm);
    for (size_t i = 0; i < total; i++) {
        memcpy((char *)dest + (ptrdiff_t)i * dst * (ptrdiff_t)esize, out + i * esize, esize);
    }
    free(in);
    free(out);
    return ok(rc);
}

#define DEF_COLL(N, T)                                                                             \
    int shmem_##N##_broadcast(shmem_team_t team, T *dest, const T *source, size_t nelems,         \
                              int PE_root)                                                        \
    {                                                                                             \
        return bcast_bytes("shmem_" #N "_broadcast", team, dest, source, nelems * sizeof(T),      \
                           PE_root);                                                              \
    }                                                                                             \
    int shmem_##N##_collect(shmem_team_t team, T *dest, const T *source, size_t nelems)           \
    {                                                                                             \
        return collect_bytes("shmem_" #N "_collect", team, dest, source, nelems * sizeof(T));     \
    }                                                                                             \
    int shmem_##N##_fcollect(shmem_team_t team, T *dest, const T *source, size_t nelems)          \
    {                                                                                             \
        return fcollect_bytes("shmem_" #N "_fcollect", team, dest, source, nelems * sizeof(T));   \
    }                                                                                             \
    int shmem_##N##_alltoall(shmem_team_t team, T *dest, const T *source, size_t nelems)          \
    {                                                                                             \
        return alltoall_bytes("shmem_" #N "_alltoall", team, dest, source, nelems * sizeof(T));   \
    }                                                                                             \
    int shmem_##N##_alltoalls(shmem_team_t team, T *dest, const T *source, ptrdiff_t dst,         \
                              ptrdiff_t sst, size_t nelems)                                       \
    {                                                                                             \
        return alltoalls_bytes("shmem_" #N "_alltoalls", team, dest, source, dst, sst, nelems,    \
                               sizeof(T));                                                        \
    }
WEFT_SHMEM_RMA_TYPES(DEF_COLL)

int shmem_broadcastmem(shmem_team_t team, void *dest, const void *source, size_t nelems, int PE_root)
{
    return bcast_bytes("shmem_broadcastmem", team, dest, source, nelems, PE_root);
}
int shmem_collectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return collect_bytes("shmem_collectmem", team, dest, source, nelems);
}
int shmem_fcollectmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return fcollect_bytes("shmem_fcollectmem", team, dest, source, nelems);
}
int shmem_alltoallmem(shmem_team_t team, void *dest, const void *source, size_t nelems)
{
    return alltoall_bytes("shmem_alltoallmem", team, dest, source, nelems);
}
int shmem_alltoallsmem(shmem_team_t team, void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,
                       size_t nelems)
{
    return alltoalls_bytes("shmem_alltoallsmem", team, dest, source, dst, sst, nelems, 1);
}

/* --- reductions: MPI_Allreduce with the matching MPI type and operation -------------- */
_Static_assert(sizeof(size_t) == 8 && sizeof(ptrdiff_t) == 8, "size/ptrdiff map to 64-bit MPI types");
#define MPITYPE_float      MPI_FLOAT
#define MPITYPE_double     MPI_DOUBLE
#define MPITYPE_longdouble MPI_LONG_DOUBLE
#define MPITYPE_char       ((char)-1 < 0 ? MPI_SIGNED_CHAR : MPI_UNSIGNED_CHAR)
#define MPITYPE_schar      MPI_SIGNED_CHAR
#define MPITYPE_short      MPI_SHORT
#define MPITYPE_int        MPI_INT
#define MPITYPE_long       MPI_LONG
#define MPITYPE_longlong   MPI_LONG_LONG
#define MPITYPE_uchar      MPI_UNSIGNED_CHAR
#define MPITYPE_ushort     MPI_UNSIGNED_SHORT
#define MPITYPE_uint       MPI_UNSIGNED
#define MPITYPE_ulong      MPI_UNSIGNED_LONG
#define MPITYPE_ulonglong  MPI_UNSIGNED_LONG_LONG
#define MPITYPE_int8       MPI_INT8_T
#define MPITYPE_int16      MPI_INT16_T
#define MPITYPE_int32      MPI_INT32_T
#define MPITYPE_int64      MPI_INT64_T
#define MPITYPE_uint8      MPI_UINT8_T
#define MPITYPE_uint16     MPI_UINT16_T
#define MPITYPE_uint32     MPI_UINT32_T
#define MPITYPE_uint64     MPI_UINT64_T
#define MPITYPE_size       MPI_UINT64_T
#define MPITYPE_ptrdiff    MPI_INT64_T
#define MPITYPE_complexd   MPI_C_DOUBLE_COMPLEX
#define MPITYPE_complexf   MPI_C_FLOAT_COMPLEX
#define MPIOP_and  MPI_BAND
#define MPIOP_or   MPI_BOR
#define MPIOP_xor  MPI_BXOR
#define MPIOP_max  MPI_MAX
#define MPIOP_min  MPI_MIN
#define MPIOP_sum  MPI_SUM
#define MPIOP_prod MPI_PROD

static int reduce(const char *call, shmem_team_t team, void *dest, const void *source, size_t nreduce,
                  MPI_Datatype type, MPI_Op op)
{
    struct weft_shmem_team *t = team_of(call, team);
    if (nreduce > 0x7fffffff) {
        weft_shmem_fail(call, "nreduce %zu is more than Weft's collectives take in one call", nreduce);
    }
    const void *in = dest == source ? MPI_IN_PLACE : source;
    return ok(PMPI_Allreduce(in, dest, (int)nreduce, type, op, t->comm));
}

#define DEF_RED_OP(OP, N, T)                                                                       \
    int shmem_##N##_##OP##_reduce(shmem_team_t team, T *dest, const T *source, size_t nreduce)    \
    {                                                                                             \
        return reduce("shmem_" #N "_" #OP "_reduce", team, dest, source, nreduce, MPITYPE_##N,    \
                      MPIOP_##OP);                                                                \
    }
#define DEF_RED_BIT(N, T)   DEF_RED_OP(and, N, T) DEF_RED_OP(or, N, T) DEF_RED_OP(xor, N, T)
#define DEF_RED_CMP(N, T)   DEF_RED_OP(max, N, T) DEF_RED_OP(min, N, T)
#define DEF_RED_ARITH(N, T) DEF_RED_OP(sum, N, T) DEF_RED_OP(prod, N, T)
WEFT_SHMEM_RED_BIT_TYPES(DEF_RED_BIT)
WEFT_SHMEM_RED_CMP_TYPES(DEF_RED_CMP)
WEFT_SHMEM_RED_ARITH_TYPES(DEF_RED_ARITH)

/* --- deprecated active-set collectives ------------------------------------------------
 * An active set (PE_start, logPE_stride, PE_size) becomes a team on first use:
 * a communicator made by MPI_Comm_create_group, which only the set's members
 * call, as the standard requires of these calls. Teams are cached per set
 * until shmem_finalize. pSync/pWrk are not needed and never written. */
struct active_set {
    int start, logstride, size;
    struct weft_shmem_team team;
    struct active_set *next;
};
static struct active_set *active_sets;

static struct weft_shmem_team *active_team(const char *call, int start, int logstride, int size)
{
    weft_shmem_check_init(call);
    int n = weft_shmem.n_pes, me = weft_shmem.my_pe;
    if (size < 1 || start < 0 || logstride < 0 || logstride > 30 ||
        (long)start + ((long)(size - 1) << logstride) >= n) {
        weft_shmem_fail(call, "active set (PE_start %d, logPE_stride %d, PE_size %d) does not fit in %d PEs",
                        start, logstride, size, n);
    }
    long off = me - start, stride = 1L << logstride;
    if (off < 0 || off % stride || off / stride >= size) {
        weft_shmem_fail(call, "PE %d is not in the active set (PE_start %d, logPE_stride %d, PE_size %d)", me,
                        start, logstride, size);
    }
    for (struct active_set *a = active_sets; a; a = a->next) {
        if (a->start == start && a->logstride == logstride && a->size == size) {
            return &a->team;
        }
    }
    struct active_set *a = calloc(1, sizeof *a);
    int *ranks = malloc((size_t)size * sizeof(int));
    if (!a || !ranks) {
        weft_shmem_fail(call, "out of memory");
    }
    for (int i = 0; i < size; i++) {
        ranks[i] = start + (int)(i * stride);
    }
    MPI_Group world_group, group;
    MPI_Comm comm;
    PMPI_Comm_group(SHMEM_TEAM_WORLD->comm, &world_group);
    PMPI_Group_incl(world_group, size, ranks, &group);
    /* distinct tags keep creations of different sets apart */
    int tag = (int)(((unsigned)start * 2654435761u ^ (unsigned)logstride * 40503u ^ (unsigned)size) & 0x7fff);
    if (PMPI_Comm_create_group(SHMEM_TEAM_WORLD->comm, group, tag, &comm) != MPI_SUCCESS ||
        weft_shmem_team_fill(&a->team, comm)) {
        weft_shmem_fail(call, "cannot make a team for the active set");
    }
    PMPI_Group_free(&group);
    PMPI_Group_free(&world_group);
    free(ranks);
    a->start = start, a->logstride = logstride, a->size = size;
    a->next = active_sets;
    active_sets = a;
    return &a->team;
}

void weft_shmem_active_sets_free(void)
{
    while (active_sets) {
        struct active_set *a = active_sets;
        active_sets = a->next;
        PMPI_Comm_free(&a->team.comm);
        free(a->team.world_pe);
        free(a);
    }
}

void shmem_barrier(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    struct weft_shmem_team *t = active_team("shmem_barrier", PE_start, logPE_stride, PE_size);
    shmem_quiet();
    PMPI_Barrier(t->comm);
}

void shmem_sync(int PE_start, int logPE_stride, int PE_size, long *pSync)
{
    (void)pSync;
    PMPI_Barrier(active_team("shmem_sync", PE_start, logPE_stride, PE_size)->comm);
}

/* Unlike the team broadcast, the root's dest is left alone. */
static void active_bcast(const char *call, void *dest, const void *source, size_t bytes, int root, int start,
                         int logstride, int size)
{
    struct weft_shmem_team *t = active_team(call, start, logstride, size);
    if (root < 0 || root >= t->n_pes) {
        weft_shmem_fail(call, "PE_root %d out of range of the active set (0..%d)", root, t->n_pes - 1);
    }
    void *buf = t->my_pe == root ? (void *)source : dest;
    PMPI_Bcast(buf, count_check(call, bytes), MPI_BYTE, root, t->comm);
}

#define DEF_ACTIVE(B)                                                                              \
    void shmem_broadcast##B(void *dest, const void *source, size_t nelems, int PE_root, int PE_start, \
                            int logPE_stride, int PE_size, long *pSync)                           \
    {                                                                                             \
        (void)pSync;                                                                              \
        active_bcast("shmem_broadcast" #B, dest, source, nelems * (B / 8), PE_root, PE_start,     \
                     logPE_stride, PE_size);                                                      \
    }                                                                                             \
    void shmem_collect##B(void *dest, const void *source, size_t nelems, int PE_start,            \
                          int logPE_stride, int PE_size, long *pSync)                             \
    {                                                                                             \
        (void)pSync;                                                                              \
        collect_bytes("shmem_collect" #B, active_team("shmem_collect" #B, PE_start, logPE_stride, PE_size), \
                      dest, source, nelems * (B / 8));                                            \
    }                                                                                             \
    void shmem_fcollect##B(void *dest, const void *source, size_t nelems, int PE_start,           \
                           int logPE_stride, int PE_size, long *pSync)                            \
    {                                                                                             \
        (void)pSync;                                                                              \
        fcollect_bytes("shmem_fcollect" #B,                                                       \
                       active_team("shmem_fcollect" #B, PE_start, logPE_stride, PE_size), dest,   \
                       source, nelems * (B / 8));                                                 \
    }                                                                                             \
    void shmem_alltoall##B(void *dest, const void *source, size_t nelems, int PE_start,           \
                           int logPE_stride, int PE_size, long *pSync)                            \
    {                                                                                             \
        (void)pSync;                                                                              \
        alltoall_bytes("shmem_alltoall" #B,                                                       \
                       active_team("shmem_alltoall" #B, PE_start, logPE_stride, PE_size), dest,   \
                       source, nelems * (B / 8));                                                 \
    }                                                                                             \
    void shmem_alltoalls##B(void *dest, const void *source, ptrdiff_t dst, ptrdiff_t sst,         \
                            size_t nelems, int PE_start, int logPE_stride, int PE_size,           \
                            long *pSync)                                                          \
    {                                                                                             \
        (void)pSync;                                                                              \
        alltoalls_bytes("shmem_alltoalls" #B,                                                     \
                        active_team("shmem_alltoalls" #B, PE_start, logPE_stride, PE_size), dest, \
                        source, dst, sst, nelems, B / 8);                                         \
    }
DEF_ACTIVE(32)
DEF_ACTIVE(64)

#define DEF_TOALL_OP(OP, N, T)                                                                     \
    void shmem_##N##_##OP##_to_all(T *dest, const T *source, int nreduce, int PE_start,           \
                                   int logPE_stride, int PE_size, T *pWrk, long *pSync)           \
    {                                                                                             \
        (void)pWrk, (void)pSync;                                                                  \
        const char *call = "shmem_" #N "_" #OP "_to_all";                                         \
        if (nreduce < 0) {                                                                        \
            weft_shmem_fail(call, "nreduce %d is negative", nreduce);                             \
        }                                                                                         \
        reduce(call, active_team(call, PE_start, logPE_stride, PE_size), dest, source,            \
               (size_t)nreduce, MPITYPE_##N, MPIOP_##OP);                                         \
    }
#define DEF_TOALL_BIT(N, T)   DEF_TOALL_OP(and, N, T) DEF_TOALL_OP(or, N, T) DEF_TOALL_OP(xor, N, T)
#define DEF_TOALL_CMP(N, T)   DEF_TOALL_OP(max, N, T) DEF_TOALL_OP(min, N, T)
#define DEF_TOALL_ARITH(N, T) DEF_TOALL_OP(sum, N, T) DEF_TOALL_OP(prod, N, T)
WEFT_SHMEM_TOALL_BIT_TYPES(DEF_TOALL_BIT)
WEFT_SHMEM_TOALL_CMP_TYPES(DEF_TOALL_CMP)
WEFT_SHMEM_TOALL_ARITH_TYPES(DEF_TOALL_ARITH)
