/* UCX transport: medium messages as pushed fragments.
 *
 *   sender                                   receiver
 *   FIRST(hdr{id, n, total}, engine hdr,  -> engine told: a descriptor
 *         data[0, piece))                     (FS_TL_RX_RNDV | PERSISTENT)
 *   NEXT(hdr{id, n, offset}, data) x k    -> into the receive buffer if the
 *                                             engine fetched (recv_data),
 *                                             else held until it does
 *   done when UCX took every fragment        done when `total` bytes arrived
 *
 * Why: above one segment (8 KiB) UCP's active messages offer either its
 * rendezvous (over shared memory a process_vm_readv and a round trip of
 * control messages: 3-4x pml ucx's tag eager at 16-64 KiB) or its
 * multi-fragment eager, which the receiver reassembles in a buffer it
 * mallocs per message and failstop then copies again.  Fragments that are
 * each UCX's single-fragment eager land, once the engine has matched the
 * message, straight in the user's buffer: one copy at each end, as pml
 * ucx's tag eager.  The send completes when UCX has taken the fragments.
 *
 * One UCP endpoint delivers active messages in order, so a message's
 * fragments arrive in sequence; the offset is checked, not relied on for
 * reordering.  A fragment the receiver cannot place (unknown message,
 * wrong offset) is dropped and counted, and a receive waiting for that
 * message fails: never a hang on bad input.  A sender that dies midway
 * leaves its message incomplete: the engine, told of the death, cancels
 * the receive (fs_req_abort) or releases the descriptor. */
#include "transport/ucx_int.h"
#include "common/fs_log.h"
#include "common/fs_rand.h"

#include <string.h>

typedef enum {
    FS_UCX_FRAG_HELD,       /* the engine keeps the descriptor: hold pieces */
    FS_UCX_FRAG_FETCH,      /* data goes into buf; op completes */
    FS_UCX_FRAG_DROPPED     /* nobody wants it: discard what still comes */
} fs_ucx_frag_state_t;

enum { FS_UCX_FRAG_RX = 1, FS_UCX_FRAG_TX = 2 };

typedef struct fs_ucx_frag_piece {
    void      *data;
    uint32_t   offset;
    uint32_t   len;
} fs_ucx_frag_piece_t;

struct fs_ucx_frag_rx {
    uint8_t              kind;
    uint8_t              state;
    fs_list_t            elem;       /* hash bucket, or frag.rx_kept */
    uint64_t             sender;
    uint32_t             msg;
    uint32_t             total;
    uint32_t             arrived;
    unsigned             num_pieces;
    const fs_buf_t      *buf;        /* FETCH */
    fs_tl_op_t          *op;         /* FETCH, once recv_data returned */
    fs_ucx_frag_piece_t  pieces[FS_UCX_FRAG_PIECES];
};

struct fs_ucx_frag_tx {
    uint8_t              kind;
    fs_tl_op_t          *op;
    fs_status_t          status;
    unsigned             pending;    /* UCX requests + 1 while sending */
    unsigned             n;          /* fragments: reqs[0, n) are valid */
    fs_list_t            elem;       /* frag.tx_live while in flight */
    void                *reqs[FS_UCX_FRAG_PIECES];
    fs_ucx_frag_hdr_t    next[FS_UCX_FRAG_PIECES];
    struct {
        fs_ucx_frag_hdr_t  frag;
        uint8_t            engine[FS_UCX_FRAG_HDR_MAX];
    } first;
};

static void *fs_ucx_frag_tag(void *state)
{
    return (void *)((uintptr_t)state | ((uintptr_t)1 << 63));
}

static void *fs_ucx_frag_untag(const void *tagged)
{
    return (void *)((uintptr_t)tagged & ~((uintptr_t)1 << 63));
}

