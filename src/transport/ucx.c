/* UCX transport: UCP active messages in PEER error-handling mode.
 *
 * failstop owns matching, so every message is an AM (eager, or UCP's
 * zero-copy rendezvous for large ones) rather than a UCX tag message.
 * PEER mode makes UCX report dead peers instead of hanging, but by default it
 * refuses shared memory (mm) and the single-copy CMA lane; we switch both
 * back on (MM_ERROR_HANDLING, CMA_MEMORY_INVALIDATE) and force the GET
 * rendezvous scheme, so a peer only ever reads our memory: a peer we gave up
 * on can never write into a buffer we already returned to the user. */
#include "transport/ucx_int.h"
#include "transport/ucx_lanes.h"
#include "common/fs_list.h"
#include "common/fs_log.h"
#include "common/fs_mpool.h"
#include "failure/fault_status.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <stdarg.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* State of one non-contiguous or truncating transfer. */
typedef struct fs_ucx_dt_state {
    fs_tl_t                *tl;
    const fs_buf_t         *buf;
    size_t                  total;
} fs_ucx_dt_state_t;

fs_status_t fs_ucx_status(const fs_tl_t *tl, ucs_status_t status)
{
    const fs_fault_row_t *row;

    if (status == UCS_OK) {
        return FS_OK;
    }
    row = fs_fault_classify(FS_FAULT_SRC_UCX, status, 0,
                            FS_FAULT_CTX_OP | tl->fault_ctx);
    return fs_fault_to_status(row->cls);
}

/* ---- generic datatypes: bridge UCX pack/unpack to the host's engine ------ */

static void *fs_ucx_dt_start(void *context, const void *buffer, size_t count)
{
    fs_tl_t *tl = context;
    fs_ucx_dt_state_t *state = fs_mpool_get(&tl->dt_states);

    if (state == NULL) {
        return NULL;
    }
    state->tl    = tl;
    state->buf   = buffer;
    state->total = count;   /* we pass the byte length as the count */
    return state;
}

static size_t fs_ucx_dt_packed_size(void *state)
{
    return ((fs_ucx_dt_state_t *)state)->total;
}

static size_t fs_ucx_dt_pack(void *state, size_t offset, void *dest, size_t max)
{
    fs_ucx_dt_state_t *s = state;

    return fs_buf_pack(s->tl->dt_ops, s->buf, offset, dest, max);
}

static ucs_status_t fs_ucx_dt_unpack(void *state, size_t offset, const void *src,
                                     size_t length)
{
    fs_ucx_dt_state_t *s = state;

    fs_buf_unpack(s->tl->dt_ops, s->buf, offset, src, length);
    return UCS_OK;
}

static void fs_ucx_dt_finish(void *state)
{
    fs_ucx_dt_state_t *s = state;

    fs_mpool_put(&s->tl->dt_states, s);
}

static const ucp_generic_dt_ops_t fs_ucx_generic_ops = {
    .start_pack   = fs_ucx_dt_start,
    .start_unpack = (void *(*)(void *, void *, size_t))fs_ucx_dt_start,
    .packed_size  = fs_ucx_dt_packed_size,
    .pack         = fs_ucx_dt_pack,
    .unpack       = fs_ucx_dt_unpack,
    .finish       = fs_ucx_dt_finish,
};

/* ---- receive path ------------------------------------------------------ */

static ucs_status_t fs_ucx_am_cb(void *arg, const void *header, size_t header_length,
                                 void *data, size_t length,
                                 const ucp_am_recv_param_t *param, unsigned am_id)
{
    fs_tl_t *tl = arg;
    fs_tl_rx_t rx;
    fs_status_t status;

    rx.desc  = data;
    rx.flags = 0;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) {
        rx.flags    = FS_TL_RX_RNDV;
        tl->cb_desc = data;
    } else if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA) {
        rx.flags    = FS_TL_RX_PERSISTENT;
        tl->cb_desc = data;
    }
    status = tl->up.am_recv(tl->up_arg, am_id, header, header_length, data,
                            length, &rx);
    tl->cb_desc = NULL;
    return (status == FS_INPROGRESS) ? UCS_INPROGRESS : UCS_OK;
}

