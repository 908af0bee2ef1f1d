/* A fake transport for engine tests: engines in one process exchange active
 * messages through in-memory inboxes.  Tests can reorder an inbox, fail an
 * endpoint, fail the next fetch, or check that nothing was allocated.  Eager
 * sends complete at once; rendezvous sends complete when the receiver
 * fetches (or drops) the payload, as in UCX.
 *
 * It holds the engine to UCX's descriptor contract (tl.h), counting every
 * breach in tl->violations (teardown checks it):
 *   - a fetch (recv_data) is asynchronous: it completes, and writes the
 *     receive buffer, in a later progress call, as UCX's does;
 *   - cancel is real: a fetch in flight completes with FS_ERR_CANCELED at
 *     the next progress, without writing;
 *   - only a descriptor the engine holds (its upcall returned FS_INPROGRESS)
 *     may be fetched or released, once; inside its own upcall a release is
 *     only recorded, and the upcall must then not claim to keep it;
 *   - what is still held when the transport closes is a leak (fake_leaks). */
#ifndef FS_TEST_FAKE_TL_H
#define FS_TEST_FAKE_TL_H

#include "transport/tl.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_RNDV_THRESH 4096
#define FAKE_RNDV_THRESH_FAST 16384   /* with FS_TL_SEND_FAST, as UCX's local
                                         threshold is above its remote one */
#define FAKE_IMM_MAX     100   /* an immediate send above it is refused, as a
                                  UCX one above the short protocol is */
#define FAKE_MAX_MSGS    4096
#define FAKE_MAX_FETCH   256

static int fake_leaks;       /* descriptors still held at fini, all transports */

typedef struct fake_msg {
    unsigned          am_id;
    uint8_t           hdr[32];
    size_t            hdr_len;
    uint8_t          *data;      /* eager copy, or the sender's contiguous data */
    size_t            len;
    int               rndv;
    unsigned          flags;      /* the send's FS_TL_SEND_* */
    int               in_upcall;  /* freed by fake_progress, not by the engine */
    int               released;   /* the engine released it inside its upcall */
    int               fetching;   /* a fetch of it is in flight */
    fs_tl_op_t       *sender_op;
    struct fs_tl     *sender_tl;
} fake_msg_t;

typedef struct fake_fetch {
    fake_msg_t       *m;
    fs_buf_t          buf;
    size_t            msg_len;
    fs_tl_op_t       *op;
    int               cancelled;
    fs_status_t       status;     /* how it ends if not cancelled */
} fake_fetch_t;

struct fs_tl {
    fs_tl_upcalls_t   up;
    void             *up_arg;
    const fs_dt_ops_t *dt;
    fake_msg_t       *inbox[FAKE_MAX_MSGS];
    int               ninbox;
    int               reverse_next;   /* deliver the next N inbox messages reversed */
    int               sent;
    int               imm_refusals;   /* immediate sends refused */
    int               violations;     /* breaches of UCX's descriptor contract */
    fake_msg_t       *held[FAKE_MAX_MSGS];   /* descriptors the engine keeps */
    int               nheld;
    fake_fetch_t      fetch[FAKE_MAX_FETCH]; /* in flight */
    int               nfetch;
    fs_status_t       fail_next_fetch;       /* FS_OK, or how the next one ends */
    fs_status_t       fail_next_send;        /* FS_OK, or what the next am_send
                                                returns at once, no upcall */
    int               imm_in_flight;  /* break FS_TL_SEND_IMM's promise: the
                                         next immediate send stays in flight
                                         until received (UCX returning a
                                         request despite FORCE_IMM_CMPL) */
    int               rndv_whole;     /* desc_whole: every rendezvous payload
                                         counts as here (pushed, as UCX's
                                         fragments), else none */
    int               drains;         /* drain calls */
    struct fs_tl     *self;           /* the address: a pointer to this */
    /* connection setup (fake_wired_tl_ops): flushes end at the next
     * progress; the first connects_to_fail of them fail as a connect does */
    int               connects_to_fail;
    int               reconnects;
    struct fs_tl_ep  *flushing[FAKE_MAX_FETCH];
    fs_tl_op_t       *flush_op[FAKE_MAX_FETCH];
    int               nflush;
    /* nothing comes back from this transport (a partition, a dead host): a
     * flushing close of a link to it never ends; fini drops it, as UCX's
     * worker destruction does */
    int               unreachable;
    struct fs_tl_ep  *closing[FAKE_MAX_FETCH];
    int               nclosing;
};

