/* Control messages between engines: departure (BYE, DONE: leave.c sends
 * them), failure notices (FAILED) and MPI_Abort (ABORT).
 *
 * Leaving is not failing: a finalizing process sends every peer a BYE
 * carrying how many matching messages it sent that peer.  The peer marks it
 * LEFT once it has taken that many (a large message sent just before the BYE
 * can complete reassembly after it), and from then on ignores transport
 * errors from it instead of reporting a failure.
 *
 * Everyone learns (17.3): a process that learns of a new failure, from its
 * transport or from a notice, tells every other live peer once.  Each
 * failure thus costs at most N messages per survivor; it is robust to more
 * failures during the propagation because every survivor forwards. */
#include "proto/engine_int.h"

#include "common/fs_time.h"

static fs_ep_t *fs_engine_find_ep(fs_engine_t *engine, uint64_t id)
{
    fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if ((ep->id == id) && !ep->is_self) {
            return ep;
        }
    }
    return NULL;
}

static void fs_ctrl_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    fs_ctrl_req_t *req = fs_container_of(op, fs_ctrl_req_t, op);

    (void)status;   /* a notice to a peer that is gone may fail: nothing to do */
    (void)length;
    --req->engine->ctrl_inflight;
    fs_mpool_put(&req->engine->ctrl_pool, req);
}

/* Sends one control message; failures are ignored (the receiver is gone).
 * Only endpoints still usable get it, unless force (the transport itself
 * has not failed). */
void fs_ctrl_send_ep(fs_engine_t *engine, fs_ep_t *ep, uint8_t type, uint8_t flags,
                     uint64_t arg, int force)
{
    fs_buf_t empty = {NULL, 0, NULL};
    fs_ctrl_req_t *req;
    fs_status_t st;

    if (ep->is_self || (ep->tl_ep == NULL) || (!force && !fs_ep_is_usable(ep))) {
        return;
    }
    req = fs_mpool_get(&engine->ctrl_pool);
    if (req == NULL) {
        FS_ERROR("no memory for a control message to %#llx", (unsigned long long)ep->id);
        return;
    }
    req->engine     = engine;
    req->op.cb      = fs_ctrl_done;
    req->op.busy    = 0;
    req->hdr.type   = type;
    req->hdr.flags  = flags;
    req->hdr.sender = engine->my_id;
    req->hdr.arg    = arg;
    memset(req->hdr.pad, 0, sizeof(req->hdr.pad));
    st = engine->tl_ops->am_send(engine->tl, ep->tl_ep, FS_AM_CTRL, &req->hdr,
                                 sizeof(req->hdr), &empty, 0, &req->op);
    if (st == FS_INPROGRESS) {
        ++engine->ctrl_inflight;
    } else {
        fs_mpool_put(&engine->ctrl_pool, req);
    }
}

static void fs_ctrl_send(fs_engine_t *engine, fs_ep_t *ep, uint8_t type, uint64_t arg)
{
    fs_ctrl_send_ep(engine, ep, type, 0, arg, 0);
}

static void fs_ctrl_send_notices(fs_engine_t *engine, fs_ep_t *failed,
                                 fs_ep_t *reporter)
{
    fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if ((ep != failed) && (ep != reporter)) {
            fs_ctrl_send(engine, ep, FS_CTRL_FAILED, failed->id);
            ++engine->stats.notices_sent;
        }
    }
    /* When another process reported the failure our own path to the
     * process may still work: if it is alive after all (a mistaken
     * suspicion), this tells it that it was excluded (17.3). */
    if (reporter != NULL) {
        fs_ctrl_send_ep(engine, failed, FS_CTRL_FAILED, 0, failed->id, 1);
    }
}

/* A failure is learned inside the transport's progress call (an endpoint
 * error or a FAILED notice arriving).  Sending from there is not safe: with
 * UCX's TCP transport a send that fails at once (the socket to the dead
 * process already got a reset) closes that endpoint in the middle of UCX's
 * event loop, whose already-collected event for the same socket then hits
 * "Assertion `ep->conn_state != UCT_TCP_EP_CONN_STATE_CLOSED'" (UCX 1.13,
 * tcp_iface.c).  So notices are sent once the progress call returned. */
void fs_ctrl_notify_failure(fs_engine_t *engine, fs_ep_t *failed, fs_ep_t *reporter)
{
    if (engine->external_propagation) {
        return;     /* the failure detector spreads it (src/detector/hb.c) */
    }
    if (engine->in_progress) {
        if (!failed->notice_pending) {
            failed->notice_pending  = 1;
            failed->notice_reporter = reporter;
            ++engine->notices_pending;
        }
        return;
    }
    fs_ctrl_send_notices(engine, failed, reporter);
}

void fs_ctrl_flush_notices(fs_engine_t *engine)
{
    fs_list_t *e;

    for (e = engine->eps.next; (e != &engine->eps) && (engine->notices_pending != 0);
         e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if (ep->notice_pending) {
            ep->notice_pending = 0;
            --engine->notices_pending;
            fs_ctrl_send_notices(engine, ep, ep->notice_reporter);
        }
    }
}

