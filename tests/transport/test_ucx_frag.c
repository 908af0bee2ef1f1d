/* The UCX transport's pushed fragments (src/transport/ucx_frag.c) against
 * UCX itself: two transports in one process.  A medium message reaches the
 * engine once, as a descriptor whose payload comes into this process; it
 * lands whole in a buffer fetched inside the upcall, before or after its
 * fragments arrived, truncated or not; a receive cancelled midway gets no
 * more writes; released and dropped ones give every descriptor back to UCX;
 * fragments that fit nothing are dropped, not placed. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "transport/ucx_int.h"
#include "transport/ucx_pair.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef enum { KEEP, FETCH, RELEASE } mode_t_;

typedef struct side {
    fs_tl_t     *tl;
    mode_t_      mode;
    unsigned     upcalls;
    unsigned     flags;
    size_t       len;
    void        *desc;
    fs_buf_t     buf;           /* FETCH: where the upcall fetches to */
    fs_tl_op_t   op;
    unsigned     done;
    fs_status_t  status;
} side_t;

static side_t a, b;
static fs_tl_ep_t *a_to_b;
static unsigned send_done;

static void on_recv_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    side_t *s = (side_t *)((char *)op - offsetof(side_t, op));

    (void)length;
    ++s->done;
    s->status = status;
}

static fs_status_t on_am(void *arg, unsigned am_id, const void *hdr, size_t hdr_len,
                         void *data, size_t len, const fs_tl_rx_t *rx)
{
    side_t *s = arg;
    fs_status_t st;

    (void)am_id; (void)hdr; (void)hdr_len; (void)data;
    ++s->upcalls;
    s->flags = rx->flags;
    s->len   = len;
    s->desc  = rx->desc;
    if (!(rx->flags & FS_TL_RX_RNDV) || (s->mode == KEEP)) {
        return (rx->flags & FS_TL_RX_RNDV) ? FS_INPROGRESS : FS_OK;
    }
    if (s->mode == RELEASE) {
        fs_tl_ucx_ops.release(s->tl, rx->desc);
        return FS_OK;
    }
    s->op.cb = on_recv_done;
    st = fs_tl_ucx_ops.recv_data(s->tl, rx->desc, &s->buf, len, &s->op);
    if (st != FS_INPROGRESS) {
        on_recv_done(&s->op, st, len);
    }
    return FS_OK;
}

static void on_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    (void)arg; (void)ep_user; (void)row;
}

static const fs_tl_upcalls_t upcalls = {.am_recv = on_am, .ep_error = on_ep_error};

static void on_send(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op; (void)length;
    cr_expect_eq(status, FS_OK);
    ++send_done;
}

static void setup(void)
{
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    send_done = 0;
    a.tl   = ucx_pair_start(&upcalls, &a, 128, 64 << 10);
    b.tl   = ucx_pair_start(&upcalls, &b, 128, 64 << 10);
    a_to_b = ucx_pair_connect(a.tl, b.tl, &b);
}

static void progress_for(double secs)
{
    ucx_pair_progress(a.tl, b.tl, secs);
}

static uint8_t src[64 << 10], dst[(64 << 10) + 64];

/* Sends len bytes of a pattern from a to b and progresses until b saw it
 * and a's send completed (both bounded by the suite's timeout). */
static void send_pattern(size_t len, unsigned flags)
{
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_tl_op_t op = {.cb = on_send};
    unsigned before = send_done, seen = b.upcalls;
    fs_buf_t buf;
    size_t i;

    for (i = 0; i < len; ++i) {
        src[i] = (uint8_t)(i * 7 + len);
    }
    fs_buf_set_contig(&buf, src, len);
    if (fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf, flags,
                              &op) == FS_OK) {
        ++send_done;
    }
    while ((send_done == before) || (b.upcalls == seen)) {
        progress_for(0.001);
    }
}

/* Ends both transports: UCX prints (to the redirected stdout and stderr)
 * a descriptor that was not given back to its pool. */
