/* Send entry points.  Ready sends are standard sends; synchronous (and
 * "complete") sends become core synchronous sends.  Buffered sends are packed
 * into the MPI_Buffer_attach buffer and carried by an internal request nobody
 * waits for, so the user's request (even a persistent one, which may be
 * restarted at once) is done as soon as the copy exists. */
#include "ompi/ompi_int.h"

#include "ompi/mca/pml/base/pml_base_bsend.h"

static fs_send_mode_t fs_ompi_send_mode(mca_pml_base_send_mode_t mode)
{
    return ((mode == MCA_PML_BASE_SEND_SYNCHRONOUS) ||
            (mode == MCA_PML_BASE_SEND_COMPLETE)) ? FS_SEND_SYNC : FS_SEND_STANDARD;
}

/* The MPI layer validates arguments unless mpi_param_check is off; without
 * it a bad rank or a negative count (huge once widened to size_t) must still
 * give the right error class rather than a crash. */
static int fs_ompi_check_send(ompi_communicator_t *comm, int dst, size_t count)
{
    if ((dst < 0) || ((uint32_t)dst >= fs_comm_size(fs_ompi_comm(comm)))) {
        return MPI_ERR_RANK;
    }
    return ((ssize_t)count < 0) ? MPI_ERR_COUNT : MPI_SUCCESS;
}

/* Starts the core send of a prepared request; the request is complete (MPI
 * level) on return unless the send is still in flight. */
int fs_ompi_send_begin(fs_ompi_req_t *req)
{
    fs_status_t st;

    req->core_pending = 1;
    fs_ompi_lock();
    st = fs_send_start(&req->core.send);
    fs_ompi_unlock();
    if (st != FS_INPROGRESS) {
        fs_ompi_req_complete(req, st);
    }
    return OMPI_SUCCESS;
}

