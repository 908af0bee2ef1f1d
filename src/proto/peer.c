/* What a peer's failure (or departure) does to operations and communicators.
 *
 * Fail-stop semantics (MPI-FT draft 17.6-17.7), applied when this process
 * learns of a new failure of P, from its transport or from another process:
 *  - every operation in flight on P ends with MPI_ERR_RANK_FAIL_STOP;
 *  - posted receives naming P end the same way, and their tags are poisoned
 *    (src/queues/deadpeer.h); messages P sent before failing and that are
 *    fully received stay deliverable, later ones are discarded (recv.c);
 *  - on every communicator containing P, MPI_ANY_SOURCE is disabled
 *    (pending wildcard receives end) and the communicator becomes
 *    collectively inactive (all collective traffic on it ends);
 *  - the other processes are told (ctrl.c). */
#include "proto/engine_int.h"
#include "failure/fault_status.h"
#include "common/fs_time.h"

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
    if (fs_unlikely(req->flags & FS_REQ_F_PARKED)) {
        req->flags &= (uint8_t)~FS_REQ_F_PARKED;
        --req->engine->parked;
    }
}

/* An operation failed with an error of unknown cause (a flush, UCX's
 * catch-all I/O error) while its peer still looks alive: transports report
 * the operation before the endpoint error that explains it (UCX: a failed
 * process_vm_readv completes the fetch at once and schedules the endpoint
 * error for the next progress).  The request waits, on the peer's in-flight
 * list, for the peer's failure or for cause_wait_ms; then it is local. */
/* By when ep's fate must be known: cause_wait_ms from now, or later if the
 * host's failure detector needs longer to decide on a process that died
 * now (during start-up it allows a grace for the first heartbeat). */
double fs_peer_fate_deadline(fs_engine_t *engine, fs_ep_t *ep)
{
    double deadline = fs_time_now() + engine->params->cause_wait_ms * 1e-3;

    if (engine->host->fate_deadline != NULL) {
        double verdict = engine->host->fate_deadline(engine->host_arg, ep);
        if (verdict > deadline) {
            deadline = verdict;
        }
    }
    return deadline;
}

void fs_req_park(fs_req_t *req)
{
    fs_engine_t *engine = req->engine;

    /* each request waits its own time; the engine keeps the earliest
     * deadline so that progress checks one number */
    req->deadline = fs_peer_fate_deadline(engine, req->ep);
    if ((engine->parked++ == 0) || (req->deadline < engine->park_deadline)) {
        engine->park_deadline = req->deadline;
    }
    req->flags |= FS_REQ_F_PARKED;
    fs_req_track(req);
}

int fs_req_op_ended(fs_req_t *req, fs_status_t *status_p)
{
    if (fs_unlikely(req->flags & FS_REQ_F_DRAIN)) {
        /* the transport let go of the buffer: now the receive may end */
        fs_list_remove(&req->ep_elem);
        fs_list_init(&req->ep_elem);
        req->flags &= (uint8_t)~FS_REQ_F_DRAIN;
        *status_p = req->status;
        return 1;
    }
    fs_req_untrack(req);
    if (req->flags & FS_REQ_F_DONE) {
        if (req->flags & FS_REQ_F_ABANDONED) {
            req->flags &= (uint8_t)~FS_REQ_F_ABANDONED;
            --req->ep->abandoned;
        }
        req->engine->host->req_idle(req);   /* was completed by a failure or revoke */
        return 0;
    }
    if (fs_likely(*status_p == FS_OK) || (req->ep == NULL)) {
        return 1;
    }
    return !fs_req_settle_error(req, status_p);
}

int fs_req_settle_error(fs_req_t *req, fs_status_t *status_p)
{
    if (fs_req_park_error(req, *status_p)) {
        return 1;
    }
    if (fs_ep_is_usable(req->ep) && (*status_p == FS_ERR_PEER_FAILED)) {
        /* the operation saw the death before the endpoint did (a transport
         * that reports a dead peer on the send itself, before its endpoint
         * error: OFI sockets): the failure is recorded first, so that no
         * request reports the class for a process the queries do not name */
        fs_peer_fail(req->engine, req->ep, NULL, NULL);
    }
    *status_p = fs_peer_flush_status(req->ep, *status_p);
    return 0;
}