static void finish(void)
{
    char out[4096];
    size_t n;

    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    fflush(stdout);
    fflush(stderr);
    n = fread(out, 1, sizeof(out) - 1, cr_get_redirected_stdout());
    n += fread(out + n, 1, sizeof(out) - 1 - n, cr_get_redirected_stderr());
    out[n] = '\0';
    cr_expect_eq(n, 0, "UCX complained: %s", out);
}

TestSuite(ucx_frag, .init = setup, .timeout = 30);

Test(ucx_frag, a_medium_message_lands_whole_in_a_buffer_fetched_in_its_upcall)
{
    const size_t lens[] = {b.tl->frag.min, 16000, 16001, 40000, 64 << 10};
    size_t i;

    cr_redirect_stdout();
    cr_redirect_stderr();
    b.mode = FETCH;
    fs_buf_set_contig(&b.buf, dst, sizeof(dst));
    for (i = 0; i < sizeof(lens) / sizeof(lens[0]); ++i) {
        memset(dst, 0xEE, sizeof(dst));
        b.done = 0;
        send_pattern(lens[i], FS_TL_SEND_WAITED);
        while (b.done == 0) {
            progress_for(0.001);
        }
        cr_expect_eq(b.flags, FS_TL_RX_RNDV | FS_TL_RX_PERSISTENT, "%zu B: flags %#x",
                     lens[i], b.flags);
        cr_expect_eq(b.len, lens[i]);
        cr_expect_eq(b.status, FS_OK);
        cr_expect(memcmp(dst, src, lens[i]) == 0, "%zu B: payload differs", lens[i]);
        cr_expect_eq(dst[lens[i]], 0xEE, "%zu B: written past the message", lens[i]);
    }
    cr_expect_eq(b.upcalls, 5, "one upcall per message");
    finish();
}

Test(ucx_frag, one_segment_eager_nonblocking_or_synchronous_rendezvous)
{
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_tl_op_t op = {.cb = on_send};
    fs_buf_t buf;

    cr_redirect_stdout();
    cr_redirect_stderr();
    b.mode = RELEASE;
    send_pattern(a.tl->frag.min - 1, FS_TL_SEND_WAITED);
    cr_expect_neq(b.flags, FS_TL_RX_RNDV | FS_TL_RX_PERSISTENT,
                  "below the minimum: one UCX message");
    cr_expect(((a.tl->frag.min == FS_UCX_FRAG_EAGER_MAX + 1) && !(b.flags & FS_TL_RX_RNDV)) ||
              (a.tl->frag.min == FS_UCX_FRAG_PIECE + 1),
              "UCX's eager carries 8 KiB, unless failstop set its rendezvous there");
    send_pattern(20000, FS_TL_SEND_RNDV);
    cr_expect_eq(b.flags, FS_TL_RX_RNDV, "a synchronous send is UCX's rendezvous");
    send_pattern(20000, 0);
    cr_expect_eq(b.flags, FS_TL_RX_RNDV, "a nonblocking send is UCX's rendezvous");
    fs_buf_set_contig(&buf, src, 20000);
    cr_assert_eq(fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                                       FS_TL_SEND_IMM | FS_TL_SEND_WAITED, &op), FS_ERR_AGAIN);
    progress_for(0.05);
    cr_expect_eq(b.upcalls, 3, "an immediate send of fragments sends nothing");
    finish();
}

Test(ucx_frag, a_message_kept_then_fetched_whole_or_truncated)
{
    void *desc;

    cr_redirect_stdout();
    cr_redirect_stderr();
    b.mode = KEEP;
    send_pattern(50000, FS_TL_SEND_WAITED);
    progress_for(0.05);                 /* every fragment is here now */
    desc = b.desc;
    memset(dst, 0xEE, sizeof(dst));
    fs_buf_set_contig(&b.buf, dst, 30000);
    b.op.cb = on_recv_done;
    cr_assert_eq(fs_tl_ucx_ops.recv_data(b.tl, desc, &b.buf, 50000, &b.op), FS_OK,
                 "a complete message is fetched at once");
    cr_expect(memcmp(dst, src, 30000) == 0, "payload differs");
    cr_expect_eq(dst[30000], 0xEE, "written past the buffer");
    send_pattern(50000, FS_TL_SEND_WAITED);             /* kept, released before fetching */
    progress_for(0.05);
    fs_tl_ucx_ops.release(b.tl, b.desc);
    send_pattern(50000, FS_TL_SEND_WAITED);             /* kept at the end: fini gives it back */
    finish();
}

