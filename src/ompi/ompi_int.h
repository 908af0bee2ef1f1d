/* The PML component, for Open MPI 4.1 and 5.x (compat.h and rte_*.c hold
 * what differs).  This directory is the only code that sees Open MPI
 * internals; it adapts MPI requests, datatypes, communicators and processes
 * to the core engine (src/proto/core.h). */
#ifndef FS_OMPI_INT_H
#define FS_OMPI_INT_H

#include "ompi_config.h"   /* must come first */

#include "ompi/compat.h"

#include "ompi/communicator/communicator.h"
#include "ompi/datatype/ompi_datatype.h"
#include "ompi/mca/pml/base/base.h"
#include "ompi/mca/pml/pml.h"
#include "ompi/message/message.h"
#include "ompi/proc/proc.h"
#include "ompi/request/request.h"
#include "opal/class/opal_free_list.h"
#include "opal/datatype/opal_convertor.h"

#include "common/fs_params.h"
#include "proto/core.h"

#include <stdatomic.h>

typedef enum fs_ompi_req_kind {
    FS_OMPI_REQ_SEND = 0,
    FS_OMPI_REQ_RECV
} fs_ompi_req_kind_t;

/* Datatype state of one request: a convertor positioned lazily, and a
 * reference on its datatype, which MPI lets the application free while the
 * operation is pending (the convertor reads its description until then). */
typedef struct fs_ompi_dt {
    opal_convertor_t   conv;
    size_t             position;
    ompi_datatype_t   *type;
} fs_ompi_dt_t;

typedef struct fs_ompi_req {
    ompi_request_t         ompi;          /* must be first */
    union {
        fs_send_t          send;
        fs_recv_t          recv;
    } core;
    uint8_t                kind;          /* fs_ompi_req_kind_t */
    uint8_t                persistent;
    uint8_t                free_called;   /* MPI released it; recycle when idle */
    uint8_t                has_conv;      /* dt.conv is prepared */
    uint8_t                core_pending;  /* the core operation has not completed */
    uint8_t                retained;      /* holds a reference on the communicator */
    uint8_t                pending_told;  /* completed as MPIX_ERR_PROC_FAILED_PENDING,
                                             still posted (anysource_pending) */
    mca_pml_base_send_mode_t mode;
    /* arguments kept for persistent requests and buffered sends */
    void                  *user_buf;
    size_t                 count;
    ompi_datatype_t       *datatype;
    int                    peer;
    int                    tag;
    void                  *bsend_buf;     /* MPI_Bsend: packed copy to release */
    fs_ompi_dt_t           dt;
} fs_ompi_req_t;

OBJ_CLASS_DECLARATION(fs_ompi_req_t);

/* Error codes failstop registered with Open MPI at pml_enable. */
typedef struct fs_ompi_errors {
    /* MPI_ERR_RANK_FAIL_STOP, also the code of every failure error:
     * programs written for ULFM compare the code with the class */
    int  fail_stop_class;
    int  revoked_class;       /* MPIX_ERR_REVOKED, also its code */
    int  pending_class;       /* MPIX_ERR_PROC_FAILED_PENDING, also its code */
    int  peer_left;           /* class MPI_ERR_OTHER: peer finalized */
} fs_ompi_errors_t;

typedef struct fs_ompi {
    mca_pml_base_module_t          super;
    const mca_base_component_t    *component;
    char                          *param_text[32];   /* MCA string storage */
    fs_params_t                    params;
    fs_engine_t                   *engine;
    opal_free_list_t               requests;
    ompi_request_t                 completed_req;   /* returned by sends that
                                                       finished at once */
    fs_ompi_errors_t               errors;
    int                            multi_thread;
    int                            enabled;
    int                            ready_marked;   /* pml.c fs_ompi_mark_ready */
    /* failure detector (detector.c); NULL when pml_failstop_hb_period_ms=0 */
    struct fs_hb                  *hb;
    fs_ep_t                      **world_eps;      /* by MPI_COMM_WORLD rank */
    uint32_t                       world_size;
    _Atomic unsigned char         *hb_failed;      /* set by the detector thread:
                                                       1 + its fs_det_cause_t */
    _Atomic unsigned               hb_epoch;
    unsigned                       hb_seen;
    unsigned char                  hb_cause;       /* 1 + the cause of the
                                                       verdict being applied */
    int                            hb_armed;
} fs_ompi_t;