int fs_req_park_error(fs_req_t *req, fs_status_t status)
{
    const fs_ep_t *ep = req->ep;

    if ((ep->state == FS_EP_SUSPECTED) &&
        ((status != FS_ERR_PEER_FAILED) || fs_peer_remote(req->engine, req->ep))) {
        /* its link broke: the peer's fate decides (across hosts an
         * operation's error is no proof either) */
        fs_req_park(req);
        return 1;
    }
    if ((status == FS_ERR_CANCELED) && fs_ep_is_usable(ep)) {
        fs_req_park(req);           /* an error of unknown cause */
        return 1;
    }
    if ((status == FS_ERR_PEER_FAILED) && fs_ep_is_usable(ep) &&
        (fs_ep_wire_unproven(ep) || fs_peer_remote(req->engine, req->ep))) {
        /* a failed connect (src/proto/wireup.c), or a link to another host:
         * the endpoint's error, read as such, decides */
        fs_req_park(req);
        return 1;
    }
    return 0;
}

int fs_peer_remote(fs_engine_t *engine, fs_ep_t *ep)
{
    return (engine->host->remote != NULL) && (engine->host->check != NULL) &&
           !ep->is_self && engine->host->remote(engine->host_arg, ep);
}

/* Over tcp a broken link is read as the peer's death (a dead process's
 * kernel resets its connections within milliseconds).  Across hosts a
 * link flap, a middlebox or a forged reset breaks it too: there only the
 * detector's verdict -- its timeout, or a host-mate of the peer seeing it
 * exited (fs_det_check) -- fails the peer; without one by the verdict
 * bound, the break is local (fs_peer_suspect). */
const fs_fault_row_t *fs_peer_reread(fs_engine_t *engine, fs_ep_t *ep,
                                     const fs_fault_row_t *row)
{
    const fs_fault_row_t *cross;

    if (!fs_fault_is_peer(row->cls) || !fs_peer_remote(engine, ep)) {
        return row;
    }
    cross = fs_fault_cross_host(row);
    if (cross->cls != FS_FAULT_FLUSH) {
        return row;                 /* its host answered: nothing listens */
    }
    FS_DEBUG("link to %#llx, on another host, broke (%s): its failure detector decides",
             (unsigned long long)ep->id, row->name);
    engine->host->check(engine->host_arg, ep);
    return cross;
}

/* The link to ep broke and its transport cannot tell why (a status of class
 * FLUSH: over shared memory, UCX cannot attach the segment of a peer that
 * died before first contact).  The peer may be dead, or something local
 * broke: its operations, and new ones, wait for its fate.  The failure
 * detector or another process's notice makes it failed; otherwise, after
 * cause_wait_ms, the break is local and blames nobody. */
void fs_peer_suspect(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t *row)
{
    if (!fs_ep_transition(ep, FS_EP_SUSPECTED)) {
        fs_peer_fail(engine, ep, row, NULL);   /* leaving, or already decided */
        return;
    }
    FS_DEBUG("endpoint to %#llx broke (%s): waiting for the peer's fate",
             (unsigned long long)ep->id, row->name);
    ep->fault         = row;
    ep->fate_deadline = fs_peer_fate_deadline(engine, ep);
    ++engine->suspects;
}

void fs_engine_refresh_fates(fs_engine_t *engine)
{
    fs_list_t *e, *r;

    if (engine->host->fate_deadline == NULL) {
        return;
    }
    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        double verdict;

        if ((ep->state != FS_EP_SUSPECTED) && (ep->inflight.next == &ep->inflight)) {
            continue;
        }
        verdict = engine->host->fate_deadline(engine->host_arg, ep);
        if ((ep->state == FS_EP_SUSPECTED) && (verdict > ep->fate_deadline)) {
            ep->fate_deadline = verdict;
        }
        for (r = ep->inflight.next; r != &ep->inflight; r = r->next) {
            fs_req_t *req = fs_container_of(r, fs_req_t, ep_elem);

            if ((req->flags & FS_REQ_F_PARKED) && (verdict > req->deadline)) {
                req->deadline = verdict;
            }
        }
    }
}