static void fs_rx_failed_notice(fs_engine_t *engine, fs_ep_t *from, uint64_t id)
{
    fs_ep_t *ep;

    ++engine->stats.notices_received;
    if (id == engine->my_id) {
        /* 17.3: a process declared failed is excluded; it ends itself */
        engine->host->excluded(engine->host_arg, from);
        return;
    }
    ep = fs_engine_find_ep(engine, id);
    if (ep == NULL) {
        return;
    }
    if (ep->state == FS_EP_CLOSED) {
        fs_peer_fail_closed(engine, ep, from);      /* in MPI_Finalize's close */
    } else {
        fs_peer_fail(engine, ep, NULL, from);
    }
}

fs_status_t fs_rx_ctrl(fs_engine_t *engine, const fs_hdr_ctrl_t *hdr)
{
    fs_ep_t *ep = fs_engine_find_ep(engine, hdr->sender);

    if (ep == NULL) {
        FS_WARN("control message %u from unknown process %#llx", hdr->type,
                (unsigned long long)hdr->sender);
        return FS_ERR_PROTO;
    }
    switch (hdr->type) {
    case FS_CTRL_BYE:
        ep->bye_expect     = hdr->arg;
        ep->peer_receiving = (hdr->flags & FS_CTRL_F_RECEIVING) && !ep->peer_done;
        if (ep->rx_msgs >= ep->bye_expect) {
            fs_peer_left(engine, ep);
        } else {
            fs_ep_transition(ep, FS_EP_LEAVING);
        }
        return FS_OK;
    case FS_CTRL_FAILED:
        fs_rx_failed_notice(engine, ep, hdr->arg);
        return FS_OK;
    case FS_CTRL_ABORT:
        engine->host->abort(engine->host_arg, ep, (int)(int64_t)hdr->arg);
        return FS_OK;
    case FS_CTRL_DONE:
        ep->peer_receiving = 0;
        ep->peer_done      = 1;
        return FS_OK;
    default:
        FS_WARN("unknown control message %u from %#llx", hdr->type,
                (unsigned long long)hdr->sender);
        return FS_ERR_PROTO;
    }
}

void fs_ep_leaving_check(fs_engine_t *engine, fs_ep_t *ep)
{
    if (ep->rx_msgs >= ep->bye_expect) {
        fs_peer_left(engine, ep);
    }
}

/* Progresses until control messages and closes are out, or the deadline.
 * A close to a peer declared failed since it started is not waited for: a
 * flushing close to a dead peer (a partition: nothing comes back) would
 * take the whole deadline.  Returns 1 if something is still out. */
int fs_ctrl_drain(fs_engine_t *engine, double deadline)
{
    const fs_list_t *e;
    int pending;

    do {
        fs_engine_progress_alone(engine);
        pending = engine->ctrl_inflight > 0;
        for (e = engine->eps.next; (e != &engine->eps) && !pending; e = e->next) {
            const fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);

            pending = ep->close_op.busy && (ep->close_fate != FS_CLOSE_FAILED);
        }
    } while (pending && (fs_time_now() < deadline));
    return pending;
}

void fs_engine_abort_peers(fs_engine_t *engine, fs_ep_t *const *eps, size_t count,
                           int errcode)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        fs_ctrl_send(engine, eps[i], FS_CTRL_ABORT, (uint64_t)(int64_t)errcode);
    }
    fs_ctrl_drain(engine, fs_time_now() + 0.5);
}

/* ---- fault injection (tests) ------------------------------------------- */

void fs_engine_inject(fs_engine_t *engine, uint64_t after, int sig)
{
    engine->inject_left    = (after == 0) ? 1 : after;
    engine->inject_sig     = sig;
    engine->inject_contact = 0;
}

/* Every message then takes fs_engine_inject_fire's slow path, which looks
 * for the first one to a peer nothing was exchanged with. */
void fs_engine_inject_first_contact(fs_engine_t *engine, int sig)
{
    engine->inject_left    = 1;
    engine->inject_sig     = sig;
    engine->inject_contact = 1;
}

void fs_engine_inject_fire(fs_engine_t *engine, const fs_ep_t *ep)
{
    if (engine->inject_contact &&
        ((ep == NULL) || (ep->tx_msgs != 1) || (ep->rx_msgs != 0))) {
        engine->inject_left = 1;            /* not a first contact: look on */
        return;
    }
    FS_WARN("fault injection: killing this process with signal %d%s", engine->inject_sig,
            engine->inject_contact ? " at first contact with a peer" : "");
    engine->inject_contact = 0;             /* once (SIGSTOP returns) */
    engine->inject_left    = UINT64_MAX;
    if (engine->tl_ops->tx_flush != NULL) {
        engine->tl_ops->tx_flush(engine->tl, 0.5);
    }
    engine->host->inject(engine->host_arg, engine->inject_sig);
}
