/* Storage of messages that arrive before their receive (unexpected), before
 * their turn (out of order), or before their communicator exists (early).
 *
 * A payload the transport lets us keep (persistent UCX descriptor, or a
 * rendezvous descriptor) is held, not copied.  Otherwise small payloads go
 * inline in the message, larger ones into size-classed copy pools; only
 * payloads beyond the largest class hit malloc (counted). */
#include "proto/engine_int.h"

#include <stdlib.h>
#include <string.h>

static const size_t fs_copy_class_size[FS_COPY_CLASSES] = {
    1024, 8192, 65536, 524288
};
static const size_t fs_copy_class_chunk[FS_COPY_CLASSES] = {
    64, 16, 4, 1
};

fs_status_t fs_msg_pools_init(fs_engine_t *engine)
{
    unsigned i;

    fs_mpool_init(&engine->msg_pool, "msg", sizeof(fs_msg_t), 128, 0,
                  &engine->stats.pool_grows);
    /* control messages are rare (failures, finalize): not counted */
    fs_mpool_init(&engine->ctrl_pool, "ctrl", sizeof(fs_ctrl_req_t), 32, 0, NULL);
    for (i = 0; i < FS_COPY_CLASSES; ++i) {
        fs_mpool_init(&engine->copy_pools[i], "eager-copy", fs_copy_class_size[i],
                      fs_copy_class_chunk[i], 0, &engine->stats.pool_grows);
    }
    /* every stored message takes one: a process that first stores one late
     * (a barrier's release arriving while its blocking send still waits
     * for the transport, as over OFI) would allocate on the message path */
    if (fs_mpool_reserve(&engine->msg_pool) != FS_OK) {
        goto err;
    }
    /* the first chunk of each copy class too, its pages mapped (~1 MiB in
     * all): a class first used inside a stream paid a page fault per page
     * of its chunk there (fs_mpool_get_grow) */
    for (i = 0; i < FS_COPY_CLASSES; ++i) {
        if (fs_mpool_reserve(&engine->copy_pools[i]) != FS_OK) {
            goto err;
        }
    }
    return FS_OK;

err:
    fs_msg_pools_cleanup(engine);
    return FS_ERR_NO_MEMORY;
}

void fs_msg_pools_cleanup(fs_engine_t *engine)
{
    unsigned i;

    fs_mpool_cleanup(&engine->msg_pool);
    fs_mpool_cleanup(&engine->ctrl_pool);
    for (i = 0; i < FS_COPY_CLASSES; ++i) {
        fs_mpool_cleanup(&engine->copy_pools[i]);
    }
}

/* What a stored message holds in this process: its record, and its payload
 * when that is copied or a transport buffer is held (a rendezvous payload
 * stays with its sender; a tiny one is inside the record). */
static size_t fs_msg_cost(const fs_msg_t *msg)
{
    switch (msg->store) {
    case FS_MSG_STORE_POOL:
    case FS_MSG_STORE_MALLOC:
    case FS_MSG_STORE_TL:
        return sizeof(fs_msg_t) + msg->len;
    default:
        return sizeof(fs_msg_t);
    }
}

/* One budget, max_unexpected_mb, for everything a sender can make this
 * process keep before its receive: records, copies, held transport buffers
 * and rendezvous descriptors, messages for communicators not created yet.
 * Past it a message is not kept: its channel breaks (fs_chan_lose). */
static int fs_msg_budget_take(fs_engine_t *engine, size_t cost)
{
    if (fs_unlikely(engine->unexpected_bytes + cost > engine->unexpected_limit)) {
        if (!engine->budget_warned) {
            FS_ERROR("messages held before their receive exceed "
                     "pml_failstop_max_unexpected_mb (%zu MiB)",
                     engine->unexpected_limit >> 20);
            engine->budget_warned = 1;
        }
        return 0;
    }
    engine->unexpected_bytes += cost;
    return 1;
}