static fs_list_t *fs_ucx_frag_bucket(fs_tl_t *tl, uint64_t sender, uint32_t msg)
{
    uint64_t h = (sender ^ msg) * 0x9E3779B97F4A7C15ull;

    return &tl->frag.rx_hash[(h >> 32) & (FS_UCX_FRAG_BUCKETS - 1)];
}

static fs_ucx_frag_rx_t *fs_ucx_frag_find(fs_tl_t *tl, uint64_t sender, uint32_t msg)
{
    fs_list_t *bucket = fs_ucx_frag_bucket(tl, sender, msg), *e;

    for (e = bucket->next; e != bucket; e = e->next) {
        fs_ucx_frag_rx_t *rx = fs_container_of(e, fs_ucx_frag_rx_t, elem);
        if ((rx->sender == sender) && (rx->msg == msg)) {
            return rx;
        }
    }
    return NULL;
}

static void fs_ucx_frag_free_pieces(fs_tl_t *tl, fs_ucx_frag_rx_t *rx)
{
    unsigned i;

    for (i = 0; i < rx->num_pieces; ++i) {
        ucp_am_data_release(tl->worker, rx->pieces[i].data);
    }
    rx->num_pieces = 0;
}

static void fs_ucx_frag_rx_free(fs_tl_t *tl, fs_ucx_frag_rx_t *rx)
{
    fs_ucx_frag_free_pieces(tl, rx);
    fs_list_remove(&rx->elem);
    fs_mpool_put(&tl->frag.rx_pool, rx);
}

/* Ends a fetch: the op's callback, and the state goes. */
static void fs_ucx_frag_rx_end(fs_tl_t *tl, fs_ucx_frag_rx_t *rx, fs_status_t status)
{
    fs_tl_op_t *op = rx->op;
    size_t len     = rx->total;

    fs_ucx_frag_rx_free(tl, rx);
    if (op != NULL) {
        op->busy   = 0;
        op->handle = NULL;
        op->cb(op, status, len);
    }
}

/* A fragment that fits nothing known: counted, the first one logged. */
static void fs_ucx_frag_drop(fs_tl_t *tl, const char *why)
{
    if (tl->frag.dropped++ == 0) {
        FS_WARN("UCX transport: dropped a message fragment (%s); further "
                "ones are only counted", why);
    }
}

/* Keeps a piece for a fetch to come: UCX's descriptor, which the handlers'
 * UCP_AM_FLAG_PERSISTENT_DATA makes every piece come with. */
static void fs_ucx_frag_hold(fs_ucx_frag_rx_t *rx, void *data, uint32_t offset,
                             uint32_t len)
{
    fs_ucx_frag_piece_t *p = &rx->pieces[rx->num_pieces++];

    p->data   = data;
    p->offset = offset;
    p->len    = len;
}

/* One piece of rx arrived.  Returns UCS_INPROGRESS if UCX's data is kept. */
static ucs_status_t fs_ucx_frag_piece_in(fs_tl_t *tl, fs_ucx_frag_rx_t *rx, void *data,
                                         uint32_t offset, size_t len,
                                         const ucp_am_recv_param_t *param)
{
    ucs_status_t ret = UCS_OK;

    if ((offset != rx->arrived) || (len > rx->total - rx->arrived) ||
        (rx->num_pieces == FS_UCX_FRAG_PIECES)) {
        fs_ucx_frag_drop(tl, "out of sequence");
        if (rx->state == FS_UCX_FRAG_FETCH) {
            fs_ucx_frag_rx_end(tl, rx, FS_ERR_LOCAL);
        } else {
            rx->state = FS_UCX_FRAG_DROPPED;    /* its fetch will fail */
        }
        return UCS_OK;
    }
    rx->arrived += (uint32_t)len;
    if (rx->state == FS_UCX_FRAG_FETCH) {
        fs_buf_unpack(tl->dt_ops, rx->buf, offset, data, len);
    } else if ((rx->state == FS_UCX_FRAG_HELD) &&
               (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_DATA)) {
        fs_ucx_frag_hold(rx, data, offset, (uint32_t)len);
        ret = UCS_INPROGRESS;
    } else if (rx->state == FS_UCX_FRAG_HELD) {
        fs_ucx_frag_drop(tl, "UCX did not keep its data");
        rx->state = FS_UCX_FRAG_DROPPED;    /* its fetch will fail */
    }
    if (rx->arrived < rx->total) {
        return ret;
    }
    if (rx->state == FS_UCX_FRAG_FETCH) {
        fs_ucx_frag_rx_end(tl, rx, FS_OK);
    } else if (rx->state == FS_UCX_FRAG_DROPPED) {
        fs_ucx_frag_rx_free(tl, rx);
    } else {
        fs_list_remove(&rx->elem);      /* complete: no fragment to find it */
        fs_list_push_tail(&tl->frag.rx_kept, &rx->elem);
    }
    return ret;
}

