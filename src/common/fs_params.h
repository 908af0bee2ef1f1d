/* The one parameter table.  Each row is exposed to Open MPI as the MCA
 * variable pml_failstop_<name> (src/ompi/params.c registers them in a loop)
 * and documented in docs/PARAMETERS.md (a unit test keeps the two in sync).
 * Values are read once into an fs_params_t that the core treats as const. */
#ifndef FS_PARAMS_H
#define FS_PARAMS_H

#include <stddef.h>

typedef enum fs_param_type {
    FS_PARAM_INT,
    FS_PARAM_BOOL,
    FS_PARAM_SIZE,
    FS_PARAM_STRING
} fs_param_type_t;

typedef struct fs_params {
    int     verbose;
    char   *transport;
    char   *ofi_provider;
    int     ucx_keepalive_ms;
    int     ucx_fifo_size;
    size_t  ucx_cma_seg_size;
    size_t  ucx_frag_max;
    size_t  ucx_shm_max;
    int     ucx_shm_rndv;
    size_t  self_eager_limit;
    size_t  send_fast_local_max;
    int     finalize_timeout_ms;
    int     cause_wait_ms;
    int     max_unexpected_mb;
    char   *inject;
    int     hb_period_ms;
    int     hb_timeout_ms;
    int     hb_timeout_remote_ms;
    int     hb_timeout_host_ms;
    char   *hb_if;
    int     agree_star_max;
    int     anysource_pending;
    int     uniform_collectives;
} fs_params_t;

typedef struct fs_param_desc {
    const char      *name;
    fs_param_type_t  type;
    const char      *defval;
    const char      *doc;
    size_t           offset;
} fs_param_desc_t;

extern const fs_param_desc_t fs_param_table[];
extern const size_t          fs_param_count;

/* Fills every field with its default. */
void fs_params_defaults(fs_params_t *params);

/* Sets one field from its text form; returns 0, or -1 for an unknown name or
 * an unparsable value. */
int fs_params_set(fs_params_t *params, const char *name, const char *value);

#endif
