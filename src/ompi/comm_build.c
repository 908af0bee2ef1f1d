/* Communicators of the survivors, built locally (shrink.c, survivors.c,
 * coll.c; docs/DESIGN.md "Agreement and revoke").
 *
 * Context ids private to failstop start at FS_OMPI_PRIVATE_CID.  Agreed
 * ones (shrink, validate) are odd: each process's next one is
 * fs_ompi_private_cid, the members agree on the MAX, and each moves past
 * every one it has seen, so the agreed id is free at every member.  An
 * intercommunicator's local communicator takes the agreed id + 2 (free for
 * the same reason).  Derived ones (coll.c) are even: FS_OMPI_PRIVATE_CID +
 * 4 * cid for the shadow of communicator cid, + 2 for that shadow's local
 * communicator if cid is an intercommunicator.  Open MPI allocates context
 * ids from 0 up (the lowest free at every participant) and never reaches
 * these in practice.
 *
 * The communicator is built as Open MPI's ompi_comm_activate would build
 * it, minus its collective steps (context-id agreement, activation
 * barrier, an intercommunicator's idup of its local communicator), which a
 * dead member would hang.  A member that dies after the agreement is a
 * failed member of the new communicator, as in ULFM. */
#include "ompi/ompi_int.h"
#include "common/fs_bitmap.h"

#include "ompi/communicator/communicator.h"
#include "ompi/group/group.h"
#include "ompi/mca/coll/base/base.h"

#include <stdlib.h>

#define FS_OMPI_PRIVATE_CID 65536u

static uint32_t fs_build_next_cid = FS_OMPI_PRIVATE_CID + 1;

static __thread int fs_shadow_building;

int fs_ompi_building_shadow(void)
{
    return fs_shadow_building;
}

uint32_t fs_ompi_private_cid(void)
{
    uint32_t cid;

    fs_ompi_lock();
    cid = fs_build_next_cid;
    fs_ompi_unlock();
    return cid;
}

uint32_t fs_ompi_derived_cid(uint32_t cid)
{
    return FS_OMPI_PRIVATE_CID + 4 * cid;
}

/* Bits of failed (member order, fs_comm_members) that fall in group which,
 * by rank there, into bits (fs_bm_words(size) words, cleared first). */
void fs_ompi_group_bits(fs_comm_t *fcomm, const uint64_t *failed, fs_comm_group_t which,
                        uint64_t *bits, uint32_t size)
{
    uint32_t me, i, rank, n = fs_comm_members(fcomm, &me);

    fs_bm_zero(bits, size);
    for (i = 0; i < n; ++i) {
        if (fs_bm_test(failed, i) && (fs_comm_member_rank(fcomm, i, &rank) == which)) {
            fs_bm_set(bits, rank);
        }
    }
}

int fs_ompi_group_select(ompi_group_t *group, const uint64_t *bits, int set,
                         ompi_group_t **new_p)
{
    int n = ompi_group_size(group), k = 0, r, rc;
    int *ranks = malloc(((size_t)n + 1) * sizeof(*ranks));

    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    for (r = 0; r < n; r++) {
        if (fs_bm_test(bits, (uint32_t)r) == set) {
            ranks[k++] = r;
        }
    }
    rc = ompi_group_incl(group, k, ranks, new_p);
    free(ranks);
    return (rc == OMPI_SUCCESS) ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* A new intracommunicator of group's processes (of parent's local group),
 * not yet activated. */
static int fs_build_set(ompi_communicator_t *parent, ompi_group_t *group, uint32_t cid,
                        const char *what, ompi_communicator_t **newcomm_p)
{
    ompi_communicator_t *newcomm = NULL;

    fs_ompi_lock();
    if (((cid & 1) != 0) && (cid + 2 > fs_build_next_cid)) {
        fs_build_next_cid = cid + 2;
    }
    fs_ompi_unlock();
    if ((cid > INT32_MAX) || (opal_pointer_array_get_item(&ompi_mpi_communicators, (int)cid) != NULL)) {
        return MPI_ERR_INTERN;         /* cannot happen: the id is free everywhere */
    }
    if (fs_ompi_comm_set(&newcomm, parent, group) != OMPI_SUCCESS) {
        return MPI_ERR_NO_MEM;
    }
    fs_ompi_set_cid(newcomm, cid);
    snprintf(newcomm->c_name, MPI_MAX_OBJECT_NAME, "%s of %u", what, fs_ompi_cid(parent));
    *newcomm_p = newcomm;
    return MPI_SUCCESS;
}

/* Activation: the table (visible ones: MPI_Finalize frees them if the
 * program does not), the PML, the collective modules. */
