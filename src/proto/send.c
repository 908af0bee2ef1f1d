/* Send side.  Remote: one active message, eager or rendezvous as the
 * transport decides; synchronous sends are forced to rendezvous, whose
 * completion already means the receiver matched.  Self: handled here, since
 * UCX has no self transport in PEER mode. */
#include "proto/engine_int.h"

static void fs_send_done(fs_tl_op_t *op, fs_status_t status, size_t length);

/* What a request says of its message besides the wire's short form and
 * the transport op: fs_send_prepare's and fs_send_try's common part. */
static void fs_send_describe(fs_send_t *sreq, fs_comm_t *comm, int32_t dst, int32_t tag,
                             fs_send_mode_t mode)
{
    sreq->comm        = comm;
    sreq->dst         = dst;
    sreq->mode        = mode;
    sreq->hdr.cid     = comm->cid;
    sreq->hdr.tag     = tag;
    sreq->hdr.src     = comm->my_rank;
    sreq->hdr.flags   = (mode == FS_SEND_SYNC) ? FS_HDR_F_SYNC : 0;
    sreq->hdr.pad     = 0;
    sreq->blocking    = 0;   /* the host sets it: fs_send_fast */
    sreq->super.flags  = 0;
    sreq->super.engine = comm->engine;
}

void fs_send_prepare(fs_send_t *sreq, fs_comm_t *comm, int32_t dst, int32_t tag,
                     fs_send_mode_t mode)
{
    fs_send_describe(sreq, comm, dst, tag, mode);
    sreq->short_ok    = comm->short_hdr && (tag >= INT16_MIN) && (tag <= INT16_MAX) &&
                        (mode != FS_SEND_SYNC);
    sreq->hdr_short.cid = (uint16_t)comm->cid;
    sreq->hdr_short.src = (uint16_t)comm->my_rank;
    sreq->hdr_short.tag = (int16_t)tag;
    sreq->super.op.cb      = fs_send_done;
    sreq->super.op.busy    = 0;
    sreq->super.host_flags = 0;
}

void fs_send_finish(fs_engine_t *engine, fs_send_t *sreq, fs_status_t status)
{
    sreq->super.status  = status;
    sreq->super.flags  |= FS_REQ_F_DONE;
    engine->host->send_complete(sreq);
}

static void fs_send_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    fs_send_t *sreq = fs_container_of(op, fs_send_t, super.op);

    (void)length;
    if (fs_req_op_ended(&sreq->super, &status)) {
        fs_send_finish(sreq->super.engine, sreq, status);
    }
}

fs_status_t fs_self_copy(fs_engine_t *engine, fs_recv_t *rreq, fs_send_t *sreq)
{
    const fs_dt_ops_t *dt = &engine->host->dt;
    size_t len = (sreq->buf.len < rreq->buf.len) ? sreq->buf.len : rreq->buf.len;
    char bounce[8192];
    size_t offset, n;

    if ((sreq->buf.dt == NULL) && (rreq->buf.dt == NULL)) {
        memcpy(rreq->buf.ptr, sreq->buf.ptr, len);
        return FS_OK;
    }
    for (offset = 0; offset < len; offset += n) {
        n = fs_buf_pack(dt, &sreq->buf, offset, bounce,
                        (len - offset < sizeof(bounce)) ? len - offset : sizeof(bounce));
        if (n == 0) {
            return FS_ERR_LOCAL;
        }
        fs_buf_unpack(dt, &rreq->buf, offset, bounce, n);
    }
    return FS_OK;
}

/* Small standard sends to self are buffered and complete at once; large or
 * synchronous ones wait for their receive, like a remote rendezvous. */
