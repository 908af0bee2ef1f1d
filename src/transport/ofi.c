/* OFI (libfabric) transport: setup, peers, the receive path and progress.
 * Design in ofi_int.h; sending in ofi_tx.c; rendezvous in ofi_rndv.c.
 *
 * Providers report a dead peer differently (research: net in 1-6 ms,
 * sockets in 8-16 ms, tcp;ofi_rxm, shm and udp;ofi_rxd never).  What they do
 * report, CQ error entries and refused sends, goes through the one
 * classification table with the provider's context; what they do not is the
 * heartbeat detector's, whose verdict closes the endpoint (forced), which
 * ends everything in flight with that peer here. */
#include "transport/ofi_int.h"
#include "common/fs_log.h"
#include "common/fs_time.h"
#include "failure/fault_status.h"

#include <rdma/fi_cm.h>
#include <rdma/fi_errno.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The only provider-specific knowledge.  eager_max keeps every message
 * below the provider's own rendezvous (rxm's segfaults when a dead peer's
 * rendezvous matches; shm's hangs to a dead peer and fails with FI_EIO
 * from one).  fault_ctx: whether a timeout-like error may just be a slow
 * peer (hardware fabrics) or the link reports process death (sockets).
 * conn: connection-based (over TCP): one side of a pair connects
 * (fs_ofi_connect) and control messages complete on delivery (ofi_tx.c).
 * kernel_tx: the provider completes a plain send once it has written all
 * of it into the kernel's socket (net's transmit path), which sends it
 * whether this process runs again or not: the "left" that eager
 * completion needs, without FI_TRANSMIT_COMPLETE's acknowledgement.
 * Rows not verified are read from the providers' sources only. */
static const fs_ofi_prov_t fs_ofi_provs[] = {
    {"net",           65536, FS_FAULT_CTX_OP,        1, 1, 1},
    /* net's name from libfabric 1.18 on (the same provider, xnet) */
    {"tcp",           65536, FS_FAULT_CTX_OP,        1, 1, 1},
    {"sockets",       16384, FS_FAULT_CTX_OP,        1, 1, 0},
    {"tcp;ofi_rxm",    8192, FS_FAULT_CTX_OP,        1, 1, 0},
    {"shm",            4000, FS_FAULT_CTX_OP,        1, 0, 0},
    {"udp;ofi_rxd",    8192, FS_FAULT_CTX_OP,        1, 0, 0},
    {"verbs;ofi_rxm",  8192, FS_FAULT_CTX_SLOW_LINK, 0, 1, 0},
    {"efa",            8192, FS_FAULT_CTX_SLOW_LINK, 0, 0, 0},
    {"cxi",           16384, FS_FAULT_CTX_SLOW_LINK, 0, 0, 0},
    {"psm3",           8192, FS_FAULT_CTX_SLOW_LINK, 0, 0, 0},
    {"opx",            8192, FS_FAULT_CTX_SLOW_LINK, 0, 0, 0},
};
static const fs_ofi_prov_t fs_ofi_prov_default = {"", 8192, FS_FAULT_CTX_SLOW_LINK, 0, 0, 0};

#define FS_OFI_RECVS      128     /* receives posted (at most rx size / 2) */

static const fs_ofi_prov_t *fs_ofi_prov_find(const char *name)
{
    size_t i;

    for (i = 0; i < sizeof(fs_ofi_provs) / sizeof(fs_ofi_provs[0]); ++i) {
        if (strcmp(fs_ofi_provs[i].name, name) == 0) {
            return &fs_ofi_provs[i];
        }
    }
    return &fs_ofi_prov_default;
}

void fs_ofi_bad(fs_tl_t *tl, const char *what)
{
    if (tl->warned < 16) {
        ++tl->warned;
        FS_WARN("OFI: dropping %s%s", what,
                (tl->warned == 16) ? " (no more such warnings)" : "");
    }
}

