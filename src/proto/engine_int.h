/* Engine internals shared by the files of src/proto. */
#ifndef FS_PROTO_ENGINE_INT_H
#define FS_PROTO_ENGINE_INT_H

#include "proto/core.h"
#include "common/fs_bitmap.h"
#include "common/fs_log.h"
#include "common/fs_mpool.h"
#include "endpoint/seq.h"
#include "queues/deadpeer.h"

#include <pthread.h>

/* ---- stored (unexpected, early or probed) messages ---------------------- */

typedef enum fs_msg_kind {
    FS_MSG_EAGER = 0,   /* payload in data */
    FS_MSG_RNDV,        /* payload at the sender: fetch through desc */
    FS_MSG_SELF         /* payload in self_sreq's buffer (send to self) */
} fs_msg_kind_t;

/* where an eager payload's bytes live */
typedef enum fs_msg_store {
    FS_MSG_STORE_NONE = 0,   /* borrowed (fresh message, not stored) */
    FS_MSG_STORE_INLINE,     /* inline_data */
    FS_MSG_STORE_POOL,       /* a copy pool buffer, copy_class */
    FS_MSG_STORE_MALLOC,     /* oversized copy */
    FS_MSG_STORE_TL          /* the transport's descriptor, desc */
} fs_msg_store_t;

#define FS_MSG_INLINE      64
#define FS_EARLY_LOST_MAX  64
#define FS_COPY_CLASSES    4

struct fs_msg {
    fs_mq_msg_t      mq;         /* src, tag, queue links */
    fs_seq_item_t    seq;        /* parked out of order, or early (no comm) */
    uint32_t         cid;
    uint8_t          kind;       /* fs_msg_kind_t */
    uint8_t          store;      /* fs_msg_store_t */
    uint8_t          copy_class;
    uint8_t          flags;      /* FS_HDR_F_* from the header */
    uint8_t          is_stored;  /* from msg_pool (not a borrowed stack copy) */
    uint64_t         epoch;      /* engine failure epoch at arrival */
    size_t           len;
    void            *data;
    void            *desc;
    fs_send_t       *self_sreq;
    uint8_t          inline_data[FS_MSG_INLINE];
};

/* A control message in flight (ctrl.c). */
typedef struct fs_ctrl_req {
    fs_tl_op_t     op;
    fs_hdr_ctrl_t  hdr;
    fs_engine_t   *engine;
} fs_ctrl_req_t;

/* ---- communicators ----------------------------------------------------- */

typedef struct fs_comm_peer {
    fs_ep_t       *ep;
    fs_mq_bin_t    bin;
    fs_seq_rx_t    rx;
    uint16_t       tx_seq;
    /* a message from it could not be kept (peer.c fs_chan_lose):
     * FS_CHAN_HOLE until the messages before it are in, then FS_CHAN_DEAD */
    uint8_t        broken;
    uint16_t       lost_seq;    /* the earliest message not kept */
    fs_dp_poison_t poison;      /* tags whose receives failed (dead peer) */
} fs_comm_peer_t;

struct fs_comm {
    fs_engine_t     *engine;
    fs_list_t        elem;       /* in engine->comms_list */
    uint32_t         cid;
    int32_t          my_rank;
    uint32_t         size;
    void            *host;
    fs_mq_t          mq;
    fs_comm_peer_t  *peers;
    /* intercommunicators: the local group, for failure containment */
    fs_ep_t        **local_eps;
    uint32_t         local_size;
    uint8_t          anysrc_disabled;   /* 17.6: until reenabled */
    uint8_t          coll_inactive;     /* 17.7: until the next validation */
    uint8_t          poisoned;          /* some bin has poisoned tags */
    uint8_t          short_hdr;         /* cid and my_rank fit fs_hdr_short_t */
    uint64_t         acked_epoch;       /* failures acknowledged by reenable/ack */
    /* The members agreements, revokes and validations span (comm.c):
     * intracommunicators: the ranks (members NULL, peers[i].ep);
     * intercommunicators: both groups, the one holding the lowest process
     * name first, so that both sides number them alike. */
    fs_ep_t        **members;
    uint32_t         nmembers;
    uint32_t         my_member;
    uint32_t         first_size;        /* members below it: the first group */
    uint8_t          local_first;       /* the first group is the local one */
    /* agreement.c: created at the first agreement or agreement message */
    fs_agree_t      *agree;
    uint64_t         fp;                /* fs_hdr_agree_t.fp of this group */
    uint16_t         inc;               /* fs_hdr_agree_t.inc (comm.c) */
    fs_list_t        agree_ops;         /* fs_agreement_t running */
    /* validate.c (17.7.4): failures recognized by the last validation (bit
     * i: member i; NULL: none), and where the host runs comm's collectives */
    uint64_t        *recognized;
    fs_comm_t       *shadow;
    void            *shadow_host;
    /* revoke.c */
    fs_comm_t       *local_comm;        /* an intercommunicator's, revoked with it */
    uint64_t        *revoke_heard;      /* members that told us they revoked it */
    uint8_t          revoked;
    uint32_t         revoke_nb[2];      /* the next live member each way, told */
};

