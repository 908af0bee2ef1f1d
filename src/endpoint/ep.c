#include "endpoint/ep.h"

#include <string.h>

static const char *const fs_ep_state_names[FS_EP_STATE_COUNT] = {
    [FS_EP_CONNECTING] = "connecting",
    [FS_EP_UP]         = "up",
    [FS_EP_SUSPECTED]  = "suspected",
    [FS_EP_LEAVING]    = "leaving",
    [FS_EP_LEFT]       = "left",
    [FS_EP_FAILED]     = "failed",
    [FS_EP_CLOSED]     = "closed",
};

/* allowed[from] is a bitmask of the states reachable from it */
#define FS_EP_BIT(_s) FS_EP_SET(_s)
static const unsigned fs_ep_allowed[FS_EP_STATE_COUNT] = {
    [FS_EP_CONNECTING] = FS_EP_BIT(FS_EP_UP) | FS_EP_BIT(FS_EP_FAILED) |
                         FS_EP_BIT(FS_EP_SUSPECTED) | FS_EP_BIT(FS_EP_CLOSED),
    [FS_EP_UP]         = FS_EP_BIT(FS_EP_SUSPECTED) | FS_EP_BIT(FS_EP_FAILED) |
                         FS_EP_BIT(FS_EP_LEAVING) | FS_EP_BIT(FS_EP_LEFT) |
                         FS_EP_BIT(FS_EP_CLOSED),
    [FS_EP_SUSPECTED]  = FS_EP_BIT(FS_EP_FAILED) | FS_EP_BIT(FS_EP_CLOSED),
    [FS_EP_LEAVING]    = FS_EP_BIT(FS_EP_LEFT) | FS_EP_BIT(FS_EP_FAILED) |
                         FS_EP_BIT(FS_EP_CLOSED),
    /* a departed peer found dead by the detector before its departure
     * was complete (src/proto/engine.c fs_engine_peer_suspected) */
    [FS_EP_LEFT]       = FS_EP_BIT(FS_EP_FAILED) | FS_EP_BIT(FS_EP_CLOSED),
    [FS_EP_FAILED]     = FS_EP_BIT(FS_EP_CLOSED),
    [FS_EP_CLOSED]     = 0,
};

const char *fs_ep_state_name(fs_ep_state_t state)
{
    return (state < FS_EP_STATE_COUNT) ? fs_ep_state_names[state] : "invalid";
}

int fs_ep_transition(fs_ep_t *ep, fs_ep_state_t next)
{
    if ((next >= FS_EP_STATE_COUNT) ||
        !(fs_ep_allowed[ep->state] & FS_EP_BIT(next))) {
        return 0;
    }
    ep->state = next;
    return 1;
}

void fs_ep_init(fs_ep_t *ep, uint64_t id, void *host, int is_self)
{
    memset(ep, 0, sizeof(*ep));
    ep->state   = FS_EP_CONNECTING;
    ep->is_self = (uint8_t)is_self;
    ep->id      = id;
    ep->host    = host;
    ep->imm_max = SIZE_MAX;
    fs_list_init(&ep->elem);
    fs_list_init(&ep->inflight);
}
