/* OFI transport, sending: send slots, posting in order per peer, eager
 * messages.
 *
 * A slot is a registered buffer of slot_size bytes.  Slots come in chunks
 * registered once; a send copies into a slot, so the caller's buffer is free
 * at once and the provider only ever touches memory the transport owns.  A
 * slot whose send never completes (a dead peer on a provider that reports
 * nothing) stays with the provider: it is never reused, only freed with its
 * chunk at the end. */
#include "transport/ofi_int.h"
#include "common/fs_log.h"
#include "common/fs_time.h"
#include "failure/fault_status.h"

#include <rdma/fi_errno.h>

#include <stdlib.h>
#include <string.h>

#define FS_OFI_CHUNK_SLOTS 256u  /* one chunk made at init: 64-message windows
                                    to 3 peers fit without growing */
#define FS_OFI_MAX_CHUNKS  32u   /* 8192 slots: past it a send fails (NO_MEMORY) */

typedef struct fs_ofi_chunk {
    struct fs_ofi_chunk *next;
    struct fid_mr       *mr;
    uint8_t             *mem;
    fs_ofi_slot_t        slots[FS_OFI_CHUNK_SLOTS];
} fs_ofi_chunk_t;

fs_status_t fs_ofi_slots_grow(fs_tl_t *tl)
{
    fs_ofi_chunk_t *chunk;
    void *desc = NULL;
    unsigned i;

    if (tl->nchunks == FS_OFI_MAX_CHUNKS) {
        FS_ERROR("OFI: all %u send buffers are in use (a peer that does not "
                 "receive, or a provider that does not complete sends)",
                 FS_OFI_MAX_CHUNKS * FS_OFI_CHUNK_SLOTS);
        return FS_ERR_NO_MEMORY;
    }
    chunk = calloc(1, sizeof(*chunk));
    if (chunk == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    chunk->mem = aligned_alloc(64, FS_OFI_CHUNK_SLOTS * tl->slot_size);
    if ((chunk->mem == NULL) ||
        (fs_ofi_mr_reg(tl, chunk->mem, FS_OFI_CHUNK_SLOTS * tl->slot_size,
                       &chunk->mr, &desc) != FS_OK)) {
        free(chunk->mem);
        free(chunk);
        return FS_ERR_NO_MEMORY;
    }
    for (i = 0; i < FS_OFI_CHUNK_SLOTS; ++i) {
        fs_ofi_slot_t *slot = &chunk->slots[i];

        slot->ctx.kind = FS_OFI_CTX_SLOT;
        slot->buf      = chunk->mem + (size_t)i * tl->slot_size;
        slot->desc     = desc;
        fs_list_push_tail(&tl->free_slots, &slot->elem);
    }
    chunk->next = tl->chunks;
    tl->chunks  = chunk;
    ++tl->nchunks;
    return FS_OK;
}

fs_ofi_slot_t *fs_ofi_slot_get(fs_tl_t *tl)
{
    fs_list_t *elem = fs_list_pop_head(&tl->free_slots);

    if (fs_unlikely(elem == NULL)) {
        if (fs_ofi_slots_grow(tl) != FS_OK) {
            return NULL;
        }
        elem = fs_list_pop_head(&tl->free_slots);
    }
    return fs_container_of(elem, fs_ofi_slot_t, elem);
}

void fs_ofi_slot_put(fs_tl_t *tl, fs_ofi_slot_t *slot)
{
    slot->peer     = NULL;
    slot->op       = NULL;
    slot->sid      = 0;
    slot->delivery = 0;
    fs_list_push_head(&tl->free_slots, &slot->elem);
}

void fs_ofi_slots_free(fs_tl_t *tl)
{
    fs_ofi_chunk_t *chunk;

    while ((chunk = tl->chunks) != NULL) {
        tl->chunks = chunk->next;
        if (chunk->mr != NULL) {
            fi_close(&chunk->mr->fid);
        }
        free(chunk->mem);
        free(chunk);
    }
    fs_list_init(&tl->free_slots);
}

/* A send the provider refused outright (not -FI_EAGAIN): its class says
 * whether the peer is to blame (sockets: -FI_ENOENT to a dead peer). */
static fs_status_t fs_ofi_post_failed(fs_tl_t *tl, fs_tl_ep_t *peer, ssize_t rc)
{
    const fs_fault_row_t *row =
        fs_fault_classify(FS_FAULT_SRC_OFI, (int32_t)rc, 0, tl->prov->fault_ctx);

    FS_INFO("OFI %s: send refused %d (%s): %s", tl->info->fabric_attr->prov_name,
            (int)-rc, fs_ofi_strerror((int)-rc), fs_fault_class_name(row->cls));
    fs_ofi_peer_fail(tl, peer, row);
    return fs_fault_to_status(row->cls);
}

/* Whether sends to an acceptor's peer still wait for its HELLO (ofi.c,
 * fs_ofi_connect); past the deadline this side connects after all. */
static int fs_ofi_peer_held(fs_tl_ep_t *peer, double now)
{
    if (now < peer->hold_until) {
        return 1;
    }
    FS_INFO("OFI: no connection from a peer within %.1f s: connecting to it",
            FS_OFI_HOLD_S);
    peer->hold = 0;
    return 0;
}

/* Control messages (departure: BYE, DONE) complete only once the peer's
 * provider has taken them (FI_DELIVERY_COMPLETE): a process that finalized
 * closes its endpoint after its flushing closes, and over TCP (net) a
 * socket closed with unread data resets the connection, which discards
 * what the peer's kernel still held: the BYE went missing and the peer
 * read the reset as a death.  Not over shm, where no close resets anything
 * and a delivery to a peer that has exited never completes. */
static ssize_t fs_ofi_send_slot(fs_tl_t *tl, fs_tl_ep_t *peer, fs_ofi_slot_t *slot)
{
    struct iovec iov;
    struct fi_msg msg;

    if (fs_likely(!slot->delivery)) {
        return fi_send(tl->ep, slot->buf, slot->len, slot->desc, peer->addr, &slot->ctx);
    }
    iov.iov_base  = slot->buf;
    iov.iov_len   = slot->len;
    msg.msg_iov   = &iov;
    msg.desc      = &slot->desc;
    msg.iov_count = 1;
    msg.addr      = peer->addr;
    msg.context   = &slot->ctx;
    msg.data      = 0;
    return fi_sendmsg(tl->ep, &msg, FI_DELIVERY_COMPLETE | FI_COMPLETION);
}

/* Posts a filled slot.  A peer with sends waiting keeps its order: the slot
 * queues behind them.  A slot the provider took is on peer->posted until
 * its completion. */
fs_status_t fs_ofi_post(fs_tl_t *tl, fs_tl_ep_t *peer, fs_ofi_slot_t *slot)
{
    ssize_t rc;

    slot->peer = peer;
    if (fs_unlikely(peer->hold) && fs_ofi_peer_held(peer, fs_time_now())) {
        fs_list_push_tail(&peer->pending, &slot->elem);
        if (!fs_list_is_linked(&peer->pend_elem)) {
            fs_list_push_tail(&tl->pending_peers, &peer->pend_elem);
        }
        return FS_OK;
    }
    if (fs_unlikely(!fs_list_is_empty(&peer->pending))) {
        fs_list_push_tail(&peer->pending, &slot->elem);
        return FS_OK;
    }
    rc = fs_ofi_send_slot(tl, peer, slot);
    if (fs_likely(rc == 0)) {
        fs_list_push_tail(&peer->posted, &slot->elem);
        return FS_OK;
    }
    if (rc != -FI_EAGAIN) {
        fs_ofi_slot_put(tl, slot);
        return fs_ofi_post_failed(tl, peer, rc);
    }
    fs_list_push_tail(&peer->pending, &slot->elem);
    fs_list_push_tail(&tl->pending_peers, &peer->pend_elem);
    return FS_OK;
}

/* Posts what -FI_EAGAIN held back, in order, until the provider refuses
 * again.  A peer that never takes its sends again (rxm to a dead process)
 * is ended by the detector's verdict, which closes its endpoint. */
unsigned fs_ofi_retry_pending(fs_tl_t *tl)
{
    fs_list_t *e, *next;
    unsigned count = 0;
    double now = fs_time_now();

    for (e = tl->pending_peers.next; e != &tl->pending_peers; e = next) {
        fs_tl_ep_t *peer = fs_container_of(e, fs_tl_ep_t, pend_elem);
        fs_list_t *s;

        next = e->next;
        if (peer->hold && fs_ofi_peer_held(peer, now)) {
            continue;
        }
        while ((s = peer->pending.next) != &peer->pending) {
            fs_ofi_slot_t *slot = fs_container_of(s, fs_ofi_slot_t, elem);
            ssize_t rc          = fs_ofi_send_slot(tl, peer, slot);

            if (rc == -FI_EAGAIN) {
                break;
            }
            fs_list_remove(s);
            ++count;
            if (rc != 0) {
                fs_ofi_op_done(tl, slot->op, FS_ERR_CANCELED);  /* a flush */
                fs_ofi_slot_put(tl, slot);
                (void)fs_ofi_post_failed(tl, peer, rc);  /* ends the rest */
                break;
            }
            fs_list_push_tail(&peer->posted, s);
        }
        if (fs_list_is_empty(&peer->pending)) {
            fs_list_remove(&peer->pend_elem);
        }
    }
    return count;
}

/* The peer is stopped: queued sends are dropped, sends the provider holds
 * are given up (the slot stays with the provider until it completes, if it
 * ever does), and their operations end from progress. */
void fs_ofi_drop_sends(fs_tl_t *tl, fs_tl_ep_t *peer, fs_status_t status)
{
    fs_list_t *s;

    while ((s = fs_list_pop_head(&peer->pending)) != NULL) {
        fs_ofi_slot_t *slot = fs_container_of(s, fs_ofi_slot_t, elem);

        fs_ofi_op_done(tl, slot->op, status);
        fs_ofi_slot_put(tl, slot);
    }
    fs_list_remove(&peer->pend_elem);
    for (s = peer->posted.next; s != &peer->posted; s = s->next) {
        fs_ofi_slot_t *slot = fs_container_of(s, fs_ofi_slot_t, elem);

        fs_ofi_op_done(tl, slot->op, status);
        slot->op = NULL;
    }
}

/* A posted send completed (row NULL) or failed. */
void fs_ofi_send_done(fs_tl_t *tl, fs_ofi_slot_t *slot, const fs_fault_row_t *row)
{
    fs_tl_ep_t *peer = slot->peer;
    fs_tl_op_t *op;

    if (row != NULL) {
        fs_ofi_peer_fail(tl, peer, row);    /* ends slot->op with the others */
    }
    op = slot->op;
    fs_list_remove(&slot->elem);
    slot->op = NULL;
    if (op != NULL) {
        if (row != NULL) {
            fs_ofi_op_done(tl, op, fs_fault_to_status(row->cls));
        } else {
            op->busy   = 0;
            op->handle = NULL;
            op->cb(op, FS_OK, 0);
        }
    }
    if (slot->sid != 0) {
        fs_ofi_rndv_push_done(tl, slot);
    }
    fs_ofi_slot_put(tl, slot);
}

/* An eager send copies the message into a slot (the caller's buffer is
 * free at once) but completes only when the provider says it has left
 * (FI_TRANSMIT_COMPLETE): a send that completed must arrive even if this
 * process never calls MPI again, and a provider with manual progress (or a
 * connection still being set up) holds a message until it is progressed. */
static fs_status_t fs_ofi_send_eager(fs_tl_t *tl, fs_tl_ep_t *peer, unsigned am_id,
                                     const void *hdr, size_t hdr_len,
                                     const fs_buf_t *buf, fs_tl_op_t *op)
{
    fs_ofi_wire_t w = {FS_OFI_EAGER, (uint8_t)am_id, (uint16_t)hdr_len, 0};
    fs_ofi_slot_t *slot;
    fs_status_t status;

    slot = fs_ofi_slot_get(tl);
    if (slot == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memcpy(slot->buf, &w, sizeof(w));
    memcpy(slot->buf + sizeof(w), hdr, hdr_len);
    fs_buf_pack(tl->dt_ops, buf, 0, slot->buf + sizeof(w) + hdr_len, buf->len);
    slot->len      = sizeof(w) + hdr_len + buf->len;
    slot->op       = op;
    slot->delivery = (am_id == FS_AM_CTRL) && tl->prov->conn;
    op->busy   = 1;
    op->handle = NULL;
    status     = fs_ofi_post(tl, peer, slot);
    if (status != FS_OK) {
        op->busy = 0;
        return status;
    }
    return FS_INPROGRESS;
}

/* Eager messages are copied out and complete at once (FS_OK); larger ones
 * are a rendezvous and complete when the receiver took or dropped them. */
fs_status_t fs_ofi_am_send(fs_tl_t *tl, fs_tl_ep_t *peer, unsigned am_id,
                           const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                           unsigned flags, fs_tl_op_t *op)
{
    if (fs_unlikely(peer->failed)) {
        return peer->fail_status;
    }
    if (fs_unlikely(hdr_len > FS_OFI_HDR_MAX)) {
        FS_ERROR("OFI: a %zu-byte message header (at most %u)", hdr_len, FS_OFI_HDR_MAX);
        return FS_ERR_LOCAL;
    }
    if (flags & FS_TL_SEND_IMM) {
        return FS_ERR_AGAIN;        /* nothing completes before the provider says so */
    }
    if (fs_likely(!(flags & FS_TL_SEND_RNDV) && (hdr_len + buf->len <= tl->eager_max))) {
        return fs_ofi_send_eager(tl, peer, am_id, hdr, hdr_len, buf, op);
    }
    if (flags & FS_TL_SEND_EAGER) {
        FS_ERROR("OFI: a %zu-byte message that must go in one piece (at most %zu)",
                 buf->len, tl->eager_max - hdr_len);
        return FS_ERR_LOCAL;
    }
    return fs_ofi_rndv_send(tl, peer, am_id, hdr, hdr_len, buf, op);
}
