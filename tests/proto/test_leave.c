/* Departure (src/proto/leave.c): MPI_Finalize completes what is pending,
 * waits only on peers that have not said BYE, and never lets two departing
 * processes wait for each other. */
#include "fixture.h"

TestSuite(leave, .init = setup, .fini = teardown, .timeout = 20);

/* Progresses every engine until eng[i]'s departure settles (at most n
 * rounds); returns whether it did. */
static int settle(int i, int n)
{
    while (n-- > 0) {
        if (fs_engine_depart_test(eng[i])) {
            return 1;
        }
        progress_all();
    }
    return fs_engine_depart_test(eng[i]);
}

Test(leave, a_posted_receive_is_completed_before_departure_ends)
{
    uint8_t v = 42, got = 0;
    treq_t r, s;

    recv_msg(&r, 0, 1, 3, &got, 1);
    fs_engine_depart_start(eng[0]);
    cr_expect_not(settle(0, 5), "engine 1 can still send the message");
    cr_expect_eq(send_msg(&s, 1, 0, 3, &v, 1, FS_SEND_STANDARD), FS_OK,
                 "a process that left still receiving takes late sends");
    cr_expect(settle(0, 5));
    cr_expect(r.done);
    cr_expect_eq(r.u.r.super.status, FS_OK);
    cr_expect_eq(got, 42);
}

Test(leave, a_receive_from_a_peer_that_left_ends_and_departure_settles)
{
    uint8_t got;
    treq_t r;

    recv_msg(&r, 0, 1, 3, &got, 1);
    fs_engine_depart_start(eng[0]);
    fs_engine_depart_start(eng[1]);        /* nothing pending: BYE, not receiving */
    cr_expect(settle(1, 5));
    cr_expect(settle(0, 5), "engine 1 said BYE with all its messages out");
    cr_expect(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_LEFT, "leaving is not failing");
    cr_expect_eq(peer_failed_calls, 0);
}

Test(leave, sends_to_a_departed_peer_fail_once_it_is_done_receiving)
{
    uint8_t v = 1, got;
    treq_t r, s;

    recv_msg(&r, 1, 0, 4, &got, 1);
    fs_engine_depart_start(eng[1]);
    progress_all();
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT);
    cr_expect(eps[0][1]->peer_receiving);
    cr_expect_eq(send_msg(&s, 0, 1, 4, &v, 1, FS_SEND_STANDARD), FS_OK);
    cr_expect(settle(1, 5));               /* the receive completed: DONE */
    progress_all();
    cr_expect_not(eps[0][1]->peer_receiving);
    cr_expect_eq(send_msg(&s, 0, 1, 4, &v, 1, FS_SEND_STANDARD), FS_ERR_PEER_LEFT,
                 "nothing can receive it any more");
}

Test(leave, a_pending_rendezvous_send_outlives_its_senders_departure)
{
    static uint8_t big[3 * FAKE_RNDV_THRESH], got[3 * FAKE_RNDV_THRESH];
    treq_t s, r;

    fill(big, sizeof(big), 7);
    cr_expect_eq(send_msg(&s, 0, 1, 5, big, sizeof(big), FS_SEND_STANDARD), FS_INPROGRESS);
    fs_engine_depart_start(eng[0]);
    cr_expect_not(settle(0, 5), "engine 1 may still receive it");
    recv_msg(&r, 1, 0, 5, got, sizeof(got));
    cr_expect(settle(0, 5));
    cr_expect(s.done);
    cr_expect_eq(s.u.s.super.status, FS_OK);
    cr_expect(check(got, sizeof(got), 7));
}

Test(leave, two_departing_peers_with_unmatched_rendezvous_do_not_wait_for_each_other)
{
    static uint8_t a[3 * FAKE_RNDV_THRESH], b[3 * FAKE_RNDV_THRESH];
    static treq_t s0, s1;   /* teardown drops the messages: completes them */

    cr_expect_eq(send_msg(&s0, 0, 1, 6, a, sizeof(a), FS_SEND_STANDARD), FS_INPROGRESS);
    cr_expect_eq(send_msg(&s1, 1, 0, 6, b, sizeof(b), FS_SEND_STANDARD), FS_INPROGRESS);
    fs_engine_depart_start(eng[0]);
    fs_engine_depart_start(eng[1]);
    cr_expect(settle(0, 10));
    cr_expect(settle(1, 10));
}

Test(leave, crossed_receives_settle_once_both_said_bye)
{
    uint8_t x, y;
    treq_t r0, r1;

    recv_msg(&r0, 0, 1, 7, &x, 1);         /* nobody sends these */
    recv_msg(&r1, 1, 0, 7, &y, 1);
    fs_engine_depart_start(eng[0]);
    fs_engine_depart_start(eng[1]);
    cr_expect(settle(0, 10));
    cr_expect(settle(1, 10));
    cr_expect_eq(r0.u.r.super.status, FS_ERR_PEER_LEFT);
    cr_expect_eq(r1.u.r.super.status, FS_ERR_PEER_LEFT);
}

Test(leave, a_wildcard_receive_waits_until_every_other_member_left)
{
    uint8_t x;
    treq_t r;

    recv_msg(&r, 0, FS_ANY_SOURCE, 8, &x, 1);
    fs_engine_depart_start(eng[0]);
    fs_engine_depart_start(eng[1]);
    cr_expect_not(settle(0, 5), "engine 2 may still send to it");
    fs_engine_depart_start(eng[2]);
    cr_expect(settle(0, 5));
    cr_expect(settle(1, 5));
    cr_expect(settle(2, 5));
}

