/* Receive side: incoming messages (sequencing, matching, storing) and
 * posted receives (matching against stored messages, delivery). */
#include "proto/engine_int.h"

static void fs_recv_fetch_done(fs_tl_op_t *op, fs_status_t status, size_t length);

void fs_recv_prepare(fs_recv_t *rreq, fs_comm_t *comm, int32_t src, int32_t tag)
{
    rreq->comm         = comm;
    rreq->mq.src       = src;
    rreq->mq.tag       = tag;
    rreq->super.op.cb  = fs_recv_fetch_done;
    rreq->super.flags      = FS_REQ_F_RECV;
    rreq->super.host_flags = 0;
    rreq->super.op.busy    = 0;
    rreq->super.ep         = NULL;
    rreq->super.engine     = comm->engine;
    /* results stay meaningful if no message ever arrives (failure, cancel) */
    rreq->src_out          = src;
    rreq->tag_out          = tag;
    rreq->len_out          = 0;
    rreq->msg_len          = 0;
    fs_list_init(&rreq->mq.elem);
}

void fs_recv_finish(fs_engine_t *engine, fs_recv_t *rreq, fs_status_t status)
{
    rreq->super.status  = status;
    rreq->super.flags  |= FS_REQ_F_DONE;
    engine->host->recv_complete(rreq);
}

static void fs_recv_fetch_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    fs_recv_t *rreq = fs_container_of(op, fs_recv_t, super.op);

    (void)length;
    if (!fs_req_op_ended(&rreq->super, &status)) {
        return;
    }
    if (status == FS_OK) {
        status = rreq->super.status;    /* FS_OK or FS_ERR_TRUNCATE, set at start */
    } else if (status == FS_ERR_PEER_FAILED) {
        fs_recv_lost(rreq);             /* the payload can no longer be fetched */
    }
    fs_recv_finish(rreq->super.engine, rreq, status);
}

/* A receive ended with its peer's failure: later receives from that peer
 * that could match what this one could fail too (rule c).  A wildcard-source
 * receive lost the message it matched, so later ones with that message's
 * tag would overtake it. */
void fs_recv_lost(fs_recv_t *rreq)
{
    fs_comm_t *comm = rreq->comm;
    int wild_src    = (rreq->mq.src == FS_ANY_SOURCE);

    if (wild_src && (rreq->src_out == FS_ANY_SOURCE)) {
        return;                         /* no message: nothing to order */
    }
    fs_comm_poison(comm, &comm->peers[rreq->src_out],
                   wild_src ? rreq->tag_out : rreq->mq.tag);
}

static fs_status_t fs_recv_fetch(fs_engine_t *engine, fs_recv_t *rreq,
                                 fs_msg_t *msg, fs_status_t status)
{
    void *desc = msg->desc;
    fs_status_t st;

    msg->desc          = NULL;      /* the transport owns it from here */
    rreq->super.status = status;
    if (fs_unlikely(!fs_ep_is_usable(rreq->super.ep)) &&
        (rreq->super.ep->state != FS_EP_LEFT) &&
        (rreq->super.ep->state != FS_EP_SUSPECTED) &&
        !fs_engine_desc_whole(engine, desc)) {
        /* the payload lived in a process that is gone (rule a); one that
         * finalized keeps its sends alive until we took them (leave.c); one
         * the transport pushed whole into this process is here */
        fs_engine_release_desc(engine, desc);
        return fs_peer_status(rreq->super.ep);
    }
    st = engine->tl_ops->recv_data(engine->tl, desc, &rreq->buf, msg->len,
                                   &rreq->super.op);
    if (st == FS_INPROGRESS) {
        fs_req_track(&rreq->super);
        return FS_INPROGRESS;
    }
    if (st == FS_OK) {
        return status;
    }
    if (fs_req_settle_error(&rreq->super, &st)) {
        return FS_INPROGRESS;
    }
    return st;
}

/* A receive takes a message of len bytes from src with tag: its results,
 * and FS_OK or FS_ERR_TRUNCATE. */
static inline fs_status_t fs_recv_take(fs_recv_t *rreq, int32_t src, int32_t tag, size_t len)
{
    rreq->src_out  = src;
    rreq->tag_out  = tag;
    rreq->msg_len  = len;
    rreq->len_out  = (len <= rreq->buf.len) ? len : rreq->buf.len;
    rreq->super.ep = rreq->comm->peers[src].ep;
    return (len <= rreq->buf.len) ? FS_OK : FS_ERR_TRUNCATE;
}

