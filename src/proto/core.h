/* The failstop engine as a host (the Open MPI PML in src/ompi, or a unit
 * test) sees it.  The host embeds fs_send_t / fs_recv_t in its own requests,
 * fills them, starts them, and gets completions through fs_host_ops_t.
 *
 * Start functions return FS_OK (done, success), an error (done, failed) or
 * FS_INPROGRESS (the completion callback comes later).  Callbacks run inside
 * fs_engine_progress or inside another start call, with the engine locked.
 *
 * A request whose transport operation is still in flight (fs_req_busy) must
 * not be reused: that only happens after it was completed early because its
 * peer failed; the host learns it is free again through req_idle. */
#ifndef FS_PROTO_CORE_H
#define FS_PROTO_CORE_H

#include "common/fs_buf.h"
#include "common/fs_list.h"
#include "common/fs_params.h"
#include "common/fs_status.h"
#include "endpoint/ep.h"
#include "failure/agree.h"
#include "proto/hdr.h"
#include "queues/mq.h"
#include "transport/tl.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fs_engine fs_engine_t;
typedef struct fs_comm   fs_comm_t;
typedef struct fs_msg    fs_msg_t;

#define FS_REQ_F_DONE     0x1u   /* completion was reported to the host */
#define FS_REQ_F_INFLIGHT 0x2u   /* on its endpoint's in-flight list */
#define FS_REQ_F_RECV     0x4u
#define FS_REQ_F_PARKED   0x8u   /* failed, cause unknown: waits for its peer's fate */
#define FS_REQ_F_DRAIN    0x10u  /* failed receive: waits until the transport
                                    is done writing into its buffer */
#define FS_REQ_F_ABANDONED 0x20u /* completed early (revoked), op in flight:
                                    counted in its ep's abandoned */
/* ULFM's rule for a wildcard receive (pml_failstop_anysource_pending): set
 * by the host before fs_recv_start, it stays posted while MPI_ANY_SOURCE is
 * disabled; FS_REQ_F_PENDING while the host has been told so
 * (recv_pending), set at once by fs_recv_start if it starts disabled. */
#define FS_REQ_F_HOLD_WILD 0x40u
#define FS_REQ_F_PENDING   0x80u

typedef struct fs_req {
    fs_tl_op_t   op;         /* the transport operation, if any */
    fs_list_t    ep_elem;    /* on ep->inflight while op is in flight */
    fs_ep_t     *ep;         /* peer of the operation */
    fs_engine_t *engine;     /* not via comm: it may be gone when the op ends */
    fs_status_t  status;
    uint8_t      flags;
    uint8_t      host_flags; /* the host's own; the core only clears them */
    double       deadline;   /* PARKED or DRAIN: when its own wait ends */
} fs_req_t;

typedef enum fs_send_mode {
    FS_SEND_STANDARD = 0,    /* also ready and buffered (packed by the host) */
    FS_SEND_SYNC
} fs_send_mode_t;

typedef struct fs_send {
    fs_req_t        super;
    fs_hdr_match_t  hdr;     /* stays valid until completion (UCX needs it) */
    fs_hdr_short_t  hdr_short; /* the wire form when short_ok, same lifetime */
    uint8_t         short_ok;
    uint8_t         blocking; /* its caller waits for it (the host sets it after
                                 fs_send_prepare): FS_TL_SEND_FAST */
    fs_comm_t      *comm;
    int32_t         dst;
    fs_buf_t        buf;
    fs_send_mode_t  mode;
} fs_send_t;

typedef struct fs_recv {
    fs_req_t        super;
    fs_mq_recv_t    mq;      /* src and tag requested */
    fs_comm_t      *comm;
    fs_buf_t        buf;     /* buf.len is the capacity */
    int32_t         src_out; /* results; without a message: the requested */
    int32_t         tag_out;
    size_t          len_out; /* bytes delivered */
    size_t          msg_len; /* bytes the sender sent */
} fs_recv_t;

typedef struct fs_probe_info {
    int32_t  src;
    int32_t  tag;
    size_t   len;
} fs_probe_info_t;

typedef struct fs_stats {
    uint64_t msgs_sent;
    uint64_t msgs_received;
    uint64_t unexpected;
    uint64_t reordered;
    uint64_t early_cid;
    uint64_t discarded_after_failure;
    uint64_t dropped_malformed;
    uint64_t agree_stale;       /* agreement or revoke messages of a freed
                                   communicator whose context id came back */
    uint64_t lost_no_memory;    /* messages not kept: their channels broke */
    uint64_t pool_grows;
    uint64_t large_copies;   /* unexpected eager copies too big for the pools */
    uint64_t peers_failed;
    uint64_t peers_left;
    uint64_t notices_sent;
    uint64_t notices_received;
} fs_stats_t;