fs_status_t fs_ofi_mr_reg(fs_tl_t *tl, void *mem, size_t len, struct fid_mr **mr_p,
                          void **desc_p)
{
    int rc;

    *mr_p   = NULL;
    *desc_p = NULL;
    if (!tl->mr_local) {
        return FS_OK;
    }
    rc = fi_mr_reg(tl->domain, mem, len, FI_SEND | FI_RECV, 0, tl->mr_key++, 0,
                   mr_p, NULL);
    if ((rc == 0) && (tl->info->domain_attr->mr_mode & FI_MR_ENDPOINT)) {
        rc = fi_mr_bind(*mr_p, &tl->ep->fid, 0);
        rc = rc ? rc : fi_mr_enable(*mr_p);
    }
    if (rc != 0) {
        FS_ERROR("OFI: cannot register %zu bytes: %s", len, fs_ofi_strerror(-rc));
        if (*mr_p != NULL) {
            fi_close(&(*mr_p)->fid);
            *mr_p = NULL;
        }
        return FS_ERR_NO_MEMORY;
    }
    *desc_p = fi_mr_desc(*mr_p);
    return FS_OK;
}

/* ---- peers ----------------------------------------------------------------- */

static fs_list_t *fs_ofi_bucket(fs_tl_t *tl, const uint8_t *name, size_t len)
{
    uint32_t h = 2166136261u;
    size_t i;

    for (i = 0; i < len; ++i) {
        h = (h ^ name[i]) * 16777619u;
    }
    return &tl->buckets[h % FS_OFI_HASH];
}

/* The peer at an address; a new one is inserted into the AV (first contact:
 * the only allocation outside setup and pool growth). */
fs_tl_ep_t *fs_ofi_peer_get(fs_tl_t *tl, const void *name, size_t len)
{
    fs_list_t *bucket = fs_ofi_bucket(tl, name, len), *e;
    fs_tl_ep_t *peer;
    int rc;

    for (e = bucket->next; e != bucket; e = e->next) {
        peer = fs_container_of(e, fs_tl_ep_t, hash);
        if ((peer->name_len == len) && (memcmp(peer->name, name, len) == 0)) {
            return peer;
        }
    }
    peer = calloc(1, sizeof(*peer));
    if (peer == NULL) {
        return NULL;
    }
    rc = fi_av_insert(tl->av, name, 1, &peer->addr, 0, NULL);
    if (rc != 1) {
        FS_ERROR("OFI: cannot add a peer's address: %s",
                 (rc < 0) ? fs_ofi_strerror(-rc) : "rejected by the provider");
        free(peer);
        return NULL;
    }
    peer->tl       = tl;
    peer->name_len = len;
    memcpy(peer->name, name, len);
    fs_list_init(&peer->pending);
    fs_list_init(&peer->posted);
    fs_list_init(&peer->pend_elem);
    fs_list_init(&peer->rndv);
    fs_list_init(&peer->report_elem);
    fs_list_init(&peer->close_elem);
    fs_list_push_tail(bucket, &peer->hash);
    return peer;
}

/* No more traffic with peer: what waits for it ends from progress, with
 * the class of row (NULL: the engine closed it, FS_ERR_CANCELED). */
static void fs_ofi_peer_stop(fs_tl_t *tl, fs_tl_ep_t *peer, const fs_fault_row_t *row)
{
    peer->failed      = 1;
    peer->fail_row    = row;
    peer->fail_status = (row != NULL) ? fs_fault_to_status(row->cls) : FS_ERR_CANCELED;
    fs_ofi_drop_sends(tl, peer, peer->fail_status);
    fs_ofi_rndv_fail_peer(tl, peer, peer->fail_status);
}

void fs_ofi_peer_fail(fs_tl_t *tl, fs_tl_ep_t *peer, const fs_fault_row_t *row)
{
    if (peer->failed) {
        return;
    }
    fs_ofi_peer_stop(tl, peer, row);
    if (!fs_list_is_linked(&peer->report_elem)) {
        fs_list_push_tail(&tl->report, &peer->report_elem);
    }
}

static int fs_ofi_peer_quiet(const fs_tl_ep_t *peer)
{
    return peer->failed || (fs_list_is_empty(&peer->posted) && (peer->tx_rndv == 0) &&
                            fs_list_is_empty(&peer->pending));
}

/* ep_error, then closes that finished, then operations: every engine
 * callback runs here, in progress. */