/* Finds room for len payload bytes of msg; sets msg->data and msg->store. */
static fs_status_t fs_msg_alloc_payload(fs_engine_t *engine, fs_msg_t *msg, size_t len)
{
    unsigned cls;

    if (len <= FS_MSG_INLINE) {
        msg->data  = msg->inline_data;
        msg->store = FS_MSG_STORE_INLINE;
        return FS_OK;
    }
    for (cls = 0; cls < FS_COPY_CLASSES; ++cls) {
        if (len <= fs_copy_class_size[cls]) {
            msg->data = fs_mpool_get(&engine->copy_pools[cls]);
            msg->store      = FS_MSG_STORE_POOL;
            msg->copy_class = (uint8_t)cls;
            break;
        }
    }
    if (cls == FS_COPY_CLASSES) {
        msg->data  = malloc(len);
        msg->store = FS_MSG_STORE_MALLOC;
        ++engine->stats.large_copies;
    }
    if (msg->data == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    return FS_OK;
}

/* A pooled copy of a borrowed message's description (not its payload). */
static fs_msg_t *fs_msg_clone(fs_engine_t *engine, const fs_msg_t *fresh)
{
    fs_msg_t *msg = fs_mpool_get(&engine->msg_pool);

    if (msg == NULL) {
        return NULL;
    }
    memcpy(msg, fresh, offsetof(fs_msg_t, inline_data));
    fs_list_init(&msg->mq.src_elem);
    fs_list_init(&msg->mq.all_elem);
    fs_list_init(&msg->seq.elem);
    msg->store     = FS_MSG_STORE_NONE;
    msg->is_stored = 1;
    return msg;
}

static void fs_msg_free_payload(fs_engine_t *engine, fs_msg_t *msg);

/* Takes the budget for msg, whose store is decided; frees it if over. */
static fs_msg_t *fs_msg_admit(fs_engine_t *engine, fs_msg_t *msg)
{
    if (fs_msg_budget_take(engine, fs_msg_cost(msg))) {
        return msg;
    }
    /* a held descriptor stays the caller's: only our own copy is freed */
    fs_msg_free_payload(engine, msg);
    fs_mpool_put(&engine->msg_pool, msg);
    return NULL;
}

fs_msg_t *fs_msg_store(fs_engine_t *engine, const fs_msg_t *fresh,
                       const fs_tl_rx_t *rx)
{
    fs_msg_t *msg = fs_msg_clone(engine, fresh);

    if ((msg == NULL) || (msg->kind != FS_MSG_EAGER) || (msg->len == 0)) {
        /* rendezvous/self: the descriptor or sreq is the payload; a
         * transport that receives the payload itself holds it here */
        if ((msg != NULL) && (rx != NULL) && (msg->kind == FS_MSG_RNDV) &&
            (rx->flags & FS_TL_RX_PERSISTENT)) {
            msg->store = FS_MSG_STORE_TL;
        }
        return (msg == NULL) ? NULL : fs_msg_admit(engine, msg);
    }
    if ((rx != NULL) && (rx->flags & FS_TL_RX_PERSISTENT)) {
        msg->desc  = rx->desc;
        msg->store = FS_MSG_STORE_TL;
        return fs_msg_admit(engine, msg);
    }
    if (fs_msg_alloc_payload(engine, msg, msg->len) != FS_OK) {
        fs_mpool_put(&engine->msg_pool, msg);
        return NULL;
    }
    memcpy(msg->data, fresh->data, msg->len);
    return fs_msg_admit(engine, msg);
}

/* Stores a send-to-self payload: packed now, so the sender can complete. */
fs_msg_t *fs_msg_store_packed(fs_engine_t *engine, const fs_msg_t *fresh,
                              const fs_buf_t *buf)
{
    fs_msg_t *msg = fs_msg_clone(engine, fresh);

    if ((msg == NULL) || (msg->len == 0)) {
        return msg;
    }
    if (fs_msg_alloc_payload(engine, msg, msg->len) != FS_OK) {
        fs_mpool_put(&engine->msg_pool, msg);
        return NULL;
    }
    if (fs_msg_admit(engine, msg) == NULL) {
        return NULL;
    }
    fs_buf_pack(&engine->host->dt, buf, 0, msg->data, msg->len);
    return msg;
}

static void fs_msg_free_payload(fs_engine_t *engine, fs_msg_t *msg)
{
    if (msg->store == FS_MSG_STORE_POOL) {
        fs_mpool_put(&engine->copy_pools[msg->copy_class], msg->data);
    } else if (msg->store == FS_MSG_STORE_MALLOC) {
        free(msg->data);
    }
}

void fs_msg_free(fs_engine_t *engine, fs_msg_t *msg)
{
    if (msg->is_stored) {
        engine->unexpected_bytes -= fs_msg_cost(msg);
    }
    fs_msg_free_payload(engine, msg);
    /* a descriptor not handed to recv_data is still ours to release */
    if (msg->desc != NULL) {
        fs_engine_release_desc(engine, msg->desc);
    }
    fs_mpool_put(&engine->msg_pool, msg);
}
