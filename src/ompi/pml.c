/* The PML module: lifecycle, processes, communicators, progress. */
#include "ompi/ompi_int.h"
#include "common/fs_log.h"

#include "ompi/runtime/mpiruntime.h"
#include "opal/runtime/opal_progress.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fs_ompi_add_procs(ompi_proc_t **procs, size_t nprocs);
static int fs_ompi_del_procs(ompi_proc_t **procs, size_t nprocs);
static int fs_ompi_enable(bool enable);
static int fs_ompi_add_comm(ompi_communicator_t *comm);
static int fs_ompi_del_comm(ompi_communicator_t *comm);
static int fs_ompi_dump(ompi_communicator_t *comm, int verbose);

fs_ompi_t fs_ompi = {
    .super = {
        .pml_add_procs     = fs_ompi_add_procs,
        .pml_del_procs     = fs_ompi_del_procs,
        .pml_enable        = fs_ompi_enable,
        .pml_progress      = NULL,      /* registered in init, like ucx/ob1 */
        .pml_add_comm      = fs_ompi_add_comm,
        .pml_del_comm      = fs_ompi_del_comm,
        .pml_irecv_init    = mca_pml_failstop_irecv_init,
        .pml_irecv         = mca_pml_failstop_irecv,
        .pml_recv          = mca_pml_failstop_recv,
        .pml_isend_init    = mca_pml_failstop_isend_init,
        .pml_isend         = mca_pml_failstop_isend,
        .pml_send          = mca_pml_failstop_send,
        .pml_iprobe        = mca_pml_failstop_iprobe,
        .pml_probe         = mca_pml_failstop_probe,
        .pml_start         = mca_pml_failstop_start,
        .pml_improbe       = mca_pml_failstop_improbe,
        .pml_mprobe        = mca_pml_failstop_mprobe,
        .pml_imrecv        = mca_pml_failstop_imrecv,
        .pml_mrecv         = mca_pml_failstop_mrecv,
        .pml_dump          = fs_ompi_dump,
#ifdef FS_OMPI_V5
        .pml_revoke_comm   = fs_ompi_revoke_comm,   /* ulfm5.c */
#else
        .pml_ft_event      = NULL,
#endif
        .pml_max_contextid = 0x7fffffff,
        .pml_max_tag       = 0x7fffffff,
        .pml_flags         = 0,
    },
};

static uint64_t fs_ompi_proc_id(const ompi_proc_t *proc)
{
    return ((uint64_t)proc->super.proc_name.jobid << 32) | proc->super.proc_name.vpid;
}

/* ---- component entry points -------------------------------------------- */

int mca_pml_failstop_register(const mca_base_component_t *component)
{
    fs_ompi.component = component;
    return fs_ompi_params_register(component);
}

int mca_pml_failstop_open(void)
{
    return fs_ompi_params_read();
}

int mca_pml_failstop_close(void)
{
    return OMPI_SUCCESS;
}

/* failstop-run: this rank's MPI_Init has returned (the first progress call
 * after it).  A rank that dies inside MPI_Init may leave the others in the
 * runtime's closing fence for ever; failstop-rank (which holds the dead
 * rank's exit until the others are out) and failstop-run tell from these
 * marks. */
static void fs_ompi_mark_ready(void)
{
    if (ompi_mpi_state >= OMPI_MPI_STATE_INIT_COMPLETED) {
        fs_ompi.ready_marked = 1;
        fs_ompi_status_mark("ready", OMPI_PROC_MY_NAME->vpid, 0);
    }
}

int fs_ompi_progress(void)
{
    unsigned count;

    if (OPAL_UNLIKELY(!fs_ompi.ready_marked)) {
        fs_ompi_mark_ready();
    }
    fs_ompi_lock();
    count = fs_engine_progress(fs_ompi.engine);
    fs_ompi_hb_poll();
    fs_ompi_unlock();
    return (int)count;
}