fs_status_t fs_recv_deliver(fs_engine_t *engine, fs_recv_t *rreq, fs_msg_t *msg)
{
    fs_status_t status = fs_recv_take(rreq, msg->mq.src, msg->mq.tag, msg->len);

    switch (msg->kind) {
    case FS_MSG_EAGER:
        if (msg->len > 0) {
            fs_buf_unpack(&engine->host->dt, &rreq->buf, 0, msg->data, msg->len);
        }
        break;
    case FS_MSG_RNDV:
        status = fs_recv_fetch(engine, rreq, msg, status);
        break;
    case FS_MSG_SELF:
        fs_self_copy(engine, rreq, msg->self_sreq);
        if (msg->is_stored) {
            /* the sender has been waiting for this match */
            fs_send_finish(engine, msg->self_sreq, FS_OK);
        }
        break;
    }
    if (msg->is_stored) {
        fs_msg_free(engine, msg);
    }
    return status;
}

/* Next message in its sender's order: give it to a posted receive or keep it
 * as unexpected. */
static fs_status_t fs_rx_in_order(fs_comm_t *comm, int32_t rank, fs_msg_t *msg,
                                  const fs_tl_rx_t *rx)
{
    fs_engine_t *engine  = comm->engine;
    fs_comm_peer_t *peer = &comm->peers[rank];
    fs_mq_recv_t *posted;
    fs_msg_t *stored;
    fs_status_t status;

    if (fs_unlikely(fs_mq_tag_is_coll(msg->mq.tag)) && comm->coll_inactive) {
        /* no collective can run on this communicator any more (17.7) */
        ++engine->stats.discarded_after_failure;
        if (msg->is_stored) {
            fs_msg_free(engine, msg);
        }
        return FS_OK;
    }
    posted = fs_mq_match_posted(&comm->mq, &peer->bin, msg->mq.tag);
    if (fs_likely(posted != NULL)) {
        fs_recv_t *rreq = fs_container_of(posted, fs_recv_t, mq);
        status = fs_recv_deliver(engine, rreq, msg);
        if (status != FS_INPROGRESS) {
            fs_recv_finish(engine, rreq, status);
        }
        return FS_OK;
    }

    stored = msg->is_stored ? msg : fs_msg_store(engine, msg, rx);
    if (fs_unlikely(stored == NULL)) {
        fs_chan_lose(comm, rank, msg->seq.seq);   /* never a silent drop */
        return FS_OK;
    }
    fs_mq_add_unexpected(&comm->mq, &peer->bin, &stored->mq);
    ++engine->stats.unexpected;
    return ((stored != msg) && (stored->desc != NULL)) ? FS_INPROGRESS : FS_OK;
}

static int fs_rx_arrived_after_failure(const fs_ep_t *ep, const fs_msg_t *msg)
{
    return fs_ep_is_failed(ep) && (msg->epoch >= ep->fail_epoch);
}

static void fs_rx_discard(fs_engine_t *engine, fs_msg_t *msg)
{
    ++engine->stats.discarded_after_failure;
    if (msg->is_stored) {
        fs_msg_free(engine, msg);
    }
}