static fs_status_t fs_send_self(fs_engine_t *engine, fs_send_t *sreq)
{
    fs_comm_t *comm      = sreq->comm;
    fs_comm_peer_t *peer = &comm->peers[sreq->dst];
    int rndv = (sreq->mode == FS_SEND_SYNC) ||
               (sreq->buf.len > engine->params->self_eager_limit);
    fs_mq_recv_t *posted;
    fs_msg_t fresh, *stored;

    fresh.mq.src    = comm->my_rank;
    fresh.mq.tag    = sreq->hdr.tag;
    fresh.cid       = comm->cid;
    fresh.kind      = rndv ? FS_MSG_SELF : FS_MSG_EAGER;
    fresh.store     = FS_MSG_STORE_NONE;
    fresh.flags     = sreq->hdr.flags;
    fresh.is_stored = 0;
    fresh.epoch     = engine->fail_epoch;
    fresh.len       = sreq->buf.len;
    fresh.data      = sreq->buf.ptr;
    fresh.desc      = NULL;
    fresh.self_sreq = sreq;
    ++engine->stats.msgs_sent;
    fs_engine_count_msg(engine, NULL);

    posted = fs_mq_match_posted(&comm->mq, &peer->bin, fresh.mq.tag);
    if (posted != NULL) {
        fs_recv_t *rreq = fs_container_of(posted, fs_recv_t, mq);
        fresh.kind = FS_MSG_SELF;   /* copy straight between the two buffers */
        fs_recv_finish(engine, rreq, fs_recv_deliver(engine, rreq, &fresh));
        return FS_OK;
    }
    if (!rndv && (sreq->buf.dt != NULL)) {
        stored = fs_msg_store_packed(engine, &fresh, &sreq->buf);
    } else {
        stored = fs_msg_store(engine, &fresh, NULL);
    }
    if (stored == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    fs_mq_add_unexpected(&comm->mq, &peer->bin, &stored->mq);
    ++engine->stats.unexpected;
    return rndv ? FS_INPROGRESS : FS_OK;
}

/* A message the transport took spends its sequence number and counts. */
static inline void fs_send_commit(fs_engine_t *engine, fs_comm_peer_t *peer)
{
    ++peer->tx_seq;
    ++peer->ep->tx_msgs;
    ++engine->stats.msgs_sent;
    fs_engine_count_msg(engine, peer->ep);
}

/* Hands a message to the transport; the sequence number and counters are
 * only committed if it was sent (FS_ERR_AGAIN leaves no trace). */
static fs_status_t fs_send_remote(fs_engine_t *engine, fs_send_t *sreq,
                                  fs_comm_peer_t *peer, unsigned flags)
{
    fs_ep_t *ep = peer->ep;
    const void *hdr = &sreq->hdr;
    size_t hdr_len  = sizeof(sreq->hdr);
    fs_status_t status;

    sreq->hdr.seq = peer->tx_seq;
    if (fs_likely(sreq->short_ok)) {
        sreq->hdr_short.seq = peer->tx_seq;
        hdr     = &sreq->hdr_short;
        hdr_len = sizeof(sreq->hdr_short);
    }
    status = engine->tl_ops->am_send(engine->tl, ep->tl_ep, FS_AM_MATCH, hdr, hdr_len,
                                     &sreq->buf, flags, &sreq->super.op);
    if (fs_likely(status != FS_ERR_AGAIN)) {
        fs_send_commit(engine, peer);
    }
    return status;
}

/* A message handed to the transport, which did not complete it at once:
 * in flight (tracked), waiting for its peer's fate (parked), or failed. */
static fs_status_t fs_send_committed(fs_send_t *sreq, fs_status_t status)
{
    if (status == FS_INPROGRESS) {
        fs_req_track(&sreq->super);
        return FS_INPROGRESS;
    }
    if (fs_unlikely(fs_req_settle_error(&sreq->super, &status))) {
        return FS_INPROGRESS;
    }
    sreq->super.status = status;
    sreq->super.flags  = FS_REQ_F_DONE;
    return status;
}

/* The rest of a request fs_send_try began (op, wire header and buffer are
 * set), as fs_send_prepare and fs_send_start would have made it: only for a
 * send the transport kept. */
static void fs_send_try_complete(fs_send_t *sreq, fs_comm_t *comm, int32_t dst,
                                 int32_t tag)
{
    fs_send_describe(sreq, comm, dst, tag, FS_SEND_STANDARD);
    sreq->hdr.seq  = sreq->hdr_short.seq;
    sreq->short_ok = 1;
    sreq->super.ep = comm->peers[dst].ep;
}

/* The common MPI_Isend and MPI_Send: small, contiguous, standard, to a
 * healthy peer, done inside the call.  Only what such a send needs is
 * written (the rest of sreq only if the transport kept it): this is the
 * send path's hot loop.  FS_ERR_AGAIN: nothing was sent.  Anything else
 * was sent (the sequence number is spent): FS_OK, or, should a transport
 * break FS_TL_SEND_IMM's promise, what fs_send_start would return, and then
 * the caller keeps sreq until it is idle. */
fs_status_t fs_send_try(fs_send_t *sreq, fs_comm_t *comm, int32_t dst, int32_t tag,
                        void *ptr, size_t len)
{
    fs_comm_peer_t *peer = &comm->peers[dst];
    fs_ep_t *ep          = peer->ep;
    fs_engine_t *engine  = comm->engine;
    fs_status_t status;

    if (fs_unlikely(!fs_ep_is_usable(ep) || ep->is_self || !comm->short_hdr ||
                    comm->revoked || (tag < INT16_MIN) || (tag > INT16_MAX) ||
                    ((tag < 0) && comm->coll_inactive)) ||
        (len > ep->imm_max)) {
        return FS_ERR_AGAIN;
    }
    sreq->hdr_short.cid = (uint16_t)comm->cid;
    sreq->hdr_short.src = (uint16_t)comm->my_rank;
    sreq->hdr_short.tag = (int16_t)tag;
    sreq->hdr_short.seq = peer->tx_seq;
    fs_buf_set_contig(&sreq->buf, ptr, len);
    sreq->super.op.cb   = fs_send_done;
    sreq->super.op.busy = 0;
    status = engine->tl_ops->am_send(engine->tl, ep->tl_ep, FS_AM_MATCH, &sreq->hdr_short,
                                     sizeof(sreq->hdr_short), &sreq->buf, FS_TL_SEND_IMM,
                                     &sreq->super.op);
    if (fs_unlikely(status == FS_ERR_AGAIN)) {
        ep->imm_refused = len + 1;
        return FS_ERR_AGAIN;
    }
    fs_send_commit(engine, peer);
    if (fs_likely(status == FS_OK)) {
        return FS_OK;
    }
    fs_send_try_complete(sreq, comm, dst, tag);
    return fs_send_committed(sreq, status);
}

/* The first send after a refused immediate one settles the refusal: if it
 * is the same message and went out inline, the refusal was its size, not a
 * lack of resources (ep.h imm_max).  Any other outcome teaches nothing. */
static void fs_send_learn_imm(fs_ep_t *ep, size_t len, fs_status_t status)
{
    if ((status == FS_OK) && (ep->imm_refused == len + 1) && (len > 0) &&
        (len <= ep->imm_max)) {
        ep->imm_max = len - 1;
    }
    ep->imm_refused = 0;
}

/* Whether a send asks for the transport's fastest local completion
 * (params send_fast_local_max): blocking collective traffic, not too big. */
static inline int fs_send_fast(const fs_engine_t *engine, const fs_send_t *sreq)
{
    return sreq->blocking && (sreq->hdr.tag < 0) &&
           (sreq->buf.len <= engine->params->send_fast_local_max);
}

fs_status_t fs_send_precheck(const fs_comm_t *comm, uint32_t dst, int32_t tag)
{
    const fs_ep_t *ep = comm->peers[dst].ep;

    if (fs_unlikely(comm->revoked)) {
        return FS_ERR_REVOKED;
    }
    if (fs_unlikely(!fs_ep_is_usable(ep)) && !fs_ep_takes_late_sends(ep)) {
        return fs_peer_status(ep);
    }
    if (fs_unlikely(tag < 0) && comm->coll_inactive) {
        return FS_ERR_COLL_INACTIVE;
    }
    return FS_OK;
}

fs_status_t fs_send_start(fs_send_t *sreq)
{
    fs_comm_t *comm      = sreq->comm;
    fs_engine_t *engine  = comm->engine;
    fs_comm_peer_t *peer = &comm->peers[sreq->dst];
    fs_ep_t *ep          = peer->ep;
    fs_status_t status;

    sreq->super.ep    = ep;
    sreq->super.flags = 0;
    status = fs_send_precheck(comm, sreq->dst, sreq->hdr.tag);
    if (fs_unlikely(status != FS_OK)) {
        sreq->super.status = status;
        sreq->super.flags  = FS_REQ_F_DONE;
        fs_engine_progress_on_error(engine);
        return status;
    }
    if (fs_unlikely(ep->is_self)) {
        status = fs_send_self(engine, sreq);
    } else if (fs_unlikely(ep->state == FS_EP_SUSPECTED)) {
        fs_req_park(&sreq->super);      /* its link broke: wait for its fate */
        return FS_INPROGRESS;
    } else {
        status = fs_send_remote(engine, sreq, peer,
                                (sreq->mode == FS_SEND_SYNC) ? FS_TL_SEND_RNDV :
                                (fs_send_fast(engine, sreq) ? FS_TL_SEND_FAST : 0) |
                                (sreq->blocking ? FS_TL_SEND_WAITED : 0));
        if (fs_unlikely(ep->imm_refused != 0)) {
            fs_send_learn_imm(ep, sreq->buf.len, status);
        }
        if (fs_likely(status == FS_OK)) {
            sreq->super.status = FS_OK;
            sreq->super.flags  = FS_REQ_F_DONE;
            return FS_OK;
        }
        return fs_send_committed(sreq, status);
    }
    if (status != FS_INPROGRESS) {
        sreq->super.status = status;
        sreq->super.flags  = FS_REQ_F_DONE;
    }
    return status;
}
