/* OFI transport, failstop's own rendezvous for messages above eager_max.
 *
 *   sender                         receiver
 *   RTS(len, sid, address, hdr) ->           engine keeps the descriptor
 *                               <- CTS(sid, rid, want)   recv_data
 *   DATA(rid, offset) x n       ->           copied into the receive buffer
 *   done when every fragment has left       done when `want` bytes arrived
 *
 * release is a CTS with FS_OFI_CTS_DROP: the sender completes without
 * sending.  The RTS carries the sender's address because a provider without
 * FI_SOURCE (tcp;ofi_rxm) cannot say where a message came from, and the
 * receiver may not have an endpoint to the sender yet (lazy connection).
 * Ids, not pointers, name the state on the wire (ofi_ids.c): a fragment for
 * a receive that was cancelled or a peer that was failed finds nothing and
 * is dropped. */
#include "transport/ofi_int.h"
#include "common/fs_log.h"

#include <string.h>

static fs_ofi_rndv_t *fs_ofi_rndv_new(fs_tl_t *tl, fs_tl_ep_t *peer, int is_tx)
{
    fs_ofi_rndv_t *r = fs_mpool_get(&tl->rndvs);

    if (r == NULL) {
        return NULL;
    }
    memset(r, 0, sizeof(*r));
    if (fs_ofi_id_alloc(&tl->ids, r, &r->id) != FS_OK) {
        fs_mpool_put(&tl->rndvs, r);
        return NULL;
    }
    r->peer  = peer;
    r->is_tx = (uint8_t)is_tx;
    peer->tx_rndv += (unsigned)is_tx;
    fs_list_push_tail(&peer->rndv, &r->elem);
    return r;
}

static void fs_ofi_rndv_free(fs_tl_t *tl, fs_ofi_rndv_t *r)
{
    fs_ofi_id_free(&tl->ids, r->id);
    fs_mpool_put(&tl->rndvs, r);
}

/* Ends a rendezvous: its callback runs from progress (fs_ofi_rndv_report).
 * One without an engine operation (a dropped RTS) is freed at once. */
void fs_ofi_rndv_finish(fs_tl_t *tl, fs_ofi_rndv_t *r, fs_status_t status)
{
    fs_tl_ep_t *peer = r->peer;

    fs_list_remove(&r->elem);
    fs_ofi_id_free(&tl->ids, r->id);    /* nothing more from the wire */
    peer->tx_rndv -= r->is_tx;
    if (r->op == NULL) {
        fs_mpool_put(&tl->rndvs, r);
    } else {
        r->state  = FS_OFI_RNDV_DONE;
        r->status = status;
        fs_list_push_tail(&tl->done, &r->elem);
    }
}

/* Ends an engine operation from progress (none: nothing to do). */
void fs_ofi_op_done(fs_tl_t *tl, fs_tl_op_t *op, fs_status_t status)
{
    fs_ofi_rndv_t *r;

    if (op == NULL) {
        return;
    }
    r = fs_mpool_get(&tl->rndvs);
    if (r == NULL) {
        op->busy   = 0;         /* no memory for a record: report it now */
        op->handle = NULL;
        op->cb(op, status, 0);
        return;
    }
    memset(r, 0, sizeof(*r));
    r->op     = op;
    r->status = status;
    r->state  = FS_OFI_RNDV_DONE;
    fs_list_push_tail(&tl->done, &r->elem);
}

unsigned fs_ofi_rndv_report(fs_tl_t *tl)
{
    fs_list_t *e;
    unsigned count = 0;

    while ((e = fs_list_pop_head(&tl->done)) != NULL) {
        fs_ofi_rndv_t *r = fs_container_of(e, fs_ofi_rndv_t, elem);
        fs_tl_op_t *op   = r->op;
        fs_status_t st   = r->status;
        size_t length    = r->total;

        fs_mpool_put(&tl->rndvs, r);
        op->busy   = 0;
        op->handle = NULL;
        op->cb(op, st, (st == FS_OK) ? length : 0);
        ++count;
    }
    return count;
}

