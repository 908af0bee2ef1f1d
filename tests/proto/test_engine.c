/* The engine without Open MPI: engines joined by a fake transport. */
#include "fixture.h"

TestSuite(engine, .init = setup, .fini = teardown, .timeout = 20);

Test(engine, eager_and_rendezvous_payloads_and_status)
{
    static uint8_t sb[20000], rb[20000];
    size_t sizes[] = {0, 1, 100, FAKE_RNDV_THRESH + 1, 20000};
    treq_t s, r;
    unsigned k;

    for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); ++k) {
        fill(sb, sizes[k], (int)k);
        memset(rb, 0, sizeof(rb));
        send_msg(&s, 1, 0, 40 + (int)k, sb, sizes[k], FS_SEND_STANDARD);
        recv_msg(&r, 0, 1, 40 + (int)k, rb, sizeof(rb));
        progress_all();
        cr_assert(s.done && r.done, "size %zu did not complete", sizes[k]);
        cr_expect_eq(r.u.r.super.status, FS_OK);
        cr_expect_eq(r.u.r.src_out, 1);
        cr_expect_eq(r.u.r.tag_out, 40 + (int)k);
        cr_expect_eq(r.u.r.len_out, sizes[k]);
        cr_expect(check(rb, sizes[k], (int)k), "payload of %zu bytes", sizes[k]);
    }
}

Test(engine, transport_reordering_is_undone_by_sequence_numbers)
{
    uint8_t vals[10], got[10];
    treq_t s[10], r[10];
    int i;

    eng[0]->tl->reverse_next = 10;
    for (i = 0; i < 10; ++i) {
        vals[i] = (uint8_t)i;
        send_msg(&s[i], 1, 0, 7, &vals[i], 1, FS_SEND_STANDARD);
    }
    progress_all();                     /* arrive reversed, become unexpected */
    for (i = 0; i < 10; ++i) {
        cr_assert_eq(recv_msg(&r[i], 0, 1, 7, &got[i], 1), FS_OK);
        cr_expect_eq(got[i], i, "message %d overtook another", i);
    }
    cr_expect_geq(fs_engine_stats(eng[0])->reordered, 9);
}

/* The receive side's fast path (an in-order eager message a posted receive
 * takes) leaves alone what the general path must do: here, messages parked
 * early by a reordering transport are taken as soon as the gap fills. */
Test(engine, reordered_arrivals_for_posted_receives_are_taken_in_order)
{
    uint8_t vals[10], got[10];
    treq_t s[10], r[10];
    int i;

    for (i = 0; i < 10; ++i) {
        got[i] = 0xff;
        cr_assert_eq(recv_msg(&r[i], 0, 1, 7, &got[i], 1), FS_INPROGRESS);
    }
    eng[0]->tl->reverse_next = 10;
    for (i = 0; i < 10; ++i) {
        vals[i] = (uint8_t)i;
        send_msg(&s[i], 1, 0, 7, &vals[i], 1, FS_SEND_STANDARD);
    }
    progress_all();
    for (i = 0; i < 10; ++i) {
        cr_expect(r[i].done, "receive %d still waits", i);
        cr_expect_eq(got[i], i, "message %d overtook another", i);
    }
}

/* ... and a message taken that way counts toward its sender's departure,
 * which announces how many it sent: the peer then has left. */
Test(engine, messages_taken_by_posted_receives_count_toward_a_departure)
{
    fs_ep_t *bye[NENG] = {eps[1][0], eps[1][2]};
    uint8_t v = 5, got = 0;
    treq_t s, r;

    cr_assert_eq(recv_msg(&r, 0, 1, 9, &got, 1), FS_INPROGRESS);
    send_msg(&s, 1, 0, 9, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(r.done && (got == 5));
    fs_engine_leave(eng[1], bye, 2);
    progress_all();
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT, "the departure waits for a message taken");
}

/* ... and a message of a failed peer that arrives after its failure is
 * discarded, even when a wildcard receive (MPI_ANY_SOURCE re-enabled) could
 * take it. */
