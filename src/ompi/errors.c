/* MPI error classes and codes of failstop, and the one mapping from core
 * status to MPI error code. */
#include "ompi/ompi_int.h"
#include "common/fs_log.h"

#include "ompi/attribute/attribute.h"
#include "ompi/errhandler/errcode.h"

#include <string.h>

static int fs_ompi_add_string(int errnum, const char *text)
{
    return ompi_mpi_errnum_add_string(errnum, text, (int)strlen(text) + 1);
}

/* Must run in pml_enable: Open MPI builds its error tables after selecting
 * the PML, and before that adding a class would be lost. */
int fs_ompi_errors_register(void)
{
    fs_ompi_errors_t *err = &fs_ompi.errors;

    err->fail_stop_class = ompi_mpi_errclass_add();
    if (err->fail_stop_class < 0) {
        return OMPI_ERROR;
    }
    err->peer_failed     = ompi_mpi_errcode_add(err->fail_stop_class);
    err->anysrc_disabled = ompi_mpi_errcode_add(err->fail_stop_class);
    err->coll_inactive   = ompi_mpi_errcode_add(err->fail_stop_class);
    err->peer_left       = ompi_mpi_errcode_add(MPI_ERR_OTHER);
    if ((err->peer_failed < 0) || (err->peer_left < 0) ||
        (err->anysrc_disabled < 0) || (err->coll_inactive < 0) ||
        (fs_ompi_add_string(err->anysrc_disabled,
                            "MPI_ERR_RANK_FAIL_STOP: MPI_ANY_SOURCE is disabled on "
                            "this communicator after a process failure; re-enable "
                            "with MPIX_Comm_reenable_any_source") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->coll_inactive,
                            "MPI_ERR_RANK_FAIL_STOP: the communicator is collectively "
                            "inactive after a process failure") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->fail_stop_class,
                            "MPI_ERR_RANK_FAIL_STOP: a process in the operation "
                            "has failed (fail-stop)") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->peer_failed,
                            "MPI_ERR_RANK_FAIL_STOP: the peer process of this "
                            "operation has failed (fail-stop)") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->peer_left,
                            "MPI_ERR_OTHER: the peer process has already called "
                            "MPI_Finalize (failstop)") != OMPI_SUCCESS)) {
        return OMPI_ERROR;
    }
    /* as MPI_Add_error_class does: MPI_LASTUSEDCODE covers what we added */
    if (ompi_attr_set_fint(COMM_ATTR, MPI_COMM_WORLD, &MPI_COMM_WORLD->c_keyhash,
                           MPI_LASTUSEDCODE, ompi_mpi_errcode_lastused, true) !=
        OMPI_SUCCESS) {
        FS_WARN("cannot update MPI_LASTUSEDCODE to %d", ompi_mpi_errcode_lastused);
    }
    return OMPI_SUCCESS;
}

int fs_ompi_error_slow(fs_status_t status)
{
    switch (status) {
    case FS_OK:
    case FS_ERR_CANCELED:     /* reported through the status' cancelled flag */
        return MPI_SUCCESS;
    case FS_ERR_PEER_FAILED:  return fs_ompi.errors.peer_failed;
    case FS_ERR_ANYSRC_DISABLED: return fs_ompi.errors.anysrc_disabled;
    case FS_ERR_COLL_INACTIVE:   return fs_ompi.errors.coll_inactive;
    case FS_ERR_PEER_LEFT:    return fs_ompi.errors.peer_left;
    case FS_ERR_TRUNCATE:     return MPI_ERR_TRUNCATE;
    case FS_ERR_NO_MEMORY:    return MPI_ERR_NO_MEM;
    case FS_ERR_INVALID:      return MPI_ERR_ARG;
    case FS_ERR_UNSUPPORTED:  return MPI_ERR_UNSUPPORTED_OPERATION;
    case FS_ERR_LOCAL:
    case FS_ERR_PROTO:
    default:                  return MPI_ERR_INTERN;
    }
}