extern fs_ompi_t fs_ompi;

/* entry points used by the component struct in component_shim.c: the only
 * symbols libfailstop.so exports besides the MPIX_ API */
FS_EXPORT int mca_pml_failstop_register(const mca_base_component_t *component);
FS_EXPORT int mca_pml_failstop_open(void);
/* coll.c, for coll_shim.c */
FS_EXPORT int mca_coll_failstop_init_query(bool enable_progress_threads, bool enable_mpi_threads);
FS_EXPORT mca_coll_base_module_t *
mca_coll_failstop_comm_query(struct ompi_communicator_t *comm, int *priority);
FS_EXPORT int mca_pml_failstop_close(void);
FS_EXPORT mca_pml_base_module_t *mca_pml_failstop_init(int *priority,
                                                       bool progress_threads,
                                                       bool mpi_threads);
FS_EXPORT int mca_pml_failstop_finalize(void);

/* detector.c */
int  fs_ompi_hb_init(void);
int  fs_ompi_hb_arm(void);
void fs_ompi_hb_note_proc(ompi_proc_t *proc, fs_ep_t *ep);
void fs_ompi_hb_apply(void);
void fs_ompi_hb_report(fs_ep_t *ep);
void fs_ompi_hb_fini(void);
/* host op fate_deadline: the detector's bound, 0 without a detector */
double fs_ompi_fate_deadline(void *host_arg, fs_ep_t *ep);
/* host ops remote and check: the detector's host view, fs_hb_check */
int    fs_ompi_remote(void *host_arg, fs_ep_t *ep);
void   fs_ompi_check(void *host_arg, fs_ep_t *ep);

static inline void fs_ompi_hb_poll(void)
{
    if (OPAL_UNLIKELY(fs_ompi.hb_seen !=
                      atomic_load_explicit(&fs_ompi.hb_epoch, memory_order_acquire))) {
        fs_ompi_hb_apply();
    }
}
/* fs_host_ops_t.poll: the same, in the waits the engine runs itself */
void fs_ompi_hb_poll_host(void *host_arg);

/* rte_orte.c (Open MPI 4.1) or rte_prrte.c (5.x): the runtime.
 * modex_recv: another process's published data; never waits for a process
 * that did not take part in MPI_Init's full exchange. */
int  fs_ompi_rte_publish(const char *key, const void *data, size_t len);
int  fs_ompi_modex_recv(const opal_process_name_t *name, const char *key, void **data,
                        size_t *len);
/* MPI_Abort's peers and the loss of the host's daemon (failure.c's init) */
void fs_ompi_rte_hooks_init(void);
void fs_ompi_rte_hooks_fini(void);

/* params.c */
int  fs_ompi_params_register(const mca_base_component_t *component);
int  fs_ompi_params_read(void);

/* errors.c */
int  fs_ompi_errors_register(void);
int  fs_ompi_error_slow(fs_status_t status);

static inline int fs_ompi_error(fs_status_t status)
{
    return (status == FS_OK) ? MPI_SUCCESS : fs_ompi_error_slow(status);
}

/* failure.c */
/* Under failstop-run ($FAILSTOP_STATUS_DIR): writes the file WHAT.RANK
 * holding code, a record the launcher's exit status is computed from. */
void fs_ompi_status_mark(const char *what, unsigned rank, int code);
void fs_ompi_peer_failed(void *host_arg, fs_ep_t *ep, fs_ep_t *reporter);
void fs_ompi_record_error(fs_status_t status, int code);
void fs_ompi_record_devices(void);

