/* Departure: MPI_Finalize.
 *
 * Leaving is not failing (ctrl.c), and leaving does not abandon what is still
 * pending: MPI lets a process free an active request and requires
 * MPI_Finalize to complete it.  A process departs in steps:
 *
 *   1. BYE to every peer still there: how many matching messages we sent it,
 *      and whether we still have receives it could match (RECEIVING).  A
 *      peer may keep sending to a process that left RECEIVING.
 *   2. Wait until no receive can complete any more: a posted receive naming
 *      a peer that has neither left nor failed, a wildcard receive on a
 *      communicator with such a peer, a payload being fetched.
 *   3. DONE to the peers told RECEIVING: their sends to us fail from now on.
 *   4. Wait until every send in flight has completed or its receiver can no
 *      longer take it (failed, or left without receiving, or DONE).
 *   5. fs_engine_leave: flush and close the endpoints.  A peer can still be
 *      declared failed meanwhile: the process records it (everyone learns,
 *      17.3) and does not wait for a close the dead peer never answers.
 *
 * Steps 2 and 4 wait only for peers that have not said BYE (or DONE), and
 * every process says BYE before step 2 and DONE before step 4, so two
 * departing processes never wait for each other; a peer that dies is failed
 * by the transport or the detector, which ends what waits for it.  These
 * waits are the engine's own, so they hand the host's news (its detector's
 * verdicts) in themselves: fs_engine_progress_alone. */
#include "proto/engine_int.h"

#include "common/fs_time.h"

/* It may still send us messages we have not taken. */
static int fs_ep_may_send(const fs_ep_t *ep)
{
    return !ep->is_self && !fs_ep_is_gone(ep);
}

/* It may still take a message of ours (match a rendezvous, fetch it). */
static int fs_ep_may_receive(const fs_ep_t *ep)
{
    switch (ep->state) {
    case FS_EP_LEAVING:
    case FS_EP_LEFT:
        return ep->peer_receiving;
    case FS_EP_FAILED:
    case FS_EP_CLOSED:
        return 0;
    default:
        return !ep->is_self;
    }
}

static int fs_comm_any_may_send(const fs_comm_t *comm)
{
    uint32_t r;

    for (r = 0; r < comm->size; ++r) {
        if (fs_ep_may_send(comm->peers[r].ep)) {
            return 1;
        }
    }
    return 0;
}

/* Receives of comm that a peer could still complete; with mark, every peer
 * that could complete one is flagged told_receiving instead. */
static int fs_comm_rx_open(const fs_comm_t *comm, int mark)
{
    int wild = !fs_list_is_empty(&comm->mq.wild_posted);
    uint32_t r;

    if (!mark && wild && fs_comm_any_may_send(comm)) {
        return 1;
    }
    for (r = 0; r < comm->size; ++r) {
        fs_ep_t *ep = comm->peers[r].ep;
        if ((wild || !fs_list_is_empty(&comm->peers[r].bin.posted)) &&
            fs_ep_may_send(ep)) {
            if (!mark) {
                return 1;
            }
            ep->told_receiving = 1;
        }
    }
    return 0;
}

/* In-flight operations of one kind (receives: fetches) on ep. */
static int fs_ep_has_inflight(const fs_ep_t *ep, int recv)
{
    const fs_list_t *e;

    for (e = ep->inflight.next; e != &ep->inflight; e = e->next) {
        const fs_req_t *req = fs_container_of(e, fs_req_t, ep_elem);
        if (!(req->flags & FS_REQ_F_RECV) == !recv) {
            return 1;
        }
    }
    return 0;
}

static int fs_depart_rx_pending(fs_engine_t *engine)
{
    const fs_list_t *e;

    if (!fs_list_is_empty(&engine->draining)) {
        return 1;
    }
    for (e = engine->comms_list.next; e != &engine->comms_list; e = e->next) {
        if (fs_comm_rx_open(fs_container_of(e, fs_comm_t, elem), 0)) {
            return 1;
        }
    }
    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        if (fs_ep_has_inflight(fs_container_of(e, fs_ep_t, elem), 1)) {
            return 1;
        }
    }
    return 0;
}

static int fs_depart_tx_pending(fs_engine_t *engine)
{
    const fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        const fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if (fs_ep_may_receive(ep) && fs_ep_has_inflight(ep, 0)) {
            return 1;
        }
    }
    return 0;
}

/* Departure messages go to every peer whose transport is open and that has
 * not failed, a peer that left too: it may be waiting for them. */
static void fs_depart_send(fs_engine_t *engine, uint8_t type, int only_told)
{
    fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if (fs_ep_is_failed(ep) || (only_told && !ep->told_receiving)) {
            continue;
        }
        fs_ctrl_send_ep(engine, ep, type, ep->told_receiving ? FS_CTRL_F_RECEIVING : 0,
                        ep->tx_msgs, 1);
    }
}

static void fs_engine_release_unreceived(fs_engine_t *engine, int revoked_only);

void fs_engine_depart_start(fs_engine_t *engine)
{
    fs_list_t *e;

    if (engine->depart != FS_DEPART_NONE) {
        return;
    }
    fs_engine_release_unreceived(engine, 1);
    for (e = engine->comms_list.next; e != &engine->comms_list; e = e->next) {
        (void)fs_comm_rx_open(fs_container_of(e, fs_comm_t, elem), 1);
    }
    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if (fs_ep_has_inflight(ep, 1)) {
            ep->told_receiving = 1;
        }
    }
    fs_depart_send(engine, FS_CTRL_BYE, 0);
    engine->depart = FS_DEPART_RECEIVING;
}