static unsigned fs_ofi_report(fs_tl_t *tl)
{
    fs_list_t *e, *next;
    unsigned count = 0;

    while ((e = fs_list_pop_head(&tl->report)) != NULL) {
        fs_tl_ep_t *peer = fs_container_of(e, fs_tl_ep_t, report_elem);

        if ((peer->user != NULL) && !peer->reported && (peer->fail_row != NULL)) {
            peer->reported = 1;
            tl->up.ep_error(tl->up_arg, peer->user, peer->fail_row);
            ++count;
        }
    }
    for (e = tl->closing.next; e != &tl->closing; e = next) {
        fs_tl_ep_t *peer = fs_container_of(e, fs_tl_ep_t, close_elem);
        fs_tl_op_t *op   = peer->close_op;

        next = e->next;
        if (!fs_ofi_peer_quiet(peer)) {
            continue;
        }
        fs_list_remove(e);
        peer->close_op = NULL;
        peer->user     = NULL;
        op->busy       = 0;
        op->cb(op, FS_OK, 0);
        ++count;
        next = tl->closing.next;    /* the callback may have closed others */
    }
    return count + fs_ofi_rndv_report(tl);
}

/* ---- connections ----------------------------------------------------------- */

/* Connection-based providers (net 1.17, xnet_rdm_cm.c) connect a pair of
 * endpoints on the first send, and when both sides send first at once they
 * settle the collision by closing one of the two sockets; a send queued on
 * it can then fail with FI_ENOTCONN/EPIPE although the peer is alive, which
 * reads as a death (seen after kills, when survivors first talk to each
 * other all at once).  So one side of each pair connects: the one with the
 * lower address sends a HELLO when the endpoint is created; the other
 * holds its sends to that peer until the HELLO arrives (at most
 * FS_OFI_HOLD_S, then it connects itself). */
static int fs_ofi_is_connector(const fs_tl_t *tl, const fs_tl_ep_t *peer)
{
    if (tl->name_len != peer->name_len) {
        return tl->name_len < peer->name_len;
    }
    return memcmp(tl->name, peer->name, tl->name_len) < 0;
}

static void fs_ofi_connect(fs_tl_t *tl, fs_tl_ep_t *peer)
{
    fs_ofi_wire_t w = {FS_OFI_HELLO, 0, 0, (uint32_t)tl->name_len};
    fs_ofi_slot_t *slot;

    if (!tl->prov->conn || peer->hello_seen || peer->hello_sent || peer->failed) {
        return;
    }
    if (!fs_ofi_is_connector(tl, peer)) {
        peer->hold       = 1;
        peer->hold_until = fs_time_now() + FS_OFI_HOLD_S;
        return;
    }
    slot = fs_ofi_slot_get(tl);
    if (slot == NULL) {
        return;     /* the first send connects */
    }
    memcpy(slot->buf, &w, sizeof(w));
    memcpy(slot->buf + sizeof(w), tl->name, tl->name_len);
    slot->len        = sizeof(w) + tl->name_len;
    peer->hello_sent = 1;
    (void)fs_ofi_post(tl, peer, slot);
}

static void fs_ofi_rx_hello(fs_tl_t *tl, const uint8_t *name, size_t len)
{
    fs_tl_ep_t *peer = fs_ofi_peer_get(tl, name, len);

    if (peer == NULL) {
        return;
    }
    peer->hello_seen = 1;
    peer->hold       = 0;   /* progress posts what waited */
}

/* ---- receive path ---------------------------------------------------------- */

