/* ULFM's recovery calls (include/failstop.h): MPIX_Comm_agree and
 * MPIX_Comm_iagree over failstop's agreement (the protocol is
 * src/failure/agree.c, its engine side src/proto/agreement.c), and
 * MPIX_Comm_revoke / MPIX_Comm_is_revoked (src/proto/revoke.c). */
#include "ompi/ompi_int.h"
#include "failstop.h"

#include "ompi/request/grequest.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

/* The agreement's outcome as ULFM gives it: success, or the failure class
 * when a failed member is not acknowledged by every member (uniform).  The
 * value is agreed either way. */
static int fs_recovery_rc(const fs_agreement_t *op)
{
    if (op->status != FS_OK) {
        return fs_ompi_error(op->status);
    }
    return op->unacked ? fs_ompi.errors.fail_stop_class : MPI_SUCCESS;
}

static int fs_recovery_start(MPI_Comm comm, int flag, fs_agreement_t *op)
{
    fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_AND }, .v = { (uint32_t)flag } };
    fs_comm_t *fcomm;
    fs_status_t st;
    int rc = fs_mpix_comm(comm, &fcomm);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    fs_ompi_lock();
    st = fs_comm_agree_start(fcomm, &in, op);
    fs_ompi_unlock();
    return (st == FS_OK) ? MPI_SUCCESS : fs_ompi_error(st);
}

FS_MPIX_API int MPIX_Comm_agree(MPI_Comm comm, int *flag)
{
    fs_agreement_t op = { .failed = NULL, .complete = NULL };
    int rc = (flag == NULL) ? MPI_ERR_ARG : fs_recovery_start(comm, *flag, &op);

    if (rc == MPI_SUCCESS) {
        while (!__atomic_load_n(&op.done, __ATOMIC_ACQUIRE)) {
            opal_progress();
        }
        rc = fs_recovery_rc(&op);
        if (op.status == FS_OK) {
            *flag = (int)(uint32_t)op.v[0];
        }
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_agree");
}

/* ---- nonblocking: a generalized request completed by the agreement ---- */

typedef struct fs_iagree {
    fs_agreement_t  op;
    int            *flag;
    ompi_request_t *req;
    int             rc;
    int             freed;      /* the request is gone: free at completion */
} fs_iagree_t;

static void fs_iagree_done(fs_agreement_t *op)
{
    fs_iagree_t *ia = op->host;

    ia->rc = fs_recovery_rc(op);
    if (op->status == FS_OK) {
        *ia->flag = (int)(uint32_t)op->v[0];
    }
    if (ia->freed) {
        free(ia);
        return;
    }
    ompi_grequest_complete(ia->req);
}

static int fs_iagree_query(void *extra, MPI_Status *status)
{
    fs_iagree_t *ia = extra;

    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG    = MPI_UNDEFINED;
    status->MPI_ERROR  = ia->rc;
    status->_cancelled = 0;
    status->_ucount    = 0;
    return ia->rc;
}

static int fs_iagree_free(void *extra)
{
    fs_iagree_t *ia = extra;
    int done;

    fs_ompi_lock();
    done = __atomic_load_n(&ia->op.done, __ATOMIC_ACQUIRE);
    ia->freed = !done;
    fs_ompi_unlock();
    if (done) {
        free(ia);
    }
    return MPI_SUCCESS;
}

static int fs_iagree_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;         /* an agreement cannot be cancelled */
}

FS_MPIX_API int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    fs_iagree_t *ia;
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && ((flag == NULL) || (request == NULL))) {
        rc = MPI_ERR_ARG;
    }
    if (rc != MPI_SUCCESS) {
        return fs_mpix_error(comm, rc, "MPIX_Comm_iagree");
    }
    ia = calloc(1, sizeof(*ia));
    if (ia == NULL) {
        return fs_mpix_error(comm, MPI_ERR_NO_MEM, "MPIX_Comm_iagree");
    }
    ia->flag        = flag;
    ia->op.host     = ia;
    ia->op.complete = fs_iagree_done;
    rc = ompi_grequest_start(fs_iagree_query, fs_iagree_free, fs_iagree_cancel, ia,
                             &ia->req);
    if (rc != OMPI_SUCCESS) {
        free(ia);
        return fs_mpix_error(comm, MPI_ERR_NO_MEM, "MPIX_Comm_iagree");
    }
    *request = ia->req;
    rc = fs_recovery_start(comm, *flag, &ia->op);
    if (rc != MPI_SUCCESS) {
        ia->rc = rc;
        ompi_grequest_complete(ia->req);    /* the error comes at completion */
    }
    return MPI_SUCCESS;
}

FS_MPIX_API int MPIX_Comm_revoke(MPI_Comm comm)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if (rc == MPI_SUCCESS) {
        fs_ompi_lock();
        rc = fs_ompi_error(fs_comm_revoke(fcomm));
        fs_ompi_unlock();
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_revoke");
}

FS_MPIX_API int MPIX_Comm_is_revoked(MPI_Comm comm, int *flag)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && (flag == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) {
        fs_ompi_lock();
        *flag = fs_comm_is_revoked(fcomm);
        fs_ompi_unlock();
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_is_revoked");
}