static int fs_build_activate(ompi_communicator_t *newcomm, int visible)
{
    int rc;

    if (visible) {
        opal_pointer_array_set_item(&ompi_mpi_communicators, (int)fs_ompi_cid(newcomm), newcomm);
    }
    rc = MCA_PML_CALL(add_comm(newcomm));
    if (rc == OMPI_SUCCESS) {
        OMPI_COMM_SET_PML_ADDED(newcomm);
        fs_shadow_building = !visible;     /* coll.c: no agreement layer on it */
        rc = mca_coll_base_comm_select(newcomm);
        fs_shadow_building = 0;
    }
    return (rc == OMPI_SUCCESS) ? MPI_SUCCESS : MPI_ERR_INTERN;
}

static int fs_build_intra(ompi_communicator_t *parent, const uint64_t *failed, uint32_t cid,
                          int visible, const char *what, ompi_communicator_t **newcomm_p)
{
    ompi_communicator_t *newcomm;
    ompi_group_t *group;
    int rc = fs_ompi_group_select(parent->c_local_group, failed, 0, &group);

    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = fs_build_set(parent, group, cid, what, &newcomm);
    OBJ_RELEASE(group);                /* ompi_comm_set retained it */
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = fs_build_activate(newcomm, visible);
    if (rc != MPI_SUCCESS) {
        OBJ_RELEASE(newcomm);
        return rc;
    }
    *newcomm_p = newcomm;
    return MPI_SUCCESS;
}

/* An intercommunicator: its local communicator first (local_cid), then
 * the intercommunicator itself, made one by hand from an intracommunicator
 * of the local survivors (ompi_comm_set would idup the local communicator,
 * a collective over it). */
static int fs_build_inter(ompi_communicator_t *parent, const uint64_t *failed, uint32_t cid,
                          uint32_t local_cid, int visible, const char *what,
                          ompi_communicator_t **newcomm_p)
{
    fs_comm_t *fcomm = fs_ompi_comm(parent);
    uint32_t nl = (uint32_t)ompi_comm_size(parent), nr = (uint32_t)fs_ompi_peer_size(parent);
    uint64_t *bits = malloc((fs_bm_words(nl) + fs_bm_words(nr)) * sizeof(*bits));
    ompi_communicator_t *local = NULL, *newcomm = NULL;
    ompi_group_t *remote = NULL;
    int rc = MPI_ERR_NO_MEM;

    if (bits == NULL) {
        return rc;
    }
    fs_ompi_group_bits(fcomm, failed, FS_COMM_LOCAL, bits, nl);
    fs_ompi_group_bits(fcomm, failed, FS_COMM_REMOTE, bits + fs_bm_words(nl), nr);
    rc = fs_build_intra(parent->c_local_comm, bits, local_cid, visible, what, &local);
    if (rc == MPI_SUCCESS) {
        rc = fs_ompi_group_select(parent->c_remote_group, bits + fs_bm_words(nl), 0, &remote);
    }
    if (rc == MPI_SUCCESS) {
        rc = fs_build_set(parent, local->c_local_group, cid, what, &newcomm);
    }
    free(bits);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    OBJ_RELEASE(newcomm->c_remote_group);       /* it held the local group */
    newcomm->c_remote_group = remote;
    remote = NULL;
    newcomm->c_flags |= OMPI_COMM_INTER;
    newcomm->c_local_comm = local;
    local = NULL;
    rc = fs_build_activate(newcomm, visible);
    if (rc == MPI_SUCCESS) {
        *newcomm_p = newcomm;
        newcomm = NULL;
    }
out:
    if (newcomm != NULL) {
        fs_ompi_comm_survivors_free(newcomm);
    }
    if (remote != NULL) {
        OBJ_RELEASE(remote);
    }
    if (local != NULL) {
        OBJ_RELEASE(local);
    }
    return rc;
}

int fs_ompi_comm_survivors(ompi_communicator_t *parent, const uint64_t *failed, uint32_t cid,
                           uint32_t local_cid, int visible, const char *what,
                           ompi_communicator_t **newcomm_p)
{
    if (OMPI_COMM_IS_INTER(parent)) {
        return fs_build_inter(parent, failed, cid, local_cid, visible, what, newcomm_p);
    }
    return fs_build_intra(parent, failed, cid, visible, what, newcomm_p);
}

void fs_ompi_comm_survivors_free(ompi_communicator_t *comm)
{
    ompi_communicator_t *local = OMPI_COMM_IS_INTER(comm) ? comm->c_local_comm : NULL;

    OBJ_RELEASE(comm);
    if (local != NULL) {
        OBJ_RELEASE(local);
    }
}