/* ---- engine ------------------------------------------------------------ */

/* Steps of departure (MPI_Finalize), leave.c. */
typedef enum fs_depart {
    FS_DEPART_NONE = 0,
    FS_DEPART_RECEIVING,   /* BYEs sent; receives that can still complete */
    FS_DEPART_SENDING,     /* DONEs sent; sends a receiver may still take */
    FS_DEPART_SETTLED
} fs_depart_t;

/* comm_inc.c: hash buckets of the communicator incarnations */
#define FS_COMM_INC_BUCKETS 256u

struct fs_engine {
    const fs_params_t     *params;
    const fs_host_ops_t   *host;
    void                  *host_arg;
    const fs_tl_ops_t     *tl_ops;
    fs_tl_t               *tl;
    uint64_t               my_id;
    uint8_t               *addr;        /* fs_hdr_addr_t + the transport's */
    void                  *rx_desc;     /* the descriptor of the upcall running */
    int                    rx_desc_released;
    size_t                 addr_len;
    int                    multi_thread;
    int                    in_progress;
    pthread_mutex_t        lock;

    fs_comm_t            **comms;       /* indexed by cid */
    uint32_t               comms_cap;
    fs_list_t              comms_list;
    fs_list_t              early;       /* fs_msg_t for cids not created yet */
    fs_list_t              eps;         /* every fs_ep_t */
    fs_ep_t               *self_ep;

    fs_mpool_t             msg_pool;
    fs_mpool_t             ctrl_pool;
    unsigned               ctrl_inflight;
    unsigned               notices_pending; /* eps with notice_pending set */
    int                    external_propagation;
    uint64_t               inject_left;     /* messages until injected death */
    int                    inject_sig;
    int                    inject_contact;  /* die at first contact instead */
    fs_mpool_t             copy_pools[FS_COPY_CLASSES];
    size_t                 unexpected_bytes; /* all that stored messages hold */
    size_t                 unexpected_limit;
    int                    budget_warned;
    /* messages lost on communicators that did not exist yet: their channels
     * break when the communicator is created */
    struct { uint32_t cid; int32_t src; uint16_t seq; } early_lost[FS_EARLY_LOST_MAX];
    unsigned               early_lost_count;
    uint64_t               fail_epoch;
    unsigned               parked;          /* requests with FS_REQ_F_PARKED */
    double                 park_deadline;   /* the earliest parked one's deadline */
    fs_list_t              draining;        /* FS_REQ_F_DRAIN requests, oldest first */
    unsigned               suspects;        /* endpoints in FS_EP_SUSPECTED */
    int                    wiring;          /* inside fs_engine_wire_up */
    fs_depart_t            depart;          /* leave.c */
    /* agreement.c: messages received, handled after the transport's progress */
    fs_list_t              agree_rx;
    fs_list_t              agree_early;     /* for communicators not created yet */
    unsigned               agree_early_count;
    fs_list_t              comm_incs[FS_COMM_INC_BUCKETS];  /* comm_inc.c */
    int                    agree_work;      /* agree_rx not empty, or views changed */
    fs_stats_t             stats;
};

static inline fs_comm_t *fs_engine_comm(const fs_engine_t *engine, uint32_t cid)
{
    return (cid < engine->comms_cap) ? engine->comms[cid] : NULL;
}