static int fs_ompi_publish_address(void)
{
    const void *addr;
    size_t len;
    char *key;
    int rc;

    if (fs_engine_address(fs_ompi.engine, &addr, &len) != FS_OK) {
        return OMPI_ERROR;
    }
    key = mca_base_component_to_string(fs_ompi.component);
    rc  = (key != NULL) ? fs_ompi_rte_publish(key, addr, len) : OMPI_ERR_OUT_OF_RESOURCE;
    free(key);
    return rc;
}

static const fs_tl_ops_t *fs_ompi_transport(void)
{
    const char *name = fs_ompi.params.transport;

    if ((name == NULL) || (*name == '\0') || !strcmp(name, "ucx")) {
        return &fs_tl_ucx_ops;
    }
    return !strcmp(name, "ofi") ? &fs_tl_ofi_ops : NULL;
}

mca_pml_base_module_t *mca_pml_failstop_init(int *priority, bool progress_threads,
                                             bool mpi_threads)
{
    fs_engine_config_t config;
    char ident[64];

    (void)progress_threads;
    snprintf(ident, sizeof(ident), "failstop:%u", OMPI_PROC_MY_NAME->vpid);
    fs_log_set_identity(ident);
    fs_ompi.multi_thread   = mpi_threads;
    config.params          = &fs_ompi.params;
    config.host            = &fs_ompi_host_ops;
    config.host_arg        = &fs_ompi;
    config.tl_ops          = fs_ompi_transport();
    if (config.tl_ops == NULL) {
        FS_ERROR("pml_failstop_transport is \"%s\": ucx or ofi",
                 fs_ompi.params.transport);
        return NULL;
    }
    config.my_id           = fs_ompi_proc_id(ompi_proc_local());
    config.multi_thread    = mpi_threads;
    config.estimated_peers = ompi_process_info.num_procs;
    config.local_peers     = ompi_process_info.num_local_peers;
    config.external_propagation = fs_ompi.params.hb_period_ms > 0;
    if (fs_engine_create(&config, &fs_ompi.engine) != FS_OK) {
        FS_ERROR("cannot start the failstop engine over %s", config.tl_ops->name);
        return NULL;
    }
    if (fs_ompi_hb_init() != OMPI_SUCCESS) {
        fs_ompi_hb_fini();
        fs_engine_destroy(fs_ompi.engine);
        fs_ompi.engine = NULL;
        return NULL;
    }
    if (fs_ompi_publish_address() != OMPI_SUCCESS) {
        FS_ERROR("cannot publish the transport address");
        fs_ompi_hb_fini();
        fs_engine_destroy(fs_ompi.engine);
        fs_ompi.engine = NULL;
        return NULL;
    }
    OBJ_CONSTRUCT(&fs_ompi.requests, opal_free_list_t);
    opal_free_list_init(&fs_ompi.requests, sizeof(fs_ompi_req_t), opal_cache_line_size,
                        OBJ_CLASS(fs_ompi_req_t), 0, opal_cache_line_size,
                        128, -1, 128, NULL, 0, NULL, NULL, NULL);
    fs_ompi_completed_req_init();
    fs_ompi_failure_init();
    if (fs_ompi_inject_setup(fs_ompi.params.inject) != OMPI_SUCCESS) {
        FS_ERROR("ignoring pml_failstop_inject");
    }
    opal_progress_register(fs_ompi_progress);
    fs_ompi_waitall_install(mpi_threads);
    /* failstop-run: this rank called MPI_Init, so it must finalize */
    fs_ompi_status_mark("init", OMPI_PROC_MY_NAME->vpid, 0);
    fs_ompi_inject_point(FS_OMPI_PHASE_INIT);
    *priority = 5;   /* irrelevant: Open MPI only considers the named PML */
    return &fs_ompi.super;
}