#ifdef FS_OMPI_V5
/* Open MPI 5's own ULFM calls over failstop (ulfm5.c, agree5.c) */
void fs_ompi_ulfm5_enable(void);
void fs_ompi_ulfm5_world_added(void);
int  fs_ompi_revoke_comm(ompi_communicator_t *comm, bool coll_only);
void fs_ompi_comm_revoked(void *host_comm);
void fs_ompi_ulfm5_failed(ompi_proc_t *proc);
void fs_ompi_ulfm5_anysrc_sync(ompi_communicator_t *comm);
void fs_ompi_ulfm5_anysrc_enabled(ompi_communicator_t *comm);
int  fs_ompi_coll_agree(void *contrib, int dt_count, struct ompi_datatype_t *dt,
                        struct ompi_op_t *op, struct ompi_group_t **group, bool update,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module);
int  fs_ompi_coll_iagree(void *contrib, int dt_count, struct ompi_datatype_t *dt,
                         struct ompi_op_t *op, struct ompi_group_t **group, bool update,
                         struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module);
#endif

void fs_ompi_abort(void *host_arg, fs_ep_t *from, int errcode);
void fs_ompi_excluded(void *host_arg, fs_ep_t *by);
void fs_ompi_inject(void *host_arg, int sig);
void fs_ompi_failure_init(void);
void fs_ompi_failure_fini(void);
void fs_ompi_mark(const char *what, int code);      /* this process's record */
/* The host's daemon is gone: ends this process as a failed one. */
__attribute__((noreturn)) void fs_ompi_runtime_end(void);
int  fs_ompi_runtime_is_watched(void);              /* between PML init and fini */
int  fs_ompi_inject_setup(const char *spec);
void fs_ompi_inject_hold(void);

/* Points of a process's life where pml_failstop_inject "RANK:at=PHASE" can
 * end it (tests of death inside each phase, docs/PARAMETERS.md). */
typedef enum fs_ompi_phase {
    FS_OMPI_PHASE_NONE = 0,
    FS_OMPI_PHASE_INIT,       /* MPI_Init: address published, before the modex */
    FS_OMPI_PHASE_WIREUP,     /* MPI_Init: endpoints to every process created */
    FS_OMPI_PHASE_COMM,       /* the first communicator created after MPI_Init
                                 is added to the PML (its creation is running) */
    FS_OMPI_PHASE_FINALIZE,   /* MPI_Finalize, before the departure is announced */
    FS_OMPI_PHASE_BYE         /* MPI_Finalize, right after the BYEs are sent */
} fs_ompi_phase_t;

extern fs_ompi_phase_t fs_ompi_inject_phase;
void fs_ompi_inject_phase_fire(void);

/* Ends this process here if pml_failstop_inject names this phase. */
static inline void fs_ompi_inject_point(fs_ompi_phase_t phase)
{
    if (OPAL_UNLIKELY(fs_ompi_inject_phase == phase) && (phase != FS_OMPI_PHASE_NONE)) {
        fs_ompi_inject_phase_fire();
    }
}

/* datatype.c */
size_t fs_ompi_dt_pack(void *dt, size_t offset, void *dst, size_t max);
size_t fs_ompi_dt_unpack(void *dt, size_t offset, const void *src, size_t len);
void fs_ompi_buf_prepare_conv(fs_ompi_req_t *req, const void *buf, size_t count,
                              ompi_datatype_t *datatype, int for_send, fs_buf_t *fbuf);
void fs_ompi_buf_release_conv(fs_ompi_req_t *req);

/* Describes (buf, count, datatype) as an fs_buf_t, preparing the convertor
 * for non-contiguous layouts (out of line: contiguous ones are per-message
 * work). */
static inline void fs_ompi_buf_prepare(fs_ompi_req_t *req, const void *buf, size_t count,
                                       ompi_datatype_t *datatype, int for_send,
                                       fs_buf_t *fbuf)
{
    if (OPAL_LIKELY(opal_datatype_is_contiguous_memory_layout(&datatype->super,
                                                              (int32_t)count))) {
        fs_buf_set_contig(fbuf, (char *)buf + datatype->super.true_lb,
                          datatype->super.size * count);
        return;
    }
    fs_ompi_buf_prepare_conv(req, buf, count, datatype, for_send, fbuf);
}

static inline void fs_ompi_buf_release(fs_ompi_req_t *req)
{
    if (OPAL_UNLIKELY(req->has_conv)) {
        fs_ompi_buf_release_conv(req);
    }
}

