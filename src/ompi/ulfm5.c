/* Open MPI 5's own fault-tolerance API over failstop.  libmpi 5 carries
 * ULFM's calls (MPIX_Comm_revoke, is_revoked, agree, iagree, shrink,
 * get_failed, ack_failed, failure_ack, failure_get_acked: mpi-ext.h) for
 * every PML, but what they stand on comes from ob1 and its BML: the
 * revoked flags (set only by a PML's pml_revoke_comm), the revoke's
 * broadcast, the failed-process group (fed by PMIx events, or by ob1), and
 * the agreement (coll/ftagree, over the BML).  Here failstop provides them
 * (a study of Open MPI 5.0.7's code: docs/DESIGN.md, "Open MPI 5's ULFM"):
 *
 * - revoke: pml_revoke_comm revokes through failstop's own reliable revoke
 *   (src/proto/revoke.c), which reaches every member itself, so Open MPI's
 *   broadcast (ompi_comm_rbcast) is left with nothing to do; a revoke
 *   heard from another process sets the communicator's flags;
 * - failures: each process failstop declares failed joins Open MPI's
 *   failed group (ompi_group_all_failed_procs) and switches MPI_ANY_SOURCE
 *   off on the communicators holding it.  The process is not marked
 *   inactive (ompi_proc_t proc_active): Open MPI's blocking calls would
 *   then refuse it at entry, before the messages it sent before dying are
 *   delivered (dead-peer rule a);
 * - MPI_ANY_SOURCE acknowledged through libmpi (it sets the communicator's
 *   any_source_enabled only) re-enables it in failstop at the next
 *   wildcard receive;
 * - agreement: failstop's coll component offers coll_agree/coll_iagree on
 *   every intracommunicator (coll.c), over failstop's agreement.
 * Run with mpi_ft_enable off (failstop-run does): on, Open MPI starts its
 * BML users and casts every request to ob1's layout. */
#include "ompi/ompi_int.h"
#include "common/fs_log.h"

#ifdef FS_OMPI_V5

#include "ompi/attribute/attribute.h"
#include "ompi/group/group.h"
#include "ompi/request/request.h"

#include <stdlib.h>

/* ---- revoke --------------------------------------------------------------- */

/* failstop's revoke already reached every member (src/proto/revoke.c) */
static int fs_ulfm5_rbcast(ompi_communicator_t *comm, ompi_comm_rbcast_message_t *msg,
                           size_t size)
{
    (void)comm;
    (void)msg;
    (void)size;
    return OMPI_SUCCESS;
}

/* Open MPI's revoke (coll_only 0), or a failure of one of comm's processes
 * (coll_only 1: failstop turns collectives off itself, MPI-FT 17.7, and
 * may turn them on again, which Open MPI's coll_revoked cannot). */
int fs_ompi_revoke_comm(ompi_communicator_t *comm, bool coll_only)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);

    if (coll_only || (fcomm == NULL)) {
        return OMPI_SUCCESS;
    }
    fs_ompi_lock();
    (void)fs_comm_revoke(fcomm);
    fs_ompi_unlock();
    return OMPI_SUCCESS;
}

void fs_ompi_comm_revoked(void *host_comm)
{
    ompi_communicator_t *comm = host_comm;

    comm->any_source_enabled = false;
    comm->coll_revoked       = true;
    comm->comm_revoked       = true;
}

/* ---- failures --------------------------------------------------------------- */

static int fs_ulfm5_holds(ompi_communicator_t *comm, ompi_group_t *one)
{
    int zero = 0, rank = MPI_UNDEFINED;

    if (ompi_group_translate_ranks(one, 1, &zero, comm->c_remote_group, &rank) ==
            OMPI_SUCCESS && (rank != MPI_UNDEFINED)) {
        return 1;
    }
    return OMPI_COMM_IS_INTER(comm) &&
           (ompi_group_translate_ranks(one, 1, &zero, comm->c_local_group, &rank) ==
            OMPI_SUCCESS) && (rank != MPI_UNDEFINED);
}