void fs_peer_suspects_expire(fs_engine_t *engine)
{
    double now = fs_time_now();
    fs_list_t *e;

    for (e = engine->eps.next; (e != &engine->eps) && (engine->suspects != 0);
         e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if ((ep->state == FS_EP_SUSPECTED) && (ep->fate_deadline <= now)) {
            fs_peer_fail(engine, ep, ep->fault, NULL);
        }
    }
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
    if ((status == FS_ERR_PEER_FAILED) && (ep != NULL) && (ep->state == FS_EP_LEFT)) {
        /* the link of a process that finalized breaks when it exits:
         * leaving is not failing */
        return FS_ERR_PEER_LEFT;
    }
    if (status != FS_ERR_CANCELED) {
        return status;
    }
    /* a flush follows its cause; without a known cause it is local */
    if ((ep != NULL) && fs_ep_is_gone(ep)) {
        return fs_peer_status(ep);
    }
    return FS_ERR_LOCAL;
}

/* Ends a request early; a transport op it still has is asked to stop and
 * reports the request idle when it does. */
/* A receive whose payload the transport is still writing (a rendezvous
 * over TCP: the sender pushes it) must not end while it does: the buffer
 * goes back to the user.  It waits for the fetch's own completion (the
 * peer's connection is gone or closed, so it comes soon) or, at worst,
 * cause_wait_ms. */
static int fs_req_drain(fs_engine_t *engine, fs_req_t *req, fs_status_t status)
{
    if (!(req->flags & FS_REQ_F_RECV) || !req->op.busy) {
        return 0;
    }
    /* appended in time order: the head has the earliest deadline */
    req->deadline = fs_time_now() + engine->params->cause_wait_ms * 1e-3;
    req->status = status;
    req->flags |= FS_REQ_F_DRAIN;
    fs_list_push_tail(&engine->draining, &req->ep_elem);
    engine->tl_ops->cancel(engine->tl, &req->op);
    return 1;
}

void fs_peer_drain_expire(fs_engine_t *engine)
{
    double now = fs_time_now();
    fs_list_t *e;

    while (((e = engine->draining.next) != &engine->draining) &&
           (fs_container_of(e, fs_req_t, ep_elem)->deadline <= now)) {
        fs_recv_t *rreq = fs_container_of(e, fs_recv_t, super.ep_elem);
        FS_WARN("a receive buffer still held by the transport %d ms after its "
                "peer failed: completing the receive anyway",
                engine->params->cause_wait_ms);
        fs_list_remove(e);
        fs_list_init(e);
        rreq->super.flags &= (uint8_t)~FS_REQ_F_DRAIN;
        fs_recv_lost(rreq);
        fs_recv_finish(engine, rreq, rreq->super.status);
    }
}

void fs_req_abort(fs_engine_t *engine, fs_req_t *req, fs_status_t status)
{
    fs_req_untrack(req);
    fs_list_init(&req->ep_elem);
    if (fs_req_drain(engine, req, status)) {
        return;
    }
    /* complete first: a cancel may run the op callback at once, which then
     * only reports the request idle */
    if (req->flags & FS_REQ_F_RECV) {
        fs_recv_t *rreq = fs_container_of(req, fs_recv_t, super);
        if (status == FS_ERR_PEER_FAILED) {
            fs_recv_lost(rreq);     /* its payload died with the sender */
        }
        fs_recv_finish(engine, rreq, status);
    } else {
        fs_send_finish(engine, fs_container_of(req, fs_send_t, super), status);
    }
    engine->tl_ops->cancel(engine->tl, &req->op);
}

/* No endpoint error explained the parked requests in time: their errors
 * were local after all. */
void fs_peer_parked_expire(fs_engine_t *engine)
{
    double now = fs_time_now(), next_deadline = 0;
    fs_list_t *q, *e, *next;
    unsigned expired = 0;

    if (now < engine->park_deadline) {
        return;
    }
    for (q = engine->eps.next; q != &engine->eps; q = q->next) {
        fs_ep_t *ep = fs_container_of(q, fs_ep_t, elem);
        for (e = ep->inflight.next; e != &ep->inflight; e = next) {
            fs_req_t *req = fs_container_of(e, fs_req_t, ep_elem);
            next = e->next;
            if (!(req->flags & FS_REQ_F_PARKED)) {
                continue;
            }
            if (req->deadline <= now) {
                ++expired;
                fs_req_abort(engine, req, FS_ERR_LOCAL);
            } else if ((next_deadline == 0) || (req->deadline < next_deadline)) {
                next_deadline = req->deadline;
            }
        }
    }
    engine->park_deadline = next_deadline;
    if (expired != 0) {
        FS_WARN("%u operation(s) failed without a peer failure to explain it "
                "within %d ms (or the failure detector's bound): reported as "
                "local errors", expired, engine->params->cause_wait_ms);
    }
}

