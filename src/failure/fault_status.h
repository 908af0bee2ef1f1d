/* How a classified transport fault becomes a core status.  Flushes are
 * reported as FS_ERR_CANCELED; the engine replaces that with the cause it
 * recorded for the endpoint (a flush follows its cause). */
#ifndef FS_FAILURE_FAULT_STATUS_H
#define FS_FAILURE_FAULT_STATUS_H

#include "common/fs_status.h"
#include "failure/classify.h"

static inline fs_status_t fs_fault_to_status(fs_fault_class_t cls)
{
    switch (cls) {
    case FS_FAULT_NONE:           return FS_OK;
    case FS_FAULT_PEER_FAILSTOP:
    case FS_FAULT_PEER_SUSPECTED: return FS_ERR_PEER_FAILED;
    case FS_FAULT_FLUSH:          return FS_ERR_CANCELED;
    case FS_FAULT_USER_ERROR:     return FS_ERR_INVALID;
    case FS_FAULT_LOCAL_FATAL:
    case FS_FAULT_TRANSIENT:
    default:                      return FS_ERR_LOCAL;
    }
}

static inline int fs_fault_is_peer(fs_fault_class_t cls)
{
    return (cls == FS_FAULT_PEER_FAILSTOP) || (cls == FS_FAULT_PEER_SUSPECTED);
}

#endif