int mca_pml_failstop_finalize(void)
{
    if (fs_ompi.engine == NULL) {
        return OMPI_SUCCESS;
    }
    /* failstop-run: this rank reached MPI_Finalize */
    fs_ompi_status_mark("finalized", OMPI_PROC_MY_NAME->vpid, 0);
    opal_progress_unregister(fs_ompi_progress);
    fs_ompi_waitall_uninstall();
    fs_ompi_failure_fini();
    fs_ompi_hb_fini();
    fs_engine_destroy(fs_ompi.engine);
    fs_ompi.engine = NULL;
    fs_ompi_completed_req_fini();
    OBJ_DESTRUCT(&fs_ompi.requests);
    return OMPI_SUCCESS;
}

/* ---- processes ----------------------------------------------------------- */

static int fs_ompi_add_proc(ompi_proc_t *proc)
{
    void *addr = NULL;
    size_t len = 0;
    fs_ep_t *ep;
    fs_status_t st;
    int rc;

    if (proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] != NULL) {
        return OMPI_SUCCESS;
    }
    if (proc == ompi_proc_local()) {
        st = fs_engine_ep_create_self(fs_ompi.engine, fs_ompi_proc_id(proc), proc, &ep);
    } else {
        char *key = mca_base_component_to_string(fs_ompi.component);

        rc = (key != NULL) ? fs_ompi_modex_recv(&proc->super.proc_name, key, &addr, &len)
                           : OMPI_ERR_OUT_OF_RESOURCE;
        free(key);
        if (rc != OMPI_SUCCESS) {
            FS_ERROR("no failstop address for process %u: it ended in MPI_Init before "
                     "the address exchange, or does not run failstop",
                     proc->super.proc_name.vpid);
            return rc;
        }
        st = fs_engine_ep_create(fs_ompi.engine, fs_ompi_proc_id(proc), proc, addr,
                                 len, &ep);
        free(addr);
    }
    if (st != FS_OK) {
        return OMPI_ERROR;
    }
    proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] = (void *)ep;
    fs_ompi_hb_note_proc(proc, ep);
    return OMPI_SUCCESS;
}

/* Connection setup with the new processes finished now, while all are in
 * MPI_Init (src/proto/wireup.c), within cause_wait_ms. */
static void fs_ompi_wire_up(ompi_proc_t **procs, size_t nprocs)
{
    fs_ep_t **eps = malloc((nprocs ? nprocs : 1) * sizeof(*eps));
    size_t i;

    if (eps == NULL) {
        return;                         /* then it finishes at first contact */
    }
    for (i = 0; i < nprocs; ++i) {
        eps[i] = (fs_ep_t *)procs[i]->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];
    }
    fs_engine_wire_up(fs_ompi.engine, eps, nprocs, fs_ompi.params.cause_wait_ms * 1e-3);
    free(eps);
}

static int fs_ompi_add_procs(ompi_proc_t **procs, size_t nprocs)
{
    static int up_marked;
    size_t i, first = OMPI_PROC_MY_NAME->vpid;
    int rc = OMPI_SUCCESS;

    if (!up_marked) {
        /* failstop-run: the address exchange of MPI_Init is behind this
         * rank; a rank that ends before this point holds the others in
         * Open MPI's fence, and failstop-run ends the job */
        up_marked = 1;
        fs_ompi_status_mark("up", OMPI_PROC_MY_NAME->vpid, 0);
        fs_ompi_inject_hold();
    }
    fs_ompi_lock();
    /* start at our own rank so not everyone wires up to rank 0 first */
    for (i = 0; (i < nprocs) && (rc == OMPI_SUCCESS); ++i) {
        rc = fs_ompi_add_proc(procs[(i + first) % nprocs]);
    }
    if (rc == OMPI_SUCCESS) {
        rc = fs_ompi_hb_arm();    /* once: later calls do nothing */
        /* an endpoint that could not be created above (a peer dead in
         * wire-up) was given cause_wait_ms to learn its peer's fate, before
         * the detector could say how long it needs */
        fs_engine_refresh_fates(fs_ompi.engine);
    }
    if (rc == OMPI_SUCCESS) {
        fs_ompi_wire_up(procs, nprocs);
    }
    fs_ompi_unlock();
    if (rc == OMPI_SUCCESS) {
        fs_ompi_inject_point(FS_OMPI_PHASE_WIREUP);
    }
    return rc;
}