Test(engine, a_late_message_of_a_failed_peer_is_not_taken_by_a_wildcard)
{
    uint8_t v = 3, got = 0;
    treq_t s, r;

    fake_fail_ep(eps[0][1]->tl_ep, -80 /* UCS_ERR_ENDPOINT_TIMEOUT */);
    fs_comm_reenable_any_source(comm[0]);
    cr_assert_eq(recv_msg(&r, 0, FS_ANY_SOURCE, 4, &got, 1), FS_INPROGRESS);
    send_msg(&s, 1, 0, 4, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(!r.done, "a message that arrived after its sender failed was taken");
    cr_expect_eq(fs_engine_stats(eng[0])->discarded_after_failure, 1);
    cr_expect_eq(fs_recv_cancel(&r.u.r), 1);
}

Test(engine, message_before_its_communicator_is_kept)
{
    fs_comm_t *late0, *late1;
    uint8_t v = 77, got = 0;
    treq_t s, r;

    make_comm(0, 9, &late0);
    fs_send_prepare(&s.u.s, late0, 1, 3, FS_SEND_STANDARD);
    fs_buf_set_contig(&s.u.s.buf, &v, 1);
    cr_assert_eq(fs_send_start(&s.u.s), FS_OK);
    progress_all();                     /* engine 1 has no cid 9 yet */
    cr_expect_eq(fs_engine_stats(eng[1])->early_cid, 1);
    make_comm(1, 9, &late1);
    fs_recv_prepare(&r.u.r, late1, 0, 3);
    fs_buf_set_contig(&r.u.r.buf, &got, 1);
    cr_expect_eq(fs_recv_start(&r.u.r), FS_OK);
    cr_expect_eq(got, 77);
    fs_comm_destroy(late0);
    fs_comm_destroy(late1);
}

Test(engine, truncation_eager_and_rendezvous)
{
    static uint8_t sb[10000], rb[10000];
    size_t sizes[] = {100, 10000};
    treq_t s, r;
    int k;

    for (k = 0; k < 2; ++k) {
        fill(sb, sizes[k], k);
        memset(rb, 0, sizeof(rb));
        send_msg(&s, 2, 0, 5, sb, sizes[k], FS_SEND_STANDARD);
        recv_msg(&r, 0, 2, 5, rb, 50);
        progress_all();
        cr_assert(r.done && s.done);
        cr_expect_eq(r.u.r.super.status, FS_ERR_TRUNCATE);
        cr_expect_eq(r.u.r.len_out, 50);
        cr_expect_eq(r.u.r.msg_len, sizes[k]);
        cr_expect(check(rb, 50, k));
        cr_expect_eq(rb[50], 0, "nothing written past the buffer");
    }
}

Test(engine, wildcard_posted_first_takes_the_message)
{
    uint8_t a = 1, b = 2, x = 0, y = 0;
    treq_t s1, s2, w, sp;

    recv_msg(&w, 0, FS_ANY_SOURCE, FS_ANY_TAG, &x, 1);
    recv_msg(&sp, 0, 2, 4, &y, 1);
    send_msg(&s1, 2, 0, 4, &a, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(w.done && !sp.done);
    cr_expect_eq(x, 1);
    cr_expect_eq(w.u.r.src_out, 2);
    send_msg(&s2, 2, 0, 4, &b, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(sp.done);
    cr_expect_eq(y, 2);
}

Test(engine, peer_failure_completes_everything_pending_on_it)
{
    static uint8_t big[8000];
    /* the transport still holds s after it completes (reported idle later) */
    static treq_t s;
    uint8_t x;
    treq_t r, late;

    recv_msg(&r, 0, 1, 1, &x, 1);
    cr_assert_eq(send_msg(&s, 0, 1, 2, big, sizeof(big), FS_SEND_STANDARD),
                 FS_INPROGRESS, "rendezvous waits for the receiver");
    fake_fail_ep(eps[0][1]->tl_ep, -25 /* UCS_ERR_CONNECTION_RESET */);
    cr_expect(r.done && s.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_FAILED);
    cr_expect_eq(r.u.r.src_out, 1, "the status names the peer waited for");
    cr_expect_eq(r.u.r.len_out, 0, "no message was delivered");
    cr_expect_eq(s.u.s.super.status, FS_ERR_PEER_FAILED);
    cr_expect_eq(peer_failed_calls, 1);
    cr_expect_eq(send_msg(&late, 0, 1, 3, &x, 1, FS_SEND_STANDARD), FS_ERR_PEER_FAILED);
    cr_expect_eq(recv_msg(&late, 0, 1, 3, &x, 1), FS_ERR_PEER_FAILED);
    /* the rank-2 channel is untouched */
    cr_expect_eq(send_msg(&late, 0, 2, 3, &x, 1, FS_SEND_STANDARD), FS_OK);
    progress_all();
    cr_expect(!s.idle, "the transport has not let go of the send yet");
}

Test(engine, buffered_messages_survive_and_later_ones_are_discarded)
{
    uint8_t v1 = 11, v2 = 22, got = 0;
    treq_t s1, s2, r;

    send_msg(&s1, 1, 0, 6, &v1, 1, FS_SEND_STANDARD);
    progress_all();                                   /* unexpected at 0 */
    fake_fail_ep(eps[0][1]->tl_ep, -80 /* UCS_ERR_ENDPOINT_TIMEOUT */);
    send_msg(&s2, 1, 0, 6, &v2, 1, FS_SEND_STANDARD); /* arrives after */
    progress_all();
    cr_expect_eq(fs_engine_stats(eng[0])->discarded_after_failure, 1);
    cr_expect_eq(recv_msg(&r, 0, 1, 6, &got, 1), FS_OK, "received before the failure");
    cr_expect_eq(got, 11);
    cr_expect_eq(recv_msg(&r, 0, 1, 6, &got, 1), FS_ERR_PEER_FAILED);
}

Test(engine, local_error_is_not_blamed_on_the_peer)
{
    uint8_t x;
    treq_t r;

    recv_msg(&r, 0, 2, 1, &x, 1);
    fake_fail_ep(eps[0][2]->tl_ep, -3 /* UCS_ERR_IO_ERROR */);
    cr_expect(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_LOCAL);
    cr_expect_eq(peer_failed_calls, 0);
    cr_expect_eq(fs_engine_stats(eng[0])->peers_failed, 1, "the endpoint is unusable");
}

Test(engine, leaving_is_not_failing)
{
    fs_ep_t *bye[NENG] = {eps[1][0], eps[1][2]};
    uint8_t x;
    treq_t r;

    recv_msg(&r, 0, 1, 9, &x, 1);          /* can never be satisfied now */
    fs_engine_leave(eng[1], bye, 2);
    progress_all();
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT);
    cr_expect(r.done);
    cr_expect_eq(r.u.r.super.status, FS_ERR_PEER_LEFT);
    /* the transport notices the closed peer later: still not a failure */
    fake_fail_ep(eps[0][1]->tl_ep, -25);
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT);
    cr_expect_eq(fs_engine_stats(eng[0])->peers_failed, 0);
    cr_expect_eq(fs_engine_stats(eng[0])->peers_left, 1);
    cr_expect_eq(peer_failed_calls, 0);
}

Test(engine, departure_waits_for_the_messages_it_announced)
{
    fs_ep_t *bye[1] = {eps[1][0]};
    uint8_t v[3] = {1, 2, 3}, got[3];
    treq_t s[3], r;
    int i;

    for (i = 0; i < 3; ++i) {
        send_msg(&s[i], 1, 0, 2, &v[i], 1, FS_SEND_STANDARD);
    }
    fs_engine_leave(eng[1], bye, 1);
    eng[0]->tl->reverse_next = 4;          /* the BYE arrives first */
    progress_all();
    cr_expect_eq(eps[0][1]->state, FS_EP_LEFT, "all 3 announced messages arrived");
    for (i = 0; i < 3; ++i) {
        cr_expect_eq(recv_msg(&r, 0, 1, 2, &got[i], 1), FS_OK);
        cr_expect_eq(got[i], v[i]);
    }
}

Test(engine, send_to_self_eager_rendezvous_and_synchronous)
{
    static uint8_t big[40000], rbig[40000];
    uint8_t small = 5, got = 0;
    treq_t s, r;

    cr_expect_eq(send_msg(&s, 0, 0, 1, &small, 1, FS_SEND_STANDARD), FS_OK,
                 "small send to self is buffered");
    small = 0;
    cr_expect_eq(recv_msg(&r, 0, 0, 1, &got, 1), FS_OK);
    cr_expect_eq(got, 5, "the copy was taken at send time");

    fill(big, sizeof(big), 3);
    cr_expect_eq(send_msg(&s, 0, 0, 2, big, sizeof(big), FS_SEND_STANDARD), FS_INPROGRESS,
                 "large send to self waits for its receive");
    cr_expect_eq(recv_msg(&r, 0, 0, 2, rbig, sizeof(rbig)), FS_OK);
    cr_expect(s.done, "the receive completed the sender");
    cr_expect(check(rbig, sizeof(rbig), 3));

    cr_expect_eq(send_msg(&s, 0, 0, 3, &small, 1, FS_SEND_SYNC), FS_INPROGRESS,
                 "a synchronous send never completes before its match");
    cr_expect_eq(recv_msg(&r, 0, 0, 3, &got, 1), FS_OK);
    cr_expect(s.done);
}

Test(engine, steady_state_allocates_nothing)
{
    static uint8_t sb[6000], rb[6000];
    size_t sizes[] = {8, 500, 2000, 6000};
    treq_t s, r;
    uint64_t grows;
    int i, round;

    for (round = 0; round < 2; ++round) {
        if (round == 1) {
            grows = fs_engine_stats(eng[0])->pool_grows;
        }
        for (i = 0; i < 4000; ++i) {
            size_t n = sizes[i % 4];
            if (i % 2) {            /* expected */
                recv_msg(&r, 0, 1, 1, rb, n);
                send_msg(&s, 1, 0, 1, sb, n, FS_SEND_STANDARD);
            } else {                /* unexpected */
                send_msg(&s, 1, 0, 1, sb, n, FS_SEND_STANDARD);
                progress_all();
                recv_msg(&r, 0, 1, 1, rb, n);
            }
            progress_all();
            cr_assert(r.done && s.done);
        }
    }
    cr_expect_eq(fs_engine_stats(eng[0])->pool_grows, grows,
                 "message pools grew after warm-up");
}

/* The copy classes' first chunks are made (and mapped) with the engine:
 * the first unexpected copies of a stream take them without growing. */
Test(engine, first_unexpected_copies_allocate_nothing)
{
    static uint8_t sb[6000], rb[6000];
    size_t sizes[] = {500, 2000, 6000};
    uint64_t grows = fs_engine_stats(eng[0])->pool_grows;
    treq_t s, r;
    int i;

    for (i = 0; i < 3; ++i) {
        send_msg(&s, 1, 0, 1, sb, sizes[i], FS_SEND_STANDARD);
        progress_all();
        recv_msg(&r, 0, 1, 1, rb, sizes[i]);
        progress_all();
        cr_assert(r.done && s.done);
    }
    cr_expect_eq(fs_engine_stats(eng[0])->pool_grows, grows,
                 "a copy class grew at its first message");
}

Test(engine, cancel_only_unmatched_receives)
{
    uint8_t v = 1, x;
    treq_t r1, r2, s;

    recv_msg(&r1, 0, 1, 8, &x, 1);
    cr_expect_eq(fs_recv_cancel(&r1.u.r), 1);
    cr_expect(r1.done);
    cr_expect_eq(r1.u.r.super.status, FS_ERR_CANCELED);
    recv_msg(&r2, 0, 1, 8, &x, 1);
    send_msg(&s, 1, 0, 8, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_expect(r2.done);
    cr_expect_eq(fs_recv_cancel(&r2.u.r), 0, "already matched");
    cr_expect_eq(r2.u.r.super.status, FS_OK);
}

Test(engine, probe_then_matched_receive)
{
    uint8_t v = 42, got = 0;
    fs_probe_info_t info;
    fs_msg_t *msg = NULL;
    treq_t s, r;
    int found;

    send_msg(&s, 2, 0, 12, &v, 1, FS_SEND_STANDARD);
    progress_all();
    cr_assert_eq(fs_probe(comm[0], FS_ANY_SOURCE, FS_ANY_TAG, 0, &found, &info, &msg), FS_OK);
    cr_expect(found);
    cr_expect_eq(info.src, 2);
    cr_expect_eq(info.tag, 12);
    cr_expect_eq(info.len, 1);
    cr_assert_eq(fs_probe(comm[0], 2, 12, 1, &found, &info, &msg), FS_OK);
    cr_assert(found && msg != NULL);
    cr_expect_eq(fs_probe(comm[0], 2, 12, 0, &found, &info, &msg), FS_OK);
    cr_expect(!found, "a matched probe takes the message");
    memset(&r, 0, sizeof(r));
    fs_recv_prepare(&r.u.r, comm[0], 2, FS_ANY_TAG);
    fs_buf_set_contig(&r.u.r.buf, &got, 1);
    cr_expect_eq(fs_mrecv_start(&r.u.r, msg), FS_OK);
    cr_expect_eq(got, 42);
}

/* A message goes out with the 8-byte header when its fields fit (hdr.h),
 * negative collective tags included, and with the 16-byte one otherwise;
 * the receiver reads both into the same message. */
Test(engine, short_match_header_when_the_fields_fit)
{
    static const struct { int tag; fs_send_mode_t mode; size_t hdr_len; } c[] = {
        {1, FS_SEND_STANDARD, 8},       {-12, FS_SEND_STANDARD, 8},
        {32767, FS_SEND_STANDARD, 8},   {-32768, FS_SEND_STANDARD, 8},
        {32768, FS_SEND_STANDARD, 16},  {-32769, FS_SEND_STANDARD, 16},
        {1, FS_SEND_SYNC, 16},
    };
    fs_tl_t *tl0 = eng[0]->tl;
    uint8_t v, got;
    treq_t s, r;
    unsigned k;

    for (k = 0; k < sizeof(c) / sizeof(c[0]); ++k) {
        v = (uint8_t)(k + 1);
        got = 0;
        send_msg(&s, 1, 0, c[k].tag, &v, 1, c[k].mode);
        cr_assert_gt(tl0->ninbox, 0);
        cr_expect_eq(tl0->inbox[tl0->ninbox - 1]->hdr_len, c[k].hdr_len,
                     "tag %d: %zu-byte header", c[k].tag,
                     tl0->inbox[tl0->ninbox - 1]->hdr_len);
        recv_msg(&r, 0, 1, c[k].tag, &got, 1);
        progress_all();
        cr_assert(s.done && r.done, "tag %d did not complete", c[k].tag);
        cr_expect_eq(r.u.r.tag_out, c[k].tag);
        cr_expect_eq(r.u.r.src_out, 1);
        cr_expect_eq(got, v, "tag %d: payload", c[k].tag);
    }
}

/* A send its caller waits for asks the transport for the protocol that
 * completes locally soonest (UCX's FAST_CMPL: eager up to its local
 * rendezvous threshold) when it is collective traffic (negative tag) of at
 * most pml_failstop_send_fast_local_max bytes; a nonblocking or
 * point-to-point one never, and a synchronous one is still a rendezvous.
 * Every standard blocking send tells the transport it is waited for
 * (FS_TL_SEND_WAITED: UCX's pushed fragments), a nonblocking one never. */
Test(engine, blocking_send_prefers_local_completion)
{
    static uint8_t sb[8000], rb[8000];
    static const struct { size_t max; uint8_t blocking; int tag; fs_send_mode_t mode;
                          int rndv; } c[] = {
        {32768, 1, -9, FS_SEND_STANDARD, 0}, {32768, 1, 9, FS_SEND_STANDARD, 1},
        {32768, 0, -9, FS_SEND_STANDARD, 1}, {32768, 1, -9, FS_SEND_SYNC, 1},
        {7999, 1, -9, FS_SEND_STANDARD, 1},  {8000, 1, -9, FS_SEND_STANDARD, 0},
        {0, 1, -9, FS_SEND_STANDARD, 1},
    };
    fs_tl_t *tl0 = eng[0]->tl;
    fs_status_t st;
    treq_t s, r;
    unsigned k;

    cr_expect_eq(params.send_fast_local_max, 131072, "the default");
    for (k = 0; k < sizeof(c) / sizeof(c[0]); ++k) {
        params.send_fast_local_max = c[k].max;
        fill(sb, sizeof(sb), (int)k);
        memset(&s, 0, sizeof(s));
        fs_send_prepare(&s.u.s, comm[1], 0, c[k].tag, c[k].mode);
        fs_buf_set_contig(&s.u.s.buf, sb, sizeof(sb));
        s.u.s.blocking = c[k].blocking;
        st = fs_send_start(&s.u.s);
        cr_expect_eq(st, c[k].rndv ? FS_INPROGRESS : FS_OK, "case %u: %d", k, st);
        cr_assert_gt(tl0->ninbox, 0);
        cr_expect_eq(tl0->inbox[tl0->ninbox - 1]->rndv, c[k].rndv, "case %u", k);
        cr_expect_eq(!!(tl0->inbox[tl0->ninbox - 1]->flags & FS_TL_SEND_WAITED),
                     c[k].blocking && (c[k].mode == FS_SEND_STANDARD), "case %u: waited", k);
        s.done = (st != FS_INPROGRESS);
        memset(rb, 0, sizeof(rb));
        recv_msg(&r, 0, 1, c[k].tag, rb, sizeof(rb));
        progress_all();
        cr_assert(r.done, "case %u: receive", k);
        cr_expect(check(rb, sizeof(rb), (int)k), "case %u: payload", k);
    }
}

/* An immediate send from engine 1 to engine 0 on tag 3. */
static fs_status_t try_send(void *buf, size_t len)
{
    fs_send_t t;

    t.super.host_flags = 0;
    return fs_send_try(&t, comm[1], 0, 3, buf, len);
}

/* A size the transport refused immediately and then, in the very next send,
 * sent inline is not offered immediately again: an isend of it costs one
 * transport call, not two.  A next send of another size, or one that does
 * not go out inline (a rendezvous, a full transport), teaches nothing, and
 * a refusal it settled does not linger for a later send. */
Test(engine, immediate_send_limit_is_learned)
{
    static uint8_t mid[200], big[8000], rmid[200], rbig[8000];
    struct fs_tl *tl = eps[1][0]->tl_ep->self_tl;
    uint8_t a = 7, x;
    treq_t s, r;

    fill(mid, sizeof(mid), 3);
    fill(big, sizeof(big), 4);
    cr_expect_eq(try_send(mid, sizeof(mid)), FS_ERR_AGAIN);
    cr_expect_eq(send_msg(&r, 1, 0, 3, &a, 1, FS_SEND_STANDARD), FS_OK);
    cr_expect_eq(try_send(&a, 1), FS_OK, "an inline send of another size taught a limit");

    cr_expect_eq(try_send(mid, sizeof(mid)), FS_ERR_AGAIN);
    cr_expect_eq(tl->imm_refusals, 2);
    send_msg(&s, 1, 0, 3, big, sizeof(big), FS_SEND_STANDARD);   /* rendezvous */
    cr_expect_eq(send_msg(&r, 1, 0, 3, mid, sizeof(mid), FS_SEND_STANDARD), FS_OK);
    cr_expect_eq(try_send(mid, sizeof(mid)), FS_ERR_AGAIN);
    cr_expect_eq(tl->imm_refusals, 3, "a refusal settled by a rendezvous taught a limit later");

    cr_expect_eq(send_msg(&r, 1, 0, 3, mid, sizeof(mid), FS_SEND_STANDARD), FS_OK);
    cr_expect_eq(try_send(mid, sizeof(mid)), FS_ERR_AGAIN);
    cr_expect_eq(tl->imm_refusals, 3, "the refused size was offered again");
    cr_expect_eq(try_send(&a, 1), FS_OK, "a small send is still immediate");

    progress_all();
    for (int i = 0; i < 2; ++i) {
        x = 0;
        cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_OK);
        cr_expect_eq(x, 7);
    }
    recv_msg(&r, 0, 1, 3, rbig, sizeof(rbig));
    progress_all();
    cr_expect(r.done && s.done && check(rbig, sizeof(rbig), 4));
    for (int i = 0; i < 2; ++i) {
        memset(rmid, 0, sizeof(rmid));
        cr_expect_eq(recv_msg(&r, 0, 1, 3, rmid, sizeof(rmid)), FS_OK);
        cr_expect(check(rmid, sizeof(rmid), 3));
    }
    x = 0;
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_OK);
    cr_expect_eq(x, 7);
}