struct fs_tl_ep {
    struct fs_tl     *self_tl;
    struct fs_tl     *remote;
    void             *user;
    int               broken;         /* its connect failed */
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

static void fake_msg_free(fake_msg_t *m)
{
    if (!m->rndv) {
        free(m->data);
    }
    free(m);
}

/* Fetches in flight end without a callback, as UCX's worker destruction
 * drops its requests; held descriptors are leaks. */
static void fake_fini(fs_tl_t *tl)
{
    int i;

    for (i = 0; i < tl->ninbox; ++i) {
        fake_msg_free(tl->inbox[i]);
    }
    for (i = 0; i < tl->nfetch; ++i) {
        fake_msg_free(tl->fetch[i].m);
    }
    for (i = 0; i < tl->nclosing; ++i) {
        free(tl->closing[i]);
    }
    fake_leaks += tl->nheld;
    for (i = 0; i < tl->nheld; ++i) {
        fake_msg_free(tl->held[i]);
    }
    free(tl);
}

/* Takes m off the held list: 1 if the engine held it. */
static int fake_held_take(fs_tl_t *tl, fake_msg_t *m)
{
    int i;

    for (i = 0; i < tl->nheld; ++i) {
        if (tl->held[i] == m) {
            tl->held[i] = tl->held[--tl->nheld];
            return 1;
        }
    }
    return 0;
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
    if (!force && ep->remote->unreachable && (tl->nclosing < FAKE_MAX_FETCH)) {
        tl->closing[tl->nclosing++] = ep;
        op->busy = 1;
        return FS_INPROGRESS;
    }
    free(ep);
    return FS_OK;
}

static fs_status_t fake_am_send(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id,
                                const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                                unsigned flags, fs_tl_op_t *op)
{
    fake_msg_t *m;

    if (tl->fail_next_send != FS_OK) {
        fs_status_t st = tl->fail_next_send;

        tl->fail_next_send = FS_OK;
        return st;          /* e.g. OFI sockets: a send to a dead peer refused */
    }
    if ((flags & FS_TL_SEND_IMM) && (buf->len > FAKE_IMM_MAX)) {
        ++tl->imm_refusals;    /* not short; a rendezvous never completes at once */
        return FS_ERR_AGAIN;
    }
    m = fake_msg_new(hdr, hdr_len, buf->len);
    m->am_id     = am_id;
    m->flags     = flags;
    m->sender_tl = tl;
    m->rndv      = (flags & FS_TL_SEND_RNDV) ||
                   (buf->len > ((flags & FS_TL_SEND_FAST) ? FAKE_RNDV_THRESH_FAST :
                                                            FAKE_RNDV_THRESH));
    if ((flags & FS_TL_SEND_IMM) && tl->imm_in_flight) {
        tl->imm_in_flight = 0;
        m->rndv           = 1;
    }
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

/* Starts a fetch; it completes in a later fake_progress. */
static fs_status_t fake_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                  size_t msg_len, fs_tl_op_t *op)
{
    fake_msg_t *m = desc;
    fake_fetch_t *f;

    if ((!m->in_upcall && !fake_held_take(tl, m)) || m->fetching ||
        (tl->nfetch == FAKE_MAX_FETCH)) {
        ++tl->violations;     /* not the engine's to fetch (again) */
        return FS_ERR_LOCAL;
    }
    m->fetching  = 1;
    f            = &tl->fetch[tl->nfetch++];
    f->m         = m;
    f->buf       = *buf;
    f->msg_len   = msg_len;
    f->op        = op;
    f->cancelled = 0;
    f->status    = tl->fail_next_fetch;
    tl->fail_next_fetch = FS_OK;
    op->busy     = 1;
    op->handle   = m;
    return FS_INPROGRESS;
}

/* Completes the fetches started before this progress call. */
static unsigned fake_fetch_progress(fs_tl_t *tl)
{
    fake_fetch_t batch[FAKE_MAX_FETCH];
    int n = tl->nfetch, i;

    memcpy(batch, tl->fetch, n * sizeof(batch[0]));
    tl->nfetch = 0;
    for (i = 0; i < n; ++i) {
        fake_fetch_t *f    = &batch[i];
        fs_status_t status = f->cancelled ? FS_ERR_CANCELED : f->status;

        if (status == FS_OK) {
            fs_buf_unpack(tl->dt, &f->buf, 0, f->m->data, f->msg_len);
        }
        fake_rndv_complete(f->m, FS_OK);
        fake_msg_free(f->m);
        f->op->busy   = 0;
        f->op->handle = NULL;
        f->op->cb(f->op, status, (status == FS_OK) ? f->msg_len : 0);
    }
    return (unsigned)n;
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
    if (!fake_held_take(tl, m)) {
        ++tl->violations;     /* released twice, or never held */
        return;
    }
    fake_rndv_complete(m, FS_OK);
    fake_msg_free(m);
}

/* A fetch in flight ends, unwritten, at the next progress; sends cannot be
 * cancelled (as UCX's active-message sends). */
static void fake_cancel(fs_tl_t *tl, fs_tl_op_t *op)
{
    int i;

    for (i = 0; i < tl->nfetch; ++i) {
        if (tl->fetch[i].op == op) {
            tl->fetch[i].cancelled = 1;
        }
    }
}

static int fake_desc_whole(fs_tl_t *tl, const void *desc)
{
    (void)desc;
    return tl->rndv_whole;
}

/* Delivers everything in the inbox, in order or reversed for a while. */
static unsigned fake_progress(fs_tl_t *tl)
{
    unsigned fetched = fake_fetch_progress(tl);
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
            if (m->released || m->fetching) {
                ++tl->violations;     /* released or fetched, yet kept */
                continue;
            }
            tl->held[tl->nheld++] = m;  /* recv_data or release frees it */
            continue;
        }
        if (m->fetching) {
            continue;                 /* the fetch started in the upcall has it */
        }
        fake_rndv_complete(m, FS_OK); /* an RTS the engine ignored */
        fake_msg_free(m);
    }
    if (tl->reverse_next > 0) {
        tl->reverse_next -= n;
    }
    return (unsigned)n + fetched;
}

