/* Control messages and the orderly departure at MPI_Finalize.
 *
 * Leaving is not failing: before closing its endpoints a process sends every
 * peer a BYE carrying how many matching messages it sent that peer.  The peer
 * marks it LEFT once it has taken that many (a large message sent just before
 * the BYE can complete reassembly after it), and from then on ignores
 * transport errors from it instead of reporting a failure. */
#include "proto/engine_int.h"

#include <time.h>

static fs_ep_t *fs_engine_find_ep(fs_engine_t *engine, uint64_t id)
{
    fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if ((ep->id == id) && !ep->is_self) {
            return ep;
        }
    }
    return NULL;
}

void fs_ep_leaving_check(fs_engine_t *engine, fs_ep_t *ep)
{
    if (ep->rx_msgs >= ep->bye_expect) {
        fs_peer_left(engine, ep);
    }
}

fs_status_t fs_rx_ctrl(fs_engine_t *engine, const fs_hdr_ctrl_t *hdr)
{
    fs_ep_t *ep = fs_engine_find_ep(engine, hdr->sender);

    if (ep == NULL) {
        FS_WARN("control message %u from unknown process %#llx", hdr->type,
                (unsigned long long)hdr->sender);
        return FS_ERR_PROTO;
    }
    switch (hdr->type) {
    case FS_CTRL_BYE:
        ep->bye_expect = hdr->arg;
        if (ep->rx_msgs >= ep->bye_expect) {
            fs_peer_left(engine, ep);
        } else {
            fs_ep_transition(ep, FS_EP_LEAVING);
        }
        return FS_OK;
    default:
        FS_WARN("unknown control message %u from %#llx", hdr->type,
                (unsigned long long)hdr->sender);
        return FS_ERR_PROTO;
    }
}

static void fs_ctrl_op_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op;
    (void)status;   /* a BYE or close to a dead peer may fail: nothing to do */
    (void)length;
}

static double fs_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int fs_engine_leave_pending(const fs_engine_t *engine)
{
    const fs_list_t *e;

    for (e = engine->eps.next; e != &engine->eps; e = e->next) {
        const fs_ep_t *ep = fs_container_of(e, fs_ep_t, elem);
        if (ep->bye_op.busy || ep->close_op.busy) {
            return 1;
        }
    }
    return 0;
}

static void fs_ep_say_bye(fs_engine_t *engine, fs_ep_t *ep)
{
    fs_buf_t empty = {NULL, 0, NULL};

    ep->bye_hdr.type   = FS_CTRL_BYE;
    ep->bye_hdr.sender = engine->my_id;
    ep->bye_hdr.arg    = ep->tx_msgs;
    ep->bye_op.cb      = fs_ctrl_op_done;
    (void)engine->tl_ops->am_send(engine->tl, ep->tl_ep, FS_AM_CTRL, &ep->bye_hdr,
                                  sizeof(ep->bye_hdr), &empty, 0, &ep->bye_op);
}

void fs_engine_leave(fs_engine_t *engine, fs_ep_t *const *eps, size_t count)
{
    double deadline = fs_now() + engine->params->finalize_timeout_ms * 1e-3;
    size_t i;

    for (i = 0; i < count; ++i) {
        if (!eps[i]->is_self && fs_ep_is_usable(eps[i])) {
            fs_ep_say_bye(engine, eps[i]);
        }
    }
    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];
        if (ep->tl_ep != NULL) {
            ep->close_op.cb = fs_ctrl_op_done;
            engine->tl_ops->ep_close(engine->tl, ep->tl_ep,
                                     !fs_ep_is_usable(ep), &ep->close_op);
            ep->tl_ep = NULL;
        }
        fs_ep_transition(ep, FS_EP_CLOSED);
    }
    while (fs_engine_leave_pending(engine) && (fs_now() < deadline)) {
        fs_engine_progress(engine);
    }
    if (fs_engine_leave_pending(engine)) {
        FS_WARN("finalize: endpoints still closing after %d ms; giving up on them",
                engine->params->finalize_timeout_ms);
    }
}
