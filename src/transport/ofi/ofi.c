/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The libfabric netmod: one reliable-datagram endpoint (FI_EP_RDM) per
 * process, untagged messages carrying Weft's active messages (envelope +
 * payload); all matching stays in core, so MPI_ANY_SOURCE sees local (shm)
 * and remote senders in one queue. Messages to one peer are delivered in
 * order (FI_ORDER_SAS is required of the provider).
 *
 * Buffers: one slab of send and receive buffers, registered once when the
 * provider needs local registration (FI_MR_LOCAL); every receive buffer is
 * posted and reposted after its handler ran. A send packs into a free send
 * buffer (am_reserve) and goes out by fi_inject when it fits, else fi_send;
 * when the provider says FI_EAGAIN the buffer waits in a FIFO that later
 * sends join, so per-peer order holds.
 *
 * Rendezvous by RGET where the provider has FI_RMA: the sender registers its
 * buffer for remote read and names it in the RTS; the receiver registers its
 * buffer and fi_reads (manual progress from the same completion queue).
 * Registrations are per message and we keep no cache of our own: the
 * providers that pin memory (verbs, efa, psm3, cxi) register through
 * libfabric's MR cache, whose monitor (userfaultfd or memhooks) drops a
 * registration when its pages are unmapped, which a cache here could not
 * see; tcp, sockets and shm register in software (a table entry). Tuned by
 * libfabric's FI_MR_CACHE_MAX_COUNT / _MAX_SIZE / _MONITOR.
 *
 * Addresses go through PMI once per node: every rank puts its endpoint name,
 * the node's leader (lowest rank) reads its node's names and puts them as
 * one blob, and every rank reads one blob per node (not one key per rank).
 * Connections are made on demand by the provider (ofi_rxm).
 *
 * Progress is manual: core's progress engine calls am progress, which reads
 * the completion queue and runs the AM handlers.
 *
 * Files: ofi.c setup (provider, endpoint, buffers, addresses) and the ops
 * table; ofi_msg.c sending and delivering; ofi_progress.c the completion
 * queue, keepalives, finalize and waits; ofi_rma.c RGET and window RMA;
 * ofi_dyn.c processes of other jobs. Shared state: ofi_internal.h.
 *
 * Order: FI_ORDER_SAS orders where messages land, not when their receives
 * complete: ofi_rxm completes a message it moved by its own rendezvous
 * (above its eager size, 16 KiB by default) after later small ones. So every
 * message carries a per-pair sequence number and an early arrival is copied
 * aside until its predecessors have been handled.
 *
 * Failures: a dead process closes its connections and our next send to it
 * fails; a dead link is only seen by TCP's retransmission timeout, and only
 * on a connection with data in flight. So while a process is inside MPI it
 * sends a keepalive AM every second to every peer it has exchanged messages
 * with; its error completion names the lost peer. The time to notice a dead
 * link is the kernel's: net.ipv4.tcp_retries2 (default 15, about 15 min) for
 * an open connection, tcp_syn_retries for a reconnection attempt.
 */
#include "transport/ofi/ofi_internal.h"

#include <arpa/inet.h>
#include <dlfcn.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/ofi/ofi_quirks.h"
#include "util/log.h"

ofi_fab_t   weft_ofi_fab;
ofi_state_t weft_ofi;

/* The interface the tcp and sockets providers use: WEFT_IFACE, else the
 * one holding WEFT_HOST_ADDR (set by the launcher: this host's address on
 * the link to mpiexec), so a host with several interfaces (namespace test
 * hosts, management + data networks) never advertises a wrong address. The
 * user's FI_TCP_IFACE / FI_SOCKETS_IFACE win; with neither set, the
 * default route's interface. Before libfabric is opened:
 * providers read their parameters at initialisation. */
/* The interface of the default route (name into out), or "": a stable
 * choice when the launcher named none (one-host jobs, singletons), so the
 * provider never latches onto a transient interface (a container's or a
 * test's veth) that may vanish while the job runs. */
static void default_route_interface(char *out, size_t len)
{
    FILE *f = fopen("/proc/net/route", "r");
    char  line[256], name[64];
    unsigned long dest, mask;

    out[0] = '\0';
    if (f == NULL) {
        return;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        if (sscanf(line, "%63s %lx %*x %*x %*d %*d %*d %lx", name, &dest, &mask) == 3 &&
            dest == 0 && mask == 0) {
            snprintf(out, len, "%s", name);
            break;
        }
    }
    fclose(f);
}

