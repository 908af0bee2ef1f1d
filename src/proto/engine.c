/* Engine object: owns the transport, endpoints, communicators, pools. */
#include "proto/engine_int.h"

#include <stdlib.h>
#include <string.h>

/* Either wire form of a match header (hdr.h) into the full one. */
static int fs_engine_unpack_match(const void *hdr, size_t hdr_len, fs_hdr_match_t *match)
{
    fs_hdr_short_t hs;

    if (fs_likely(hdr_len == sizeof(hs))) {
        memcpy(&hs, hdr, sizeof(hs));
        match->cid   = hs.cid;
        match->tag   = hs.tag;
        match->src   = hs.src;
        match->seq   = hs.seq;
        match->flags = 0;
        match->pad   = 0;
        return 1;
    }
    if (hdr_len == sizeof(*match)) {
        memcpy(match, hdr, sizeof(*match));
        return 1;
    }
    return 0;
}

static fs_status_t fs_engine_am_recv(void *arg, unsigned am_id, const void *hdr,
                                     size_t hdr_len, void *data, size_t len,
                                     const fs_tl_rx_t *rx)
{
    fs_engine_t *engine = arg;
    fs_hdr_match_t match;
    fs_hdr_ctrl_t ctrl;

    /* UCX puts the user header after the payload, at any alignment: copy */
    if (fs_likely(am_id == FS_AM_MATCH) &&
        fs_likely(fs_engine_unpack_match(hdr, hdr_len, &match))) {
        return fs_rx_match(engine, &match, data, len, rx);
    }
    if ((am_id == FS_AM_CTRL) && (hdr_len == sizeof(ctrl))) {
        memcpy(&ctrl, hdr, sizeof(ctrl));
        fs_rx_ctrl(engine, &ctrl);
        return FS_OK;
    }
    if ((am_id == FS_AM_AGREE) && (hdr_len == sizeof(fs_hdr_agree_t)) &&
        !(rx->flags & FS_TL_RX_RNDV)) {
        fs_hdr_agree_t agree;

        memcpy(&agree, hdr, sizeof(agree));
        return fs_rx_agree(engine, &agree, data, len);
    }
    ++engine->stats.dropped_malformed;
    FS_WARN("dropping active message id %u with a %zu-byte header", am_id, hdr_len);
    if (rx->flags & FS_TL_RX_RNDV) {
        fs_engine_release_desc(engine, rx->desc);
    }
    return FS_OK;
}

static void fs_engine_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    fs_engine_t *engine = arg;
    fs_ep_t *ep         = ep_user;

    FS_DEBUG("endpoint %#llx: transport error %s (%d): %s",
             (unsigned long long)ep->id, row->name, row->code,
             fs_fault_class_name(row->cls));
    if (fs_wire_ep_error(engine, ep, &row)) {
        return;                     /* a failed connect, made again */
    }
    row = fs_peer_reread(engine, ep, row);
    if (row->cls == FS_FAULT_FLUSH) {
        fs_peer_suspect(engine, ep, row);
    } else {
        fs_peer_fail(engine, ep, row, NULL);
    }
}

static const fs_tl_upcalls_t fs_engine_upcalls = {
    .am_recv  = fs_engine_am_recv,
    .ep_error = fs_engine_ep_error,
};

static fs_status_t fs_engine_tl_init(fs_engine_t *engine,
                                     const fs_engine_config_t *config)
{
    fs_tl_config_t tl_config;

    tl_config.dt_ops        = &config->host->dt;
    tl_config.multi_thread  = config->multi_thread;
    tl_config.keepalive_ms  = config->params->ucx_keepalive_ms;
    tl_config.fifo_size     = config->params->ucx_fifo_size;
    tl_config.cma_seg_size  = config->params->ucx_cma_seg_size;
    tl_config.frag_max      = config->params->ucx_frag_max;
    tl_config.fast_max      = config->params->send_fast_local_max;
    tl_config.shm_max       = config->params->ucx_shm_max;
    tl_config.shm_rndv      = config->params->ucx_shm_rndv;
    tl_config.estimated_eps = config->estimated_peers;
    tl_config.local_peers   = config->local_peers;
    tl_config.ofi_provider  = config->params->ofi_provider;
    return engine->tl_ops->init(&tl_config, &fs_engine_upcalls, engine,
                                &engine->tl);
}

static void fs_engine_lock_init(fs_engine_t *engine)
{
    pthread_mutexattr_t attr;

    /* recursive: host callbacks run under the lock and may call back in */
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&engine->lock, &attr);
    pthread_mutexattr_destroy(&attr);
}