static void fs_ofi_rx(fs_tl_t *tl, const uint8_t *msg, size_t len)
{
    fs_ofi_wire_t w;
    fs_tl_rx_t rx = {NULL, 0};

    if (fs_unlikely(len < sizeof(w))) {
        fs_ofi_bad(tl, "a message shorter than its header");
        return;
    }
    memcpy(&w, msg, sizeof(w));
    switch (w.type) {
    case FS_OFI_EAGER:
        if ((w.hdr_len > len - sizeof(w)) || (w.am_id >= FS_AM_COUNT)) {
            break;
        }
        (void)tl->up.am_recv(tl->up_arg, w.am_id, msg + sizeof(w), w.hdr_len,
                             (void *)(msg + sizeof(w) + w.hdr_len),
                             len - sizeof(w) - w.hdr_len, &rx);
        return;
    case FS_OFI_RTS:
        if (len >= sizeof(fs_ofi_rts_t)) {
            fs_ofi_rx_rts(tl, msg, len);
            return;
        }
        break;
    case FS_OFI_CTS:
        fs_ofi_rx_cts(tl, msg, len);
        return;
    case FS_OFI_DATA:
        if (len >= sizeof(fs_ofi_data_t)) {
            fs_ofi_rx_data(tl, msg, len);
            return;
        }
        break;
    case FS_OFI_HELLO:
        if ((w.aux > 0) && (w.aux <= FS_OFI_ADDR_MAX) && (len == sizeof(w) + w.aux)) {
            fs_ofi_rx_hello(tl, msg + sizeof(w), w.aux);
            return;
        }
        break;
    default:
        break;
    }
    fs_ofi_bad(tl, "a malformed message");
}

static fs_status_t fs_ofi_rbuf_post(fs_tl_t *tl, fs_ofi_rbuf_t *rb)
{
    ssize_t rc;

    do {
        rc = fi_recv(tl->ep, rb->mem, tl->slot_size, rb->desc, FI_ADDR_UNSPEC, &rb->ctx);
        if (rc == -FI_EAGAIN) {
            (void)fi_cq_read(tl->cq, NULL, 0);  /* drive the provider */
        }
    } while (rc == -FI_EAGAIN);
    if (rc != 0) {
        FS_ERROR("OFI: cannot post a receive buffer: %s", fs_ofi_strerror((int)-rc));
        return FS_ERR_LOCAL;
    }
    return FS_OK;
}

static void fs_ofi_complete(fs_tl_t *tl, const struct fi_cq_data_entry *ev)
{
    fs_ofi_ctx_t *ctx = ev->op_context;

    if (ctx->kind == FS_OFI_CTX_SLOT) {
        fs_ofi_send_done(tl, fs_container_of(ctx, fs_ofi_slot_t, ctx), NULL);
        return;
    }
    fs_ofi_rx(tl, fs_container_of(ctx, fs_ofi_rbuf_t, ctx)->mem, ev->len);
    (void)fs_ofi_rbuf_post(tl, fs_container_of(ctx, fs_ofi_rbuf_t, ctx));
}

static unsigned fs_ofi_cq_error(fs_tl_t *tl)
{
    struct fi_cq_err_entry err;
    const fs_fault_row_t *row;
    fs_ofi_ctx_t *ctx;

    memset(&err, 0, sizeof(err));
    if (fi_cq_readerr(tl->cq, &err, 0) != 1) {
        return 0;
    }
    row = fs_fault_classify(FS_FAULT_SRC_OFI, err.err, err.prov_errno,
                            tl->prov->fault_ctx);
    /* one line per status, the same shape as a refused send's (ofi_tx.c):
     * bench/ofi_errors.sh tabulates them per provider */
    FS_INFO("OFI %s: completion error %d (%s), provider error %d (%s): %s",
            tl->info->fabric_attr->prov_name, err.err, fs_ofi_strerror(err.err),
            err.prov_errno, fi_cq_strerror(tl->cq, err.prov_errno, err.err_data, NULL, 0),
            fs_fault_class_name(row->cls));
    ctx = err.op_context;
    if (ctx == NULL) {
        return 1;
    }
    if (ctx->kind == FS_OFI_CTX_SLOT) {
        fs_ofi_send_done(tl, fs_container_of(ctx, fs_ofi_slot_t, ctx), row);
    } else {
        /* a receive failed (no sender known): the buffer goes back */
        (void)fs_ofi_rbuf_post(tl, fs_container_of(ctx, fs_ofi_rbuf_t, ctx));
    }
    return 1;
}

/* Completions read by fs_ofi_tx_flush wait in tl->stash for progress. */
static unsigned fs_ofi_progress_stash(fs_tl_t *tl)
{
    struct fi_cq_data_entry ev[FS_OFI_STASH];
    unsigned i, n = tl->nstash;

    memcpy(ev, tl->stash, n * sizeof(ev[0]));
    tl->nstash = 0;
    for (i = 0; i < n; ++i) {
        fs_ofi_complete(tl, &ev[i]);
    }
    return n;
}