/* request.c */
fs_ompi_req_t *fs_ompi_req_get(fs_ompi_req_kind_t kind, ompi_communicator_t *comm,
                               int persistent);
void fs_ompi_req_put(fs_ompi_req_t *req);
int  fs_ompi_restart_blocked(fs_ompi_req_t *req);
/* A persistent request keeping its arguments (datatype and comm retained). */
fs_ompi_req_t *fs_ompi_req_persistent(fs_ompi_req_kind_t kind, void *buf, size_t count,
                                      ompi_datatype_t *datatype, int peer, int tag,
                                      ompi_communicator_t *comm);

static inline fs_req_t *fs_ompi_core(fs_ompi_req_t *req)
{
    return (req->kind == FS_OMPI_REQ_SEND) ? &req->core.send.super :
                                             &req->core.recv.super;
}
/* Statuses.  A request's own status carries the error (multiple-completion
 * calls report it there); the status of a single-completion call (recv,
 * mrecv, probe...) never has its MPI_ERROR field written: MPI leaves it to
 * the caller, and the error is the call's return value. */
void fs_ompi_status_from_recv(ompi_status_public_t *status, const fs_recv_t *rreq);
void fs_ompi_status_fill(ompi_status_public_t *status, const fs_recv_t *rreq);
/* Copies all but MPI_ERROR; status may be MPI_STATUS_IGNORE. */
void fs_ompi_status_copy(ompi_status_public_t *status, const ompi_status_public_t *from);
void fs_ompi_req_signal(ompi_request_t *req);
/* host op recv_pending (pml_failstop_anysource_pending) */
void fs_ompi_recv_pending(fs_recv_t *rreq, int pending);
void fs_ompi_req_complete(fs_ompi_req_t *req, fs_status_t status);
void fs_ompi_completed_req_init(void);
void fs_ompi_completed_req_fini(void);
extern const fs_host_ops_t fs_ompi_host_ops;

/* send.c / recv.c helpers */
int  fs_ompi_send_begin(fs_ompi_req_t *req);
int  fs_ompi_send_restart(fs_ompi_req_t *req);
int  fs_ompi_recv_restart(fs_ompi_req_t *req);

/* The size of comm's peers' group: the remote group of an
 * intercommunicator, the group of an intracommunicator (Open MPI's
 * ompi_comm_remote_size gives 0 there). */
static inline int fs_ompi_peer_size(const ompi_communicator_t *comm)
{
    return comm->c_remote_group->grp_proc_count;
}

/* pml.c */
static inline fs_comm_t *fs_ompi_comm(ompi_communicator_t *comm)
{
    return (fs_comm_t *)comm->c_pml_comm;
}

/* A wildcard receive on comm: MPI_ANY_SOURCE may have been acknowledged
 * through libmpi 5's own calls (ulfm5.c).  Only a failure's aftermath takes
 * the lock: the two flags differ. */
static inline void fs_ompi_anysrc_sync(ompi_communicator_t *comm, int src)
{
#ifdef FS_OMPI_V5
    if (OPAL_UNLIKELY(src == MPI_ANY_SOURCE) && comm->any_source_enabled &&
        OPAL_UNLIKELY(!fs_comm_any_source_enabled(fs_ompi_comm(comm)))) {
        fs_ompi_ulfm5_anysrc_sync(comm);
    }
#else
    (void)comm;
    (void)src;
#endif
}

/* Open MPI 4.1's communicator creation (CID agreement, comm_cid.c) runs
 * nonblocking allreduces from ompi_comm_request's progress callback, ignores
 * errors of completed subrequests and retries until all agree, forever once
 * the communicator is collectively inactive.  While such a request is active
 * (ompi_comm_request_progress_active, exported by libmpi) collective traffic
 * on an inactive communicator is refused at the start call, which ends the
 * agreement with an error (MPI_ERR_INTERN: Open MPI maps every error there).
 * Otherwise a collective start succeeds and fails at completion (17.7.3). */
extern bool ompi_comm_request_progress_active;

static inline int fs_ompi_coll_refused(int tag, ompi_communicator_t *comm)
{
    return OPAL_UNLIKELY(fs_mq_tag_is_coll(tag)) && ompi_comm_request_progress_active &&
           (!fs_comm_collectives_enabled(fs_ompi_comm(comm)) ||
            fs_comm_is_revoked(fs_ompi_comm(comm)));
}