/* Like UCX's short lane: what sits in the inbox is delivered. */
static void fake_drain(fs_tl_t *tl)
{
    ++tl->drains;
    (void)fake_progress(tl);
}

static inline void fake_fail_ep(fs_tl_ep_t *ep, int32_t ucs_code)
{
    const fs_fault_row_t *row = fs_fault_classify(FS_FAULT_SRC_UCX, ucs_code, 0,
                                                  FS_FAULT_CTX_EP_ERROR);
    ep->self_tl->up.ep_error(ep->self_tl->up_arg, ep->user, row);
}

/* ---- connection setup, as UCX's over TCP ---------------------------------- */

static fs_status_t fake_ep_flush(fs_tl_t *tl, fs_tl_ep_t *ep, fs_tl_op_t *op)
{
    if (ep->broken) {
        return FS_ERR_CANCELED;
    }
    if (tl->nflush == FAKE_MAX_FETCH) {
        ++tl->violations;
        return FS_ERR_LOCAL;
    }
    tl->flushing[tl->nflush] = ep;
    tl->flush_op[tl->nflush++] = op;
    op->busy = 1;
    return FS_INPROGRESS;
}

/* A failed connect, as UCX 1.13's TCP reports one (refused or unreachable
 * alike): the link's error (ENDPOINT_TIMEOUT), then the flush's. */
static unsigned fake_flush_progress(fs_tl_t *tl)
{
    int n = tl->nflush, i;

    tl->nflush = 0;
    for (i = 0; i < n; ++i) {
        fs_tl_ep_t *ep = tl->flushing[i];
        fs_tl_op_t *op = tl->flush_op[i];
        fs_status_t st = FS_OK;

        if (tl->connects_to_fail > 0) {
            --tl->connects_to_fail;
            ep->broken = 1;
            fake_fail_ep(ep, -80);
            st = FS_ERR_PEER_FAILED;
        }
        op->busy = 0;
        op->cb(op, st, 0);
    }
    return (unsigned)n;
}

static unsigned fake_wired_progress(fs_tl_t *tl)
{
    return fake_flush_progress(tl) + fake_progress(tl);
}

static fs_status_t fake_ep_reconnect(fs_tl_t *tl, fs_tl_ep_t *ep)
{
    ++tl->reconnects;
    ep->broken = 0;
    return FS_OK;
}

static const fs_tl_ops_t fake_wired_tl_ops = {
    .name         = "fake-wired",
    .init         = fake_init,
    .fini         = fake_fini,
    .address      = fake_address,
    .ep_create    = fake_ep_create,
    .ep_close     = fake_ep_close,
    .ep_flush     = fake_ep_flush,
    .ep_reconnect = fake_ep_reconnect,
    .am_send      = fake_am_send,
    .recv_data    = fake_recv_data,
    .release      = fake_release,
    .desc_whole   = fake_desc_whole,
    .cancel       = fake_cancel,
    .progress     = fake_wired_progress,
};

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
    .desc_whole = fake_desc_whole,
    .cancel    = fake_cancel,
    .progress  = fake_progress,
    .drain     = fake_drain,
};

#endif