void fs_ofi_rndv_fail_peer(fs_tl_t *tl, fs_tl_ep_t *peer, fs_status_t status)
{
    fs_list_t *e;

    while ((e = peer->rndv.next) != &peer->rndv) {
        fs_ofi_rndv_t *r = fs_container_of(e, fs_ofi_rndv_t, elem);

        if ((r->state == FS_OFI_RNDV_HELD) || (r->state == FS_OFI_RNDV_RELEASED)) {
            /* the engine still holds it: it ends when the engine fetches
             * (which then fails) or releases it */
            fs_list_remove(e);
            continue;
        }
        fs_ofi_rndv_finish(tl, r, status);
    }
}

/* ---- sender ---------------------------------------------------------------- */

fs_status_t fs_ofi_rndv_send(fs_tl_t *tl, fs_tl_ep_t *peer, unsigned am_id,
                             const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                             fs_tl_op_t *op)
{
    fs_ofi_rts_t rts;
    fs_ofi_slot_t *slot;
    fs_ofi_rndv_t *r;
    fs_status_t status;

    slot = fs_ofi_slot_get(tl);
    r    = (slot != NULL) ? fs_ofi_rndv_new(tl, peer, 1) : NULL;
    if (r == NULL) {
        if (slot != NULL) {
            fs_ofi_slot_put(tl, slot);
        }
        return FS_ERR_NO_MEMORY;
    }
    r->buf   = *buf;
    r->total = buf->len;
    r->state = FS_OFI_RNDV_WAIT_CTS;
    rts.w.type    = FS_OFI_RTS;
    rts.w.am_id   = (uint8_t)am_id;
    rts.w.hdr_len = (uint16_t)hdr_len;
    rts.w.aux     = (uint32_t)tl->name_len;
    rts.len       = buf->len;
    rts.sid       = r->id;
    memcpy(slot->buf, &rts, sizeof(rts));
    memcpy(slot->buf + sizeof(rts), tl->name, tl->name_len);
    memcpy(slot->buf + sizeof(rts) + tl->name_len, hdr, hdr_len);
    slot->len = sizeof(rts) + tl->name_len + hdr_len;
    slot->sid = 0;
    status    = fs_ofi_post(tl, peer, slot);
    if (status != FS_OK) {
        return status;      /* the peer's failure ended r (no op yet: freed) */
    }
    r->op      = op;
    op->busy   = 1;
    op->handle = r;
    return FS_INPROGRESS;
}

/* Keeps up to FS_OFI_WINDOW fragments in flight. */
static void fs_ofi_rndv_push(fs_tl_t *tl, fs_ofi_rndv_t *r)
{
    size_t frag_max = tl->slot_size - sizeof(fs_ofi_data_t);

    while ((r->frags < FS_OFI_WINDOW) && (r->done < r->want)) {
        fs_ofi_data_t d;
        fs_ofi_slot_t *slot = fs_ofi_slot_get(tl);
        size_t n = r->want - r->done;
        fs_status_t status;

        if (slot == NULL) {
            fs_ofi_rndv_finish(tl, r, FS_ERR_NO_MEMORY);
            return;
        }
        memset(&d, 0, sizeof(d));
        d.w.type = FS_OFI_DATA;
        d.rid    = r->remote_id;
        d.offset = r->done;
        n = fs_buf_pack(tl->dt_ops, &r->buf, r->done, slot->buf + sizeof(d),
                        (n < frag_max) ? n : frag_max);
        memcpy(slot->buf, &d, sizeof(d));
        slot->len = sizeof(d) + n;
        slot->sid = r->id;
        status    = fs_ofi_post(tl, r->peer, slot);
        if (status != FS_OK) {
            return;     /* the peer failed: that ended r */
        }
        r->done += n;
        ++r->frags;
    }
    if ((r->frags == 0) && (r->done == r->want)) {
        fs_ofi_rndv_finish(tl, r, FS_OK);
    }
}