/* engine.c: an operation ended at its start on the failure state */
void fs_engine_progress_on_error(fs_engine_t *engine);
/* engine.c: progress in a wait the engine runs on its own (MPI_Finalize):
 * the transport, then the host's news (fs_host_ops_t.poll) */
unsigned fs_engine_progress_alone(fs_engine_t *engine);

static inline fs_ep_t *fs_comm_member_ep(const fs_comm_t *comm, uint32_t i)
{
    return (comm->members != NULL) ? comm->members[i] : comm->peers[i].ep;
}

/* The member index of peers[rank] (the remote group's rank). */
static inline uint32_t fs_comm_member_of_peer(const fs_comm_t *comm, uint32_t rank)
{
    return ((comm->members != NULL) && comm->local_first) ? comm->local_size + rank : rank;
}

/* revoke.c: a message from rank of comm, which its sender has revoked (it
 * told us): dropped, never kept (its send has ended). */
static inline int fs_revoke_drops(const fs_comm_t *comm, uint32_t rank)
{
    return (comm->revoke_heard != NULL) &&
           fs_bm_test(comm->revoke_heard, fs_comm_member_of_peer(comm, rank));
}

/* msg.c */
fs_status_t fs_msg_pools_init(fs_engine_t *engine);
void        fs_msg_pools_cleanup(fs_engine_t *engine);
/* Turns a borrowed (on-stack) message into a stored one; NULL if out of
 * memory (the caller then fails whatever needed it). */
fs_msg_t   *fs_msg_store(fs_engine_t *engine, const fs_msg_t *fresh,
                         const fs_tl_rx_t *rx);
/* Stores a send-to-self payload, packed from buf. */
fs_msg_t   *fs_msg_store_packed(fs_engine_t *engine, const fs_msg_t *fresh,
                                const fs_buf_t *buf);
/* Releases a stored message and whatever holds its payload. */
void        fs_msg_free(fs_engine_t *engine, fs_msg_t *msg);

/* recv.c */
fs_status_t fs_rx_match(fs_engine_t *engine, const fs_hdr_match_t *hdr,
                        void *data, size_t len, const fs_tl_rx_t *rx);
/* Delivers a message (stored or borrowed) to a matched receive. Returns the
 * receive's status, or FS_INPROGRESS while its payload is being fetched. */
fs_status_t fs_recv_deliver(fs_engine_t *engine, fs_recv_t *rreq, fs_msg_t *msg);
/* Passes a message through its channel's sequencing, then matching.
 * Returns FS_INPROGRESS if a fresh message's transport descriptor was kept. */
fs_status_t fs_rx_sequence(fs_comm_t *comm, int32_t rank, fs_msg_t *msg,
                           const fs_tl_rx_t *rx);
void        fs_recv_finish(fs_engine_t *engine, fs_recv_t *rreq, fs_status_t status);
void        fs_recv_lost(fs_recv_t *rreq);
void        fs_peer_parked_expire(fs_engine_t *engine);
void        fs_peer_drain_expire(fs_engine_t *engine);
fs_status_t fs_recv_precheck(fs_comm_t *comm, fs_comm_peer_t *peer, int32_t tag);

/* send.c */
void        fs_send_finish(fs_engine_t *engine, fs_send_t *sreq, fs_status_t status);
/* Copies a send-to-self message into a matched receive. */
fs_status_t fs_self_copy(fs_engine_t *engine, fs_recv_t *rreq, fs_send_t *sreq);

/* comm.c */
void        fs_comm_replay_early(fs_comm_t *comm);
void        fs_comm_discard_parked(fs_comm_t *comm, fs_ep_t *ep);

/* ctrl.c */
fs_status_t fs_rx_ctrl(fs_engine_t *engine, const fs_hdr_ctrl_t *hdr);
/* Sends one control message (best effort); only to usable endpoints unless
 * force (then to any endpoint whose transport is open). */
void        fs_ctrl_send_ep(fs_engine_t *engine, fs_ep_t *ep, uint8_t type,
                            uint8_t flags, uint64_t arg, int force);
/* Progresses until control messages and closes are out, or the deadline;
 * returns 1 if some are still out.  A close to a peer declared failed
 * meanwhile is not waited for (fs_peer_fail_closed). */
