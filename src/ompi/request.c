/* MPI requests of the failstop PML.
 *
 * One object carries an MPI request and a core send or receive.  It returns
 * to the free list only when all three are true: MPI released it
 * (free_called), the core operation ended (!core_pending), and no transport
 * operation still points into it (!fs_req_busy, only after a failure). */
#include "ompi/ompi_int.h"
#include "common/fs_tsan.h"

#include "ompi/mca/pml/base/pml_base_bsend.h"
#include "opal/runtime/opal_progress.h"
#include "ompi/errhandler/errhandler.h"

#include <dlfcn.h>

static int fs_ompi_req_free_cb(ompi_request_t **rptr);
static int fs_ompi_req_cancel_cb(ompi_request_t *request, int complete);

static void fs_ompi_req_construct(fs_ompi_req_t *req)
{
    OBJ_CONSTRUCT(&req->dt.conv, opal_convertor_t);
    req->ompi.req_type   = OMPI_REQUEST_PML;
    req->ompi.req_start  = mca_pml_failstop_start;
    req->ompi.req_free   = fs_ompi_req_free_cb;
    req->ompi.req_cancel = fs_ompi_req_cancel_cb;
    req->has_conv        = 0;
}

static void fs_ompi_req_destruct(fs_ompi_req_t *req)
{
    OBJ_DESTRUCT(&req->dt.conv);
}

OBJ_CLASS_INSTANCE(fs_ompi_req_t, ompi_request_t, fs_ompi_req_construct,
                   fs_ompi_req_destruct);


static inline int fs_ompi_req_recyclable(fs_ompi_req_t *req)
{
    return !req->core_pending && !fs_req_busy(fs_ompi_core(req));
}

fs_ompi_req_t *fs_ompi_req_get(fs_ompi_req_kind_t kind, ompi_communicator_t *comm,
                               int persistent)
{
    fs_ompi_req_t *req = (fs_ompi_req_t *)opal_free_list_get(&fs_ompi.requests);
    fs_req_t *core;

    if (OPAL_UNLIKELY(req == NULL)) {
        return NULL;
    }
    FS_TSAN_ACQUIRE(req);       /* from the fs_ompi_req_put that returned it */
    OMPI_REQUEST_INIT(&req->ompi, persistent);
    req->ompi.req_state           = persistent ? OMPI_REQUEST_INACTIVE :
                                                 OMPI_REQUEST_ACTIVE;
    req->ompi.req_mpi_object.comm = comm;
    req->ompi.req_status._cancelled = 0;
    req->kind         = (uint8_t)kind;
    req->persistent   = (uint8_t)persistent;
    /* no core operation yet: a persistent request's first MPI_Start reads
     * these (fs_ompi_restart_blocked); a new pool item holds garbage */
    core          = fs_ompi_core(req);
    core->op.busy = 0;
    core->flags   = 0;
    core->status  = FS_OK;
    req->free_called  = 0;
    req->core_pending = 0;
    req->pending_told = 0;      /* fs_ompi_req_complete re-arms a told one */
    req->retained     = 0;
    req->bsend_buf    = NULL;
    req->datatype     = NULL;
    return req;
}

/* Memory the transport may still read or write while an op is in flight. */
static void fs_ompi_req_release_buffers(fs_ompi_req_t *req)
{
    fs_ompi_buf_release(req);
    if (req->bsend_buf != NULL) {
        mca_pml_base_bsend_request_free(req->bsend_buf);
        req->bsend_buf = NULL;
    }
}

fs_ompi_req_t *fs_ompi_req_persistent(fs_ompi_req_kind_t kind, void *buf, size_t count,
                                      ompi_datatype_t *datatype, int peer, int tag,
                                      ompi_communicator_t *comm)
{
    fs_ompi_req_t *req = fs_ompi_req_get(kind, comm, 1);

    if (OPAL_UNLIKELY(req == NULL)) {
        return NULL;
    }
    req->user_buf = buf;
    req->count    = count;
    req->datatype = datatype;
    req->peer     = peer;
    req->tag      = tag;
    OMPI_DATATYPE_RETAIN(datatype);
    OBJ_RETAIN(comm);
    req->retained = 1;
    return req;
}

void fs_ompi_req_put(fs_ompi_req_t *req)
{
    fs_ompi_req_release_buffers(req);
    if (req->datatype != NULL) {
        OMPI_DATATYPE_RELEASE(req->datatype);
        req->datatype = NULL;
    }
    if (req->retained) {
        OBJ_RELEASE(req->ompi.req_mpi_object.comm);
        req->retained = 0;
    }
    req->ompi.req_state = OMPI_REQUEST_INVALID;
    FS_TSAN_RELEASE(req);
    opal_free_list_return(&fs_ompi.requests, &req->ompi.super);
}