static void fs_peer_complete_inflight(fs_engine_t *engine, fs_ep_t *ep,
                                      fs_status_t status)
{
    fs_list_t *e;

    while ((e = ep->inflight.next) != &ep->inflight) {
        fs_req_abort(engine, fs_container_of(e, fs_req_t, ep_elem), status);
    }
}

/* Ends a posted receive that named a failed peer; its tag is poisoned. */
static void fs_recv_fail_posted(fs_comm_t *comm, fs_comm_peer_t *peer,
                                fs_recv_t *rreq, fs_status_t status)
{
    fs_list_remove(&rreq->mq.elem);
    rreq->super.ep = peer->ep;
    if (status == FS_ERR_PEER_FAILED) {
        fs_comm_poison(comm, peer, rreq->mq.tag);
    }
    fs_recv_finish(comm->engine, rreq, status);
}

void fs_comm_poison(fs_comm_t *comm, fs_comm_peer_t *peer, int32_t tag)
{
    fs_list_t *e, *next;

    (void)fs_dp_poison_tag(&peer->poison, tag);
    comm->poisoned = 1;
    /* buffered messages no receive naming the peer may take any more must
     * not reach a wildcard receive either (it would overtake them) */
    for (e = peer->bin.unexpected.next; e != &peer->bin.unexpected; e = next) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, mq.src_elem);
        next = e->next;
        if (fs_dp_blocks_message(&peer->poison, msg->mq.tag)) {
            fs_mq_remove_unexpected(&comm->mq, &msg->mq);
            ++comm->engine->stats.discarded_after_failure;
            fs_msg_free(comm->engine, msg);
        }
    }
}

/* Ends the receives of a list: all (coll < 0), collective ones (1) or
 * point-to-point ones (0). */
static void fs_comm_fail_list(fs_comm_t *comm, fs_list_t *list, int tags_negative,
                              fs_status_t status)
{
    fs_list_t *e, *next;

    for (e = list->next; e != list; e = next) {
        fs_recv_t *rreq = fs_container_of(e, fs_recv_t, mq.elem);
        next = e->next;
        if ((tags_negative < 0) || (fs_mq_tag_is_coll(rreq->mq.tag) == tags_negative)) {
            fs_list_remove(&rreq->mq.elem);
            fs_recv_finish(comm->engine, rreq, status);
        }
    }
}

/* MPI_ANY_SOURCE is disabled on comm (17.6): its wildcard receives end with
 * the failure class, except the ones the host holds (ULFM's rule), which
 * stay posted and are reported pending. */
static void fs_comm_disable_wild(fs_comm_t *comm)
{
    const fs_host_ops_t *host = comm->engine->host;
    fs_list_t *e, *next;

    for (e = comm->mq.wild_posted.next; e != &comm->mq.wild_posted; e = next) {
        fs_recv_t *rreq = fs_container_of(e, fs_recv_t, mq.elem);
        next = e->next;
        if (fs_mq_tag_is_coll(rreq->mq.tag)) {
            continue;                   /* collectives follow their own rule */
        }
        if ((rreq->super.flags & FS_REQ_F_HOLD_WILD) && (host->recv_pending != NULL)) {
            if (!(rreq->super.flags & FS_REQ_F_PENDING)) {
                rreq->super.flags |= FS_REQ_F_PENDING;
                host->recv_pending(rreq, 1);
            }
            continue;
        }
        fs_list_remove(&rreq->mq.elem);
        fs_recv_finish(comm->engine, rreq, FS_ERR_ANYSRC_DISABLED);
    }
}

/* The communicator becomes collectively inactive: every collective
 * operation on it, pending or new, ends with the failure class (17.7). */
