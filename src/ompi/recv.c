/* Receive, matched-receive and probe entry points. */
#include "ompi/ompi_int.h"

/* See fs_ompi_check_send: bad input without mpi_param_check. */
static int fs_ompi_check_recv(ompi_communicator_t *comm, int src, size_t count)
{
    if ((src != MPI_ANY_SOURCE) &&
        ((src < 0) || ((uint32_t)src >= fs_comm_size(fs_ompi_comm(comm))))) {
        return MPI_ERR_RANK;
    }
    return ((ssize_t)count < 0) ? MPI_ERR_COUNT : MPI_SUCCESS;
}

static inline int fs_ompi_recv_setup(fs_ompi_req_t *req, void *buf, size_t count,
                                     ompi_datatype_t *datatype, int src, int tag,
                                     ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);
    int rc = fs_ompi_check_recv(comm, src, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    fs_ompi_anysrc_sync(comm, src);
    fs_recv_prepare(&req->core.recv, fcomm, src, tag);
    fs_ompi_buf_prepare(req, buf, count, datatype, 0, &req->core.recv.buf);
    return OMPI_SUCCESS;
}

static inline fs_status_t fs_ompi_recv_start(fs_ompi_req_t *req, fs_msg_t *msg)
{
    fs_status_t st;

    fs_ompi_lock();
    st = (msg == NULL) ? fs_recv_start(&req->core.recv) :
                         fs_mrecv_start(&req->core.recv, msg);
    if (OPAL_UNLIKELY(req->core.recv.super.flags & FS_REQ_F_PENDING) && (st == FS_INPROGRESS)) {
        /* posted while MPI_ANY_SOURCE is disabled (ULFM's rule); read under
         * the lock: another thread's progress may complete it right after */
        fs_ompi_recv_pending(&req->core.recv, 1);
    }
    fs_ompi_unlock();
    return st;
}

/* A pooled receive request, set up; NULL with *rc_p set on failure. */
static inline fs_ompi_req_t *fs_ompi_recv_new(void *buf, size_t count,
                                              ompi_datatype_t *datatype, int src, int tag,
                                              ompi_communicator_t *comm, int *rc_p)
{
    fs_ompi_req_t *req = fs_ompi_req_get(FS_OMPI_REQ_RECV, comm, 0);

    if (OPAL_UNLIKELY(req == NULL)) {
        *rc_p = OMPI_ERR_OUT_OF_RESOURCE;
        return NULL;
    }
    *rc_p = fs_ompi_recv_setup(req, buf, count, datatype, src, tag, comm);
    if (OPAL_UNLIKELY(*rc_p != OMPI_SUCCESS)) {
        fs_ompi_req_put(req);
        return NULL;
    }
    return req;
}

/* Nonblocking: the request completes now or from a callback. */
static inline void fs_ompi_recv_begin(fs_ompi_req_t *req, fs_msg_t *msg)
{
    fs_status_t st;

    req->core_pending = 1;
    req->pending_told = 0;
    st = fs_ompi_recv_start(req, msg);
    if (st != FS_INPROGRESS) {
        fs_ompi_req_complete(req, st);
    }
}

int mca_pml_failstop_irecv(void *buf, size_t count, ompi_datatype_t *datatype,
                           int src, int tag, ompi_communicator_t *comm,
                           ompi_request_t **request)
{
    int rc;
    fs_ompi_req_t *req;

    if (fs_ompi_coll_refused(tag, comm)) {
        return fs_ompi_coll_refusal(comm);
    }
    req = fs_ompi_recv_new(buf, count, datatype, src, tag, comm, &rc);
    if (OPAL_UNLIKELY(req == NULL)) {
        return rc;
    }
    OBJ_RETAIN(comm);
    req->retained = 1;
    if (OPAL_UNLIKELY(src == MPI_ANY_SOURCE) && fs_ompi.params.anysource_pending) {
        req->core.recv.super.flags |= FS_REQ_F_HOLD_WILD;   /* ULFM's rule */
    }
    fs_ompi_recv_begin(req, NULL);
    *request = &req->ompi;
    return OMPI_SUCCESS;
}

/* A contiguous blocking receive needs no MPI request: the core request
 * lives on the stack and is polled until done (as pml ucx does). */