Test(engine, immediate_send_that_cannot_finish_leaves_no_trace)
{
    static uint8_t big[8000], rbig[8000];
    uint8_t a = 1, b = 2, x = 0, y = 0;
    treq_t s, r;
    fs_send_t tryreq;

    fill(big, sizeof(big), 9);
    tryreq.super.host_flags = 0;
    cr_expect_eq(fs_send_try(&tryreq, comm[1], 0, 3, big, sizeof(big)), FS_ERR_AGAIN,
                 "a rendezvous is not immediate");
    cr_expect_eq(fs_send_try(&tryreq, comm[1], 0, 3, &a, 1), FS_OK);
    send_msg(&s, 1, 0, 3, big, sizeof(big), FS_SEND_STANDARD);
    cr_expect_eq(fs_send_try(&tryreq, comm[1], 0, 3, &b, 1), FS_OK);
    progress_all();
    /* in send order, nothing lost or taken as a duplicate */
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_OK);
    cr_expect_eq(x, 1);
    recv_msg(&r, 0, 1, 3, rbig, sizeof(rbig));
    progress_all();
    cr_expect(r.done && s.done);
    cr_expect(check(rbig, sizeof(rbig), 9));
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &y, 1), FS_OK);
    cr_expect_eq(y, 2);
    cr_expect_eq(fs_engine_stats(eng[0])->dropped_malformed, 0);
}

