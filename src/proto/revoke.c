/* Revoke (ULFM's MPIX_Comm_revoke): a communicator revoked anywhere is
 * revoked everywhere, and every pending and new operation on it, point-to-
 * point or collective, ends with FS_ERR_REVOKED; agreements (FS_AM_AGREE)
 * go on, so that programs can agree and shrink.
 *
 * The news floods over the binomial graph of the live members (both
 * groups of an intercommunicator, numbered as agreement.c numbers them) (each tells
 * the members 1, 2, 4, ... positions away each way: about 2 log2 n
 * messages per member).  Forwarders may die: whenever the view changes, a
 * revoked member tells its distance-1 neighbours if they changed.  The
 * live members always form a ring through those links, so a live member
 * that has not heard follows one that has with only dead members between
 * them; when the last of those is known dead it is told.
 *
 * A revoke message names its sender (its member index).  A send the
 * revoke ended but the transport still holds -- a rendezvous its receiver
 * keeps unmatched -- would hold its sender until the receiver frees the
 * communicator, and a blocking send would hold the program (which would
 * rather shrink with the receiver).  So a member that ends such sends tells
 * their receivers, and a receiver told by the sender drops what it keeps
 * and will get from that sender on the communicator: its send has ended. */
#include "proto/engine_int.h"

#include <stdlib.h>
#include <string.h>

static int fs_revoke_live(const fs_comm_t *comm, uint32_t r)
{
    const fs_ep_t *ep = fs_comm_member_ep(comm, r);

    return ep->is_self || fs_ep_is_usable(ep);
}

/* The member 'dist' live positions away from us (dir +1 or -1), or
 * UINT32_MAX if that wraps onto us. */
static uint32_t fs_revoke_neighbour(const fs_comm_t *comm, uint32_t dist, int dir)
{
    uint32_t n = comm->nmembers, r = comm->my_member, steps = 0;

    while (steps < dist) {
        r = (uint32_t)(((int64_t)r + dir + n) % n);
        if (r == comm->my_member) {
            return UINT32_MAX;
        }
        steps += fs_revoke_live(comm, r);
    }
    return r;
}

static void fs_revoke_tell(fs_comm_t *comm, uint32_t r)
{
    if ((r != UINT32_MAX) && (r != comm->my_member)) {
        (void)fs_agreement_send_kind(comm, r, FS_AGREE_KIND_REVOKE, &comm->my_member,
                                     sizeof(comm->my_member));
    }
}

/* Pending operations end.  Buffered messages stay until the communicator
 * is freed or their sender tells us it revoked it too (fs_revoke_heard),
 * and so do those that still come: giving a rendezvous descriptor back
 * would complete its sender's operation as a success (even a synchronous
 * send) if it has not heard of the revoke yet; when it
 * hears, its operation ends with FS_ERR_REVOKED. */
static void fs_revoke_fail_pending(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    fs_list_t *q, *e, *next;
    uint32_t r;

    for (q = engine->eps.next; q != &engine->eps; q = q->next) {
        fs_ep_t *ep = fs_container_of(q, fs_ep_t, elem);

        for (e = ep->inflight.next; e != &ep->inflight; e = next) {
            fs_req_t *req = fs_container_of(e, fs_req_t, ep_elem);
            fs_comm_t *owner = (req->flags & FS_REQ_F_RECV) ?
                               fs_container_of(req, fs_recv_t, super)->comm :
                               fs_container_of(req, fs_send_t, super)->comm;

            next = e->next;
            if (owner != comm) {
                continue;
            }
            if (req->flags & FS_REQ_F_RECV) {
                fs_req_abort(engine, req, FS_ERR_REVOKED);  /* waits for its buffer */
            } else {
                /* not cancelled: a send to a live process ends when that
                 * one gives the message back (at the latest when it frees
                 * the communicator); the request is idle then */
                fs_send_t *sreq = fs_container_of(req, fs_send_t, super);

                fs_req_untrack(req);
                req->flags |= FS_REQ_F_ABANDONED;
                ++ep->abandoned;
                fs_revoke_tell(comm, fs_comm_member_of_peer(comm, (uint32_t)sreq->dst));
                fs_send_finish(engine, sreq, FS_ERR_REVOKED);
            }
        }
    }
    for (r = 0; r <= comm->size; ++r) {
        fs_list_t *posted = (r < comm->size) ? &comm->peers[r].bin.posted
                                             : &comm->mq.wild_posted;

        while ((e = fs_list_pop_head(posted)) != NULL) {
            fs_recv_finish(engine, fs_container_of(e, fs_recv_t, mq.elem), FS_ERR_REVOKED);
        }
    }
}

