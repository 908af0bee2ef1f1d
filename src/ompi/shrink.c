/* MPIX_Comm_shrink / MPIX_Comm_ishrink: one agreement, then a local
 * communicator creation (docs/DESIGN.md "Agreement and revoke").
 *
 * The agreement decides, uniformly, the failed set F_D and a context id:
 * the MAX of every member's next private id.  Private ids start at
 * FS_OMPI_PRIVATE_CID and each process moves past every one it has seen,
 * so the agreed id is free at every member; Open MPI allocates context ids
 * from 0 up and never reaches them in practice (it takes the lowest id
 * free at every participant, and these are taken where they are used).
 * The new communicator -- the members outside F_D, in rank order -- is
 * then built locally, as Open MPI's ompi_comm_activate would, minus its
 * collective steps (context-id agreement and activation barrier), which a
 * dead member would hang.  A member that dies after the agreement is a
 * failed member of the new communicator, as in ULFM. */
#include "ompi/ompi_int.h"
#include "failstop.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/request/grequest.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

#define FS_OMPI_PRIVATE_CID 65536u

static uint32_t fs_shrink_next_cid = FS_OMPI_PRIVATE_CID;

typedef struct fs_shrink {
    fs_agreement_t  op;
    uint64_t       *failed;
    MPI_Comm        parent;
    MPI_Comm       *newcomm;
    ompi_request_t *req;        /* ishrink */
    int             rc;
    int             built;      /* ishrink: *newcomm made (query runs more than once) */
    int             freed;
} fs_shrink_t;

static int fs_shrink_start(MPI_Comm comm, fs_shrink_t *sh)
{
    fs_agree_input_t in = { .nv = 1, .op = { FS_AGREE_MAX } };
    fs_comm_t *fcomm;
    fs_status_t st;
    int rc = fs_mpix_comm(comm, &fcomm);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (OMPI_COMM_IS_INTER(comm)) {
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    sh->failed = calloc(fs_comm_agree_words(fcomm), sizeof(uint64_t));
    if (sh->failed == NULL) {
        return MPI_ERR_NO_MEM;
    }
    sh->op.failed = sh->failed;
    sh->parent    = comm;
    fs_ompi_lock();
    in.v[0] = fs_shrink_next_cid;
    st = fs_comm_agree_start(fcomm, &in, &sh->op);
    fs_ompi_unlock();
    return (st == FS_OK) ? MPI_SUCCESS : fs_ompi_error(st);
}

/* The survivors' communicator, from the decision; local. */
static int fs_shrink_build(fs_shrink_t *sh)
{
    ompi_communicator_t *parent = sh->parent, *newcomm = NULL;
    int n = ompi_comm_size(parent), nlive = 0, r, rc;
    uint32_t cid;
    int *ranks;
    ompi_group_t *group;

    if (sh->op.status != FS_OK) {
        return fs_ompi_error(sh->op.status);
    }
    cid = (uint32_t)sh->op.v[0];
    fs_ompi_lock();
    if (cid + 1 > fs_shrink_next_cid) {
        fs_shrink_next_cid = cid + 1;
    }
    fs_ompi_unlock();
    if ((cid > INT32_MAX) || (opal_pointer_array_get_item(&ompi_mpi_communicators, (int)cid) != NULL)) {
        return MPI_ERR_INTERN;         /* cannot happen: the id is free everywhere */
    }
    ranks = malloc((size_t)n * sizeof(*ranks));
    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (r = 0; r < n; r++) {
        if (!((sh->failed[r / 64] >> (r % 64)) & 1)) {
            ranks[nlive++] = r;
        }
    }
    rc = ompi_group_incl(parent->c_local_group, nlive, ranks, &group);
    free(ranks);
    if (rc != OMPI_SUCCESS) {
        return MPI_ERR_NO_MEM;
    }
    rc = ompi_comm_set(&newcomm, parent, 0, NULL, 0, NULL, NULL, parent->error_handler,
                       false, group, NULL);
    OBJ_RELEASE(group);                /* ompi_comm_set retained it */
    if (rc != OMPI_SUCCESS) {
        return MPI_ERR_NO_MEM;
    }
    newcomm->c_contextid = cid;
    opal_pointer_array_set_item(&ompi_mpi_communicators, (int)cid, newcomm);
    snprintf(newcomm->c_name, MPI_MAX_OBJECT_NAME, "MPIX_Comm_shrink of %d", parent->c_contextid);
    rc = MCA_PML_CALL(add_comm(newcomm));
    if (rc == OMPI_SUCCESS) {
        OMPI_COMM_SET_PML_ADDED(newcomm);
        rc = mca_coll_base_comm_select(newcomm);
    }
    if (rc != OMPI_SUCCESS) {
        OBJ_RELEASE(newcomm);
        return MPI_ERR_INTERN;
    }
    *sh->newcomm = newcomm;
    return MPI_SUCCESS;
}

FS_MPIX_API int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    fs_shrink_t sh = { .op = { .failed = NULL } };
    int rc = (newcomm == NULL) ? MPI_ERR_ARG : fs_shrink_start(comm, &sh);

    sh.newcomm = newcomm;
    if (rc == MPI_SUCCESS) {
        while (!__atomic_load_n(&sh.op.done, __ATOMIC_ACQUIRE)) {
            opal_progress();
        }
        rc = fs_shrink_build(&sh);
    }
    free(sh.failed);
    return fs_mpix_error(comm, rc, "MPIX_Comm_shrink");
}

