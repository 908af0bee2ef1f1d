/* Fail-stop semantics in the engine (MPI-FT draft 17.3-17.8), without MPI:
 * each test fails a peer through the fake transport and checks one rule. */
#include "fixture.h"
#include "common/fs_time.h"

#include <signal.h>
#include <time.h>

TestSuite(failure, .init = setup, .fini = teardown, .timeout = 20);

#define UCS_ERR_CONNECTION_RESET (-25)
#define UCS_ERR_SHMEM_SEGMENT    (-17)

/* Engine `at` learns from its transport that `who` died. */
static void kill_peer(int at, int who)
{
    fake_fail_ep(eps[at][who]->tl_ep, UCS_ERR_CONNECTION_RESET);
}

Test(failure, wildcards_disabled_until_reenabled)
{
    uint8_t v = 5, x = 0;
    treq_t w, s, w2;
    int32_t ranks[NENG];

    recv_msg(&w, 0, FS_ANY_SOURCE, 3, &x, 1);
    kill_peer(0, 1);
    cr_assert(w.done, "the pending wildcard receive ended");
    cr_expect_eq(w.u.r.super.status, FS_ERR_ANYSRC_DISABLED);
    send_msg(&s, 2, 0, 3, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect_eq(recv_msg(&w2, 0, FS_ANY_SOURCE, 3, &x, 1), FS_ERR_ANYSRC_DISABLED,
                 "new wildcard receives fail at once");
    cr_expect_eq(recv_msg(&w2, 0, 2, 3, &x, 1), FS_OK, "specific ones still work");
    cr_expect_eq(x, 5);
    cr_expect(!fs_comm_any_source_enabled(comm[0]));
    fs_comm_reenable_any_source(comm[0]);
    cr_expect_eq(fs_comm_failed_ranks(comm[0], FS_COMM_REMOTE, 1, ranks, NENG), 1);
    cr_expect_eq(ranks[0], 1);
    v = 6;
    send_msg(&s, 2, 0, 3, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect_eq(recv_msg(&w2, 0, FS_ANY_SOURCE, 3, &x, 1), FS_OK, "re-enabled");
    cr_expect_eq(x, 6);
    cr_expect_eq(w2.u.r.src_out, 2);
}

Test(failure, a_new_failure_disables_wildcards_again)
{
    uint8_t x;
    treq_t w;

    kill_peer(0, 1);
    fs_comm_reenable_any_source(comm[0]);
    cr_expect_eq(fs_comm_failed_ranks(comm[0], FS_COMM_REMOTE, 1, NULL, 0), 1);
    kill_peer(0, 2);
    cr_expect_eq(recv_msg(&w, 0, FS_ANY_SOURCE, 0, &x, 1), FS_ERR_ANYSRC_DISABLED);
    cr_expect_eq(fs_comm_failed_ranks(comm[0], FS_COMM_REMOTE, 0, NULL, 0), 2);
    cr_expect_eq(fs_comm_failed_ranks(comm[0], FS_COMM_REMOTE, 1, NULL, 0), 1,
                 "only the first failure was acknowledged");
}

Test(failure, communicator_without_the_failed_process_is_untouched)
{
    fs_ep_t *pair0[2] = {eps[0][0], eps[0][2]};
    fs_ep_t *pair2[2] = {eps[2][0], eps[2][2]};
    fs_comm_t *c0, *c2;
    uint8_t v = 7, x = 0;
    treq_t w, s;

    cr_assert_eq(fs_comm_create(eng[0], 20, 0, 2, pair0, 0, NULL, NULL, &c0), FS_OK);
    cr_assert_eq(fs_comm_create(eng[2], 20, 1, 2, pair2, 0, NULL, NULL, &c2), FS_OK);
    memset(&w, 0, sizeof(w));
    fs_recv_prepare(&w.u.r, c0, FS_ANY_SOURCE, -16);
    fs_buf_set_contig(&w.u.r.buf, &x, 1);
    cr_assert_eq(fs_recv_start(&w.u.r), FS_INPROGRESS);
    kill_peer(0, 1);
    cr_expect(!w.done, "a collective receive on a communicator without rank 1 waits on");
    cr_expect(fs_comm_any_source_enabled(c0));
    cr_expect(fs_comm_collectives_enabled(c0));
    cr_expect(!fs_comm_collectives_enabled(comm[0]));
    memset(&s, 0, sizeof(s));
    fs_send_prepare(&s.u.s, c2, 0, -16, FS_SEND_STANDARD);
    fs_buf_set_contig(&s.u.s.buf, &v, 1);
    cr_expect_eq(fs_send_start(&s.u.s), FS_OK);
    progress_all();
    cr_expect(w.done);
    cr_expect_eq(w.u.r.super.status, FS_OK);
    cr_expect_eq(x, 7);
    fs_comm_destroy(c0);
    fs_comm_destroy(c2);
}

Test(failure, collective_traffic_ends_on_an_inactive_communicator)
{
    static uint8_t big[8000];
    uint8_t v = 1, x = 0;
    treq_t coll_recv, coll_send, p2p, r;

    recv_msg(&coll_recv, 0, 2, -16, &x, 1);              /* from a live peer */
    cr_assert_eq(send_msg(&coll_send, 0, 2, -17, big, sizeof(big), FS_SEND_STANDARD),
                 FS_INPROGRESS);
    kill_peer(0, 1);
    cr_expect(coll_recv.done && coll_send.done);
    cr_expect_eq(coll_recv.u.r.super.status, FS_ERR_COLL_INACTIVE);
    cr_expect_eq(coll_send.u.s.super.status, FS_ERR_COLL_INACTIVE);
    cr_expect_eq(send_msg(&r, 0, 2, -18, &v, 1, FS_SEND_STANDARD), FS_ERR_COLL_INACTIVE);
    cr_expect_eq(recv_msg(&r, 0, 2, -18, &x, 1), FS_ERR_COLL_INACTIVE);
    cr_expect(!fs_comm_collectives_enabled(comm[0]));
    /* point-to-point between survivors goes on */
    cr_expect_eq(send_msg(&p2p, 0, 2, 4, &v, 1, FS_SEND_STANDARD), FS_OK);
    progress_all();
    cr_expect_eq(recv_msg(&r, 2, 0, 4, &x, 1), FS_OK);
    progress_all();     /* engine 2 learns too (notice) and drops the RTS */
    cr_expect(!fs_comm_collectives_enabled(comm[2]));
}

Test(failure, buffered_messages_and_the_receive_ordering_rule)
{
    uint8_t u1 = 11, u2 = 12, x = 0;
    treq_t s1, s2, r;

    send_msg(&s1, 1, 0, 30, &u1, 1, FS_SEND_STANDARD);
    send_msg(&s2, 1, 0, 30, &u2, 1, FS_SEND_STANDARD);
    progress_all();
    kill_peer(0, 1);
    cr_expect_eq(recv_msg(&r, 0, 1, 40, &x, 1), FS_ERR_PEER_FAILED,
                 "nothing buffered with tag 40");
    cr_expect_eq(recv_msg(&r, 0, 1, 30, &x, 1), FS_OK,
                 "(d) another specific tag still gets its buffered message");
    cr_expect_eq(x, 11);
    cr_expect_eq(recv_msg(&r, 0, 1, FS_ANY_TAG, &x, 1), FS_ERR_PEER_FAILED,
                 "(c) MPI_ANY_TAG could match what the tag-40 receive could");
    cr_expect_eq(recv_msg(&r, 0, 1, 30, &x, 1), FS_ERR_PEER_FAILED,
                 "(c) after a failed wildcard-tag receive every tag fails");
    fs_comm_reenable_any_source(comm[0]);
    cr_expect_eq(recv_msg(&r, 0, FS_ANY_SOURCE, 30, &x, 1), FS_INPROGRESS,
                 "the blocked message is gone, not left for a wildcard receive");
    cr_expect_eq(fs_recv_cancel(&r.u.r), 1);
}

Test(failure, messages_arriving_after_the_failure_are_discarded)
{
    uint8_t v = 9, x = 0;
    treq_t s, r;

    kill_peer(0, 1);
    /* engine 1 still sends: 0 receives it after it marked 1 failed (b) */
    cr_expect_eq(send_msg(&s, 1, 0, 3, &v, 1, FS_SEND_STANDARD), FS_OK);
    progress_all();
    cr_expect_eq(fs_engine_stats(eng[0])->discarded_after_failure, 1);
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_ERR_PEER_FAILED,
                 "a discarded message is never delivered");
    cr_expect_eq(x, 0);
}

/* The detector's verdict comes from outside the transport: what the peer
 * sent before it died and already sits in this process's receive queues
 * (UCX's short-lane FIFO) is delivered first (a), not discarded as late (b). */
Test(failure, the_detectors_verdict_delivers_what_already_arrived_first)
{
    uint8_t v = 7, x = 0;
    treq_t s, r;

    cr_expect_eq(send_msg(&s, 1, 0, 3, &v, 1, FS_SEND_STANDARD), FS_OK);
    cr_assert_eq(eps[0][1]->tl_ep->self_tl->ninbox, 1, "in 0's queue, not delivered");
    fs_engine_peer_suspected(eng[0], eps[0][1]);
    cr_expect_eq(eps[0][1]->state, FS_EP_FAILED);
    cr_expect_eq(fs_engine_stats(eng[0])->discarded_after_failure, 0);
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_OK, "sent before the death: delivered");
    cr_expect_eq(x, 7);
}