/* Marks an MPI request complete and wakes its waiter.  Open MPI 4.1's
 * ompi_request_wait_all stops at the first error signalled through its
 * sync object and then returns OPAL_ERROR rather than MPI_ERR_IN_STATUS when
 * statuses are ignored, which Open MPI's collectives pass on as
 * MPI_ERR_OTHER.  Signalled as a success, the error is read from the status
 * like any other completed request's.  Only single-threaded: another thread
 * could read the status between the signal and the restore; and never with a
 * completion callback, which reads the status. */
void fs_ompi_req_signal(ompi_request_t *req)
{
    int err = req->req_status.MPI_ERROR;

    FS_TSAN_RELEASE(req);       /* Open MPI's completion CAS orders it (waitall.c) */

    if (OPAL_LIKELY(err == MPI_SUCCESS) || fs_ompi.multi_thread ||
        (req->req_complete_cb != NULL)) {
        ompi_request_complete(req, true);
        return;
    }
    req->req_status.MPI_ERROR = MPI_SUCCESS;
    ompi_request_complete(req, true);
    req->req_status.MPI_ERROR = err;
}

/* A persistent request restarted while the transport still holds its last
 * start (only possible after that start was ended by a peer failure) is
 * completed at once with that failure instead of being re-prepared. */
int fs_ompi_restart_blocked(fs_ompi_req_t *req)
{
    fs_req_t *core = fs_ompi_core(req);

    if (!fs_req_busy(core)) {
        return 0;
    }
    req->ompi.req_status.MPI_ERROR  = fs_ompi_error(core->status);
    req->ompi.req_status._cancelled = 0;
    fs_ompi_req_signal(&req->ompi);
    return 1;
}

void fs_ompi_status_fill(ompi_status_public_t *status, const fs_recv_t *rreq)
{
    /* without a message (failure, cancel) the core reports the requested
     * source and tag with length 0 */
    status->_cancelled = (rreq->super.status == FS_ERR_CANCELED);
    status->MPI_SOURCE = rreq->src_out;
    status->MPI_TAG    = rreq->tag_out;
    status->_ucount    = rreq->len_out;
}

void fs_ompi_status_from_recv(ompi_status_public_t *status, const fs_recv_t *rreq)
{
    status->MPI_ERROR = fs_ompi_error(rreq->super.status);
    fs_ompi_status_fill(status, rreq);
}

void fs_ompi_status_copy(ompi_status_public_t *status, const ompi_status_public_t *from)
{
    if ((status == MPI_STATUS_IGNORE) || (status == NULL)) {
        return;
    }
    status->MPI_SOURCE = from->MPI_SOURCE;
    status->MPI_TAG    = from->MPI_TAG;
    status->_ucount    = from->_ucount;
    status->_cancelled = from->_cancelled;
}

/* A receive reported MPIX_ERR_PROC_FAILED_PENDING is pending again: the next
 * wait on it waits for its message. */
static void fs_ompi_req_rearm(fs_ompi_req_t *req)
{
    req->pending_told               = 0;
    req->ompi.req_status.MPI_ERROR  = MPI_SUCCESS;
    req->ompi.req_complete          = REQUEST_PENDING;
}

/* The core operation ended (from a completion callback, or right after a
 * start that finished at once). */
void fs_ompi_req_complete(fs_ompi_req_t *req, fs_status_t status)
{
    req->core_pending = 0;
    if (OPAL_UNLIKELY(req->pending_told)) {
        fs_ompi_req_rearm(req);     /* it was completed as pending */
    }
    if (req->kind == FS_OMPI_REQ_RECV) {
        fs_ompi_status_from_recv(&req->ompi.req_status, &req->core.recv);
    } else {
        req->ompi.req_status.MPI_ERROR  = fs_ompi_error(status);
        req->ompi.req_status._cancelled = 0;
    }
    if (!fs_req_busy(fs_ompi_core(req))) {
        fs_ompi_req_release_buffers(req);
    }
    if (req->free_called) {
        /* nobody waits: MPI freed it (or it is a buffered send's carrier) */
        if (fs_ompi_req_recyclable(req)) {
            fs_ompi_req_put(req);
        }
        return;
    }
    fs_ompi_req_signal(&req->ompi);
}

static void fs_ompi_send_complete(fs_send_t *sreq)
{
    if (sreq->super.host_flags & FS_OMPI_HOST_STACK) {
        return;                     /* its caller polls the core flags */
    }
    fs_ompi_req_complete(fs_container_of(sreq, fs_ompi_req_t, core.send),
                         sreq->super.status);
}