void fs_comm_fail_collectives(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    fs_list_t *e, *next, *q;
    uint32_t r;

    comm->coll_inactive = 1;
    if ((comm->local_comm != NULL) && !comm->local_comm->coll_inactive) {
        /* an intercommunicator's collectives run partly on its local
         * communicator, whose members may all be alive: those parts end too */
        fs_comm_fail_collectives(comm->local_comm);
    }
    for (r = 0; r < comm->size; ++r) {
        fs_comm_fail_list(comm, &comm->peers[r].bin.posted, 1, FS_ERR_COLL_INACTIVE);
    }
    fs_comm_fail_list(comm, &comm->mq.wild_posted, 1, FS_ERR_COLL_INACTIVE);
    for (e = comm->mq.unexpected_all.next; e != &comm->mq.unexpected_all; e = next) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, mq.all_elem);
        next = e->next;
        if (!fs_mq_tag_is_coll(msg->mq.tag)) {
            continue;
        }
        fs_mq_remove_unexpected(&comm->mq, &msg->mq);
        if (msg->kind == FS_MSG_SELF) {
            fs_send_finish(engine, msg->self_sreq, FS_ERR_COLL_INACTIVE);
        }
        fs_msg_free(engine, msg);   /* a rendezvous sender is released */
    }
    for (q = engine->eps.next; q != &engine->eps; q = q->next) {
        fs_ep_t *ep = fs_container_of(q, fs_ep_t, elem);
        for (e = ep->inflight.next; e != &ep->inflight; e = next) {
            fs_req_t *req = fs_container_of(e, fs_req_t, ep_elem);
            fs_send_t *sreq = fs_container_of(req, fs_send_t, super);
            next = e->next;
            if (!(req->flags & FS_REQ_F_RECV) && (sreq->comm == comm) &&
                fs_mq_tag_is_coll(sreq->hdr.tag)) {
                fs_req_abort(engine, req, FS_ERR_COLL_INACTIVE);
            }
        }
    }
}

static int fs_comm_contains(const fs_comm_t *comm, const fs_ep_t *ep)
{
    uint32_t r;

    for (r = 0; r < comm->size; ++r) {
        if (comm->peers[r].ep == ep) {
            return 1;
        }
    }
    for (r = 0; r < comm->local_size; ++r) {
        if (comm->local_eps[r] == ep) {
            return 1;
        }
    }
    return 0;
}

/* A member of comm failed (status FS_ERR_PEER_FAILED) or broke locally. */
static void fs_comm_peer_failed(fs_comm_t *comm, fs_ep_t *ep, fs_status_t status)
{
    fs_list_t *e;
    uint32_t r;

    for (r = 0; r < comm->size; ++r) {
        fs_comm_peer_t *peer = &comm->peers[r];
        if (peer->ep != ep) {
            continue;
        }
        while ((e = peer->bin.posted.next) != &peer->bin.posted) {
            fs_recv_fail_posted(comm, peer, fs_container_of(e, fs_recv_t, mq.elem),
                                status);
        }
    }
    fs_comm_discard_parked(comm, ep);
    if ((status != FS_ERR_PEER_FAILED) || !fs_comm_contains(comm, ep)) {
        return;
    }
    if (!comm->anysrc_disabled) {
        comm->anysrc_disabled = 1;
        fs_comm_disable_wild(comm);
    }
    if (!comm->coll_inactive && !fs_comm_failure_recognized(comm, ep)) {
        fs_comm_fail_collectives(comm);
    }
}

/* Resource exhaustion is an error of its channel, never a silent hang.  A
 * message from rank on comm that could not be kept (out of memory, or past
 * max_unexpected_mb) is a hole in that sender's order: the messages before
 * it are still delivered; the ones after it are discarded.  Once the
 * messages before it are in, the channel is dead: receives naming rank on
 * comm that nothing buffered satisfies, pending or new, and the wildcard
 * receives pending on comm (the lost message may have been theirs) end with
 * MPI_ERR_NO_MEM. */