/* The error of a refused collective start. */
static inline int fs_ompi_coll_refusal(ompi_communicator_t *comm)
{
    return fs_ompi_error(fs_comm_is_revoked(fs_ompi_comm(comm)) ? FS_ERR_REVOKED
                                                                  : FS_ERR_COLL_INACTIVE);
}
int  fs_ompi_progress(void);

/* send.c / recv.c / probe.c */
int mca_pml_failstop_isend_init(const void *buf, size_t count, ompi_datatype_t *datatype,
                                int dst, int tag, mca_pml_base_send_mode_t mode,
                                ompi_communicator_t *comm, ompi_request_t **request);
int mca_pml_failstop_isend(const void *buf, size_t count, ompi_datatype_t *datatype,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request);
int mca_pml_failstop_send(const void *buf, size_t count, ompi_datatype_t *datatype,
                          int dst, int tag, mca_pml_base_send_mode_t mode,
                          ompi_communicator_t *comm);
int mca_pml_failstop_irecv_init(void *buf, size_t count, ompi_datatype_t *datatype,
                                int src, int tag, ompi_communicator_t *comm,
                                ompi_request_t **request);
int mca_pml_failstop_irecv(void *buf, size_t count, ompi_datatype_t *datatype,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request);
int mca_pml_failstop_recv(void *buf, size_t count, ompi_datatype_t *datatype,
                          int src, int tag, ompi_communicator_t *comm,
                          ompi_status_public_t *status);
int mca_pml_failstop_imrecv(void *buf, size_t count, ompi_datatype_t *datatype,
                            ompi_message_t **message, ompi_request_t **request);
int mca_pml_failstop_mrecv(void *buf, size_t count, ompi_datatype_t *datatype,
                           ompi_message_t **message, ompi_status_public_t *status);
int mca_pml_failstop_iprobe(int src, int tag, ompi_communicator_t *comm,
                            int *matched, ompi_status_public_t *status);
int mca_pml_failstop_probe(int src, int tag, ompi_communicator_t *comm,
                           ompi_status_public_t *status);
int mca_pml_failstop_improbe(int src, int tag, ompi_communicator_t *comm,
                             int *matched, ompi_message_t **message,
                             ompi_status_public_t *status);
int mca_pml_failstop_mprobe(int src, int tag, ompi_communicator_t *comm,
                            ompi_message_t **message, ompi_status_public_t *status);
int mca_pml_failstop_start(size_t count, ompi_request_t **requests);

/* ---- the public API (mpix.c, recovery.c) ---- */
#define FS_MPIX_API __attribute__((visibility("default")))
/* Reports rc through comm's error handler, as an MPI function would. */
int fs_mpix_error(MPI_Comm comm, int rc, const char *name);
/* comm's engine communicator, or the MPI error that there is none. */
int fs_mpix_comm(MPI_Comm comm, fs_comm_t **fcomm_p);

/* nbop.c: a nonblocking recovery call -- an agreement behind a generalized
 * request.  The caller embeds it first in its state and sets finish (makes
 * the result from op, once, when the completion is reported; returns the
 * call's MPI error) and destroy (frees the state). */
typedef struct fs_ompi_nb {
    fs_agreement_t  op;
    ompi_request_t *req;
    int             rc;
    int             finished;
    int             freed;
    int           (*finish)(struct fs_ompi_nb *nb);
    void          (*destroy)(struct fs_ompi_nb *nb);
} fs_ompi_nb_t;

/* A new call on comm: its state, size bytes zeroed with the fs_ompi_nb_t
 * first, and its request (*request); then start the agreement with
 * nb->op.  NULL, with the MPI error in *rc_p, if comm or request is bad or
 * memory is short. */
fs_ompi_nb_t *fs_ompi_nb_new(MPI_Comm comm, size_t size, int (*finish)(fs_ompi_nb_t *nb),
                             void (*destroy)(fs_ompi_nb_t *nb), MPI_Request *request,
                             int *rc_p);
