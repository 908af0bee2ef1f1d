/* UCX transport internals shared by its files: ucx.c (UCP setup, eager and
 * UCP rendezvous, endpoints) and ucx_frag.c (pushed fragments for medium
 * messages). */
#ifndef FS_TRANSPORT_UCX_INT_H
#define FS_TRANSPORT_UCX_INT_H

#include "transport/tl.h"
#include "transport/shm_ring.h"
#include "common/fs_list.h"
#include "common/fs_mpool.h"

#include <ucp/api/ucp.h>
#include <ucs/debug/log_def.h>

#include <stdarg.h>

#include <stdint.h>
#include <string.h>

/* Active-message ids of the transport's own, after the engine's. */
enum {
    FS_UCX_AM_FRAG_FIRST = FS_AM_COUNT,   /* fs_ucx_frag_hdr_t + engine header */
    FS_UCX_AM_FRAG_NEXT                    /* fs_ucx_frag_hdr_t */
};

/* Payload bytes per fragment: one single-fragment eager message with its
 * headers (UCP's 8, ours up to FS_UCX_FRAG_HDR_MAX) inside UCX's default
 * 8 KiB segment of shared memory (8256) and of TCP (8192); a larger one
 * would go as UCX's multi-fragment eager, which the receiver reassembles in
 * a buffer it mallocs. */
#define FS_UCX_FRAG_PIECE     8000u
/* Up to this, UCX 1.13's own single-fragment eager carries a message over
 * shared memory (8 KiB and headers fit its segment): splitting it would
 * send two where one goes (osu_bw 8 KiB: 0.73x pml ucx split, 1.08x
 * whole).  From UCX 1.16 failstop sets RNDV_THRESH to 8 KiB (ucx.c), so
 * there fragments start above one fragment instead. */
#define FS_UCX_FRAG_EAGER_MAX 8192u
#define FS_UCX_FRAG_PIECES    64u      /* most fragments of one message */
#define FS_UCX_FRAG_HDR_MAX   64u      /* largest engine header carried */
#define FS_UCX_FRAG_BUCKETS   64u

/* Wire header of every fragment.  `word` is the total length in the first
 * fragment and the offset of the data in the others. */
typedef struct fs_ucx_frag_hdr {
    uint64_t  sender;       /* the sending transport's random id */
    uint32_t  msg;          /* that sender's count of fragmented messages */
    uint32_t  word;
} fs_ucx_frag_hdr_t;

typedef struct fs_ucx_frag_rx fs_ucx_frag_rx_t;
typedef struct fs_ucx_frag_tx fs_ucx_frag_tx_t;

typedef struct fs_ucx_frag {
    uint64_t    self_id;
    uint32_t    next_msg;
    size_t      min;            /* fragment messages from this size */
    size_t      max;            /* up to this; 0: never */
    fs_mpool_t  rx_pool;
    fs_mpool_t  tx_pool;
    fs_list_t   rx_hash[FS_UCX_FRAG_BUCKETS];   /* receives not yet complete */
    fs_list_t   rx_kept;        /* complete, held until fetched or released */
    fs_list_t   tx_live;        /* sends UCX still holds fragments of */
    uint64_t    dropped;        /* fragments of nothing known (logged once) */
} fs_ucx_frag_t;

/* The short lane (ucx_shm.c): failstop's own shared-memory rings beside
 * UCP, one per pair of processes (shm_ring.h says why not a shared FIFO). */
typedef struct fs_ucx_shm {
    fs_ring_rx_t            rx;         /* rx.base NULL: no lane */
    size_t                  max;        /* payload bytes a lane message carries */
    size_t                  max_waited; /* ... if its sender waits for it */
    uint64_t                node;       /* who may share it (ucx_shm.c) */
    const char             *name;       /* for reports: "ring" */
    unsigned                busy_polls; /* progress calls the lane had work */
} fs_ucx_shm_t;

/* Ring tag of a rendezvous request on the short lane (ucx_rndv.c); the
 * active-message ids stay below it. */
#define FS_UCX_RING_RTS 0x80u