/* ---- nonblocking: the communicator is built when the request is waited
 * for (query), outside the progress call the agreement completes in ---- */

static void fs_ishrink_done(fs_agreement_t *op)
{
    fs_shrink_t *sh = op->host;

    if (sh->freed) {
        free(sh->failed);
        free(sh);
        return;
    }
    ompi_grequest_complete(sh->req);
}

static int fs_ishrink_query(void *extra, MPI_Status *status)
{
    fs_shrink_t *sh = extra;

    if (!sh->built) {
        sh->built = 1;
        sh->rc    = fs_shrink_build(sh);
    }
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG    = MPI_UNDEFINED;
    status->MPI_ERROR  = sh->rc;
    status->_cancelled = 0;
    status->_ucount    = 0;
    return sh->rc;
}

static int fs_ishrink_free(void *extra)
{
    fs_shrink_t *sh = extra;
    int done;

    fs_ompi_lock();
    done = __atomic_load_n(&sh->op.done, __ATOMIC_ACQUIRE);
    sh->freed = !done;
    fs_ompi_unlock();
    if (done) {
        free(sh->failed);
        free(sh);
    }
    return MPI_SUCCESS;
}

static int fs_ishrink_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;
}

FS_MPIX_API int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    fs_shrink_t *sh;
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && ((newcomm == NULL) || (request == NULL))) {
        rc = MPI_ERR_ARG;
    }
    if ((rc != MPI_SUCCESS) || ((sh = calloc(1, sizeof(*sh))) == NULL)) {
        return fs_mpix_error(comm, rc != MPI_SUCCESS ? rc : MPI_ERR_NO_MEM,
                             "MPIX_Comm_ishrink");
    }
    sh->newcomm     = newcomm;
    sh->op.host     = sh;
    sh->op.complete = fs_ishrink_done;
    *newcomm        = MPI_COMM_NULL;
    if (ompi_grequest_start(fs_ishrink_query, fs_ishrink_free, fs_ishrink_cancel, sh,
                            &sh->req) != OMPI_SUCCESS) {
        free(sh);
        return fs_mpix_error(comm, MPI_ERR_NO_MEM, "MPIX_Comm_ishrink");
    }
    *request = sh->req;
    rc = fs_shrink_start(comm, sh);
    if (rc != MPI_SUCCESS) {
        sh->built = 1;
        sh->rc    = rc;
        ompi_grequest_complete(sh->req);
    }
    return MPI_SUCCESS;
}
