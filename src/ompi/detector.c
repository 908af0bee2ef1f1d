/* The failure detector in Open MPI: its address in the modex, arming it over
 * MPI_COMM_WORLD, and carrying its decisions into the engine.
 *
 * The detector thread (src/detector/hb.c) never touches the engine: it sets
 * a per-rank flag and bumps an epoch; the MPI thread applies new failures in
 * its progress (fs_ompi_hb_poll: one load and compare when nothing is new),
 * which a blocking wait reaches every 64 polls of the transport. */
#include "ompi/ompi_int.h"
#include "common/fs_log.h"
#include "detector/hb.h"
#include "transport/tl.h"


#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define FS_OMPI_HB_KEY "pml.failstop.hb"

int fs_ompi_hb_init(void)
{
    const void *addr;
    size_t len;
    int enabled;

    if (fs_hb_enabled(&fs_ompi.params, &enabled) != FS_OK) {
        return OMPI_ERR_BAD_PARAM;
    }
    fs_ompi.world_size = ompi_process_info.num_procs;
    fs_ompi.world_eps  = calloc(fs_ompi.world_size, sizeof(*fs_ompi.world_eps));
    fs_ompi.hb_failed  = calloc(fs_ompi.world_size, sizeof(*fs_ompi.hb_failed));
    if ((fs_ompi.world_eps == NULL) || (fs_ompi.hb_failed == NULL)) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (!enabled) {
        return OMPI_SUCCESS;
    }
    if (fs_hb_start(&fs_ompi.params, &fs_dg_udp_ops, &fs_ompi.hb) != FS_OK) {
        return OMPI_ERROR;
    }
    fs_hb_address(fs_ompi.hb, &addr, &len);
    return fs_ompi_rte_publish(FS_OMPI_HB_KEY, addr, len);
}

void fs_ompi_hb_note_proc(ompi_proc_t *proc, fs_ep_t *ep)
{
    const opal_process_name_t *name = &proc->super.proc_name;

    if ((name->jobid == OMPI_PROC_MY_NAME->jobid) && (name->vpid < fs_ompi.world_size)) {
        fs_ompi.world_eps[name->vpid] = ep;
    }
}

double fs_ompi_fate_deadline(void *host_arg, fs_ep_t *ep)
{
    (void)host_arg;
    (void)ep;
    return (fs_ompi.hb != NULL) ? fs_hb_verdict_bound(fs_ompi.hb) : 0;
}

/* The world rank of ep's process, or -1 (another job's, or no detector). */
static int64_t fs_ompi_hb_rank(const fs_ep_t *ep)
{
    const ompi_proc_t *proc = ep->host;

    if ((fs_ompi.hb == NULL) || (proc == NULL) ||
        (proc->super.proc_name.jobid != OMPI_PROC_MY_NAME->jobid)) {
        return -1;
    }
    return proc->super.proc_name.vpid;
}

int fs_ompi_remote(void *host_arg, fs_ep_t *ep)
{
    int64_t rank = fs_ompi_hb_rank(ep);

    (void)host_arg;
    return (rank >= 0) && fs_hb_is_remote(fs_ompi.hb, (uint32_t)rank);
}

void fs_ompi_check(void *host_arg, fs_ep_t *ep)
{
    int64_t rank = fs_ompi_hb_rank(ep);

    (void)host_arg;
    if (rank >= 0) {
        fs_hb_check(fs_ompi.hb, (uint32_t)rank);
    }
}

/* ---- the detector thread's callbacks --------------------------------------- */

static void fs_ompi_hb_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    (void)arg;
    if ((cause == FS_DET_CAUSE_TIMEOUT) && fs_hb_is_remote(fs_ompi.hb, rank)) {
        /* the host check (src/failure/det_hosts.c) decided */
        FS_WARN("process %u (rank in MPI_COMM_WORLD), on another host: no heartbeat "
                "for %.0f ms, and no answer to the host check since (its host "
                "answered without it, or stayed silent for %d ms): it is excluded "
                "from the job", rank, fs_hb_timeout_of(fs_ompi.hb, rank) * 1e3,
                fs_ompi.params.hb_timeout_host_ms);
    } else if (cause == FS_DET_CAUSE_TIMEOUT) {
        FS_WARN("process %u (rank in MPI_COMM_WORLD): no heartbeat for %.0f ms, "
                "suspected: it is excluded from the job", rank,
                fs_hb_timeout_of(fs_ompi.hb, rank) * 1e3);
    } else if (cause == FS_DET_CAUSE_EXIT) {
        FS_WARN("process %u (rank in MPI_COMM_WORLD) exited without finalizing",
                rank);
    }
    if (rank < fs_ompi.world_size) {
        atomic_store_explicit(&fs_ompi.hb_failed[rank], (unsigned char)(1 + cause),
                              memory_order_relaxed);
        atomic_fetch_add_explicit(&fs_ompi.hb_epoch, 1, memory_order_release);
    }
}