/* Failures declared before MPI_COMM_WORLD exists (in MPI_Init's
 * connection setup): fed once it is added */
static int *fs_ulfm5_early;
static int  fs_ulfm5_nearly;
static int  fs_ulfm5_world_ready;

static void fs_ulfm5_feed(int rank)
{
    ompi_group_t *world = ompi_mpi_comm_world.comm.c_local_group;
    ompi_group_t *one = NULL, *all = NULL, *old;
    int i, n;

    if (ompi_group_incl(world, 1, &rank, &one) != OMPI_SUCCESS) {
        FS_WARN("process %d failed: cannot tell Open MPI's failed group", rank);
        return;
    }
    opal_mutex_lock(&ompi_group_afp_mutex);
    old = ompi_group_all_failed_procs;
    if (ompi_group_union(old, one, &all) == OMPI_SUCCESS) {
        ompi_group_all_failed_procs = all;
        OBJ_RELEASE(old);
    }
    opal_mutex_unlock(&ompi_group_afp_mutex);
    n = opal_pointer_array_get_size(&ompi_mpi_communicators);
    for (i = 0; i < n; ++i) {
        /* not the raw array: a slot reserved while a context id is agreed
         * holds OMPI_COMM_SENTINEL (0x1), no communicator (a failure
         * declared then crashed here, tf_life_comm over TCP) */
        ompi_communicator_t *comm = ompi_comm_lookup((uint32_t)i);

        if ((comm != NULL) && (fs_ompi_comm(comm) != NULL) && fs_ulfm5_holds(comm, one)) {
            comm->any_source_enabled = false;
        }
    }
    OBJ_RELEASE(one);
}

void fs_ompi_ulfm5_failed(ompi_proc_t *proc)
{
    int rank = (int)proc->super.proc_name.vpid;
    int *grown;

    if (fs_ulfm5_world_ready) {
        fs_ulfm5_feed(rank);
        return;
    }
    grown = realloc(fs_ulfm5_early, ((size_t)fs_ulfm5_nearly + 1) * sizeof(int));
    if (grown == NULL) {
        FS_WARN("process %d failed in MPI_Init: cannot tell Open MPI's failed group", rank);
        return;
    }
    fs_ulfm5_early = grown;
    fs_ulfm5_early[fs_ulfm5_nearly++] = rank;
}

/* The program acknowledged comm's failures through libmpi (MPIX_Comm_
 * failure_ack, MPIX_Comm_ack_failed of all of them): MPI_ANY_SOURCE on
 * again in failstop too.  And the other way round. */
void fs_ompi_ulfm5_anysrc_sync(ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);

    fs_ompi_lock();
    if (comm->any_source_enabled && !fs_comm_any_source_enabled(fcomm)) {
        fs_comm_reenable_any_source(fcomm);
    }
    fs_ompi_unlock();
}

void fs_ompi_ulfm5_anysrc_enabled(ompi_communicator_t *comm)
{
    comm->any_source_enabled = true;
}

/* ---- enabling ------------------------------------------------------------ */

void fs_ompi_ulfm5_enable(void)
{
    ompi_comm_rbcast = fs_ulfm5_rbcast;
}

/* MPI_FT: failures are tolerated.  Open MPI sets it from mpi_ft_enable
 * after the PML is enabled, and before MPI_COMM_WORLD is added. */
void fs_ompi_ulfm5_world_added(void)
{
    int i;

    if (ompi_attr_set_fint(COMM_ATTR, MPI_COMM_WORLD, &MPI_COMM_WORLD->c_keyhash, MPI_FT, 1,
                           true) != OMPI_SUCCESS) {
        FS_WARN("cannot set the MPI_FT attribute");
    }
    fs_ompi_lock();
    fs_ulfm5_world_ready = 1;
    for (i = 0; i < fs_ulfm5_nearly; ++i) {
        fs_ulfm5_feed(fs_ulfm5_early[i]);
    }
    free(fs_ulfm5_early);
    fs_ulfm5_early  = NULL;
    fs_ulfm5_nearly = 0;
    fs_ompi_unlock();
}

#endif
