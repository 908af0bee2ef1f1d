/* The nonblocking recovery calls (MPIX_Comm_iagree, MPIX_Comm_ishrink,
 * MPIX_Icomm_validate): an agreement behind a generalized request.  The
 * agreement completes the request from progress; the result (a flag, a
 * communicator, a group) is made in the query, when MPI_Wait or MPI_Test
 * reports the completion -- outside the progress call, where making a
 * communicator is allowed.  The request may be freed before the agreement
 * ends (MPI_Request_free): then the agreement frees the call's state. */
#include "ompi/ompi_int.h"

#include "ompi/request/grequest.h"

#include <stdlib.h>

static void fs_nb_done(fs_agreement_t *op)
{
    fs_ompi_nb_t *nb = op->host;

    if (nb->freed) {
        nb->destroy(nb);
        return;
    }
    ompi_grequest_complete(nb->req);
}

static int fs_nb_query(void *extra, MPI_Status *status)
{
    fs_ompi_nb_t *nb = extra;

    if (!nb->finished) {
        nb->finished = 1;
        nb->rc       = nb->finish(nb);
    }
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG    = MPI_UNDEFINED;
    status->MPI_ERROR  = nb->rc;
    status->_cancelled = 0;
    status->_ucount    = 0;
    return nb->rc;
}

static int fs_nb_free(void *extra)
{
    fs_ompi_nb_t *nb = extra;
    int done;

    fs_ompi_lock();
    done = __atomic_load_n(&nb->op.done, __ATOMIC_ACQUIRE) || nb->finished;
    nb->freed = !done;
    fs_ompi_unlock();
    if (done) {
        nb->destroy(nb);
    }
    return MPI_SUCCESS;
}

static int fs_nb_cancel(void *extra, int complete)
{
    (void)extra;
    (void)complete;
    return MPI_SUCCESS;         /* an agreement cannot be cancelled */
}

fs_ompi_nb_t *fs_ompi_nb_new(MPI_Comm comm, size_t size, int (*finish)(fs_ompi_nb_t *nb),
                             void (*destroy)(fs_ompi_nb_t *nb), MPI_Request *request,
                             int *rc_p)
{
    fs_ompi_nb_t *nb = NULL;
    fs_comm_t *fcomm;
    int rc = fs_mpix_comm(comm, &fcomm);

    if ((rc == MPI_SUCCESS) && (request == NULL)) {
        rc = MPI_ERR_ARG;
    }
    if ((rc == MPI_SUCCESS) && ((nb = calloc(1, size)) == NULL)) {
        rc = MPI_ERR_NO_MEM;
    }
    if (rc == MPI_SUCCESS) {
        nb->finish  = finish;
        nb->destroy = destroy;
        rc = fs_ompi_nb_begin(nb, request);
    }
    if (rc != MPI_SUCCESS) {
        free(nb);
        nb = NULL;
    }
    *rc_p = rc;
    return nb;
}

int fs_ompi_nb_begin(fs_ompi_nb_t *nb, MPI_Request *request)
{
    nb->op.host     = nb;
    nb->op.complete = fs_nb_done;
    if (ompi_grequest_start(fs_nb_query, fs_nb_free, fs_nb_cancel, nb, &nb->req) !=
        OMPI_SUCCESS) {
        return MPI_ERR_NO_MEM;
    }
    *request = nb->req;
    return MPI_SUCCESS;
}

void fs_ompi_nb_fail(fs_ompi_nb_t *nb, int rc)
{
    nb->finished = 1;
    nb->rc       = rc;
    ompi_grequest_complete(nb->req);
}