static void pin_interface(void)
{
    const char     *iface = getenv("WEFT_IFACE");
    const char     *addr  = getenv("WEFT_HOST_ADDR");
    struct ifaddrs *all   = NULL;
    struct in_addr  want;
    char            name[64] = "";

    if (iface != NULL && iface[0] != '\0') {
        snprintf(name, sizeof(name), "%s", iface);
    } else if (addr != NULL && inet_pton(AF_INET, addr, &want) == 1 && getifaddrs(&all) == 0) {
        for (struct ifaddrs *i = all; i != NULL; i = i->ifa_next) {
            if (i->ifa_addr != NULL && i->ifa_addr->sa_family == AF_INET &&
                ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr == want.s_addr) {
                snprintf(name, sizeof(name), "%s", i->ifa_name);
                break;
            }
        }
        freeifaddrs(all);
    }
    if (name[0] == '\0' && (addr == NULL || addr[0] == '\0')) {
        default_route_interface(name, sizeof(name));
    }
    if (name[0] != '\0' && strcmp(name, "lo") != 0) {
        setenv("FI_TCP_IFACE", name, 0);
        setenv("FI_SOCKETS_IFACE", name, 0);
        setenv("FI_NET_IFACE", name, 0); /* libfabric 1.17-1.18's native-RDM TCP provider */
    }
}

/* The provider asked for: WEFT_OFI_PROVIDER, else FI_PROVIDER; NULL: ours to choose. */
static const char *provider_wanted(const char *weft_choice)
{
    const char *env = getenv("FI_PROVIDER");

    if (weft_choice != NULL && weft_choice[0] != '\0') {
        return weft_choice;
    }
    return env != NULL && env[0] != '\0' ? env : NULL;
}

static int fabric_open(size_t eager_limit, const char *provider)
{
    if (weft_ofi_fab.lib != NULL) {
        return 0;
    }
    setenv("IPATH_NO_BACKTRACE", "1", 0);
    ofi_quirks_before_dlopen(eager_limit + sizeof(net_hdr_t), provider);
    pin_interface();
    if (ofi_quirks_psm_standins(provider) > 0) {
        weft_ofi_fab.lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
        if (weft_ofi_fab.lib == NULL) { /* imports the stand-ins lack: the real ones */
            weft_log_warn("netmod: libfabric.so.1 did not open with the PSM stand-ins (%s); "
                          "loading the real PSM libraries (0.2 s)", dlerror());
            ofi_quirks_psm_standins_drop();
        }
    }
    if (weft_ofi_fab.lib == NULL) {
        weft_ofi_fab.lib = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    }
    if (weft_ofi_fab.lib == NULL) {
        weft_log_error("netmod: cannot open libfabric.so.1: %s", dlerror());
        return -1;
    }
    *(void **)&weft_ofi_fab.getinfo  = dlsym(weft_ofi_fab.lib, "fi_getinfo");
    *(void **)&weft_ofi_fab.freeinfo = dlsym(weft_ofi_fab.lib, "fi_freeinfo");
    *(void **)&weft_ofi_fab.dupinfo  = dlsym(weft_ofi_fab.lib, "fi_dupinfo");
    *(void **)&weft_ofi_fab.fabric   = dlsym(weft_ofi_fab.lib, "fi_fabric");
    *(void **)&weft_ofi_fab.strerror = dlsym(weft_ofi_fab.lib, "fi_strerror");
    if (!weft_ofi_fab.getinfo || !weft_ofi_fab.freeinfo || !weft_ofi_fab.dupinfo ||
        !weft_ofi_fab.fabric || !weft_ofi_fab.strerror) {
        weft_log_error("netmod: libfabric.so.1 lacks fi_getinfo/fi_fabric/...: %s", dlerror());
        dlclose(weft_ofi_fab.lib);
        weft_ofi_fab.lib = NULL;
        return -1;
    }
    ofi_quirks_after_dlopen(weft_ofi_fab.lib);
    return 0;
}

/* ---- setup ------------------------------------------------------------- */

static struct fi_info *make_hints(const char *prov, uint64_t caps)
{
    struct fi_info *h = weft_ofi_fab.dupinfo(NULL);

