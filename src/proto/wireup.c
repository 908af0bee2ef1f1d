/* Connection setup completed in MPI_Init rather than at first contact.
 *
 * UCX 1.13 sets up a TCP endpoint asynchronously: ucp_ep_create connects,
 * and the wire-up message waits in a pending queue for the peer's answer,
 * which often comes only when the peer progresses again -- at the first
 * message between the two.  If the peer dies between its answer and that
 * wire-up message, UCX aborts this process (an assertion in
 * ucp_wireup_ep_pending_purge, wireup_ep.c:241: seen 1 run in 20 of the
 * lifecycle test tf_life_connect over TCP).  Flushing every new endpoint
 * while all processes are in MPI_Init (each progresses while it waits for
 * the others) finishes the setup there, so a later death meets established
 * connections, whose errors UCX reports.  The wait is bounded; a peer that
 * fails meanwhile is handled as any failure. */
#include "proto/engine_int.h"
#include "common/fs_time.h"

static void fs_wire_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op;
    (void)status;
    (void)length;
}

static int fs_wire_pending(fs_ep_t *const *eps, size_t count)
{
    size_t i;
    int pending = 0;

    for (i = 0; i < count; ++i) {
        pending += (eps[i] != NULL) && eps[i]->wire_op.busy;
    }
    return pending;
}

void fs_engine_wire_up(fs_engine_t *engine, fs_ep_t *const *eps, size_t count,
                       double timeout)
{
    double deadline = fs_time_now() + timeout;
    size_t i;

    if (engine->tl_ops->ep_flush == NULL) {
        return;
    }
    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];

        if ((ep == NULL) || ep->is_self || (ep->tl_ep == NULL) ||
            !fs_ep_is_usable(ep) || ep->wire_op.busy) {
            continue;
        }
        ep->wire_op.cb   = fs_wire_done;
        ep->wire_op.busy = 0;
        (void)engine->tl_ops->ep_flush(engine->tl, ep->tl_ep, &ep->wire_op);
    }
    while (fs_wire_pending(eps, count) && (fs_time_now() < deadline)) {
        fs_engine_progress(engine);
    }
    if (fs_wire_pending(eps, count)) {
        FS_WARN("connection setup with %d process(es) not finished within %.0f ms: "
                "it finishes at first contact", fs_wire_pending(eps, count),
                timeout * 1e3);
    }
}