void fs_ofi_rndv_push_done(fs_tl_t *tl, fs_ofi_slot_t *slot)
{
    fs_ofi_rndv_t *r = fs_ofi_id_find(&tl->ids, slot->sid);

    if ((r == NULL) || (r->state != FS_OFI_RNDV_PUSH)) {
        return;         /* ended already (its peer failed) */
    }
    --r->frags;
    fs_ofi_rndv_push(tl, r);
}

void fs_ofi_rx_cts(fs_tl_t *tl, const uint8_t *msg, size_t len)
{
    fs_ofi_cts_t cts;
    fs_ofi_rndv_t *r;

    if (len != sizeof(cts)) {
        fs_ofi_bad(tl, "a clear-to-send of the wrong length");
        return;
    }
    memcpy(&cts, msg, sizeof(cts));
    r = fs_ofi_id_find(&tl->ids, cts.sid);
    if ((r == NULL) || !r->is_tx || (r->state != FS_OFI_RNDV_WAIT_CTS)) {
        return;     /* for a send that ended (its peer was closed or failed) */
    }
    if ((cts.w.aux & FS_OFI_CTS_DROP) || (cts.want == 0)) {
        fs_ofi_rndv_finish(tl, r, FS_OK);
        return;
    }
    r->remote_id = cts.rid;
    r->want      = (cts.want < r->total) ? cts.want : r->total;
    r->state     = FS_OFI_RNDV_PUSH;
    fs_ofi_rndv_push(tl, r);
}

/* ---- receiver -------------------------------------------------------------- */

