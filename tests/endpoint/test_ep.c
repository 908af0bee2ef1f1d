/* Endpoint state machine: allowed transitions, and finality of FAILED/LEFT. */
#include <criterion/criterion.h>

#include "endpoint/ep.h"

static fs_ep_t ep;

static void setup(void)
{
    fs_ep_init(&ep, 42, NULL, 0);
}

TestSuite(ep, .init = setup);

Test(ep, starts_connecting)
{
    cr_expect_eq(ep.state, FS_EP_CONNECTING);
    cr_expect(fs_ep_is_usable(&ep));
    cr_expect(fs_list_is_empty(&ep.inflight));
}

Test(ep, up_suspected_failed)
{
    cr_expect(fs_ep_transition(&ep, FS_EP_UP));
    cr_expect(fs_ep_transition(&ep, FS_EP_SUSPECTED));
    cr_expect(!fs_ep_is_usable(&ep));
    cr_expect(!fs_ep_transition(&ep, FS_EP_UP), "a suspicion is final");
    cr_expect(fs_ep_transition(&ep, FS_EP_FAILED));
    cr_expect(fs_ep_is_failed(&ep));
}

Test(ep, failed_is_final)
{
    fs_ep_state_t s;

    fs_ep_transition(&ep, FS_EP_UP);
    cr_assert(fs_ep_transition(&ep, FS_EP_FAILED));
    for (s = 0; s < FS_EP_STATE_COUNT; ++s) {
        if (s != FS_EP_CLOSED) {
            cr_expect(!fs_ep_transition(&ep, s), "FAILED -> %s must be refused",
                      fs_ep_state_name(s));
        }
    }
    cr_expect_eq(ep.state, FS_EP_FAILED);
}

Test(ep, left_is_never_failed)
{
    fs_ep_transition(&ep, FS_EP_UP);
    cr_assert(fs_ep_transition(&ep, FS_EP_LEAVING));
    cr_expect(fs_ep_is_usable(&ep), "messages may still be in flight");
    cr_assert(fs_ep_transition(&ep, FS_EP_LEFT));
    cr_expect(!fs_ep_transition(&ep, FS_EP_SUSPECTED));
    /* only a detector verdict (the process died inside MPI_Finalize, before
     * telling the detector) fails a departed peer; the engine's
     * fs_peer_fail refuses it (test_leave.c) */
    cr_expect(fs_ep_transition(&ep, FS_EP_FAILED));
    cr_expect(fs_ep_transition(&ep, FS_EP_CLOSED));
}

Test(ep, leaving_peer_can_still_fail)
{
    fs_ep_transition(&ep, FS_EP_UP);
    fs_ep_transition(&ep, FS_EP_LEAVING);
    cr_expect(fs_ep_transition(&ep, FS_EP_FAILED),
              "dying before its last messages arrive is a failure");
}

Test(ep, closed_accepts_nothing)
{
    fs_ep_state_t s;

    cr_assert(fs_ep_transition(&ep, FS_EP_CLOSED));
    for (s = 0; s < FS_EP_STATE_COUNT; ++s) {
        cr_expect(!fs_ep_transition(&ep, s));
    }
    cr_expect_str_eq(fs_ep_state_name(FS_EP_CLOSED), "closed");
    cr_expect_str_eq(fs_ep_state_name((fs_ep_state_t)99), "invalid");
}
