/* The short lane's own rendezvous (src/transport/ucx_rndv.c), two UCX
 * transports in one process.  A message the lane does not take eagerly
 * (above its size, or synchronous) comes by the ring as a request alone:
 * the receiver reads the payload from the sender (process_vm_readv), and
 * the sender completes only once the receiver answered, after its read or
 * its drop.  Also: truncation reads only what fits; a sender that no longer
 * exists fails the read with the failure class (its live sender is told);
 * a blocking medium send is a rendezvous too unless it is a collective's;
 * a request naming no answer word of its ring is reported as malformed;
 * a cancelled send ends at once but keeps its answer word until answered;
 * closing the endpoint ends what still waits; out of words, or with the
 * parameter off, UCP's rendezvous carries it. */
#include <criterion/criterion.h>

#include "transport/ucx_int.h"
#include "transport/ucx_pair.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define BIG   100000u
#define WORDS FS_RING_ACKS

typedef struct side {
    fs_tl_t     *tl;
    unsigned     upcalls;
    unsigned     rndv;        /* upcalls flagged FS_TL_RX_RNDV */
    int          keep;        /* keep rendezvous descriptors */
    size_t       hdr_len;     /* the last upcall's (0: reported malformed) */
    void        *desc[2 * WORDS];
    size_t       len;
} side_t;

static side_t a, b;
static fs_tl_ep_t *a_to_b;
static uint8_t payload[BIG], got[BIG + 64];
static fs_tl_op_t ops[2 * WORDS];
static unsigned done[2 * WORDS];
static fs_status_t done_status[2 * WORDS];

static fs_status_t on_am(void *arg, unsigned am_id, const void *hdr, size_t hdr_len,
                         void *data, size_t len, const fs_tl_rx_t *rx)
{
    side_t *s = arg;

    (void)am_id; (void)hdr; (void)data;
    s->len     = len;
    s->hdr_len = hdr_len;
    if (rx->flags & FS_TL_RX_RNDV) {
        cr_assert_lt(s->rndv, 2 * WORDS);
        s->desc[s->rndv++] = rx->desc;
    }
    ++s->upcalls;
    return ((rx->flags & FS_TL_RX_RNDV) && s->keep) ? FS_INPROGRESS : FS_OK;
}

static void on_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    (void)arg; (void)ep_user; (void)row;
}

static const fs_tl_upcalls_t upcalls = {.am_recv = on_am, .ep_error = on_ep_error};

static void on_send(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)length;
    ++done[op - ops];
    done_status[op - ops] = status;
}

static fs_tl_t *start(side_t *s, int rndv)
{
    fs_tl_config_t cfg;
    fs_tl_t *tl = NULL;

    ucx_pair_config(&cfg, 256, 4096);   /* blocking sends the lane may take eagerly */
    cfg.shm_max  = 1024;
    cfg.shm_rndv = rndv;
    cr_assert_eq(fs_tl_ucx_ops.init(&cfg, &upcalls, s, &tl), FS_OK);
    return tl;
}

static void begin(int rndv)
{
    unsigned i;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(done, 0, sizeof(done));
    unsetenv("UCX_TLS");
    for (i = 0; i < BIG; ++i) {
        payload[i] = (uint8_t)(i * 13 + 5);
    }
    a.tl   = start(&a, rndv);
    b.tl   = start(&b, rndv);
    b.keep = 1;
    a_to_b = ucx_pair_connect(a.tl, b.tl, &b);
    ucx_pair_progress(a.tl, b.tl, 0.05);
}

static void setup(void)
{
    begin(1);
}

static void cleanup(void)
{
    fs_tl_op_t op = {0};

    if (a_to_b != NULL) {
        if (fs_tl_ucx_ops.ep_close(a.tl, a_to_b, 1, &op) == FS_INPROGRESS) {
            ucx_pair_progress(a.tl, b.tl, 0.1);
        }
    }
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
}

/* Sends len bytes of the payload as ops[i]; returns the transport's answer. */
static fs_status_t send_i(unsigned i, size_t len, unsigned flags)
{
    const uint8_t hdr[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    fs_buf_t buf;

    memset(&buf, 0, sizeof(buf));
    buf.ptr = payload;
    buf.len = len;
    memset(&ops[i], 0, sizeof(ops[i]));
    ops[i].cb = on_send;
    return fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf, flags,
                                 &ops[i]);
}

/* The receiver's lane alone, no UCP progress. */
static void drain_lane_only(void)
{
    int i;

    for (i = 0; i < 100; ++i) {
        fs_ucx_shm_drain(b.tl);
    }
}

