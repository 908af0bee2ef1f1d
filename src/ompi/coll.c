/* The collective component (coll_shim.c), selected last (highest priority)
 * and only where failstop must stand between a communicator and Open MPI's
 * collective modules; everywhere else it declines, so those collectives
 * are exactly Open MPI's.
 *
 * 1. A communicator created from a validated one holds the failures
 *    recognized there (MPI-FT 17.8.2, src/proto/validate.c); Open MPI's
 *    modules selected for it would wait for those processes.  Its
 *    collectives move over the survivors (survivors.c), on a shadow
 *    communicator whose context id derives from its own:
 *    FS_OMPI_PRIVATE_CID + 4 * cid (+ 2 for an intercommunicator shadow's
 *    local communicator), even, where the agreed ones (shrink, validate)
 *    are odd (comm_build.c).  Every member computes it alone, and it is free:
 *    the communicator's id is free at every member while it lives, and its
 *    shadow goes with it.
 * 2. With pml_failstop_uniform_collectives=1, every intracommunicator but
 *    the shadows gets the agreement around its blocking collectives
 *    (uniform.c).
 * 3. Under Open MPI 5, see fs_coll_agrees. */
#include "ompi/ompi_int.h"

#include "ompi/communicator/communicator.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/mca/pml/base/base.h"
#include "opal/mca/base/mca_base_var.h"
#include "common/fs_log.h"

#include <string.h>

#define FS_COLL_PRIORITY 10000      /* above every module it stands in for */

#ifdef FS_OMPI_V5
/* Open MPI 5's coll/han (priority 35, above tuned) runs the part of a
 * collective inside a host over coll/sm's shared memory, past the PML: a
 * process there neither learns of a failure through it nor fails, and the
 * first collective after a failure succeeded at survivors on other hosts
 * (tf_fail_coll across hosts, make hosts-test-ompi5), against MPI-FT 17.7.
 * Under failstop it is off, unless the user chose its priority. */
static void fs_coll_han_off(void)
{
    const mca_base_var_t *var = NULL;
    int idx  = mca_base_var_find("ompi", "coll", "han", "priority");
    int zero = 0;

    if ((idx < 0) || (mca_base_var_get(idx, &var) != OPAL_SUCCESS)) {
        return;
    }
    if (var->mbv_source != MCA_BASE_VAR_SOURCE_DEFAULT) {
        FS_WARN("coll_han_priority was set: Open MPI's han collectives run inside "
                "a host past failstop, and a survivor may not fail a collective "
                "after a failure (MPI-FT 17.7)");
        return;
    }
    (void)mca_base_var_set_value(idx, &zero, sizeof(zero), MCA_BASE_VAR_SOURCE_SET, NULL);
}
#endif

int mca_coll_failstop_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
#ifdef FS_OMPI_V5
    if (strcmp(mca_pml_base_selected_component.pmlm_version.mca_component_name,
               "failstop") == 0) {
        fs_coll_han_off();
    }
#endif
    return OMPI_SUCCESS;
}

static int fs_coll_needs_survivors(ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);

    return (fs_comm_recognized(fcomm) != NULL) && (fs_comm_shadow_host(fcomm) == NULL);
}

/* 3. Open MPI 5: libmpi's agreement calls (MPIX_Comm_agree, shrink) on
 *    every intracommunicator run over failstop's agreement (agree5.c). */
static int fs_coll_agrees(ompi_communicator_t *comm)
{
#ifdef FS_OMPI_V5
    return !OMPI_COMM_IS_INTER(comm);
#else
    (void)comm;
    return 0;
#endif
}

static int fs_coll_enable(mca_coll_base_module_t *module, ompi_communicator_t *comm)
{
    int rc = MPI_SUCCESS;

    if (fs_coll_needs_survivors(comm)) {
        uint32_t cid = fs_ompi_derived_cid(fs_ompi_cid(comm));

        rc = fs_ompi_survivors_install(comm, fs_comm_recognized(fs_ompi_comm(comm)), cid,
                                       cid + 2);
    }
    if ((rc == MPI_SUCCESS) && (module->coll_barrier != NULL)) {
        fs_ompi_uniform_enable(module, comm);   /* after: it runs what is below */
    }
    return (rc == MPI_SUCCESS) ? OMPI_SUCCESS : OMPI_ERROR;
}

mca_coll_base_module_t *mca_coll_failstop_comm_query(ompi_communicator_t *comm, int *priority)
{
    mca_coll_base_module_t *module;
    int uniform;

    if ((fs_ompi.engine == NULL) || !fs_ompi.enabled || (fs_ompi_comm(comm) == NULL)) {
        return NULL;
    }
    uniform = fs_ompi.params.uniform_collectives && !fs_ompi_building_shadow() &&
              !OMPI_COMM_IS_INTER(comm);
    if (!uniform && !fs_coll_needs_survivors(comm) && !fs_coll_agrees(comm)) {
        return NULL;
    }
    module = uniform ? fs_ompi_uniform_module() : OBJ_NEW(mca_coll_base_module_t);
    if (module == NULL) {
        return NULL;
    }
    module->coll_module_enable = fs_coll_enable;
#ifdef FS_OMPI_V5
    if (fs_coll_agrees(comm)) {
        /* only these two: Open MPI keeps a lower module's other slots */
        module->coll_agree  = fs_ompi_coll_agree;
        module->coll_iagree = fs_ompi_coll_iagree;
    }
#endif
    *priority = FS_COLL_PRIORITY;
    return module;
}
