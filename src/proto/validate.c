/* Validation (MPI-FT 17.7.4), the engine's side: the failures a validation
 * decided are recognized on the communicator, which is collectively active
 * again; its collectives then run, in the host, over a communicator of the
 * survivors (the shadow), which this side keeps in step with comm's revoke.
 * The decision itself is an agreement (agreement.c). */
#include "proto/engine_int.h"
#include "common/fs_bitmap.h"

#include <stdlib.h>

/* Every rank ep holds on comm is recognized (an ep may hold none). */
int fs_comm_failure_recognized(const fs_comm_t *comm, const fs_ep_t *ep)
{
    uint32_t r;
    int held = 0;

    if (comm->recognized == NULL) {
        return 0;
    }
    for (r = 0; r < comm->nmembers; ++r) {
        if (fs_comm_member_ep(comm, r) == ep) {
            if (!fs_bm_test(comm->recognized, r)) {
                return 0;
            }
            held = 1;
        }
    }
    return held;
}

fs_status_t fs_comm_recognize(fs_comm_t *comm, const uint64_t *failed)
{
    uint64_t *bits = malloc(fs_bm_words(comm->nmembers) * sizeof(*bits));
    uint32_t r;

    if (bits == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    fs_bm_copy(bits, failed, comm->nmembers);
    free(comm->recognized);
    comm->recognized    = bits;
    comm->coll_inactive = 0;
    for (r = 0; r < comm->nmembers; ++r) {
        fs_ep_t *ep = fs_comm_member_ep(comm, r);
        if (!fs_bm_test(bits, r)) {
            continue;
        }
        ep->recognized = 1;
        if (!fs_ep_is_failed(ep) && !ep->is_self) {
            /* decided failed by the members that knew: failed here too, so
             * that every member builds the same communicators from here */
            fs_peer_fail(comm->engine, ep, NULL, NULL);
        }
    }
    for (r = 0; r < comm->nmembers; ++r) {
        if (fs_ep_is_failed(fs_comm_member_ep(comm, r)) && !fs_bm_test(bits, r)) {
            FS_DEBUG("cid %u: member %u failed after the validation decided", comm->cid, r);
            fs_comm_fail_collectives(comm);
            break;
        }
    }
    return FS_OK;
}

void fs_comm_set_shadow(fs_comm_t *comm, fs_comm_t *shadow, void *host_ext)
{
    comm->shadow      = shadow;
    comm->shadow_host = host_ext;
    if ((shadow != NULL) && comm->revoked) {
        fs_revoke_local(shadow);
    }
}

void *fs_comm_shadow_host(const fs_comm_t *comm)
{
    return comm->shadow_host;
}

const uint64_t *fs_comm_recognized(const fs_comm_t *comm)
{
    return comm->recognized;
}

/* A new communicator holds the failures recognized here as recognized
 * (17.8.2): every member that created it validated the communicator it
 * came from with the same decision (else the creation failed). */
fs_status_t fs_comm_recognize_known(fs_comm_t *comm)
{
    uint64_t *bits = calloc(fs_bm_words(comm->nmembers), sizeof(*bits));
    uint32_t r;

    if (bits == NULL) {
        return FS_ERR_NO_MEMORY;
    }
    for (r = 0; r < comm->nmembers; ++r) {
        const fs_ep_t *ep = fs_comm_member_ep(comm, r);
        if (!fs_ep_is_failed(ep)) {
            continue;
        }
        if (!ep->recognized) {
            free(bits);
            return FS_OK;               /* an unrecognized failure: inactive */
        }
        fs_bm_set(bits, r);
    }
    comm->recognized    = bits;
    comm->coll_inactive = 0;
    return FS_OK;
}