static int fs_ompi_recv_stack(void *buf, size_t count, ompi_datatype_t *datatype,
                              int src, int tag, ompi_communicator_t *comm,
                              ompi_status_public_t *status)
{
    fs_recv_t rreq;

    fs_ompi_anysrc_sync(comm, src);
    fs_recv_prepare(&rreq, fs_ompi_comm(comm), src, tag);
    fs_buf_set_contig(&rreq.buf, (char *)buf + datatype->super.true_lb,
                      datatype->super.size * count);
    rreq.super.host_flags = FS_OMPI_HOST_STACK;
    fs_ompi_lock();
    if (fs_recv_start(&rreq) == FS_INPROGRESS) {
        fs_ompi_unlock();
        fs_ompi_wait_core(&rreq.super);
    } else {
        fs_ompi_unlock();
    }
    if (status != MPI_STATUS_IGNORE) {
        fs_ompi_status_fill(status, &rreq);
    }
    return fs_ompi_error(rreq.super.status);
}

int mca_pml_failstop_recv(void *buf, size_t count, ompi_datatype_t *datatype,
                          int src, int tag, ompi_communicator_t *comm,
                          ompi_status_public_t *status)
{
    fs_ompi_req_t *req;
    int rc = fs_ompi_check_recv(comm, src, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    if (OPAL_LIKELY(opal_datatype_is_contiguous_memory_layout(&datatype->super,
                                                              (int32_t)count))) {
        return fs_ompi_recv_stack(buf, count, datatype, src, tag, comm, status);
    }
    req = fs_ompi_recv_new(buf, count, datatype, src, tag, comm, &rc);
    if (OPAL_UNLIKELY(req == NULL)) {
        return rc;
    }
    return fs_ompi_blocking_finish(req, fs_ompi_recv_start(req, NULL), status);
}

int mca_pml_failstop_irecv_init(void *buf, size_t count, ompi_datatype_t *datatype,
                                int src, int tag, ompi_communicator_t *comm,
                                ompi_request_t **request)
{
    fs_ompi_req_t *req;
    int rc = fs_ompi_check_recv(comm, src, count);

    if (OPAL_UNLIKELY(rc != MPI_SUCCESS)) {
        return rc;
    }
    req = fs_ompi_req_persistent(FS_OMPI_REQ_RECV, buf, count, datatype, src, tag, comm);
    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *request = &req->ompi;
    return OMPI_SUCCESS;
}

int fs_ompi_recv_restart(fs_ompi_req_t *req)
{
    int rc;

    if (OPAL_UNLIKELY(fs_ompi_restart_blocked(req))) {
        return OMPI_SUCCESS;
    }
    rc = fs_ompi_recv_setup(req, req->user_buf, req->count, req->datatype,
                            req->peer, req->tag, req->ompi.req_mpi_object.comm);
    if (rc != OMPI_SUCCESS) {
        req->ompi.req_status.MPI_ERROR = rc;
        fs_ompi_req_signal(&req->ompi);
        return OMPI_SUCCESS;
    }
    fs_ompi_recv_begin(req, NULL);
    return OMPI_SUCCESS;
}

/* ---- matched probes and receives ------------------------------------------ */

static int fs_ompi_mrecv_begin(void *buf, size_t count, ompi_datatype_t *datatype,
                               ompi_message_t **message, int blocking,
                               fs_ompi_req_t **req_p, fs_status_t *st_p)
{
    ompi_message_t *msg      = *message;
    ompi_communicator_t *comm = msg->comm;
    fs_ompi_req_t *req = fs_ompi_req_get(FS_OMPI_REQ_RECV, comm, 0);

    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    fs_recv_prepare(&req->core.recv, fs_ompi_comm(comm), msg->peer, MPI_ANY_TAG);
    fs_ompi_buf_prepare(req, buf, count, datatype, 0, &req->core.recv.buf);
    if (blocking) {
        *st_p = fs_ompi_recv_start(req, (fs_msg_t *)msg->req_ptr);
    } else {
        fs_ompi_recv_begin(req, (fs_msg_t *)msg->req_ptr);
    }
    ompi_message_return(msg);
    *message = MPI_MESSAGE_NULL;
    *req_p   = req;
    return OMPI_SUCCESS;
}

int mca_pml_failstop_imrecv(void *buf, size_t count, ompi_datatype_t *datatype,
                            ompi_message_t **message, ompi_request_t **request)
{
    ompi_communicator_t *comm = (*message)->comm;
    fs_ompi_req_t *req;
    fs_status_t st;
    int rc = fs_ompi_mrecv_begin(buf, count, datatype, message, 0, &req, &st);

    if (rc == OMPI_SUCCESS) {
        OBJ_RETAIN(comm);
        req->retained = 1;
        *request      = &req->ompi;
    }
    return rc;
}

int mca_pml_failstop_mrecv(void *buf, size_t count, ompi_datatype_t *datatype,
                           ompi_message_t **message, ompi_status_public_t *status)
{
    fs_ompi_req_t *req;
    fs_status_t st;
    int rc = fs_ompi_mrecv_begin(buf, count, datatype, message, 1, &req, &st);

    return (rc == OMPI_SUCCESS) ? fs_ompi_blocking_finish(req, st, status) : rc;
}

static void fs_ompi_probe_status(ompi_status_public_t *status,
                                 const fs_probe_info_t *info)
{
    if (status != MPI_STATUS_IGNORE) {
        status->MPI_SOURCE = info->src;
        status->MPI_TAG    = info->tag;
        status->_ucount    = info->len;
        status->_cancelled = 0;
    }
}

/* One look at the queues; progress once if nothing matched.  For a matched
 * probe the message object is taken first, so a match is never lost to an
 * allocation failure.  Returns an MPI error code. */
static int fs_ompi_probe_once(int src, int tag, ompi_communicator_t *comm,
                              int remove, int *matched, ompi_message_t **message,
                              ompi_status_public_t *status)
{
    ompi_message_t *m = NULL;
    fs_probe_info_t info;
    fs_msg_t *msg = NULL;
    fs_status_t st;

    if (remove && ((m = ompi_message_alloc()) == NULL)) {
        return MPI_ERR_NO_MEM;
    }
    fs_ompi_anysrc_sync(comm, src);
    fs_ompi_lock();
    st = fs_probe(fs_ompi_comm(comm), src, tag, remove, matched, &info, &msg);
    fs_ompi_unlock();
    if ((st != FS_OK) || !*matched) {
        if (m != NULL) {
            ompi_message_return(m);
        }
        if (st == FS_OK) {
            fs_ompi_progress();
        }
        return fs_ompi_error(st);
    }
    fs_ompi_probe_status(status, &info);
    if (remove) {
        m->comm    = comm;
        m->req_ptr = msg;
        m->peer    = info.src;
        m->count   = info.len;
        *message   = m;
    }
    return MPI_SUCCESS;
}

int mca_pml_failstop_iprobe(int src, int tag, ompi_communicator_t *comm, int *matched,
                            ompi_status_public_t *status)
{
    return fs_ompi_probe_once(src, tag, comm, 0, matched, NULL, status);
}

int mca_pml_failstop_improbe(int src, int tag, ompi_communicator_t *comm, int *matched,
                             ompi_message_t **message, ompi_status_public_t *status)
{
    return fs_ompi_probe_once(src, tag, comm, 1, matched, message, status);
}

int mca_pml_failstop_probe(int src, int tag, ompi_communicator_t *comm,
                           ompi_status_public_t *status)
{
    int matched = 0, rc;

    do {
        rc = fs_ompi_probe_once(src, tag, comm, 0, &matched, NULL, status);
    } while ((rc == MPI_SUCCESS) && !matched);
    return rc;
}

int mca_pml_failstop_mprobe(int src, int tag, ompi_communicator_t *comm,
                            ompi_message_t **message, ompi_status_public_t *status)
{
    int matched = 0, rc;

    do {
        rc = fs_ompi_probe_once(src, tag, comm, 1, &matched, message, status);
    } while ((rc == MPI_SUCCESS) && !matched);
    return rc;
}

/* ---- persistent requests ---------------------------------------------------- */

int mca_pml_failstop_start(size_t count, ompi_request_t **requests)
{
    size_t i;

    for (i = 0; i < count; ++i) {
        fs_ompi_req_t *req = (fs_ompi_req_t *)requests[i];

        if ((req == NULL) || (req->ompi.req_type != OMPI_REQUEST_PML)) {
            continue;
        }
        req->ompi.req_state     = OMPI_REQUEST_ACTIVE;
        req->ompi.req_complete  = REQUEST_PENDING;
        req->ompi.req_status._cancelled = 0;
        if (req->kind == FS_OMPI_REQ_SEND) {
            fs_ompi_send_restart(req);
        } else {
            fs_ompi_recv_restart(req);
        }
    }
    return OMPI_SUCCESS;
}