void fs_ompi_recv_pending(fs_recv_t *rreq, int pending)
{
    fs_ompi_req_t *req = fs_container_of(rreq, fs_ompi_req_t, core.recv);

    if (!pending) {
        if (req->pending_told) {
            fs_ompi_req_rearm(req);
        }
        return;
    }
    if (req->free_called || req->pending_told || !(rreq->super.flags & FS_REQ_F_PENDING) ||
        (rreq->super.flags & FS_REQ_F_DONE)) {
        return;         /* nobody waits on it, told already, or no longer pending */
    }
    req->pending_told = 1;
    fs_ompi_status_fill(&req->ompi.req_status, rreq);
    req->ompi.req_status.MPI_ERROR = fs_ompi.errors.pending_class;
    fs_ompi_req_signal(&req->ompi);
}

static void fs_ompi_recv_complete(fs_recv_t *rreq)
{
    fs_ompi_req_t *req;

    if (rreq->super.host_flags & FS_OMPI_HOST_STACK) {
        return;
    }
    req = fs_container_of(rreq, fs_ompi_req_t, core.recv);
    if (OPAL_LIKELY((rreq->super.status == FS_OK) && !req->pending_told &&
                    !req->free_called && !req->has_conv && !fs_req_busy(&rreq->super))) {
        /* the common case of fs_ompi_req_complete, in one step: a message
         * taken whole into a contiguous buffer, its receive waited for */
        req->core_pending = 0;
        fs_ompi_status_fill(&req->ompi.req_status, rreq);
        req->ompi.req_status.MPI_ERROR = MPI_SUCCESS;
        FS_TSAN_RELEASE(&req->ompi);
        ompi_request_complete(&req->ompi, true);
        return;
    }
    fs_ompi_req_complete(req, rreq->super.status);
}

static void fs_ompi_req_idle(fs_req_t *core)
{
    fs_ompi_req_t *req;

    if (core->host_flags & FS_OMPI_HOST_STACK) {
        return;
    }
    req = (core->flags & FS_REQ_F_RECV) ?
                         fs_container_of(core, fs_ompi_req_t, core.recv.super) :
                         fs_container_of(core, fs_ompi_req_t, core.send.super);

    if (req->free_called && fs_ompi_req_recyclable(req)) {
        fs_ompi_req_put(req);
    }
}

/* Open MPI 4.1 frees every request a wait or test reports an error for
 * (ompi_errhandler_request_invoke, right after the completion call), so a
 * receive reported MPIX_ERR_PROC_FAILED_PENDING would lose its handle, which
 * ULFM's rule keeps valid.  That one free is recognized by its caller and
 * not done; a free by the program (MPI_Request_free) is. */
static int fs_ompi_free_by_errhandler(const void *caller)
{
    Dl_info info;

    return (dladdr(caller, &info) != 0) &&
           (info.dli_saddr == (void *)ompi_errhandler_request_invoke);
}

static int fs_ompi_req_free_cb(ompi_request_t **rptr)
{
    fs_ompi_req_t *req = (fs_ompi_req_t *)*rptr;

    if (OPAL_UNLIKELY(req->pending_told) &&
        fs_ompi_free_by_errhandler(__builtin_return_address(0))) {
        return OMPI_SUCCESS;                /* the handle stays valid */
    }
    *rptr = MPI_REQUEST_NULL;
    fs_ompi_lock();
    if (OPAL_UNLIKELY(req->pending_told) && req->core_pending) {
        fs_recv_cancel(&req->core.recv);    /* nobody will wait for it again */
    }
    req->free_called = 1;
    if (fs_ompi_req_recyclable(req)) {
        fs_ompi_req_put(req);
    }
    fs_ompi_unlock();
    return OMPI_SUCCESS;
}

/* Only receives can be cancelled; a send, like in ob1, always goes out. */
static int fs_ompi_req_cancel_cb(ompi_request_t *request, int complete)
{
    fs_ompi_req_t *req = (fs_ompi_req_t *)request;

    (void)complete;
    if ((req->kind == FS_OMPI_REQ_RECV) && req->core_pending) {
        fs_ompi_lock();
        fs_recv_cancel(&req->core.recv);
        fs_ompi_unlock();
    }
    return OMPI_SUCCESS;
}

/* Single-threaded waits spin on the engine itself and give the rest of Open
 * MPI a turn every 64 polls, as pml ucx does; with threads, the request's
 * sync object coordinates who progresses.  When Open MPI asks idle waits
 * to yield (mpi_yield_when_idle: more processes than cores), every poll
 * goes through opal_progress, which yields the core when nothing came, as
 * ob1 does: 63 more polls while the sender waits for the same core cost
 * osu_bcast 8-64 B at 4 ranks on 2 cores 0.45-0.50 us against 0.24-0.29
 * (docs/PERFORMANCE.md). */