/* Wire: a rendezvous request's payload in its ring entry, after the engine
 * header (ucx_rndv.c). */
typedef struct fs_ucx_rr_rts {
    uint64_t  addr;
    uint64_t  len;
    int32_t   pid;
    uint32_t  word;
    uint32_t  gen;
    uint32_t  pad;
} fs_ucx_rr_rts_t;

/* The lane's own rendezvous (ucx_rndv.c). */
typedef struct fs_ucx_rr {
    int          on;         /* this process's sends may use it */
    int32_t      pid;
    uint32_t     gen;        /* the last request's generation */
    fs_mpool_t   tx_pool;
    fs_mpool_t   rx_pool;
    fs_list_t    pending;    /* sends waiting for their answer */
    void        *cb_rx;      /* the request whose upcall runs now */
    uint8_t     *bounce;     /* non-contiguous receives unpack from here */
} fs_ucx_rr_t;

struct fs_tl {
    ucp_context_h           context;
    ucp_worker_h            worker;
    ucp_address_t          *address;
    size_t                  address_len;
    uint8_t                *wire_addr;    /* for the modex: ucx_shm.c's layout */
    size_t                  wire_len;
    fs_tl_upcalls_t         up;
    void                   *up_arg;
    const fs_dt_ops_t      *dt_ops;
    ucp_datatype_t          generic_dt;   /* packs/unpacks via dt_ops, drops excess */
    fs_mpool_t              dt_states;
    uint32_t                fault_ctx;    /* FS_FAULT_CTX_SLOW_LINK or 0 */
    void                   *cb_desc;      /* desc of the AM callback running
                                             now (rendezvous or persistent) */
    fs_list_t               closing;      /* fs_tl_ep_t whose close is in flight */
    fs_ucx_frag_t           frag;
    fs_ucx_shm_t            shm;
    fs_ucx_rr_t             rr;
};

struct fs_tl_ep {
    ucp_ep_h                ep;
    fs_ring_tx_t            lane;         /* the short lane to a peer of this node
                                             (lane.ring NULL: none) */
    fs_tl_t                *tl;
    void                   *user;
    int                     failed;
    void                   *close_req;    /* the close in flight (on tl->closing) */
    fs_list_t               elem;
    size_t                  addr_len;
    uint8_t                 addr[];       /* the peer's, for a reconnect */
};

/* Private area inside every request UCX allocates (ucp_params.request_size):
 * lets a completion callback find its transport.  tl is NULL while the
 * request is not tracked by us: a callback that finds it NULL runs inside the
 * call that started the operation (UCX does that when a rendezvous receive
 * or a close fails at once), so it only records the result for
 * fs_ucx_op_track, which then reports the operation as finished. */
typedef struct fs_ucx_req {
    fs_tl_t      *tl;
    fs_tl_ep_t   *closing;       /* ep_close: freed when the close completes */
    size_t        inline_length;
    ucs_status_t  inline_status;
    uint8_t       inline_done;
} fs_ucx_req_t;

fs_status_t fs_ucx_status(const fs_tl_t *tl, ucs_status_t status);
/* ucx_setup.c.  UCX_TLS names of shared memory; whether UCX_TLS allows one
 * of names; the UCX library's version; the UCP context with failstop's
 * settings; the filter on UCX's error log (pushed once per process). */
extern const char *const fs_ucx_mm_tls[];
int         fs_ucx_tls_allows(const char *const *names);
int         fs_ucx_version_at_least(unsigned want_major, unsigned want_minor);
fs_status_t fs_ucx_context_create(fs_tl_t *tl, const fs_tl_config_t *cfg);
ucs_log_func_rc_t fs_ucx_log(const char *file, unsigned line, const char *function,
                             ucs_log_level_t level,
                             const ucs_log_component_config_t *comp_conf,
                             const char *message, va_list ap);
fs_status_t fs_ucx_req_claim(fs_tl_t *tl, ucs_status_ptr_t request);
/* UCP's error handler of an endpoint (arg: its fs_tl_ep_t) */
void        fs_ucx_ep_err_cb(void *arg, ucp_ep_h ep, ucs_status_t status);

