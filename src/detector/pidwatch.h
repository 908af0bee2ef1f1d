/* Watching a process of this host exit (Linux pidfd).
 *
 * A process that crashes says nothing, and over providers that report no
 * dead peer (libfabric shm, tcp;ofi_rxm, udp;ofi_rxd) the heartbeat
 * detector would need a whole timeout (1 s, and more while ranks start) to
 * find it.  The kernel knows at once: a pidfd becomes readable when its
 * process exits.  Only a process whose process id means the same here can
 * be watched: the same kernel (boot id), the same network stack (failstop's
 * host identity: simulated hosts share a kernel but not a network, and must
 * look like separate machines) and the same pid namespace. */
#ifndef FS_DETECTOR_PIDWATCH_H
#define FS_DETECTOR_PIDWATCH_H

#include "common/fs_status.h"

#include <stdint.h>

/* Published by every process with its detector address. */
typedef struct fs_pw_id {
    uint64_t pidns;     /* pid namespace (device and inode), 0: unknown */
    int32_t  pid;       /* 0: unknown */
    uint32_t zero;
} fs_pw_id_t;

/* This process's id. */
void        fs_pw_self(fs_pw_id_t *id_p);

/* Opens a descriptor that becomes readable when the process `peer` exits
 * (*fd_p; close it with fs_pw_close).  FS_ERR_UNSUPPORTED: it cannot be
 * watched from here (another pid namespace, unknown, this process itself,
 * no pidfd in this kernel); FS_ERR_PEER_FAILED: it has already exited.
 * The caller checks that both share a host. */
fs_status_t fs_pw_open(const fs_pw_id_t *self, const fs_pw_id_t *peer, int *fd_p);
void        fs_pw_close(int fd);

/* 1 if the process `peer` (of this host, as for fs_pw_open) has exited --
 * reaped, or a zombie --, 0 if it runs or cannot be told from here (a
 * process id reused since is a running process: never an exit). */
int         fs_pw_exited(const fs_pw_id_t *self, const fs_pw_id_t *peer);

/* 1 if the process `peer` (of this host, as for fs_pw_open) is there and
 * neither stopped nor a zombie (/proc/PID/stat state R, S, D...), 0
 * otherwise or if that cannot be told from here. */
int         fs_pw_runnable(const fs_pw_id_t *self, const fs_pw_id_t *peer);

#endif
