/* ULFM's recovery calls (include/failstop.h): MPIX_Comm_agree and
 * MPIX_Comm_iagree over failstop's agreement (the protocol is
 * src/failure/agree.c, its engine side src/proto/agreement.c), and
 * MPIX_Comm_revoke / MPIX_Comm_is_revoked (src/proto/revoke.c). */
#include "ompi/ompi_int.h"
#include "failstop.h"

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

/* An intercommunicator's agreement gives each group the AND of the other
 * group's flags (ULFM): it carries one AND per group, in the members' order
 * (fs_comm_members), and each member contributes all ones to its own
 * group's.  The slot of the other group: 0 on an intracommunicator. */
static int fs_recovery_other_slot(fs_comm_t *fcomm)
{
    uint32_t rank;

    return fs_comm_member_rank(fcomm, 0, &rank) == FS_COMM_LOCAL;
}

static int fs_recovery_start(MPI_Comm comm, int flag, fs_agreement_t *op)
{
    fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_AND, FS_AGREE_AND } };
    fs_comm_t *fcomm;
    fs_status_t st;
    int rc = fs_mpix_comm(comm, &fcomm), other;

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    other = fs_recovery_other_slot(fcomm);
    in.v[0] = (uint32_t)flag;
    if (OMPI_COMM_IS_INTER(comm)) {
        in.nv = 2;
        in.v[1 - other] = (uint32_t)flag;   /* its own group's */
        in.v[other]     = UINT32_MAX;
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
            *flag = (int)(uint32_t)op.v[fs_recovery_other_slot(op.comm)];
        }
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_agree");
}

/* ---- nonblocking (nbop.c) ---- */

typedef struct fs_iagree {
    fs_ompi_nb_t nb;            /* first */
    int         *flag;
} fs_iagree_t;

static int fs_iagree_finish(fs_ompi_nb_t *nb)
{
    fs_iagree_t *ia = (fs_iagree_t *)nb;

    if (nb->op.status == FS_OK) {
        *ia->flag = (int)(uint32_t)nb->op.v[fs_recovery_other_slot(nb->op.comm)];
    }
    return fs_recovery_rc(&nb->op);
}

static void fs_iagree_destroy(fs_ompi_nb_t *nb)
{
    free(nb);
}

FS_MPIX_API int MPIX_Comm_iagree(MPI_Comm comm, int *flag, MPI_Request *request)
{
    fs_iagree_t *ia = NULL;
    int rc = (flag == NULL) ? MPI_ERR_ARG : MPI_SUCCESS;

    if (rc == MPI_SUCCESS) {
        ia = (fs_iagree_t *)fs_ompi_nb_new(comm, sizeof(*ia), fs_iagree_finish,
                                           fs_iagree_destroy, request, &rc);
    }
    if (ia == NULL) {
        return fs_mpix_error(comm, rc, "MPIX_Comm_iagree");
    }
    ia->flag = flag;
    rc = fs_recovery_start(comm, *flag, &ia->nb.op);
    if (rc != MPI_SUCCESS) {
        fs_ompi_nb_fail(&ia->nb, rc);       /* the error comes at completion */
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