/* What an immediate send does not take goes the general way, which gives
 * the failure rules' errors and the long header: a revoked communicator,
 * collectives off (a negative tag), a context id or tag beyond the short
 * header.  Nothing is sent and no sequence number is spent. */
Test(engine, immediate_send_leaves_failure_rules_and_long_headers_to_the_general_way)
{
    struct fs_tl *tl = eps[1][0]->tl_ep->self_tl;
    fs_comm_t *wide[NENG];
    uint8_t a = 5, x = 0;
    int sent, i;
    treq_t s, r;
    fs_send_t t;

    t.super.host_flags = 0;
    for (i = 0; i < NENG; ++i) {
        make_comm(i, 70000, &wide[i]);
    }
    sent = tl->sent;
    cr_expect_eq(fs_send_try(&t, wide[1], 0, 3, &a, 1), FS_ERR_AGAIN, "context id too wide");
    cr_expect_eq(fs_send_try(&t, comm[1], 0, 40000, &a, 1), FS_ERR_AGAIN, "tag too wide");
    fs_comm_fail_collectives(comm[1]);
    cr_expect_eq(fs_send_try(&t, comm[1], 0, -5, &a, 1), FS_ERR_AGAIN, "collectives off");
    cr_expect_eq(tl->sent, sent, "nothing sent");
    cr_expect_eq(send_msg(&s, 1, 0, -5, &a, 1, FS_SEND_STANDARD), FS_ERR_COLL_INACTIVE);

    cr_expect_eq(send_msg(&s, 1, 0, 3, &a, 1, FS_SEND_STANDARD), FS_OK);
    progress_all();
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &x, 1), FS_OK, "in order: no sequence number spent");
    cr_expect_eq(x, 5);

    fs_send_prepare(&s.u.s, wide[1], 0, 3, FS_SEND_STANDARD);   /* the long header */
    fs_buf_set_contig(&s.u.s.buf, &a, 1);
    cr_expect_eq(fs_send_start(&s.u.s), FS_OK);
    progress_all();
    x = 0;
    fs_recv_prepare(&r.u.r, wide[0], 1, 3);
    fs_buf_set_contig(&r.u.r.buf, &x, 1);
    cr_expect_eq(fs_recv_start(&r.u.r), FS_OK);
    cr_expect_eq(x, 5);
    cr_expect_eq(r.u.r.tag_out, 3);

    cr_assert_eq(fs_comm_revoke(comm[1]), FS_OK);
    sent = tl->sent;
    cr_expect_eq(fs_send_try(&t, comm[1], 0, 3, &a, 1), FS_ERR_AGAIN, "revoked");
    cr_expect_eq(tl->sent, sent, "nothing sent on a revoked communicator");
}