fs_status_t fs_rx_sequence(fs_comm_t *comm, int32_t rank, fs_msg_t *msg,
                           const fs_tl_rx_t *rx)
{
    fs_engine_t *engine  = comm->engine;
    fs_comm_peer_t *peer = &comm->peers[rank];
    fs_status_t status   = FS_OK;
    fs_seq_item_t *item;
    fs_msg_t *stored;

    if (fs_unlikely(fs_rx_arrived_after_failure(peer->ep, msg))) {
        fs_rx_discard(engine, msg);
        return FS_OK;
    }
    if (fs_unlikely(comm->revoked) && fs_revoke_drops(comm, (uint32_t)rank)) {
        fs_rx_discard(engine, msg);     /* its sender revoked comm: its send ended */
        return FS_OK;
    }
    if (fs_unlikely(peer->broken != FS_CHAN_OK) &&
        ((peer->broken == FS_CHAN_DEAD) ||
         ((int16_t)(uint16_t)(msg->seq.seq - peer->lost_seq) >= 0))) {
        /* at or after a lost message: its sender's order is gone */
        ++engine->stats.lost_no_memory;
        if (msg->is_stored) {
            fs_msg_free(engine, msg);
        }
        return FS_OK;
    }
    switch (fs_seq_check(&peer->rx, msg->seq.seq)) {
    case FS_SEQ_IN_ORDER:
        fs_seq_advance(&peer->rx);
        status = fs_rx_in_order(comm, rank, msg, rx);
        while (fs_unlikely(peer->rx.num_parked != 0) &&
               ((item = fs_seq_next_ready(&peer->rx)) != NULL)) {
            fs_seq_advance(&peer->rx);
            fs_rx_in_order(comm, rank, fs_container_of(item, fs_msg_t, seq), NULL);
        }
        if (fs_unlikely(peer->broken == FS_CHAN_HOLE) &&
            (peer->rx.expected == peer->lost_seq)) {
            fs_chan_die(comm, rank);    /* everything before the hole is in */
        }
        break;
    case FS_SEQ_EARLY:
        stored = msg->is_stored ? msg : fs_msg_store(engine, msg, rx);
        if (stored == NULL) {
            fs_chan_lose(comm, rank, msg->seq.seq);   /* the hole never fills */
            break;
        }
        fs_seq_park(&peer->rx, &stored->seq);
        ++engine->stats.reordered;
        status = ((stored != msg) && (stored->desc != NULL)) ? FS_INPROGRESS : FS_OK;
        break;
    case FS_SEQ_STALE:
        FS_WARN("cid %u: dropping duplicate message seq %u from rank %d (expected %u)",
                comm->cid, msg->seq.seq, rank, peer->rx.expected);
        ++engine->stats.dropped_malformed;
        if (msg->is_stored) {
            fs_msg_free(engine, msg);
        }
        return FS_OK;
    }
    fs_ep_count_rx(engine, peer->ep);
    return status;
}

static fs_status_t fs_rx_stash_early(fs_engine_t *engine, fs_msg_t *fresh,
                                     const fs_tl_rx_t *rx)
{
    fs_msg_t *stored = fs_msg_store(engine, fresh, rx);

    if (stored == NULL) {
        if (engine->early_lost_count < FS_EARLY_LOST_MAX) {
            engine->early_lost[engine->early_lost_count].cid = fresh->cid;
            engine->early_lost[engine->early_lost_count].src = fresh->mq.src;
            engine->early_lost[engine->early_lost_count].seq = fresh->seq.seq;
            ++engine->early_lost_count;
        } else {
            FS_ERROR("a message for not-yet-created cid %u from rank %d could not be "
                     "kept, and too many such losses to track: its receives may "
                     "wait for it", fresh->cid, fresh->mq.src);
        }
        ++engine->stats.lost_no_memory;
        return FS_OK;
    }
    fs_list_push_tail(&engine->early, &stored->seq.elem);
    ++engine->stats.early_cid;
    return (stored->desc != NULL) ? FS_INPROGRESS : FS_OK;
}

/* The common case, taken without building a message: an eager message in
 * its sender's order, from a peer in its normal state, on a communicator
 * neither revoked nor with collectives off for it, that a posted receive
 * takes.  Returns 0 for anything else, which goes the general way
 * (fs_rx_sequence, fs_rx_in_order) with nothing changed: every check here is
 * one of theirs, so both ways deliver the same.  (Revoked and collectives
 * off cannot meet a posted receive that matches -- both end such receives
 * and refuse new ones -- but are checked all the same: the fast path must
 * not rest on that.) */
static int fs_rx_fast(fs_engine_t *engine, fs_comm_t *comm, const fs_hdr_match_t *hdr,
                      void *data, size_t len)
{
    fs_comm_peer_t *peer = &comm->peers[hdr->src];
    fs_mq_recv_t *posted;
    fs_recv_t *rreq;
    fs_status_t status;

    if ((peer->ep->state != FS_EP_UP) || comm->revoked || (peer->broken != FS_CHAN_OK) ||
        (hdr->seq != peer->rx.expected) || (peer->rx.num_parked != 0) ||
        (fs_mq_tag_is_coll(hdr->tag) && comm->coll_inactive)) {
        return 0;
    }
    posted = fs_mq_match_posted(&comm->mq, &peer->bin, hdr->tag);
    if (posted == NULL) {
        return 0;
    }
    fs_seq_advance(&peer->rx);
    fs_ep_count_rx(engine, peer->ep);
    rreq   = fs_container_of(posted, fs_recv_t, mq);
    status = fs_recv_take(rreq, hdr->src, hdr->tag, len);
    if (len > 0) {
        fs_buf_unpack(&engine->host->dt, &rreq->buf, 0, data, len);
    }
    fs_recv_finish(engine, rreq, status);
    return 1;
}

