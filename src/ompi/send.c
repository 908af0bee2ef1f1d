/* Send entry points.  Ready sends are standard sends; synchronous (and
 * "complete") sends become core synchronous sends; buffered sends are packed
 * into the MPI_Buffer_attach buffer and then sent as standard sends, with
 * the user's request completed at once. */
#include "ompi/ompi_int.h"

#include "ompi/mca/pml/base/pml_base_bsend.h"

static fs_send_mode_t fs_ompi_send_mode(mca_pml_base_send_mode_t mode)
{
    return ((mode == MCA_PML_BASE_SEND_SYNCHRONOUS) ||
            (mode == MCA_PML_BASE_SEND_COMPLETE)) ? FS_SEND_SYNC : FS_SEND_STANDARD;
}

/* Packs a buffered send into the attached buffer; MPI_ERR_BUFFER if it does
 * not fit, as the standard requires. */
static int fs_ompi_bsend_pack(fs_ompi_req_t *req, const void *buf, size_t count,
                              ompi_datatype_t *datatype, fs_buf_t *fbuf)
{
    fs_buf_t user;
    void *packed;

    fs_ompi_buf_prepare_send(req, buf, count, datatype, &user);
    packed = mca_pml_base_bsend_request_alloc_buf(user.len ? user.len : 1);
    if (packed == NULL) {
        fs_ompi_buf_release(req);
        return MPI_ERR_BUFFER;
    }
    fs_buf_pack(&fs_ompi_host_ops.dt, &user, 0, packed, user.len);
    fs_ompi_buf_release(req);
    req->bsend_buf = packed;
    fs_buf_set_contig(fbuf, packed, user.len);
    return OMPI_SUCCESS;
}

/* Fills the core send of req; returns an MPI error for bad input. */
static int fs_ompi_send_setup(fs_ompi_req_t *req, const void *buf, size_t count,
                              ompi_datatype_t *datatype, int dst, int tag,
                              mca_pml_base_send_mode_t mode, ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);
    fs_send_t *sreq  = &req->core.send;

    if (OPAL_UNLIKELY((dst < 0) || ((uint32_t)dst >= fs_comm_size(fcomm)))) {
        return MPI_ERR_RANK;
    }
    req->mode = mode;
    fs_send_prepare(sreq, fcomm, dst, tag, fs_ompi_send_mode(mode));
    if (OPAL_UNLIKELY(mode == MCA_PML_BASE_SEND_BUFFERED)) {
        return fs_ompi_bsend_pack(req, buf, count, datatype, &sreq->buf);
    }
    fs_ompi_buf_prepare_send(req, buf, count, datatype, &sreq->buf);
    return OMPI_SUCCESS;
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
    } else if (req->bsend_buf != NULL) {
        /* buffered: the user's part is done once the data is packed */
        req->detached                  = 1;
        req->ompi.req_status.MPI_ERROR = MPI_SUCCESS;
        ompi_request_complete(&req->ompi, true);
    }
    return OMPI_SUCCESS;
}

int mca_pml_failstop_isend(const void *buf, size_t count, ompi_datatype_t *datatype,
                           int dst, int tag, mca_pml_base_send_mode_t mode,
                           ompi_communicator_t *comm, ompi_request_t **request)
{
    fs_ompi_req_t *req = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 0);
    int rc;

    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = fs_ompi_send_setup(req, buf, count, datatype, dst, tag, mode, comm);
    if (OPAL_UNLIKELY(rc != OMPI_SUCCESS)) {
        fs_ompi_req_put(req);
        return rc;
    }
    OBJ_RETAIN(comm);
    req->retained = 1;
    fs_ompi_send_begin(req);
    *request = &req->ompi;
    return OMPI_SUCCESS;
}

int mca_pml_failstop_send(const void *buf, size_t count, ompi_datatype_t *datatype,
                          int dst, int tag, mca_pml_base_send_mode_t mode,
                          ompi_communicator_t *comm)
{
    fs_ompi_req_t *req = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 0);
    ompi_request_t *ompi_req;
    int rc;

    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    rc = fs_ompi_send_setup(req, buf, count, datatype, dst, tag, mode, comm);
    if (OPAL_UNLIKELY(rc != OMPI_SUCCESS)) {
        fs_ompi_req_put(req);
        return rc;
    }
    fs_ompi_send_begin(req);
    ompi_request_wait_completion(&req->ompi);
    rc       = req->ompi.req_status.MPI_ERROR;
    ompi_req = &req->ompi;
    req->ompi.req_free(&ompi_req);
    return rc;
}

int mca_pml_failstop_isend_init(const void *buf, size_t count, ompi_datatype_t *datatype,
                                int dst, int tag, mca_pml_base_send_mode_t mode,
                                ompi_communicator_t *comm, ompi_request_t **request)
{
    fs_ompi_req_t *req;

    if (OPAL_UNLIKELY((dst < 0) || ((uint32_t)dst >= fs_comm_size(fs_ompi_comm(comm))))) {
        return MPI_ERR_RANK;
    }
    req = fs_ompi_req_get(FS_OMPI_REQ_SEND, comm, 1);
    if (OPAL_UNLIKELY(req == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    req->user_buf = (void *)buf;
    req->count    = count;
    req->datatype = datatype;
    req->peer     = dst;
    req->tag      = tag;
    req->mode     = mode;
    OMPI_DATATYPE_RETAIN(datatype);
    OBJ_RETAIN(comm);
    req->retained = 1;
    *request = &req->ompi;
    return OMPI_SUCCESS;
}

/* MPI_Start of a persistent send. */
int fs_ompi_send_restart(fs_ompi_req_t *req)
{
    int rc = fs_ompi_send_setup(req, req->user_buf, req->count, req->datatype,
                                req->peer, req->tag, req->mode,
                                req->ompi.req_mpi_object.comm);

    if (rc != OMPI_SUCCESS) {
        req->ompi.req_status.MPI_ERROR = rc;
        ompi_request_complete(&req->ompi, true);
        return OMPI_SUCCESS;
    }
    return fs_ompi_send_begin(req);
}