static void fs_ompi_wait(fs_ompi_req_t *req)
{
    unsigned i = 0;

    if (fs_ompi.multi_thread || opal_progress_yield_when_idle) {
        ompi_request_wait_completion(&req->ompi);
        return;
    }
    while (!REQUEST_COMPLETE(&req->ompi)) {
        if ((++i & 63) != 0) {
            fs_engine_progress(fs_ompi.engine);
        } else {
            opal_progress();
        }
    }
}

static void fs_ompi_opal_progress(void)
{
    opal_progress();
}

/* Whether a stack request is finished, read under the engine lock: another
 * thread completes it inside progress, with the lock held from before it
 * sets DONE until after its last access to the request (a completion
 * callback still reads it after DONE), so only once that thread has let go
 * of the lock may this frame return and be reused. */
static int fs_ompi_core_idle_locked(const fs_req_t *req)
{
    int idle;

    fs_ompi_lock();
    idle = fs_req_idle(req);
    fs_ompi_unlock();
    return idle;
}

void fs_ompi_wait_core(fs_req_t *req)
{
    if (OPAL_UNLIKELY(fs_ompi.multi_thread)) {
        while (!fs_ompi_core_idle_locked(req)) {
            opal_progress();
        }
        return;
    }
    if (OPAL_UNLIKELY(opal_progress_yield_when_idle)) {
        while (!fs_req_idle(req)) {     /* fs_ompi_wait says why */
            opal_progress();
        }
        return;
    }
    fs_engine_wait(fs_ompi.engine, req, fs_ompi_opal_progress);
}

int fs_ompi_blocking_finish(fs_ompi_req_t *req, fs_status_t st,
                            ompi_status_public_t *status)
{
    int rc;

    if (OPAL_LIKELY(st != FS_INPROGRESS)) {
        /* finished inside the start: no MPI-level completion needed */
        if (req->kind == FS_OMPI_REQ_RECV) {
            fs_ompi_status_from_recv(&req->ompi.req_status, &req->core.recv);
            rc = req->ompi.req_status.MPI_ERROR;
        } else {
            rc = fs_ompi_error(st);
        }
    } else {
        req->core_pending = 1;
        fs_ompi_wait(req);
        rc = req->ompi.req_status.MPI_ERROR;
    }
    fs_ompi_status_copy(status, &req->ompi.req_status);
    fs_ompi_lock();
    req->free_called = 1;
    if (fs_ompi_req_recyclable(req)) {
        fs_ompi_req_put(req);
    }
    fs_ompi_unlock();
    return rc;
}

/* The shared request of sends that completed inside MPI_Isend, as in pml
 * ucx: always complete, and freeing it only clears the handle. */
static int fs_ompi_completed_free(ompi_request_t **rptr)
{
    *rptr = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int fs_ompi_completed_cancel(ompi_request_t *request, int complete)
{
    (void)request;
    (void)complete;
    return OMPI_SUCCESS;
}

void fs_ompi_completed_req_init(void)
{
    ompi_request_t *req = &fs_ompi.completed_req;

    OBJ_CONSTRUCT(req, ompi_request_t);
    OMPI_REQUEST_INIT(req, false);
    req->req_type                = OMPI_REQUEST_PML;
    req->req_state               = OMPI_REQUEST_ACTIVE;
    req->req_free                = fs_ompi_completed_free;
    req->req_cancel              = fs_ompi_completed_cancel;
    req->req_mpi_object.comm     = &ompi_mpi_comm_world.comm;
    req->req_status.MPI_ERROR    = MPI_SUCCESS;
    req->req_status._cancelled   = 0;
    ompi_request_complete(req, false);
}

void fs_ompi_completed_req_fini(void)
{
    fs_ompi.completed_req.req_state = OMPI_REQUEST_INVALID;
    OMPI_REQUEST_FINI(&fs_ompi.completed_req);
    OBJ_DESTRUCT(&fs_ompi.completed_req);
}

const fs_host_ops_t fs_ompi_host_ops = {
    .dt            = {.pack = fs_ompi_dt_pack, .unpack = fs_ompi_dt_unpack},
    .send_complete = fs_ompi_send_complete,
    .recv_complete = fs_ompi_recv_complete,
    .recv_pending  = fs_ompi_recv_pending,
    .req_idle      = fs_ompi_req_idle,
    .peer_failed   = fs_ompi_peer_failed,
    .abort         = fs_ompi_abort,
    .excluded      = fs_ompi_excluded,
    .inject        = fs_ompi_inject,
    .fate_deadline = fs_ompi_fate_deadline,
    .remote        = fs_ompi_remote,
    .check         = fs_ompi_check,
    .poll          = fs_ompi_hb_poll_host,
#ifdef FS_OMPI_V5
    .comm_revoked  = fs_ompi_comm_revoked,
#endif
};
