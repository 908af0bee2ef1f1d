/* A fake transport for engine tests: engines in one process exchange active
 * messages through in-memory inboxes.  Tests can reorder an inbox, fail an
 * endpoint, or check that nothing was allocated.  Eager sends complete at
 * once; rendezvous sends complete when the receiver fetches (or drops) the
 * payload, as in UCX. */
#ifndef FS_TEST_FAKE_TL_H
#define FS_TEST_FAKE_TL_H

#include "transport/tl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_RNDV_THRESH 4096
#define FAKE_MAX_MSGS    4096

typedef struct fake_msg {
    unsigned          am_id;
    uint8_t           hdr[32];
    size_t            hdr_len;
    uint8_t          *data;      /* eager copy, or the sender's contiguous data */
    size_t            len;
    int               rndv;
    int               in_upcall;  /* freed by fake_progress, not by the engine */
    int               released;   /* the engine released it inside its upcall */
    fs_tl_op_t       *sender_op;
    struct fs_tl     *sender_tl;
} fake_msg_t;

struct fs_tl {
    fs_tl_upcalls_t   up;
    void             *up_arg;
    const fs_dt_ops_t *dt;
    fake_msg_t       *inbox[FAKE_MAX_MSGS];
    int               ninbox;
    int               reverse_next;   /* deliver the next N inbox messages reversed */
    int               sent;
    int               violations;     /* breaches of UCX's descriptor contract */
    struct fs_tl     *self;           /* the address: a pointer to this */
};

struct fs_tl_ep {
    struct fs_tl     *self_tl;
    struct fs_tl     *remote;
    void             *user;
};

static fake_msg_t *fake_msg_new(const void *hdr, size_t hdr_len, size_t len)
{
    fake_msg_t *m = calloc(1, sizeof(*m));

    memcpy(m->hdr, hdr, hdr_len);
    m->hdr_len = hdr_len;
    m->len     = len;
    return m;
}

static fs_status_t fake_init(const fs_tl_config_t *cfg, const fs_tl_upcalls_t *up,
                             void *arg, fs_tl_t **tl_p)
{
    fs_tl_t *tl = calloc(1, sizeof(*tl));

    tl->up     = *up;
    tl->up_arg = arg;
    tl->dt     = cfg->dt_ops;
    *tl_p      = tl;
    return FS_OK;
}

static void fake_fini(fs_tl_t *tl)
{
    int i;

    for (i = 0; i < tl->ninbox; ++i) {
        if (!tl->inbox[i]->rndv) {
            free(tl->inbox[i]->data);
        }
        free(tl->inbox[i]);
    }
    free(tl);
}

static fs_status_t fake_address(fs_tl_t *tl, const void **addr_p, size_t *len_p)
{
    tl->self = tl;
    *addr_p  = &tl->self;
    *len_p   = sizeof(fs_tl_t *);
    return FS_OK;
}

static fs_status_t fake_ep_create(fs_tl_t *tl, const void *addr, size_t len,
                                  void *user, fs_tl_ep_t **ep_p)
{
    fs_tl_ep_t *ep = calloc(1, sizeof(*ep));

    (void)len;
    ep->self_tl = tl;
    ep->remote  = *(fs_tl_t *const *)addr;
    ep->user    = user;
    *ep_p       = ep;
    return FS_OK;
}

static fs_status_t fake_ep_close(fs_tl_t *tl, fs_tl_ep_t *ep, int force, fs_tl_op_t *op)
{
    (void)tl;
    (void)force;
    (void)op;
    free(ep);
    return FS_OK;
}

static fs_status_t fake_am_send(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id,
                                const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                                unsigned flags, fs_tl_op_t *op)
{
    fake_msg_t *m;

    if ((flags & FS_TL_SEND_IMM) && (buf->len > FAKE_RNDV_THRESH)) {
        return FS_ERR_AGAIN;   /* a rendezvous cannot complete at once */
    }
    m = fake_msg_new(hdr, hdr_len, buf->len);
    m->am_id     = am_id;
    m->sender_tl = tl;
    m->rndv      = (flags & FS_TL_SEND_RNDV) || (buf->len > FAKE_RNDV_THRESH);
    ++tl->sent;
    if (m->rndv) {
        m->data      = buf->ptr;   /* tests use contiguous send buffers */
        m->sender_op = op;
        op->busy     = 1;
        op->handle   = m;
    } else {
        m->data = malloc(buf->len ? buf->len : 1);
        fs_buf_pack(tl->dt, buf, 0, m->data, buf->len);
    }
    ep->remote->inbox[ep->remote->ninbox++] = m;
    return m->rndv ? FS_INPROGRESS : FS_OK;
}