static ucs_status_t fs_ucx_am_match_cb(void *arg, const void *header,
                                       size_t header_length, void *data,
                                       size_t length,
                                       const ucp_am_recv_param_t *param)
{
    return fs_ucx_am_cb(arg, header, header_length, data, length, param,
                        FS_AM_MATCH);
}

static ucs_status_t fs_ucx_am_ctrl_cb(void *arg, const void *header,
                                      size_t header_length, void *data,
                                      size_t length,
                                      const ucp_am_recv_param_t *param)
{
    return fs_ucx_am_cb(arg, header, header_length, data, length, param,
                        FS_AM_CTRL);
}

static ucs_status_t fs_ucx_am_agree_cb(void *arg, const void *header,
                                       size_t header_length, void *data,
                                       size_t length,
                                       const ucp_am_recv_param_t *param)
{
    return fs_ucx_am_cb(arg, header, header_length, data, length, param,
                        FS_AM_AGREE);
}

static void fs_ucx_op_done(fs_tl_op_t *op, void *request, ucs_status_t status,
                           size_t length)
{
    fs_ucx_req_t *ureq = request;
    fs_tl_t *tl        = ureq->tl;

    if (fs_ucx_req_inline(ureq, status, length)) {
        return;
    }
    ureq->tl   = NULL;
    op->busy   = 0;
    op->handle = NULL;
    ucp_request_free(request);
    op->cb(op, fs_ucx_status(tl, status), length);
}

static void fs_ucx_send_cb(void *request, ucs_status_t status, void *user_data)
{
    fs_ucx_op_done(user_data, request, status, 0);
}

static void fs_ucx_recv_data_cb(void *request, ucs_status_t status,
                                size_t length, void *user_data)
{
    fs_ucx_op_done(user_data, request, status, length);
}

/* UCX returns NULL for immediate completion and otherwise runs the callback
 * from a later progress call (or, on some errors, already ran it).  FS_OK,
 * FS_ERR_AGAIN (only with FORCE_IMM_CMPL), an error, or FS_INPROGRESS: the
 * request is ours to track (its tl is set). */
fs_status_t fs_ucx_req_claim(fs_tl_t *tl, ucs_status_ptr_t request)
{
    fs_ucx_req_t *ureq = request;
    ucs_status_t status;

    if (fs_likely(request == NULL)) {
        return FS_OK;
    }
    if (UCS_PTR_IS_ERR(request)) {
        if (UCS_PTR_STATUS(request) == UCS_ERR_NO_RESOURCE) {
            return FS_ERR_AGAIN;
        }
        return fs_ucx_status(tl, UCS_PTR_STATUS(request));
    }
    if (fs_unlikely(ureq->inline_done)) {
        status            = ureq->inline_status;
        ureq->inline_done = 0;
        ucp_request_free(request);
        return fs_ucx_status(tl, status);
    }
    ureq->tl = tl;
    return FS_INPROGRESS;
}

static fs_status_t fs_ucx_op_track(fs_tl_t *tl, fs_tl_op_t *op,
                                   ucs_status_ptr_t request)
{
    fs_status_t st = fs_ucx_req_claim(tl, request);

    if (st == FS_INPROGRESS) {
        op->handle = request;
        op->busy   = 1;
    }
    return st;
}

/* ---- operations -------------------------------------------------------- */