static unsigned fs_ofi_progress(fs_tl_t *tl)
{
    struct fi_cq_data_entry ev[FS_OFI_BATCH];
    ssize_t n, i;
    unsigned count = 0;

    if (fs_unlikely(tl->nstash > 0)) {
        count = fs_ofi_progress_stash(tl);
    }
    n = fi_cq_read(tl->cq, ev, FS_OFI_BATCH);
    if (n > 0) {
        for (i = 0; i < n; ++i) {
            fs_ofi_complete(tl, &ev[i]);
        }
        count += (unsigned)n;
    } else if (n == -FI_EAVAIL) {
        count += fs_ofi_cq_error(tl);
    }
    if (fs_unlikely(!fs_list_is_empty(&tl->pending_peers))) {
        count += fs_ofi_retry_pending(tl);
    }
    if (fs_unlikely(!fs_list_is_empty(&tl->report) || !fs_list_is_empty(&tl->closing) ||
                    !fs_list_is_empty(&tl->done))) {
        count += fs_ofi_report(tl);
    }
    return count;
}

/* Whether every send to a live peer has left (its completion was read). */
static int fs_ofi_tx_idle(fs_tl_t *tl)
{
    unsigned i;
    fs_list_t *e;

    if (!fs_list_is_empty(&tl->pending_peers)) {
        return 0;
    }
    for (i = 0; i < FS_OFI_HASH; ++i) {
        for (e = tl->buckets[i].next; e != &tl->buckets[i]; e = e->next) {
            const fs_tl_ep_t *peer = fs_container_of(e, fs_tl_ep_t, hash);

            if (!peer->failed && !fs_list_is_empty(&peer->posted)) {
                return 0;
            }
        }
    }
    return 1;
}

/* Drives the provider until what was sent has left, without running any
 * engine callback: completions read here wait in tl->stash.  A send's slot
 * leaves its peer's posted list when its completion is read. */
static void fs_ofi_tx_flush(fs_tl_t *tl, double timeout)
{
    double deadline = fs_time_now() + timeout;
    ssize_t n, i;

    while (!fs_ofi_tx_idle(tl) && (tl->nstash < FS_OFI_STASH) &&
           (fs_time_now() < deadline)) {
        (void)fs_ofi_retry_pending(tl);
        n = fi_cq_read(tl->cq, &tl->stash[tl->nstash], FS_OFI_STASH - tl->nstash);
        if ((n < 0) && (n != -FI_EAGAIN)) {
            return;     /* an error entry: progress reads it */
        }
        for (i = 0; i < n; ++i) {
            fs_ofi_ctx_t *ctx = tl->stash[tl->nstash + (unsigned)i].op_context;

            if (ctx->kind == FS_OFI_CTX_SLOT) {
                fs_list_remove(&fs_container_of(ctx, fs_ofi_slot_t, ctx)->elem);
            }
        }
        if (n > 0) {
            tl->nstash += (unsigned)n;
        }
    }
}

/* ---- endpoints ------------------------------------------------------------- */

static fs_status_t fs_ofi_ep_create(fs_tl_t *tl, const void *addr, size_t addr_len,
                                    void *ep_user, fs_tl_ep_t **ep_p)
{
    fs_tl_ep_t *peer;

    if ((addr_len == 0) || (addr_len > FS_OFI_ADDR_MAX)) {
        FS_ERROR("OFI: a peer address of %zu bytes (at most %u)", addr_len,
                 FS_OFI_ADDR_MAX);
        return FS_ERR_INVALID;
    }
    peer = fs_ofi_peer_get(tl, addr, addr_len);
    if (peer == NULL) {
        return FS_ERR_LOCAL;
    }
    peer->user     = ep_user;
    peer->reported = 0;
    if (peer->failed && (peer->fail_row == NULL)) {
        peer->failed = 0;       /* closed by the engine earlier: open again */
    } else if (peer->failed && !fs_list_is_linked(&peer->report_elem)) {
        fs_list_push_tail(&tl->report, &peer->report_elem);    /* tell the new user */
    }
    fs_ofi_connect(tl, peer);
    *ep_p = peer;
    return FS_OK;
}

