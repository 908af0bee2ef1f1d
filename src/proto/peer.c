/* What happens to operations when a peer fails or leaves. */
#include "proto/engine_int.h"
#include "failure/fault_status.h"

void fs_req_track(fs_req_t *req)
{
    fs_list_push_tail(&req->ep->inflight, &req->ep_elem);
    req->flags |= FS_REQ_F_INFLIGHT;
}

void fs_req_untrack(fs_req_t *req)
{
    if (req->flags & FS_REQ_F_INFLIGHT) {
        fs_list_remove(&req->ep_elem);
        req->flags &= (uint8_t)~FS_REQ_F_INFLIGHT;
    }
}

int fs_req_op_ended(fs_req_t *req, fs_status_t *status_p)
{
    fs_req_untrack(req);
    if (req->flags & FS_REQ_F_DONE) {
        req->engine->host->req_idle(req);   /* was completed by a failure */
        return 0;
    }
    if (*status_p != FS_OK) {
        *status_p = fs_peer_flush_status(req->ep, *status_p);
    }
    return 1;
}

fs_status_t fs_peer_status(const fs_ep_t *ep)
{
    switch (ep->state) {
    case FS_EP_FAILED:
        if ((ep->fault != NULL) && !fs_fault_is_peer(ep->fault->cls)) {
            return FS_ERR_LOCAL;
        }
        return FS_ERR_PEER_FAILED;
    case FS_EP_LEFT:
    case FS_EP_CLOSED:
        return FS_ERR_PEER_LEFT;
    default:
        return FS_OK;
    }
}

fs_status_t fs_peer_flush_status(const fs_ep_t *ep, fs_status_t status)
{
    if (status != FS_ERR_CANCELED) {
        return status;
    }
    /* a flush follows its cause; without a known cause it is local */
    if ((ep != NULL) && fs_ep_is_gone(ep)) {
        return fs_peer_status(ep);
    }
    return FS_ERR_LOCAL;
}

static void fs_peer_complete_inflight(fs_engine_t *engine, fs_ep_t *ep,
                                      fs_status_t status)
{
    fs_list_t *e;

    while ((e = fs_list_pop_head(&ep->inflight)) != NULL) {
        fs_req_t *req = fs_container_of(e, fs_req_t, ep_elem);

        fs_list_init(&req->ep_elem);
        req->flags &= (uint8_t)~FS_REQ_F_INFLIGHT;
        /* complete first: a cancel may run the op callback at once, which
         * then only reports the request idle */
        if (req->flags & FS_REQ_F_RECV) {
            fs_recv_finish(engine, fs_container_of(req, fs_recv_t, super), status);
        } else {
            fs_send_finish(engine, fs_container_of(req, fs_send_t, super), status);
        }
        engine->tl_ops->cancel(engine->tl, &req->op);
    }
}

/* Posted receives that name ep as their source can never be satisfied. */
static void fs_peer_complete_posted(fs_engine_t *engine, fs_ep_t *ep,
                                    fs_status_t status)
{
    fs_list_t *c, *e;
    uint32_t r;

    for (c = engine->comms_list.next; c != &engine->comms_list; c = c->next) {
        fs_comm_t *comm = fs_container_of(c, fs_comm_t, elem);

        for (r = 0; r < comm->size; ++r) {
            if (comm->peers[r].ep != ep) {
                continue;
            }
            while ((e = fs_list_pop_head(&comm->peers[r].bin.posted)) != NULL) {
                fs_recv_t *rreq = fs_container_of(e, fs_recv_t, mq.elem);
                fs_list_init(&rreq->mq.elem);
                rreq->super.ep = ep;
                fs_recv_finish(engine, rreq, status);
            }
        }
        fs_comm_discard_parked(comm, ep);
    }
}

void fs_peer_fail(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t *row)
{
    fs_status_t status;

    if (ep->is_self || fs_ep_is_gone(ep)) {
        /* already failed, or left normally: leaving is not failing */
        return;
    }
    fs_ep_transition(ep, FS_EP_FAILED);
    ep->fault      = row;
    ep->fail_epoch = ++engine->fail_epoch;
    status         = fs_peer_status(ep);
    ++engine->stats.peers_failed;
    if (status == FS_ERR_PEER_FAILED) {
        FS_INFO("peer %#llx failed: %s", (unsigned long long)ep->id,
                (row != NULL) ? row->name : "reported");
    } else {
        FS_ERROR("endpoint to %#llx broke locally: %s (%s); not blaming the peer",
                 (unsigned long long)ep->id, row->name, row->reason);
    }
    fs_peer_complete_inflight(engine, ep, status);
    fs_peer_complete_posted(engine, ep, status);
    if ((status == FS_ERR_PEER_FAILED) && (engine->host->peer_failed != NULL)) {
        engine->host->peer_failed(engine->host_arg, ep);
    }
}

void fs_peer_left(fs_engine_t *engine, fs_ep_t *ep)
{
    if (!fs_ep_transition(ep, FS_EP_LEFT)) {
        return;
    }
    ++engine->stats.peers_left;
    FS_DEBUG("peer %#llx finalized", (unsigned long long)ep->id);
    /* everything it sent has been taken: receives still naming it would
     * wait forever; they end with a plain error, never a failure */
    fs_peer_complete_posted(engine, ep, FS_ERR_PEER_LEFT);
}