static ucs_status_t fs_ucx_frag_first_cb(void *arg, const void *header, size_t header_length,
                                         void *data, size_t length,
                                         const ucp_am_recv_param_t *param)
{
    fs_tl_t *tl = arg;
    fs_ucx_frag_hdr_t fh;
    fs_ucx_frag_rx_t *rx;
    fs_tl_rx_t info;
    fs_status_t status;

    if (header_length <= sizeof(fh)) {
        fs_ucx_frag_drop(tl, "malformed first fragment");
        return UCS_OK;
    }
    memcpy(&fh, header, sizeof(fh));    /* UCX places it unaligned */
    if ((fh.word <= length) || (fh.word > (size_t)FS_UCX_FRAG_PIECE * FS_UCX_FRAG_PIECES)) {
        fs_ucx_frag_drop(tl, "malformed first fragment");
        return UCS_OK;
    }
    rx = fs_mpool_get(&tl->frag.rx_pool);
    if (rx == NULL) {
        FS_ERROR("UCX transport: no memory for an incoming message of %u bytes: "
                 "dropped", fh.word);
        fs_ucx_frag_drop(tl, "no memory");
        return UCS_OK;
    }
    rx->kind       = FS_UCX_FRAG_RX;
    rx->state      = FS_UCX_FRAG_HELD;
    rx->sender     = fh.sender;
    rx->msg        = fh.msg;
    rx->total      = fh.word;
    rx->arrived    = 0;
    rx->num_pieces = 0;
    rx->buf        = NULL;
    rx->op         = NULL;
    fs_list_push_tail(fs_ucx_frag_bucket(tl, rx->sender, rx->msg), &rx->elem);
    info.desc  = fs_ucx_frag_tag(rx);
    info.flags = FS_TL_RX_RNDV | FS_TL_RX_PERSISTENT;
    status = tl->up.am_recv(tl->up_arg, FS_AM_MATCH, (const char *)header + sizeof(fh),
                            header_length - sizeof(fh), NULL, rx->total, &info);
    if ((status != FS_INPROGRESS) && (rx->state == FS_UCX_FRAG_HELD)) {
        rx->state = FS_UCX_FRAG_DROPPED;    /* the engine did not keep it */
    }
    return fs_ucx_frag_piece_in(tl, rx, data, 0, length, param);
}

static ucs_status_t fs_ucx_frag_next_cb(void *arg, const void *header, size_t header_length,
                                        void *data, size_t length,
                                        const ucp_am_recv_param_t *param)
{
    fs_tl_t *tl = arg;
    fs_ucx_frag_hdr_t fh;
    fs_ucx_frag_rx_t *rx;

    if (header_length != sizeof(fh)) {
        fs_ucx_frag_drop(tl, "malformed fragment");
        return UCS_OK;
    }
    memcpy(&fh, header, sizeof(fh));
    rx = fs_ucx_frag_find(tl, fh.sender, fh.msg);
    if (rx == NULL) {
        fs_ucx_frag_drop(tl, "no such message");
        return UCS_OK;
    }
    return fs_ucx_frag_piece_in(tl, rx, data, fh.word, length, param);
}

