/* The datagram interface: the failure detector's own channel, apart from
 * the MPI transports (src/transport/tl.h).  Best effort and connectionless:
 * a send completes (or is dropped, as the network may drop it) inside the
 * call, and nothing is set up or torn down when processes die.  One thread
 * drives an instance; it may sleep on the instance's file descriptor.
 * Implementation: udp.c. */
#ifndef FS_DETECTOR_DG_H
#define FS_DETECTOR_DG_H

#include "common/fs_status.h"

#include <stddef.h>
#include <stdint.h>

typedef struct fs_dg      fs_dg_t;       /* one instance (one socket) */
typedef struct fs_dg_peer fs_dg_peer_t;  /* where datagrams to one process go */

typedef struct fs_dg_config {
    size_t      hdr_len;      /* every datagram begins with this many bytes */
    const char *if_include;   /* interfaces to publish (pml_failstop_hb_if) */
} fs_dg_config_t;

/* A datagram arrived: hdr_len bytes of header (the configured length), then
 * len bytes of data; both valid only during the call.  Called inside
 * progress. */
typedef void (*fs_dg_recv_cb_t)(void *arg, const void *hdr, size_t hdr_len,
                                const void *data, size_t len);

typedef struct fs_dg_ops {
    const char *name;

    /* FS_ERR_INVALID if cfg->if_include names nothing usable. */
    fs_status_t (*init)(const fs_dg_config_t *cfg, fs_dg_recv_cb_t recv, void *arg,
                        fs_dg_t **dg_p);
    void        (*fini)(fs_dg_t *dg);
    /* Opaque address for the out-of-band exchange; owned by dg. */
    void        (*address)(fs_dg_t *dg, const void **addr_p, size_t *len_p);
    /* Where to send to the process with address addr; FS_ERR_INVALID for an
     * address this implementation did not make. */
    fs_status_t (*peer_open)(fs_dg_t *dg, const void *addr, size_t addr_len,
                             fs_dg_peer_t **peer_p);
    void        (*peer_close)(fs_dg_t *dg, fs_dg_peer_t *peer);
    /* Header and data as one datagram; never blocks.  FS_ERR_INVALID if it
     * is too big for one datagram. */
    fs_status_t (*send)(fs_dg_t *dg, fs_dg_peer_t *peer, const void *hdr, size_t hdr_len,
                        const void *data, size_t len);
    /* Delivers what arrived; returns how many datagrams. */
    unsigned    (*progress)(fs_dg_t *dg);
    /* Readable when there is something to progress (level-triggered). */
    int         (*wait_fd)(fs_dg_t *dg);
    /* Wakes a thread sleeping on wait_fd; any thread. */
    void        (*signal)(fs_dg_t *dg);
    /* An identity of the host (network stack) of the process with address
     * addr: processes on one host share it, others are reached through a
     * network that can flap or split.  0 if unknown. */
    uint64_t    (*addr_host)(fs_dg_t *dg, const void *addr, size_t addr_len);
} fs_dg_ops_t;

extern const fs_dg_ops_t fs_dg_udp_ops;

#endif