int fs_engine_depart_test(fs_engine_t *engine)
{
    switch (engine->depart) {
    case FS_DEPART_RECEIVING:
        if (fs_depart_rx_pending(engine)) {
            return 0;
        }
        fs_depart_send(engine, FS_CTRL_DONE, 1);
        engine->depart = FS_DEPART_SENDING;
        /* fall through */
    case FS_DEPART_SENDING:
        if (fs_depart_tx_pending(engine)) {
            return 0;
        }
        engine->depart = FS_DEPART_SETTLED;
        return 1;
    case FS_DEPART_SETTLED:
        return 1;
    default:
        return 0;
    }
}

void fs_engine_depart(fs_engine_t *engine)
{
    double warn_at = fs_time_now() + engine->params->finalize_timeout_ms * 1e-3;

    fs_engine_depart_start(engine);
    while (!fs_engine_depart_test(engine)) {
        fs_engine_progress_alone(engine);
        if ((warn_at > 0) && (fs_time_now() > warn_at)) {
            /* legal (a peer may finalize much later), but say why we wait */
            FS_WARN("MPI_Finalize: still completing %s started before it, which "
                    "peers that have not finalized yet may complete",
                    (engine->depart == FS_DEPART_RECEIVING) ? "receives" : "sends");
            warn_at = 0;
        }
    }
}

static void fs_leave_op_ignore(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op;
    (void)status;
    (void)length;
}

/* Messages nobody will receive now go back to the transport, so that their
 * senders' operations end (a revoked communicator keeps what it holds, and
 * one Open MPI never frees -- requests left allocated by a failed
 * MPI_Waitall hold it -- would keep it for ever).  revoked_only: at the
 * start of departure, when only revoked communicators' are surely dead. */
static void fs_engine_release_unreceived(fs_engine_t *engine, int revoked_only)
{
    fs_list_t *c, *e;
    uint32_t r;

    for (c = engine->comms_list.next; c != &engine->comms_list; c = c->next) {
        fs_comm_t *comm = fs_container_of(c, fs_comm_t, elem);

        if (revoked_only && !comm->revoked) {
            continue;
        }
        while ((e = comm->mq.unexpected_all.next) != &comm->mq.unexpected_all) {
            fs_msg_t *msg = fs_container_of(e, fs_msg_t, mq.all_elem);

            fs_mq_remove_unexpected(&comm->mq, &msg->mq);
            fs_msg_free(engine, msg);
        }
        for (r = 0; r < comm->size; ++r) {
            while ((e = fs_list_pop_head(&comm->peers[r].rx.parked)) != NULL) {
                --comm->peers[r].rx.num_parked;
                fs_msg_free(engine, fs_container_of(e, fs_msg_t, seq.elem));
            }
        }
    }
}

/* Revoked sends the transport still holds end when their receivers give
 * them back, which they do when they depart at the latest: wait for that
 * (bounded), so that no endpoint closes with them in flight (UCX 1.13
 * asserts in ucp_worker_destroy). */
static void fs_engine_settle_abandoned(fs_engine_t *engine)
{
    double deadline = fs_time_now() + engine->params->finalize_timeout_ms * 1e-3;
    fs_list_t *e;
    int left;

    do {
        left = 0;
        for (e = engine->eps.next; e != &engine->eps; e = e->next) {
            const fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);

            left |= (ep->abandoned != 0) && fs_ep_is_usable(ep);
        }
        if (left) {
            fs_engine_progress_alone(engine);
        }
    } while (left && (fs_time_now() < deadline));
}

void fs_engine_leave(fs_engine_t *engine, fs_ep_t *const *eps, size_t count)
{
    double start, deadline;
    size_t i;

    fs_engine_depart(engine);
    fs_engine_release_unreceived(engine, 0);
    fs_engine_settle_abandoned(engine);
    /* a close waits for the BYE and DONE to be delivered: across a network
     * outage the job tolerates, that is until the detector would have
     * found the peer gone (a close given up early breaks the link under a
     * peer that has not taken our BYE yet, which reads it as our death) */
    start    = fs_time_now();
    deadline = fs_peer_fate_deadline(engine, NULL);
    if (deadline < start + engine->params->finalize_timeout_ms * 1e-3) {
        deadline = start + engine->params->finalize_timeout_ms * 1e-3;
    }
    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];
        if (ep->tl_ep != NULL) {
            /* a flushing close waits for the BYE and DONE to be delivered */
            ep->close_op.cb = fs_leave_op_ignore;
            engine->tl_ops->ep_close(engine->tl, ep->tl_ep,
                                     !fs_ep_is_usable(ep) || (ep->abandoned != 0),
                                     &ep->close_op);
            ep->tl_ep = NULL;
        }
        if (!ep->is_self && !fs_ep_is_gone(ep)) {
            ep->close_fate = FS_CLOSE_OPEN;
        }
        fs_ep_transition(ep, FS_EP_CLOSED);
    }
    if (fs_ctrl_drain(engine, deadline)) {
        FS_WARN("finalize: endpoints still closing after %.0f ms; giving up on them",
                (fs_time_now() - start) * 1e3);
    }
}