/* A rendezvous send of engine 1 to `to` whose transport op ends with a
 * flush (cause unknown) while engine 1 still believes `to` alive. */
static void flush_rndv_send_to(treq_t *s, int to, uint8_t *big, size_t len)
{
    fs_tl_t *remote;

    cr_assert_eq(send_msg(s, 1, to, 8, big, len, FS_SEND_STANDARD), FS_INPROGRESS);
    remote = eps[1][to]->tl_ep->remote;
    fake_rndv_complete(remote->inbox[remote->ninbox - 1], FS_ERR_CANCELED);
}

static void flush_rndv_send(treq_t *s, uint8_t *big, size_t len)
{
    flush_rndv_send_to(s, 0, big, len);
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

Test(failure, an_error_of_unknown_cause_follows_the_peers_fate)
{
    static uint8_t big[3 * FAKE_RNDV_THRESH];
    treq_t s;

    flush_rndv_send(&s, big, sizeof(big));
    progress_all();
    cr_expect(!s.done, "waits for the cause while the peer looks alive");
    kill_peer(1, 0);
    cr_expect(s.done);
    cr_expect_eq(s.u.s.super.status, FS_ERR_PEER_FAILED, "the peer died: its failure");
}

Test(failure, an_error_without_a_cause_becomes_local)
{
    static uint8_t big[3 * FAKE_RNDV_THRESH];
    struct timespec ms = {0, 1000000};
    treq_t s;
    int i;

    params.cause_wait_ms = 20;
    flush_rndv_send(&s, big, sizeof(big));
    for (i = 0; (i < 1000) && !s.done; ++i) {
        nanosleep(&ms, NULL);
        fs_engine_progress(eng[1]);
    }
    cr_expect(s.done, "not left waiting");
    cr_expect_eq(s.u.s.super.status, FS_ERR_LOCAL, "no peer failure: a local error");
    cr_expect(fs_ep_is_usable(eps[1][0]), "nobody blamed");
}

Test(failure, each_parked_operation_waits_its_own_time)
{
    static uint8_t a[3 * FAKE_RNDV_THRESH], b[3 * FAKE_RNDV_THRESH];
    static treq_t s0, s2;
    double t0, t2;

    params.cause_wait_ms = 1000;
    t0 = now_s();
    flush_rndv_send_to(&s0, 0, a, sizeof(a));
    while (now_s() - t0 < 0.7) {
        fs_engine_progress(eng[1]);
    }
    flush_rndv_send_to(&s2, 2, b, sizeof(b));
    t2 = now_s();
    while (!s0.done && (now_s() - t0 < 5)) {
        fs_engine_progress(eng[1]);
    }
    cr_assert(s0.done);
    cr_expect_eq(s0.u.s.super.status, FS_ERR_LOCAL, "its own wait ran out");
    cr_assert_lt(now_s() - t2, 0.9, "too slow a machine to tell the two waits apart");
    cr_expect_not(s2.done, "parked 0.7 s later, it waits its own 1000 ms");
    kill_peer(1, 2);
    cr_expect(s2.done);
    cr_expect_eq(s2.u.s.super.status, FS_ERR_PEER_FAILED, "so its peer's death explains it");
}

Test(failure, a_link_broken_without_cause_waits_for_the_peers_fate)
{
    uint8_t v = 1, x;
    treq_t s, r;

    fake_fail_ep(eps[0][1]->tl_ep, UCS_ERR_SHMEM_SEGMENT);
    cr_expect_eq(eps[0][1]->state, FS_EP_SUSPECTED, "cause unknown: not failed yet");
    cr_expect_eq(send_msg(&s, 0, 1, 4, &v, 1, FS_SEND_STANDARD), FS_INPROGRESS,
                 "a send to it waits for its fate");
    cr_expect_eq(recv_msg(&r, 0, 1, 4, &x, 1), FS_INPROGRESS, "a receive is posted");
    fs_engine_peer_suspected(eng[0], eps[0][1]);   /* the detector's verdict */
    cr_expect(s.done && r.done);
    cr_expect_eq(s.u.s.super.status, FS_ERR_PEER_FAILED);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
}

Test(failure, a_link_broken_without_cause_and_no_verdict_is_local)
{
    struct timespec ms = {0, 1000000};
    uint8_t v = 1;
    treq_t s;
    int i;

    params.cause_wait_ms = 20;
    fake_fail_ep(eps[0][1]->tl_ep, UCS_ERR_SHMEM_SEGMENT);
    cr_expect_eq(send_msg(&s, 0, 1, 4, &v, 1, FS_SEND_STANDARD), FS_INPROGRESS);
    for (i = 0; (i < 1000) && !s.done; ++i) {
        nanosleep(&ms, NULL);
        fs_engine_progress(eng[0]);
    }
    cr_expect(s.done, "not left waiting");
    cr_expect_eq(s.u.s.super.status, FS_ERR_LOCAL, "nobody said the peer died");
    cr_expect_eq(peer_failed_calls, 0, "nobody blamed");
}

Test(failure, poison_is_per_communicator_and_per_tag)
{
    fs_comm_t *other[NENG];
    uint8_t a = 1, b = 2, x = 0;
    treq_t s, r;
    int i;

    for (i = 0; i < NENG; ++i) {
        make_comm(i, 21, &other[i]);
    }
    send_msg(&s, 1, 0, 7, &a, 1, FS_SEND_STANDARD);
    fs_send_prepare(&s.u.s, other[1], 0, 7, FS_SEND_STANDARD);
    fs_buf_set_contig(&s.u.s.buf, &b, 1);
    fs_send_start(&s.u.s);
    progress_all();
    kill_peer(0, 1);
    cr_expect_eq(recv_msg(&r, 0, 1, FS_ANY_TAG, &x, 1), FS_OK, "buffered on CID");
    cr_expect_eq(recv_msg(&r, 0, 1, FS_ANY_TAG, &x, 1), FS_ERR_PEER_FAILED);
    memset(&r, 0, sizeof(r));
    fs_recv_prepare(&r.u.r, other[0], 1, 7);
    fs_buf_set_contig(&r.u.r.buf, &x, 1);
    cr_expect_eq(fs_recv_start(&r.u.r), FS_OK, "the other communicator is not poisoned");
    cr_expect_eq(x, 2);
    for (i = 0; i < NENG; ++i) {
        fs_comm_destroy(other[i]);
    }
}

Test(failure, every_survivor_learns_from_a_notice)
{
    uint8_t x;
    treq_t r;

    recv_msg(&r, 2, 1, 5, &x, 1);          /* engine 2 never hears from 1 */
    kill_peer(0, 1);
    cr_expect(!r.done);
    progress_all();
    cr_expect(r.done, "the notice from engine 0 ended engine 2's receive");
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
    cr_expect(fs_ep_is_failed(eps[2][1]));
    cr_expect_geq(fs_engine_stats(eng[2])->notices_received, 1);
    cr_expect_eq(peer_failed_calls, 2, "each survivor reports it once");
}

Test(failure, a_process_declared_failed_ends_itself)
{
    kill_peer(0, 1);
    cr_expect_eq(excluded_calls, 0);
    /* engine 1 is alive: a notice naming it reaches it via engine 2's
     * endpoint, which engine 2 does not consider failed yet */
    fs_peer_fail(eng[2], eps[2][0], NULL, NULL);   /* 2 thinks 0 died */
    progress_all();
    cr_expect_geq(excluded_calls, 1, "engine 0 learned it was declared failed");
}

Test(failure, abort_reaches_every_peer)
{
    fs_ep_t *peers[2] = {eps[0][1], eps[0][2]};

    fs_engine_abort_peers(eng[0], peers, 2, 42);
    progress_all();
    cr_expect_eq(abort_calls, 2);
    cr_expect_eq(abort_code, 42);
}

Test(failure, communicator_created_with_a_failed_member)
{
    fs_comm_t *late;

    kill_peer(0, 1);
    make_comm(0, 22, &late);
    cr_expect(!fs_comm_collectives_enabled(late));
    cr_expect(!fs_comm_any_source_enabled(late));
    cr_expect_eq(fs_comm_failed_ranks(late, FS_COMM_REMOTE, 0, NULL, 0), 1);
    fs_comm_destroy(late);
}

Test(failure, injected_death_after_n_messages, .signal = SIGTERM)
{
    uint8_t v = 0;
    treq_t s;

    fs_engine_inject(eng[1], 3, SIGTERM);
    send_msg(&s, 1, 0, 1, &v, 1, FS_SEND_STANDARD);
    send_msg(&s, 1, 0, 1, &v, 1, FS_SEND_STANDARD);
    send_msg(&s, 1, 0, 1, &v, 1, FS_SEND_STANDARD);   /* the third kills */
    cr_assert_fail("still alive after the third message");
}

Test(failure, injected_death_at_first_contact, .signal = SIGTERM)
{
    uint8_t v = 0, got = 1;
    treq_t s, r;

    fs_engine_inject_first_contact(eng[1], SIGTERM);
    send_msg(&s, 0, 1, 1, &v, 1, FS_SEND_STANDARD);
    recv_msg(&r, 1, 0, 1, &got, 1);
    progress_all();
    cr_expect(r.done, "a message received is no first contact");
    send_msg(&s, 1, 0, 1, &v, 1, FS_SEND_STANDARD);  /* 0 contacted us already */
    send_msg(&s, 1, 2, 1, &v, 1, FS_SEND_STANDARD);  /* first contact: kills */
    cr_assert_fail("still alive after the first message to a peer never contacted");
}

/* ---- resource exhaustion: an error of its channel, never a hang ---------- */

Test(failure, a_message_not_kept_breaks_its_channel_after_what_came_before)
{
    uint8_t v[3] = {10, 11, 12}, got0 = 0, got2 = 0, x;
    treq_t s[3], r0, r2, r1;
    int i;

    eng[0]->unexpected_limit = 0;        /* max_unexpected_mb 0: nothing may be held */
    recv_msg(&r0, 0, 1, 1, &got0, 1);
    recv_msg(&r2, 0, 1, 3, &got2, 1);
    for (i = 0; i < 3; ++i) {
        send_msg(&s[i], 1, 0, 1 + i, &v[i], 1, FS_SEND_STANDARD);
    }
    eng[0]->tl->reverse_next = 3;        /* the 3rd, then the 2nd, then the 1st */
    progress_all();
    cr_expect(r0.done, "the message before the hole is delivered");
    cr_expect_eq(r0.u.r.super.status, FS_OK);
    cr_expect_eq(got0, 10);
    cr_expect(r2.done, "a receive the lost order cannot satisfy does not hang");
    cr_expect_eq(r2.u.r.super.status, FS_ERR_NO_MEMORY);
    cr_expect_eq(recv_msg(&r1, 0, 1, 2, &x, 1), FS_ERR_NO_MEMORY,
                 "a new receive from the broken channel ends at once");
    cr_expect_eq(recv_msg(&r1, 0, 2, 2, &x, 1), FS_INPROGRESS,
                 "other senders are untouched");
    fs_recv_cancel(&r1.u.r);
}

Test(failure, every_held_message_counts_against_the_budget)
{
    static uint8_t big[3 * FAKE_RNDV_THRESH];
    uint8_t v = 7, x = 0;
    treq_t s, r, sb;

    eng[0]->unexpected_limit = 0;        /* max_unexpected_mb 0 */
    /* 8 bytes: inline in the message record, still held */
    cr_expect_eq(send_msg(&s, 1, 0, 4, &v, 1, FS_SEND_STANDARD), FS_OK);
    /* a rendezvous: its descriptor is held */
    cr_expect_eq(send_msg(&sb, 2, 0, 4, big, sizeof(big), FS_SEND_STANDARD), FS_INPROGRESS);
    progress_all();
    cr_expect_eq(recv_msg(&r, 0, 1, 4, &x, 1), FS_ERR_NO_MEMORY,
                 "an inline payload is not free either");
    cr_expect_eq(recv_msg(&r, 0, 2, 4, big, sizeof(big)), FS_ERR_NO_MEMORY,
                 "nor a rendezvous descriptor");
    cr_expect(sb.done, "the dropped rendezvous released its sender");
    cr_expect_eq(fs_engine_stats(eng[0])->lost_no_memory, 2);
}

/* ---- the fake transport's asynchronous fetch (issue 10, item 3) ----------- */

/* A rendezvous from 1 matched by a receive at 0 whose fetch is in flight:
 * after this, 0's transport is still writing the buffer. */
static void fetch_in_flight(treq_t *s, treq_t *r, uint8_t *src, uint8_t *dst, size_t len)
{
    fill(src, len, 9);
    memset(dst, 0xee, len);
    cr_assert_eq(recv_msg(r, 0, 1, 4, dst, len), FS_INPROGRESS);
    cr_assert_eq(send_msg(s, 1, 0, 4, src, len, FS_SEND_STANDARD), FS_INPROGRESS);
    fs_engine_progress(eng[0]);           /* upcall: match, fetch starts */
    cr_assert_eq(eng[0]->tl->nfetch, 1, "the fetch is in flight");
    cr_assert(!r->done);
}

/* drain: a peer fails while its payload is being fetched; the receive must
 * not give its buffer back before the transport lets go of it */
Test(failure, a_receive_whose_fetch_is_in_flight_ends_after_the_transport_lets_go)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s, r;
    size_t i;

    fetch_in_flight(&s, &r, src, dst, sizeof(dst));
    kill_peer(0, 1);
    cr_expect(!r.done, "ended while the transport still owns its buffer");
    fs_engine_progress(eng[0]);           /* the cancelled fetch completes */
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
    for (i = 0; i < sizeof(dst); ++i) {
        cr_assert_eq(dst[i], 0xee, "written after the fetch was cancelled");
    }
}