static void progress_sender(void)
{
    int i;

    for (i = 0; i < 20; ++i) {
        fs_tl_ucx_ops.progress(a.tl);
    }
}

static fs_status_t fetch(void *desc, void *into, size_t len, size_t msg_len)
{
    fs_tl_op_t op = {0};
    fs_buf_t buf;

    memset(&buf, 0, sizeof(buf));
    buf.ptr = into;
    buf.len = len;
    return fs_tl_ucx_ops.recv_data(b.tl, desc, &buf, msg_len, &op);
}

TestSuite(ucx_rndv, .init = setup, .fini = cleanup, .timeout = 30);

Test(ucx_rndv, the_payload_is_read_from_the_sender_which_completes_only_then)
{
    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    cr_assert_eq(b.rndv, 1, "the request did not come by the lane");
    cr_expect_eq(b.len, BIG);
    progress_sender();
    cr_assert_eq(done[0], 0, "the send completed before its payload was read");
    cr_assert_eq(fetch(b.desc[0], got, BIG, BIG), FS_OK);
    cr_expect_eq(memcmp(got, payload, BIG), 0, "payload not intact");
    progress_sender();
    cr_assert_eq(done[0], 1);
    cr_expect_eq(done_status[0], FS_OK);
}

/* A synchronous send of a few bytes is a rendezvous too: it completes
 * once the message is taken (matched), never before. */
Test(ucx_rndv, a_small_synchronous_send_waits_for_its_read)
{
    uint8_t small[8];

    cr_assert_eq(send_i(0, 8, FS_TL_SEND_RNDV), FS_INPROGRESS);
    drain_lane_only();
    cr_assert_eq(b.rndv, 1);
    progress_sender();
    cr_assert_eq(done[0], 0);
    cr_assert_eq(fetch(b.desc[0], small, 8, 8), FS_OK);
    cr_expect_eq(memcmp(small, payload, 8), 0);
    progress_sender();
    cr_expect_eq(done[0], 1);
}

/* Medium and blocking: one copy for a point-to-point send (the latency
 * that counts), eager for a collective's (FAST: each side goes on). */
Test(ucx_rndv, a_blocking_medium_send_is_a_rendezvous_unless_a_collectives)
{
    cr_assert_eq(send_i(0, 3000, FS_TL_SEND_WAITED), FS_INPROGRESS);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 1);
    cr_expect_eq(b.rndv, 1, "a point-to-point blocking send went eagerly");
    cr_assert_eq(send_i(1, 3000, FS_TL_SEND_WAITED | FS_TL_SEND_FAST), FS_OK);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 2, "the collective's send did not come by the lane");
    cr_expect_eq(b.rndv, 1, "a collective's blocking send was a rendezvous");
    fs_tl_ucx_ops.release(b.tl, b.desc[0]);
    progress_sender();
    cr_expect_eq(done[0], 1);
}

