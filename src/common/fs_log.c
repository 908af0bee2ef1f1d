#include "common/fs_log.h"
#include "common/fs_status.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int fs_log_level = FS_LOG_WARN;

static char fs_log_ident[64] = "failstop";

static const char *const fs_log_level_names[] = {
    [FS_LOG_ERROR] = "ERROR",
    [FS_LOG_WARN]  = "WARN",
    [FS_LOG_INFO]  = "INFO",
    [FS_LOG_DEBUG] = "DEBUG",
    [FS_LOG_TRACE] = "TRACE",
};

void fs_log_set_identity(const char *ident)
{
    snprintf(fs_log_ident, sizeof(fs_log_ident), "%s", ident);
}

void fs_log_emit(fs_log_level_t level, const char *file, int line,
                 const char *fmt, ...)
{
    int saved_errno = errno;
    const char *base = strrchr(file, '/');
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    fprintf(stderr, "[%s] %s %s:%d %s\n", fs_log_ident,
            fs_log_level_names[level], base ? base + 1 : file, line, msg);
    errno = saved_errno;
}

const char *fs_status_string(fs_status_t status)
{
    switch (status) {
    case FS_OK:              return "success";
    case FS_INPROGRESS:      return "in progress";
    case FS_ERR_PEER_FAILED: return "peer process failed (fail-stop)";
    case FS_ERR_TRUNCATE:    return "message truncated";
    case FS_ERR_NO_MEMORY:   return "out of memory";
    case FS_ERR_INVALID:     return "invalid argument";
    case FS_ERR_LOCAL:       return "local transport error";
    case FS_ERR_CANCELED:    return "canceled";
    case FS_ERR_PEER_LEFT:   return "peer has finalized";
    case FS_ERR_PROTO:       return "protocol error";
    case FS_ERR_UNSUPPORTED: return "unsupported";
    case FS_ERR_AGAIN:       return "try again";
    case FS_ERR_ANYSRC_DISABLED: return "MPI_ANY_SOURCE disabled after a process failure";
    case FS_ERR_COLL_INACTIVE:   return "communicator collectively inactive after a process failure";
    case FS_ERR_REVOKED:         return "communicator revoked";
    default:                 return "unknown status";
    }
}