/* Rule (a) for a held rendezvous: a payload still with the dead sender
 * fails its receive; one the transport pushed whole into this process (UCX's
 * fragments) is delivered. */
Test(failure, a_held_rendezvous_of_a_dead_peer_is_delivered_if_its_payload_is_here)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s1, s2, r;
    size_t i;

    for (i = 0; i < sizeof(src); ++i) {
        src[i] = (uint8_t)(i * 13 + 1);
    }
    send_msg(&s1, 1, 0, 30, src, sizeof(src), FS_SEND_STANDARD);
    send_msg(&s2, 1, 0, 31, src, sizeof(src), FS_SEND_STANDARD);
    progress_all();
    kill_peer(0, 1);
    eng[0]->tl->rndv_whole = 1;
    (void)recv_msg(&r, 0, 1, 30, dst, sizeof(dst));
    fs_engine_progress(eng[0]);         /* the fetch completes */
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_OK, "a payload held here was not delivered");
    cr_expect(memcmp(dst, src, sizeof(src)) == 0, "payload differs");
    eng[0]->tl->rndv_whole = 0;
    cr_expect_eq(recv_msg(&r, 0, 1, 31, dst, sizeof(dst)), FS_ERR_PEER_FAILED,
                 "a payload left with the dead sender");
}