/* Everything but the common case, out of line: the message as an fs_msg_t
 * on this frame, not on fs_rx_match's. */
static __attribute__((noinline))
fs_status_t fs_rx_match_general(fs_engine_t *engine, fs_comm_t *comm,
                                const fs_hdr_match_t *hdr, void *data, size_t len,
                                const fs_tl_rx_t *rx)
{
    int rndv = (rx->flags & FS_TL_RX_RNDV) != 0;
    fs_status_t status;
    fs_msg_t fresh;

    fresh.mq.src    = hdr->src;
    fresh.mq.tag    = hdr->tag;
    fresh.seq.seq   = hdr->seq;
    fresh.cid       = hdr->cid;
    fresh.kind      = rndv ? FS_MSG_RNDV : FS_MSG_EAGER;
    fresh.store     = FS_MSG_STORE_NONE;
    fresh.flags     = hdr->flags;
    fresh.is_stored = 0;
    fresh.epoch     = engine->fail_epoch;
    fresh.len       = len;
    fresh.data      = rndv ? NULL : data;
    fresh.desc      = rndv ? rx->desc : NULL;
    fresh.self_sreq = NULL;
    if (fs_unlikely((comm != NULL) && ((uint32_t)hdr->src >= comm->size))) {
        FS_WARN("cid %u: dropping message from out-of-range rank %d", hdr->cid, hdr->src);
        ++engine->stats.dropped_malformed;
        return FS_OK;
    }
    engine->rx_desc = rx->desc;
    status = (comm == NULL) ? fs_rx_stash_early(engine, &fresh, rx) :
                              fs_rx_sequence(comm, hdr->src, &fresh, rx);
    engine->rx_desc = NULL;
    if (fs_unlikely(engine->rx_desc_released)) {
        /* kept, then dropped in the same upcall (a departure completed by
         * this very message discards what it parked): the transport frees
         * it */
        engine->rx_desc_released = 0;
        return FS_OK;
    }
    return status;
}

fs_status_t fs_rx_match(fs_engine_t *engine, const fs_hdr_match_t *hdr,
                        void *data, size_t len, const fs_tl_rx_t *rx)
{
    fs_comm_t *comm = fs_engine_comm(engine, hdr->cid);

    ++engine->stats.msgs_received;
    fs_engine_count_msg(engine, NULL);
    if (fs_likely((comm != NULL) && ((uint32_t)hdr->src < comm->size) &&
                  !(rx->flags & FS_TL_RX_RNDV)) &&
        fs_rx_fast(engine, comm, hdr, data, len)) {
        return FS_OK;
    }
    return fs_rx_match_general(engine, comm, hdr, data, len, rx);
}

/* ---- posted receives ----------------------------------------------------- */

/* The failure rules a new receive or probe meets before matching: FS_OK,
 * or the error it must end with at once. */
fs_status_t fs_recv_precheck(fs_comm_t *comm, fs_comm_peer_t *peer, int32_t tag)
{
    if (fs_unlikely(comm->revoked)) {
        return FS_ERR_REVOKED;
    }
    if (fs_unlikely(fs_mq_tag_is_coll(tag)) && comm->coll_inactive) {
        return FS_ERR_COLL_INACTIVE;
    }
    if (peer == NULL) {
        return fs_unlikely(comm->anysrc_disabled) ? FS_ERR_ANYSRC_DISABLED : FS_OK;
    }
    if (fs_unlikely(comm->poisoned) && fs_dp_blocks(&peer->poison, tag)) {
        return FS_ERR_PEER_FAILED;
    }
    return FS_OK;
}

/* The common case, taken without the general way's calls: a receive from
 * one healthy peer, on a communicator with no failure rule in force, that
 * no message waits for yet.  Every check is one the general way makes
 * (fs_recv_precheck, the unexpected queue, the peer's state), so both post
 * it alike. */