    if (h == NULL) {
        return NULL;
    }
    h->caps                        = caps;
    h->mode                        = FI_CONTEXT | FI_CONTEXT2;
    h->ep_attr->type               = FI_EP_RDM;
    h->domain_attr->mr_mode        = FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED |
                                     FI_MR_PROV_KEY;
    h->domain_attr->threading      = FI_THREAD_DOMAIN;
    h->domain_attr->control_progress = FI_PROGRESS_MANUAL;
    h->domain_attr->data_progress  = FI_PROGRESS_MANUAL;
    h->tx_attr->msg_order          = FI_ORDER_SAS;
    h->rx_attr->msg_order          = FI_ORDER_SAS;
    if (prov != NULL) {
        h->fabric_attr->prov_name = strdup(prov);
    }
    return h;
}

static struct fi_info *getinfo_caps(const char *prov, uint64_t caps)
{
    struct fi_info *h = make_hints(prov, caps), *info = NULL;

    if (h == NULL) {
        return NULL;
    }
    if (weft_ofi_fab.getinfo(FI_VERSION(1, 17), NULL, NULL, 0, h, &info) != 0) {
        info = NULL;
    }
    weft_ofi_fab.freeinfo(h);
    return info;
}

/* With RMA where offered (RGET when wanted, and one-sided windows), else
 * messages only. */
static struct fi_info *getinfo(const char *prov)
{
    struct fi_info *info = getinfo_caps(prov, FI_MSG | FI_RMA);

    return info ? info : getinfo_caps(prov, FI_MSG);
}

/* "a, b, c": the providers that can serve us here. */
static void list_providers(char *out, size_t len)
{
    struct fi_info *all = getinfo(NULL);
    size_t          n   = 0;

    out[0] = '\0';
    for (struct fi_info *i = all; i != NULL; i = i->next) {
        const char *name = i->fabric_attr->prov_name;
        int         seen = 0;
        for (struct fi_info *j = all; j != i; j = j->next) {
            seen |= strcmp(j->fabric_attr->prov_name, name) == 0;
        }
        if (!seen && n + strlen(name) + 3 < len) {
            n += (size_t)snprintf(out + n, len - n, "%s%s", n ? ", " : "", name);
        }
    }
    if (n == 0) {
        snprintf(out, len, "none");
    }
    if (all) {
        weft_ofi_fab.freeinfo(all);
    }
}

static struct fi_info *choose_provider(const char *wanted)
{
    /* net: libfabric 1.17-1.18's native-RDM TCP provider, 0.85-0.9x MPICH's
     * small-message latency where tcp;ofi_rxm is level with it (no signal
     * write and read per completion); absent from 1.19 on, where tcp is it. */
    static const char *defaults[] = {"net", "tcp;ofi_rxm", "sockets", NULL};
    struct fi_info    *info;
    char               avail[512];

    if (wanted != NULL) {
        info = getinfo(wanted);
        if (info == NULL) {
            list_providers(avail, sizeof(avail));
            weft_log_error("libfabric provider \"%s\" (WEFT_OFI_PROVIDER or FI_PROVIDER) is not "
                           "available with reliable datagrams and ordered sends here; available: %s",
                           wanted, avail);
        }
        return info;
    }
    for (int i = 0;; i++) {
        info = getinfo(defaults[i]);
        if (info != NULL || defaults[i] == NULL) {
            break;
        }
    }
    if (info == NULL) {
        list_providers(avail, sizeof(avail));
        weft_log_error("no libfabric provider offers reliable datagrams with ordered sends here "
                       "(available: %s)", avail);
    }
    return info;
}

int ofi_check(int rc, const char *what)
{
    if (rc != 0) {
        weft_log_error("libfabric %s failed: %s", what, weft_ofi_fab.strerror(-rc));
        return -1;
    }
    return 0;
}

static int buffers_init(size_t max_payload)
{
    int n = OFI_TX_BUFS + OFI_RX_BUFS;

    weft_ofi.max_payload = max_payload;
    weft_ofi.stride      = (sizeof(net_hdr_t) + max_payload + 63) & ~(size_t)63;
    weft_ofi.bufs        = calloc((size_t)n, sizeof(ofi_buf_t));
    if (weft_ofi.bufs == NULL ||
        posix_memalign((void **)&weft_ofi.slab, 4096, weft_ofi.stride * (size_t)n) != 0) {
        weft_log_error("out of memory for netmod buffers");
        return -1;
    }
    if (weft_ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) {
        if (ofi_check(fi_mr_reg(weft_ofi.domain, weft_ofi.slab, weft_ofi.stride * (size_t)n,
                                FI_SEND | FI_RECV, 0, 0, 0, &weft_ofi.mr, NULL),
                      "fi_mr_reg") != 0) {
            return -1;
        }
        weft_ofi.desc = fi_mr_desc(weft_ofi.mr);
    }
    for (int i = 0; i < n; i++) {
        ofi_buf_t *b = &weft_ofi.bufs[i];
        b->data      = weft_ofi.slab + weft_ofi.stride * (size_t)i;
        b->is_rx     = i >= OFI_TX_BUFS;
        if (!b->is_rx) {
            b->next     = weft_ofi.free_tx;
            weft_ofi.free_tx = b;
        } else if (ofi_post_recv(b) != 0) {
            return -1;
        }
    }
    return 0;
}