Test(leave, a_failed_peer_ends_the_wait)
{
    uint8_t x;
    treq_t r;

    recv_msg(&r, 0, 1, 9, &x, 1);
    fs_engine_depart_start(eng[0]);
    cr_expect_not(settle(0, 3));
    fake_fail_ep(eps[0][1]->tl_ep, -25);
    cr_expect(settle(0, 3));
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
}

/* Issue 10, lifecycle (tf_life_bye): a peer that said BYE and then died
 * inside MPI_Finalize, before telling the detector.  Its links breaking
 * are no failure (leaving is not failing), but the detector's verdict is:
 * collectives waiting on the communicator end instead of waiting for
 * messages a survivor upstream will never forward. */
Test(leave, a_departed_peer_the_detector_finds_dead_has_failed)
{
    uint8_t got;
    treq_t r, c;

    fs_engine_depart_start(eng[1]);        /* BYE, nothing pending */
    progress_all();
    cr_assert_eq(eps[0][1]->state, FS_EP_LEFT);
    recv_msg(&c, 0, 2, -7, &got, 1);       /* a collective's receive from 2 */
    fake_fail_ep(eps[0][1]->tl_ep, -25);   /* its link breaks as it goes */
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT, "a link breaking is no verdict");
    cr_expect_not(c.done);
    fs_engine_peer_suspected(eng[0], eps[0][1]);
    cr_expect_eq(eps[0][1]->state, FS_EP_FAILED);
    cr_expect_eq(peer_failed_calls, 1);
    cr_assert(c.done, "the collective waited on a communicator with a failed member");
    cr_expect_eq(c.u.r.super.status, FS_ERR_COLL_INACTIVE);
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &got, 1), FS_ERR_PEER_FAILED);
}

/* ---- the host's news in the waits MPI_Finalize runs inside the engine ---- */

static int verdict_given, polls_after_verdict;

/* engine 0's detector finds engine 1 dead as soon as engine 0 polls */
static void verdict_at_once(int i)
{
    if (i != 0) {
        return;
    }
    if (verdict_given) {
        ++polls_after_verdict;
        return;
    }
    verdict_given = 1;
    fs_engine_peer_suspected(eng[0], eps[0][1]);
}

Test(leave, a_failure_found_during_departure_ends_its_wait)
{
    uint8_t x;
    treq_t r;

    recv_msg(&r, 0, 1, 9, &x, 1);          /* freed by the program, say */
    on_poll_hook = verdict_at_once;
    fs_engine_depart(eng[0]);               /* loops until it settles */
    cr_expect(verdict_given);
    cr_expect(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
    cr_expect_eq(peer_failed_at[0], 1);
}

/* engine 0's detector finds engine 1 dead once engine 0's close of it is
 * draining (the CI's partition: nothing comes back from engine 1) */
static void verdict_while_closing(int i)
{
    if ((i == 0) && (eps[0][1]->state == FS_EP_CLOSED)) {
        verdict_at_once(0);
    }
}

/* engine 0 leaves while nothing comes back from engine 1; hook tells it
 * that engine 1 failed once its close drains */
static void leave_past_a_dead_peer(void (*hook)(int))
{
    params.finalize_timeout_ms = 2000;
    eng[1]->tl->unreachable = 1;
    on_poll_hook = hook;
    fs_engine_leave(eng[0], eps[0], NENG);
    cr_assert(verdict_given);
    cr_expect_eq(peer_failed_at[0], 1, "everyone learns: recorded though it is closed");
}

Test(leave, a_failure_found_while_the_endpoints_close_is_recorded_and_ends_the_wait)
{
    leave_past_a_dead_peer(verdict_while_closing);
    cr_expect(eps[0][1]->close_op.busy, "the dead peer never answered its close");
    cr_expect_leq(polls_after_verdict, 1,
                  "the close drain waited %d polls more for a dead peer",
                  polls_after_verdict);
    fs_engine_peer_suspected(eng[0], eps[0][1]);
    cr_expect_eq(peer_failed_at[0], 1, "recorded once");
}

/* without a detector, another survivor's notice tells it: engine 2's link
 * to engine 1 breaks before it has read engine 0's BYE */
static void notice_while_closing(int i)
{
    if ((i == 0) && (eps[0][1]->state == FS_EP_CLOSED) && !verdict_given) {
        verdict_given = 1;
        fake_fail_ep(eps[2][1]->tl_ep, -25);    /* notices to 0 */
    }
}

Test(leave, a_failure_notice_during_the_close_drain_is_recorded)
{
    leave_past_a_dead_peer(notice_while_closing);
    cr_expect_eq(peer_failed_reporter, eps[0][2], "engine 2 told it");
}

Test(leave, a_peer_that_left_is_not_recorded_failed_after_the_close)
{
    fs_engine_depart_start(eng[1]);         /* BYE, nothing pending */
    progress_all();
    cr_assert_eq(eps[0][1]->state, FS_EP_LEFT);
    fs_engine_leave(eng[0], eps[0], NENG);
    fs_engine_peer_suspected(eng[0], eps[0][1]);
    cr_expect_eq(peer_failed_at[0], 0, "leaving is not failing");
}