Test(ucx_rndv, a_request_dropped_or_released_completes_its_sender)
{
    b.keep = 0;         /* dropped inside its upcall */
    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    progress_sender();
    cr_expect_eq(done[0], 1, "a dropped request left its sender waiting");
    b.keep = 1;         /* kept, released later */
    cr_assert_eq(send_i(1, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    cr_assert_eq(b.rndv, 2);
    progress_sender();
    cr_assert_eq(done[1], 0);
    fs_tl_ucx_ops.release(b.tl, b.desc[1]);
    progress_sender();
    cr_expect_eq(done[1], 1, "a released request left its sender waiting");
    cr_expect_eq(done_status[1], FS_OK);
}

Test(ucx_rndv, truncation_reads_only_what_fits)
{
    memset(got, 0xee, sizeof(got));
    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    cr_assert_eq(fetch(b.desc[0], got, 1000, BIG), FS_OK);
    cr_expect_eq(memcmp(got, payload, 1000), 0);
    cr_expect_eq(got[1000], 0xee, "wrote past the receive buffer");
    progress_sender();
    cr_expect_eq(done[0], 1);
}

/* The request names a process that no longer exists (as a sender killed
 * after sending it): the read fails with the failure class, and the
 * sender that is alive after all is told it failed. */
Test(ucx_rndv, a_vanished_sender_fails_the_read_with_the_failure_class)
{
    fs_ring_tx_t *lane = &a_to_b->lane;
    fs_ring_entry_t *e;
    pid_t dead = fork();

    cr_assert_geq(dead, 0);
    if (dead == 0) {
        _exit(0);
    }
    cr_assert_eq(waitpid(dead, NULL, 0), dead);
    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    e = &lane->ring[(lane->head - 1) & lane->mask];
    memcpy(e->bytes + e->hlen + offsetof(fs_ucx_rr_rts_t, pid), &dead, sizeof(int32_t));
    drain_lane_only();
    cr_assert_eq(b.rndv, 1);
    cr_expect_eq(fetch(b.desc[0], got, BIG, BIG), FS_ERR_PEER_FAILED);
    progress_sender();
    cr_assert_eq(done[0], 1);
    cr_expect_eq(done_status[0], FS_ERR_LOCAL);
}

/* A request whose answer word is not one of its ring's (a broken or
 * hostile sender) is never read from: it goes to the engine as a malformed
 * entry, which counts and reports it. */
Test(ucx_rndv, a_request_naming_no_word_of_its_ring_is_reported_malformed)
{
    fs_ring_tx_t *lane = &a_to_b->lane;
    uint32_t bad       = FS_RING_ACKS;
    fs_ring_entry_t *e;

    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    e = &lane->ring[(lane->head - 1) & lane->mask];
    memcpy(e->bytes + e->hlen + offsetof(fs_ucx_rr_rts_t, word), &bad, sizeof(bad));
    drain_lane_only();
    cr_assert_eq(b.upcalls, 1, "the malformed request vanished");
    cr_expect_eq(b.rndv, 0, "a malformed request was handed on as a rendezvous");
    cr_expect_eq(b.hdr_len, 0, "not reported as malformed");
    fs_tl_ucx_ops.cancel(a.tl, &ops[0]);
}

/* A cancelled send ends at once; its word is used again only once the
 * receiver answered, so that a late answer completes no other message. */
Test(ucx_rndv, a_cancelled_send_keeps_its_word_until_answered)
{
    uint64_t all = a_to_b->lane.ack_free;

    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    cr_assert_neq(a_to_b->lane.ack_free, all);
    fs_tl_ucx_ops.cancel(a.tl, &ops[0]);
    cr_assert_eq(done[0], 1);
    cr_expect_eq(done_status[0], FS_ERR_CANCELED);
    progress_sender();
    cr_expect_neq(a_to_b->lane.ack_free, all, "the word was freed before its answer");
    drain_lane_only();
    cr_assert_eq(fetch(b.desc[0], got, BIG, BIG), FS_OK);
    progress_sender();
    cr_expect_eq(a_to_b->lane.ack_free, all, "the word did not come back once answered");
    cr_expect_eq(done[0], 1, "a cancelled send completed twice");
}

Test(ucx_rndv, closing_the_endpoint_ends_a_waiting_send)
{
    fs_tl_op_t op = {0};

    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    if (fs_tl_ucx_ops.ep_close(a.tl, a_to_b, 1, &op) == FS_INPROGRESS) {
        ucx_pair_progress(a.tl, b.tl, 0.1);
    }
    a_to_b = NULL;
    cr_assert_eq(done[0], 1, "a send still waits on a closed endpoint");
    cr_expect_eq(done_status[0], FS_ERR_CANCELED);
}

/* Every word waits for an answer: the next request goes by UCP. */
Test(ucx_rndv, out_of_words_ucp_takes_it)
{
    unsigned i;

    for (i = 0; i < WORDS; ++i) {
        cr_assert_eq(send_i(i, BIG, 0), FS_INPROGRESS);
    }
    drain_lane_only();
    cr_assert_eq(b.rndv, WORDS);
    cr_assert_eq(send_i(WORDS, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    cr_expect_eq(b.upcalls, WORDS, "a request with no word went by the lane");
    ucx_pair_progress(a.tl, b.tl, 0.2);
    cr_expect_eq(b.upcalls, WORDS + 1, "UCP did not deliver it");
    for (i = 0; i <= WORDS; ++i) {
        fs_tl_ucx_ops.release(b.tl, b.desc[i]);
    }
    ucx_pair_progress(a.tl, b.tl, 0.2);
    for (i = 0; i <= WORDS; ++i) {
        cr_expect_eq(done[i], 1, "send %u", i);
    }
}

static void setup_off(void)
{
    begin(0);
}

Test(ucx_rndv_off, by_its_parameter_ucp_takes_it, .init = setup_off, .fini = cleanup,
     .timeout = 30)
{
    cr_assert_eq(send_i(0, BIG, 0), FS_INPROGRESS);
    drain_lane_only();
    cr_expect_eq(b.upcalls, 0, "went by the lane with ucx_shm_rndv 0");
    ucx_pair_progress(a.tl, b.tl, 0.2);
    cr_expect_eq(b.upcalls, 1);
    fs_tl_ucx_ops.release(b.tl, b.desc[0]);
    ucx_pair_progress(a.tl, b.tl, 0.2);
}