int         fs_ctrl_drain(fs_engine_t *engine, double deadline);
void        fs_ep_leaving_check(fs_engine_t *engine, fs_ep_t *ep);
void        fs_ctrl_notify_failure(fs_engine_t *engine, fs_ep_t *failed,
                                   fs_ep_t *reporter);
/* Sends the failure notices deferred while the transport was progressing. */
void        fs_ctrl_flush_notices(fs_engine_t *engine);

/* agreement.c */
fs_status_t fs_rx_agree(fs_engine_t *engine, const fs_hdr_agree_t *hdr, const void *data,
                        size_t len);
/* Handles received agreement messages and view changes (outside the
 * transport's progress: handling them sends). */
void        fs_agreement_work(fs_engine_t *engine);
void        fs_agreement_comm_created(fs_comm_t *comm);
void        fs_agreement_comm_destroy(fs_comm_t *comm);
void        fs_agreement_engine_cleanup(fs_engine_t *engine);
/* Sends one FS_AM_AGREE message of this kind to member 'to' of comm. */
fs_status_t fs_agreement_send_kind(fs_comm_t *comm, uint32_t to, uint32_t kind,
                                   const void *msg, size_t len);
uint64_t    fs_comm_fingerprint(const fs_comm_t *comm);
/* comm_inc.c */
fs_status_t fs_comm_inc_next(fs_engine_t *engine, uint32_t cid, uint64_t fp,
                             uint16_t *inc_p);
int         fs_comm_inc_past(const fs_engine_t *engine, uint32_t cid, uint64_t fp,
                             uint16_t inc);
void        fs_comm_inc_init(fs_engine_t *engine);
void        fs_comm_inc_cleanup(fs_engine_t *engine);

/* revoke.c: a revoke message (its payload: the sender's member index) */
void        fs_revoke_rx(fs_comm_t *comm, const void *data, size_t len);
/* comm is revoked here only (a shadow of a revoked communicator). */
void        fs_revoke_local(fs_comm_t *comm);

/* peer.c: every collective on comm, pending or new, ends with the failure
 * class (17.7); validate.c: whether ep's failure is recognized on comm. */
void        fs_comm_fail_collectives(fs_comm_t *comm);
int         fs_comm_failure_recognized(const fs_comm_t *comm, const fs_ep_t *ep);
/* A new communicator whose failed members are all recognized here holds
 * them as recognized and is collectively active. */
fs_status_t fs_comm_recognize_known(fs_comm_t *comm);
/* The view changed: revoked communicators tell their new neighbours. */
void        fs_revoke_view_changed(fs_comm_t *comm);
/* A member of some communicator failed or left: agreements must learn it. */
static inline void fs_agreement_view_changed(fs_engine_t *engine)
{
    engine->agree_work = 1;
}

/* After a transport progress call: what could not be done inside it. */
static inline void fs_engine_after_progress(fs_engine_t *engine)
{
    if (fs_unlikely(engine->notices_pending != 0)) {
        fs_ctrl_flush_notices(engine);
    }
    if (fs_unlikely(engine->agree_work)) {
        fs_agreement_work(engine);
    }
}
void        fs_engine_inject_fire(fs_engine_t *engine, const fs_ep_t *ep);

/* Gives a held transport descriptor back.  The one of the upcall running
 * is the transport's again when the upcall returns (tl.h), which must then
 * not claim to keep it: fs_engine_am_recv returns FS_OK when this saw it. */
static inline void fs_engine_release_desc(fs_engine_t *engine, void *desc)
{
    if (desc == engine->rx_desc) {
        engine->rx_desc_released = 1;
    }
    engine->tl_ops->release(engine->tl, desc);
}

/* Whether a held descriptor's payload is all in this process (tl.h). */
static inline int fs_engine_desc_whole(const fs_engine_t *engine, const void *desc)
{
    return (engine->tl_ops->desc_whole != NULL) &&
           engine->tl_ops->desc_whole(engine->tl, desc);
}

/* Counts a message toward pml_failstop_inject (UINT64_MAX: never); ep is
 * the remote peer a message was just sent to, else NULL. */
static inline void fs_engine_count_msg(fs_engine_t *engine, const fs_ep_t *ep)
{
    if (fs_unlikely(--engine->inject_left == 0)) {
        fs_engine_inject_fire(engine, ep);
    }
}

