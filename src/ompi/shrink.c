/* MPIX_Comm_shrink / MPIX_Comm_ishrink: one agreement, then a local
 * communicator creation (docs/DESIGN.md "Agreement and revoke").
 *
 * The agreement decides, uniformly, the failed set F_D and a context id
 * (the MAX of every member's next private id, comm_build.c).  The new
 * communicator -- the members outside F_D, in rank order; for an
 * intercommunicator, an intercommunicator of both groups' survivors -- is
 * then built locally (comm_build.c). */
#include "ompi/ompi_int.h"
#include "failstop.h"

#include "ompi/communicator/communicator.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

typedef struct fs_shrink {
    fs_ompi_nb_t    nb;         /* first; only nb.op for MPIX_Comm_shrink */
    uint64_t       *failed;
    MPI_Comm        parent;
    MPI_Comm       *newcomm;
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
    sh->failed = calloc(fs_comm_agree_words(fcomm), sizeof(uint64_t));
    if (sh->failed == NULL) {
        return MPI_ERR_NO_MEM;
    }
    sh->nb.op.failed = sh->failed;
    sh->parent    = comm;
    in.v[0] = fs_ompi_private_cid();
    fs_ompi_lock();
    st = fs_comm_agree_start(fcomm, &in, &sh->nb.op);
    fs_ompi_unlock();
    return (st == FS_OK) ? MPI_SUCCESS : fs_ompi_error(st);
}

static int fs_shrink_build(fs_shrink_t *sh)
{
    if (sh->nb.op.status != FS_OK) {
        return fs_ompi_error(sh->nb.op.status);
    }
    return fs_ompi_comm_survivors(sh->parent, sh->failed, (uint32_t)sh->nb.op.v[0],
                                  (uint32_t)sh->nb.op.v[0] + 2, 1, "MPIX_Comm_shrink",
                                  sh->newcomm);
}

FS_MPIX_API int MPIX_Comm_shrink(MPI_Comm comm, MPI_Comm *newcomm)
{
    fs_shrink_t sh = { .failed = NULL };
    int rc = (newcomm == NULL) ? MPI_ERR_ARG : fs_shrink_start(comm, &sh);

    sh.newcomm = newcomm;
    if (rc == MPI_SUCCESS) {
        while (!__atomic_load_n(&sh.nb.op.done, __ATOMIC_ACQUIRE)) {
            opal_progress();
        }
        rc = fs_shrink_build(&sh);
    }
    free(sh.failed);
    return fs_mpix_error(comm, rc, "MPIX_Comm_shrink");
}

/* ---- nonblocking (nbop.c): the communicator is built in the query ---- */

static int fs_ishrink_finish(fs_ompi_nb_t *nb)
{
    return fs_shrink_build((fs_shrink_t *)nb);
}

static void fs_ishrink_destroy(fs_ompi_nb_t *nb)
{
    fs_shrink_t *sh = (fs_shrink_t *)nb;

    free(sh->failed);
    free(sh);
}

FS_MPIX_API int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    fs_shrink_t *sh = NULL;
    int rc = (newcomm == NULL) ? MPI_ERR_ARG : MPI_SUCCESS;

    if (rc == MPI_SUCCESS) {
        sh = (fs_shrink_t *)fs_ompi_nb_new(comm, sizeof(*sh), fs_ishrink_finish,
                                           fs_ishrink_destroy, request, &rc);
    }
    if (sh == NULL) {
        return fs_mpix_error(comm, rc, "MPIX_Comm_ishrink");
    }
    sh->newcomm = newcomm;
    *newcomm    = MPI_COMM_NULL;
    rc = fs_shrink_start(comm, sh);
    if (rc != MPI_SUCCESS) {
        fs_ompi_nb_fail(&sh->nb, rc);
    }
    return MPI_SUCCESS;
}