static fs_status_t fs_ucx_am_send(fs_tl_t *tl, fs_tl_ep_t *tep, unsigned am_id,
                                  const void *hdr, size_t hdr_len,
                                  const fs_buf_t *buf, unsigned flags,
                                  fs_tl_op_t *op)
{
    ucp_request_param_t param;
    const void *buffer;
    size_t count;

    if (fs_ucx_shm_send(tl, tep, am_id, hdr, hdr_len, buf, flags)) {
        return FS_OK;
    }
    if (fs_ucx_rr_wants(tl, tep, am_id, hdr_len, buf, flags)) {
        fs_status_t st = fs_ucx_rr_send(tl, tep, hdr, hdr_len, buf, op);

        if (st != FS_ERR_AGAIN) {
            return st;
        }
    }
    if (fs_ucx_frag_wants(tl, am_id, hdr_len, buf, flags)) {
        return fs_ucx_frag_send(tl, tep, hdr, hdr_len, buf, flags, op);
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send      = fs_ucx_send_cb;
    param.user_data    = op;
    if (fs_unlikely(flags & FS_TL_SEND_RNDV)) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        param.flags         = UCP_AM_SEND_FLAG_RNDV;
    } else if (fs_unlikely(flags & FS_TL_SEND_EAGER)) {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_FLAGS;
        param.flags         = UCP_AM_SEND_FLAG_EAGER;
    } else if (flags & FS_TL_SEND_IMM) {
        /* UCX gives NO_RESOURCE without side effects if it cannot finish */
        param.op_attr_mask |= UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
    } else if (flags & FS_TL_SEND_FAST) {
        /* UCX's "local" rendezvous threshold (256 KiB on shared memory
         * instead of 8 KiB): eager bcopy completes as soon as it is copied */
        param.op_attr_mask |= UCP_OP_ATTR_FLAG_FAST_CMPL;
    }
    if (fs_likely(buf->dt == NULL)) {
        buffer = buf->ptr;
        count  = buf->len;
    } else {
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        param.datatype      = tl->generic_dt;
        buffer              = buf;
        count               = buf->len;
    }
    return fs_ucx_op_track(tl, op, ucp_am_send_nbx(tep->ep, am_id, hdr, hdr_len,
                                                   buffer, count, &param));
}

static fs_status_t fs_ucx_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                    size_t msg_len, fs_tl_op_t *op)
{
    ucp_request_param_t param;
    void *buffer;
    size_t count;

    if (fs_ucx_frag_is(desc)) {
        return fs_ucx_frag_recv_data(tl, desc, buf, op);
    }
    if (fs_ucx_rr_is(desc)) {
        return fs_ucx_rr_recv_data(tl, desc, buf, msg_len);
    }
    if (fs_unlikely(msg_len == 0) && (desc != tl->cb_desc)) {
        /* A zero-length rendezvous kept past its callback: UCX 1.13's
         * ucp_am_recv_data_nbx acknowledges it but never frees the
         * descriptor ("was not returned to mpool ucp_am_bufs" at exit).
         * Releasing it acknowledges the sender the same way (ATS, success)
         * and frees it. */
        ucp_am_data_release(tl->worker, desc);
        return FS_OK;
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.recv_am   = fs_ucx_recv_data_cb;
    param.user_data    = op;
    if (fs_likely((buf->dt == NULL) && (msg_len <= buf->len))) {
        buffer = buf->ptr;
        count  = msg_len;
    } else {
        /* non-contiguous or truncated: unpack through dt_ops, drop excess */
        param.op_attr_mask |= UCP_OP_ATTR_FIELD_DATATYPE;
        param.datatype      = tl->generic_dt;
        buffer              = (void *)buf;
        count               = msg_len;
    }
    return fs_ucx_op_track(tl, op, ucp_am_recv_data_nbx(tl->worker, desc, buffer,
                                                        count, &param));
}

static void fs_ucx_release(fs_tl_t *tl, void *desc)
{
    if (fs_ucx_frag_is(desc)) {
        fs_ucx_frag_release(tl, desc);
        return;
    }
    if (fs_ucx_rr_is(desc)) {
        fs_ucx_rr_release(tl, desc);
        return;
    }
    if (desc == tl->cb_desc) {
        /* UCX's contract: a descriptor the callback does not keep (it
         * returns UCS_OK) is UCX's, which frees it and acknowledges a
         * rendezvous sender; releasing it here as well would do both twice
         * (UCX 1.13 ucp_am_rndv_process_rts) */
        return;
    }
    ucp_am_data_release(tl->worker, desc);
}

static int fs_ucx_desc_whole(fs_tl_t *tl, const void *desc)
{
    (void)tl;
    /* a UCP rendezvous descriptor's payload stays with its sender */
    return fs_ucx_frag_is(desc) && fs_ucx_frag_whole(desc);
}

static void fs_ucx_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    if (!op->busy) {
        return;
    }
    if (fs_ucx_frag_is(op->handle)) {
        fs_ucx_frag_cancel(tl, op);
    } else if (fs_ucx_rr_is(op->handle)) {
        fs_ucx_rr_cancel(tl, op);
    } else {
        ucp_request_cancel(tl->worker, op->handle);
    }
}