fs_status_t fs_ucx_frag_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                  fs_tl_op_t *op)
{
    fs_ucx_frag_rx_t *rx = fs_ucx_frag_untag(desc);
    unsigned i;

    if (rx->state != FS_UCX_FRAG_HELD) {
        fs_ucx_frag_rx_free(tl, rx);        /* broken on the way in */
        return FS_ERR_LOCAL;
    }
    rx->state = FS_UCX_FRAG_FETCH;
    rx->buf   = buf;
    for (i = 0; i < rx->num_pieces; ++i) {
        fs_buf_unpack(tl->dt_ops, buf, rx->pieces[i].offset, rx->pieces[i].data,
                      rx->pieces[i].len);
    }
    fs_ucx_frag_free_pieces(tl, rx);
    if (rx->arrived == rx->total) {
        fs_ucx_frag_rx_free(tl, rx);
        return FS_OK;
    }
    rx->op     = op;
    op->busy   = 1;
    op->handle = desc;
    return FS_INPROGRESS;
}

/* Every piece of a message not yet fetched has arrived and is held. */
int fs_ucx_frag_whole(const void *desc)
{
    const fs_ucx_frag_rx_t *rx = fs_ucx_frag_untag(desc);

    return (rx->state == FS_UCX_FRAG_HELD) && (rx->arrived == rx->total);
}

void fs_ucx_frag_release(fs_tl_t *tl, void *desc)
{
    fs_ucx_frag_rx_t *rx = fs_ucx_frag_untag(desc);

    if (rx->arrived == rx->total) {
        fs_ucx_frag_rx_free(tl, rx);
        return;
    }
    fs_ucx_frag_free_pieces(tl, rx);
    rx->state = FS_UCX_FRAG_DROPPED;        /* absorbs the rest, then goes */
}

/* ---- sending ------------------------------------------------------------- */

static void fs_ucx_frag_tx_end(fs_tl_t *tl, fs_ucx_frag_tx_t *tx)
{
    fs_tl_op_t *op     = tx->op;
    fs_status_t status = tx->status;

    fs_list_remove(&tx->elem);
    fs_mpool_put(&tl->frag.tx_pool, tx);
    op->busy   = 0;
    op->handle = NULL;
    op->cb(op, status, 0);
}

static void fs_ucx_frag_tx_cb(void *request, ucs_status_t status, void *user_data)
{
    fs_ucx_req_t *ureq   = request;
    fs_ucx_frag_tx_t *tx = user_data;
    fs_tl_t *tl          = ureq->tl;
    unsigned i;

    if (fs_ucx_req_inline(ureq, status, 0)) {
        return;             /* inside the send call, or abandoned at fini */
    }
    ureq->tl = NULL;
    for (i = 0; i < tx->n; ++i) {
        if (tx->reqs[i] == request) {
            tx->reqs[i] = NULL;
            break;
        }
    }
    ucp_request_free(request);
    if ((status != UCS_OK) && (tx->status == FS_OK)) {
        tx->status = fs_ucx_status(tl, status);
    }
    if (--tx->pending == 0) {
        fs_ucx_frag_tx_end(tl, tx);
    }
}

/* One fragment to UCX; an error ends the message's sending. */
static fs_status_t fs_ucx_frag_put(fs_tl_t *tl, fs_tl_ep_t *tep, fs_ucx_frag_tx_t *tx,
                                   unsigned i, const void *hdr, size_t hdr_len,
                                   const void *data, size_t len)
{
    ucp_request_param_t param;
    ucs_status_ptr_t req;
    fs_status_t st;

    param.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                         UCP_OP_ATTR_FIELD_FLAGS;
    param.cb.send      = fs_ucx_frag_tx_cb;
    param.user_data    = tx;
    param.flags        = UCP_AM_SEND_FLAG_EAGER;
    req = ucp_am_send_nbx(tep->ep, (i == 0) ? FS_UCX_AM_FRAG_FIRST : FS_UCX_AM_FRAG_NEXT,
                          hdr, hdr_len, data, len, &param);
    st = fs_ucx_req_claim(tl, req);
    if (st != FS_INPROGRESS) {
        return st;
    }
    tx->reqs[i] = req;
    ++tx->pending;
    return FS_OK;
}