/* Completes the sender of a rendezvous message (once). */
static void fake_rndv_complete(fake_msg_t *m, fs_status_t status)
{
    fs_tl_op_t *op = m->sender_op;

    m->sender_op = NULL;
    if (op != NULL) {
        op->busy   = 0;
        op->handle = NULL;
        op->cb(op, status, m->len);
    }
}

static void fake_msg_free(fake_msg_t *m)
{
    if (!m->rndv) {
        free(m->data);
    }
    free(m);
}

static fs_status_t fake_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                  size_t msg_len, fs_tl_op_t *op)
{
    fake_msg_t *m = desc;

    (void)op;
    fs_buf_unpack(tl->dt, buf, 0, m->data, msg_len);
    fake_rndv_complete(m, FS_OK);
    if (!m->in_upcall) {
        fake_msg_free(m);
    }
    return FS_OK;
}

/* A dropped rendezvous still completes its sender, as UCX's ATS does.
 * Inside the message's own upcall, UCX (1.13) would free the descriptor and
 * acknowledge the sender once more when the upcall returns: as the transport
 * contract says (tl.h), that release may only be recorded. */
static void fake_release(fs_tl_t *tl, void *desc)
{
    fake_msg_t *m = desc;

    if (m->in_upcall) {
        m->released = 1;
        return;
    }
    (void)tl;
    fake_rndv_complete(m, FS_OK);
    fake_msg_free(m);
}

static void fake_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    (void)tl;
    (void)op;
}

/* Delivers everything in the inbox, in order or reversed for a while. */
static unsigned fake_progress(fs_tl_t *tl)
{
    int n = tl->ninbox, i;
    fake_msg_t *batch[FAKE_MAX_MSGS];

    memcpy(batch, tl->inbox, n * sizeof(batch[0]));
    tl->ninbox = 0;
    for (i = 0; i < n; ++i) {
        int idx = (tl->reverse_next > 0) ? n - 1 - i : i;
        fake_msg_t *m = batch[idx];
        fs_tl_rx_t rx = {.desc = m, .flags = m->rndv ? FS_TL_RX_RNDV : 0};
        fs_status_t st;

        m->in_upcall = 1;
        st = tl->up.am_recv(tl->up_arg, m->am_id, m->hdr, m->hdr_len,
                            m->rndv ? (void *)m : (void *)m->data, m->len, &rx);
        m->in_upcall = 0;
        if (st == FS_INPROGRESS) {
            if (m->released) {
                ++tl->violations;     /* released, yet said it keeps it */
            }
            continue;                 /* kept: recv_data or release frees it */
        }
        fake_rndv_complete(m, FS_OK); /* an RTS the engine ignored */
        fake_msg_free(m);
    }
    if (tl->reverse_next > 0) {
        tl->reverse_next -= n;
    }
    return (unsigned)n;
}

static inline void fake_fail_ep(fs_tl_ep_t *ep, int32_t ucs_code)
{
    const fs_fault_row_t *row = fs_fault_classify(FS_FAULT_SRC_UCX, ucs_code, 0,
                                                  FS_FAULT_CTX_EP_ERROR);
    ep->self_tl->up.ep_error(ep->self_tl->up_arg, ep->user, row);
}

static const fs_tl_ops_t fake_tl_ops = {
    .name      = "fake",
    .init      = fake_init,
    .fini      = fake_fini,
    .address   = fake_address,
    .ep_create = fake_ep_create,
    .ep_close  = fake_ep_close,
    .am_send   = fake_am_send,
    .recv_data = fake_recv_data,
    .release   = fake_release,
    .cancel    = fake_cancel,
    .progress  = fake_progress,
};

#endif