static void fs_ompi_hb_excluded(void *arg, uint32_t by)
{
    char msg[256];
    int n;
    ssize_t w;

    (void)arg;
    n = snprintf(msg, sizeof(msg), "[failstop:%u] process %u declared this process "
                 "failed (no heartbeat from it in time); a failed process is "
                 "excluded from the job (MPI-FT 17.3): ending it\n",
                 OMPI_PROC_MY_NAME->vpid, by);
    w = write(2, msg, (n > 0) && ((size_t)n < sizeof(msg)) ? (size_t)n : 0);
    (void)w;
    _exit(1);
}

static void fs_ompi_hb_partitioned(void *arg, uint32_t lost, uint32_t view)
{
    char msg[384];
    int n;
    ssize_t w;

    (void)arg;
    n = snprintf(msg, sizeof(msg), "[failstop:%u] this process lost contact with "
                 "%u of the %u processes alive a moment ago: it is on the "
                 "minority side of a network partition, and the others, which "
                 "cannot reach it, exclude it (MPI-FT 17.3): ending it\n",
                 OMPI_PROC_MY_NAME->vpid, lost, view);
    w = write(2, msg, (n > 0) && ((size_t)n < sizeof(msg)) ? (size_t)n : 0);
    (void)w;
    /* where failstop-run's directory is (a shared file system) it learns
     * why; on the cut-off host, its tests do */
    fs_ompi_status_mark("cutoff", OMPI_PROC_MY_NAME->vpid, (int)lost);
    _exit(1);
}

int fs_ompi_hb_arm(void)
{
    static const fs_hb_host_t host = {fs_ompi_hb_failed, fs_ompi_hb_excluded,
                                      fs_ompi_hb_partitioned, NULL};
    uint32_t n = fs_ompi.world_size, r;
    const void **addrs;
    size_t *lens;
    int rc = OMPI_SUCCESS;

    if ((fs_ompi.hb == NULL) || fs_ompi.hb_armed) {
        return OMPI_SUCCESS;
    }
    fs_ompi.hb_armed = 1;
    addrs = calloc(n, sizeof(*addrs));
    lens  = calloc(n, sizeof(*lens));
    for (r = 0; (r < n) && (addrs != NULL) && (lens != NULL); ++r) {
        opal_process_name_t name = {.jobid = OMPI_PROC_MY_NAME->jobid, .vpid = r};
        void *data = NULL;

        rc = fs_ompi_modex_recv(&name, FS_OMPI_HB_KEY, &data, &lens[r]);
        if (rc != OPAL_SUCCESS) {
            FS_ERROR("no failure-detector address for process %u: it ended in MPI_Init "
                     "before the address exchange, or does not run failstop", r);
            break;
        }
        addrs[r] = data;
    }
    if ((addrs == NULL) || (lens == NULL)) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
    } else if ((rc == OPAL_SUCCESS) &&
               (fs_hb_arm(fs_ompi.hb, n, OMPI_PROC_MY_NAME->vpid, addrs, lens,
                          &host) != FS_OK)) {
        rc = OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (r = 0; (addrs != NULL) && (r < n); ++r) {
        free((void *)addrs[r]);
    }
    free(addrs);
    free(lens);
    return rc;
}

/* ---- the MPI thread -------------------------------------------------------- */

void fs_ompi_hb_apply(void)
{
    uint32_t r;
    unsigned char why;

    fs_ompi.hb_seen = atomic_load_explicit(&fs_ompi.hb_epoch, memory_order_acquire);
    for (r = 0; r < fs_ompi.world_size; ++r) {
        why = atomic_exchange_explicit(&fs_ompi.hb_failed[r], 0, memory_order_relaxed);
        if ((why != 0) && (fs_ompi.world_eps[r] != NULL)) {
            /* fs_ompi_peer_failed, called from inside, records the cause */
            fs_ompi.hb_cause = why;
            fs_engine_peer_suspected(fs_ompi.engine, fs_ompi.world_eps[r]);
            fs_ompi.hb_cause = 0;
        }
    }
}

/* MPI_Finalize's departure and close wait inside the engine, where
 * fs_ompi_progress does not run; a failure found then must still end what
 * waits for the dead process (and be recorded: everyone learns). */
void fs_ompi_hb_poll_host(void *host_arg)
{
    (void)host_arg;
    fs_ompi_hb_poll();
}

void fs_ompi_hb_report(fs_ep_t *ep)
{
    const ompi_proc_t *proc = ep->host;

    if ((fs_ompi.hb != NULL) && (proc->super.proc_name.jobid == OMPI_PROC_MY_NAME->jobid)) {
        fs_hb_report(fs_ompi.hb, proc->super.proc_name.vpid);
    }
}

void fs_ompi_hb_fini(void)
{
    if (fs_ompi.hb != NULL) {
        fs_hb_leave(fs_ompi.hb, 1.0);
        fs_hb_stop(fs_ompi.hb);
        fs_ompi.hb = NULL;
    }
    free(fs_ompi.world_eps);
    free((void *)fs_ompi.hb_failed);
    fs_ompi.world_eps = NULL;
    fs_ompi.hb_failed = NULL;
}