typedef struct fs_host_ops {
    fs_dt_ops_t dt;
    void (*send_complete)(fs_send_t *sreq);
    void (*recv_complete)(fs_recv_t *rreq);
    void (*req_idle)(fs_req_t *req);
    /* A peer was marked failed (after every operation on it completed);
     * reporter is the process that told us, NULL when we found it ourselves
     * (ep->fault: the transport's status, if one named the death). */
    void (*peer_failed)(void *host_arg, fs_ep_t *ep, fs_ep_t *reporter);
    /* Another process called MPI_Abort on a communicator with us in it. */
    void (*abort)(void *host_arg, fs_ep_t *from, int errcode);
    /* Another process declared this one failed: it must end (17.3). */
    void (*excluded)(void *host_arg, fs_ep_t *by);
    /* pml_failstop_inject fired: die by sig (the host records it first). */
    void (*inject)(void *host_arg, int sig);
    /* Optional: by when (fs_time_now's clock) the host's failure detector
     * will have declared ep's process failed if it has died by now; 0 if it
     * cannot say.  A link that broke without a known cause waits until then
     * (at least cause_wait_ms) for the peer's fate. */
    double (*fate_deadline)(void *host_arg, fs_ep_t *ep);
    /* Optional (NULL: every peer is on this host): 1 if ep's process runs
     * on another host, whose link a network outage, a middlebox or a forged
     * packet breaks as its death would. */
    int    (*remote)(void *host_arg, fs_ep_t *ep);
    /* Optional, with remote: such a link broke; the host's failure detector
     * checks ep's process now (its verdict comes as any other:
     * fs_engine_peer_suspected). */
    void   (*check)(void *host_arg, fs_ep_t *ep);
    /* Optional (needed for FS_REQ_F_HOLD_WILD): a held wildcard receive is
     * pending on a disabled MPI_ANY_SOURCE (pending 1), or no longer so
     * after MPI_ANY_SOURCE was re-enabled (0); it stays posted either way. */
    void (*recv_pending)(fs_recv_t *rreq, int pending);
    /* Optional: comm (its host object, fs_comm_create's host) is revoked
     * here, by this process or news of another's; once per communicator. */
    void (*comm_revoked)(void *host_comm);
    /* Optional: hands the engine the news the host holds for it (its failure
     * detector's verdicts, through fs_engine_peer_suspected).  Called in the
     * waits the engine runs itself -- MPI_Finalize's departure and the close
     * of the endpoints -- where the host's own progress does not run. */
    void (*poll)(void *host_arg);
} fs_host_ops_t;

typedef struct fs_engine_config {
    const fs_params_t    *params;
    const fs_host_ops_t  *host;
    void                 *host_arg;
    const fs_tl_ops_t    *tl_ops;
    uint64_t              my_id;
    int                   multi_thread;
    size_t                estimated_peers;
    size_t                local_peers;   /* other processes of this node; 0: unknown */
    /* 1: another component (the failure detector) tells the other processes
     * about failures; 0: the engine sends a notice to every peer itself */
    int                   external_propagation;
} fs_engine_config_t;

/* ---- engine ---- */
fs_status_t fs_engine_create(const fs_engine_config_t *config, fs_engine_t **engine_p);
void        fs_engine_destroy(fs_engine_t *engine);
fs_status_t fs_engine_address(fs_engine_t *engine, const void **addr_p, size_t *len_p);
unsigned    fs_engine_progress(fs_engine_t *engine);
/* Polls the transport until req is finished and released, giving host_poll
 * (the rest of the host's progress) a turn every 64 polls.  Single-threaded
 * hosts only: it polls without taking the engine lock. */
void        fs_engine_wait(fs_engine_t *engine, const fs_req_t *req,
                           void (*host_poll)(void));
void        fs_engine_lock(fs_engine_t *engine);
void        fs_engine_unlock(fs_engine_t *engine);
const fs_stats_t *fs_engine_stats(const fs_engine_t *engine);
/* MPI_Finalize begins (src/proto/leave.c): announces our departure to every
 * peer, then waits until every pending operation (freed requests included:
 * MPI_Finalize completes them) has completed or can no longer complete.
 * Waits only on peers that are not gone yet.  Idempotent. */
void        fs_engine_depart(fs_engine_t *engine);
/* The same in steps, for hosts that progress several engines themselves:
 * start, then test after each progress until it returns 1. */
void        fs_engine_depart_start(fs_engine_t *engine);
int         fs_engine_depart_test(fs_engine_t *engine);
/* MPI_Finalize ends: departs if that was not done yet, then flushes and
 * closes the endpoints to these peers, waiting at most finalize_timeout_ms. */
void        fs_engine_leave(fs_engine_t *engine, fs_ep_t *const *eps, size_t count);
/* Finishes the transport's connection setup with these peers now (all
 * processes call it in MPI_Init), waiting at most timeout seconds, or until
 * the host's verdict bound if later (a link a network outage holds down
 * connects once it ends): src/proto/wireup.c says why. */