/* A transport that keeps an immediate send in flight (it promised not to)
 * has still sent it: fs_send_try reports it in flight, tracked like any
 * send, instead of a refusal after which the caller would send the message
 * a second time.  The receiver gets it once, in order, and its request
 * completes when the transport lets it go. */
Test(engine, immediate_send_kept_in_flight_is_not_sent_twice)
{
    uint8_t a = 1, b = 2, x = 0, y = 0, z = 0;
    struct fs_tl *tl = eps[1][0]->tl_ep->self_tl;
    treq_t t, r;

    memset(&t, 0, sizeof(t));
    tl->imm_in_flight = 1;
    cr_expect_eq(fs_send_try(&t.u.s, comm[1], 0, 3, &a, 1), FS_INPROGRESS);
    cr_expect_eq(tl->sent, 1, "sent once");
    cr_expect_eq(tl->imm_refusals, 0, "not taken for a refusal");
    cr_expect_eq(try_send(&b, 1), FS_OK, "the next one goes out as usual");
    progress_all();
    cr_expect_not(t.done, "in flight until received");
    recv_msg(&r, 0, 1, 3, &x, 1);
    progress_all();
    cr_expect(r.done);
    cr_expect_eq(x, 1);
    cr_expect(t.done && fs_req_idle(&t.u.s.super), "its request completes");
    cr_expect_eq(t.u.s.super.status, FS_OK);
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &y, 1), FS_OK);
    cr_expect_eq(y, 2);
    cr_expect_eq(recv_msg(&r, 0, 1, 3, &z, 1), FS_INPROGRESS, "no duplicate");
    fs_recv_cancel(&r.u.r);
}