/* Publish our name, then learn everyone's: one blob per node from its
 * leader. Collective (two PMI fences). */
static int exchange_addresses(const weft_pmi_info_t *pmi)
{
    char   name[OFI_NAME_MAX], hex[2 * OFI_CHUNK + 1], key[32];
    size_t namelen = sizeof(name);
    char  *blob    = NULL;
    int    rc      = -1;

    if (ofi_check(fi_getname(&weft_ofi.ep->fid, name, &namelen), "fi_getname") != 0 ||
        namelen > 255) {
        return -1;
    }
    weft_pmi_encode(name, namelen, hex);
    if (weft_pmi_put("ofa", hex) != 0 || weft_pmi_fence() != 0) {
        return -1;
    }
    /* Blob: per rank of the node, one length byte then the name. */
    blob = malloc((size_t)pmi->size * (OFI_NAME_MAX + 1) + OFI_CHUNK);
    if (blob == NULL) {
        return -1;
    }
    if (pmi->local_rank == 0) {
        size_t len = 0;
        for (int i = 0; i < pmi->local_size; i++) {
            int    r = pmi->local_ranks[i];
            char   val[WEFT_PMI_MAX_VAL];
            size_t n;
            if (r == pmi->rank) {
                n = namelen;
                memcpy(blob + len + 1, name, n);
            } else {
                if (weft_pmi_get(r, "ofa", val, sizeof(val)) != 0) {
                    goto out;
                }
                n = strlen(val) / 2;
                if (n > 255 || weft_pmi_decode(val, blob + len + 1, n) != 0) {
                    goto out;
                }
            }
            blob[len] = (char)n;
            len += n + 1;
        }
        for (size_t off = 0, k = 0; off < len; off += OFI_CHUNK, k++) {
            size_t n = len - off < OFI_CHUNK ? len - off : OFI_CHUNK;
            snprintf(key, sizeof(key), "ofn%zu", k);
            weft_pmi_encode(blob + off, n, hex);
            if (weft_pmi_put(key, hex) != 0) {
                goto out;
            }
        }
    }
    if (weft_pmi_fence() != 0) {
        goto out;
    }
    for (int node = 0; node < pmi->node_count; node++) {
        int leader = -1, count = 0;
        for (int r = 0; r < pmi->size; r++) {
            if (pmi->node_of_rank[r] == node) {
                leader = leader < 0 ? r : leader;
                count++;
            }
        }
        size_t have = 0, pos = 0;
        int    r    = 0;
        for (int k = 0, parsed = 0; parsed < count; k++) {
            char val[WEFT_PMI_MAX_VAL];
            snprintf(key, sizeof(key), "ofn%d", k);
            if (weft_pmi_get(leader, key, val, sizeof(val)) != 0 ||
                weft_pmi_decode(val, blob + have, strlen(val) / 2) != 0) {
                weft_log_error("netmod: cannot read the addresses of host %d", node);
                goto out;
            }
            have += strlen(val) / 2;
            /* Insert every complete entry we have now, in rank order. */
            while (parsed < count && pos < have && pos + 1 + (unsigned char)blob[pos] <= have) {
                while (pmi->node_of_rank[r] != node) {
                    r++;
                }
                if (fi_av_insert(weft_ofi.av, blob + pos + 1, 1, &weft_ofi.addrs[r], 0,
                                 NULL) != 1) {
                    weft_log_error("netmod: fi_av_insert of rank %d (host %d) failed", r, node);
                    goto out;
                }
                pos += 1 + (unsigned char)blob[pos];
                parsed++;
                r++;
            }
        }
    }
    rc = 0;
out:
    free(blob);
    return rc;
}