void        fs_engine_wire_up(fs_engine_t *engine, fs_ep_t *const *eps, size_t count,
                              double timeout);
/* The failure detector found the process of ep failed (a suspicion is
 * final).  Ignored for a peer that announced its departure. */
void        fs_engine_peer_suspected(fs_engine_t *engine, fs_ep_t *ep);
/* The host's failure detector can now say by when it decides (it just
 * started): links that broke before, waiting for their peer's fate, wait
 * until then if that is later than what they were given. */
void        fs_engine_refresh_fates(fs_engine_t *engine);

/* ---- endpoints ---- */
fs_status_t fs_engine_ep_create(fs_engine_t *engine, uint64_t id, void *host,
                                const void *addr, size_t addr_len, fs_ep_t **ep_p);
fs_status_t fs_engine_ep_create_self(fs_engine_t *engine, uint64_t id, void *host,
                                     fs_ep_t **ep_p);
/* What ep's traffic goes over ("transport/device,..."), for reports; a slow
 * call.  FS_ERR_UNSUPPORTED when the transport cannot tell or ep has no
 * link (itself, failed, never contacted). */
fs_status_t fs_engine_ep_describe(fs_engine_t *engine, const fs_ep_t *ep, char *buf,
                                  size_t len);

/* ---- communicators ---- */
/* peers[r] is the endpoint of rank r of the (remote) group; for an
 * intercommunicator local_eps lists the local group (NULL otherwise).  Both
 * are copied.  A communicator created with a failed member starts
 * collectively inactive with MPI_ANY_SOURCE disabled. */
fs_status_t fs_comm_create(fs_engine_t *engine, uint32_t cid, int32_t my_rank,
                           uint32_t size, fs_ep_t *const *peers,
                           uint32_t local_size, fs_ep_t *const *local_eps,
                           void *host, fs_comm_t **comm_p);
void        fs_comm_destroy(fs_comm_t *comm);
uint32_t    fs_comm_size(const fs_comm_t *comm);

/* ---- failure queries (MPI-FT 17.4, 17.6, 17.8) ---- */
typedef enum fs_comm_group {
    FS_COMM_REMOTE,     /* the peers' group: the whole group of an intracomm */
    FS_COMM_LOCAL       /* an intercommunicator's own group */
} fs_comm_group_t;

/* Writes (up to max) the ranks of group members known failed, in rank
 * order; with acked_only, only those acknowledged by the last reenable/ack.
 * Returns the number of failed members. */
uint32_t    fs_comm_failed_ranks(const fs_comm_t *comm, fs_comm_group_t which,
                                 int acked_only, int32_t *ranks, uint32_t max);
/* Re-enables MPI_ANY_SOURCE and acknowledges every failure known now. */
void        fs_comm_reenable_any_source(fs_comm_t *comm);
int         fs_comm_any_source_enabled(const fs_comm_t *comm);
int         fs_comm_collectives_enabled(const fs_comm_t *comm);

/* The members agreements, revokes and validations span, numbered alike at
 * every member: an intracommunicator's ranks; an intercommunicator's two
 * groups one after the other (the group holding the lowest process name
 * first).  Bit i of an agreed or recognized failed set is member i. */
uint32_t        fs_comm_members(const fs_comm_t *comm, uint32_t *me_p);
fs_comm_group_t fs_comm_member_rank(const fs_comm_t *comm, uint32_t i, uint32_t *rank_p);

/* ---- validation (MPI-FT 17.7.4, src/proto/validate.c) ---- */
/* The members in failed (bit i: member i, fs_comm_agree_words words),
 * decided by a validation every member completes alike, are recognized on
 * comm: their failure no longer makes it collectively inactive.
 * Collectives are active again unless a member outside failed is known
 * failed (a failure newer than the validation). */
fs_status_t fs_comm_recognize(fs_comm_t *comm, const uint64_t *failed);
/* comm's collectives run on shadow, the host's communicator of its
 * survivors (NULL: on comm itself); a revoke of comm revokes shadow too.
 * host_ext is the host's, kept with comm for fs_comm_shadow_host. */
void        fs_comm_set_shadow(fs_comm_t *comm, fs_comm_t *shadow, void *host_ext);
void       *fs_comm_shadow_host(const fs_comm_t *comm);
/* comm's recognized failed members (bit i: member i), or NULL if none. */
const uint64_t *fs_comm_recognized(const fs_comm_t *comm);

/* ---- agreement over a communicator's alive members (src/proto/agreement.c) ----
 * Uniform: every member that completes an instance gets the same result,
 * also when members (its coordinator included) die during it. */
