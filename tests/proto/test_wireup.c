/* Connection setup (src/proto/wireup.c) over a transport whose connects can
 * fail as UCX 1.13's TCP ones do: a refused connect (the peer is dead) and
 * an unreachable host (a link that just came back) both arrive as
 * ENDPOINT_TIMEOUT, so a link not proven yet never makes a death. */
#include "fixture.h"
#include "common/fs_time.h"

static void setup_wired(void)
{
    setup_tl_ops = &fake_wired_tl_ops;
    setup();
}

TestSuite(wireup, .init = setup_wired, .fini = teardown);

static void wire_up_0(double timeout)
{
    fs_engine_wire_up(eng[0], eps[0], NENG, timeout);
}

static void progress_0_for(double seconds)
{
    double end = fs_time_now() + seconds;

    while (fs_time_now() < end) {
        fs_engine_progress(eng[0]);
    }
}

Test(wireup, a_failed_connect_is_made_again_and_blames_nobody)
{
    uint8_t v = 7, x = 0;
    treq_t s, r;

    eng[0]->tl->connects_to_fail = 3;
    wire_up_0(2.0);
    cr_expect_eq(eng[0]->tl->reconnects, 3, "each failed connect made again");
    cr_expect_eq(eps[0][1]->wire, FS_WIRE_LINKED);
    cr_expect_eq(eps[0][2]->wire, FS_WIRE_LINKED);
    cr_expect_eq(eps[0][1]->state, FS_EP_UP, "not suspected");
    cr_expect_eq(eps[0][2]->state, FS_EP_UP, "not suspected");
    cr_expect_eq(peer_failed_calls, 0, "nobody blamed");
    cr_assert_eq(recv_msg(&r, 1, 0, 4, &x, 1), FS_INPROGRESS);
    send_msg(&s, 0, 1, 4, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(r.done && (r.u.r.super.status == FS_OK) && (x == 7), "the link carries messages");
}

/* The wait ends before a connect succeeds: the peer's fate decides (the
 * detector's verdict makes it failed); without one the break is local. */
Test(wireup, connects_that_keep_failing_wait_for_the_peers_fate)
{
    eng[0]->tl->connects_to_fail = 1000;
    params.cause_wait_ms = 30;
    wire_up_0(0.2);
    cr_expect(eng[0]->tl->reconnects >= 2, "made again within the wait");
    cr_expect_eq(eps[0][1]->state, FS_EP_SUSPECTED, "a suspicion, not a verdict");
    cr_expect_eq(peer_failed_calls, 0);
    fs_engine_peer_suspected(eng[0], eps[0][2]);   /* the detector's verdict */
    cr_expect(fs_ep_is_failed(eps[0][2]));
    cr_expect_eq(fs_peer_status(eps[0][2]), FS_ERR_PEER_FAILED, "its verdict decides");
    progress_0_for(0.1);
    cr_expect(fs_ep_is_failed(eps[0][1]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_LOCAL, "no verdict: a local break");
    cr_expect_eq(peer_failed_calls, 1, "only the one the detector named");
}

/* A peer dead in wire-up: the detector's verdict, handed in by the host's
 * poll, ends the wait for it (tf_life_wireup: a survivor that kept
 * connecting to a dead process until the wait's end held everyone in
 * MPI_Init's closing fence; another process had declared it failed). */
static int wire_polls;
static void declare_peers_on_poll(int i)
{
    if ((i == 0) && (++wire_polls == 50)) {
        fs_engine_peer_suspected(eng[0], eps[0][1]);
        fs_engine_peer_suspected(eng[0], eps[0][2]);
    }
}

Test(wireup, a_verdict_during_the_wait_ends_it)
{
    eng[0]->tl->connects_to_fail = 1000;
    on_poll_hook = declare_peers_on_poll;
    wire_up_0(2.0);
    cr_expect(wire_polls >= 50, "the wait polls the host");
    cr_expect(fs_ep_is_failed(eps[0][1]) && fs_ep_is_failed(eps[0][2]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_PEER_FAILED, "the verdict decides");
    cr_expect_eq(peer_failed_calls, 2);
}

/* Once its setup finished, a link's error is read as the table says: over
 * TCP, the peer's death. */
Test(wireup, a_proven_link_reports_death_at_once)
{
    wire_up_0(2.0);
    cr_assert_eq(eps[0][1]->wire, FS_WIRE_LINKED);
    fake_fail_ep(eps[0][1]->tl_ep, -80);
    cr_expect(fs_ep_is_failed(eps[0][1]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_PEER_FAILED);
    cr_expect_eq(peer_failed_calls, 1);
}

/* Before (or without) a finished setup, an operation's error is a failed
 * connect too: it waits for the peer's fate instead of failing the peer. */
Test(wireup, an_operation_failing_on_an_unproven_link_blames_nobody)
{
    uint8_t v = 1;
    treq_t s;

    params.cause_wait_ms = 30;
    cr_assert_eq(eps[0][1]->wire, FS_WIRE_PENDING, "no setup yet");
    eng[0]->tl->fail_next_send = FS_ERR_PEER_FAILED;
    cr_expect_eq(send_msg(&s, 0, 1, 3, &v, 1, FS_SEND_STANDARD), FS_INPROGRESS,
                 "it waits for the peer's fate");
    cr_expect(fs_ep_is_usable(eps[0][1]));
    progress_0_for(0.1);
    cr_expect(s.done);
    cr_expect_eq(s.u.s.super.status, FS_ERR_LOCAL, "no verdict: a local error");
    cr_expect_eq(peer_failed_calls, 0, "nobody blamed");
}
