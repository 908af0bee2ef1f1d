/* mca_coll_failstop.so: the collective component's descriptor, which Open
 * MPI loads from the same directory as mca_pml_failstop.so; its logic is in
 * libfailstop.so (coll.c).  It is selected only for a communicator created
 * with recognized failures (MPI-FT 17.8.2), never otherwise. */
#include "ompi/ompi_int.h"

#include "ompi/mca/coll/coll.h"

#define FS_SHIM_EXPORT __attribute__((visibility("default")))

FS_SHIM_EXPORT extern fs_ompi_coll_component_t mca_coll_failstop_component;

fs_ompi_coll_component_t mca_coll_failstop_component = {
    .collm_version = {
        FS_OMPI_COLL_BASE_VERSION,
        .mca_component_name            = "failstop",
        .mca_component_major_version   = 0,
        .mca_component_minor_version   = 1,
        .mca_component_release_version = 0,
    },
    .collm_data = {
        .param_field = MCA_BASE_METADATA_PARAM_CHECKPOINT
    },
    .collm_init_query = mca_coll_failstop_init_query,
    .collm_comm_query = mca_coll_failstop_comm_query,
};
