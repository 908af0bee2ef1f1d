/* The public MPIX_ API (include/failstop.h). */
#include "ompi/ompi_int.h"
#include "failstop.h"

#include <string.h>

#define FS_MPIX_API __attribute__((visibility("default")))

FS_MPIX_API int MPIX_Failstop_active(int *flag)
{
    if (flag == NULL) {
        return MPI_ERR_ARG;
    }
    *flag = (fs_ompi.engine != NULL) && (mca_pml.pml_send == fs_ompi.super.pml_send);
    return MPI_SUCCESS;
}

FS_MPIX_API int MPIX_Failstop_error_class(void)
{
    return fs_ompi.enabled ? fs_ompi.errors.fail_stop_class : -1;
}

typedef struct fs_mpix_counter {
    const char *name;
    size_t      offset;
} fs_mpix_counter_t;

#define FS_MPIX_COUNTER(_f) {#_f, offsetof(fs_stats_t, _f)}
static const fs_mpix_counter_t fs_mpix_counters[] = {
    FS_MPIX_COUNTER(msgs_sent),
    FS_MPIX_COUNTER(msgs_received),
    FS_MPIX_COUNTER(unexpected),
    FS_MPIX_COUNTER(reordered),
    FS_MPIX_COUNTER(early_cid),
    FS_MPIX_COUNTER(discarded_after_failure),
    FS_MPIX_COUNTER(dropped_malformed),
    FS_MPIX_COUNTER(pool_grows),
    FS_MPIX_COUNTER(large_copies),
    FS_MPIX_COUNTER(peers_failed),
    FS_MPIX_COUNTER(peers_left),
};

FS_MPIX_API int MPIX_Failstop_counter(const char *name, unsigned long long *value)
{
    size_t i;

    if ((name == NULL) || (value == NULL)) {
        return MPI_ERR_ARG;
    }
    if (fs_ompi.engine == NULL) {
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if (!strcmp(name, "requests_allocated")) {
        /* MPI requests come from a free list that grows in chunks */
        *value = fs_ompi.requests.fl_num_allocated;
        return MPI_SUCCESS;
    }
    for (i = 0; i < sizeof(fs_mpix_counters) / sizeof(fs_mpix_counters[0]); ++i) {
        if (!strcmp(fs_mpix_counters[i].name, name)) {
            fs_ompi_lock();
            *value = *(const uint64_t *)((const char *)fs_engine_stats(fs_ompi.engine) +
                                         fs_mpix_counters[i].offset);
            fs_ompi_unlock();
            return MPI_SUCCESS;
        }
    }
    return MPI_ERR_ARG;
}