/* Issue 10, item 6: a peer of another failstop wire version (or anything
 * that is not a failstop address) is refused at wire-up, by name. */
Test(engine, a_peer_of_another_wire_version_is_refused)
{
    const void *addr;
    size_t len;
    uint8_t copy[256];
    fs_hdr_addr_t pre;
    fs_ep_t *ep = NULL;

    cr_assert_eq(fs_engine_address(eng[1], &addr, &len), FS_OK);
    cr_assert_leq(len, sizeof(copy));
    memcpy(copy, addr, len);
    memcpy(&pre, copy, sizeof(pre));
    cr_expect_eq(pre.magic, FS_WIRE_MAGIC);
    cr_expect_eq(pre.version, FS_WIRE_VERSION);
    pre.version += 1;
    memcpy(copy, &pre, sizeof(pre));
    cr_expect_eq(fs_engine_ep_create(eng[0], 77, NULL, copy, len, &ep), FS_ERR_UNSUPPORTED);
    pre.version -= 1;
    pre.magic ^= 0x100;
    memcpy(copy, &pre, sizeof(pre));
    cr_expect_eq(fs_engine_ep_create(eng[0], 77, NULL, copy, len, &ep), FS_ERR_PROTO);
    cr_expect_eq(fs_engine_ep_create(eng[0], 77, NULL, addr, sizeof(pre) - 1, &ep),
                 FS_ERR_PROTO);
    cr_expect_null(ep);
    /* the address as published works */
    cr_expect_eq(fs_engine_ep_create(eng[0], 77, NULL, addr, len, &ep), FS_OK);
}