/* park: the fetch itself fails without a cause while the peer looks
 * alive; the receive waits for the peer's fate, which then explains it */
Test(failure, a_fetch_failing_without_cause_waits_for_the_peers_fate)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s, r;

    eng[0]->tl->fail_next_fetch = FS_ERR_CANCELED;
    fetch_in_flight(&s, &r, src, dst, sizeof(dst));
    fs_engine_progress(eng[0]);           /* the fetch fails */
    cr_expect(!r.done, "an error of unknown cause must wait for the peer's fate");
    kill_peer(0, 1);
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
}

/* A transport that refuses a send to a dead peer at once, before it
 * reports the endpoint (OFI sockets: -FI_ENOENT), fails the peer first:
 * when the send reports the class, the peer is recorded failed (17.4
 * queries name it; tf_fail_coll over sockets saw a barrier fail for a rank
 * its failed group did not hold), and the engine's host is told once. */
Test(failure, a_send_refused_for_a_dead_peer_fails_the_peer_first)
{
    static treq_t s;
    uint8_t x = 1;

    eng[0]->tl->fail_next_send = FS_ERR_PEER_FAILED;
    cr_assert_eq(send_msg(&s, 0, 1, 3, &x, 1, FS_SEND_STANDARD), FS_ERR_PEER_FAILED);
    cr_expect(fs_ep_is_failed(eps[0][1]), "the class reported for a peer not failed");
    cr_expect_eq(peer_failed_calls, 1);
    cr_expect_eq(send_msg(&s, 0, 1, 3, &x, 1, FS_SEND_STANDARD), FS_ERR_PEER_FAILED, "later sends too");
}

