/* MPI_Waitall under MPI_THREAD_MULTIPLE.
 *
 * Open MPI 4.1's ompi_request_default_wait_all never returns, in a
 * multi-threaded run, when one of its requests had already failed as it
 * was called: it skips its wait but leaves its wait object marked as being
 * signalled, and its release then spins until that mark clears, which
 * nothing does (req_wait.c; Open MPI 5.0 clears it).  Requests fail here
 * whenever a peer does (an Isend to a process known dead fails at once),
 * so in multi-threaded runs failstop stands in front of it: it waits for
 * each request itself; if none failed the original finishes the call (it
 * cannot hang then), else this finishes it as the original would --
 * statuses copied, requests that succeeded freed, persistent ones made
 * inactive, failed ones left to the caller (MPI_Waitall then frees them),
 * MPI_ERR_IN_STATUS; as the original, a failed persistent request counts
 * only when statuses are ignored (docs/SEMANTICS.md).
 * ULFM's stress test pingpairs hung so. */
#include "ompi/ompi_int.h"
#include "common/fs_tsan.h"

#include "ompi/request/grequest.h"
#include "opal/runtime/opal_progress.h"

static ompi_request_wait_all_fn_t fs_waitall_orig;

/* Read as the completing thread writes it (ompi_request_complete's CAS);
 * no wait object: the caller progresses, as other waiting threads may. */
static int fs_waitall_done(ompi_request_t *req)
{
    if (__atomic_load_n(&req->req_complete, __ATOMIC_ACQUIRE) != REQUEST_COMPLETED) {
        return 0;
    }
    FS_TSAN_ACQUIRE(req);       /* from fs_ompi_req_signal's release */
    return 1;
}

static int fs_waitall_mt(size_t count, ompi_request_t **requests,
                         ompi_status_public_t *statuses)
{
    int failed = 0, rc = MPI_SUCCESS;
    size_t i;

    for (i = 0; i < count; i++) {
        if (requests[i]->req_state != OMPI_REQUEST_INACTIVE) {
            while (!fs_waitall_done(requests[i])) {
                opal_progress();
            }
            failed |= (requests[i]->req_status.MPI_ERROR != MPI_SUCCESS);
        }
    }
    if (!failed) {
        return fs_waitall_orig(count, requests, statuses);
    }
    for (i = 0; i < count; i++) {
        ompi_request_t *req = requests[i];
        ompi_status_public_t *st = (statuses != MPI_STATUSES_IGNORE) ? &statuses[i] : NULL;

        if (req->req_state == OMPI_REQUEST_INACTIVE) {
            if (st != NULL) {
                OMPI_COPY_STATUS(st, ompi_status_empty, true);
            }
            continue;
        }
        if (req->req_type == OMPI_REQUEST_GEN) {
            ompi_grequest_invoke_query(req, &req->req_status);
        }
        if (st != NULL) {
            OMPI_COPY_STATUS(st, req->req_status, true);
        }
        if ((req->req_status.MPI_ERROR != MPI_SUCCESS) && (!req->req_persistent || (st == NULL))) {
            rc = MPI_ERR_IN_STATUS;     /* as the original: see the top */
        }
        if (req->req_persistent) {
            req->req_state = OMPI_REQUEST_INACTIVE;
        } else if (req->req_status.MPI_ERROR == MPI_SUCCESS) {
            (void)ompi_request_free(&requests[i]);
        }
    }
    return rc;
}

void fs_ompi_waitall_install(int multi_thread)
{
    if (multi_thread && (fs_waitall_orig == NULL)) {
        fs_waitall_orig = ompi_request_functions.req_wait_all;
        ompi_request_functions.req_wait_all = fs_waitall_mt;
    }
}

void fs_ompi_waitall_uninstall(void)
{
    if (fs_waitall_orig != NULL) {
        ompi_request_functions.req_wait_all = fs_waitall_orig;
        fs_waitall_orig = NULL;
    }
}
