/* The runtime of Open MPI 4.1 (ORTE, and PMIx through opal_pmix): the
 * address exchange, MPI_Abort's peers, the loss of the host's daemon.
 * Open MPI 5's runtime (PRRTE, PMIx called directly): rte_prrte.c. */
#include "ompi/ompi_int.h"

#if !defined(FS_OMPI_V5)
#include "common/fs_log.h"

#include "opal/mca/pmix/pmix.h"
#include "orte/mca/errmgr/errmgr.h"

#include <stdlib.h>
#include <string.h>

static orte_errmgr_base_module_abort_peers_fn_t fs_ompi_orig_abort_peers;

int fs_ompi_rte_publish(const char *key, const void *data, size_t len)
{
    int rc;

    /* the macro neither keeps nor changes the key */
    OPAL_MODEX_SEND_STRING(rc, OPAL_PMIX_GLOBAL, (char *)key, (void *)data, len);
    return rc;
}

/* Another process's published data (its failstop or detector address).
 * After MPI_Init's full exchange (the default: a fence that collects every
 * process's data) the data of a process of this job is here already, or was
 * never published: that process died in MPI_Init before the exchange (or
 * does not run failstop).  Asked from the server, PMIx would then wait for
 * ever for data nobody will commit, so it is only looked up here.  Without
 * a full exchange, or for another job, it is fetched as usual. */
int fs_ompi_modex_recv(const opal_process_name_t *name, const char *key, void **data,
                       size_t *len)
{
    opal_value_t *kv = NULL, *opt;
    opal_list_t info;
    int rc;

    *data = NULL;
    *len  = 0;
    OBJ_CONSTRUCT(&info, opal_list_t);
    if (opal_pmix_collect_all_data && !opal_pmix_base_async_modex &&
        (name->jobid == OMPI_PROC_MY_NAME->jobid)) {
        opt = OBJ_NEW(opal_value_t);
        opt->key       = strdup(OPAL_PMIX_OPTIONAL);
        opt->type      = OPAL_BOOL;
        opt->data.flag = true;
        opal_list_append(&info, &opt->super);
    }
    rc = opal_pmix.get(name, key, &info, &kv);
    OPAL_LIST_DESTRUCT(&info);
    if ((rc != OPAL_SUCCESS) || (kv == NULL)) {
        if (kv != NULL) {
            OBJ_RELEASE(kv);
        }
        return OPAL_ERR_NOT_FOUND;
    }
    *data = kv->data.bo.bytes;
    *len  = kv->data.bo.size;
    kv->data.bo.bytes = NULL;       /* ours now */
    OBJ_RELEASE(kv);
    return OPAL_SUCCESS;
}

/* Open MPI's MPI_Abort asks the runtime to kill the communicator's peers,
 * which ORTE does not do under --enable-recovery: failstop tells them. */
static int fs_ompi_abort_peers(orte_process_name_t *procs, orte_std_cntr_t num_procs,
                               int error_code)
{
    fs_ep_t **eps = calloc(num_procs ? num_procs : 1, sizeof(*eps));
    orte_std_cntr_t i, n = 0;

    fs_ompi_mark("aborted", error_code);
    if ((eps != NULL) && (fs_ompi.engine != NULL)) {
        for (i = 0; i < num_procs; ++i) {
            ompi_proc_t *proc = ompi_proc_find((ompi_process_name_t *)&procs[i]);
            if ((proc != NULL) &&
                (proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML] != NULL)) {
                eps[n++] = proc->proc_endpoints[OMPI_PROC_ENDPOINT_TAG_PML];
            }
        }
        fs_ompi_lock();
        fs_engine_abort_peers(fs_ompi.engine, eps, n, error_code);
        fs_ompi_unlock();
    }
    free(eps);
    return (fs_ompi_orig_abort_peers != NULL) ?
           fs_ompi_orig_abort_peers(procs, num_procs, error_code) : ORTE_ERR_NOT_IMPLEMENTED;
}

/* PMIx tells a process that lost its connection to the runtime daemon of
 * its host (the daemon died or was killed).  Open MPI's default handler calls
 * MPI_Abort on MPI_COMM_WORLD, which failstop would carry to every process:
 * one daemon's death would end the job.  A process without its daemon can
 * no longer be managed (nobody would see it end), so it ends alone, as a
 * failed process: the others find it failed and go on. */
static void fs_ompi_runtime_lost(int status, const opal_process_name_t *source,
                                 opal_list_t *info, opal_list_t *results,
                                 opal_pmix_notification_complete_fn_t cbfunc,
                                 void *cbdata)
{
    (void)source;
    (void)info;
    (void)results;
    /* PMIx 3: LOST_CONNECTION_TO_SERVER, converted to OPAL_ERR_COMM_FAILURE;
     * PMIx 4 (Debian 12) renamed it LOST_CONNECTION (-61), which Open MPI
     * 4.1's ext3x passes on unconverted: OPAL_ERR_NODE_OFFLINE's value */
    /* after MPI_Finalize the process has left: Open MPI's handler decides */
    if (!fs_ompi_runtime_is_watched() ||
        ((status != OPAL_ERR_COMM_FAILURE) && (status != OPAL_ERR_NODE_OFFLINE))) {
        if (cbfunc != NULL) {
            cbfunc(OPAL_SUCCESS, NULL, NULL, NULL, cbdata);   /* the next handler's */
        }
        return;
    }
    fs_ompi_runtime_end();
}

/* First in PMIx's chain of default handlers: Open MPI's, registered in
 * MPI_Init before the PML exists, aborts. */
static void fs_ompi_runtime_watch(void)
{
    opal_list_t info;
    opal_value_t *kv;

    if (opal_pmix.register_evhandler == NULL) {
        return;
    }
    OBJ_CONSTRUCT(&info, opal_list_t);
    kv = OBJ_NEW(opal_value_t);
    kv->key          = strdup(OPAL_PMIX_EVENT_HDLR_NAME);
    kv->type         = OPAL_STRING;
    kv->data.string  = strdup("failstop-runtime-lost");
    opal_list_append(&info, &kv->super);
    kv = OBJ_NEW(opal_value_t);
    kv->key          = strdup(OPAL_PMIX_EVENT_ORDER_PREPEND);
    kv->type         = OPAL_BOOL;
    kv->data.flag    = true;
    opal_list_append(&info, &kv->super);
    opal_pmix.register_evhandler(NULL, &info, fs_ompi_runtime_lost, NULL, NULL);
    OPAL_LIST_DESTRUCT(&info);
}

void fs_ompi_rte_hooks_init(void)
{
    fs_ompi_orig_abort_peers = orte_errmgr.abort_peers;
    orte_errmgr.abort_peers  = fs_ompi_abort_peers;
    fs_ompi_runtime_watch();
}

void fs_ompi_rte_hooks_fini(void)
{
    if (orte_errmgr.abort_peers == fs_ompi_abort_peers) {
        orte_errmgr.abort_peers = fs_ompi_orig_abort_peers;
    }
}
#endif
