/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * What is per-collective in a collective call: blocking, non-blocking
 * (MPI_I*), persistent (*_init), neighborhood and large-count forms all
 * come here through weft_coll_call_<coll>(), which takes the large-count
 * argument shapes and a mode. The impls of the entry points, which widen
 * int count/displacement arrays and pick the mode, are generated from
 * src/api/kinds/coll.txt (directive coll, see src/api/gen_api.py) into
 * coll_gen.c, with the prototypes of these functions in coll_gen.h.
 *
 * Each weft_coll_call_<coll>() checks the arguments (roots, MPI_IN_PLACE
 * rules, datatypes significant at this rank, op/type compatibility), fills
 * a weft_coll_args_t and hands it to weft_coll_run() (coll_run.c), which
 * selects the algorithm and runs it (blocking: the row's direct run or its
 * schedule), starts its schedule (non-blocking) or keeps it (persistent).
 *
 * What is detected of mismatched arguments across ranks: nothing is
 * exchanged to compare them, but no transfer can overrun a buffer: every
 * receive is posted with the receiver's own count, so a longer message is
 * reported as MPI_ERR_TRUNCATE by point-to-point (the collective returns
 * it) and a shorter one leaves the rest of the buffer untouched. Different
 * roots or different op/algorithm choices can deadlock, as in every MPI.

 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_impl.h"
#include "coll_gen.h"
#include "coll/coll_internal.h"
#include "core/errors.h"
#include "core/pt2pt.h"
#include "core/topo.h"

/* ---- for the generated impls (coll_gen.c) ------------------------------------ */

static int is_root(int root, const weft_comm_t *comm)
{
    return comm->is_inter ? root == MPI_ROOT : root == comm->rank;
}

int weft_coll_root_peers(int root, const weft_comm_t *comm)
{
    return is_root(root, comm) ? comm->peer_size : 0;
}

int weft_coll_topo_degree(weft_comm_t *comm, int out)
{
    int        in, o;
    const int *s, *d;
    if (weft_topo_neighbors(comm, &in, &s, &o, &d) != MPI_SUCCESS) {
        return 0;
    }
    return out ? o : in;
}