/* Starts both transports again, b taking one fragment a progress call
 * (mode: b's; FETCH fetches to dst), and sends 60000 bytes of src from a as
 * a blocking send (fragments) until b saw its first fragment only. */
static void send_first_fragment_only(mode_t_ mode)
{
    static uint32_t hdr[4] = {1, 2, 3, 4};
    static fs_tl_op_t op = {.cb = on_send};
    fs_buf_t buf;
    unsigned seen;
    int i;

    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    setenv("UCX_MM_FIFO_MAX_POLL", "1", 1);
    setenv("UCX_TCP_MAX_POLL", "1", 1);
    setup();
    b.mode = mode;
    fs_buf_set_contig(&b.buf, dst, sizeof(dst));
    fs_buf_set_contig(&buf, src, 60000);
    if (fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                              FS_TL_SEND_WAITED, &op) == FS_OK) {
        ++send_done;
    }
    seen = b.upcalls;
    for (i = 0; (i < 1000000) && (b.upcalls == seen); ++i) {
        fs_tl_ucx_ops.progress(a.tl);   /* wire-up */
        fs_tl_ucx_ops.progress(b.tl);   /* until the first fragment only */
    }
    cr_assert_eq(b.upcalls, seen + 1);
}

Test(ucx_frag, a_receive_cancelled_midway_gets_no_more_data)
{
    int i;

    cr_redirect_stdout();
    cr_redirect_stderr();
    memset(dst, 0xEE, sizeof(dst));
    memset(src, 0x11, sizeof(src));
    send_first_fragment_only(FETCH);
    cr_assert_eq(b.done, 0, "all fragments came in one progress call");
    fs_tl_ucx_ops.cancel(b.tl, &b.op);
    cr_expect_eq(b.done, 1);
    cr_expect_eq(b.status, FS_ERR_CANCELED);
    cr_expect(!b.op.busy);
    memset(dst, 0xEE, sizeof(dst));
    progress_for(0.05);
    for (i = 0; i < 60000; ++i) {
        if (dst[i] != 0xEE) {
            cr_expect(0, "byte %d written after the cancel", i);
            break;
        }
    }
    b.done = 0;                         /* the transport goes on */
    send_pattern(30000, FS_TL_SEND_WAITED);
    while (b.done == 0) {
        progress_for(0.001);
    }
    cr_expect(memcmp(dst, src, 30000) == 0);
    finish();
}

/* Dead-peer rule (a) asks whether a kept message's payload is all here: a
 * pushed message is once its last fragment arrived, a UCP rendezvous never
 * (its payload stays with the sender). */
Test(ucx_frag, a_kept_message_is_whole_once_its_last_fragment_arrived)
{
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_tl_op_t op = {.cb = on_send};
    fs_buf_t buf;
    unsigned seen;

    cr_redirect_stdout();
    cr_redirect_stderr();
    send_first_fragment_only(KEEP);
    cr_expect(!fs_tl_ucx_ops.desc_whole(b.tl, b.desc), "whole after its first fragment");
    progress_for(0.05);
    cr_expect(fs_tl_ucx_ops.desc_whole(b.tl, b.desc), "not whole with every fragment here");
    fs_tl_ucx_ops.release(b.tl, b.desc);
    fs_buf_set_contig(&buf, src, 60000);
    seen = b.upcalls;                   /* nonblocking: UCP's rendezvous */
    cr_assert_eq(fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                                       0, &op), FS_INPROGRESS);
    while (b.upcalls == seen) {
        progress_for(0.001);
    }
    cr_assert(b.flags & FS_TL_RX_RNDV);
    cr_expect(!fs_tl_ucx_ops.desc_whole(b.tl, b.desc), "a UCP rendezvous called whole");
    fs_tl_ucx_ops.release(b.tl, b.desc);
    while (send_done < 2) {             /* released: its sender is done */
        progress_for(0.001);
    }
    finish();
}