/* Creates nb's request (*request) (fs_ompi_nb_new does). */
int  fs_ompi_nb_begin(fs_ompi_nb_t *nb, MPI_Request *request);
/* The agreement could not start: the request completes with rc. */
void fs_ompi_nb_fail(fs_ompi_nb_t *nb, int rc);

/* waitall.c: MPI_Waitall past Open MPI 4.1's multi-threaded hang on a
 * request that failed before the call */
void fs_ompi_waitall_install(int multi_thread);
void fs_ompi_waitall_uninstall(void);

/* comm_build.c: communicators of the survivors, with context ids private
 * to failstop (agreed as the MAX of every member's fs_ompi_private_cid;
 * an intercommunicator's local communicator takes the agreed id + 2). */
uint32_t fs_ompi_private_cid(void);
/* The shadow's context id of a communicator created with recognized
 * failures (coll.c): derived from its own, never an agreed one; + 2 for
 * the shadow's local communicator if it is an intercommunicator. */
uint32_t fs_ompi_derived_cid(uint32_t cid);
/* Bits of failed (member order, fs_comm_members) in group which, by rank
 * there, into bits (fs_bm_words(size) words). */
void fs_ompi_group_bits(fs_comm_t *fcomm, const uint64_t *failed, fs_comm_group_t which,
                        uint64_t *bits, uint32_t size);
/* The processes of group whose bit (by rank there) is set (set = 1) or
 * clear (set = 0), in rank order. */
int fs_ompi_group_select(struct ompi_group_t *group, const uint64_t *bits, int set,
                         struct ompi_group_t **new_p);
/* The communicator of parent's members outside failed (member order), in
 * rank order: an intercommunicator of both groups' survivors if parent is
 * one (its local communicator gets local_cid).  Visible: in Open MPI's
 * table (MPI_Finalize frees it if the program does not); a shadow is not,
 * fs_ompi_comm_survivors_free frees it. */
int fs_ompi_comm_survivors(ompi_communicator_t *parent, const uint64_t *failed, uint32_t cid,
                           uint32_t local_cid, int visible, const char *what,
                           ompi_communicator_t **newcomm_p);
void fs_ompi_comm_survivors_free(ompi_communicator_t *comm);
/* survivors.c: after a validation, parent's collectives run over the
 * survivors (failed: the recognized members in member order, cid and
 * local_cid: as fs_ompi_comm_survivors takes them);
 * fs_ompi_survivors_release at parent's del_comm. */
int  fs_ompi_survivors_install(ompi_communicator_t *parent, const uint64_t *failed,
                               uint32_t cid, uint32_t local_cid);
void fs_ompi_survivors_release(ompi_communicator_t *parent);
/* comm_build.c: a shadow's collective modules are being selected now */
int  fs_ompi_building_shadow(void);
/* uniform.c: pml_failstop_uniform_collectives */
mca_coll_base_module_t *fs_ompi_uniform_module(void);
void fs_ompi_uniform_enable(mca_coll_base_module_t *m, ompi_communicator_t *comm);
mca_coll_base_module_t *fs_ompi_uniform_of(ompi_communicator_t *comm);
void fs_ompi_uniform_rewrap(mca_coll_base_module_t *m, ompi_communicator_t *comm);

/* The engine lock; only taken under MPI_THREAD_MULTIPLE. */
static inline void fs_ompi_lock(void)
{
    if (fs_ompi.multi_thread) {
        fs_engine_lock(fs_ompi.engine);
    }
}

static inline void fs_ompi_unlock(void)
{
    if (fs_ompi.multi_thread) {
        fs_engine_unlock(fs_ompi.engine);
    }
}

/* Ends a blocking send or receive whose core start returned st: waits if it
 * is in flight, copies the receive status, recycles the request.  Returns
 * the MPI error code. */
int fs_ompi_blocking_finish(fs_ompi_req_t *req, fs_status_t st,
                            ompi_status_public_t *status);

/* Core requests of blocking calls live on the caller's stack: completion
 * callbacks leave them alone and the caller polls fs_req_idle. */
#define FS_OMPI_HOST_STACK 0x1u

/* Progresses until a stack request is finished and released. */
void fs_ompi_wait_core(fs_req_t *req);

#endif