/* A forced close (or one of a failed peer) ends everything with the peer
 * at once, its callbacks from progress; a flushing close waits until what
 * was sent has left (completions, rendezvous taken or dropped).  The peer
 * object itself stays until fini: completions in flight point to it. */
static fs_status_t fs_ofi_ep_close(fs_tl_t *tl, fs_tl_ep_t *peer, int force,
                                   fs_tl_op_t *op)
{
    if (force || peer->failed) {
        if (!peer->failed) {
            fs_ofi_peer_stop(tl, peer, NULL);
        }
        peer->user = NULL;
        return FS_OK;
    }
    if (fs_ofi_peer_quiet(peer)) {
        peer->user = NULL;
        return FS_OK;
    }
    peer->close_op = op;
    op->busy       = 1;
    op->handle     = NULL;
    fs_list_push_tail(&tl->closing, &peer->close_elem);
    return FS_INPROGRESS;
}

/* ---- setup ----------------------------------------------------------------- */

static struct fi_info *fs_ofi_getinfo_named(const char *provider, int quiet);

/* "net" became "tcp" in libfabric 1.18 (the old tcp provider, messages
 * only, gave way to it): a job that names net runs on either. */
static struct fi_info *fs_ofi_getinfo(const char *provider)
{
    struct fi_info *info;

    if ((provider == NULL) || (strcmp(provider, "net") != 0)) {
        return fs_ofi_getinfo_named(provider, 0);
    }
    info = fs_ofi_getinfo_named("net", 1);
    if (info == NULL) {
        FS_INFO("OFI: no provider named net: using tcp, its name since libfabric 1.18");
        info = fs_ofi_getinfo_named("tcp", 0);
    }
    return info;
}

static struct fi_info *fs_ofi_getinfo_named(const char *provider, int quiet)
{
    struct fi_info *hints = fs_ofi_lib.dupinfo(NULL), *info = NULL;
    int rc;

    if (hints == NULL) {
        return NULL;
    }
    hints->ep_attr->type          = FI_EP_RDM;
    hints->caps                   = FI_MSG;
    hints->mode                   = FI_CONTEXT | FI_CONTEXT2;
    hints->domain_attr->mr_mode   = FI_MR_LOCAL | FI_MR_ALLOCATED | FI_MR_VIRT_ADDR |
                                    FI_MR_PROV_KEY | FI_MR_ENDPOINT;
    hints->domain_attr->threading = FI_THREAD_DOMAIN;
    hints->tx_attr->msg_order     = FI_ORDER_SAS;
    hints->rx_attr->msg_order     = FI_ORDER_SAS;
    hints->tx_attr->op_flags      = FI_TRANSMIT_COMPLETE;
    if ((provider != NULL) && (*provider != '\0')) {
        hints->fabric_attr->prov_name = strdup(provider);
    }
    rc = fs_ofi_lib.getinfo(FI_VERSION(1, 10), NULL, NULL, 0, hints, &info);
    fs_ofi_lib.freeinfo(hints);
    if ((rc != 0) && !quiet) {
        FS_ERROR("OFI: no provider%s%s offers reliable datagrams with send-after-send "
                 "order: %s",
                 (provider && *provider) ? " named " : "", provider ? provider : "",
                 fs_ofi_strerror(-rc));
    }
    return (rc == 0) ? info : NULL;
}

/* shm names an endpoint after its process id, and a killed process leaves
 * its file in /dev/shm: a later process with the same id failed to open
 * its endpoint (seen after a few hundred kills).  A name of our own that
 * no later process repeats avoids that. */
