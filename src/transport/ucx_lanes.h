/* The lanes of a UCX endpoint, named for reports (src/transport/ucx_lanes.c). */
#ifndef FS_TRANSPORT_UCX_LANES_H
#define FS_TRANSPORT_UCX_LANES_H

#include "common/fs_status.h"

#include <stddef.h>
#include <ucp/api/ucp.h>

/* "transport/device" of each of ep's lanes, once each, comma-separated, into
 * buf (e.g. "tcp/eth0", "sysv/memory,cma/memory"); FS_ERR_UNSUPPORTED if
 * none could be read.  Slow: UCX prints them to a temporary file. */
fs_status_t fs_ucx_lanes(ucp_ep_h ep, char *buf, size_t len);

#endif
