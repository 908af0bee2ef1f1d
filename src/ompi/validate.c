/* MPIX_Comm_validate / MPIX_Icomm_validate (MPI-FT 17.7.4): one agreement
 * decides, uniformly, the failed set F, whether comm is revoked anywhere
 * (OR: then every caller gets MPIX_ERR_REVOKED) and a private context id
 * (MAX, as in shrink.c).  Every caller then recognizes F on comm (collectives
 * on again, src/proto/validate.c) and, when F is not empty, runs comm's
 * collectives over the survivors on a shadow communicator with that id
 * (survivors.c).  With F empty nothing else changes: no member knew of a
 * failure when it joined, so comm was active everywhere. */
#include "ompi/ompi_int.h"
#include "failstop.h"
#include "common/fs_bitmap.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "opal/runtime/opal_progress.h"

#include <stdlib.h>

typedef struct fs_validate {
    fs_ompi_nb_t nb;            /* first; only nb.op for MPIX_Comm_validate */
    uint64_t    *failed;
    MPI_Comm     comm;
    MPI_Group   *group;
} fs_validate_t;

enum { FS_VAL_REVOKED, FS_VAL_CID, FS_VAL_NV };

static int fs_validate_start(MPI_Comm comm, fs_validate_t *va)
{
    fs_agree_input_t in = { .nv = FS_VAL_NV };
    fs_comm_t *fcomm;
    fs_status_t st;
    int rc = fs_mpix_comm(comm, &fcomm);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    va->failed = calloc(fs_comm_agree_words(fcomm), sizeof(uint64_t));
    if (va->failed == NULL) {
        return MPI_ERR_NO_MEM;
    }
    va->comm                 = comm;
    va->nb.op.failed         = va->failed;
    in.op[FS_VAL_REVOKED]    = FS_AGREE_OR;
    in.op[FS_VAL_CID]        = FS_AGREE_MAX;
    in.v[FS_VAL_CID]         = fs_ompi_private_cid();
    fs_ompi_lock();
    in.v[FS_VAL_REVOKED] = (uint64_t)fs_comm_is_revoked(fcomm);
    st = fs_comm_agree_start(fcomm, &in, &va->nb.op);
    fs_ompi_unlock();
    return (st == FS_OK) ? MPI_SUCCESS : fs_ompi_error(st);
}

/* F as a group, the same at every member: in member order (an
 * intercommunicator's: the first group's failed, then the other's). */
static int fs_validate_group(ompi_communicator_t *comm, const uint64_t *failed,
                             ompi_group_t **group_p)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);
    uint32_t nl = (uint32_t)ompi_comm_size(comm), nr = (uint32_t)fs_ompi_peer_size(comm);
    uint64_t *bits = malloc((fs_bm_words(nl) + fs_bm_words(nr)) * sizeof(*bits));
    ompi_group_t *part[2] = { NULL, NULL };
    uint32_t rank;
    int rc, local_first;

    if (bits == NULL) {
        return MPI_ERR_NO_MEM;
    }
    if (!OMPI_COMM_IS_INTER(comm)) {
        fs_ompi_group_bits(fcomm, failed, FS_COMM_REMOTE, bits, nr);
        rc = fs_ompi_group_select(comm->c_local_group, bits, 1, group_p);
        free(bits);
        return rc;
    }
    local_first = (fs_comm_member_rank(fcomm, 0, &rank) == FS_COMM_LOCAL);
    fs_ompi_group_bits(fcomm, failed, FS_COMM_LOCAL, bits, nl);
    fs_ompi_group_bits(fcomm, failed, FS_COMM_REMOTE, bits + fs_bm_words(nl), nr);
    rc = fs_ompi_group_select(comm->c_local_group, bits, 1, &part[!local_first]);
    if (rc == MPI_SUCCESS) {
        rc = fs_ompi_group_select(comm->c_remote_group, bits + fs_bm_words(nl), 1,
                                  &part[local_first]);
    }
    if ((rc == MPI_SUCCESS) && (ompi_group_union(part[0], part[1], group_p) != OMPI_SUCCESS)) {
        rc = MPI_ERR_NO_MEM;
    }
    free(bits);
    for (rank = 0; rank < 2; ++rank) {
        if (part[rank] != NULL) {
            OBJ_RELEASE(part[rank]);
        }
    }
    return rc;
}

/* The decision taken: recognize F, move the collectives, make the group. */
static int fs_validate_finish(fs_ompi_nb_t *nb)
{
    fs_validate_t *va = (fs_validate_t *)nb;
    ompi_communicator_t *comm = va->comm;
    uint32_t cid = (uint32_t)nb->op.v[FS_VAL_CID];
    int rc;
    fs_status_t st;

    if (nb->op.status != FS_OK) {
        return fs_ompi_error(nb->op.status);
    }
    if (nb->op.v[FS_VAL_REVOKED]) {
        return fs_ompi_error(FS_ERR_REVOKED);
    }
    if (nb->op.nfailed != 0) {
        rc = fs_ompi_survivors_install(comm, va->failed, cid, cid + 2);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    fs_ompi_lock();
    st = fs_comm_recognize(fs_ompi_comm(comm), va->failed);
    fs_ompi_unlock();
    if (st != FS_OK) {
        return fs_ompi_error(st);
    }
    return fs_validate_group(comm, va->failed, (ompi_group_t **)va->group);
}

FS_MPIX_API int MPIX_Comm_validate(MPI_Comm comm, MPI_Group *failed)
{
    fs_validate_t va = { .failed = NULL, .group = failed };
    int rc = (failed == NULL) ? MPI_ERR_ARG : fs_validate_start(comm, &va);

    if (rc == MPI_SUCCESS) {
        while (!__atomic_load_n(&va.nb.op.done, __ATOMIC_ACQUIRE)) {
            opal_progress();
        }
        rc = fs_validate_finish(&va.nb);
    }
    free(va.failed);
    return fs_mpix_error(comm, rc, "MPIX_Comm_validate");
}

static void fs_ivalidate_destroy(fs_ompi_nb_t *nb)
{
    fs_validate_t *va = (fs_validate_t *)nb;

    free(va->failed);
    free(va);
}

FS_MPIX_API int MPIX_Icomm_validate(MPI_Comm comm, MPI_Group *failed, MPI_Request *request)
{
    fs_validate_t *va = NULL;
    int rc = (failed == NULL) ? MPI_ERR_ARG : MPI_SUCCESS;

    if (rc == MPI_SUCCESS) {
        va = (fs_validate_t *)fs_ompi_nb_new(comm, sizeof(*va), fs_validate_finish,
                                             fs_ivalidate_destroy, request, &rc);
    }
    if (va == NULL) {
        return fs_mpix_error(comm, rc, "MPIX_Icomm_validate");
    }
    va->group = failed;
    *failed   = MPI_GROUP_NULL;
    rc = fs_validate_start(comm, va);
    if (rc != MPI_SUCCESS) {
        fs_ompi_nb_fail(&va->nb, rc);       /* the error comes at completion */
    }
    return MPI_SUCCESS;
}
