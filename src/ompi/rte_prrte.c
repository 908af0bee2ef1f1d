/* The runtime of Open MPI 5 (PRRTE, PMIx called directly): the address
 * exchange and the loss of the host's daemon.  Open MPI 4.1's: rte_orte.c.
 *
 * MPI_Abort is left to Open MPI 5: its runtime ends the job itself (ORTE
 * under --enable-recovery did not, so failstop carried the abort there). */
#include "ompi/ompi_int.h"

#if defined(FS_OMPI_V5)
#include "opal/mca/pmix/pmix-internal.h"

#include <stdbool.h>
#include <stdlib.h>

int fs_ompi_rte_publish(const char *key, const void *data, size_t len)
{
    int rc;

    OPAL_MODEX_SEND_STRING(rc, PMIX_GLOBAL, (char *)key, (void *)data, len);
    return (rc == PMIX_SUCCESS) ? OPAL_SUCCESS : OPAL_ERROR;
}

/* As in rte_orte.c: after MPI_Init's full exchange the data of a process
 * of this job is at this host's PMIx server already or was never published,
 * and PMIx would wait for ever for it; so only that server is asked
 * (PMIX_IMMEDIATE.  PMIX_OPTIONAL, 4.1's way, looks in the client's own
 * store only, which under PRRTE does not hold the exchanged data). */
int fs_ompi_modex_recv(const opal_process_name_t *name, const char *key, void **data,
                       size_t *len)
{
    uint8_t *bytes = NULL;
    size_t size    = 0;
    int rc;

    if (opal_pmix_collect_all_data && !opal_pmix_base_async_modex &&
        (name->jobid == OMPI_PROC_MY_NAME->jobid)) {
        OPAL_MODEX_RECV_STRING_IMMEDIATE(rc, key, name, &bytes, &size);
    } else {
        OPAL_MODEX_RECV_STRING(rc, key, name, &bytes, &size);
    }
    if ((rc != PMIX_SUCCESS) || (bytes == NULL)) {
        free(bytes);
        *data = NULL;
        *len  = 0;
        return OPAL_ERR_NOT_FOUND;
    }
    *data = bytes;
    *len  = size;
    return OPAL_SUCCESS;
}

/* The host's daemon is gone (see rte_orte.c): this process ends alone, as
 * a failed one, instead of Open MPI's default handler aborting the job. */
static void fs_ompi_runtime_lost(size_t id, pmix_status_t status, const pmix_proc_t *source,
                                 pmix_info_t info[], size_t ninfo, pmix_info_t *results,
                                 size_t nresults, pmix_event_notification_cbfunc_fn_t cbfunc,
                                 void *cbdata)
{
    (void)id;
    (void)source;
    (void)info;
    (void)ninfo;
    (void)results;
    (void)nresults;
    if (!fs_ompi_runtime_is_watched() || (status != PMIX_ERR_LOST_CONNECTION)) {
        if (cbfunc != NULL) {
            cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);   /* the next handler's */
        }
        return;
    }
    fs_ompi_runtime_end();
}

void fs_ompi_rte_hooks_init(void)
{
    pmix_status_t code = PMIX_ERR_LOST_CONNECTION;
    pmix_info_t info[2];
    bool prepend = true;

    PMIX_INFO_LOAD(&info[0], PMIX_EVENT_HDLR_NAME, "failstop-runtime-lost", PMIX_STRING);
    PMIX_INFO_LOAD(&info[1], PMIX_EVENT_HDLR_PREPEND, &prepend, PMIX_BOOL);
    (void)PMIx_Register_event_handler(&code, 1, info, 2, fs_ompi_runtime_lost, NULL, NULL);
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
}

void fs_ompi_rte_hooks_fini(void)
{
}
#endif
