/* mca_pml_failstop.so: the file Open MPI loads.  It holds only the component
 * descriptor; everything else lives in libfailstop.so (one directory up),
 * which applications also link for the MPIX_ API, so both share one state. */
#include "ompi/ompi_int.h"

#define FS_SHIM_EXPORT __attribute__((visibility("default")))

FS_SHIM_EXPORT extern fs_ompi_pml_component_t mca_pml_failstop_component;

static int fs_shim_register(void)
{
    return mca_pml_failstop_register(&mca_pml_failstop_component.pmlm_version);
}

fs_ompi_pml_component_t mca_pml_failstop_component = {
    .pmlm_version = {
        FS_OMPI_PML_BASE_VERSION,
        .mca_component_name            = "failstop",
        .mca_component_major_version   = 0,
        .mca_component_minor_version   = 1,
        .mca_component_release_version = 0,
        .mca_open_component            = mca_pml_failstop_open,
        .mca_close_component           = mca_pml_failstop_close,
        .mca_query_component           = NULL,
        .mca_register_component_params = fs_shim_register,
    },
    .pmlm_data = {
        .param_field = MCA_BASE_METADATA_PARAM_NONE
    },
    .pmlm_init     = mca_pml_failstop_init,
    .pmlm_finalize = mca_pml_failstop_finalize,
};