/* Sends buf in equal fragments of at most FS_UCX_FRAG_PIECE bytes (none so
 * small that UCX would inline it, which a receiver could not hold).  hdr
 * and every fragment's header live in tx until UCX has taken them all. */
fs_status_t fs_ucx_frag_send(fs_tl_t *tl, fs_tl_ep_t *tep, const void *hdr,
                             size_t hdr_len, const fs_buf_t *buf, unsigned flags,
                             fs_tl_op_t *op)
{
    size_t n     = (buf->len + FS_UCX_FRAG_PIECE - 1) / FS_UCX_FRAG_PIECE;
    size_t piece = (buf->len + n - 1) / n, off;
    const char *data = buf->ptr;
    fs_ucx_frag_tx_t *tx;
    fs_status_t status = FS_OK;
    unsigned i;

    if (flags & FS_TL_SEND_IMM) {
        return FS_ERR_AGAIN;    /* several sends cannot promise all or none */
    }
    tx = fs_mpool_get(&tl->frag.tx_pool);
    if (tx == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    memset(tx->reqs, 0, n * sizeof(tx->reqs[0]));
    tx->kind    = FS_UCX_FRAG_TX;
    tx->n       = (unsigned)n;
    tx->op      = op;
    tx->status  = FS_OK;
    tx->pending = 1;
    tx->first.frag.sender = tl->frag.self_id;
    tx->first.frag.msg    = tl->frag.next_msg++;
    tx->first.frag.word   = (uint32_t)buf->len;
    memcpy(tx->first.engine, hdr, hdr_len);
    status = fs_ucx_frag_put(tl, tep, tx, 0, &tx->first, sizeof(tx->first.frag) + hdr_len,
                             data, piece);
    for (i = 1, off = piece; (i < n) && (status == FS_OK); ++i, off += piece) {
        tx->next[i].sender = tx->first.frag.sender;
        tx->next[i].msg    = tx->first.frag.msg;
        tx->next[i].word   = (uint32_t)off;
        status = fs_ucx_frag_put(tl, tep, tx, i, &tx->next[i], sizeof(tx->next[i]),
                                 data + off, (buf->len - off < piece) ? buf->len - off : piece);
    }
    tx->status = status;
    if (--tx->pending == 0) {
        fs_mpool_put(&tl->frag.tx_pool, tx);
        return status;
    }
    fs_list_push_tail(&tl->frag.tx_live, &tx->elem);
    op->busy   = 1;
    op->handle = fs_ucx_frag_tag(tx);
    return FS_INPROGRESS;
}

/* A receive ends without its data (the buffer goes back to its owner at
 * once: nothing is written into it any more); a send asks UCX to drop what
 * it still holds, as for UCX's own sends. */
void fs_ucx_frag_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    void *state          = fs_ucx_frag_untag(op->handle);
    fs_ucx_frag_tx_t *tx = state;
    unsigned i;

    if (*(uint8_t *)state == FS_UCX_FRAG_RX) {
        fs_ucx_frag_rx_t *rx = state;
        rx->op    = NULL;
        rx->state = FS_UCX_FRAG_DROPPED;
        op->busy   = 0;
        op->handle = NULL;
        op->cb(op, FS_ERR_CANCELED, 0);
        return;
    }
    for (i = 0; i < tx->n; ++i) {
        if (tx->reqs[i] != NULL) {
            ucp_request_cancel(tl->worker, tx->reqs[i]);
        }
    }
}