/* Fragments forged on the wire: of no known message, out of sequence, a
 * first one that claims less than it carries.  Dropped and counted; a
 * receive fetching the broken message fails instead of waiting. */
Test(ucx_frag, fragments_that_fit_nothing_are_dropped)
{
    ucp_request_param_t param = {.op_attr_mask = 0};
    struct {
        fs_ucx_frag_hdr_t f;
        uint32_t engine[4];
    } first = {{42, 7, 20000}, {1, 2, 3, 4}};
    fs_ucx_frag_hdr_t next = {42, 8, 0};
    void *req;

    cr_redirect_stdout();
    cr_redirect_stderr();
    b.mode = FETCH;
    fs_buf_set_contig(&b.buf, dst, sizeof(dst));
    req = ucp_am_send_nbx(a_to_b->ep, FS_UCX_AM_FRAG_NEXT, &next, sizeof(next), src,
                          9000, &param);   /* no such message */
    cr_assert(!UCS_PTR_IS_ERR(req));
    if (req != NULL) {
        ucp_request_free(req);
    }
    req = ucp_am_send_nbx(a_to_b->ep, FS_UCX_AM_FRAG_FIRST, &first, sizeof(first), src,
                          8000, &param);
    cr_assert(!UCS_PTR_IS_ERR(req));
    if (req != NULL) {
        ucp_request_free(req);
    }
    next.msg  = 7;
    next.word = 9000;                   /* a gap: 8000 came */
    req = ucp_am_send_nbx(a_to_b->ep, FS_UCX_AM_FRAG_NEXT, &next, sizeof(next), src,
                          4000, &param);
    cr_assert(!UCS_PTR_IS_ERR(req));
    if (req != NULL) {
        ucp_request_free(req);
    }
    progress_for(0.1);
    cr_expect_eq(b.upcalls, 1, "the first fragment is a message");
    cr_expect_eq(b.done, 1, "the broken message's receive ended");
    cr_expect_eq(b.status, FS_ERR_LOCAL);
    cr_expect_eq(b.tl->frag.dropped, 2);
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    fflush(stderr);
}

/* A receiver that never reads: fragments beyond its FIFO wait inside UCX,
 * and their sends stay in flight.  Cancelling one asks UCX about its own
 * requests only (UCX leaves sends be); at the end the transport gives them
 * back to UCX without calling anybody back. */
Test(ucx_frag, sends_waiting_in_ucx_are_cancelled_and_abandoned_at_the_end)
{
    enum { N = 30 };    /* 5 fragments each: one send straddles the full FIFO */
    static fs_tl_op_t ops[N];
    uint32_t hdr[4] = {1, 2, 3, 4};
    unsigned in_flight = 0, before;
    fs_buf_t buf;
    fs_status_t st;
    int i;

    cr_redirect_stdout();
    cr_redirect_stderr();
    b.mode = RELEASE;
    send_pattern(100, 0);                   /* connected: sends go out at once */
    fs_buf_set_contig(&buf, src, 40000);
    for (i = 0; i < N; ++i) {
        ops[i].cb = on_send;
        st = fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                                   FS_TL_SEND_WAITED, &ops[i]);
        cr_assert(((st == FS_OK) && !ops[i].busy) || ((st == FS_INPROGRESS) && ops[i].busy),
                  "send %d: %d", i, st);
        in_flight += (st == FS_INPROGRESS);
        fs_tl_ucx_ops.progress(a.tl);       /* b reads nothing */
    }
    cr_assert_gt(in_flight, 0, "the FIFO (128 entries) took 150 fragments");
    cr_assert_lt(in_flight, N, "nothing went out at once");
    before = send_done;
    for (i = 0; i < N; ++i) {
        fs_tl_ucx_ops.cancel(a.tl, &ops[i]);
    }
    fs_tl_ucx_ops.progress(a.tl);
    cr_expect_eq(send_done, before, "UCX does not end a send it still holds");
    fs_tl_ucx_ops.fini(a.tl);
    cr_expect_eq(send_done, before, "no callback after the end");
    fs_tl_ucx_ops.fini(b.tl);
}