/* Counts a matching message taken from ep (its BYE announces how many). */
static inline void fs_ep_count_rx(fs_engine_t *engine, fs_ep_t *ep)
{
    ++ep->rx_msgs;
    if (fs_unlikely(ep->state == FS_EP_LEAVING)) {
        fs_ep_leaving_check(engine, ep);
    }
}

/* peer.c */
fs_status_t fs_peer_status(const fs_ep_t *ep);
/* ep failed: row is the transport's classification, or NULL when reporter
 * (another process) told us. */
void        fs_peer_fail(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t *row,
                         fs_ep_t *reporter);
/* ep announced its departure (LEAVING or LEFT) but died before it was
 * complete (the detector's verdict): failed after all. */
void        fs_peer_fail_departed(fs_engine_t *engine, fs_ep_t *ep);
/* ep, whose endpoint MPI_Finalize closed while its fate was open, was
 * declared failed (a verdict or a notice) while the close drains. */
void        fs_peer_fail_closed(fs_engine_t *engine, fs_ep_t *ep, fs_ep_t *reporter);
/* Completes a request with an operation in flight now, with status. */
void        fs_req_abort(fs_engine_t *engine, fs_req_t *req, fs_status_t status);
/* A receive from peer with this tag ended with the failure error. */
void        fs_comm_poison(fs_comm_t *comm, fs_comm_peer_t *peer, int32_t tag);
void        fs_peer_left(fs_engine_t *engine, fs_ep_t *ep);
enum { FS_CHAN_OK = 0, FS_CHAN_HOLE, FS_CHAN_DEAD };
/* Message seq from rank on comm could not be kept (out of memory, or past
 * max_unexpected_mb): the channel breaks there (see peer.c). */
void        fs_chan_lose(fs_comm_t *comm, int32_t rank, uint16_t seq);
/* The messages before the lost one are in: the channel is dead now. */
void        fs_chan_die(fs_comm_t *comm, int32_t rank);
/* By when ep's fate must be known: cause_wait_ms from now, or the host's
 * verdict bound if later; ep may be NULL (any peer). */
double      fs_peer_fate_deadline(fs_engine_t *engine, fs_ep_t *ep);
/* ep's link broke with no known cause (row of class FLUSH): its operations
 * wait for the peer's fate, at most cause_wait_ms (then the break is local). */
void        fs_peer_suspect(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t *row);
/* ep's process runs on another host (host op remote). */
int         fs_peer_remote(fs_engine_t *engine, fs_ep_t *ep);
/* A transport's reading of ep's broken link, read again for a link to
 * another host (fs_fault_cross_host); where that makes a verdict a
 * suspicion, the host's detector is asked to check the peer now. */
const fs_fault_row_t *fs_peer_reread(fs_engine_t *engine, fs_ep_t *ep,
                                     const fs_fault_row_t *row);
int         fs_wire_ep_error(fs_engine_t *engine, fs_ep_t *ep, const fs_fault_row_t **row_p);
void        fs_peer_suspects_expire(fs_engine_t *engine);
/* An operation of req ended, or could not start, with status: parks it (and
 * returns 1) when the cause is unknown, until its peer's fate is. */
int         fs_req_park_error(fs_req_t *req, fs_status_t status);
/* Parks req on its endpoint until its peer's fate, at most cause_wait_ms. */
void        fs_req_park(fs_req_t *req);
void        fs_req_track(fs_req_t *req);
void        fs_req_untrack(fs_req_t *req);
/* A transport operation of req ended with *status_p.  Returns 1 if the
 * request still has to be completed (with *status_p, a flush turned into
 * its cause), 0 if a failure had completed it already. */
int         fs_req_op_ended(fs_req_t *req, fs_status_t *status_p);
/* Status of an operation that ended with a flush on ep: the cause. */
fs_status_t fs_peer_flush_status(const fs_ep_t *ep, fs_status_t status);
/* An operation of req ended, or could not start, with error *status_p:
 * returns 1 if req now waits for its peer's fate (parked), else 0 with
 * *status_p what req reports (a flush turned into its cause; a peer the
 * operation found dead is failed first). */
int         fs_req_settle_error(fs_req_t *req, fs_status_t *status_p);

#endif