/* A completion callback of a request not (or no longer) tracked: it ran
 * inside the call that started it, or after the transport ended; only the
 * result is recorded, for fs_ucx_req_claim.  Returns 1 if so. */
static inline int fs_ucx_req_inline(fs_ucx_req_t *ureq, ucs_status_t status, size_t length)
{
    if (ureq->tl != NULL) {
        return 0;
    }
    ureq->inline_status = status;
    ureq->inline_length = length;
    ureq->inline_done   = 1;
    return 1;
}

/* ucx_frag.c.  Descriptors and op handles of fragmented messages are their
 * state's address with the top bit set, those of the lane's rendezvous with
 * the top two (no user-space address has either: x86-64, aarch64 Linux):
 * release, recv_data and cancel tell them from UCX's own by those bits. */
fs_status_t fs_ucx_frag_init(fs_tl_t *tl, size_t min, size_t max);
void        fs_ucx_frag_fini(fs_tl_t *tl);
fs_status_t fs_ucx_frag_set_handlers(fs_tl_t *tl);

/* Blocking sends only: a nonblocking sender goes on while a rendezvous
 * waits, and its single copy wins a stream (osu_bw 64 KiB: 0.95x pml ucx
 * by rendezvous, 0.74x by fragments, which fill the shared-memory FIFO
 * nine entries a message). */
static inline int fs_ucx_frag_wants(const fs_tl_t *tl, unsigned am_id, size_t hdr_len,
                                    const fs_buf_t *buf, unsigned flags)
{
    return (buf->len >= tl->frag.min) && (buf->len <= tl->frag.max) &&
           (am_id == FS_AM_MATCH) && (buf->dt == NULL) &&
           (hdr_len <= FS_UCX_FRAG_HDR_MAX) &&
           ((flags & (FS_TL_SEND_WAITED | FS_TL_SEND_RNDV | FS_TL_SEND_EAGER)) ==
            FS_TL_SEND_WAITED);
}

static inline int fs_ucx_frag_is(const void *desc_or_handle)
{
    return ((uintptr_t)desc_or_handle >> 62) == 2;
}

static inline int fs_ucx_rr_is(const void *desc_or_handle)
{
    return ((uintptr_t)desc_or_handle >> 62) == 3;
}

fs_status_t fs_ucx_frag_send(fs_tl_t *tl, fs_tl_ep_t *tep, const void *hdr,
                             size_t hdr_len, const fs_buf_t *buf, unsigned flags,
                             fs_tl_op_t *op);
fs_status_t fs_ucx_frag_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                  fs_tl_op_t *op);
void        fs_ucx_frag_release(fs_tl_t *tl, void *desc);
int         fs_ucx_frag_whole(const void *desc);
void        fs_ucx_frag_cancel(fs_tl_t *tl, fs_tl_op_t *op);

/* ucx_shm.c.  The transport's address: this header, UCP's worker address,
 * the lane's device address, its interface address (both lengths 0: no
 * lane). */
typedef struct fs_ucx_addr_hdr {
    uint32_t  ucp_len;
    uint16_t  lane_len;     /* sizeof(fs_ring_addr_t), or 0: no lane */
    uint16_t  pad0;
    uint64_t  node;         /* fs_ucx_shm_node(): the lane needs the same */
    uint32_t  max;          /* who sends what by the lane: the same too */
    uint32_t  max_waited;
} fs_ucx_addr_hdr_t;

void        fs_ucx_shm_init(fs_tl_t *tl, const fs_tl_config_t *cfg);
/* Bytes of data area per ring for a node of local_peers other processes. */
size_t      fs_ucx_shm_data_size(size_t local_peers);
/* Entries per ring for a node of local_peers other processes. */
unsigned    fs_ucx_shm_entries(size_t local_peers, unsigned fifo_size);
void        fs_ucx_shm_fini(fs_tl_t *tl);
void        fs_ucx_shm_drain(fs_tl_t *tl);
unsigned    fs_ucx_shm_poll(fs_tl_t *tl);
void        fs_ucx_shm_ep_create(fs_tl_t *tl, fs_tl_ep_t *tep);
void        fs_ucx_shm_ep_destroy(fs_tl_ep_t *tep);
fs_status_t fs_ucx_addr_pack(fs_tl_t *tl);
const ucp_address_t *fs_ucx_addr_ucp(const uint8_t *addr, size_t len);