/* While the lane has work, UCP's worker is polled one call in
 * FS_UCX_UCP_EVERY: a message stream on the lane pays little for the second
 * poll, and what UCP carries (large messages, control, endpoint errors) waits
 * a few calls at most (osu_latency 1 B-1 KiB: 1.03-1.20x slower when UCP is
 * polled at every call).  Order across the two is the sequence numbers'. */
#define FS_UCX_UCP_EVERY 8u

static unsigned fs_ucx_progress(fs_tl_t *tl)
{
    unsigned count = 0;

    if (fs_unlikely(!fs_list_is_empty(&tl->rr.pending))) {
        count = fs_ucx_rr_progress(tl);
    }
    if (tl->shm.rx.base != NULL) {
        count += fs_ucx_shm_poll(tl);
        if ((count != 0) && ((++tl->shm.busy_polls % FS_UCX_UCP_EVERY) != 0)) {
            return count;
        }
    }
    return count + ucp_worker_progress(tl->worker);
}

/* ---- endpoints --------------------------------------------------------- */

void fs_ucx_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    fs_tl_ep_t *tep = arg;
    fs_tl_t *tl     = tep->tl;
    void *user      = tep->user;
    const fs_fault_row_t *row;

    (void)ep;
    if (tep->failed) {
        return;
    }
    tep->failed = 1;
    /* what the peer sent by the short lane before this comes first (its
     * upcalls may close endpoints: tep is not read after it) */
    fs_ucx_shm_drain(tl);
    row = fs_fault_classify(FS_FAULT_SRC_UCX, status, 0,
                            FS_FAULT_CTX_EP_ERROR | tl->fault_ctx);
    tl->up.ep_error(tl->up_arg, user, row);
}

/* ucp_ep_create failed.  Over TCP it connects at once, so a peer that just
 * died refuses the connection (UCS_ERR_UNREACHABLE): a failure whose cause
 * may be the peer's death gives an endpoint without a link, reported broken
 * at once, whose fate the engine waits for; anything else is an error. */
static fs_status_t fs_ucx_ep_create_failed(fs_tl_t *tl, fs_tl_ep_t *tep,
                                           ucs_status_t status, fs_tl_ep_t **ep_p)
{
    const fs_fault_row_t *row =
        fs_fault_classify(FS_FAULT_SRC_UCX, status, 0, FS_FAULT_CTX_EP_CREATE);

    if ((row->cls != FS_FAULT_FLUSH) && !fs_fault_is_peer(row->cls)) {
        FS_ERROR("ucp_ep_create failed: %s (%s)", ucs_status_string(status),
                 row->reason);
        free(tep);
        return fs_fault_to_status(row->cls);
    }
    FS_WARN("ucp_ep_create failed: %s (%s); waiting for the peer's fate",
            ucs_status_string(status), row->reason);
    tep->ep     = NULL;
    tep->failed = 1;
    *ep_p       = tep;
    tl->up.ep_error(tl->up_arg, tep->user, row);
    return FS_OK;
}