static inline int fs_recv_post_fast(fs_comm_t *comm, fs_recv_t *rreq)
{
    int32_t src = rreq->mq.src;
    fs_comm_peer_t *peer;

    if ((src == FS_ANY_SOURCE) || ((uint32_t)src >= comm->size) || comm->revoked ||
        comm->poisoned || (fs_mq_tag_is_coll(rreq->mq.tag) && comm->coll_inactive)) {
        return 0;
    }
    peer = &comm->peers[src];
    if (!fs_list_is_empty(&peer->bin.unexpected) || !fs_ep_is_usable(peer->ep) ||
        (peer->broken != FS_CHAN_OK)) {
        return 0;
    }
    fs_mq_post(&comm->mq, &peer->bin, &rreq->mq);
    return 1;
}

fs_status_t fs_recv_start(fs_recv_t *rreq)
{
    fs_comm_t *comm      = rreq->comm;
    fs_engine_t *engine  = comm->engine;
    int32_t src          = rreq->mq.src;
    fs_comm_peer_t *peer = NULL;
    fs_mq_msg_t *found;
    fs_status_t status;
    int held = 0;

    rreq->super.flags = FS_REQ_F_RECV | (rreq->super.flags & FS_REQ_F_HOLD_WILD);
    if (fs_likely(fs_recv_post_fast(comm, rreq))) {
        return FS_INPROGRESS;
    }
    if (src != FS_ANY_SOURCE) {
        if (fs_unlikely((uint32_t)src >= comm->size)) {
            return FS_ERR_INVALID;
        }
        peer = &comm->peers[src];
    }
    status = fs_recv_precheck(comm, peer, rreq->mq.tag);
    if (fs_unlikely(status == FS_ERR_ANYSRC_DISABLED) &&
        (rreq->super.flags & FS_REQ_F_HOLD_WILD)) {
        held   = 1;          /* it may match; if it waits, it is pending */
        status = FS_OK;
    }
    if (status != FS_OK) {
        /* failure rules end it before matching */
    } else if ((found = fs_mq_find_unexpected(&comm->mq, (peer != NULL) ? &peer->bin : NULL,
                                              rreq->mq.tag)) != NULL) {
        fs_mq_remove_unexpected(&comm->mq, found);
        status = fs_recv_deliver(engine, rreq, fs_container_of(found, fs_msg_t, mq));
    } else if ((peer != NULL) && fs_unlikely(!fs_ep_is_usable(peer->ep)) &&
               (peer->ep->state != FS_EP_SUSPECTED)) {
        status = fs_peer_status(peer->ep);
    } else if ((peer != NULL) && fs_unlikely(peer->broken == FS_CHAN_DEAD)) {
        status = FS_ERR_NO_MEMORY;      /* its message was lost (fs_chan_lose) */
    } else {
        fs_mq_post(&comm->mq, (peer != NULL) ? &peer->bin : NULL, &rreq->mq);
        if (fs_unlikely(held)) {
            rreq->super.flags |= FS_REQ_F_PENDING;
        }
        return FS_INPROGRESS;
    }
    if (fs_unlikely(status == FS_ERR_PEER_FAILED)) {
        fs_recv_lost(rreq);
    }
    if (status != FS_INPROGRESS) {
        rreq->super.status  = status;
        rreq->super.flags  |= FS_REQ_F_DONE;
    }
    if (fs_unlikely((status != FS_OK) && (status != FS_INPROGRESS))) {
        fs_engine_progress_on_error(engine);
    }
    return status;
}

int fs_recv_cancel(fs_recv_t *rreq)
{
    if (!fs_mq_cancel(&rreq->comm->mq, &rreq->mq)) {
        return 0;
    }
    fs_recv_finish(rreq->comm->engine, rreq, FS_ERR_CANCELED);
    return 1;
}

fs_status_t fs_mrecv_start(fs_recv_t *rreq, fs_msg_t *msg)
{
    fs_status_t status;

    rreq->super.flags = FS_REQ_F_RECV;
    status = fs_recv_deliver(rreq->comm->engine, rreq, msg);
    if (fs_unlikely(status == FS_ERR_PEER_FAILED)) {
        fs_recv_lost(rreq);
    }
    if (status != FS_INPROGRESS) {
        rreq->super.status  = status;
        rreq->super.flags  |= FS_REQ_F_DONE;
    }
    return status;
}
