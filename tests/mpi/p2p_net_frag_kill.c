/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * p2p_net_frag_kill MODE: the sender of a fragmented eager message
 * (net_frag.c) is killed (SIGKILL) after its first fragments have reached
 * the receiver and before its last one. Run by tests/mpi/test_fault.py with
 * mpirun -disable-auto-cleanup, WEFT_NETMOD_ONLY=1 (every peer remote, one
 * host) and fragments small enough for a message of more than OFI_TX_BUFS
 * (64) of them, e.g. WEFT_EAGER_THRESHOLD=1024 WEFT_NET_FRAG_MAX=256k. Not
 * in the manifest: the job's exit code is the dead rank's.
 *
 * Why the kill lands mid-message, deterministically: the victim (last rank)
 * posts the message with MPI_Isend and then makes no MPI call. MPI_Isend
 * runs p2p_net_frag_send once: it hands the RTS (carrying the first
 * fragment) and then DATA fragments to the netmod until ofi_am_reserve finds
 * no free send buffer. Fragments are larger than the provider's inject size
 * (64 B for tcp;ofi_rxm), so each holds its buffer until a completion that
 * only progress reaps: at most 64 of the message's fragments can ever leave
 * the victim. Rank 0 waits until it sees the header (below), then kills the
 * victim by pid (sent to it during the warm-up; one host), so the receive
 * is matched or queued, partly filled, and can never be completed.
 *
 * Modes (rank 0 is the receiver; the victim is the last rank):
 *   posted      rank 0 pre-posts the receive; it kills the victim once its
 *               posted-queue length (MPI_T pvar weft_posted_queue_len) has
 *               dropped, i.e. the header matched the receive (ps->frag_req),
 *               while MPI_Test still says incomplete. The wait must fail with
 *               MPI_ERR_OTHER (fault.c, fail_in_flight; net_frag_peer_lost
 *               forgets frag_req).
 *   posted_any  the same with an MPI_ANY_SOURCE receive: the status names
 *               the victim.
 *   fatal       posted under MPI_ERRORS_ARE_FATAL on rank 0: its MPI_Wait
 *               ends the job with a message naming the lost rank.
 *   unexpected  nothing posted; MPI_Iprobe sees the header (full size), the
 *               victim is killed, then MPI_Recv matches the partial entry
 *               while it is still being filled (no progress ran since the
 *               probe, so the loss is not known yet): net_frag_recv_unexpected
 *               makes the receive ps->frag_req, and the loss fails it (MPI_Recv
 *               runs weft_recv_now, whose request is on its stack: its own
 *               check of the matched source fails it).
 *   unexpected_nb  the same with MPI_Irecv + MPI_Wait: a pooled request,
 *               failed by fault.c's fail_in_flight.
 *   mprobe      MPI_Improbe takes the partial entry; the victim is killed;
 *               a receive from it fails (the loss is handled); then MPI_Mrecv
 *               must fail (net_frag_recv_unexpected: frag_unexp != u).
 *   dropped     MPI_Iprobe sees the header; the victim is killed; a receive
 *               from it fails (the loss is handled, net_frag_peer_lost drops
 *               the queued partial entry); then a receive of that message
 *               must fail without writing into its buffer, not wait forever.
 * In every mode but fatal the other survivors' receives from the victim fail
 * too, then all survivors pass eager and fragmented messages around a ring
 * on a communicator without the victim (ANY_SOURCE, every byte compared),
 * print "survivor R ok" and finalize.
 */
#include <signal.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "mpitest.h"

#define OFI_TX_BUFS 64 /* src/transport/ofi/ofi_internal.h: send buffers of the netmod */

enum { TAG_PING = 1, TAG_GO = 2, TAG_BIG = 3, TAG_NOTICE = 4, TAG_RING = 5 };

static int         rank, size, victim;
static size_t      frag_bytes = 65536, frag_max = 131072; /* the defaults */
static const char *mode;