static ucs_status_t fs_ucx_ep_connect(fs_tl_t *tl, fs_tl_ep_t *tep)
{
    ucp_ep_params_t params;

    params.field_mask      = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS |
                             UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                             UCP_EP_PARAM_FIELD_ERR_HANDLER;
    params.address         = fs_ucx_addr_ucp(tep->addr, tep->addr_len);
    params.err_mode        = UCP_ERR_HANDLING_MODE_PEER;
    params.err_handler.cb  = fs_ucx_ep_err_cb;
    params.err_handler.arg = tep;
    return ucp_ep_create(tl->worker, &params, &tep->ep);
}

static fs_status_t fs_ucx_ep_create(fs_tl_t *tl, const void *addr, size_t addr_len,
                                    void *ep_user, fs_tl_ep_t **ep_p)
{
    fs_tl_ep_t *tep;
    ucs_status_t status;

    if (fs_ucx_addr_ucp(addr, addr_len) == NULL) {
        FS_ERROR("a peer's UCX address is malformed (%zu bytes)", addr_len);
        return FS_ERR_LOCAL;
    }
    tep = calloc(1, sizeof(*tep) + addr_len);
    if (tep == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    tep->tl       = tl;
    tep->user     = ep_user;
    tep->addr_len = addr_len;
    memcpy(tep->addr, addr, addr_len);
    status = fs_ucx_ep_connect(tl, tep);
    if (status != UCS_OK) {
        return fs_ucx_ep_create_failed(tl, tep, status, ep_p);
    }
    fs_ucx_shm_ep_create(tl, tep);
    *ep_p = tep;
    return FS_OK;
}

/* The old link goes without a callback (UCX frees its close request when
 * done, and calls no error handler once a close started); its operations
 * end with an error through their own callbacks. */
static fs_status_t fs_ucx_ep_reconnect(fs_tl_t *tl, fs_tl_ep_t *tep)
{
    ucp_request_param_t param;
    ucs_status_ptr_t request;
    ucs_status_t status;

    if (tep->ep != NULL) {
        param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        param.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        request = ucp_ep_close_nbx(tep->ep, &param);
        if (UCS_PTR_IS_PTR(request)) {
            ucp_request_free(request);
        }
        tep->ep = NULL;
    }
    status = fs_ucx_ep_connect(tl, tep);
    if (status != UCS_OK) {
        tep->ep = NULL;
        return fs_ucx_status(tl, status);
    }
    tep->failed = 0;
    return FS_OK;
}

static void fs_ucx_close_cb(void *request, ucs_status_t status, void *user_data)
{
    fs_ucx_req_t *ureq = request;

    (void)status;   /* a close that fails still ends the endpoint */
    if (ureq->tl != NULL) {
        fs_list_remove(&ureq->closing->elem);
        free(ureq->closing);
        ureq->closing = NULL;
    }
    fs_ucx_op_done(user_data, request, UCS_OK, 0);
}

/* UCX stops calling the error handler once the close has started; the
 * endpoint memory lives until the close completes. */
static fs_status_t fs_ucx_ep_close(fs_tl_t *tl, fs_tl_ep_t *tep, int force,
                                   fs_tl_op_t *op)
{
    ucp_request_param_t param;
    ucs_status_ptr_t request;

    fs_ucx_rr_ep_close(tl, tep);    /* its rendezvous answers come by the ring */
    fs_ucx_shm_ep_destroy(tep);     /* a lane message is in the ring once sent */
    if (tep->ep == NULL) {
        free(tep);                  /* created without a link */
        return FS_OK;
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send      = fs_ucx_close_cb;
    param.user_data    = op;
    param.flags        = (force || tep->failed) ? UCP_EP_CLOSE_FLAG_FORCE : 0;
    request = ucp_ep_close_nbx(tep->ep, &param);
    if (fs_ucx_op_track(tl, op, request) != FS_INPROGRESS) {
        free(tep);                  /* closed (or failed) at once */
        return FS_OK;
    }
    ((fs_ucx_req_t *)request)->closing = tep;
    tep->close_req = request;
    fs_list_push_tail(&tl->closing, &tep->elem);
    return FS_INPROGRESS;
}

static fs_status_t fs_ucx_ep_flush(fs_tl_t *tl, fs_tl_ep_t *tep, fs_tl_op_t *op)
{
    ucp_request_param_t param;

    if ((tep->ep == NULL) || tep->failed) {
        return FS_ERR_CANCELED;     /* no link to set up (its error came) */
    }
    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA;
    param.cb.send      = fs_ucx_send_cb;
    param.user_data    = op;
    return fs_ucx_op_track(tl, op, ucp_ep_flush_nbx(tep->ep, &param));
}

/* ---- setup (ucx_setup.c: UCX's configuration, context, log filter) ---- */

static fs_status_t fs_ucx_set_handler(fs_tl_t *tl, unsigned id, ucp_am_recv_callback_t cb)
{
    ucp_am_handler_param_t param;

    param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                       UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
    param.id         = id;
    param.cb         = cb;
    param.arg        = tl;
    param.flags      = UCP_AM_FLAG_WHOLE_MSG;
    return (ucp_worker_set_am_recv_handler(tl->worker, &param) == UCS_OK) ?
           FS_OK : FS_ERR_LOCAL;
}

static fs_status_t fs_ucx_worker_create(fs_tl_t *tl, const fs_tl_config_t *cfg)
{
    ucp_worker_params_t params;
    ucp_worker_attr_t attr;

    params.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    params.thread_mode = cfg->multi_thread ? UCS_THREAD_MODE_SERIALIZED :
                                             UCS_THREAD_MODE_SINGLE;
    if (ucp_worker_create(tl->context, &params, &tl->worker) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    attr.field_mask = UCP_WORKER_ATTR_FIELD_ADDRESS;
    if (ucp_worker_query(tl->worker, &attr) != UCS_OK) {
        return FS_ERR_LOCAL;
    }
    tl->address     = attr.address;
    tl->address_len = attr.address_length;
    if ((fs_ucx_set_handler(tl, FS_AM_MATCH, fs_ucx_am_match_cb) != FS_OK) ||
        (fs_ucx_set_handler(tl, FS_AM_CTRL, fs_ucx_am_ctrl_cb) != FS_OK) ||
        (fs_ucx_set_handler(tl, FS_AM_AGREE, fs_ucx_am_agree_cb) != FS_OK) ||
        (fs_ucx_frag_set_handlers(tl) != FS_OK)) {
        return FS_ERR_LOCAL;
    }
    return FS_OK;
}

/* Closes still in flight at the end (a flush the caller stopped waiting
 * for: a slow or dead link) are given back to UCX before the worker goes:
 * ucp_worker_destroy completes them itself, and asserts that their requests
 * were released.  Their callback then finds no transport and touches
 * nothing of the caller's. */
static void fs_ucx_abandon_closes(fs_tl_t *tl)
{
    fs_list_t *elem;

    while ((elem = fs_list_pop_head(&tl->closing)) != NULL) {
        fs_tl_ep_t *tep    = fs_container_of(elem, fs_tl_ep_t, elem);
        fs_ucx_req_t *ureq = tep->close_req;

        ureq->tl      = NULL;
        ureq->closing = NULL;
        ucp_request_free(ureq);
        free(tep);
    }
}

static void fs_ucx_fini(fs_tl_t *tl)
{
    fs_ucx_abandon_closes(tl);
    fs_ucx_frag_fini(tl);
    fs_ucx_shm_fini(tl);
    fs_ucx_rr_fini(tl);
    free(tl->wire_addr);
    if (tl->address != NULL) {
        ucp_worker_release_address(tl->worker, tl->address);
    }
    if (tl->generic_dt != 0) {
        ucp_dt_destroy(tl->generic_dt);
    }
    if (tl->worker != NULL) {
        ucp_worker_destroy(tl->worker);
    }
    if (tl->context != NULL) {
        ucp_cleanup(tl->context);
    }
    fs_mpool_cleanup(&tl->dt_states);
    free(tl);
}

static fs_status_t fs_ucx_init(const fs_tl_config_t *cfg, const fs_tl_upcalls_t *up,
                               void *up_arg, fs_tl_t **tl_p)
{
    static int log_pushed;
    fs_tl_t *tl = calloc(1, sizeof(*tl));
    fs_status_t status;

    if (tl == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    tl->up     = *up;
    tl->up_arg = up_arg;
    tl->dt_ops = cfg->dt_ops;
    fs_list_init(&tl->closing);
    if (!log_pushed) {
        log_pushed = 1;     /* MPI_Init's thread, once per process */
        ucs_log_push_handler(fs_ucx_log);
    }
    /* a timeout on InfiniBand may only mean a slow peer (see classify) */
    tl->fault_ctx = (access("/sys/class/infiniband", F_OK) == 0) ?
                    FS_FAULT_CTX_SLOW_LINK : 0;
    fs_mpool_init(&tl->dt_states, "ucx-dt-state", sizeof(fs_ucx_dt_state_t),
                  64, 0, NULL);
    status = fs_ucx_frag_init(tl, fs_ucx_version_at_least(1, 16) ? FS_UCX_FRAG_PIECE + 1 :
                                  FS_UCX_FRAG_EAGER_MAX + 1, cfg->frag_max);
    if (status == FS_OK) {
        status = fs_ucx_context_create(tl, cfg);
    }
    if (status == FS_OK) {
        status = fs_ucx_worker_create(tl, cfg);
    }
    if (status == FS_OK) {
        fs_ucx_shm_init(tl, cfg);
        status = fs_ucx_rr_init(tl, cfg);
    }
    if (status == FS_OK) {
        status = fs_ucx_addr_pack(tl);
    }
    if ((status == FS_OK) &&
        (ucp_dt_create_generic(&fs_ucx_generic_ops, tl, &tl->generic_dt) != UCS_OK)) {
        status = FS_ERR_LOCAL;
    }
    if (status != FS_OK) {
        fs_ucx_fini(tl);
        return status;
    }
    *tl_p = tl;
    return FS_OK;
}

static fs_status_t fs_ucx_address(fs_tl_t *tl, const void **addr_p, size_t *len_p)
{
    *addr_p = tl->wire_addr;
    *len_p  = tl->wire_len;
    return FS_OK;
}

static fs_status_t fs_ucx_ep_describe(fs_tl_t *tl, fs_tl_ep_t *tep, char *buf, size_t len)
{
    fs_status_t st = fs_ucx_lanes(tep->ep, buf, len);
    size_t used    = strlen(buf);
    char lane[32];

    if (tep->lane.ring == NULL) {
        return st;
    }
    snprintf(lane, sizeof(lane), "%s/memory", tl->shm.name);
    if ((strstr(buf, lane) == NULL) && (used + strlen(lane) + 2 <= len)) {
        snprintf(buf + used, len - used, "%s%s", (used > 0) ? "," : "", lane);
    }
    return FS_OK;
}

const fs_tl_ops_t fs_tl_ucx_ops = {
    .name      = "ucx",
    .init      = fs_ucx_init,
    .fini      = fs_ucx_fini,
    .address   = fs_ucx_address,
    .ep_create = fs_ucx_ep_create,
    .ep_close  = fs_ucx_ep_close,
    .ep_flush  = fs_ucx_ep_flush,
    .ep_reconnect = fs_ucx_ep_reconnect,
    .am_send   = fs_ucx_am_send,
    .recv_data = fs_ucx_recv_data,
    .release   = fs_ucx_release,
    .desc_whole = fs_ucx_desc_whole,
    .cancel    = fs_ucx_cancel,
    .progress  = fs_ucx_progress,
    .drain     = fs_ucx_shm_drain,
    .ep_describe = fs_ucx_ep_describe,
};