void fs_chan_lose(fs_comm_t *comm, int32_t rank, uint16_t seq)
{
    fs_engine_t *engine  = comm->engine;
    fs_comm_peer_t *peer = &comm->peers[rank];
    fs_list_t *e, *next;

    ++engine->stats.lost_no_memory;
    if ((peer->broken != FS_CHAN_OK) &&
        ((int16_t)(uint16_t)(seq - peer->lost_seq) >= 0)) {
        return;                     /* after the hole already known */
    }
    if (peer->broken == FS_CHAN_OK) {
        FS_ERROR("cid %u: a message from rank %d could not be kept (out of memory "
                 "or past pml_failstop_max_unexpected_mb): its receives on this "
                 "communicator end with MPI_ERR_NO_MEM", comm->cid, rank);
    }
    peer->broken   = FS_CHAN_HOLE;
    peer->lost_seq = seq;
    for (e = peer->rx.parked.next; e != &peer->rx.parked; e = next) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, seq.elem);
        next = e->next;
        if ((int16_t)(uint16_t)(msg->seq.seq - seq) > 0) {
            fs_list_remove(e);
            --peer->rx.num_parked;
            ++engine->stats.lost_no_memory;
            fs_msg_free(engine, msg);
        }
    }
    if ((int16_t)(uint16_t)(seq - peer->rx.expected) < 0) {
        fs_chan_die(comm, rank);    /* it was the next one: nothing before it */
    }
}

void fs_chan_die(fs_comm_t *comm, int32_t rank)
{
    fs_comm_peer_t *peer = &comm->peers[rank];

    peer->broken = FS_CHAN_DEAD;
    fs_comm_fail_list(comm, &peer->bin.posted, -1, FS_ERR_NO_MEMORY);
    fs_comm_fail_list(comm, &comm->mq.wild_posted, -1, FS_ERR_NO_MEMORY);
}

static void fs_peer_fail_now(fs_engine_t *engine, fs_ep_t *ep,
                             const fs_fault_row_t *row, fs_ep_t *reporter)
{
    fs_status_t status;
    fs_list_t *c;

    if (ep->state == FS_EP_SUSPECTED) {
        --engine->suspects;         /* its fate is known now */
    }
    fs_ep_transition(ep, FS_EP_FAILED);
    ep->fault      = row;
    ep->fail_epoch = ++engine->fail_epoch;
    status         = fs_peer_status(ep);
    ++engine->stats.peers_failed;
    if (status != FS_ERR_PEER_FAILED) {
        FS_ERROR("endpoint to %#llx broke locally: %s (%s); not blaming the peer",
                 (unsigned long long)ep->id, row->name, row->reason);
    }
    fs_peer_complete_inflight(engine, ep, status);
    for (c = engine->comms_list.next; c != &engine->comms_list; c = c->next) {
        fs_comm_peer_failed(fs_container_of(c, fs_comm_t, elem), ep, status);
    }
    fs_agreement_view_changed(engine);
    if (status == FS_ERR_PEER_FAILED) {
        fs_ctrl_notify_failure(engine, ep, reporter);
        engine->host->peer_failed(engine->host_arg, ep, reporter);
    }
}

void fs_peer_fail(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t *row,
                  fs_ep_t *reporter)
{
    if (ep->is_self || fs_ep_is_gone(ep)) {
        /* already failed, or left normally: leaving is not failing (its
         * links break as it exits) */
        return;
    }
    fs_peer_fail_now(engine, ep, row, reporter);
}

void fs_peer_fail_departed(fs_engine_t *engine, fs_ep_t *ep)
{
    if ((ep->state == FS_EP_LEAVING) || (ep->state == FS_EP_LEFT)) {
        fs_peer_fail_now(engine, ep, NULL, NULL);
    }
}

/* Nothing is left to fail (no communicator, no request): the process only
 * records the failure, and its close drain stops waiting for this peer.  No
 * notice goes out: every link is closed. */
void fs_peer_fail_closed(fs_engine_t *engine, fs_ep_t *ep, fs_ep_t *reporter)
{
    if (ep->close_fate != FS_CLOSE_OPEN) {
        return;
    }
    ep->close_fate = FS_CLOSE_FAILED;
    ++engine->stats.peers_failed;
    engine->host->peer_failed(engine->host_arg, ep, reporter);
}

void fs_peer_left(fs_engine_t *engine, fs_ep_t *ep)
{
    fs_list_t *c;

    if (!fs_ep_transition(ep, FS_EP_LEFT)) {
        return;
    }
    ++engine->stats.peers_left;
    FS_DEBUG("peer %#llx finalized", (unsigned long long)ep->id);
    /* everything it sent has been taken: receives still naming it would
     * wait forever; they end with a plain error, never a failure */
    for (c = engine->comms_list.next; c != &engine->comms_list; c = c->next) {
        fs_comm_peer_failed(fs_container_of(c, fs_comm_t, elem), ep, FS_ERR_PEER_LEFT);
    }
    fs_agreement_view_changed(engine);
}