static int fs_ompi_del_procs(ompi_proc_t **procs, size_t nprocs)
{
    fs_ep_t **eps = malloc((nprocs ? nprocs : 1) * sizeof(*eps));
    size_t i, n = 0;

    if (eps == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    fs_ompi_lock();
    for (i = 0; i < nprocs; ++i) {
        fs_ep_t *ep = (fs_ep_t *)procs[i]->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];
        if (ep != NULL) {
            eps[n++] = ep;
            procs[i]->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] = NULL;
        }
    }
    fs_engine_leave(fs_ompi.engine, eps, n);
    fs_ompi_unlock();
    free(eps);
    return OMPI_SUCCESS;
}

static int fs_ompi_enable(bool enable)
{
    if (enable && !fs_ompi.enabled) {
        if (fs_ompi_errors_register() != OMPI_SUCCESS) {
            FS_ERROR("cannot register MPI_ERR_RANK_FAIL_STOP with Open MPI");
            return OMPI_ERROR;
        }
#ifdef FS_OMPI_V5
        fs_ompi_ulfm5_enable();
#endif
        fs_ompi.enabled = 1;
    }
    return OMPI_SUCCESS;
}

/* ---- communicators ------------------------------------------------------- */

/* Endpoints of a group's members, adding processes not seen yet (appended
 * to fresh[*nfresh_p]). */
static fs_status_t fs_ompi_group_eps(ompi_group_t *group, uint32_t size, fs_ep_t **eps,
                                     fs_ep_t **fresh, size_t *nfresh_p)
{
    uint32_t r;

    for (r = 0; r < size; ++r) {
        ompi_proc_t *proc = ompi_group_peer_lookup(group, (int)r);
        int known = (proc != NULL) &&
                    (proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] != NULL);

        if ((proc == NULL) || (fs_ompi_add_proc(proc) != OMPI_SUCCESS)) {
            return FS_ERR_LOCAL;
        }
        eps[r] = (fs_ep_t *)proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];
        if (!known) {
            fresh[(*nfresh_p)++] = eps[r];
        }
    }
    return FS_OK;
}

/* Open MPI 4.1 adds only a node's own processes in MPI_Init (add_procs,
 * mpi_add_procs_cutoff 0); the others come with MPI_COMM_WORLD, here.
 * Their connections are set up now, while every process creates the same
 * communicator (src/proto/wireup.c). */
