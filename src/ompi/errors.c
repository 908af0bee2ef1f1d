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

#ifndef FS_OMPI_V5
/* A new error class that is also the code failstop returns (rc ==
 * MPIX_ERR_PROC_FAILED must hold, as in ULFM).  Open MPI 4.1's
 * MPI_Error_class answers MPI_ERR_UNKNOWN for an added class unless its
 * entry is a code too, as the predefined classes' entries are. */
static int fs_ompi_class_add(void)
{
    int cls = ompi_mpi_errclass_add();
    ompi_mpi_errcode_t *entry;

    if (cls < 0) {
        return -1;
    }
    entry = opal_pointer_array_get_item(&ompi_mpi_errcodes, cls);
    if (entry == NULL) {
        return -1;
    }
    entry->code = cls;
    return cls;
}
#endif

/* The classes' strings (Open MPI 5's own classes keep theirs); nonzero on
 * failure. */
static int fs_ompi_strings_add(const fs_ompi_errors_t *err)
{
#ifndef FS_OMPI_V5
    if ((fs_ompi_add_string(err->fail_stop_class,
                            "MPI_ERR_RANK_FAIL_STOP: a process in the operation has "
                            "failed (fail-stop), or the operation is off on this "
                            "communicator since a process failure (MPI_ANY_SOURCE "
                            "until acknowledged, collectives)") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->revoked_class,
                            "MPIX_ERR_REVOKED: the communicator was revoked "
                            "(MPIX_Comm_revoke); only agreement, shrink, failure "
                            "acknowledgement and MPI_Comm_free work on it") != OMPI_SUCCESS) ||
        (fs_ompi_add_string(err->pending_class,
                            "MPIX_ERR_PROC_FAILED_PENDING: a process failed and "
                            "MPI_ANY_SOURCE is disabled on the communicator; this "
                            "wildcard receive is still pending: acknowledge the "
                            "failure (MPIX_Comm_failure_ack) and wait for it again, "
                            "or cancel it (pml_failstop_anysource_pending)") != OMPI_SUCCESS)) {
        return 1;
    }
#endif
    return fs_ompi_add_string(err->peer_left,
                              "MPI_ERR_OTHER: the peer process has already called "
                              "MPI_Finalize (failstop)") != OMPI_SUCCESS;
}

/* Must run in pml_enable: Open MPI builds its error tables after selecting
 * the PML, and before that adding a class would be lost. */
int fs_ompi_errors_register(void)
{
    fs_ompi_errors_t *err = &fs_ompi.errors;

#ifdef FS_OMPI_V5
    /* Open MPI 5 has ULFM's classes built in, and its own code (shrink,
     * communicator ids) tests for them: failstop's are those */
    err->fail_stop_class = MPI_ERR_PROC_FAILED;
    err->revoked_class   = MPI_ERR_REVOKED;
    err->pending_class   = MPI_ERR_PROC_FAILED_PENDING;
#else
    err->fail_stop_class = fs_ompi_class_add();
    err->revoked_class   = fs_ompi_class_add();
    err->pending_class   = fs_ompi_class_add();
#endif
    if ((err->fail_stop_class < 0) || (err->revoked_class < 0) || (err->pending_class < 0)) {
        return OMPI_ERROR;
    }
    err->peer_left = ompi_mpi_errcode_add(MPI_ERR_OTHER);
    if ((err->peer_left < 0) || fs_ompi_strings_add(err)) {
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

static int fs_ompi_error_code(fs_status_t status)
{
    switch (status) {
    case FS_OK:
    case FS_ERR_CANCELED:     /* reported through the status' cancelled flag */
        return MPI_SUCCESS;
    case FS_ERR_PEER_FAILED:
    case FS_ERR_ANYSRC_DISABLED:
    case FS_ERR_COLL_INACTIVE:
        /* one code, the class's own (as ULFM and MPICH); which of the
         * three it was is in the debug log */
        FS_DEBUG("MPI_ERR_RANK_FAIL_STOP: %s", fs_status_string(status));
        return fs_ompi.errors.fail_stop_class;
    case FS_ERR_PEER_LEFT:    return fs_ompi.errors.peer_left;
    case FS_ERR_REVOKED:      return fs_ompi.errors.revoked_class;
    case FS_ERR_TRUNCATE:     return MPI_ERR_TRUNCATE;
    case FS_ERR_NO_MEMORY:    return MPI_ERR_NO_MEM;
    case FS_ERR_INVALID:      return MPI_ERR_ARG;
    case FS_ERR_UNSUPPORTED:  return MPI_ERR_UNSUPPORTED_OPERATION;
    case FS_ERR_LOCAL:
    case FS_ERR_PROTO:
    default:                  return MPI_ERR_INTERN;
    }
}

int fs_ompi_error_slow(fs_status_t status)
{
    int code = fs_ompi_error_code(status);

    if (code != MPI_SUCCESS) {
        fs_ompi_record_error(status, code);
    }
    return code;
}
