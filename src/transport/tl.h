/* Message transport interface: one fully populated ops table per fabric,
 * for MPI traffic.  Only src/transport/ sees fabric headers (ucp/, rdma/);
 * the engine talks to a transport through fs_tl_ops_t and two upcalls.  (The
 * failure detector's datagrams have their own interface:
 * src/detector/dg.h.)
 *
 * Operations report completion through an fs_tl_op_t that the caller embeds
 * in its request: the transport keeps a pointer to it while the operation is
 * in flight (op->busy), and the caller must not reuse that memory until the
 * callback has run. */
#ifndef FS_TRANSPORT_TL_H
#define FS_TRANSPORT_TL_H

#include "common/fs_buf.h"
#include "common/fs_status.h"
#include "failure/classify.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fs_tl    fs_tl_t;
typedef struct fs_tl_ep fs_tl_ep_t;
typedef struct fs_tl_op fs_tl_op_t;

typedef void (*fs_tl_op_cb_t)(fs_tl_op_t *op, fs_status_t status, size_t length);

struct fs_tl_op {
    fs_tl_op_cb_t  cb;
    void          *handle;  /* transport-private while in flight */
    uint8_t        busy;    /* set by the transport while it holds the op */
};

/* Active-message ids used by the engine. */
enum {
    FS_AM_MATCH = 0,    /* MPI point-to-point message (fs_hdr_match_t) */
    FS_AM_CTRL  = 1,    /* control: departure, failure notices (fs_hdr_ctrl_t) */
    FS_AM_AGREE = 2,    /* agreement and revoke (fs_hdr_agree_t) */
    FS_AM_COUNT
};

/* Send flags. */
#define FS_TL_SEND_RNDV  0x1u   /* force rendezvous: completion means the
                                   receiver has fetched the data */
#define FS_TL_SEND_EAGER 0x4u   /* never rendezvous: the receiver gets the
                                   whole message in its upcall */
#define FS_TL_SEND_IMM   0x2u   /* complete now, or return FS_ERR_AGAIN having
                                   sent nothing; hdr and op need not outlive
                                   the call */
