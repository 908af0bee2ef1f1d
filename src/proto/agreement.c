/* Agreement over a communicator (src/failure/agree.h is the protocol): the
 * engine's side.  Messages travel on FS_AM_AGREE, outside matching and
 * sequencing, so no failure or inactive state of the communicator blocks
 * them.  Everything that sends -- a received message, a view change, a
 * start -- runs outside the transport's progress call (ctrl.c says why
 * sending inside it is unsafe): received messages are queued by the upcall
 * and handled in fs_agreement_work, after the progress call.
 *
 * Members are the communicator's (engine_int.h: an intercommunicator's
 * two groups); the view is the engine's: a member is gone when its endpoint failed (the detector's
 * verdict or the transport's, fenced either way) or left. */
#include "proto/engine_int.h"
#include "common/fs_bitmap.h"

#include <stdlib.h>
#include <string.h>

#define FS_AGREE_EARLY_MAX 4096     /* messages kept for communicators to come */

typedef struct fs_agree_rx {
    fs_list_t      elem;
    fs_hdr_agree_t hdr;
    size_t         len;
    uint8_t        data[];
} fs_agree_rx_t;

typedef struct fs_agree_tx {
    fs_tl_op_t     op;
    fs_hdr_agree_t hdr;
    uint8_t        data[];
} fs_agree_tx_t;

/* ---- the group and its view ------------------------------------------- */

