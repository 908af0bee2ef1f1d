/* The collective component (coll_shim.c): a communicator created from a
 * validated one holds the failures recognized there (MPI-FT 17.8.2,
 * src/proto/validate.c); Open MPI's collective modules selected for it
 * would wait for those processes.  For such a communicator only, this
 * component is selected last (highest priority) and moves its collectives
 * over the survivors (survivors.c), on a shadow communicator whose context
 * id derives from the new communicator's own: FS_OMPI_PRIVATE_CID + 2 *
 * cid, even, where the agreed ones (shrink, validate) are odd.  Every
 * member computes it alone, and it is free: the communicator's id is free
 * at every member while the communicator lives, and its shadow goes with
 * it.  For every other communicator the component declines, so their
 * collectives are exactly Open MPI's. */
#include "ompi/ompi_int.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"

#define FS_COLL_PRIORITY 10000      /* above every module it stands in for */

int mca_coll_failstop_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

static int fs_coll_enable(mca_coll_base_module_t *module, ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);
    const uint64_t *failed = fs_comm_recognized(fcomm);

    (void)module;
    return fs_ompi_survivors_install(comm, failed, fs_ompi_derived_cid(comm->c_contextid));
}

mca_coll_base_module_t *mca_coll_failstop_comm_query(ompi_communicator_t *comm, int *priority)
{
    mca_coll_base_module_t *module;
    fs_comm_t *fcomm;

    if ((fs_ompi.engine == NULL) || !fs_ompi.enabled || OMPI_COMM_IS_INTER(comm) ||
        ((fcomm = fs_ompi_comm(comm)) == NULL) || (fs_comm_recognized(fcomm) == NULL) ||
        (fs_comm_shadow_host(fcomm) != NULL)) {
        return NULL;
    }
    module = OBJ_NEW(mca_coll_base_module_t);
    if (module == NULL) {
        return NULL;
    }
    module->coll_module_enable = fs_coll_enable;
    *priority = FS_COLL_PRIORITY;
    return module;
}