static size_t env_size(const char *name, size_t dflt)
{
    const char *v = getenv(name);
    char       *end;

    if (v == NULL || *v == '\0') {
        return dflt;
    }
    size_t n = strtoul(v, &end, 10);
    if (*end == 'k' || *end == 'K') {
        n <<= 10;
    } else if (*end == 'm' || *end == 'M') {
        n <<= 20;
    }
    return n;
}

static int class_of(int rc)
{
    int cls = -1;
    MPI_Error_class(rc, &cls);
    return cls;
}

/* The victim after its MPI_Isend: no MPI call (no progress) until rank 0
 * kills it. A bound, so a broken test cannot leave it behind. */
static void linger_without_progress(void)
{
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < 600; i++) {
        usleep(100000);
    }
    fprintf(stderr, "FAIL victim: not killed within 60 s\n");
    _exit(1);
}

/* Every survivor and the victim talk both ways, so the connections exist
 * before the message (its fragments do not wait for a connection) and every
 * survivor's netmod watches the victim; rank 0 learns the victim's pid. */
static pid_t warm_up(void)
{
    long pid = (long)getpid(), got = -1;

    if (rank == victim) {
        for (int r = 0; r < victim; r++) {
            MPI_Send(&pid, 1, MPI_LONG, r, TAG_PING, MPI_COMM_WORLD);
            MPI_Recv(&got, 1, MPI_LONG, r, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        return 0;
    }
    CHECK_OK(MPI_Recv(&got, 1, MPI_LONG, victim, TAG_PING, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Send(&pid, 1, MPI_LONG, victim, TAG_PING, MPI_COMM_WORLD));
    return (pid_t)got;
}

static void kill_victim(pid_t pid)
{
    CHECK(pid > 1 && kill(pid, SIGKILL) == 0, "cannot kill the victim (pid %ld)", (long)pid);
}

/* Rank 0's posted-receive queue length (MPI_T): it drops when a message
 * matches a posted receive, before the message has all arrived. */
static MPI_T_pvar_session pv_session;
static MPI_T_pvar_handle  pv_posted = MPI_T_PVAR_HANDLE_NULL;

static void posted_len_open(void)
{
    int idx = -1, count = 0;

    CHECK_OK(MPI_T_pvar_session_create(&pv_session));
    CHECK_OK(MPI_T_pvar_get_index("weft_posted_queue_len", MPI_T_PVAR_CLASS_LEVEL, &idx));
    CHECK_OK(MPI_T_pvar_handle_alloc(pv_session, idx, NULL, &pv_posted, &count));
}

static unsigned long long posted_len(void)
{
    unsigned long long v = ~0ULL;
    CHECK_OK(MPI_T_pvar_read(pv_session, pv_posted, &v));
    return v;
}

static void posted_len_close(void)
{
    CHECK_OK(MPI_T_pvar_handle_free(pv_session, &pv_posted));
    CHECK_OK(MPI_T_pvar_session_free(&pv_session));
}

/* posted, posted_any, fatal: rank 0's receive is matched, then its sender dies. */
static void receiver_posted(pid_t vpid, unsigned char *big, int n, int any)
{
    MPI_Request r;
    MPI_Status  st;
    int         flag = 0, go = 0;

    posted_len_open();
    CHECK_OK(MPI_Irecv(big, n, MPI_BYTE, any ? MPI_ANY_SOURCE : victim, TAG_BIG, MPI_COMM_WORLD,
                       &r));
    unsigned long long before = posted_len();
    CHECK_OK(MPI_Send(&go, 1, MPI_INT, victim, TAG_GO, MPI_COMM_WORLD));
    double t0      = mpitest_now();
    int    matched = 0;
    while (!matched && !flag && mpitest_now() - t0 < 30.0) {
        CHECK_OK(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
        matched = posted_len() < before;
    }
    CHECK(matched, "the fragmented message's header never matched the posted receive");
    CHECK(!flag, "the receive completed: the whole message arrived, the kill is not mid-message");
    posted_len_close();
    kill_victim(vpid);
    if (flag) {
        return;
    }
    int rc = MPI_Wait(&r, &st); /* fatal mode ends the job here */
    CHECK(class_of(rc) == MPI_ERR_OTHER, "receive whose sender died mid-message: class %d",
          class_of(rc));
    if (any) {
        CHECK(st.MPI_SOURCE == victim, "ANY_SOURCE receive failed naming source %d, not %d",
              st.MPI_SOURCE, victim);
    }
}

/* Polls until the victim's message header is in the unexpected queue. */
static int header_arrived(MPI_Message *msg)
{
    MPI_Status st;
    int        flag = 0, go = 0, cnt = -1;

    CHECK_OK(MPI_Send(&go, 1, MPI_INT, victim, TAG_GO, MPI_COMM_WORLD));
    for (double t0 = mpitest_now(); !flag && mpitest_now() - t0 < 30.0;) {
        if (msg != NULL) {
            CHECK_OK(MPI_Improbe(victim, TAG_BIG, MPI_COMM_WORLD, &flag, msg, &st));
        } else {
            CHECK_OK(MPI_Iprobe(victim, TAG_BIG, MPI_COMM_WORLD, &flag, &st));
        }
    }
    CHECK(flag, "the fragmented message's header never arrived");
    if (flag) {
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == (int)frag_max, "probe: count %d, expected the full %zu", cnt, frag_max);
    }
    return flag;
}

/* The loss is handled once a receive posted for the victim fails. */
static void wait_for_loss_handled(void)
{
    int got = -1;
    int rc  = MPI_Recv(&got, 1, MPI_INT, victim, TAG_NOTICE, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_OTHER, "receive from the dead rank: class %d", class_of(rc));
}

static void receiver_unexpected(pid_t vpid, unsigned char *big, int n, int nonblocking)
{
    int arrived = header_arrived(NULL);
    kill_victim(vpid);
    if (!arrived) {
        return;
    }
    int rc;
    if (nonblocking) {
        MPI_Request r;
        CHECK_OK(MPI_Irecv(big, n, MPI_BYTE, victim, TAG_BIG, MPI_COMM_WORLD, &r));
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        rc = MPI_Recv(big, n, MPI_BYTE, victim, TAG_BIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    CHECK(class_of(rc) == MPI_ERR_OTHER, "receive of the partial unexpected message: class %d",
          class_of(rc));
}

static void receiver_mprobe(pid_t vpid, unsigned char *big, int n)
{
    MPI_Message msg     = MPI_MESSAGE_NULL;
    int         arrived = header_arrived(&msg);
    kill_victim(vpid);
    if (!arrived) {
        return;
    }
    wait_for_loss_handled();
    int rc = MPI_Mrecv(big, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_OTHER, "mrecv of the partial message after the loss: class %d",
          class_of(rc));
}

static void receiver_dropped(pid_t vpid, unsigned char *big, int n)
{
    int arrived = header_arrived(NULL);
    kill_victim(vpid);
    if (!arrived) {
        return;
    }
    wait_for_loss_handled();
    memset(big, 0xEE, (size_t)n);
    int rc = MPI_Recv(big, n, MPI_BYTE, victim, TAG_BIG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_OTHER, "receive of the dropped partial message: class %d",
          class_of(rc));
    for (int i = 0; i < n; i++) {
        if (big[i] != 0xEE) {
            CHECK(0, "the failed receive wrote byte %d of its buffer", i);
            break;
        }
    }
}

/* Survivors pass eager and fragmented messages around a ring on a
 * communicator without the victim, receiving with MPI_ANY_SOURCE. */
static void survivor_ring(MPI_Comm rest)
{
    int    me, n;
    size_t lens[] = {frag_bytes / 2, frag_max, frag_max - 7, frag_bytes + 1};

    MPI_Comm_rank(rest, &me);
    MPI_Comm_size(rest, &n);
    int right = (me + 1) % n, left = (me + n - 1) % n;
    for (int i = 0; i < (int)(sizeof(lens) / sizeof(lens[0])); i++) {
        size_t         len  = lens[i];
        unsigned char *out  = malloc(len), *in = calloc(1, len);
        MPI_Request    reqs[2];
        MPI_Status     sts[2];
        int            cnt  = -1;
        mpitest_fill(out, len, (unsigned)(me * 31 + i));
        CHECK_OK(MPI_Irecv(in, (int)len, MPI_BYTE, MPI_ANY_SOURCE, TAG_RING, rest, &reqs[0]));
        CHECK_OK(MPI_Isend(out, (int)len, MPI_BYTE, right, TAG_RING, rest, &reqs[1]));
        CHECK_OK(MPI_Waitall(2, reqs, sts));
        MPI_Get_count(&sts[0], MPI_BYTE, &cnt);
        CHECK(sts[0].MPI_SOURCE == left && cnt == (int)len, "ring %zu B: from %d (%d B)", len,
              sts[0].MPI_SOURCE, cnt);
        long bad = mpitest_verify(in, len, (unsigned)(left * 31 + i));
        CHECK(bad < 0, "ring %zu B from %d: byte %ld wrong", len, left, bad);
        free(out);
        free(in);
    }
    int one = 1, sum = 0;
    CHECK_OK(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, rest));
    CHECK(sum == n, "allreduce of the survivors: %d, expected %d", sum, n);
}

int main(int argc, char **argv)
{
    int provided;

    mode = argc > 1 ? argv[1] : "posted";
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    frag_bytes = env_size("WEFT_EAGER_THRESHOLD", frag_bytes);
    frag_max   = env_size("WEFT_NET_FRAG_MAX", frag_max);
    if (size < 2 || frag_bytes == 0 || frag_max / frag_bytes <= OFI_TX_BUFS) {
        /* A message of so few fragments may leave whole inside MPI_Isend. */
        if (rank == 0) {
            printf("FAIL: needs np >= 2 and WEFT_NET_FRAG_MAX / WEFT_EAGER_THRESHOLD > %d "
                   "(np %d, %zu / %zu)\n", OFI_TX_BUFS, size, frag_max, frag_bytes);
        }
        MPI_Finalize();
        return 1;
    }
    victim    = size - 1;
    int fatal = strcmp(mode, "fatal") == 0;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD,
                            fatal && rank == 0 ? MPI_ERRORS_ARE_FATAL : MPI_ERRORS_RETURN);
    int            n   = (int)frag_max; /* the largest fragmented eager message */
    unsigned char *big = malloc(frag_max);
    MPI_Comm       rest;
    pid_t          vpid = warm_up();
    MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &rest);

    if (rank == victim) {
        int go = 0;
        mpitest_fill(big, frag_max, 77);
        MPI_Recv(&go, 1, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Request r;
        MPI_Isend(big, n, MPI_BYTE, 0, TAG_BIG, MPI_COMM_WORLD, &r);
        linger_without_progress();
    }
    if (rank == 0) {
        if (strcmp(mode, "posted") == 0 || fatal) {
            receiver_posted(vpid, big, n, 0);
        } else if (strcmp(mode, "posted_any") == 0) {
            receiver_posted(vpid, big, n, 1);
        } else if (strcmp(mode, "unexpected") == 0) {
            receiver_unexpected(vpid, big, n, 0);
        } else if (strcmp(mode, "unexpected_nb") == 0) {
            receiver_unexpected(vpid, big, n, 1);
        } else if (strcmp(mode, "mprobe") == 0) {
            receiver_mprobe(vpid, big, n);
        } else if (strcmp(mode, "dropped") == 0) {
            receiver_dropped(vpid, big, n);
        } else {
            CHECK(0, "unknown mode %s", mode);
            kill_victim(vpid);
        }
    } else {
        wait_for_loss_handled();
    }
    survivor_ring(rest);
    MPI_Comm_free(&rest);
    free(big);
    printf("survivor %d ok\n", rank);
    fflush(stdout);
    return mpitest_finish();
}