static fs_status_t fs_ofi_send_cts(fs_tl_t *tl, fs_ofi_rndv_t *r, uint32_t flags)
{
    fs_ofi_cts_t cts;
    fs_ofi_slot_t *slot;
    fs_status_t status;

    slot = fs_ofi_slot_get(tl);
    if (slot == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memset(&cts, 0, sizeof(cts));
    cts.w.type = FS_OFI_CTS;
    cts.w.aux  = flags;
    cts.sid    = r->remote_id;
    cts.rid    = r->id;
    cts.want   = r->want;
    memcpy(slot->buf, &cts, sizeof(cts));
    slot->len = sizeof(cts);
    slot->sid = 0;
    status    = fs_ofi_post(tl, r->peer, slot);
    return status;
}

void fs_ofi_rx_rts(fs_tl_t *tl, const uint8_t *msg, size_t len)
{
    fs_ofi_rts_t rts;
    fs_tl_ep_t *peer;
    fs_ofi_rndv_t *r;
    fs_tl_rx_t rx;
    fs_status_t status;

    memcpy(&rts, msg, sizeof(rts));     /* the caller checked len >= sizeof */
    if ((rts.w.aux == 0) || (rts.w.aux > FS_OFI_ADDR_MAX) ||
        (rts.w.hdr_len > FS_OFI_HDR_MAX) ||
        (len != sizeof(rts) + rts.w.aux + rts.w.hdr_len) || (rts.w.am_id >= FS_AM_COUNT)) {
        fs_ofi_bad(tl, "a malformed request-to-send");
        return;
    }
    peer = fs_ofi_peer_get(tl, msg + sizeof(rts), rts.w.aux);
    r    = (peer != NULL) ? fs_ofi_rndv_new(tl, peer, 0) : NULL;
    if (r == NULL) {
        FS_ERROR("OFI: no memory for a %llu-byte rendezvous message: dropped",
                 (unsigned long long)rts.len);
        return;
    }
    r->remote_id = rts.sid;
    r->total     = rts.len;
    r->state     = FS_OFI_RNDV_HELD;
    rx.desc      = r;
    rx.flags     = FS_TL_RX_RNDV;
    tl->cb_rndv  = r;
    status = tl->up.am_recv(tl->up_arg, rts.w.am_id, msg + sizeof(rts) + rts.w.aux,
                            rts.w.hdr_len, NULL, rts.len, &rx);
    tl->cb_rndv  = NULL;
    if ((r->state == FS_OFI_RNDV_RELEASED) ||
        ((status != FS_INPROGRESS) && (r->state == FS_OFI_RNDV_HELD))) {
        r->state = FS_OFI_RNDV_HELD;
        fs_ofi_release(tl, r);      /* dropped: the sender completes */
    }
}

void fs_ofi_rx_data(fs_tl_t *tl, const uint8_t *msg, size_t len)
{
    fs_ofi_data_t d;
    fs_ofi_rndv_t *r;
    size_t n = len - sizeof(d);        /* the caller checked len >= sizeof */

    memcpy(&d, msg, sizeof(d));
    r = fs_ofi_id_find(&tl->ids, d.rid);
    if ((r == NULL) || r->is_tx || (r->state != FS_OFI_RNDV_FETCHING)) {
        return;     /* for a fetch that ended (cancelled, peer failed) */
    }
    if ((d.offset > r->want) || (n > r->want - d.offset) || (n > r->want - r->done)) {
        fs_ofi_bad(tl, "a rendezvous fragment outside its message");
        return;
    }
    fs_buf_unpack(tl->dt_ops, &r->buf, d.offset, msg + sizeof(d), n);
    r->done += n;
    if (r->done == r->want) {
        fs_ofi_rndv_finish(tl, r, FS_OK);
    }
}

fs_status_t fs_ofi_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                             size_t msg_len, fs_tl_op_t *op)
{
    fs_ofi_rndv_t *r = desc;
    fs_status_t status;

    if (r->state != FS_OFI_RNDV_HELD) {
        FS_ERROR("OFI: a rendezvous fetched twice");
        return FS_ERR_LOCAL;
    }
    if (r->peer->failed || !fs_list_is_linked(&r->elem)) {
        status = r->peer->failed ? r->peer->fail_status : FS_ERR_CANCELED;
        fs_ofi_rndv_free(tl, r);
        return status;
    }
    (void)msg_len;      /* r->total is the sender's word for it */
    r->buf   = *buf;
    r->want  = (r->total < buf->len) ? r->total : buf->len;
    r->state = FS_OFI_RNDV_FETCHING;
    r->op    = op;
    op->busy   = 1;
    op->handle = r;
    status = fs_ofi_send_cts(tl, r, 0);
    if (status == FS_ERR_NO_MEMORY) {
        fs_ofi_rndv_finish(tl, r, status);
    } else if (status != FS_OK) {
        /* the peer's failure ended r: its callback reports it */
    } else if (r->want == 0) {
        fs_ofi_rndv_finish(tl, r, FS_OK);
    }
    return FS_INPROGRESS;
}

void fs_ofi_release(fs_tl_t *tl, void *desc)
{
    fs_ofi_rndv_t *r = desc;

    if (r == tl->cb_rndv) {
        r->state = FS_OFI_RNDV_RELEASED;   /* dropped when the upcall returns */
        return;
    }
    if (r->state != FS_OFI_RNDV_HELD) {
        FS_ERROR("OFI: a rendezvous released twice");
        return;
    }
    if (!r->peer->failed && fs_list_is_linked(&r->elem)) {
        (void)fs_ofi_send_cts(tl, r, FS_OFI_CTS_DROP);
    }
    if (fs_list_is_linked(&r->elem)) {
        fs_list_remove(&r->elem);
    }
    fs_ofi_rndv_free(tl, r);
}

/* A fetch ends at once (its fragments are then dropped); a send cannot be
 * taken back from its receiver, as with UCX: it ends with its peer. */
void fs_ofi_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    fs_ofi_rndv_t *r;

    if (!op->busy) {
        return;
    }
    r = op->handle;
    if ((r != NULL) && !r->is_tx && (r->state == FS_OFI_RNDV_FETCHING)) {
        fs_ofi_rndv_finish(tl, r, FS_ERR_CANCELED);
    }
}