static fs_status_t fs_ompi_comm_eps(ompi_communicator_t *comm, uint32_t size,
                                    uint32_t lsize, fs_ep_t **eps)
{
    fs_ep_t **fresh = malloc((size + lsize + 1) * sizeof(*fresh));
    size_t nfresh   = 0;
    fs_status_t st;

    if (fresh == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    st = fs_ompi_group_eps(comm->c_remote_group, size, eps, fresh, &nfresh);
    if ((st == FS_OK) && (lsize != 0)) {
        st = fs_ompi_group_eps(comm->c_local_group, lsize, eps + size, fresh, &nfresh);
    }
    if ((st == FS_OK) && (nfresh != 0)) {
        fs_engine_wire_up(fs_ompi.engine, fresh, nfresh,
                          fs_ompi.params.cause_wait_ms * 1e-3);
    }
    free(fresh);
    return st;
}

static int fs_ompi_add_comm(ompi_communicator_t *comm)
{
    int inter        = OMPI_COMM_IS_INTER(comm);
    uint32_t size    = inter ? (uint32_t)ompi_comm_remote_size(comm) :
                               (uint32_t)ompi_comm_size(comm);
    uint32_t lsize   = inter ? (uint32_t)ompi_comm_size(comm) : 0;
    fs_ep_t **eps    = malloc((size + lsize + 1) * sizeof(*eps));
    fs_comm_t *fcomm = NULL;
    fs_status_t st;

    if (eps == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    fs_ompi_lock();
    st = fs_ompi_comm_eps(comm, size, lsize, eps);
    if (st == FS_OK) {
        st = fs_comm_create(fs_ompi.engine, fs_ompi_cid(comm), comm->c_my_rank, size,
                            eps, lsize, inter ? eps + size : NULL, comm, &fcomm);
    }
    fs_ompi_unlock();
    free(eps);
    if (st != FS_OK) {
        FS_ERROR("cannot set up communicator %u: %s", fs_ompi_cid(comm),
                 fs_status_string(st));
        return OMPI_ERROR;
    }
    comm->c_pml_comm = (struct mca_pml_comm_t *)fcomm;
    if (inter && (comm->c_local_comm != NULL) && (fs_ompi_comm(comm->c_local_comm) != NULL)) {
        fs_ompi_lock();
        fs_comm_set_local_comm(fcomm, fs_ompi_comm(comm->c_local_comm));
        fs_ompi_unlock();
    }
    if ((comm != &ompi_mpi_comm_world.comm) && (comm != &ompi_mpi_comm_self.comm)) {
        fs_ompi_inject_point(FS_OMPI_PHASE_COMM);
    }
#ifdef FS_OMPI_V5
    if (comm == &ompi_mpi_comm_world.comm) {
        fs_ompi_ulfm5_world_added();
    }
#endif
    return OMPI_SUCCESS;
}

static int fs_ompi_del_comm(ompi_communicator_t *comm)
{
    fs_comm_t *fcomm = fs_ompi_comm(comm);

    /* MPI_Finalize frees every communicator before it calls del_procs, so
     * the first one it frees is where departure begins: the requests still
     * pending on them (freed ones included) must complete first (MPI-4.0
     * 11.2.2).  Attribute callbacks on MPI_COMM_SELF run before that and may
     * still communicate. */
    if (OPAL_UNLIKELY(ompi_mpi_state >= OMPI_MPI_STATE_FINALIZE_PAST_COMM_SELF_DESTRUCT) &&
        (fs_ompi.engine != NULL)) {
        fs_ompi_inject_point(FS_OMPI_PHASE_FINALIZE);
        fs_ompi_lock();
        fs_ompi_record_devices();      /* while the links are there */
        fs_engine_depart_start(fs_ompi.engine);
        fs_ompi_unlock();
        fs_ompi_inject_point(FS_OMPI_PHASE_BYE);
        fs_ompi_lock();
        fs_engine_depart(fs_ompi.engine);
        fs_ompi_unlock();
    }
    if (fcomm != NULL) {
        fs_ompi_survivors_release(comm);        /* its shadow, if validated */
        fs_ompi_lock();
        fs_comm_destroy(fcomm);
        fs_ompi_unlock();
        comm->c_pml_comm = NULL;
    }
    return OMPI_SUCCESS;
}

static int fs_ompi_dump(ompi_communicator_t *comm, int verbose)
{
    const fs_stats_t *s = fs_engine_stats(fs_ompi.engine);

    (void)comm;
    (void)verbose;
    fprintf(stderr, "failstop: sent %llu received %llu unexpected %llu reordered %llu "
            "discarded %llu peers failed %llu left %llu pool grows %llu\n",
            (unsigned long long)s->msgs_sent, (unsigned long long)s->msgs_received,
            (unsigned long long)s->unexpected, (unsigned long long)s->reordered,
            (unsigned long long)s->discarded_after_failure,
            (unsigned long long)s->peers_failed, (unsigned long long)s->peers_left,
            (unsigned long long)s->pool_grows);
    return OMPI_SUCCESS;
}