typedef struct fs_agreement {
    fs_list_t    elem;        /* on the communicator while running */
    fs_comm_t   *comm;
    uint32_t     seq;
    int          done;        /* set, under the engine lock, with the result */
    fs_status_t  status;      /* FS_OK, or why there is no result */
    uint64_t     v[FS_AGREE_MAX_WORDS];
    int          unacked;     /* a failed member is not acknowledged by all */
    uint32_t     nfailed;
    uint64_t    *failed;      /* the host's, fs_comm_agree_words words, or NULL:
                                 the agreed failed members (bit i: member i) */
    void       (*complete)(struct fs_agreement *op);   /* optional */
    void        *host;
} fs_agreement_t;

size_t      fs_comm_agree_words(const fs_comm_t *comm);
/* Starts this member's next agreement on comm with contribution in (its
 * acked set is in->acked, or comm's acknowledged failures if NULL).  Collective over both groups
 * of an intercommunicator, in the same order at every member.  op->done is
 * set when it is decided (maybe before this returns). */
fs_status_t fs_comm_agree_start(fs_comm_t *comm, const fs_agree_input_t *in,
                                fs_agreement_t *op);

/* ULFM's revoke (src/proto/revoke.c): every pending and new operation on
 * comm, point-to-point or collective, ends with FS_ERR_REVOKED, here and,
 * reliably (forwarders may die), at every live member; agreements go on. */
fs_status_t fs_comm_revoke(fs_comm_t *comm);
int         fs_comm_is_revoked(const fs_comm_t *comm);
/* The host runs part of intercommunicator inter's collectives on local, a
 * communicator of inter's local group: a revoke of inter revokes local here
 * too (each member hears of inter's revoke itself), and inter's collectives
 * going off (a failure) turn local's off too.  Cleared when local is
 * destroyed. */
void        fs_comm_set_local_comm(fs_comm_t *inter, fs_comm_t *local);

/* MPI_Abort: tells these peers to end with errcode (best effort, bounded). */
void        fs_engine_abort_peers(fs_engine_t *engine, fs_ep_t *const *eps,
                                  size_t count, int errcode);
/* Test hook: after this many more messages sent or received, the process
 * raises sig on itself (pml_failstop_inject). */
void        fs_engine_inject(fs_engine_t *engine, uint64_t after, int sig);
/* Test hook: the process raises sig on itself right after it handed the
 * first message to a remote peer it has exchanged no message with to the
 * transport (first contact: the transport's wire-up is in progress). */
void        fs_engine_inject_first_contact(fs_engine_t *engine, int sig);

/* ---- point-to-point ---- */
void        fs_send_prepare(fs_send_t *sreq, fs_comm_t *comm, int32_t dst,
                            int32_t tag, fs_send_mode_t mode);
fs_status_t fs_send_start(fs_send_t *sreq);
/* FS_OK, or the error a send to dst with tag on comm would end with at
 * once (the peer is known failed or gone; a collective on an inactive
 * comm).  Buffered sends, which complete locally, check this first. */
fs_status_t fs_send_precheck(const fs_comm_t *comm, uint32_t dst, int32_t tag);
/* Sends len bytes at ptr to dst with tag, standard mode, only if it
 * completes at once with nothing left in flight: FS_OK, or FS_ERR_AGAIN and
 * nothing was sent, in which case the caller prepares sreq and uses
 * fs_send_start.  sreq is storage (its host_flags set by the caller), made a
 * whole request only if a transport breaks FS_TL_SEND_IMM's promise: then
 * it returns as fs_send_start does (FS_INPROGRESS: the caller keeps sreq
 * until fs_req_idle, so a request on the stack is waited for). */
fs_status_t fs_send_try(fs_send_t *sreq, fs_comm_t *comm, int32_t dst, int32_t tag,
                        void *ptr, size_t len);

void        fs_recv_prepare(fs_recv_t *rreq, fs_comm_t *comm, int32_t src,
                            int32_t tag);
fs_status_t fs_recv_start(fs_recv_t *rreq);
/* Returns 1 if the receive was still posted: it is completed with
 * FS_ERR_CANCELED (through recv_complete). */
int         fs_recv_cancel(fs_recv_t *rreq);

/* Looks for a matching unexpected message.  With remove, the message is
 * taken out of the queues and returned in *msg_p for fs_mrecv_start. */
fs_status_t fs_probe(fs_comm_t *comm, int32_t src, int32_t tag, int remove,
                     int *found_p, fs_probe_info_t *info_p, fs_msg_t **msg_p);
fs_status_t fs_mrecv_start(fs_recv_t *rreq, fs_msg_t *msg);

static inline int fs_req_busy(const fs_req_t *req)
{
    return req->op.busy;
}

/* Finished and released by the transport: the memory may be reused. */
static inline int fs_req_idle(const fs_req_t *req)
{
    return (req->flags & FS_REQ_F_DONE) && !req->op.busy;
}

#endif