/* and without a verdict, the same error is local, after cause_wait_ms */
Test(failure, a_fetch_failing_without_cause_or_verdict_is_local)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s, r;
    double t0;

    params.cause_wait_ms = 100;
    eng[0]->tl->fail_next_fetch = FS_ERR_CANCELED;
    fetch_in_flight(&s, &r, src, dst, sizeof(dst));
    t0 = now_s();
    while (!r.done && (now_s() - t0 < 5)) {
        fs_engine_progress(eng[0]);
    }
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_LOCAL);
    cr_expect(fs_ep_is_usable(eps[0][1]), "nobody blamed");
}

/* cancel: MPI_Cancel of a receive already matched (its fetch in flight)
 * does nothing; the receive completes with its data */
Test(failure, cancelling_a_receive_whose_fetch_is_in_flight_changes_nothing)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s, r;

    fetch_in_flight(&s, &r, src, dst, sizeof(dst));
    cr_expect_eq(fs_recv_cancel(&r.u.r), 0, "no longer cancellable");
    progress_all();
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_OK);
    cr_expect(check(dst, sizeof(dst), 9));
    cr_expect(s.done);
}

/* Lifecycle (tf_life_wireup, tf_life_connect over shm): an operation that
 * fails without a cause waits for the detector's bound on a verdict, not
 * only cause_wait_ms: at start-up the detector allows a grace for first
 * beats, and a process dead in MPI_Init is only found after it. */