/* ---- setup --------------------------------------------------------------- */

fs_status_t fs_ucx_frag_init(fs_tl_t *tl, size_t min, size_t max)
{
    unsigned i;

    tl->frag.self_id  = fs_rand_id();
    tl->frag.next_msg = 0;
    if (max > (size_t)FS_UCX_FRAG_PIECE * FS_UCX_FRAG_PIECES) {
        FS_WARN("pml_failstop_ucx_frag_max %zu is above its limit: %u used",
                max, FS_UCX_FRAG_PIECE * FS_UCX_FRAG_PIECES);
        max = (size_t)FS_UCX_FRAG_PIECE * FS_UCX_FRAG_PIECES;
    }
    tl->frag.min      = min;
    tl->frag.max      = max;
    for (i = 0; i < FS_UCX_FRAG_BUCKETS; ++i) {
        fs_list_init(&tl->frag.rx_hash[i]);
    }
    fs_list_init(&tl->frag.rx_kept);
    fs_list_init(&tl->frag.tx_live);
    if ((fs_mpool_init(&tl->frag.rx_pool, "ucx-frag-rx", sizeof(fs_ucx_frag_rx_t),
                       16, 0, NULL) != FS_OK) ||
        (fs_mpool_init(&tl->frag.tx_pool, "ucx-frag-tx", sizeof(fs_ucx_frag_tx_t),
                       16, 0, NULL) != FS_OK)) {
        return FS_ERR_NO_MEMORY;
    }
    return FS_OK;
}

static void fs_ucx_frag_drain_list(fs_tl_t *tl, fs_list_t *list)
{
    fs_list_t *e;

    while ((e = list->next) != list) {
        fs_ucx_frag_rx_free(tl, fs_container_of(e, fs_ucx_frag_rx_t, elem));
    }
}

/* Before the worker goes: held descriptors back to UCX, sends still in
 * flight abandoned (their callbacks find no transport, as closes'). */
void fs_ucx_frag_fini(fs_tl_t *tl)
{
    fs_list_t *e;
    unsigned i;

    for (i = 0; i < FS_UCX_FRAG_BUCKETS; ++i) {
        fs_ucx_frag_drain_list(tl, &tl->frag.rx_hash[i]);
    }
    fs_ucx_frag_drain_list(tl, &tl->frag.rx_kept);
    while ((e = fs_list_pop_head(&tl->frag.tx_live)) != NULL) {
        fs_ucx_frag_tx_t *tx = fs_container_of(e, fs_ucx_frag_tx_t, elem);
        for (i = 0; i < tx->n; ++i) {
            if (tx->reqs[i] != NULL) {
                ((fs_ucx_req_t *)tx->reqs[i])->tl = NULL;
                ucp_request_free(tx->reqs[i]);
            }
        }
    }
    fs_mpool_cleanup(&tl->frag.rx_pool);
    fs_mpool_cleanup(&tl->frag.tx_pool);
}

fs_status_t fs_ucx_frag_set_handlers(fs_tl_t *tl)
{
    static const struct {
        unsigned                id;
        ucp_am_recv_callback_t  cb;
    } h[] = {{FS_UCX_AM_FRAG_FIRST, fs_ucx_frag_first_cb},
             {FS_UCX_AM_FRAG_NEXT,  fs_ucx_frag_next_cb}};
    ucp_am_handler_param_t param;
    unsigned i;

    for (i = 0; i < sizeof(h) / sizeof(h[0]); ++i) {
        param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                           UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
        param.id    = h[i].id;
        param.cb    = h[i].cb;
        param.arg   = tl;
        param.flags = UCP_AM_FLAG_WHOLE_MSG | UCP_AM_FLAG_PERSISTENT_DATA;
        if (ucp_worker_set_am_recv_handler(tl->worker, &param) != UCS_OK) {
            return FS_ERR_LOCAL;
        }
    }
    return FS_OK;
}
