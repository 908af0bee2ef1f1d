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

/* One PMIx_Get of a byte-object key, with the given directives. */
static pmix_status_t fs_prrte_get(const opal_process_name_t *name, const char *key,
                                  pmix_info_t *info, size_t ninfo, uint8_t **bytes_p,
                                  size_t *size_p)
{
    pmix_proc_t proc;
    pmix_value_t *kv = NULL;
    pmix_status_t rc;

    OPAL_PMIX_CONVERT_NAME(&proc, name);
    rc = PMIx_Get(&proc, key, info, ninfo, &kv);
    if (kv == NULL) {
        return (rc == PMIX_SUCCESS) ? PMIX_ERR_NOT_FOUND : rc;
    }
    if ((rc == PMIX_SUCCESS) && (kv->type == PMIX_BYTE_OBJECT)) {
        *bytes_p          = (uint8_t *)kv->data.bo.bytes;
        *size_p           = kv->data.bo.size;
        kv->data.bo.bytes = NULL;       /* now the caller's */
    } else if (rc == PMIX_SUCCESS) {
        rc = PMIX_ERR_TYPE_MISMATCH;
    }
    PMIX_VALUE_RELEASE(kv);
    return rc;
}

/* As in rte_orte.c, PMIx must not wait for ever for data a process of this
 * job never published (it ended in MPI_Init before the exchange).  After
 * MPI_Init's full exchange this host's PMIx server holds what was
 * published, but its client only answers PMIX_IMMEDIATE from what it has
 * itself, which is this host's processes' data, not other hosts' (found
 * across simulated hosts: every process of another host was "not found").
 * So: immediately first, then asking the server and through it the other
 * host, within FS_PRRTE_GET_WAIT_S.  (PMIX_OPTIONAL, 4.1's way, looks in
 * the client's own store only.) */
#define FS_PRRTE_GET_WAIT_S 5

int fs_ompi_modex_recv(const opal_process_name_t *name, const char *key, void **data,
                       size_t *len)
{
    uint8_t *bytes = NULL;
    size_t size    = 0;
    pmix_info_t info;
    int wait_s = FS_PRRTE_GET_WAIT_S;
    pmix_status_t rc = PMIX_ERR_NOT_FOUND;

    if (opal_pmix_collect_all_data && !opal_pmix_base_async_modex &&
        (name->jobid == OMPI_PROC_MY_NAME->jobid)) {
        PMIX_INFO_LOAD(&info, PMIX_IMMEDIATE, NULL, PMIX_BOOL);
        rc = fs_prrte_get(name, key, &info, 1, &bytes, &size);
        PMIX_INFO_DESTRUCT(&info);
        if (rc != PMIX_SUCCESS) {
            PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &wait_s, PMIX_INT);
            rc = fs_prrte_get(name, key, &info, 1, &bytes, &size);
            PMIX_INFO_DESTRUCT(&info);
        }
    } else {
        rc = fs_prrte_get(name, key, NULL, 0, &bytes, &size);
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