Test(failure, a_parked_operation_waits_for_the_detectors_bound)
{
    static uint8_t src[3 * FAKE_RNDV_THRESH], dst[3 * FAKE_RNDV_THRESH];
    static treq_t s, r;
    double t0;

    params.cause_wait_ms = 50;
    fate_verdict_at = now_s() + 0.5;
    eng[0]->tl->fail_next_fetch = FS_ERR_CANCELED;
    fetch_in_flight(&s, &r, src, dst, sizeof(dst));
    t0 = now_s();
    while (now_s() - t0 < 0.25) {
        fs_engine_progress(eng[0]);
    }
    cr_expect(!r.done, "gave up after cause_wait_ms, before the detector could decide");
    kill_peer(0, 1);
    cr_assert(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
}

static void progress_one(int i)
{
    while (fs_engine_progress(eng[i]) > 0) {
    }
}

/* ULFM's api/revoke (1 run in 10): a revoke still flooding when its
 * communicator is freed and made again with the same context id and members
 * (MPI_Comm_dup of the same parent) must not revoke the new one, whether it
 * arrives before or after the new one exists; the new one's own revoke
 * still reaches every member, also one that has not made it yet. */
Test(failure, a_revoke_of_a_freed_communicator_spares_the_one_made_again)
{
    fs_comm_t *again;
    int n0, n2;

    cr_assert_eq(fs_comm_revoke(comm[1]), FS_OK);
    progress_one(1);                               /* sent to 0 and 2 */
    n0 = eng[0]->tl->ninbox;                       /* 2 each: distances 1 and 2 */
    n2 = eng[2]->tl->ninbox;
    cr_assert(n0 > 0 && n2 > 0);
    fs_comm_destroy(comm[0]);                      /* 0: arrives with none */
    comm[0] = NULL;
    progress_one(0);
    make_comm(0, CID, &comm[0]);
    progress_one(0);
    cr_expect(!fs_comm_is_revoked(comm[0]), "revoked by the freed one's revoke, arrived early");
    cr_expect_eq(fs_engine_stats(eng[0])->agree_stale, (uint64_t)n0);

    fs_comm_destroy(comm[2]);                      /* 2: arrives after */
    make_comm(2, CID, &comm[2]);
    progress_one(2);
    cr_expect(!fs_comm_is_revoked(comm[2]), "revoked by the freed one's revoke");
    cr_expect_eq(fs_engine_stats(eng[2])->agree_stale, (uint64_t)n2);

    /* 1 still has the old one: the new one's revoke waits for it */
    cr_assert_eq(fs_comm_revoke(comm[0]), FS_OK);
    progress_one(0);
    progress_one(2);
    cr_expect(fs_comm_is_revoked(comm[2]), "the new one's revoke");
    progress_one(1);
    again = comm[1];
    make_comm(1, CID + 1, &comm[1]);               /* (another cid between) */
    fs_comm_destroy(comm[1]);
    fs_comm_destroy(again);
    make_comm(1, CID, &comm[1]);
    progress_one(1);
    cr_expect(fs_comm_is_revoked(comm[1]), "the new one's revoke, kept for it");
    cr_expect_eq(fs_engine_stats(eng[1])->agree_stale, 0);
}

/* ---- links to another host (issue 40) ------------------------------------ */

static void progress_0_for(double seconds)
{
    double end = fs_time_now() + seconds;

    while (fs_time_now() < end) {
        fs_engine_progress(eng[0]);
    }
}

/* A reset over tcp to another host: a link flap, a middlebox or a forged
 * packet gives it as well as a death.  A suspicion: the detector is asked
 * to check, operations wait, and its verdict decides. */
Test(failure, a_reset_from_another_host_waits_for_the_detectors_verdict)
{
    uint8_t x = 0;
    treq_t r;

    remote_peers = 1u << 1;
    cr_assert_eq(recv_msg(&r, 0, 1, 5, &x, 1), FS_INPROGRESS);
    kill_peer(0, 1);
    cr_expect_eq(eps[0][1]->state, FS_EP_SUSPECTED, "a suspicion, not a verdict");
    cr_expect_eq(check_calls, 1, "the detector is asked to check it now");
    cr_expect_eq(peer_failed_calls, 0, "nobody blamed yet");
    cr_expect(!r.done, "its receive waits for the verdict");
    fs_engine_peer_suspected(eng[0], eps[0][1]);     /* the detector's verdict */
    cr_expect(fs_ep_is_failed(eps[0][1]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_PEER_FAILED);
    cr_expect_eq(peer_failed_calls, 1);
    cr_expect(r.done && (r.u.r.super.status == FS_ERR_PEER_FAILED));
}

/* No verdict by the detector's bound: the process lives (its host-mates saw
 * it run, its beats go on), so the break is this link's: a local error,
 * nobody blamed. */
Test(failure, a_reset_from_another_host_without_a_verdict_blames_nobody)
{
    uint8_t x = 0;
    treq_t r;

    params.cause_wait_ms = 30;
    remote_peers = 1u << 1;
    cr_assert_eq(recv_msg(&r, 0, 1, 5, &x, 1), FS_INPROGRESS);
    fake_fail_ep(eps[0][1]->tl_ep, -80);     /* UCX 1.13's tcp: ENDPOINT_TIMEOUT */
    cr_expect_eq(eps[0][1]->state, FS_EP_SUSPECTED);
    progress_0_for(0.1);
    cr_expect(fs_ep_is_failed(eps[0][1]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_LOCAL, "no verdict: a local break");
    cr_expect_eq(peer_failed_calls, 0, "nobody blamed");
    cr_expect_eq(fs_comm_failed_ranks(comm[0], FS_COMM_REMOTE, 0, NULL, 0), 0,
                 "not in the communicator's failed group either");
    cr_expect(r.done && (r.u.r.super.status == FS_ERR_LOCAL));
}

/* The same reset from a process of this host is its death (no network in
 * between); a refused connection is its host's answer: nothing listens. */
Test(failure, a_reset_on_this_host_or_a_refusal_is_a_verdict)
{
    remote_peers = 1u << 2;
    kill_peer(0, 1);
    cr_expect(fs_ep_is_failed(eps[0][1]));
    cr_expect_eq(fs_peer_status(eps[0][1]), FS_ERR_PEER_FAILED);
    fake_fail_ep(eps[0][2]->tl_ep, -23);     /* UCS_ERR_REJECTED */
    cr_expect(fs_ep_is_failed(eps[0][2]));
    cr_expect_eq(fs_peer_status(eps[0][2]), FS_ERR_PEER_FAILED);
    cr_expect_eq(check_calls, 0);
    cr_expect_eq(peer_failed_calls, 2);
}

/* An operation that fails on a link to another host before its endpoint
 * reports (UCX completes a broken link's operations first) does not fail
 * the peer: it waits, and the endpoint's error, read across hosts, decides. */
Test(failure, an_operation_failing_on_a_link_to_another_host_blames_nobody)
{
    uint8_t v = 1;
    treq_t s;

    remote_peers = 1u << 1;
    eng[0]->tl->fail_next_send = FS_ERR_PEER_FAILED;
    cr_expect_eq(send_msg(&s, 0, 1, 3, &v, 1, FS_SEND_STANDARD), FS_INPROGRESS,
                 "it waits for the peer's fate");
    cr_expect(fs_ep_is_usable(eps[0][1]));
    cr_expect_eq(peer_failed_calls, 0);
    kill_peer(0, 1);
    cr_expect_eq(eps[0][1]->state, FS_EP_SUSPECTED);
    cr_expect(!s.done);
    fs_engine_peer_suspected(eng[0], eps[0][1]);
    cr_expect(s.done && (s.u.s.super.status == FS_ERR_PEER_FAILED));
}
