/* Status codes of the failstop core.  The Open MPI layer maps them to MPI
 * error classes in one place (src/ompi/errors.c). */
#ifndef FS_STATUS_H
#define FS_STATUS_H

typedef enum fs_status {
    FS_OK                 =  0,
    FS_INPROGRESS         =  1,
    FS_ERR_PEER_FAILED    = -1,  /* a process in the operation failed (fail-stop) */
    FS_ERR_TRUNCATE       = -2,  /* message longer than the receive buffer */
    FS_ERR_NO_MEMORY      = -3,  /* resource exhaustion */
    FS_ERR_INVALID        = -4,  /* bad argument from the user */
    FS_ERR_LOCAL          = -5,  /* local transport/fatal error: never blamed on a peer */
    FS_ERR_CANCELED       = -6,
    FS_ERR_PEER_LEFT      = -7,  /* the peer finalized normally; not a failure */
    FS_ERR_PROTO          = -8,  /* malformed or unexpected wire data */
    FS_ERR_UNSUPPORTED    = -9,
    FS_ERR_AGAIN          = -10, /* not done now, nothing happened: retry the slow way */
    FS_ERR_ANYSRC_DISABLED = -11, /* MPI_ANY_SOURCE off after a failure (17.6) */
    FS_ERR_COLL_INACTIVE  = -12, /* collectives off after a failure (17.7) */
    FS_ERR_REVOKED        = -13, /* the communicator was revoked (ULFM) */
    FS_ERR_LAST           = -14
} fs_status_t;

const char *fs_status_string(fs_status_t status);

#define fs_likely(_x)   __builtin_expect(!!(_x), 1)
#define fs_unlikely(_x) __builtin_expect(!!(_x), 0)

#define FS_EXPORT __attribute__((visibility("default")))

#endif
