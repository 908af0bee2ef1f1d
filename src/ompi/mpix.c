/* The public MPIX_ API (include/failstop.h). */
#include "ompi/ompi_int.h"
#include "detector/hb.h"
#include "failstop.h"

#include "ompi/errhandler/errhandler.h"

#include <stdlib.h>
#include <string.h>

/* Reports rc through comm's error handler, as an MPI function would. */
int fs_mpix_error(MPI_Comm comm, int rc, const char *name)
{
    if (rc == MPI_SUCCESS) {
        return MPI_SUCCESS;
    }
    if ((comm == MPI_COMM_NULL) || ompi_comm_invalid(comm)) {
        comm = MPI_COMM_WORLD;
    }
    return OMPI_ERRHANDLER_INVOKE(comm, rc, name);
}

int fs_mpix_comm(MPI_Comm comm, fs_comm_t **fcomm_p)
{
    if ((fs_ompi.engine == NULL) || !fs_ompi.enabled) {
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    if ((comm == MPI_COMM_NULL) || ompi_comm_invalid(comm) ||
        (fs_ompi_comm(comm) == NULL)) {
        return MPI_ERR_COMM;
    }
    *fcomm_p = fs_ompi_comm(comm);
    return MPI_SUCCESS;
}

/* The failed members of one of comm's groups as an MPI group. */
static int fs_mpix_failed_group(MPI_Comm comm, fs_comm_t *fcomm, fs_comm_group_t which,
                                int acked_only, MPI_Group *failed)
{
    MPI_Group all;
    int32_t *ranks;
    uint32_t n;
    int rc;

    fs_ompi_lock();
    n     = fs_comm_failed_ranks(fcomm, which, acked_only, NULL, 0);
    ranks = malloc((n ? n : 1) * sizeof(*ranks));
    if (ranks != NULL) {
        n = fs_comm_failed_ranks(fcomm, which, acked_only, ranks, n);
    }
    fs_ompi_unlock();
    if (ranks == NULL) {
        return MPI_ERR_NO_MEM;
    }
    rc = ((which == FS_COMM_REMOTE) && OMPI_COMM_IS_INTER(comm)) ?
         PMPI_Comm_remote_group(comm, &all) : PMPI_Comm_group(comm, &all);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Group_incl(all, (int)n, ranks, failed);
        PMPI_Group_free(&all);
    }
    free(ranks);
    return rc;
}

FS_MPIX_API int MPIX_Comm_group_failed(MPI_Comm comm, MPI_Group *failed)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && (failed == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) {
        rc = fs_mpix_failed_group(comm, fcomm, OMPI_COMM_IS_INTER(comm) ?
                                  FS_COMM_LOCAL : FS_COMM_REMOTE, 0, failed);
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_group_failed");
}