/* Sends a matching message by the short lane if it is one for it:
 * contiguous, to a peer of this node, small (shm.max), or medium
 * (shm.max_waited) and sent by a blocking call of a collective (FAST) or
 * when the lane has no rendezvous.  A medium point-to-point send goes by
 * the lane's rendezvous instead (ucx_rndv.c): one copy, osu_latency 16-64
 * KiB 0.45-0.5x pml ucx against 0.95-1.2x as two copies; a collective's
 * exchange (both sides send, then wait) gains from completing at once
 * (osu_allreduce 32-64 KiB 0.7-1.0x eagerly, 1.1-1.75x by rendezvous).
 * 0: not sent (not for the lane, or the peer's ring is full). */
#define FS_UCX_SHM_HDR_MAX 64u

static inline int fs_ucx_shm_send(const fs_tl_t *tl, fs_tl_ep_t *tep, unsigned am_id,
                                  const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                                  unsigned flags)
{
    if ((tep->lane.ring == NULL) || (am_id != FS_AM_MATCH) || (hdr_len > FS_UCX_SHM_HDR_MAX) ||
        (buf->dt != NULL) || (flags & FS_TL_SEND_RNDV)) {
        return 0;
    }
    if ((buf->len > tl->shm.max) &&
        ((buf->len > tl->shm.max_waited) || !(flags & FS_TL_SEND_WAITED) ||
         (tl->rr.on && !(flags & FS_TL_SEND_FAST)))) {
        return 0;
    }
    return fs_ring_send(&tep->lane, am_id, hdr, hdr_len, buf->ptr, buf->len);
}

/* ucx_rndv.c: the lane's own single-copy rendezvous, for a contiguous
 * matching message to a peer of this node that the lane does not take
 * eagerly (above its sizes, or synchronous). */
static inline int fs_ucx_rr_wants(const fs_tl_t *tl, const fs_tl_ep_t *tep, unsigned am_id,
                                  size_t hdr_len, const fs_buf_t *buf, unsigned flags)
{
    return (tep->lane.ring != NULL) && tl->rr.on && (am_id == FS_AM_MATCH) &&
           (hdr_len <= FS_UCX_SHM_HDR_MAX) && (buf->dt == NULL) &&
           !(flags & (FS_TL_SEND_IMM | FS_TL_SEND_EAGER));
}

fs_status_t fs_ucx_rr_init(fs_tl_t *tl, const fs_tl_config_t *cfg);
void        fs_ucx_rr_fini(fs_tl_t *tl);
/* FS_INPROGRESS, or FS_ERR_AGAIN: not sent (no word or no room): UCP's
 * rendezvous takes it. */
fs_status_t fs_ucx_rr_send(fs_tl_t *tl, fs_tl_ep_t *tep, const void *hdr, size_t hdr_len,
                           const fs_buf_t *buf, fs_tl_op_t *op);
/* A request from the ring of slot; 0 if malformed (its length, or a word
 * outside its ring's): the caller reports it as any malformed entry. */
int         fs_ucx_rr_rts_in(fs_tl_t *tl, uint32_t slot, const void *hdr, size_t hlen,
                             const void *data, size_t len);
fs_status_t fs_ucx_rr_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                                size_t msg_len);
void        fs_ucx_rr_release(fs_tl_t *tl, void *desc);
void        fs_ucx_rr_cancel(fs_tl_t *tl, fs_tl_op_t *op);
unsigned    fs_ucx_rr_progress(fs_tl_t *tl);
void        fs_ucx_rr_ep_close(fs_tl_t *tl, fs_tl_ep_t *tep);

#endif
