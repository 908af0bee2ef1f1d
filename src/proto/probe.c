/* Probes: look at (and for mprobe, take) a matching unexpected message. */
#include "proto/engine_int.h"

fs_status_t fs_probe(fs_comm_t *comm, int32_t src, int32_t tag, int remove,
                     int *found_p, fs_probe_info_t *info_p, fs_msg_t **msg_p)
{
    fs_comm_peer_t *peer = NULL;
    fs_mq_msg_t *found;
    fs_status_t status;
    fs_msg_t *msg;

    *found_p = 0;
    if (src != FS_ANY_SOURCE) {
        if ((uint32_t)src >= comm->size) {
            return FS_ERR_INVALID;
        }
        peer = &comm->peers[src];
    }
    status = fs_recv_precheck(comm, peer, tag);
    if (status != FS_OK) {
        fs_engine_progress_on_error(comm->engine);
        return status;      /* wildcard probes are disabled too (17.6) */
    }
    found = fs_mq_find_unexpected(&comm->mq, (peer != NULL) ? &peer->bin : NULL, tag);
    if (found == NULL) {
        /* nothing buffered from a peer that is gone: it never will be */
        if ((peer != NULL) && fs_unlikely(peer->broken == FS_CHAN_DEAD)) {
            return FS_ERR_NO_MEMORY;    /* its messages are lost (fs_chan_lose) */
        }
        return ((peer != NULL) && !fs_ep_is_usable(peer->ep)) ?
               fs_peer_status(peer->ep) : FS_OK;
    }
    msg = fs_container_of(found, fs_msg_t, mq);
    info_p->src = msg->mq.src;
    info_p->tag = msg->mq.tag;
    info_p->len = msg->len;
    *found_p    = 1;
    if (remove) {
        fs_mq_remove_unexpected(&comm->mq, found);
        *msg_p = msg;
    }
    return FS_OK;
}