uint64_t fs_comm_fingerprint(const fs_comm_t *comm)
{
    uint64_t h = 0xcbf29ce484222325ull ^ comm->nmembers;
    uint32_t r;

    for (r = 0; r < comm->nmembers; r++) {
        h ^= fs_comm_member_ep(comm, r)->id;
        h *= 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* Failed (fenced) or left members become gone in the agreement.  A link
 * broken with a local cause is neither: that process may be alive. */
static void fs_agreement_sync_view(fs_comm_t *comm)
{
    uint32_t r;

    for (r = 0; r < comm->nmembers; r++) {
        const fs_ep_t *ep = fs_comm_member_ep(comm, r);

        if (fs_ep_is_failed(ep) && (fs_peer_status(ep) == FS_ERR_PEER_FAILED)) {
            fs_agree_gone(comm->agree, r, 1);
        } else if (fs_ep_is_gone(ep) && !fs_ep_is_failed(ep)) {
            fs_agree_gone(comm->agree, r, 0);
        }
    }
}

/* ---- sending ------------------------------------------------------------ */

static void fs_agreement_sent(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)status;       /* to a peer that failed: the view change handles it */
    (void)length;
    free(fs_container_of(op, fs_agree_tx_t, op));
}

fs_status_t fs_agreement_send_kind(fs_comm_t *comm, uint32_t to, uint32_t kind,
                                   const void *msg, size_t len)
{
    fs_engine_t *engine = comm->engine;
    fs_ep_t *ep = fs_comm_member_ep(comm, to);
    fs_agree_tx_t *tx;
    fs_buf_t buf;
    fs_status_t st;

    if ((ep->tl_ep == NULL) || !fs_ep_is_usable(ep)) {
        return FS_ERR_PEER_FAILED;
    }
    tx = malloc(sizeof(*tx) + len);
    if (tx == NULL) {
        FS_ERROR("no memory for an agreement message to %#llx",
                 (unsigned long long)ep->id);
        return FS_ERR_NO_MEMORY;
    }
    memcpy(tx->data, msg, len);
    memset(&tx->hdr, 0, sizeof(tx->hdr));
    tx->hdr.cid  = comm->cid;
    tx->hdr.kind = (uint16_t)kind;
    tx->hdr.inc  = comm->inc;
    tx->hdr.fp   = comm->fp;
    tx->op.cb   = fs_agreement_sent;
    tx->op.busy = 0;
    buf.ptr = tx->data;
    buf.len = len;
    buf.dt  = NULL;
    st = engine->tl_ops->am_send(engine->tl, ep->tl_ep, FS_AM_AGREE, &tx->hdr,
                                 sizeof(tx->hdr), &buf, FS_TL_SEND_EAGER, &tx->op);
    if (st != FS_INPROGRESS) {
        free(tx);
    }
    if ((st == FS_OK) || (st == FS_INPROGRESS)) {
        fs_engine_count_msg(engine, NULL);      /* pml_failstop_inject */
        return FS_OK;
    }
    return st;
}

static fs_status_t fs_agreement_send(void *arg, uint32_t to, const void *msg, size_t len)
{
    return fs_agreement_send_kind(arg, to, FS_AGREE_KIND_MSG, msg, len);
}

/* ---- results ------------------------------------------------------------- */

static void fs_agreement_decided(void *arg, const fs_agree_result_t *res)
{
    fs_comm_t *comm = arg;
    fs_list_t *e;

    for (e = comm->agree_ops.next; e != &comm->agree_ops; e = e->next) {
        fs_agreement_t *op = fs_container_of(e, fs_agreement_t, elem);

        if (op->seq != res->seq) {
            continue;
        }
        fs_list_remove(e);
        memcpy(op->v, res->v, sizeof(op->v));
        op->unacked = res->unacked;
        op->nfailed = res->nfailed;
        if (op->failed != NULL) {
            memcpy(op->failed, res->failed, fs_comm_agree_words(comm) * sizeof(uint64_t));
        }
        op->status = FS_OK;
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
        if (op->complete != NULL) {
            op->complete(op);
        }
        return;
    }
}

static const fs_agree_ops_t fs_agreement_ops = {
    .send    = fs_agreement_send,
    .decided = fs_agreement_decided,
};

static fs_status_t fs_agreement_attach(fs_comm_t *comm)
{
    fs_agree_config_t cfg = { .n = comm->nmembers, .me = comm->my_member,
                              .star = (comm->engine->params->agree_star_max > 0) &&
                                      ((uint32_t)comm->engine->params->agree_star_max >=
                                       comm->nmembers) };
    fs_status_t status;

    if (comm->agree != NULL) {
        return FS_OK;
    }
    if (comm->my_rank < 0) {
        return FS_ERR_UNSUPPORTED;
    }
    status = fs_agree_create(&cfg, &fs_agreement_ops, comm, &comm->agree);
    if (status != FS_OK) {
        return status;
    }
    fs_agreement_sync_view(comm);
    return FS_OK;
}

size_t fs_comm_agree_words(const fs_comm_t *comm)
{
    return fs_bm_words(comm->nmembers);
}

fs_status_t fs_comm_agree_start(fs_comm_t *comm, const fs_agree_input_t *in,
                                fs_agreement_t *op)
{
    size_t words = fs_comm_agree_words(comm);
    uint64_t *acked;
    fs_agree_input_t mine = *in;
    fs_status_t status;
    uint32_t r;

    status = fs_agreement_attach(comm);
    if (status != FS_OK) {
        return status;
    }
    acked = calloc(words, sizeof(*acked));
    if (acked == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    for (r = 0; (r < comm->nmembers) && (in->acked == NULL); r++) {
        const fs_ep_t *ep = fs_comm_member_ep(comm, r);

        if (fs_ep_is_failed(ep) && (ep->fail_epoch <= comm->acked_epoch)) {
            fs_bm_set(acked, r);
        }
    }
    mine.acked = (in->acked != NULL) ? in->acked : acked;
    op->comm   = comm;
    op->done   = 0;
    op->status = FS_INPROGRESS;
    op->seq    = fs_agree_next_seq(comm->agree);   /* it may be decided inside start */
    fs_list_push_tail(&comm->agree_ops, &op->elem);
    fs_agreement_sync_view(comm);       /* what it knows at its start */
    status = fs_agree_start(comm->agree, &mine, &r);
    free(acked);
    if ((status != FS_OK) && !op->done) {
        fs_list_remove(&op->elem);
    }
    return status;
}

/* ---- receiving ------------------------------------------------------------ */

fs_status_t fs_rx_agree(fs_engine_t *engine, const fs_hdr_agree_t *hdr, const void *data,
                        size_t len)
{
    fs_agree_rx_t *rx = malloc(sizeof(*rx) + len);

    if (rx == NULL) {
        ++engine->stats.lost_no_memory;
        FS_ERROR("no memory to keep an agreement message of cid %u", hdr->cid);
        return FS_OK;
    }
    rx->hdr = *hdr;
    rx->len = len;
    memcpy(rx->data, data, len);
    fs_list_push_tail(&engine->agree_rx, &rx->elem);
    engine->agree_work = 1;
    return FS_OK;
}

static void fs_agreement_keep_early(fs_engine_t *engine, fs_agree_rx_t *rx)
{
    if (engine->agree_early_count == FS_AGREE_EARLY_MAX) {
        /* the oldest: of a communicator freed here, or never created */
        free(fs_container_of(fs_list_pop_head(&engine->agree_early), fs_agree_rx_t, elem));
        ++engine->stats.dropped_malformed;
        --engine->agree_early_count;
    }
    fs_list_push_tail(&engine->agree_early, &rx->elem);
    ++engine->agree_early_count;
}

static void fs_agreement_handle(fs_engine_t *engine, fs_agree_rx_t *rx)
{
    fs_comm_t *comm = fs_engine_comm(engine, rx->hdr.cid);
    fs_status_t status;

    if ((comm == NULL) || (comm->fp != rx->hdr.fp) || (comm->inc != rx->hdr.inc)) {
        if (fs_comm_inc_past(engine, rx->hdr.cid, rx->hdr.fp, rx->hdr.inc)) {
            ++engine->stats.agree_stale;    /* for one made (and freed) here */
            free(rx);
            return;
        }
        fs_agreement_keep_early(engine, rx);     /* a communicator to come */
        return;
    }
    if (rx->hdr.kind == FS_AGREE_KIND_REVOKE) {
        fs_revoke_rx(comm, rx->data, rx->len);
        free(rx);
        fs_engine_count_msg(engine, NULL);
        return;
    }
    if ((rx->hdr.kind != FS_AGREE_KIND_MSG) || (fs_agreement_attach(comm) != FS_OK)) {
        ++engine->stats.dropped_malformed;
        FS_WARN("cid %u: agreement message of kind %u refused", comm->cid, rx->hdr.kind);
        free(rx);
        return;
    }
    status = fs_agree_recv(comm->agree, rx->data, rx->len);
    if (status != FS_OK) {
        ++engine->stats.dropped_malformed;
        FS_WARN("cid %u: agreement message refused: %s", comm->cid,
                fs_status_string(status));
    }
    free(rx);
    fs_engine_count_msg(engine, NULL);          /* pml_failstop_inject */
}

void fs_agreement_work(fs_engine_t *engine)
{
    fs_list_t *e, *c;

    if (engine->in_progress) {
        return;                 /* after the progress call */
    }
    engine->agree_work = 0;
    for (c = engine->comms_list.next; c != &engine->comms_list; c = c->next) {
        fs_comm_t *comm = fs_container_of(c, fs_comm_t, elem);

        if (comm->agree != NULL) {
            fs_agreement_sync_view(comm);
        }
        if (comm->revoked) {
            fs_revoke_view_changed(comm);
        }
    }
    while ((e = fs_list_pop_head(&engine->agree_rx)) != NULL) {
        fs_agreement_handle(engine, fs_container_of(e, fs_agree_rx_t, elem));
    }
}

void fs_agreement_comm_created(fs_comm_t *comm)
{
    fs_engine_t *engine = comm->engine;
    fs_list_t *e;

    /* early messages are handled again after the next progress call */
    while ((e = fs_list_pop_head(&engine->agree_early)) != NULL) {
        --engine->agree_early_count;
        fs_list_push_tail(&engine->agree_rx, e);
        engine->agree_work = 1;
    }
}

void fs_agreement_comm_destroy(fs_comm_t *comm)
{
    fs_list_t *e;

    while ((e = fs_list_pop_head(&comm->agree_ops)) != NULL) {
        fs_agreement_t *op = fs_container_of(e, fs_agreement_t, elem);

        /* freed with an agreement running: an error, never a result (a
         * cancel would read as success to the host) */
        op->status = FS_ERR_INVALID;
        __atomic_store_n(&op->done, 1, __ATOMIC_RELEASE);
        if (op->complete != NULL) {
            op->complete(op);
        }
    }
    fs_agree_destroy(comm->agree);
    comm->agree = NULL;
}

void fs_agreement_engine_cleanup(fs_engine_t *engine)
{
    fs_list_t *e;

    while ((e = fs_list_pop_head(&engine->agree_rx)) != NULL) {
        free(fs_container_of(e, fs_agree_rx_t, elem));
    }
    while ((e = fs_list_pop_head(&engine->agree_early)) != NULL) {
        free(fs_container_of(e, fs_agree_rx_t, elem));
    }
}