int weft_coll_widen_counts(const int *in, int n, MPI_Count *stack, MPI_Count **out)
{
    *out = NULL;
    if (in == NULL || n <= 0) {
        return MPI_SUCCESS;
    }
    *out = n <= WEFT_COLL_WIDEN_STACK ? stack : malloc((size_t)n * sizeof(MPI_Count));
    if (*out == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    for (int i = 0; i < n; i++) {
        (*out)[i] = in[i];
    }
    return MPI_SUCCESS;
}

int weft_coll_widen_displs(const int *in, int n, MPI_Aint *stack, MPI_Aint **out)
{
    *out = NULL;
    if (in == NULL || n <= 0) {
        return MPI_SUCCESS;
    }
    *out = n <= WEFT_COLL_WIDEN_STACK ? stack : malloc((size_t)n * sizeof(MPI_Aint));
    if (*out == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    for (int i = 0; i < n; i++) {
        (*out)[i] = in[i];
    }
    return MPI_SUCCESS;
}

void weft_coll_widen_free(void *out, const void *stack)
{
    if (out != stack) {
        free(out);
    }
}

/* ---- argument checks ------------------------------------------------------ */

static int check_root(int root, const weft_comm_t *comm)
{
    if (comm->is_inter) {
        if (root == MPI_ROOT || root == MPI_PROC_NULL || (root >= 0 && root < comm->peer_size)) {
            return MPI_SUCCESS;
        }
    } else if (root >= 0 && root < comm->size) {
        return MPI_SUCCESS;
    }
    return weft_error(MPI_ERR_ROOT, "argument root: %d is not a valid root (%s size %d)", root,
                      comm->is_inter ? "remote group" : "communicator", comm->peer_size);
}

static int check_type(const weft_datatype_t *dt, const char *arg)
{
    if (dt == NULL) {
        return weft_error(MPI_ERR_TYPE, "argument %s: MPI_DATATYPE_NULL where a datatype is "
                                        "significant", arg);
    }
    if (!weft_datatype_is_committed(dt)) {
        return weft_error(MPI_ERR_TYPE, "argument %s: datatype is not committed", arg);
    }
    return MPI_SUCCESS;
}

static int check_types_array(const MPI_Datatype *h, int n, const char *arg,
                             weft_datatype_t ***out, const MPI_Count *counts)
{
    *out = NULL;
    if (n <= 0) {
        return MPI_SUCCESS;
    }
    if (h == NULL) {
        return weft_error(MPI_ERR_ARG, "argument %s: NULL array", arg);
    }
    weft_datatype_t **t = malloc((size_t)n * sizeof(*t));
    if (t == NULL) {
        return weft_error(MPI_ERR_NO_MEM, "no memory");
    }
    for (int i = 0; i < n; i++) {
        t[i] = weft_datatype_from_handle(h[i]);
        if (t[i] == NULL && counts && counts[i] == 0) {
            t[i] = weft_coll_byte ? weft_coll_byte : weft_datatype_from_handle(MPI_BYTE);
        }
        int rc = check_type(t[i], arg);
        if (rc != MPI_SUCCESS) {
            free(t);
            return rc;
        }
    }
    *out = t;
    return MPI_SUCCESS;
}

/* Counts that are not significant everywhere (MPI_IN_PLACE, root-only)
 * are passed through unchecked by the entry points and checked here where
 * they matter. */
static int check_count(MPI_Count count, const char *arg)
{
    if (count < 0) {
        return weft_error(MPI_ERR_COUNT, "argument %s: negative value %lld", arg,
                          (long long)count);
    }
    return MPI_SUCCESS;
}

/* MPI_IN_PLACE in a position where the standard never allows it (every
 * receive buffer but scatter's at the root, bcast's buffer, neighborhood
 * buffers). */
static int no_inplace(const void *buf, const char *arg)
{
    if (buf == MPI_IN_PLACE) {
        return weft_error(MPI_ERR_BUFFER, "argument %s: MPI_IN_PLACE is not allowed here", arg);
    }
    return MPI_SUCCESS;
}

static int no_inplace_inter(const void *buf, const weft_comm_t *comm, const char *arg)
{
    if (comm->is_inter && buf == MPI_IN_PLACE) {
        return weft_error(MPI_ERR_BUFFER, "argument %s: MPI_IN_PLACE is not allowed on an "
                                          "intercommunicator", arg);
    }
    return MPI_SUCCESS;
}

static int check_alias(const void *sbuf, const void *rbuf, MPI_Count n)
{
    if (n > 0 && sbuf == rbuf && sbuf != MPI_IN_PLACE && sbuf != NULL) {
        return weft_error(MPI_ERR_BUFFER, "sendbuf and recvbuf are the same buffer (use "
                                          "MPI_IN_PLACE)");
    }
    return MPI_SUCCESS;
}

static int check_reduction(const void *sbuf, void *rbuf, MPI_Count count, weft_datatype_t *dt,
                           weft_op_t *op, weft_comm_t *comm)
{
    int rc = check_type(dt, "datatype");
    WEFT_TRY(rc, weft_op_check(op, dt));
    WEFT_TRY(rc, no_inplace_inter(sbuf, comm, "sendbuf"));
    WEFT_TRY(rc, no_inplace(rbuf, "recvbuf"));
    WEFT_TRY(rc, check_alias(sbuf, rbuf, count));
    if (rc == MPI_SUCCESS && (op->id == WEFT_OP_REPLACE || op->id == WEFT_OP_NO_OP)) {
        rc = weft_error(MPI_ERR_OP, "argument op: %s is only valid in accumulate operations",
                        op->name);
    }
    return rc;
}

/* Zeroed by copying a static zero block: gcc compiles this to vector
 * moves, and the memset of the ~170-byte block to a rep stos whose start-up
 * was 10% of np 2 gatherv's cycles at its root. */
static void args_init(weft_coll_args_t *a, int coll, weft_comm_t *comm)
{
    static const weft_coll_args_t zero;

    *a = zero;
    a->coll = coll;
    a->comm = comm;
}

/* ---- the collectives ------------------------------------------------------ */

int weft_coll_call_barrier(weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    args_init(&a, WEFT_COLL_BARRIER, comm);
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_bcast(void *buffer, MPI_Count count, weft_datatype_t *datatype, int root,
                    weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_root(root, comm);
    if (!(comm->is_inter && root == MPI_PROC_NULL)) {
        WEFT_TRY(rc, check_count(count, "count"));
        WEFT_TRY(rc, check_type(datatype, "datatype"));
        WEFT_TRY(rc, no_inplace(buffer, "buffer"));
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_BCAST, comm);
    a.rbuf = buffer, a.count = count, a.dt = datatype, a.root = root;
    a.sdt = a.rdt = datatype;
    return weft_coll_run(&a, mode, request);
}

/* Argument checks shared by gather(v) and scatter(v). The data side is what
 * every non-root rank provides (gather: sendbuf/sendtype, scatter:
 * recvbuf/recvtype); root_type is the root's other side (gather: recvtype,
 * scatter: sendtype).
 * count is the data side's count, root_count the root's (gather: recvcount,
 * scatter: sendcount), root_buf the root's buffer (gather: recvbuf, scatter:
 * sendbuf; never MPI_IN_PLACE). v-forms pass v = 1 and the root's counts
 * and displs (root_count unused). Only what is significant at this rank is
 * checked.
 * *me_root: this rank is the root; *data_used: its data side is significant
 * (not the root in place, not in the root's group on an intercommunicator). */
enum { ROOTED_GATHER, ROOTED_SCATTER };

static int check_rooted(int kind, int root, const weft_comm_t *comm, const void *buf,
                        MPI_Count count, weft_datatype_t *type, const void *root_buf,
                        MPI_Count root_count, weft_datatype_t *root_type, int v,
                        const void *counts, const void *displs, int *me_root, int *data_used)
{
    const int   g        = kind == ROOTED_GATHER;
    const char *buf_name = g ? "sendbuf" : "recvbuf";
    int         rc       = check_root(root, comm);

    *me_root   = is_root(root, comm);
    *data_used = comm->is_inter ? (root != MPI_ROOT && root != MPI_PROC_NULL)
                                : !(*me_root && buf == MPI_IN_PLACE);
    if (*data_used) {
        WEFT_TRY(rc, check_count(count, g ? "sendcount" : "recvcount"));
        WEFT_TRY(rc, check_type(type, g ? "sendtype" : "recvtype"));
    }
    if (*me_root) {
        WEFT_TRY(rc, no_inplace(root_buf, g ? "recvbuf" : "sendbuf"));
        if (!v) {
            WEFT_TRY(rc, check_count(root_count, g ? "recvcount" : "sendcount"));
        }
        WEFT_TRY(rc, check_type(root_type, g ? "recvtype" : "sendtype"));
        if (rc == MPI_SUCCESS && v && (counts == NULL || displs == NULL)) {
            rc = weft_error(MPI_ERR_ARG, g ? "NULL recvcounts or displs at the root"
                                           : "NULL sendcounts or displs at the root");
        }
    }
    WEFT_TRY(rc, no_inplace_inter(buf, comm, buf_name));
    if (rc == MPI_SUCCESS && !*me_root && buf == MPI_IN_PLACE) {
        rc = weft_error(MPI_ERR_BUFFER, "argument %s: MPI_IN_PLACE is only valid at the root",
                        buf_name);
    }
    return rc;
}

/* Bytes of count elements of type, or -1 when that is not a valid block
 * (bad count or type). */
static MPI_Count block_bytes(MPI_Count count, const weft_datatype_t *type)
{
    if (count < 0 || type == NULL || !weft_datatype_is_committed(type)) {
        return -1;
    }
    return count * type->size;
}

/* A rank whose own arguments fail the checks of a gather(v)/scatter(v) (with
 * a valid root) still takes its part in the message pattern, with zeroed
 * scratch buffers of the sizes the others expect as far as it can tell
 * (block: this rank's block in bytes, or the root's per-rank bytes in
 * root_bytes for the v-forms; unknown sizes count as 0). So the other ranks
 * are not left waiting for ever and the communicator's collective tag
 * sequence stays aligned; they complete without learning of the error
 * (scatter: zero bytes or zeros, gather: the root discards what it gets).
 * Not possible for persistent requests (the failing rank has none to
 * start) nor where an unknown size could change the algorithm choice
 * (non-v forms with no valid block size). Returns rc, the original error,
 * with its reason kept. */
static int rooted_take_part(int coll, int root, weft_comm_t *comm, MPI_Count block,
                            const MPI_Count *root_bytes, int mode, int rc)
{
    weft_coll_args_t a;
    const int        g       = coll == WEFT_COLL_GATHER || coll == WEFT_COLL_GATHERV;
    const int        v       = coll == WEFT_COLL_GATHERV || coll == WEFT_COLL_SCATTERV;
    const int        me_root = is_root(root, comm);
    int              n       = comm->peer_size;
    MPI_Count       *counts  = NULL, total = 0;
    MPI_Aint        *displs  = NULL;
    char            *scratch = NULL, reason[512];

    if (mode == WEFT_COLL_MODE_PERSISTENT || (comm->is_inter && root == MPI_PROC_NULL) ||
        (comm->is_inter ? root != MPI_ROOT && (root < 0 || root >= comm->peer_size)
                        : root < 0 || root >= comm->size) ||
        (!v && block < 0 && !me_root)) {
        return rc;
    }
    snprintf(reason, sizeof(reason), "%s", weft_err_reason());
    block = block < 0 ? 0 : block;
    if (me_root && v) {
        counts = calloc((size_t)n, sizeof(*counts));
        displs = calloc((size_t)n, sizeof(*displs));
        if (counts == NULL || displs == NULL) {
            goto out;
        }
        for (int i = 0; i < n; i++) {
            counts[i] = root_bytes != NULL && root_bytes[i] > 0 ? root_bytes[i] : 0;
            displs[i] = (MPI_Aint)total;
            total += counts[i];
        }
    } else {
        total = me_root ? block * n : block;
    }
    scratch = calloc(1, (size_t)total + 1);
    if (scratch == NULL) {
        goto out;
    }
    args_init(&a, coll, comm);
    a.root = root;
    a.sdt = a.rdt = weft_coll_byte ? weft_coll_byte : weft_datatype_from_handle(MPI_BYTE);
    a.scount = a.rcount = block;
    if (g) {
        a.sbuf = me_root && !comm->is_inter ? MPI_IN_PLACE : scratch;
        a.rbuf = scratch, a.rcounts = counts, a.rdispls = displs;
    } else {
        a.rbuf = me_root && !comm->is_inter ? MPI_IN_PLACE : scratch;
        a.sbuf = scratch, a.scounts = counts, a.sdispls = displs;
    }
    /* In the call's own mode: the others run a non-blocking call's
     * schedule, which a blocking stand-in (shared-memory forms) would not
     * meet. Waited for here, as the scratch buffers go with it. */
    if (mode == WEFT_COLL_MODE_NONBLOCKING) {
        MPI_Request req = MPI_REQUEST_NULL;
        if (weft_coll_run(&a, mode, &req) == MPI_SUCCESS && req != MPI_REQUEST_NULL) {
            (void)weft_wait_impl(&req, MPI_STATUS_IGNORE);
        }
    } else {
        (void)weft_coll_run(&a, WEFT_COLL_MODE_BLOCKING, NULL);
    }
out:
    free(scratch);
    free(counts);
    free(displs);
    return weft_error(rc, "%s", reason);
}

/* Per-rank byte counts of a v-form's root side, or NULL when unknown. */
static MPI_Count *root_v_bytes(const weft_comm_t *comm, const MPI_Count *counts,
                               const weft_datatype_t *type)
{
    MPI_Count *b;

    if (counts == NULL || block_bytes(0, type) < 0 ||
        (b = malloc(sizeof(*b) * (size_t)(comm->peer_size > 0 ? comm->peer_size : 1))) == NULL) {
        return NULL;
    }
    for (int i = 0; i < comm->peer_size; i++) {
        b[i] = block_bytes(counts[i], type);
    }
    return b;
}

int weft_coll_call_gather(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                     void *recvbuf, MPI_Count recvcount, weft_datatype_t *recvtype, int root,
                     weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              me_root, sends;
    int              rc = check_rooted(ROOTED_GATHER, root, comm, sendbuf, sendcount, sendtype,
                                       recvbuf, recvcount, recvtype, 0, NULL, NULL, &me_root,
                                       &sends);
    if (rc == MPI_SUCCESS && me_root && !comm->is_inter && sendbuf != MPI_IN_PLACE &&
        sendcount * sendtype->size != recvcount * recvtype->size) {
        rc = weft_error(MPI_ERR_TRUNCATE, "root's send and receive blocks differ in size "
                                          "(%lld vs %lld bytes)",
                        (long long)(sendcount * sendtype->size),
                        (long long)(recvcount * recvtype->size));
    }
    if (rc != MPI_SUCCESS) {
        MPI_Count b = me_root ? block_bytes(recvcount, recvtype) : -1;
        if (b < 0 && !(me_root && sendbuf == MPI_IN_PLACE)) {
            b = block_bytes(sendcount, sendtype);
        }
        return rooted_take_part(WEFT_COLL_GATHER, root, comm, b, NULL, mode, rc);
    }
    args_init(&a, WEFT_COLL_GATHER, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sends ? sendtype : recvtype;
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = me_root ? recvtype : a.sdt;
    a.root = root;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_gatherv(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                      void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                      weft_datatype_t *recvtype, int root, weft_comm_t *comm, int mode,
                      MPI_Request *request)
{
    weft_coll_args_t a;
    int              me_root, sends;
    int              rc = check_rooted(ROOTED_GATHER, root, comm, sendbuf, sendcount, sendtype,
                                       recvbuf, 0, recvtype, 1, recvcounts, displs, &me_root,
                                       &sends);
    if (rc != MPI_SUCCESS) {
        MPI_Count *rb = me_root ? root_v_bytes(comm, recvcounts, recvtype) : NULL;
        rc            = rooted_take_part(WEFT_COLL_GATHERV, root, comm,
                                         me_root ? -1 : block_bytes(sendcount, sendtype),
                                         rb, mode, rc);
        free(rb);
        return rc;
    }
    args_init(&a, WEFT_COLL_GATHERV, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sends ? sendtype : recvtype;
    a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = displs;
    a.rdt  = me_root ? recvtype : a.sdt;
    a.root = root;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_scatter(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                      void *recvbuf, MPI_Count recvcount, weft_datatype_t *recvtype, int root,
                      weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              me_root, recvs;
    int              rc = check_rooted(ROOTED_SCATTER, root, comm, recvbuf, recvcount, recvtype,
                                       sendbuf, sendcount, sendtype, 0, NULL, NULL, &me_root,
                                       &recvs);
    if (rc != MPI_SUCCESS) {
        MPI_Count b = me_root ? block_bytes(sendcount, sendtype) : -1;
        if (b < 0 && !(me_root && recvbuf == MPI_IN_PLACE)) {
            b = block_bytes(recvcount, recvtype);
        }
        return rooted_take_part(WEFT_COLL_SCATTER, root, comm, b, NULL, mode, rc);
    }
    args_init(&a, WEFT_COLL_SCATTER, comm);
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvs ? recvtype : sendtype;
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = me_root ? sendtype : a.rdt;
    a.root = root;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_scatterv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint displs[],
                       weft_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                       weft_datatype_t *recvtype, int root, weft_comm_t *comm, int mode,
                       MPI_Request *request)
{
    weft_coll_args_t a;
    int              me_root, recvs;
    int              rc = check_rooted(ROOTED_SCATTER, root, comm, recvbuf, recvcount, recvtype,
                                       sendbuf, 0, sendtype, 1, sendcounts, displs, &me_root,
                                       &recvs);
    if (rc != MPI_SUCCESS) {
        MPI_Count *rb = me_root ? root_v_bytes(comm, sendcounts, sendtype) : NULL;
        rc            = rooted_take_part(WEFT_COLL_SCATTERV, root, comm,
                                         me_root ? -1 : block_bytes(recvcount, recvtype),
                                         rb, mode, rc);
        free(rb);
        return rc;
    }
    args_init(&a, WEFT_COLL_SCATTERV, comm);
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvs ? recvtype : sendtype;
    a.sbuf = sendbuf, a.scounts = sendcounts, a.sdispls = displs;
    a.sdt  = me_root ? sendtype : a.rdt;
    a.root = root;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_allgather(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                        void *recvbuf, MPI_Count recvcount, weft_datatype_t *recvtype,
                        weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_type(recvtype, "recvtype");
    if (sendbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, check_count(sendcount, "sendcount"));
        WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    }
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    WEFT_TRY(rc, no_inplace_inter(sendbuf, comm, "sendbuf"));
    WEFT_TRY(rc, check_alias(sendbuf, recvbuf, recvcount));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_ALLGATHER, comm);
    a.sbuf   = sendbuf;
    a.scount = sendbuf == MPI_IN_PLACE ? recvcount : sendcount; /* ignored in place */
    a.sdt    = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_allgatherv(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                         void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                         weft_datatype_t *recvtype, weft_comm_t *comm, int mode,
                         MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_type(recvtype, "recvtype");
    if (sendbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, check_count(sendcount, "sendcount"));
        WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    }
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    WEFT_TRY(rc, no_inplace_inter(sendbuf, comm, "sendbuf"));
    if (rc == MPI_SUCCESS && (recvcounts == NULL || displs == NULL)) {
        rc = weft_error(MPI_ERR_ARG, "NULL recvcounts or displs");
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_ALLGATHERV, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = displs, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_alltoall(const void *sendbuf, MPI_Count sendcount, weft_datatype_t *sendtype,
                       void *recvbuf, MPI_Count recvcount, weft_datatype_t *recvtype,
                       weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_type(recvtype, "recvtype");
    if (sendbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, check_count(sendcount, "sendcount"));
        WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    }
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    WEFT_TRY(rc, no_inplace_inter(sendbuf, comm, "sendbuf"));
    WEFT_TRY(rc, check_alias(sendbuf, recvbuf, recvcount));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_ALLTOALL, comm);
    a.sbuf = sendbuf;
    a.scount = sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
    a.sdt    = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_alltoallv(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                        weft_datatype_t *sendtype, void *recvbuf, const MPI_Count recvcounts[],
                        const MPI_Aint rdispls[], weft_datatype_t *recvtype, weft_comm_t *comm,
                        int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_type(recvtype, "recvtype");
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (sendbuf != MPI_IN_PLACE) {
        WEFT_TRY(rc, check_type(sendtype, "sendtype"));
        if (rc == MPI_SUCCESS && (sendcounts == NULL || sdispls == NULL)) {
            rc = weft_error(MPI_ERR_ARG, "NULL sendcounts or sdispls");
        }
    }
    if (rc == MPI_SUCCESS && (recvcounts == NULL || rdispls == NULL)) {
        rc = weft_error(MPI_ERR_ARG, "NULL recvcounts or rdispls");
    }
    WEFT_TRY(rc, no_inplace_inter(sendbuf, comm, "sendbuf"));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_ALLTOALLV, comm);
    a.sbuf = sendbuf, a.scounts = sendcounts, a.sdispls = sdispls;
    a.sdt  = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
    a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = rdispls, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

static int alltoallw_common(int coll, const void *sendbuf, const MPI_Count sendcounts[],
                            const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                            void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                            const MPI_Datatype recvtypes[], weft_comm_t *comm, int nsend,
                            int nrecv, int mode, MPI_Request *request)
{
    weft_coll_args_t  a;
    weft_datatype_t **st = NULL, **rt = NULL;
    int               rc = MPI_SUCCESS;

    if (recvcounts == NULL && nrecv > 0) {
        rc = weft_error(MPI_ERR_ARG, "NULL recvcounts");
    }
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (coll == WEFT_COLL_NEIGHBOR_ALLTOALLW) {
        WEFT_TRY(rc, no_inplace(sendbuf, "sendbuf"));
    }
    WEFT_TRY(rc, check_types_array(recvtypes, nrecv, "recvtypes", &rt, recvcounts));
    if (sendbuf != MPI_IN_PLACE) {
        if (rc == MPI_SUCCESS && sendcounts == NULL && nsend > 0) {
            rc = weft_error(MPI_ERR_ARG, "NULL sendcounts");
        }
        WEFT_TRY(rc, check_types_array(sendtypes, nsend, "sendtypes", &st, sendcounts));
    }
    WEFT_TRY(rc, no_inplace_inter(sendbuf, comm, "sendbuf"));
    if (rc == MPI_SUCCESS) {
        args_init(&a, coll, comm);
        a.sbuf = sendbuf, a.scounts = sendcounts, a.sdispls = sdispls, a.sdts = st;
        a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = rdispls, a.rdts = rt;
        a.sdt = a.rdt = weft_coll_byte ? weft_coll_byte : weft_datatype_from_handle(MPI_BYTE);
        if (sendbuf == MPI_IN_PLACE) {
            a.scounts = recvcounts, a.sdispls = rdispls, a.sdts = rt;
        }
        if (mode != WEFT_COLL_MODE_BLOCKING) {
            /* user datatypes of w-forms are used as given; the schedule is
             * built now, so the arrays need not outlive this call */
        }
        rc = weft_coll_run(&a, mode, request);
    }
    free(st);
    free(rt);
    return rc;
}

int weft_coll_call_alltoallw(const void *sendbuf, const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                        const MPI_Datatype sendtypes[], void *recvbuf, const MPI_Count recvcounts[],
                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], weft_comm_t *comm,
                        int mode, MPI_Request *request)
{
    return alltoallw_common(WEFT_COLL_ALLTOALLW, sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
                            recvcounts, rdispls, recvtypes, comm, comm->peer_size,
                            comm->peer_size, mode, request);
}

/* A rank of an intracommunicator reduce whose count, datatype and op are
 * fine but whose buffers are not (MPI_IN_PLACE where not allowed, sendbuf
 * the same as recvbuf) still takes part with scratch buffers (zeros for a
 * missing contribution), so the others do not wait for ever (see
 * rooted_take_part); its error is returned. */
static int reduce_take_part(const void *sendbuf, MPI_Count count, weft_datatype_t *dt,
                            weft_op_t *op, int root, weft_comm_t *comm, int mode, int rc)
{
    weft_coll_args_t a;
    char             reason[512], *scratch;
    MPI_Aint         span;

    if (mode == WEFT_COLL_MODE_PERSISTENT || comm->is_inter || root < 0 || root >= comm->size ||
        count < 0 || dt == NULL || !weft_datatype_is_committed(dt) || op == NULL ||
        weft_op_check(op, dt) != MPI_SUCCESS) {
        return rc;
    }
    snprintf(reason, sizeof(reason), "%s", weft_err_reason());
    span    = count > 0 ? dt->true_extent + (MPI_Aint)(count - 1) * dt->extent : 0;
    scratch = calloc(1, (size_t)span + 1);
    if (scratch != NULL) {
        args_init(&a, WEFT_COLL_REDUCE, comm);
        a.rbuf  = scratch - dt->true_lb;
        a.sbuf  = sendbuf == MPI_IN_PLACE ? (is_root(root, comm) ? MPI_IN_PLACE : a.rbuf) : sendbuf;
        a.count = count, a.dt = dt, a.op = op;
        a.sdt = a.rdt = dt, a.root = root;
        (void)weft_coll_run(&a, WEFT_COLL_MODE_BLOCKING, NULL);
        free(scratch);
    }
    return weft_error(rc, "%s", reason);
}

int weft_coll_call_reduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                     weft_datatype_t *datatype, weft_op_t *op, int root, weft_comm_t *comm,
                     int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_root(root, comm);
    if (!(comm->is_inter && root == MPI_PROC_NULL)) {
        WEFT_TRY(rc, check_count(count, "count"));
        WEFT_TRY(rc, check_reduction(sendbuf, is_root(root, comm) ? recvbuf : NULL, count,
                                     datatype, op, comm));
    }
    if (rc == MPI_SUCCESS && sendbuf == MPI_IN_PLACE && !is_root(root, comm)) {
        rc = weft_error(MPI_ERR_BUFFER, "argument sendbuf: MPI_IN_PLACE is only valid at the root");
    }
    if (rc != MPI_SUCCESS) {
        return reduce_take_part(sendbuf, count, datatype, op, root, comm, mode, rc);
    }
    args_init(&a, WEFT_COLL_REDUCE, comm);
    a.sbuf = sendbuf, a.rbuf = recvbuf, a.count = count, a.dt = datatype, a.op = op;
    a.sdt = a.rdt = datatype, a.root = root;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_allreduce(const void *sendbuf, void *recvbuf, MPI_Count count,
                        weft_datatype_t *datatype, weft_op_t *op, weft_comm_t *comm, int mode,
                        MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_reduction(sendbuf, recvbuf, count, datatype, op, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_ALLREDUCE, comm);
    a.sbuf = sendbuf, a.rbuf = recvbuf, a.count = count, a.dt = datatype, a.op = op;
    a.sdt = a.rdt = datatype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_reduce_scatter(const void *sendbuf, void *recvbuf, const MPI_Count recvcounts[],
                             weft_datatype_t *datatype, weft_op_t *op, weft_comm_t *comm, int mode,
                             MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_reduction(sendbuf, recvbuf, 1, datatype, op, comm);
    if (rc == MPI_SUCCESS && recvcounts == NULL) {
        rc = weft_error(MPI_ERR_ARG, "NULL recvcounts");
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_REDUCE_SCATTER, comm);
    a.sbuf = sendbuf, a.rbuf = recvbuf, a.rcounts = recvcounts, a.dt = datatype, a.op = op;
    a.sdt = a.rdt = datatype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_reduce_scatter_block(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                   weft_datatype_t *datatype, weft_op_t *op, weft_comm_t *comm,
                                   int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = check_reduction(sendbuf, recvbuf, recvcount, datatype, op, comm);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_REDUCE_SCATTER_BLOCK, comm);
    a.sbuf = sendbuf, a.rbuf = recvbuf, a.rcount = recvcount, a.dt = datatype, a.op = op;
    a.count = recvcount * comm->size;
    a.sdt = a.rdt = datatype;
    return weft_coll_run(&a, mode, request);
}

static int scan_common(int coll, const void *sendbuf, void *recvbuf, MPI_Count count,
                       weft_datatype_t *datatype, weft_op_t *op, weft_comm_t *comm, int mode,
                       MPI_Request *request)
{
    weft_coll_args_t a;
    int              rc = MPI_SUCCESS;
    if (comm->is_inter) {
        rc = weft_error(MPI_ERR_COMM, "argument comm: %s is not defined on intercommunicators",
                        coll == WEFT_COLL_SCAN ? "MPI_Scan" : "MPI_Exscan");
    }
    WEFT_TRY(rc, check_reduction(sendbuf, recvbuf, count, datatype, op, comm));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, coll, comm);
    a.sbuf = sendbuf, a.rbuf = recvbuf, a.count = count, a.dt = datatype, a.op = op;
    a.sdt = a.rdt = datatype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_scan(const void *sendbuf, void *recvbuf, MPI_Count count, weft_datatype_t *datatype,
                   weft_op_t *op, weft_comm_t *comm, int mode, MPI_Request *request)
{
    return scan_common(WEFT_COLL_SCAN, sendbuf, recvbuf, count, datatype, op, comm, mode, request);
}

int weft_coll_call_exscan(const void *sendbuf, void *recvbuf, MPI_Count count, weft_datatype_t *datatype,
                     weft_op_t *op, weft_comm_t *comm, int mode, MPI_Request *request)
{
    return scan_common(WEFT_COLL_EXSCAN, sendbuf, recvbuf, count, datatype, op, comm, mode,
                       request);
}

/* ---- neighborhood ---------------------------------------------------------- */

static int topo_check(weft_comm_t *comm, int *indeg, int *outdeg)
{
    const int *s, *d;
    if (comm->is_inter) {
        return weft_error(MPI_ERR_COMM, "argument comm: neighborhood collectives need an "
                                        "intracommunicator with a topology");
    }
    return weft_topo_neighbors(comm, indeg, &s, outdeg, &d);
}

int weft_coll_call_neighbor_allgather(const void *sendbuf, MPI_Count sendcount,
                                 weft_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                                 weft_datatype_t *recvtype, weft_comm_t *comm, int mode,
                                 MPI_Request *request)
{
    weft_coll_args_t a;
    int              in, out, rc = topo_check(comm, &in, &out);
    WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    WEFT_TRY(rc, check_type(recvtype, "recvtype"));
    WEFT_TRY(rc, no_inplace(sendbuf, "sendbuf"));
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_NEIGHBOR_ALLGATHER, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sendtype;
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_neighbor_allgatherv(const void *sendbuf, MPI_Count sendcount,
                                  weft_datatype_t *sendtype, void *recvbuf,
                                  const MPI_Count recvcounts[], const MPI_Aint displs[],
                                  weft_datatype_t *recvtype, weft_comm_t *comm, int mode,
                                  MPI_Request *request)
{
    weft_coll_args_t a;
    int              in, out, rc = topo_check(comm, &in, &out);
    WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    WEFT_TRY(rc, check_type(recvtype, "recvtype"));
    WEFT_TRY(rc, no_inplace(sendbuf, "sendbuf"));
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_NEIGHBOR_ALLGATHERV, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sendtype;
    a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = displs, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_neighbor_alltoall(const void *sendbuf, MPI_Count sendcount,
                                weft_datatype_t *sendtype, void *recvbuf, MPI_Count recvcount,
                                weft_datatype_t *recvtype, weft_comm_t *comm, int mode,
                                MPI_Request *request)
{
    weft_coll_args_t a;
    int              in, out, rc = topo_check(comm, &in, &out);
    WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    WEFT_TRY(rc, check_type(recvtype, "recvtype"));
    WEFT_TRY(rc, no_inplace(sendbuf, "sendbuf"));
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_NEIGHBOR_ALLTOALL, comm);
    a.sbuf = sendbuf, a.scount = sendcount, a.sdt = sendtype;
    a.rbuf = recvbuf, a.rcount = recvcount, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_neighbor_alltoallv(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], weft_datatype_t *sendtype,
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], weft_datatype_t *recvtype,
                                 weft_comm_t *comm, int mode, MPI_Request *request)
{
    weft_coll_args_t a;
    int              in, out, rc = topo_check(comm, &in, &out);
    WEFT_TRY(rc, check_type(sendtype, "sendtype"));
    WEFT_TRY(rc, check_type(recvtype, "recvtype"));
    WEFT_TRY(rc, no_inplace(sendbuf, "sendbuf"));
    WEFT_TRY(rc, no_inplace(recvbuf, "recvbuf"));
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    args_init(&a, WEFT_COLL_NEIGHBOR_ALLTOALLV, comm);
    a.sbuf = sendbuf, a.scounts = sendcounts, a.sdispls = sdispls, a.sdt = sendtype;
    a.rbuf = recvbuf, a.rcounts = recvcounts, a.rdispls = rdispls, a.rdt = recvtype;
    return weft_coll_run(&a, mode, request);
}

int weft_coll_call_neighbor_alltoallw(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                 weft_comm_t *comm, int mode, MPI_Request *request)
{
    int in, out, rc = topo_check(comm, &in, &out);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    return alltoallw_common(WEFT_COLL_NEIGHBOR_ALLTOALLW, sendbuf, sendcounts, sdispls, sendtypes,
                            recvbuf, recvcounts, rdispls, recvtypes, comm, out, in, mode, request);
}