fs_status_t fs_engine_create(const fs_engine_config_t *config, fs_engine_t **engine_p)
{
    fs_engine_t *engine = calloc(1, sizeof(*engine));
    fs_status_t status;

    if (engine == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    engine->params       = config->params;
    engine->host         = config->host;
    engine->host_arg     = config->host_arg;
    engine->tl_ops       = config->tl_ops;
    engine->my_id        = config->my_id;
    engine->multi_thread = config->multi_thread;
    engine->external_propagation = config->external_propagation;
    engine->unexpected_limit = (size_t)config->params->max_unexpected_mb << 20;
    engine->inject_left      = UINT64_MAX;
    fs_list_init(&engine->comms_list);
    fs_list_init(&engine->early);
    fs_list_init(&engine->eps);
    fs_list_init(&engine->draining);
    fs_list_init(&engine->agree_rx);
    fs_list_init(&engine->agree_early);
    fs_comm_inc_init(engine);
    fs_engine_lock_init(engine);

    status = fs_msg_pools_init(engine);
    if (status != FS_OK) {
        goto err_free;
    }
    status = fs_engine_tl_init(engine, config);
    if (status != FS_OK) {
        goto err_pools;
    }
    *engine_p = engine;
    return FS_OK;

err_pools:
    fs_msg_pools_cleanup(engine);
err_free:
    pthread_mutex_destroy(&engine->lock);
    free(engine);
    return status;
}

void fs_engine_destroy(fs_engine_t *engine)
{
    fs_list_t *e;

    while ((e = fs_list_pop_head(&engine->early)) != NULL) {
        fs_msg_free(engine, fs_container_of(e, fs_msg_t, seq.elem));
    }
    /* the transport first: closing it may still complete ops held in eps */
    engine->tl_ops->fini(engine->tl);
    fs_agreement_engine_cleanup(engine);
    fs_comm_inc_cleanup(engine);
    while ((e = fs_list_pop_head(&engine->eps)) != NULL) {
        free(fs_container_of(e, fs_ep_t, elem));
    }
    fs_msg_pools_cleanup(engine);
    free(engine->comms);
    free(engine->addr);
    pthread_mutex_destroy(&engine->lock);
    free(engine);
}

fs_status_t fs_engine_address(fs_engine_t *engine, const void **addr_p, size_t *len_p)
{
    fs_hdr_addr_t pre = {FS_WIRE_MAGIC, FS_WIRE_VERSION, 0};
    const void *tl_addr;
    size_t tl_len;
    fs_status_t status;

    if (engine->addr == NULL) {
        status = engine->tl_ops->address(engine->tl, &tl_addr, &tl_len);
        if (status != FS_OK) {
            return status;
        }
        engine->addr = malloc(sizeof(pre) + tl_len);
        if (engine->addr == NULL) {
            return FS_ERR_NO_MEMORY;
        }
        memcpy(engine->addr, &pre, sizeof(pre));
        memcpy(engine->addr + sizeof(pre), tl_addr, tl_len);
        engine->addr_len = sizeof(pre) + tl_len;
    }
    *addr_p = engine->addr;
    *len_p  = engine->addr_len;
    return FS_OK;
}

/* The peer's address preamble: ours, or a clear refusal. */
static fs_status_t fs_engine_addr_check(uint64_t id, const void *addr, size_t addr_len)
{
    fs_hdr_addr_t pre;

    if (addr_len < sizeof(pre)) {
        FS_ERROR("process %#llx: its failstop address is %zu bytes, too short",
                 (unsigned long long)id, addr_len);
        return FS_ERR_PROTO;
    }
    memcpy(&pre, addr, sizeof(pre));
    if (pre.magic != FS_WIRE_MAGIC) {
        FS_ERROR("process %#llx: its address is not a failstop address",
                 (unsigned long long)id);
        return FS_ERR_PROTO;
    }
    if (pre.version != FS_WIRE_VERSION) {
        FS_ERROR("process %#llx speaks failstop wire protocol %u, this process "
                 "%u: every process of a job must load the same failstop",
                 (unsigned long long)id, pre.version, FS_WIRE_VERSION);
        return FS_ERR_UNSUPPORTED;
    }
    return FS_OK;
}

unsigned fs_engine_progress(fs_engine_t *engine)
{
    unsigned count;

    /* a completion callback that waits must not re-enter the transport */
    if (engine->in_progress) {
        return 0;
    }
    engine->in_progress = 1;
    count = engine->tl_ops->progress(engine->tl);
    if (fs_unlikely(engine->parked != 0)) {
        fs_peer_parked_expire(engine);
    }
    if (fs_unlikely(engine->draining.next != &engine->draining)) {
        fs_peer_drain_expire(engine);
    }
    if (fs_unlikely(engine->suspects != 0)) {
        fs_peer_suspects_expire(engine);
    }
    engine->in_progress = 0;
    fs_engine_after_progress(engine);
    return count;
}

unsigned fs_engine_progress_alone(fs_engine_t *engine)
{
    unsigned count = fs_engine_progress(engine);

    if (engine->host->poll != NULL) {
        engine->host->poll(engine->host_arg);
    }
    return count;
}

/* An operation ended at its start on the failure state (a failed peer,
 * collectives or MPI_ANY_SOURCE off, a revoke).  Programs loop on such
 * errors until news comes -- a revoke, an agreement message (ULFM's do) --
 * and such a loop never waits, so nothing else would let the news in: the
 * transport is progressed here.  Error path only. */
void fs_engine_progress_on_error(fs_engine_t *engine)
{
    (void)fs_engine_progress(engine);   /* nothing inside a progress call */
}

void fs_engine_wait(fs_engine_t *engine, const fs_req_t *req, void (*host_poll)(void))
{
    unsigned (*poll)(fs_tl_t *tl) = engine->tl_ops->progress;
    fs_tl_t *tl = engine->tl;
    unsigned i = 0;

    /* tight loop: a poll iteration's length is the delay in noticing data */
    while (!fs_req_idle(req)) {
        if (fs_unlikely(((++i & 63) == 0) || engine->in_progress)) {
            host_poll();
            continue;
        }
        engine->in_progress = 1;
        poll(tl);
        engine->in_progress = 0;
        fs_engine_after_progress(engine);
    }
}

static void fs_engine_closed(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op;
    (void)status;
    (void)length;
}

void fs_engine_peer_suspected(fs_engine_t *engine, fs_ep_t *ep)
{
    /* A process that announced its departure (BYE) keeps beating until
     * the last step of MPI_Finalize, where it tells the detector (LEAVE):
     * the detector's verdict on it means it died inside MPI_Finalize.  Its
     * messages were delivered; what still waits on it, collectives above
     * all, must end, not hang. */
    if (ep->state == FS_EP_CLOSED) {
        fs_peer_fail_closed(engine, ep, NULL);     /* in MPI_Finalize's close */
        return;
    }
    if (ep->is_self || (ep->state == FS_EP_FAILED)) {
        return;
    }
    if ((engine->tl_ops->drain != NULL) && !engine->in_progress) {
        engine->in_progress = 1;
        engine->tl_ops->drain(engine->tl);
        engine->in_progress = 0;
    }
    /* Disconnect before failing its operations: over a transport without
     * RMA (UCX TCP in PEER mode) a rendezvous payload is pushed by the
     * sender and copied into the receive buffer as it arrives.  Once the
     * receive has failed the buffer is the user's again, so nothing more
     * may be taken from this process.  (Our own transport's endpoint error
     * needs no such step: the transport has already dropped the link.) */
    if ((ep->tl_ep != NULL) && !engine->in_progress) {
        ep->close_op.cb   = fs_engine_closed;
        ep->close_op.busy = 0;
        engine->tl_ops->ep_close(engine->tl, ep->tl_ep, 1, &ep->close_op);
        ep->tl_ep = NULL;
    }
    if ((ep->state == FS_EP_LEAVING) || (ep->state == FS_EP_LEFT)) {
        fs_peer_fail_departed(engine, ep);
    } else {
        fs_peer_fail(engine, ep, NULL, NULL);
    }
    fs_engine_after_progress(engine);
}

void fs_engine_lock(fs_engine_t *engine)
{
    if (engine->multi_thread) {
        pthread_mutex_lock(&engine->lock);
    }
}

void fs_engine_unlock(fs_engine_t *engine)
{
    if (engine->multi_thread) {
        pthread_mutex_unlock(&engine->lock);
    }
}

const fs_stats_t *fs_engine_stats(const fs_engine_t *engine)
{
    return &engine->stats;
}

fs_status_t fs_engine_ep_create(fs_engine_t *engine, uint64_t id, void *host,
                                const void *addr, size_t addr_len, fs_ep_t **ep_p)
{
    fs_status_t status = fs_engine_addr_check(id, addr, addr_len);
    fs_ep_t *ep;

    if (status != FS_OK) {
        return status;
    }
    ep = malloc(sizeof(*ep));
    if (ep == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    fs_ep_init(ep, id, host, 0);
    status = engine->tl_ops->ep_create(engine->tl,
                                       (const uint8_t *)addr + sizeof(fs_hdr_addr_t),
                                       addr_len - sizeof(fs_hdr_addr_t), ep, &ep->tl_ep);
    if (status != FS_OK) {
        free(ep);
        return status;
    }
    fs_ep_transition(ep, FS_EP_UP);
    if ((engine->tl_ops->ep_flush != NULL) && fs_ep_is_usable(ep)) {
        ep->wire = FS_WIRE_PENDING;     /* unproven until wire-up's flush */
    }
    fs_list_push_tail(&engine->eps, &ep->elem);
    *ep_p = ep;
    return FS_OK;
}

fs_status_t fs_engine_ep_create_self(fs_engine_t *engine, uint64_t id, void *host,
                                     fs_ep_t **ep_p)
{
    fs_ep_t *ep = malloc(sizeof(*ep));

    if (ep == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    fs_ep_init(ep, id, host, 1);
    fs_ep_transition(ep, FS_EP_UP);
    fs_list_push_tail(&engine->eps, &ep->elem);
    engine->self_ep = ep;
    *ep_p = ep;
    return FS_OK;
}

fs_status_t fs_engine_ep_describe(fs_engine_t *engine, const fs_ep_t *ep, char *buf,
                                  size_t len)
{
    if ((engine->tl_ops->ep_describe == NULL) || (ep->tl_ep == NULL) || (len == 0)) {
        return FS_ERR_UNSUPPORTED;
    }
    return engine->tl_ops->ep_describe(engine->tl, ep->tl_ep, buf, len);
}
