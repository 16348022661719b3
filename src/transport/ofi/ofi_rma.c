/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The Weft authors
 *
 * The libfabric netmod (see ofi.c): RGET reads and one-sided window RMA.
 */
#include "transport/ofi/ofi_internal.h"

#include <stdlib.h>

#include "util/log.h"
#include "util/tunables.h"

/* ---- RMA (RGET) -------------------------------------------------------- */

weft_status_t ofi_mem_register(void *buf, size_t len, int remote, uint64_t *key_p,
                                      uint64_t *addr_p, void **handle_p)
{
    static uint64_t next_key = 1; /* used only without FI_MR_PROV_KEY */
    struct fid_mr  *mr;
    int             rc;

    rc = fi_mr_reg(weft_ofi.domain, buf, len, remote ? FI_REMOTE_READ : FI_READ, 0, next_key++, 0,
                   &mr, NULL);
    if (rc != 0) {
        weft_log_error("netmod: fi_mr_reg of %zu bytes failed: %s", len,
                       weft_ofi_fab.strerror(-rc));
        return rc == -FI_EAGAIN ? WEFT_AGAIN : WEFT_ERROR;
    }
    *key_p    = fi_mr_key(mr);
    *addr_p   = (weft_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf
                                                                          : 0;
    *handle_p = mr;
    return WEFT_OK;
}

void ofi_mem_deregister(void *handle)
{
    if (handle) {
        fi_close(&((struct fid_mr *)handle)->fid);
    }
}

weft_status_t ofi_rma_read(int src, void *local, size_t len, void *local_handle,
                                  uint64_t raddr, uint64_t key, void *cookie)
{
    ofi_buf_t *op;
    ssize_t    rc;

    if (ofi_peer_gone(src)) { /* see win_rma */
        return WEFT_UNREACHABLE;
    }
    if ((op = calloc(1, sizeof(*op))) == NULL) {
        return WEFT_AGAIN;
    }
    op->is_rx = 2; /* an RMA read: data is the caller's cookie */
    op->dst   = src;
    op->len   = len;
    op->data  = cookie;
    rc = fi_read(weft_ofi.ep, local, len, local_handle ? fi_mr_desc(local_handle) : NULL,
                 weft_ofi.addrs[src], raddr, key, op);
    if (rc == 0) {
        weft_ofi.tx_inflight++;
        return WEFT_OK;
    }
    free(op);
    if (rc == -FI_EAGAIN) {
        return WEFT_AGAIN;
    }
    ofi_peer_failed(src, (int)-rc, "reading remote memory");
    return WEFT_UNREACHABLE;
}

size_t ofi_rma_limit(void)
{
    size_t m = weft_ofi.info ? weft_ofi.info->ep_attr->max_msg_size : 0;

    return m > ((size_t)1 << 30) || m == 0 ? (size_t)1 << 30 : m;
}

size_t ofi_max_rma(void)
{
    size_t m     = ofi_rma_limit();
    size_t chunk = (size_t)weft_tunables.NET_RMA_CHUNK_SIZE;

    /* Over TCP one long read runs into the kernel's reordering and fast
     * retransmits: 128 KiB pieces all in flight took half the time of
     * 512 KiB ones at 512 KiB-4 MiB on the family 26 VM (docs/performance.md,
     * "RMA pieces of 128 KiB"; 512 KiB pieces, "RMA pieces", beat one read). */
    return chunk > 0 && chunk < m ? chunk : m;
}

/* ---- One-sided windows ------------------------------------------------- */

/* Window RMA needs FI_RMA and no local registration (origin buffers are
 * the user's, any memory). */
int ofi_win_rma_ok(void)
{
    return weft_ofi.info != NULL && (weft_ofi.info->caps & FI_RMA) != 0 &&
           (weft_ofi.info->domain_attr->mr_mode & FI_MR_LOCAL) == 0;
}

weft_status_t ofi_win_register(void *buf, size_t len, uint64_t *key_p, uint64_t *addr_p,
                                      void **handle_p)
{
    static uint64_t next_key = (uint64_t)1 << 40; /* apart from mem_register's keys */
    struct fid_mr  *mr;
    int             rc;

    rc = fi_mr_reg(weft_ofi.domain, buf, len, FI_REMOTE_READ | FI_REMOTE_WRITE, 0, next_key++, 0,
                   &mr, NULL);
    if (rc != 0) {
        weft_log_error("netmod: fi_mr_reg of a %zu-byte window failed: %s", len,
                       weft_ofi_fab.strerror(-rc));
        return WEFT_ERROR;
    }
    *key_p    = fi_mr_key(mr);
    *addr_p   = (weft_ofi.info->domain_attr->mr_mode & FI_MR_VIRT_ADDR) ? (uint64_t)(uintptr_t)buf
                                                                          : 0;
    *handle_p = mr;
    return WEFT_OK;
}

/* One window put or get; the op's context carries cnt (is_rx 3). Puts ask
 * for delivery completion: the data is in the target's memory when it
 * completes, so the operation is complete (MPI remote completion) then. */
static weft_status_t win_rma(int peer, void *local, size_t len, uint64_t raddr, uint64_t key,
                             weft_rma_count_t *cnt, int put)
{
    ofi_buf_t        *op;
    struct iovec      iov  = {local, len};
    struct fi_rma_iov riov = {raddr, len, key};
    struct fi_msg_rma msg  = {0};
    ssize_t           rc;

    /* Nothing more goes to a peer given up on: the net provider
     * dereferences the dead connection (a put's further pieces after the
     * first one failed crashed in fi_writemsg, test_fault rmaput). */
    if (ofi_peer_gone(peer)) {
        cnt->failed = cnt->failed ? cnt->failed : FI_ENOTCONN;
        return WEFT_UNREACHABLE;
    }
    /* Completions in flight stay within the CQ: at most OFI_TX_BUFS window
     * operations beyond the sends (whose buffers bound them). */
    if (weft_ofi.tx_inflight >= OFI_TX_BUFS || (op = calloc(1, sizeof(*op))) == NULL) {
        return WEFT_AGAIN;
    }
    op->is_rx = 3;
    op->dst   = peer;
    op->len   = len;
    op->data  = (char *)cnt;
    msg.msg_iov       = &iov;
    msg.iov_count     = 1;
    msg.addr          = weft_ofi.addrs[peer];
    msg.rma_iov       = &riov;
    msg.rma_iov_count = 1;
    msg.context       = op;
    rc = put ? fi_writemsg(weft_ofi.ep, &msg, FI_COMPLETION | FI_DELIVERY_COMPLETE)
             : fi_readmsg(weft_ofi.ep, &msg, FI_COMPLETION);
    if (rc == 0) {
        weft_ofi.tx_inflight++;
        weft_ofi.inflight[peer]++; /* a lost peer's are written off at finalize (stuck_sends) */
        cnt->pending++;
        return WEFT_OK;
    }
    free(op);
    if (rc == -FI_EAGAIN) {
        return WEFT_AGAIN;
    }
    cnt->failed = (int)-rc;
    ofi_peer_failed(peer, (int)-rc,
                    put ? "writing remote window memory" : "reading remote window memory");
    return WEFT_UNREACHABLE;
}

weft_status_t ofi_rma_put(int peer, const void *local, size_t len, uint64_t raddr,
                                 uint64_t key, weft_rma_count_t *cnt)
{
    return win_rma(peer, (void *)local, len, raddr, key, cnt, 1);
}

weft_status_t ofi_rma_get(int peer, void *local, size_t len, uint64_t raddr, uint64_t key,
                                 weft_rma_count_t *cnt)
{
    return win_rma(peer, local, len, raddr, key, cnt, 0);
}

void ofi_win_rma_done(ofi_buf_t *b, int err)
{
    weft_rma_count_t *cnt = (weft_rma_count_t *)b->data;

    weft_ofi.tx_inflight--;
    weft_ofi.inflight[b->dst]--;
    cnt->pending--;
    if (err) {
        cnt->failed = err;
    }
    free(b);
}