/* Room for n peers in every per-peer array (new entries zeroed). */
int ofi_peers_grow(int n)
{
    int cap = weft_ofi.cap;

    if (n <= cap) {
        return 0;
    }
    cap = n > 2 * cap ? n : 2 * cap;
#define GROW(arr)                                                                   \
    do {                                                                            \
        void *p_ = realloc(weft_ofi.arr, (size_t)cap * sizeof(*weft_ofi.arr));      \
        if (p_ == NULL) {                                                           \
            weft_log_error("netmod: out of memory for %d peers", cap);              \
            return -1;                                                              \
        }                                                                           \
        weft_ofi.arr = p_;                                                          \
        memset(weft_ofi.arr + weft_ofi.cap, 0,                                      \
               (size_t)(cap - weft_ofi.cap) * sizeof(*weft_ofi.arr));               \
    } while (0)
    GROW(addrs);
    GROW(send_seq);
    GROW(recv_seq);
    GROW(early);
    GROW(talked);
    GROW(peer_uid);
    GROW(inflight);
    GROW(gone);
    GROW(ka_since);
#undef GROW
    weft_ofi.cap = cap;
    return 0;
}

static weft_status_t ofi_init(const weft_transport_init_t *args)
{
    return ofi_init_common(args, 1);
}

weft_status_t ofi_init_common(const weft_transport_init_t *args, int exchange)
{
    struct fi_cq_attr cq_attr = {0};
    struct fi_av_attr av_attr = {0};

    weft_ofi.me        = args->pmi->rank;
    weft_ofi.size      = args->pmi->size;
    weft_ofi.handlers  = args->handlers;
    weft_ofi.peer_lost = args->peer_lost;
    weft_ofi.rma_done  = args->rma_done;
    weft_ofi.want_rma  = args->want_rma;
    weft_ofi.uses_netmod = args->uses_netmod;
    weft_ofi.uid       = args->uid;
    weft_ofi.npeers    = weft_ofi.size;
    const char *provider = provider_wanted(args->provider);
    if (fabric_open(args->eager_limit, provider) != 0) {
        return WEFT_ERROR;
    }
    weft_ofi.info      = choose_provider(provider);
    if (weft_ofi.info == NULL || ofi_peers_grow(weft_ofi.size) != 0) {
        goto fail;
    }
    weft_ofi.inject  = weft_ofi.info->tx_attr->inject_size;
    /* want_rma 1 (auto): not on the sockets provider, whose fi_read
     * intermittently stalls (not diagnosed: forced RGET passes p2p_order
     * np 4 x5 on a quiet moment, but under load p2p_order np 2 and
     * p2p_sizes np 3 hit the 180 s test timeout); 2 forces it. */
    weft_ofi.has_rma = weft_ofi.want_rma != 0 && (weft_ofi.info->caps & FI_RMA) != 0 &&
                  (weft_ofi.want_rma == 2 ||
                   strcmp(weft_ofi.info->fabric_attr->prov_name, "sockets") != 0);
    if (ofi_check(weft_ofi_fab.fabric(weft_ofi.info->fabric_attr, &weft_ofi.fabric, NULL),
                  "fi_fabric") ||
        ofi_check(fi_domain(weft_ofi.fabric, weft_ofi.info, &weft_ofi.domain, NULL), "fi_domain")) {
        goto fail;
    }
    cq_attr.format   = FI_CQ_FORMAT_MSG;
    cq_attr.size     = (OFI_TX_BUFS + OFI_RX_BUFS) * 2;
    av_attr.type     = FI_AV_TABLE;
    av_attr.count    = (size_t)weft_ofi.size;
    weft_ofi.wait_fd      = -1;
    if (args->want_wait) {
        /* A wait object costs the provider a signal per completion, so only
         * blocking waits ask for one; a provider without fds spins (slept in
         * short naps by core) instead. */
        cq_attr.wait_obj = FI_WAIT_FD;
        if (fi_cq_open(weft_ofi.domain, &cq_attr, &weft_ofi.cq, NULL) != 0 ||
            fi_control(&weft_ofi.cq->fid, FI_GETWAIT, &weft_ofi.wait_fd) != 0) {
            if (weft_ofi.cq != NULL) {
                fi_close(&weft_ofi.cq->fid);
                weft_ofi.cq = NULL;
            }
            weft_ofi.wait_fd = -1;
        }
    }
    cq_attr.wait_obj = FI_WAIT_NONE;
    if ((weft_ofi.cq == NULL &&
         ofi_check(fi_cq_open(weft_ofi.domain, &cq_attr, &weft_ofi.cq, NULL), "fi_cq_open")) ||
        ofi_check(fi_av_open(weft_ofi.domain, &av_attr, &weft_ofi.av, NULL), "fi_av_open") ||
        ofi_check(fi_endpoint(weft_ofi.domain, weft_ofi.info, &weft_ofi.ep, NULL), "fi_endpoint") ||
        ofi_check(fi_ep_bind(weft_ofi.ep, &weft_ofi.cq->fid, FI_TRANSMIT | FI_RECV),
                  "fi_ep_bind(cq)") ||
        ofi_check(fi_ep_bind(weft_ofi.ep, &weft_ofi.av->fid, 0), "fi_ep_bind(av)") ||
        ofi_check(fi_enable(weft_ofi.ep), "fi_enable")) {
        goto fail;
    }
    if (buffers_init(args->max_payload) != 0 || (exchange && exchange_addresses(args->pmi) != 0)) {
        goto fail;
    }
    weft_ofi.up = 1;
    return WEFT_OK;
fail:
    ofi_fini();
    return WEFT_ERROR;
}

