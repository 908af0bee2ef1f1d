/* MCA variables: every row of fs_param_table becomes pml_failstop_<name>.
 * They are registered as strings and parsed by the core's own parser, so the
 * table stays the single source of names, defaults and documentation. */
#include "ompi/ompi_int.h"
#include "common/fs_log.h"

#include "opal/mca/base/mca_base_var.h"

int fs_ompi_params_register(const mca_base_component_t *component)
{
    size_t i;
    int index;

    if (fs_param_count > sizeof(fs_ompi.param_text) / sizeof(fs_ompi.param_text[0])) {
        FS_ERROR("%zu parameters, room for %zu: enlarge fs_ompi.param_text", fs_param_count,
                 sizeof(fs_ompi.param_text) / sizeof(fs_ompi.param_text[0]));
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (i = 0; i < fs_param_count; ++i) {
        fs_ompi.param_text[i] = (char *)fs_param_table[i].defval;
        index = mca_base_component_var_register(component, fs_param_table[i].name,
                                                fs_param_table[i].doc,
                                                MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0,
                                                OPAL_INFO_LVL_4,
                                                MCA_BASE_VAR_SCOPE_READONLY,
                                                &fs_ompi.param_text[i]);
        if (index < 0) {
            return index;
        }
    }
    return OMPI_SUCCESS;
}

int fs_ompi_params_read(void)
{
    size_t i;
    const char *text;

    fs_params_defaults(&fs_ompi.params);
    for (i = 0; i < fs_param_count; ++i) {
        text = (fs_ompi.param_text[i] != NULL) ? fs_ompi.param_text[i] : "";
        if (fs_params_set(&fs_ompi.params, fs_param_table[i].name, text) != 0) {
            FS_ERROR("invalid value '%s' for MCA parameter pml_failstop_%s (%s)",
                     text, fs_param_table[i].name, fs_param_table[i].doc);
            return OMPI_ERR_BAD_PARAM;
        }
    }
    fs_log_level = fs_ompi.params.verbose;
    return OMPI_SUCCESS;
}