static void fs_revoke_mark(fs_comm_t *comm)
{
    const fs_host_ops_t *host = comm->engine->host;

    comm->revoked = 1;
    if ((host->comm_revoked != NULL) && (comm->host != NULL)) {
        host->comm_revoked(comm->host);
    }
}

void fs_revoke_local(fs_comm_t *comm)
{
    if (!comm->revoked) {
        fs_revoke_mark(comm);
        fs_revoke_fail_pending(comm);
    }
}

static void fs_revoke_now(fs_comm_t *comm)
{
    uint32_t dist;

    if (comm->revoked) {
        return;
    }
    fs_revoke_mark(comm);
    FS_DEBUG("cid %u revoked", comm->cid);
    fs_revoke_fail_pending(comm);
    if (comm->shadow != NULL) {
        /* its members are comm's: they revoke it when comm's revoke reaches them */
        fs_revoke_local(comm->shadow);
    }
    if (comm->local_comm != NULL) {
        fs_revoke_local(comm->local_comm);      /* so is an intercommunicator's */
    }
    for (dist = 1; dist < comm->nmembers; dist <<= 1) {
        fs_revoke_tell(comm, fs_revoke_neighbour(comm, dist, +1));
        fs_revoke_tell(comm, fs_revoke_neighbour(comm, dist, -1));
    }
    comm->revoke_nb[0] = fs_revoke_neighbour(comm, 1, +1);
    comm->revoke_nb[1] = fs_revoke_neighbour(comm, 1, -1);
}

fs_status_t fs_comm_revoke(fs_comm_t *comm)
{
    fs_revoke_now(comm);
    return FS_OK;
}

void fs_comm_set_local_comm(fs_comm_t *inter, fs_comm_t *local)
{
    inter->local_comm = local;
    if ((local != NULL) && inter->revoked) {
        fs_revoke_local(local);
    }
    if ((local != NULL) && inter->coll_inactive && !local->coll_inactive) {
        fs_comm_fail_collectives(local);
    }
}

int fs_comm_is_revoked(const fs_comm_t *comm)
{
    return comm->revoked;
}

/* Member 'from' revoked comm: what it sent and we keep goes (see the top). */
static void fs_revoke_heard(fs_comm_t *comm, uint32_t from)
{
    fs_engine_t *engine = comm->engine;
    uint32_t rank;
    fs_list_t *e, *next;
    fs_seq_item_t *item;

    if ((from >= comm->nmembers) || (fs_comm_member_rank(comm, from, &rank) != FS_COMM_REMOTE)) {
        return;                         /* our own group's: nothing of ours */
    }
    if (comm->revoke_heard == NULL) {
        comm->revoke_heard = calloc(fs_bm_words(comm->nmembers), sizeof(uint64_t));
        if (comm->revoke_heard == NULL) {
            FS_ERROR("cid %u: no memory to release what rank %u sent", comm->cid, rank);
            return;
        }
    }
    fs_bm_set(comm->revoke_heard, from);
    for (e = comm->mq.unexpected_all.next; e != &comm->mq.unexpected_all; e = next) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, mq.all_elem);

        next = e->next;
        if ((uint32_t)msg->mq.src == rank) {
            fs_mq_remove_unexpected(&comm->mq, &msg->mq);
            fs_msg_free(engine, msg);   /* a rendezvous sender is released */
        }
    }
    while ((item = fs_seq_unpark_any(&comm->peers[rank].rx)) != NULL) {
        fs_msg_free(engine, fs_container_of(item, fs_msg_t, seq));
    }
}

void fs_revoke_rx(fs_comm_t *comm, const void *data, size_t len)
{
    uint32_t from;

    fs_revoke_now(comm);
    if (len == sizeof(from)) {
        memcpy(&from, data, sizeof(from));
        fs_revoke_heard(comm, from);
    }
}

void fs_revoke_view_changed(fs_comm_t *comm)
{
    uint32_t nb[2] = { fs_revoke_neighbour(comm, 1, +1), fs_revoke_neighbour(comm, 1, -1) };
    int k;

    for (k = 0; k < 2; k++) {
        if (nb[k] != comm->revoke_nb[k]) {
            fs_revoke_tell(comm, nb[k]);
            comm->revoke_nb[k] = nb[k];
        }
    }
}