FS_MPIX_API int MPIX_Comm_remote_group_failed(MPI_Comm comm, MPI_Group *failed)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && !OMPI_COMM_IS_INTER(comm)) {
        rc = MPI_ERR_COMM;
    } else if ((rc == MPI_SUCCESS) && (failed == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) {
        rc = fs_mpix_failed_group(comm, fcomm, FS_COMM_REMOTE, 0, failed);
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_remote_group_failed");
}

FS_MPIX_API int MPIX_Comm_reenable_any_source(MPI_Comm comm, MPI_Group *failed)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if (rc == MPI_SUCCESS) {
        fs_ompi_lock();
        fs_comm_reenable_any_source(fcomm);
        fs_ompi_unlock();
#ifdef FS_OMPI_V5
        fs_ompi_ulfm5_anysrc_enabled(comm);
#endif
        if (failed != NULL) {
            /* exactly what was acknowledged, even if more fail meanwhile */
            rc = fs_mpix_failed_group(comm, fcomm, FS_COMM_REMOTE, 1, failed);
        }
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_reenable_any_source");
}

FS_MPIX_API int MPIX_Comm_failure_ack(MPI_Comm comm)
{
    return MPIX_Comm_reenable_any_source(comm, NULL);
}

FS_MPIX_API int MPIX_Comm_failure_get_acked(MPI_Comm comm, MPI_Group *failed)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && (failed == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) {
        rc = fs_mpix_failed_group(comm, fcomm, FS_COMM_REMOTE, 1, failed);
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_failure_get_acked");
}

FS_MPIX_API int MPIX_Comm_collectives_enabled(MPI_Comm comm, int *active)
{
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && (active == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if (rc == MPI_SUCCESS) {
        fs_ompi_lock();
        *active = fs_comm_collectives_enabled(fcomm);
        fs_ompi_unlock();
    }
    return fs_mpix_error(comm, rc, "MPIX_Comm_collectives_enabled");
}

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

/* Created (and set on MPI_COMM_WORLD) at the first use, as a program reads
 * it; the value is static, so the attribute needs no delete function. */
FS_MPIX_API int MPIX_Failstop_ft_keyval(void)
{
    static int keyval = MPI_KEYVAL_INVALID;
    static int tolerated = 1;
    int key;

    if (!fs_ompi.enabled) {
        return MPI_KEYVAL_INVALID;
    }
    fs_ompi_lock();
    if ((keyval == MPI_KEYVAL_INVALID) &&
        (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &key,
                                 NULL) == MPI_SUCCESS)) {
        if (PMPI_Comm_set_attr(MPI_COMM_WORLD, key, &tolerated) == MPI_SUCCESS) {
            keyval = key;
        }
    }
    key = keyval;
    fs_ompi_unlock();
    return key;
}

FS_MPIX_API int MPIX_Failstop_pending_class(void)
{
    return fs_ompi.enabled ? fs_ompi.errors.pending_class : -3;
}

FS_MPIX_API int MPIX_Failstop_revoked_class(void)
{
    return fs_ompi.enabled ? fs_ompi.errors.revoked_class : -2;
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
    FS_MPIX_COUNTER(agree_stale),
    FS_MPIX_COUNTER(lost_no_memory),
    FS_MPIX_COUNTER(pool_grows),
    FS_MPIX_COUNTER(large_copies),
    FS_MPIX_COUNTER(peers_failed),
    FS_MPIX_COUNTER(peers_left),
    FS_MPIX_COUNTER(notices_sent),
    FS_MPIX_COUNTER(notices_received),
};

#define FS_MPIX_HB_COUNTER(_f) {#_f, offsetof(fs_det_stats_t, _f)}
static const fs_mpix_counter_t fs_mpix_hb_counters[] = {
    FS_MPIX_HB_COUNTER(beats_sent),
    FS_MPIX_HB_COUNTER(beats_received),
    FS_MPIX_HB_COUNTER(suspicions),
    FS_MPIX_HB_COUNTER(failed_sent),
    FS_MPIX_HB_COUNTER(syncs_sent),
    FS_MPIX_HB_COUNTER(refused),
    FS_MPIX_HB_COUNTER(foreign),
    FS_MPIX_HB_COUNTER(malformed),
    FS_MPIX_HB_COUNTER(host_checks),
    FS_MPIX_HB_COUNTER(asks),
    FS_MPIX_HB_COUNTER(extensions),
};

/* The failure detector's counters ("hb_<name>"); 0 when it is off. */
static int fs_mpix_hb_counter(const char *name, unsigned long long *value)
{
    fs_det_stats_t stats;
    size_t i;

    memset(&stats, 0, sizeof(stats));
    if (fs_ompi.hb != NULL) {
        fs_hb_stats(fs_ompi.hb, &stats);
    }
    if (!strcmp(name, "max_beat_gap_us")) {
        *value = (unsigned long long)(stats.max_beat_gap * 1e6);
        return MPI_SUCCESS;
    }
    if (!strcmp(name, "max_self_late_us")) {
        *value = (unsigned long long)(stats.max_self_late * 1e6);
        return MPI_SUCCESS;
    }
    for (i = 0; i < sizeof(fs_mpix_hb_counters) / sizeof(fs_mpix_hb_counters[0]); ++i) {
        if (!strcmp(fs_mpix_hb_counters[i].name, name)) {
            *value = *(const uint64_t *)((const char *)&stats +
                                         fs_mpix_hb_counters[i].offset);
            return MPI_SUCCESS;
        }
    }
    return MPI_ERR_ARG;
}

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
    if (!strncmp(name, "hb_", 3)) {
        return fs_mpix_hb_counter(name + 3, value);
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
