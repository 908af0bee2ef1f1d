/* OFI transport internals (src/transport/ofi*.c only).
 *
 * One FI_EP_RDM endpoint per process, one CQ, one AV.  Every byte goes
 * through memory the transport owns and registered once: send slots (eager
 * messages, rendezvous requests and fragments) and receive buffers.
 * No provider rendezvous and no RMA: a provider never reads or writes user
 * memory, so a buffer handed back to the user after a peer failed can never
 * be touched again, and no provider rendezvous receive can match a dead
 * peer's message (tcp;ofi_rxm crashes there).  Large messages are failstop's
 * own rendezvous: RTS -> CTS (the receiver says how much it wants) -> DATA
 * fragments pushed by the sender, copied into the receive buffer.
 *
 * All engine callbacks run from progress (tl->done), never inside the call
 * that started or ended an operation. */
#ifndef FS_TRANSPORT_OFI_INT_H
#define FS_TRANSPORT_OFI_INT_H

#include "transport/tl.h"
#include "common/fs_list.h"
#include "common/fs_mpool.h"

#include <rdma/fabric.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>

/* ---- wire ---------------------------------------------------------------- */

enum {
    FS_OFI_EAGER = 1,   /* wire + engine header + data */
    FS_OFI_RTS   = 2,   /* fs_ofi_rts_t + sender address + engine header */
    FS_OFI_CTS   = 3,   /* fs_ofi_cts_t */
    FS_OFI_DATA  = 4,   /* fs_ofi_data_t + payload */
    FS_OFI_HELLO = 5    /* wire (aux: address length) + sender address */
};

#define FS_OFI_CTS_DROP 0x1u    /* the receiver does not want the data */

typedef struct fs_ofi_wire {
    uint8_t  type;
    uint8_t  am_id;
    uint16_t hdr_len;   /* engine header bytes (EAGER, RTS) */
    uint32_t aux;       /* RTS: sender address length; CTS: flags */
} fs_ofi_wire_t;

typedef struct fs_ofi_rts {
    fs_ofi_wire_t w;
    uint64_t      len;  /* message bytes */
    uint64_t      sid;  /* sender's rendezvous id */
} fs_ofi_rts_t;

typedef struct fs_ofi_cts {
    fs_ofi_wire_t w;
    uint64_t      sid;
    uint64_t      rid;  /* receiver's rendezvous id, for the fragments */
    uint64_t      want; /* bytes to send (the receive buffer may be shorter) */
} fs_ofi_cts_t;

typedef struct fs_ofi_data {
    fs_ofi_wire_t w;
    uint64_t      rid;
    uint64_t      offset;
} fs_ofi_data_t;

#define FS_OFI_HDR_MAX   128u   /* largest engine header */
#define FS_OFI_ADDR_MAX  128u   /* largest provider address */
#define FS_OFI_WINDOW    16u    /* fragments of one rendezvous in flight */
#define FS_OFI_BATCH     16     /* CQ entries read at once */
#define FS_OFI_STASH     64     /* completions fs_ofi_tx_flush can hold */
#define FS_OFI_HOLD_S    0.5    /* how long an acceptor waits for HELLO */

/* ---- objects ------------------------------------------------------------ */

enum { FS_OFI_CTX_SLOT = 1, FS_OFI_CTX_RBUF = 2 };

/* Every operation context starts with the provider's scratch space
 * (FI_CONTEXT / FI_CONTEXT2 modes), then says what it is. */
typedef struct fs_ofi_ctx {
    struct fi_context2 fi;
    uint8_t            kind;
} fs_ofi_ctx_t;

typedef struct fs_ofi_slot {
    fs_ofi_ctx_t     ctx;
    fs_list_t        elem;      /* free list, or its peer's pending or posted */
    fs_tl_ep_t      *peer;
    fs_tl_op_t      *op;        /* the engine's eager send, completed with it */
    uint64_t         sid;       /* DATA: the rendezvous it belongs to */
    size_t           len;
    uint8_t          delivery;  /* complete when the peer's provider has it */
    void            *desc;      /* memory registration descriptor or NULL */
    uint8_t         *buf;
} fs_ofi_slot_t;

typedef struct fs_ofi_rbuf {
    fs_ofi_ctx_t     ctx;
    uint8_t         *mem;       /* slot_size bytes */
    void            *desc;
} fs_ofi_rbuf_t;

enum {
    FS_OFI_RNDV_HELD = 1,       /* rx: RTS given to the engine */
    FS_OFI_RNDV_RELEASED,       /* rx: released inside its own upcall */
    FS_OFI_RNDV_FETCHING,       /* rx: CTS sent, fragments arriving */
    FS_OFI_RNDV_WAIT_CTS,       /* tx: RTS sent */
    FS_OFI_RNDV_PUSH,           /* tx: sending fragments */
    FS_OFI_RNDV_DONE            /* on tl->done, callback pending */
};