#define FS_TL_SEND_FAST  0x8u   /* the caller waits for this send: prefer the
                                   protocol that completes locally soonest
                                   (eager to a higher size, as UCX's
                                   FAST_CMPL, which pml ucx's MPI_Send uses) */
#define FS_TL_SEND_WAITED 0x10u /* a blocking send: its caller does nothing
                                   until it completes (UCX: pushed fragments,
                                   which complete once taken, rather than a
                                   rendezvous, which saves a copy but waits
                                   for the receiver) */

/* Describes an incoming message's payload. */
#define FS_TL_RX_RNDV        0x1u  /* data is a descriptor: fetch with recv_data */
#define FS_TL_RX_PERSISTENT  0x2u  /* data may be kept after the upcall returns;
                                      with RNDV: the payload comes (or came)
                                      into this process, held by the
                                      transport until recv_data or release */

typedef struct fs_tl_rx {
    void      *desc;        /* what to pass to recv_data / release */
    unsigned   flags;
} fs_tl_rx_t;

typedef struct fs_tl_upcalls {
    /* An active message arrived.  Returns FS_INPROGRESS if the engine keeps
     * rx->desc (it will call recv_data or release later), FS_OK otherwise. */
    fs_status_t (*am_recv)(void *arg, unsigned am_id, const void *hdr,
                           size_t hdr_len, void *data, size_t len,
                           const fs_tl_rx_t *rx);
    /* The endpoint failed; row is the classification of the transport's
     * status (src/failure/classify). Called at most once per endpoint. */
    void (*ep_error)(void *arg, void *ep_user, const fs_fault_row_t *row);
} fs_tl_upcalls_t;

typedef struct fs_tl_config {
    const fs_dt_ops_t    *dt_ops;
    int                   multi_thread;
    int                   keepalive_ms;
    int                   fifo_size;
    size_t                cma_seg_size;
    size_t                frag_max;      /* UCX: pushed fragments up to this */
    size_t                fast_max;      /* FS_TL_SEND_FAST sends go up to this */
    size_t                shm_max;       /* UCX: the short lane up to this; 0: none */
    int                   shm_rndv;      /* UCX: own rendezvous on the lane */
    size_t                estimated_eps;
    size_t                local_peers;   /* other processes of this node; 0: unknown */
    const char           *ofi_provider;  /* OFI: provider name, "" for any */
} fs_tl_config_t;

typedef struct fs_tl_ops {
    const char *name;

    fs_status_t (*init)(const fs_tl_config_t *config, const fs_tl_upcalls_t *up,
                        void *up_arg, fs_tl_t **tl_p);
    void        (*fini)(fs_tl_t *tl);
    /* Opaque address for the out-of-band exchange (modex); owned by tl. */
    fs_status_t (*address)(fs_tl_t *tl, const void **addr_p, size_t *len_p);

    fs_status_t (*ep_create)(fs_tl_t *tl, const void *addr, size_t addr_len,
                             void *ep_user, fs_tl_ep_t **ep_p);
    /* Flushes (force == 0) or aborts the endpoint; op->cb when done.  Returns
     * FS_OK if already done. */
    fs_status_t (*ep_close)(fs_tl_t *tl, fs_tl_ep_t *ep, int force,
                            fs_tl_op_t *op);
    /* Completes the endpoint's connection setup and what was sent on it;
     * op->cb when done.  Returns FS_OK if already done, an error if its
     * link is broken.  Optional (NULL: nothing to set up). */
    fs_status_t (*ep_flush)(fs_tl_t *tl, fs_tl_ep_t *ep, fs_tl_op_t *op);
    /* Replaces the link of an endpoint whose connection setup failed with a
     * new connect to the same address; the old link's operations end (with
     * an error) and its errors are no longer reported.  Optional (NULL: a
     * failed connect is not retried). */
    fs_status_t (*ep_reconnect)(fs_tl_t *tl, fs_tl_ep_t *ep);

    /* Returns FS_OK if complete (no callback), FS_INPROGRESS (callback
     * later), or an error.  hdr must stay valid until completion. */
    fs_status_t (*am_send)(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id,
                           const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                           unsigned flags, fs_tl_op_t *op);
    /* Fetches a message kept from am_recv into buf; msg_len is the sender's
     * length and may exceed buf->len (truncation drops the excess). */
    fs_status_t (*recv_data)(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                             size_t msg_len, fs_tl_op_t *op);
    /* Gives back a descriptor the engine does not fetch from (a rendezvous
     * sender is then told it is done).  Inside the am_recv call of that same
     * descriptor it only records that the engine drops it: the transport
     * frees it when am_recv returns FS_OK, never twice. */
    void        (*release)(fs_tl_t *tl, void *desc);
    /* Whether the payload of a descriptor kept from am_recv (RNDV and
     * PERSISTENT) has wholly arrived in this process, so that its sender's
     * failure cannot lose it (dead-peer rule a).  Optional (NULL: never). */
    int         (*desc_whole)(fs_tl_t *tl, const void *desc);
    /* Asks an in-flight operation to finish early; its callback still runs. */
    void        (*cancel)(fs_tl_t *tl, fs_tl_op_t *op);

    unsigned    (*progress)(fs_tl_t *tl);
    /* Delivers (am_recv) what already sits in this process's receive
     * queues, before a peer's failure decided elsewhere (the detector) is
     * applied: what the peer sent before dying is then delivered, not
     * discarded as late (dead-peer rules a, b).  Not from inside progress.
     * Optional (NULL: progress takes a queue whole). */
    void        (*drain)(fs_tl_t *tl);
    /* Hands to the fabric, within timeout seconds, what the transport still
     * holds in this process (sends queued, or kept by a provider until it
     * is progressed), running no callback.  Optional (NULL: sends leave
     * inside the call, as UCX's).  Fault injection's kill uses it, so that
     * a process dies after the message it counted has left. */
    void        (*tx_flush)(fs_tl_t *tl, double timeout);
    /* Names what the endpoint's traffic goes over, "transport/device"
     * entries separated by commas (UCX: its lanes, e.g. "tcp/eth0,cma/
     * memory"; OFI: "provider/domain"), for reports; a slow call.
     * Optional (NULL: not known). */
    fs_status_t (*ep_describe)(fs_tl_t *tl, fs_tl_ep_t *ep, char *buf, size_t len);
} fs_tl_ops_t;

extern const fs_tl_ops_t fs_tl_ucx_ops;
extern const fs_tl_ops_t fs_tl_ofi_ops;

#endif