void ofi_fini(void)
{
    if (weft_ofi.ep) {
        fi_close(&weft_ofi.ep->fid);
    }
    if (weft_ofi.mr) {
        fi_close(&weft_ofi.mr->fid);
    }
    if (weft_ofi.av) {
        fi_close(&weft_ofi.av->fid);
    }
    if (weft_ofi.cq) {
        fi_close(&weft_ofi.cq->fid);
    }
    if (weft_ofi.domain) {
        fi_close(&weft_ofi.domain->fid);
    }
    if (weft_ofi.fabric) {
        fi_close(&weft_ofi.fabric->fid);
    }
    if (weft_ofi.info) {
        weft_ofi_fab.freeinfo(weft_ofi.info);
    }
    free(weft_ofi.bufs);
    free(weft_ofi.slab);
    free(weft_ofi.addrs);
    for (int i = 0; weft_ofi.early && i < weft_ofi.npeers; i++) {
        while (weft_ofi.early[i]) {
            early_t *e    = weft_ofi.early[i];
            weft_ofi.early[i]  = e->next;
            free(e);
        }
    }
    while (weft_ofi.orphans) {
        early_t *e  = weft_ofi.orphans;
        weft_ofi.orphans = e->next;
        free(e);
    }
    free(weft_ofi.early);
    free(weft_ofi.peer_uid);
    free(weft_ofi.inflight);
    free(weft_ofi.gone);
    free(weft_ofi.ka_since);
    free(weft_ofi.talked);
    free(weft_ofi.send_seq);
    free(weft_ofi.recv_seq);
    memset(&weft_ofi, 0, sizeof(weft_ofi));
}

const char *ofi_provider(void)
{
    return weft_ofi.info ? weft_ofi.info->fabric_attr->prov_name : "";
}

static unsigned ofi_caps(void)
{
    return (weft_ofi.has_rma ? WEFT_TRANSPORT_CAP_RMA : 0) |
           (ofi_win_rma_ok() ? WEFT_TRANSPORT_CAP_ONESIDED : 0);
}

static size_t ofi_max_payload(void)
{
    return weft_ofi.max_payload;
}

const weft_transport_ops_t weft_ofi_ops = {
    .size        = sizeof(weft_transport_ops_t),
    .name        = "ofi",
    .init        = ofi_init,
    .fini        = ofi_fini,
    .provider    = ofi_provider,
    .caps        = ofi_caps,
    .max_payload = ofi_max_payload,
    .am_reserve  = ofi_am_reserve,
    .am_commit   = ofi_am_commit,
    .progress    = ofi_progress,
    .busy        = ofi_busy,
    .quiesce_start = ofi_quiesce_start,
    .quiesce_done  = ofi_quiesce_done,
    .wait_fd     = ofi_wait_fd,
    .wait_ready  = ofi_wait_ready,
    .mem_register   = ofi_mem_register,
    .mem_deregister = ofi_mem_deregister,
    .rma_read       = ofi_rma_read,
    .max_rma        = ofi_max_rma,
    .rma_limit      = ofi_rma_limit,
    .dyn_open       = ofi_dyn_open,
    .dyn_name       = ofi_dyn_name,
    .dyn_add_peer   = ofi_dyn_add_peer,
    .dyn_forget     = ofi_dyn_forget,
    .win_register   = ofi_win_register,
    .rma_put        = ofi_rma_put,
    .rma_get        = ofi_rma_get,
};