/* One rendezvous, either side. */
typedef struct fs_ofi_rndv {
    fs_list_t        elem;      /* its peer's rndv list, then tl->done */
    fs_tl_ep_t      *peer;
    fs_tl_op_t      *op;        /* the engine's operation, if any */
    fs_buf_t         buf;
    uint64_t         id;        /* ours (tx: sid, rx: rid) */
    uint64_t         remote_id; /* theirs */
    size_t           total;     /* message bytes */
    size_t           want;      /* bytes to move */
    size_t           done;      /* tx: bytes packed; rx: bytes received */
    unsigned         frags;     /* tx: fragments in flight */
    uint8_t          state;
    uint8_t          is_tx;
    fs_status_t      status;    /* reported from tl->done */
} fs_ofi_rndv_t;

/* One remote process (address); the engine's endpoint while user != NULL. */
struct fs_tl_ep {
    fs_tl_t         *tl;
    fi_addr_t        addr;
    void            *user;
    fs_list_t        hash;      /* bucket chain */
    fs_list_t        pending;   /* slots refused with -FI_EAGAIN, in order */
    fs_list_t        pend_elem; /* on tl->pending_peers while pending */
    fs_list_t        rndv;      /* rendezvous in progress with this peer */
    fs_list_t        posted;    /* slots the provider holds */
    unsigned         tx_rndv;   /* sending rendezvous among rndv */
    uint8_t          failed;    /* no more traffic: error or forced close */
    uint8_t          reported;  /* ep_error was called */
    uint8_t          hello_seen;    /* the peer connected to us */
    uint8_t          hello_sent;    /* we connected to the peer */
    uint8_t          hold;          /* acceptor: sends wait for HELLO */
    double           hold_until;
    fs_status_t      fail_status;
    const fs_fault_row_t *fail_row; /* NULL: closed by the engine, not failed */
    fs_list_t        report_elem;   /* on tl->report until ep_error is called */
    fs_tl_op_t      *close_op;  /* a flushing close waits for quiescence */
    fs_list_t        close_elem;
    size_t           name_len;
    uint8_t          name[FS_OFI_ADDR_MAX];
};

typedef struct fs_ofi_prov {
    const char      *name;      /* fi_fabric_attr.prov_name */
    size_t           eager_max; /* largest message sent in one piece */
    uint32_t         fault_ctx; /* how to read its errors (classify) */
    int              verified;  /* tested on this project's machines */
    int              conn;      /* connection-based (TCP): see fs_ofi_connect */
    int              kernel_tx; /* a plain send completion means "written into
                                 * the kernel's socket": see fs_ofi_open */
} fs_ofi_prov_t;

#define FS_OFI_HASH 256

typedef struct fs_ofi_idtab {
    void           **obj;
    uint32_t        *gen;
    uint32_t        *free_idx;
    uint32_t         nfree;
    uint32_t         size;
} fs_ofi_idtab_t;

struct fs_tl {
    struct fi_info     *info;
    struct fid_fabric  *fabric;
    struct fid_domain  *domain;
    struct fid_ep      *ep;
    struct fid_cq      *cq;
    struct fid_av      *av;
    const fs_ofi_prov_t *prov;
    fs_tl_upcalls_t     up;
    void               *up_arg;
    const fs_dt_ops_t  *dt_ops;
    int                 mr_local;   /* FI_MR_LOCAL: pass descriptors */
    uint64_t            mr_key;     /* next requested key (no FI_MR_PROV_KEY) */
    size_t              eager_max;  /* engine header + data of one EAGER */
    size_t              slot_size;
    uint8_t             name[FS_OFI_ADDR_MAX];
    size_t              name_len;
    fs_list_t           buckets[FS_OFI_HASH];
    fs_list_t           pending_peers;
    fs_list_t           report;     /* failed peers whose ep_error is due */
    fs_list_t           closing;
    fs_list_t           done;
    fs_list_t           free_slots;
    void               *chunks;     /* slot chunks, linked through the first word */
    unsigned            nchunks;
    fs_mpool_t          rndvs;
    fs_ofi_idtab_t      ids;
    fs_ofi_rbuf_t      *rbufs;      /* posted receives */
    unsigned            nrbufs;
    uint8_t            *rmem;
    struct fid_mr      *rmr;
    fs_ofi_rndv_t      *cb_rndv;    /* the RTS whose upcall runs now */
    struct fi_cq_data_entry stash[FS_OFI_STASH];
    unsigned            nstash;
    unsigned            warned;     /* malformed-message warnings given */
};

