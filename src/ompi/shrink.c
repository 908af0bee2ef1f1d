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
#include "common/fs_bitmap.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "ompi/mca/coll/base/base.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

#define FS_OMPI_PRIVATE_CID 65536u

/* agreed ids are odd; even ones are derived (coll.c) */
static uint32_t fs_shrink_next_cid = FS_OMPI_PRIVATE_CID + 1;

static __thread int fs_shadow_building;

int fs_ompi_building_shadow(void)
{
    return fs_shadow_building;
}

uint32_t fs_ompi_derived_cid(uint32_t cid)
{
    return FS_OMPI_PRIVATE_CID + 2 * cid;
}

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
    if (OMPI_COMM_IS_INTER(comm)) {
        return MPI_ERR_UNSUPPORTED_OPERATION;
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

uint32_t fs_ompi_private_cid(void)
{
    uint32_t cid;

    fs_ompi_lock();
    cid = fs_shrink_next_cid;
    fs_ompi_unlock();
    return cid;
}

/* The communicator of parent's members outside failed, in rank order, with
 * the agreed context id cid; built locally (see the top).  A visible one is
 * in Open MPI's table of communicators (MPI_Finalize frees it if the program
 * does not); a shadow (survivors.c) is not: its parent frees it. */
int fs_ompi_comm_survivors(ompi_communicator_t *parent, const uint64_t *failed, uint32_t cid,
                           int visible, const char *what, ompi_communicator_t **newcomm_p)
{
    ompi_communicator_t *newcomm = NULL;
    int n = ompi_comm_size(parent), nlive = 0, r, rc;
    int *ranks;
    ompi_group_t *group;

    fs_ompi_lock();
    if (((cid & 1) != 0) && (cid + 2 > fs_shrink_next_cid)) {
        fs_shrink_next_cid = cid + 2;
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
        if (!fs_bm_test(failed, (uint32_t)r)) {
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
    if (visible) {
        opal_pointer_array_set_item(&ompi_mpi_communicators, (int)cid, newcomm);
    }
    snprintf(newcomm->c_name, MPI_MAX_OBJECT_NAME, "%s of %d", what, parent->c_contextid);
    rc = MCA_PML_CALL(add_comm(newcomm));
    if (rc == OMPI_SUCCESS) {
        OMPI_COMM_SET_PML_ADDED(newcomm);
        fs_shadow_building = !visible;     /* coll.c: no agreement layer on it */
        rc = mca_coll_base_comm_select(newcomm);
        fs_shadow_building = 0;
    }
    if (rc != OMPI_SUCCESS) {
        OBJ_RELEASE(newcomm);
        return MPI_ERR_INTERN;
    }
    *newcomm_p = newcomm;
    return MPI_SUCCESS;
}

static int fs_shrink_build(fs_shrink_t *sh)
{
    if (sh->nb.op.status != FS_OK) {
        return fs_ompi_error(sh->nb.op.status);
    }
    return fs_ompi_comm_survivors(sh->parent, sh->failed, (uint32_t)sh->nb.op.v[0], 1,
                                  "MPIX_Comm_shrink", sh->newcomm);
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