/* Found by fuzzing (tests/fuzz/fuzz_am.c): a peer announces one message
 * (BYE), then sends one out of order, as a rendezvous.  Counting it
 * completes the departure, which discards what waits for a gap -- the
 * message just parked, whose descriptor the upcall had claimed to keep.
 * The upcall must give it back to the transport (FS_OK), not leak it;
 * teardown checks the fake transport's count of contract breaches. */
Test(engine, a_message_kept_then_dropped_in_its_upcall_goes_back)
{
    fs_hdr_ctrl_t bye = {.type = FS_CTRL_BYE, .sender = 1, .arg = 1};
    fs_hdr_match_t hdr = {.cid = CID, .tag = 1, .src = 1, .seq = 1};
    static uint8_t payload[5000];
    fs_tl_t *tl = eng[0]->tl;
    fake_msg_t *m;

    m = fake_msg_new(&bye, sizeof(bye), 0);
    m->am_id = FS_AM_CTRL;
    m->data  = malloc(1);
    tl->inbox[tl->ninbox++] = m;
    m = fake_msg_new(&hdr, sizeof(hdr), sizeof(payload));
    m->am_id     = FS_AM_MATCH;
    m->rndv      = 1;
    m->data      = payload;
    m->sender_tl = eng[1]->tl;
    tl->inbox[tl->ninbox++] = m;
    progress_all();
    cr_expect_eq(tl->violations, 0, "released in its upcall, yet kept");
}
