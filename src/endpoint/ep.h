/* One endpoint per peer process.
 *
 *   CONNECTING --> UP --> SUSPECTED --> FAILED     (SUSPECTED: the link broke,
 *                                                    cause unknown: waits for
 *                                                    the peer's fate)
 *        |          |                     ^
 *        |          +--------------------/
 *        |          +--> LEAVING --> LEFT        (peer announced MPI_Finalize)
 *        +--> FAILED
 *   any --> CLOSED                                (our own finalize)
 *
 * FAILED and LEFT are final for the peer: a failed peer is never revived (a
 * suspicion is final, 17.3), and a peer that left is never reported failed.
 * The endpoint tracks every operation in flight on it, so a failure can
 * complete them all. */
#ifndef FS_ENDPOINT_EP_H
#define FS_ENDPOINT_EP_H

#include "common/fs_list.h"
#include "common/fs_status.h"
#include "transport/tl.h"

#include <stdint.h>

typedef enum fs_ep_state {
    FS_EP_CONNECTING = 0,
    FS_EP_UP,
    FS_EP_SUSPECTED,
    FS_EP_LEAVING,      /* departure announced; messages still in flight */
    FS_EP_LEFT,
    FS_EP_FAILED,
    FS_EP_CLOSED,
    FS_EP_STATE_COUNT
} fs_ep_state_t;

typedef struct fs_ep {
    fs_ep_state_t          state;
    uint8_t                is_self;
    fs_tl_ep_t            *tl_ep;
    uint64_t               id;              /* host's process name */
    void                  *host;            /* host's process object */
    fs_list_t              elem;            /* in the engine's endpoint list */
    fs_list_t              inflight;        /* fs_req_t with a transport op */
    uint64_t               tx_msgs;         /* matching messages sent to it */
    /* Immediate sends (src/proto/send.c fs_send_try): the transport takes
     * one only if it fits its short protocol, whose size is the transport's
     * and the lane's.  imm_max is learned: a size the transport refused and
     * then, in the very next send, sent inline (so resources were there)
     * is above it.  imm_refused: 1 + the size of a refusal that next send
     * has not settled yet, 0 if none. */
    size_t                 imm_max;
    size_t                 imm_refused;
    uint64_t               rx_msgs;         /* matching messages taken from it */
    uint64_t               bye_expect;      /* rx_msgs announced in its BYE */
    /* departure (src/proto/leave.c): it left still receiving from us (its
     * BYE said so, its DONE ends it); we told it we were still receiving */
    uint8_t                peer_receiving;
    uint8_t                peer_done;       /* its DONE came (maybe before its BYE) */
    uint8_t                told_receiving;
    uint64_t               fail_epoch;      /* engine epoch when it failed */
    double                 fate_deadline;   /* SUSPECTED: when the break is local */
    const fs_fault_row_t  *fault;           /* why it failed, if a transport said */
    /* its failure notices wait until the transport's progress call returns
     * (ctrl.c); notice_reporter: who told us, or NULL */
    uint8_t                notice_pending;
    struct fs_ep          *notice_reporter;
    fs_tl_op_t             close_op;
    uint8_t                close_fate;      /* fs_close_fate_t */
    fs_tl_op_t             wire_op;     /* fs_engine_wire_up's flush */
    /* sends completed early (revoked) that the transport still holds until
     * the receiver gives them back (src/proto/revoke.c) */
    uint32_t               abandoned;
    /* a validation here recognized its failure (src/proto/validate.c): a
     * communicator created later holds it as a recognized failure */
    uint8_t                recognized;
    /* connection setup in MPI_Init (src/proto/wireup.c): until it is proven
     * (wire == FS_WIRE_LINKED) a broken link is a failed connect, which a
     * network hiccup causes as well as a death */
    uint8_t                wire;            /* fs_wire_state_t */
    uint16_t               wire_tries;      /* connects that failed */
    double                 wire_retry_at;   /* FS_WIRE_RETRY: next connect */
    const fs_fault_row_t  *wire_fault;      /* the last connect's failure */
} fs_ep_t;

/* MPI_Finalize closes every endpoint (src/proto/leave.c) and drains the
 * closes; a peer whose fate was open then may still be declared failed
 * during the drain: the process records it, and stops waiting for a close a
 * dead peer never acknowledges. */
typedef enum fs_close_fate {
    FS_CLOSE_NONE = 0,  /* not closed, or closed after it left or failed */
    FS_CLOSE_OPEN,      /* closed while it had neither left nor failed */
    FS_CLOSE_FAILED     /* declared failed after its close started */
} fs_close_fate_t;

typedef enum fs_wire_state {
    FS_WIRE_NONE = 0,   /* not set up through wire-up: the table's reading */
    FS_WIRE_PENDING,    /* connect and flush in flight */
    FS_WIRE_RETRY,      /* its connect failed: a new one at wire_retry_at */
    FS_WIRE_LINKED      /* the flush completed: the link is proven */
} fs_wire_state_t;

const char *fs_ep_state_name(fs_ep_state_t state);

/* Returns 1 if the transition is allowed (and applies it), 0 otherwise. */
int fs_ep_transition(fs_ep_t *ep, fs_ep_state_t next);

#define FS_EP_SET(_s) (1u << (_s))

/* States in which new operations may be started on the endpoint. */
static inline int fs_ep_is_usable(const fs_ep_t *ep)
{
    return (FS_EP_SET(FS_EP_CONNECTING) | FS_EP_SET(FS_EP_UP) |
            FS_EP_SET(FS_EP_LEAVING)) & FS_EP_SET(ep->state);
}

/* States after which the peer sends nothing more: its story is over. */
static inline int fs_ep_is_gone(const fs_ep_t *ep)
{
    return (FS_EP_SET(FS_EP_LEFT) | FS_EP_SET(FS_EP_FAILED) |
            FS_EP_SET(FS_EP_CLOSED)) & FS_EP_SET(ep->state);
}

/* A peer that left while it still had receives posted (MPI_Finalize
 * completes freed requests): it may still take what is sent to it. */
static inline int fs_ep_takes_late_sends(const fs_ep_t *ep)
{
    return (ep->state == FS_EP_LEFT) && ep->peer_receiving;
}

/* Its connection setup has not been seen to finish: a link error may be a
 * failed connect (src/proto/wireup.c). */
static inline int fs_ep_wire_unproven(const fs_ep_t *ep)
{
    return (ep->wire == FS_WIRE_PENDING) || (ep->wire == FS_WIRE_RETRY);
}

static inline int fs_ep_is_failed(const fs_ep_t *ep)
{
    return ep->state == FS_EP_FAILED;
}

void fs_ep_init(fs_ep_t *ep, uint64_t id, void *host, int is_self);

#endif