/* Returns MPI_ERR_BUFFER when the attached buffer cannot hold the message. */
static int fs_ompi_bsend(const void *buf, size_t count, ompi_datatype_t *datatype,
                         int dst, int tag, ompi_communicator_t *comm)
{
    fs_ompi_req_t *ireq = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 0);
    fs_buf_t user;
    void *packed;
    fs_status_t st;

    if (OPAL_UNLIKELY(ireq == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* the copy completes the user's send, so a peer already known failed
     * must be reported now; a failure found later cannot be */
    fs_ompi_lock();
    st = fs_send_precheck(fs_ompi_comm(comm), (uint32_t)dst, tag);
    fs_ompi_unlock();
    if (OPAL_UNLIKELY(st != FS_OK)) {
        fs_ompi_req_put(ireq);
        return fs_ompi_error(st);
    }
    fs_ompi_buf_prepare(ireq, buf, count, datatype, 1, &user);
    packed = mca_pml_base_bsend_request_alloc_buf(user.len ? user.len : 1);
    if (packed == NULL) {
        fs_ompi_req_put(ireq);
        return MPI_ERR_BUFFER;
    }
    fs_buf_pack(&fs_ompi_host_ops.dt, &user, 0, packed, user.len);
    fs_ompi_buf_release(ireq);
    ireq->bsend_buf   = packed;
    ireq->free_called = 1;
    ireq->retained    = 1;
    OBJ_RETAIN(comm);
    fs_send_prepare(&ireq->core.send, fs_ompi_comm(comm), dst, tag, FS_SEND_STANDARD);
    fs_buf_set_contig(&ireq->core.send.buf, packed, user.len);
    return fs_ompi_send_begin(ireq);
}

static void fs_ompi_send_setup(fs_ompi_req_t *req, const void *buf, size_t count,
                               ompi_datatype_t *datatype, int dst, int tag,
                               mca_pml_base_send_mode_t mode, ompi_communicator_t *comm)
{
    req->mode = mode;
    fs_send_prepare(&req->core.send, fs_ompi_comm(comm), dst, tag,
                    fs_ompi_send_mode(mode));
    fs_ompi_buf_prepare(req, buf, count, datatype, 1, &req->core.send.buf);
}

/* Small standard sends usually finish inside the call: try that with the
 * core request on the stack, and only take a pooled request if it did not
 * (as pml ucx does).  Sizes above the endpoint's learned imm_max are not
 * tried (ep.h).  FS_ERR_AGAIN: nothing was sent; else the send's outcome (a
 * transport that kept it in flight is waited for). */
static inline fs_status_t fs_ompi_send_now(const void *buf, size_t count,
                                           ompi_datatype_t *datatype, int dst, int tag,
                                           mca_pml_base_send_mode_t mode,
                                           ompi_communicator_t *comm)
{
    fs_send_t sreq;
    fs_status_t st;

    if ((mode == MCA_PML_BASE_SEND_SYNCHRONOUS) || (mode == MCA_PML_BASE_SEND_BUFFERED) ||
        (mode == MCA_PML_BASE_SEND_COMPLETE) ||
        !opal_datatype_is_contiguous_memory_layout(&datatype->super, (int32_t)count)) {
        return FS_ERR_AGAIN;
    }
    sreq.super.host_flags = FS_OMPI_HOST_STACK;
    fs_ompi_lock();
    st = fs_send_try(&sreq, fs_ompi_comm(comm), dst, tag,
                     (char *)buf + datatype->super.true_lb, datatype->super.size * count);
    fs_ompi_unlock();
    if (OPAL_UNLIKELY(st == FS_INPROGRESS)) {
        fs_ompi_wait_core(&sreq.super);
        st = sreq.super.status;
    }
    return st;
}

/* A contiguous blocking send that did not finish at once (rendezvous,
 * synchronous) waits with its core request on the stack. */
static int fs_ompi_send_stack(const void *buf, size_t count, ompi_datatype_t *datatype,
                              int dst, int tag, mca_pml_base_send_mode_t mode,
                              ompi_communicator_t *comm)
{
    fs_send_t sreq;
    fs_status_t st;

    fs_send_prepare(&sreq, fs_ompi_comm(comm), dst, tag, fs_ompi_send_mode(mode));
    fs_buf_set_contig(&sreq.buf, (char *)buf + datatype->super.true_lb,
                      datatype->super.size * count);
    sreq.super.host_flags = FS_OMPI_HOST_STACK;
    sreq.blocking         = 1;
    fs_ompi_lock();
    st = fs_send_start(&sreq);
    fs_ompi_unlock();
    if (st != FS_INPROGRESS) {
        return fs_ompi_error(st);
    }
    fs_ompi_wait_core(&sreq.super);
    return fs_ompi_error(sreq.super.status);
}

/* Marks a user request complete with rc (buffered sends, failed immediate
 * sends): no core operation behind it. */
static void fs_ompi_req_done(fs_ompi_req_t *req, int rc)
{
    req->ompi.req_status.MPI_ERROR  = rc;
    req->ompi.req_status._cancelled = 0;
    fs_ompi_req_signal(&req->ompi);
}

int mca_pml_failstop_isend(const void *buf, size_t count, ompi_datatype_t *datatype,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request)
{
    fs_ompi_req_t *req;
    fs_status_t st;
    int rc = fs_ompi_check_send(comm, dst, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    if (fs_ompi_coll_refused(tag, comm)) {
        return fs_ompi_coll_refusal(comm);
    }
    st = fs_ompi_send_now(buf, count, datatype, dst, tag, mode, comm);
    if (OPAL_LIKELY(st == FS_OK)) {
        *request = &fs_ompi.completed_req;
        return OMPI_SUCCESS;
    }
    req = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 0);
    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (OPAL_UNLIKELY(st != FS_ERR_AGAIN)) {
        fs_ompi_req_done(req, fs_ompi_error(st));   /* sent, and failed */
    } else if (OPAL_UNLIKELY(mode == MCA_PML_BASE_SEND_BUFFERED)) {
        fs_ompi_req_done(req, fs_ompi_bsend(buf, count, datatype, dst, tag, comm));
    } else {
        OBJ_RETAIN(comm);
        req->retained = 1;
        fs_ompi_send_setup(req, buf, count, datatype, dst, tag, mode, comm);
        fs_ompi_send_begin(req);
    }
    *request = &req->ompi;
    return OMPI_SUCCESS;
}

int mca_pml_failstop_send(const void *buf, size_t count, ompi_datatype_t *datatype,
                          int dst, int tag, mca_pml_base_send_mode_t mode,
                          ompi_communicator_t *comm)
{
    fs_ompi_req_t *req;
    fs_status_t st;
    int rc = fs_ompi_check_send(comm, dst, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    if (OPAL_UNLIKELY(mode == MCA_PML_BASE_SEND_BUFFERED)) {
        return fs_ompi_bsend(buf, count, datatype, dst, tag, comm);
    }
    /* an immediate attempt first, as MPI_Isend's: sizes a transport refuses
     * are learned (imm_max) and not tried again, so it rarely costs a
     * second send; then the core request on the stack */
    st = fs_ompi_send_now(buf, count, datatype, dst, tag, mode, comm);
    if (OPAL_LIKELY(st != FS_ERR_AGAIN)) {
        return fs_ompi_error(st);
    }
    if (OPAL_LIKELY(opal_datatype_is_contiguous_memory_layout(&datatype->super,
                                                              (int32_t)count))) {
        return fs_ompi_send_stack(buf, count, datatype, dst, tag, mode, comm);
    }
    req = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 0);
    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    fs_ompi_send_setup(req, buf, count, datatype, dst, tag, mode, comm);
    req->core.send.blocking = 1;
    fs_ompi_lock();
    st = fs_send_start(&req->core.send);
    fs_ompi_unlock();
    return fs_ompi_blocking_finish(req, st, NULL);
}

int mca_pml_failstop_isend_init(const void *buf, size_t count, ompi_datatype_t *datatype,
                                int dst, int tag, mca_pml_base_send_mode_t mode,
                                ompi_communicator_t *comm, ompi_request_t **request)
{
    fs_ompi_req_t *req;
    int rc = fs_ompi_check_send(comm, dst, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    req = fs_ompi_req_persistent(FS_OMPI_REQ_SEND, (void *)buf, count, datatype, dst,
                                 tag, comm);
    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->mode = mode;
    *request  = &req->ompi;
    return OMPI_SUCCESS;
}

/* MPI_Start of a persistent send. */
int fs_ompi_send_restart(fs_ompi_req_t *req)
{
    ompi_communicator_t *comm = req->ompi.req_mpi_object.comm;

    if (OPAL_UNLIKELY(fs_ompi_restart_blocked(req))) {
        return OMPI_SUCCESS;
    }
    if (req->mode == MCA_PML_BASE_SEND_BUFFERED) {
        fs_ompi_req_done(req, fs_ompi_bsend(req->user_buf, req->count, req->datatype,
                                            req->peer, req->tag, comm));
        return OMPI_SUCCESS;
    }
    fs_ompi_send_setup(req, req->user_buf, req->count, req->datatype, req->peer,
                       req->tag, req->mode, comm);
    return fs_ompi_send_begin(req);
}
