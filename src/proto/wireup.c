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
 * connections, whose errors UCX reports.  The wait is bounded: by
 * cause_wait_ms, or the failure detector's verdict bound if later, so that
 * a link a network outage holds down (a flap during MPI_Init: connects
 * fail until the link and its neighbour entries are back) links once the
 * outage ends, and a peer that is gone is failed by then; a peer that
 * fails meanwhile is handled as any failure.
 *
 * Until its flush completes, an endpoint's link is unproven: a link error
 * then is a failed connect, and UCX 1.13's TCP reports a refused connect
 * (the process is gone) and an unreachable host (a link that just came
 * back) alike.  Such an error is read as at connection time
 * (FS_FAULT_CTX_EP_CREATE: a suspicion whose cause is unknown), never as a
 * death.  Inside this wait the connect is made again (fs_wire_backoff),
 * until it links, the peer is found failed (its detector
 * or runtime) or the wait ends; after it, the endpoint waits for its peer's
 * fate as any unexplained break (src/proto/peer.c). */
#include "proto/engine_int.h"
#include "common/fs_time.h"
#include "failure/classify.h"

/* the first new connect after 50 ms, then twice as long each time up to
 * 0.4 s: a link that comes back is used soon, and a dead peer (refused
 * again and again until the detector says so) costs a few tries */
#define FS_WIRE_RETRY_S     0.05
#define FS_WIRE_RETRY_MAX_S 0.4

static void fs_wire_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    fs_ep_t *ep = fs_container_of(op, fs_ep_t, wire_op);

    (void)length;
    if ((status == FS_OK) && (ep->wire == FS_WIRE_PENDING)) {
        ep->wire = FS_WIRE_LINKED;
        if (ep->wire_tries != 0) {
            FS_INFO("connection to %#llx set up after %u failed connect(s) (%s)",
                    (unsigned long long)ep->id, ep->wire_tries, ep->wire_fault->name);
        }
    }
}

static void fs_wire_start(fs_engine_t *engine, fs_ep_t *ep)
{
    ep->wire         = FS_WIRE_PENDING;
    ep->wire_op.cb   = fs_wire_done;
    ep->wire_op.busy = 0;
    if (engine->tl_ops->ep_flush(engine->tl, ep->tl_ep, &ep->wire_op) == FS_OK) {
        fs_wire_done(&ep->wire_op, FS_OK, 0);
    }
}

static double fs_wire_backoff(unsigned tries)
{
    double wait = FS_WIRE_RETRY_S;

    while ((tries-- != 0) && (wait < FS_WIRE_RETRY_MAX_S)) {
        wait *= 2;
    }
    return (wait < FS_WIRE_RETRY_MAX_S) ? wait : FS_WIRE_RETRY_MAX_S;
}

/* A link error on an endpoint whose link is unproven (see above): returns 1
 * if a new connect will be made; otherwise *row_p is the error's reading at
 * connection time. */
int fs_wire_ep_error(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t **row_p)
{
    const fs_fault_row_t *row = *row_p;

    if (!fs_ep_wire_unproven(ep)) {
        return 0;
    }
    row = fs_fault_classify(row->source, row->code, 0, FS_FAULT_CTX_EP_CREATE);
    *row_p = row;
    if (!engine->wiring || (row->cls != FS_FAULT_FLUSH) ||
        (engine->tl_ops->ep_reconnect == NULL)) {
        return 0;
    }
    FS_DEBUG("connect to %#llx failed (%s): trying again", (unsigned long long)ep->id,
             row->name);
    ep->wire          = FS_WIRE_RETRY;
    ep->wire_fault    = row;
    ep->wire_retry_at = fs_time_now() + fs_wire_backoff(ep->wire_tries);
    ++ep->wire_tries;
    return 1;
}

/* How many endpoints are not set up yet (connect or flush in flight, or a
 * connect due); a peer found failed meanwhile is nothing to wait for.  A
 * flush that ended with an error leaves its endpoint PENDING: the link's
 * error is on its way. */
static int fs_wire_pending(fs_ep_t *const *eps, size_t count)
{
    size_t i;
    int pending = 0;

    for (i = 0; i < count; ++i) {
        pending += (eps[i] != NULL) && fs_ep_is_usable(eps[i]) &&
                   fs_ep_wire_unproven(eps[i]);
    }
    return pending;
}

/* Connects again where it is due (the old link's flush ends first: its
 * error completes it). */
static void fs_wire_retry_due(fs_engine_t *engine, fs_ep_t *const *eps, size_t count)
{
    double now = fs_time_now();
    size_t i;

    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];

        if ((ep == NULL) || !fs_ep_is_usable(ep) || (ep->wire != FS_WIRE_RETRY) ||
            ep->wire_op.busy || (now < ep->wire_retry_at)) {
            continue;
        }
        if (engine->tl_ops->ep_reconnect(engine->tl, ep->tl_ep) == FS_OK) {
            fs_wire_start(engine, ep);
        } else {
            ep->wire_retry_at = now + fs_wire_backoff(ep->wire_tries++);
        }
    }
}

/* The wait is over: an endpoint whose connects all failed waits for its
 * peer's fate (a dead peer is failed by the detector; otherwise the break
 * is local). */
static void fs_wire_give_up(fs_engine_t *engine, fs_ep_t *const *eps, size_t count)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];

        if ((ep != NULL) && (ep->wire == FS_WIRE_RETRY) && fs_ep_is_usable(ep)) {
            FS_WARN("%u connect(s) to %#llx failed (%s): waiting for its fate",
                    ep->wire_tries, (unsigned long long)ep->id, ep->wire_fault->name);
            fs_peer_suspect(engine, ep, ep->wire_fault);
        }
    }
}

void fs_engine_wire_up(fs_engine_t *engine, fs_ep_t *const *eps, size_t count,
                       double timeout)
{
    /* fixed now: the detector's bound moves on with the clock */
    double start = fs_time_now(), deadline = fs_peer_fate_deadline(engine, NULL);
    size_t i;
    int pending;

    if (deadline < start + timeout) {
        deadline = start + timeout;
    }
    if (engine->tl_ops->ep_flush == NULL) {
        return;
    }
    engine->wiring = 1;
    for (i = 0; i < count; ++i) {
        fs_ep_t *ep = eps[i];

        if ((ep == NULL) || ep->is_self || (ep->tl_ep == NULL) ||
            !fs_ep_is_usable(ep) || (ep->wire != FS_WIRE_PENDING) ||
            ep->wire_op.busy) {
            continue;
        }
        fs_wire_start(engine, ep);
    }
    /* an engine's own wait: the host's news (a peer's death found by the
     * detector or told by another process) ends the wait for that peer */
    while (fs_wire_pending(eps, count) && (fs_time_now() < deadline)) {
        fs_engine_progress_alone(engine);
        fs_wire_retry_due(engine, eps, count);
    }
    engine->wiring = 0;
    fs_wire_give_up(engine, eps, count);
    pending = fs_wire_pending(eps, count);
    if (pending) {
        FS_WARN("connection setup with %d process(es) not finished within %.0f ms: "
                "it finishes at first contact", pending,
                (deadline - start) * 1e3);
    }
}