/* ofi_lib.c: libfabric's exported functions, loaded by fs_ofi_lib_open
 * (call nothing else of libfabric by name: libfailstop.so does not link it) */
typedef int (*fs_ofi_getinfo_fn)(uint32_t version, const char *node, const char *service,
                                 uint64_t flags, const struct fi_info *hints,
                                 struct fi_info **info);
typedef void (*fs_ofi_freeinfo_fn)(struct fi_info *info);
typedef struct fi_info *(*fs_ofi_dupinfo_fn)(const struct fi_info *info);
typedef int (*fs_ofi_fabric_fn)(struct fi_fabric_attr *attr, struct fid_fabric **fabric,
                                void *context);
typedef const char *(*fs_ofi_strerror_fn)(int errnum);

typedef struct fs_ofi_lib {
    fs_ofi_getinfo_fn   getinfo;
    fs_ofi_freeinfo_fn  freeinfo;
    fs_ofi_dupinfo_fn   dupinfo;
    fs_ofi_fabric_fn    fabric;
    fs_ofi_strerror_fn  strerror;
} fs_ofi_lib_t;

extern fs_ofi_lib_t fs_ofi_lib;
fs_status_t   fs_ofi_lib_open(void);
const char   *fs_ofi_strerror(int err);

/* ofi.c */
fs_status_t   fs_ofi_mr_reg(fs_tl_t *tl, void *mem, size_t len, struct fid_mr **mr_p,
                            void **desc_p);
fs_tl_ep_t   *fs_ofi_peer_get(fs_tl_t *tl, const void *name, size_t len);
void          fs_ofi_peer_fail(fs_tl_t *tl, fs_tl_ep_t *peer, const fs_fault_row_t *row);
void          fs_ofi_bad(fs_tl_t *tl, const char *what);

/* ofi_tx.c */
fs_status_t   fs_ofi_slots_grow(fs_tl_t *tl);
fs_ofi_slot_t *fs_ofi_slot_get(fs_tl_t *tl);
void          fs_ofi_slot_put(fs_tl_t *tl, fs_ofi_slot_t *slot);
void          fs_ofi_slots_free(fs_tl_t *tl);
fs_status_t   fs_ofi_post(fs_tl_t *tl, fs_tl_ep_t *peer, fs_ofi_slot_t *slot);
void          fs_ofi_send_done(fs_tl_t *tl, fs_ofi_slot_t *slot, const fs_fault_row_t *row);
unsigned      fs_ofi_retry_pending(fs_tl_t *tl);
void          fs_ofi_drop_sends(fs_tl_t *tl, fs_tl_ep_t *peer, fs_status_t status);
fs_status_t   fs_ofi_am_send(fs_tl_t *tl, fs_tl_ep_t *peer, unsigned am_id,
                             const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                             unsigned flags, fs_tl_op_t *op);

/* ofi_rndv.c */
fs_status_t   fs_ofi_rndv_send(fs_tl_t *tl, fs_tl_ep_t *peer, unsigned am_id,
                               const void *hdr, size_t hdr_len, const fs_buf_t *buf,
                               fs_tl_op_t *op);
void          fs_ofi_rndv_push_done(fs_tl_t *tl, fs_ofi_slot_t *slot);
void          fs_ofi_rx_rts(fs_tl_t *tl, const uint8_t *msg, size_t len);
void          fs_ofi_rx_cts(fs_tl_t *tl, const uint8_t *msg, size_t len);
void          fs_ofi_rx_data(fs_tl_t *tl, const uint8_t *msg, size_t len);
void          fs_ofi_op_done(fs_tl_t *tl, fs_tl_op_t *op, fs_status_t status);
void          fs_ofi_rndv_finish(fs_tl_t *tl, fs_ofi_rndv_t *r, fs_status_t status);
void          fs_ofi_rndv_fail_peer(fs_tl_t *tl, fs_tl_ep_t *peer, fs_status_t status);
unsigned      fs_ofi_rndv_report(fs_tl_t *tl);
fs_status_t   fs_ofi_recv_data(fs_tl_t *tl, void *desc, const fs_buf_t *buf,
                               size_t msg_len, fs_tl_op_t *op);
void          fs_ofi_release(fs_tl_t *tl, void *desc);
void          fs_ofi_cancel(fs_tl_t *tl, fs_tl_op_t *op);

/* ofi_ids.c: ids that a message from the network can name safely */
fs_status_t   fs_ofi_id_alloc(fs_ofi_idtab_t *t, void *obj, uint64_t *id_p);
void         *fs_ofi_id_find(const fs_ofi_idtab_t *t, uint64_t id);
void          fs_ofi_id_free(fs_ofi_idtab_t *t, uint64_t id);
void          fs_ofi_id_cleanup(fs_ofi_idtab_t *t);

#endif