static void fs_ofi_shm_name(fs_tl_t *tl)
{
    char name[64];
    struct timespec ts;

    if ((strcmp(tl->info->fabric_attr->prov_name, "shm") != 0) ||
        (tl->info->addr_format != FI_ADDR_STR)) {
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    snprintf(name, sizeof(name), "fi_shm://failstop-%d-%llx", (int)getpid(),
             (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    free(tl->info->src_addr);
    tl->info->src_addr    = strdup(name);
    tl->info->src_addrlen = (tl->info->src_addr != NULL) ? strlen(name) + 1 : 0;
}

static fs_status_t fs_ofi_open(fs_tl_t *tl)
{
    struct fi_cq_attr cq_attr;
    struct fi_av_attr av_attr;

    memset(&cq_attr, 0, sizeof(cq_attr));
    cq_attr.format   = FI_CQ_FORMAT_DATA;
    cq_attr.wait_obj = FI_WAIT_NONE;
    memset(&av_attr, 0, sizeof(av_attr));
    av_attr.type = tl->info->domain_attr->av_type;
    fs_ofi_shm_name(tl);
    /* over TCP, FI_TRANSMIT_COMPLETE waits for an acknowledgement from the
     * peer's provider: a second message and a round trip per send */
    if (tl->prov->kernel_tx) {
        tl->info->tx_attr->op_flags = FI_COMPLETION;
    }
    if ((fs_ofi_lib.fabric(tl->info->fabric_attr, &tl->fabric, NULL) != 0) ||
        (fi_domain(tl->fabric, tl->info, &tl->domain, NULL) != 0) ||
        (fi_cq_open(tl->domain, &cq_attr, &tl->cq, NULL) != 0) ||
        (fi_av_open(tl->domain, &av_attr, &tl->av, NULL) != 0) ||
        (fi_endpoint(tl->domain, tl->info, &tl->ep, NULL) != 0) ||
        (fi_ep_bind(tl->ep, &tl->cq->fid, FI_TRANSMIT | FI_RECV) != 0) ||
        (fi_ep_bind(tl->ep, &tl->av->fid, 0) != 0) ||
        (fi_enable(tl->ep) != 0)) {
        FS_ERROR("OFI: cannot open an endpoint of provider %s",
                 tl->info->fabric_attr->prov_name);
        return FS_ERR_LOCAL;
    }
    tl->name_len = sizeof(tl->name);
    if (fi_getname(&tl->ep->fid, tl->name, &tl->name_len) != 0) {
        FS_ERROR("OFI: no address for the endpoint (or longer than %u bytes)",
                 FS_OFI_ADDR_MAX);
        return FS_ERR_LOCAL;
    }
    return FS_OK;
}

/* One receive per message, each of slot_size bytes, from one registered
 * region.  (Multi-receive buffers would waste less memory, but shm 1.17
 * leaks a receive entry now and then when they are used in both directions:
 * after ~150 buffers every post failed with -FI_ENOMEM.) */
static fs_status_t fs_ofi_rbufs_post(fs_tl_t *tl)
{
    size_t n = tl->info->rx_attr->size / 2, i;
    void *desc;

    n = (n > FS_OFI_RECVS) ? FS_OFI_RECVS : ((n < 8) ? 8 : n);
    tl->rbufs   = calloc(n, sizeof(*tl->rbufs));
    tl->rmem    = aligned_alloc(64, n * tl->slot_size);
    if ((tl->rbufs == NULL) || (tl->rmem == NULL) ||
        (fs_ofi_mr_reg(tl, tl->rmem, n * tl->slot_size, &tl->rmr, &desc) != FS_OK)) {
        return FS_ERR_NO_MEMORY;
    }
    for (i = 0; i < n; ++i) {
        fs_ofi_rbuf_t *rb = &tl->rbufs[i];

        rb->ctx.kind = FS_OFI_CTX_RBUF;
        rb->mem      = tl->rmem + i * tl->slot_size;
        rb->desc     = desc;
        ++tl->nrbufs;
        if (fs_ofi_rbuf_post(tl, rb) != FS_OK) {
            return FS_ERR_LOCAL;
        }
    }
    return FS_OK;
}

static void fs_ofi_fini(fs_tl_t *tl)
{
    unsigned i;

    if (tl->ep != NULL) {
        fi_close(&tl->ep->fid);     /* cancels the posted receives */
    }
    if (tl->rmr != NULL) {
        fi_close(&tl->rmr->fid);
    }
    free(tl->rmem);
    free(tl->rbufs);
    fs_ofi_slots_free(tl);
    if (tl->av != NULL) {
        fi_close(&tl->av->fid);
    }
    if (tl->cq != NULL) {
        fi_close(&tl->cq->fid);
    }
    if (tl->domain != NULL) {
        fi_close(&tl->domain->fid);
    }
    if (tl->fabric != NULL) {
        fi_close(&tl->fabric->fid);
    }
    for (i = 0; i < FS_OFI_HASH; ++i) {
        fs_list_t *e;
        while ((e = fs_list_pop_head(&tl->buckets[i])) != NULL) {
            free(fs_container_of(e, fs_tl_ep_t, hash));
        }
    }
    fs_ofi_id_cleanup(&tl->ids);
    fs_mpool_cleanup(&tl->rndvs);
    if (tl->info != NULL) {
        fs_ofi_lib.freeinfo(tl->info);
    }
    free(tl);
}

static void fs_ofi_lists_init(fs_tl_t *tl)
{
    unsigned i;

    for (i = 0; i < FS_OFI_HASH; ++i) {
        fs_list_init(&tl->buckets[i]);
    }
    fs_list_init(&tl->pending_peers);
    fs_list_init(&tl->report);
    fs_list_init(&tl->closing);
    fs_list_init(&tl->done);
    fs_list_init(&tl->free_slots);
}

static fs_status_t fs_ofi_init(const fs_tl_config_t *cfg, const fs_tl_upcalls_t *up,
                               void *up_arg, fs_tl_t **tl_p)
{
    fs_tl_t *tl;
    fs_status_t status = fs_ofi_lib_open();

    if (status != FS_OK) {
        return status;
    }
    tl = calloc(1, sizeof(*tl));
    if (tl == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    status = FS_ERR_LOCAL;
    tl->up     = *up;
    tl->up_arg = up_arg;
    tl->dt_ops = cfg->dt_ops;
    fs_ofi_lists_init(tl);
    fs_mpool_init(&tl->rndvs, "ofi-rndv", sizeof(fs_ofi_rndv_t), 256, 0, NULL);
    tl->info = fs_ofi_getinfo(cfg->ofi_provider);
    if (tl->info != NULL) {
        tl->prov      = fs_ofi_prov_find(tl->info->fabric_attr->prov_name);
        tl->mr_local  = (tl->info->domain_attr->mr_mode & FI_MR_LOCAL) != 0;
        tl->eager_max = tl->prov->eager_max;
        tl->slot_size = (sizeof(fs_ofi_data_t) + tl->eager_max + 63) & ~(size_t)63;
        status        = fs_ofi_open(tl);
    }
    if (status == FS_OK) {
        status = fs_ofi_rbufs_post(tl);
    }
    if (status == FS_OK) {
        status = fs_ofi_slots_grow(tl);
    }
    if (status != FS_OK) {
        fs_ofi_fini(tl);
        return status;
    }
    FS_INFO("OFI: provider %s (%s), messages above %zu bytes by rendezvous%s",
            tl->info->fabric_attr->prov_name, tl->info->domain_attr->name,
            tl->eager_max, tl->prov->verified ? "" : "; provider not verified by failstop");
    *tl_p = tl;
    return FS_OK;
}

static fs_status_t fs_ofi_ep_describe(fs_tl_t *tl, fs_tl_ep_t *ep, char *buf, size_t len)
{
    (void)ep;   /* one provider and domain for every endpoint */
    snprintf(buf, len, "%s/%s", tl->info->fabric_attr->prov_name, tl->info->domain_attr->name);
    return FS_OK;
}

static fs_status_t fs_ofi_address(fs_tl_t *tl, const void **addr_p, size_t *len_p)
{
    *addr_p = tl->name;
    *len_p  = tl->name_len;
    return FS_OK;
}

const fs_tl_ops_t fs_tl_ofi_ops = {
    .name      = "ofi",
    .init      = fs_ofi_init,
    .fini      = fs_ofi_fini,
    .address   = fs_ofi_address,
    .ep_create = fs_ofi_ep_create,
    .ep_close  = fs_ofi_ep_close,
    .ep_flush  = NULL,
    .am_send   = fs_ofi_am_send,
    .recv_data = fs_ofi_recv_data,
    .release   = fs_ofi_release,
    .cancel    = fs_ofi_cancel,
    .progress  = fs_ofi_progress,
    .tx_flush  = fs_ofi_tx_flush,
    .ep_describe = fs_ofi_ep_describe,
};
