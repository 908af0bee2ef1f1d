/* Communicators: created when Open MPI activates one (pml_add_comm); a
 * message can arrive before that, and waits in engine->early. */
#include "proto/engine_int.h"

#include <stdlib.h>
#include <string.h>

static fs_status_t fs_engine_comms_reserve(fs_engine_t *engine, uint32_t cid)
{
    uint32_t cap = (engine->comms_cap == 0) ? 64 : engine->comms_cap;
    fs_comm_t **comms;

    if (cid < engine->comms_cap) {
        return FS_OK;
    }
    while (cap <= cid) {
        if (cap > (UINT32_MAX >> 1)) {
            return FS_ERR_INVALID;
        }
        cap <<= 1;
    }
    comms = realloc(engine->comms, cap * sizeof(*comms));
    if (comms == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memset(comms + engine->comms_cap, 0, (cap - engine->comms_cap) * sizeof(*comms));
    engine->comms     = comms;
    engine->comms_cap = cap;
    return FS_OK;
}

static int fs_comm_has_failed_member(const fs_comm_t *comm)
{
    uint32_t r;

    for (r = 0; r < comm->size; ++r) {
        if (fs_ep_is_failed(comm->peers[r].ep)) {
            return 1;
        }
    }
    for (r = 0; r < comm->local_size; ++r) {
        if (fs_ep_is_failed(comm->local_eps[r])) {
            return 1;
        }
    }
    return 0;
}

static void fs_comm_free_alloc(fs_comm_t *comm)
{
    free(comm->recognized);
    free(comm->revoke_heard);
    free(comm->members);
    free(comm->peers);
    free(comm->local_eps);
    free(comm);
}

static fs_comm_t *fs_comm_alloc(uint32_t size, uint32_t local_size,
                                fs_ep_t *const *local_eps)
{
    fs_comm_t *comm = calloc(1, sizeof(*comm));

    if (comm == NULL) {
        return NULL;
    }
    comm->peers = calloc(size ? size : 1, sizeof(*comm->peers));
    if ((local_eps != NULL) && (local_size > 0)) {
        comm->local_eps = malloc(local_size * sizeof(*comm->local_eps));
        if (comm->local_eps != NULL) {
            memcpy(comm->local_eps, local_eps, local_size * sizeof(*local_eps));
            comm->local_size = local_size;
        }
    }
    if ((comm->peers == NULL) || ((local_size > 0) && (local_eps != NULL) &&
                                  (comm->local_eps == NULL))) {
        free(comm->peers);
        free(comm->local_eps);
        free(comm);
        return NULL;
    }
    return comm;
}

static uint64_t fs_comm_lowest_id(fs_ep_t *const *eps, uint32_t n)
{
    uint64_t low = UINT64_MAX;
    uint32_t r;

    for (r = 0; r < n; ++r) {
        low = (eps[r]->id < low) ? eps[r]->id : low;
    }
    return low;
}

/* The members (engine_int.h): an intercommunicator's two groups are
 * disjoint, so the group holding the lowest process name is first at
 * both sides. */
static fs_status_t fs_comm_members_init(fs_comm_t *comm)
{
    fs_ep_t *const *local = comm->local_eps;
    uint32_t r, nl = comm->local_size, nr = comm->size;
    int local_first;

    comm->nmembers   = comm->size;
    comm->my_member  = (uint32_t)comm->my_rank;
    comm->first_size = comm->size;
    if (local == NULL) {
        return FS_OK;
    }
    comm->members = malloc((size_t)(nl + nr) * sizeof(*comm->members));
    if (comm->members == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    for (r = 0; r < nr; ++r) {
        comm->members[r] = comm->peers[r].ep;       /* lined up below */
    }
    local_first = fs_comm_lowest_id(local, nl) < fs_comm_lowest_id(comm->members, nr);
    if (local_first) {
        memmove(comm->members + nl, comm->members, nr * sizeof(*comm->members));
    }
    memcpy(comm->members + (local_first ? 0 : nr), local, nl * sizeof(*local));
    comm->nmembers    = nl + nr;
    comm->local_first = (uint8_t)local_first;
    comm->first_size = local_first ? nl : nr;
    comm->my_member  = (uint32_t)comm->my_rank + (local_first ? 0 : nr);
    return FS_OK;
}

uint32_t fs_comm_members(const fs_comm_t *comm, uint32_t *me_p)
{
    *me_p = comm->my_member;
    return comm->nmembers;
}

fs_comm_group_t fs_comm_member_rank(const fs_comm_t *comm, uint32_t i, uint32_t *rank_p)
{
    int in_first = (i < comm->first_size);
    int local    = (comm->members != NULL) && (in_first == comm->local_first);

    *rank_p = in_first ? i : i - comm->first_size;
    return local ? FS_COMM_LOCAL : FS_COMM_REMOTE;
}

/* Messages lost before the communicator existed break their channels now. */
static void fs_comm_apply_early_losses(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    unsigned i = 0;

    while (i < engine->early_lost_count) {
        if (engine->early_lost[i].cid != comm->cid) {
            ++i;
            continue;
        }
        if ((engine->early_lost[i].src >= 0) &&
            ((uint32_t)engine->early_lost[i].src < comm->size)) {
            fs_chan_lose(comm, engine->early_lost[i].src, engine->early_lost[i].seq);
        }
        engine->early_lost[i] = engine->early_lost[--engine->early_lost_count];
    }
}

fs_status_t fs_comm_create(fs_engine_t *engine, uint32_t cid, int32_t my_rank,
                           uint32_t size, fs_ep_t *const *peers,
                           uint32_t local_size, fs_ep_t *const *local_eps,
                           void *host, fs_comm_t **comm_p)
{
    fs_status_t status = fs_engine_comms_reserve(engine, cid);
    fs_comm_t *comm;
    uint32_t r;

    if (status != FS_OK) {
        return status;
    }
    if (engine->comms[cid] != NULL) {
        FS_ERROR("communicator id %u is already in use", cid);
        return FS_ERR_INVALID;
    }
    comm = fs_comm_alloc(size, local_size, local_eps);
    if (comm == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    comm->engine  = engine;
    comm->cid     = cid;
    comm->my_rank = my_rank;
    comm->size    = size;
    comm->short_hdr = (cid <= UINT16_MAX) && ((uint32_t)my_rank <= UINT16_MAX);
    comm->host    = host;
    fs_mq_init(&comm->mq);
    for (r = 0; r < size; ++r) {
        comm->peers[r].ep = peers[r];
        fs_mq_bin_init(&comm->peers[r].bin);
        fs_seq_rx_init(&comm->peers[r].rx);
        fs_dp_init(&comm->peers[r].poison);
    }
    status = fs_comm_members_init(comm);
    if (status != FS_OK) {
        fs_comm_free_alloc(comm);
        return status;
    }
    /* a failure already known is not acknowledged on a new communicator */
    if (fs_comm_has_failed_member(comm)) {
        comm->coll_inactive   = 1;
        comm->anysrc_disabled = 1;
        status = fs_comm_recognize_known(comm);
        if (status != FS_OK) {
            fs_comm_free_alloc(comm);
            return status;
        }
    }
    comm->fp = fs_comm_fingerprint(comm);
    status = fs_comm_inc_next(engine, cid, comm->fp, &comm->inc);
    if (status != FS_OK) {
        fs_comm_free_alloc(comm);
        return status;
    }
    engine->comms[cid] = comm;
    fs_list_push_tail(&engine->comms_list, &comm->elem);
    fs_list_init(&comm->agree_ops);
    fs_comm_apply_early_losses(comm);     /* first: what came after is discarded */
    fs_comm_replay_early(comm);
    fs_agreement_comm_created(comm);
    *comm_p = comm;
    return FS_OK;
}

void fs_comm_destroy(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    fs_list_t *e;
    uint32_t r;

    if (comm->mq.num_unexpected != 0) {
        FS_DEBUG("cid %u freed with %zu unreceived messages", comm->cid,
                 comm->mq.num_unexpected);
    }
    while ((e = fs_list_pop_head(&comm->mq.unexpected_all)) != NULL) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, mq.all_elem);
        fs_list_remove(&msg->mq.src_elem);
        fs_msg_free(engine, msg);
    }
    for (r = 0; r < comm->size; ++r) {
        while ((e = fs_list_pop_head(&comm->peers[r].rx.parked)) != NULL) {
            fs_msg_free(engine, fs_container_of(e, fs_msg_t, seq.elem));
        }
        fs_dp_cleanup(&comm->peers[r].poison);
    }
    fs_agreement_comm_destroy(comm);
    engine->comms[comm->cid] = NULL;
    fs_list_remove(&comm->elem);
    for (e = engine->comms_list.next; e != &engine->comms_list; e = e->next) {
        fs_comm_t *inter = fs_container_of(e, fs_comm_t, elem);
        if (inter->local_comm == comm) {
            inter->local_comm = NULL;       /* freed before its intercommunicator */
        }
    }
    fs_comm_free_alloc(comm);
}

uint32_t fs_comm_size(const fs_comm_t *comm)
{
    return comm->size;
}

static fs_ep_t *fs_comm_member(const fs_comm_t *comm, fs_comm_group_t which,
                               uint32_t r)
{
    return (which == FS_COMM_LOCAL) ? comm->local_eps[r] : comm->peers[r].ep;
}

uint32_t fs_comm_failed_ranks(const fs_comm_t *comm, fs_comm_group_t which,
                              int acked_only, int32_t *ranks, uint32_t max)
{
    uint32_t n = (which == FS_COMM_LOCAL) ? comm->local_size : comm->size;
    uint32_t r, count = 0;

    for (r = 0; r < n; ++r) {
        const fs_ep_t *ep = fs_comm_member(comm, which, r);
        /* a link that broke here (no verdict on its peer) names nobody */
        if (!fs_ep_is_failed(ep) || (fs_peer_status(ep) != FS_ERR_PEER_FAILED) ||
            (acked_only && (ep->fail_epoch > comm->acked_epoch))) {
            continue;
        }
        if (count < max) {
            ranks[count] = (int32_t)r;
        }
        ++count;
    }
    return count;
}

void fs_comm_reenable_any_source(fs_comm_t *comm)
{
    fs_list_t *e, *next;

    comm->anysrc_disabled = 0;
    comm->acked_epoch     = comm->engine->fail_epoch;
    for (e = comm->mq.wild_posted.next; e != &comm->mq.wild_posted; e = next) {
        fs_recv_t *rreq = fs_container_of(e, fs_recv_t, mq.elem);
        next = e->next;
        if (rreq->super.flags & FS_REQ_F_PENDING) {
            rreq->super.flags &= ~FS_REQ_F_PENDING;
            comm->engine->host->recv_pending(rreq, 0);
        }
    }
}

int fs_comm_any_source_enabled(const fs_comm_t *comm)
{
    return !comm->anysrc_disabled;
}

int fs_comm_collectives_enabled(const fs_comm_t *comm)
{
    return !comm->coll_inactive;
}

void fs_comm_replay_early(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    fs_list_t *e, *next;

    for (e = engine->early.next; e != &engine->early; e = next) {
        fs_msg_t *msg = fs_container_of(e, fs_msg_t, seq.elem);

        next = e->next;
        if (msg->cid != comm->cid) {
            continue;
        }
        fs_list_remove(e);
        if ((uint32_t)msg->mq.src >= comm->size) {
            ++engine->stats.dropped_malformed;
            fs_msg_free(engine, msg);
            continue;
        }
        fs_rx_sequence(comm, msg->mq.src, msg, NULL);
    }
}

/* Out-of-order messages of a failed peer can never be delivered in order:
 * the gap before them will not be filled. */
void fs_comm_discard_parked(fs_comm_t *comm, fs_ep_t *ep)
{
    uint32_t r;
    fs_list_t *e;

    for (r = 0; r < comm->size; ++r) {
        if (comm->peers[r].ep != ep) {
            continue;
        }
        while ((e = fs_list_pop_head(&comm->peers[r].rx.parked)) != NULL) {
            --comm->peers[r].rx.num_parked;
            ++comm->engine->stats.discarded_after_failure;
            fs_msg_free(comm->engine, fs_container_of(e, fs_msg_t, seq.elem));
        }
    }
}
