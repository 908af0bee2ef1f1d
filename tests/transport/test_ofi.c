/* The OFI transport against libfabric itself (no Open MPI): two transports
 * in one process over a real provider (shm; FS_TEST_OFI_PROVIDER chooses
 * another), and the contract of tl.h as the engine relies on it: eager
 * messages whole in the upcall, failstop's own rendezvous fetched,
 * truncated, dropped or cancelled, and a forced close that ends what is in
 * flight from progress, never inside the call. */
#include <criterion/criterion.h>

#include "transport/tl.h"
#include "transport/ofi_int.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct side {
    fs_tl_t     *tl;
    unsigned     upcalls;
    unsigned     am_id;
    uint8_t      hdr[64];
    size_t       hdr_len;
    uint8_t      data[64 << 10];
    size_t       len;
    void        *desc;          /* a rendezvous kept */
    int          keep;          /* keep rendezvous descriptors */
    int          release_in_upcall;
} side_t;

static side_t a, b;
static fs_tl_ep_t *a_to_b;

static fs_status_t on_am(void *arg, unsigned am_id, const void *hdr, size_t hdr_len,
                         void *data, size_t len, const fs_tl_rx_t *rx)
{
    side_t *s = arg;

    ++s->upcalls;
    s->am_id   = am_id;
    s->hdr_len = hdr_len;
    s->len     = len;
    memcpy(s->hdr, hdr, hdr_len);
    if (!(rx->flags & FS_TL_RX_RNDV)) {
        memcpy(s->data, data, len);
        return FS_OK;
    }
    if (s->release_in_upcall) {
        fs_tl_ofi_ops.release(s->tl, rx->desc);
        return FS_OK;
    }
    s->desc = rx->desc;
    return s->keep ? FS_INPROGRESS : FS_OK;
}

static void on_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    (void)arg; (void)ep_user; (void)row;
}

static const fs_tl_upcalls_t upcalls = {.am_recv = on_am, .ep_error = on_ep_error};

typedef struct done {
    fs_tl_op_t  op;
    unsigned    count;
    fs_status_t status;
    size_t      length;
} done_t;

static void on_done(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    done_t *d = (done_t *)op;

    ++d->count;
    d->status = status;
    d->length = length;
}

static size_t pack_calls;

static size_t dt_pack(void *dt, size_t off, void *dst, size_t max)
{
    (void)dt; (void)off; (void)dst;
    ++pack_calls;
    return max;
}

static size_t dt_unpack(void *dt, size_t off, const void *src, size_t len)
{
    (void)dt; (void)off; (void)src;
    return len;
}

static const fs_dt_ops_t dt_ops = {dt_pack, dt_unpack};

static void start_prov(side_t *s, const char *prov)
{
    fs_tl_config_t cfg;

    memset(&cfg, 0, sizeof(cfg));
    cfg.dt_ops        = &dt_ops;
    cfg.estimated_eps = 2;
    cfg.ofi_provider  = prov;
    cr_assert_eq(fs_tl_ofi_ops.init(&cfg, &upcalls, s, &s->tl), FS_OK);
}

static void start(side_t *s)
{
    const char *prov = getenv("FS_TEST_OFI_PROVIDER");

    start_prov(s, prov ? prov : "shm");
}

static void setup(void)
{
    const void *addr;
    size_t len;

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    start(&a);
    start(&b);
    cr_assert_eq(fs_tl_ofi_ops.address(b.tl, &addr, &len), FS_OK);
    cr_assert_eq(fs_tl_ofi_ops.ep_create(a.tl, addr, len, &b, &a_to_b), FS_OK);
}

static void teardown(void)
{
    fs_tl_ofi_ops.fini(a.tl);
    fs_tl_ofi_ops.fini(b.tl);
}

/* Progress both sides until *flag reaches want (or 5 s pass). */
static void progress_until(const unsigned *flag, unsigned want)
{
    struct timespec t0, t;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        fs_tl_ofi_ops.progress(a.tl);
        fs_tl_ofi_ops.progress(b.tl);
        clock_gettime(CLOCK_MONOTONIC, &t);
    } while ((*flag < want) && (t.tv_sec - t0.tv_sec < 5));
}

static void progress_n(int n)
{
    while (n-- > 0) {
        fs_tl_ofi_ops.progress(a.tl);
        fs_tl_ofi_ops.progress(b.tl);
    }
}

static fs_status_t send_bytes(const void *p, size_t len, unsigned flags, done_t *d)
{
    static const uint32_t hdr[4] = {7, 8, 9, 10};
    fs_buf_t buf;

    fs_buf_set_contig(&buf, (void *)p, len);
    d->op.cb = on_done;
    return fs_tl_ofi_ops.am_send(a.tl, a_to_b, FS_AM_CTRL, hdr, sizeof(hdr), &buf,
                                 flags, &d->op);
}

TestSuite(ofi, .init = setup, .fini = teardown, .timeout = 30);

Test(ofi, an_eager_message_arrives_whole_in_the_upcall)
{
    const char msg[] = "eager payload";
    done_t d = {0};

    cr_assert_eq(send_bytes(msg, sizeof(msg), 0, &d), FS_INPROGRESS,
                 "an eager send completes when the provider says it has left");
    cr_expect_eq(d.count, 0);
    progress_until(&b.upcalls, 1);
    progress_until(&d.count, 1);
    cr_expect_eq(d.status, FS_OK);
    cr_assert_eq(b.upcalls, 1);
    cr_expect_eq(b.am_id, FS_AM_CTRL);
    cr_expect_eq(b.hdr_len, 16);
    cr_expect_eq(((uint32_t *)b.hdr)[3], 10);
    cr_assert_eq(b.len, sizeof(msg));
    cr_expect_str_eq((char *)b.data, msg);
}

static uint8_t big[48 << 10];

static void fill(uint8_t *p, size_t len)
{
    size_t i;

    for (i = 0; i < len; ++i) {
        p[i] = (uint8_t)(i * 7 + 3);
    }
}

/* a sends `big` (a rendezvous), b is offered it and starts fetching it
 * into the first cap bytes of b.data, pre-filled with pattern. */
static void start_fetch(size_t cap, int pattern, done_t *d, done_t *f)
{
    fs_buf_t rbuf;

    fill(big, sizeof(big));
    b.keep = 1;
    cr_assert_eq(send_bytes(big, sizeof(big), 0, d), FS_INPROGRESS);
    progress_until(&b.upcalls, 1);
    cr_assert_not_null(b.desc, "the receiver was offered a rendezvous");
    cr_expect_eq(b.len, sizeof(big));
    progress_n(100);
    cr_expect_eq(d->count, 0, "the send waits for its receiver");
    memset(b.data, pattern, sizeof(b.data));
    fs_buf_set_contig(&rbuf, b.data, cap);
    f->op.cb = on_done;
    cr_assert_eq(fs_tl_ofi_ops.recv_data(b.tl, b.desc, &rbuf, sizeof(big), &f->op),
                 FS_INPROGRESS);
}

Test(ofi, a_rendezvous_is_fetched_into_the_receive_buffer_and_completes_both_sides)
{
    done_t d = {0}, f = {0};

    start_fetch(sizeof(b.data), 0, &d, &f);
    progress_until(&f.count, 1);
    progress_until(&d.count, 1);
    cr_assert_eq(f.count, 1);
    cr_expect_eq(f.status, FS_OK);
    cr_expect_eq(memcmp(b.data, big, sizeof(big)), 0, "payload intact");
    cr_expect_eq(d.count, 1);
    cr_expect_eq(d.status, FS_OK);
}

Test(ofi, a_truncating_fetch_asks_only_for_what_fits)
{
    done_t d = {0}, f = {0};

    start_fetch(20000, 0xee, &d, &f);
    progress_until(&d.count, 1);
    progress_until(&f.count, 1);
    cr_expect_eq(f.status, FS_OK);
    cr_expect_eq(memcmp(b.data, big, 20000), 0);
    cr_expect_eq(b.data[20000], 0xee, "nothing written past the buffer");
    cr_expect_eq(d.status, FS_OK);
}

Test(ofi, a_rendezvous_dropped_in_its_upcall_completes_the_sender_once)
{
    done_t d = {0};
    int i;

    b.release_in_upcall = 1;
    for (i = 0; i < 10; ++i) {
        cr_assert_eq(send_bytes(big, sizeof(big), FS_TL_SEND_RNDV, &d), FS_INPROGRESS);
        progress_until(&d.count, (unsigned)i + 1);
    }
    progress_n(1000);
    cr_expect_eq(b.upcalls, 10);
    cr_expect_eq(d.count, 10, "each send completed once");
    cr_expect_eq(d.status, FS_OK);
}

Test(ofi, a_cancelled_fetch_ends_from_progress_and_later_fragments_are_dropped)
{
    done_t d = {0}, f = {0};

    start_fetch(sizeof(b.data), 0, &d, &f);
    fs_tl_ofi_ops.cancel(b.tl, &f.op);
    cr_expect_eq(f.count, 0, "no callback inside cancel");
    progress_until(&d.count, 1);
    progress_n(100);
    cr_expect_eq(f.count, 1);
    cr_expect_eq(f.status, FS_ERR_CANCELED);
    cr_expect_eq(b.data[0], 0, "the buffer went back to its owner untouched");
    cr_expect_eq(b.data[sizeof(big) - 1], 0);
}

Test(ofi, a_forced_close_ends_a_waiting_send_from_progress)
{
    done_t d = {0}, c = {0};

    b.keep = 1;                     /* b holds the descriptor, never fetches */
    cr_assert_eq(send_bytes(big, sizeof(big), 0, &d), FS_INPROGRESS);
    progress_until(&b.upcalls, 1);
    c.op.cb = on_done;
    cr_assert_eq(fs_tl_ofi_ops.ep_close(a.tl, a_to_b, 1, &c.op), FS_OK);
    cr_expect_eq(d.count, 0, "no callback inside the close");
    progress_n(10);
    cr_expect_eq(d.count, 1);
    cr_expect_eq(d.status, FS_ERR_CANCELED);
    fs_tl_ofi_ops.release(b.tl, b.desc);    /* its drop finds nothing waiting */
    progress_n(100);
    cr_expect_eq(d.count, 1, "completed once");
}

Test(ofi, a_flushing_close_waits_for_the_receiver_to_take_or_drop_the_message)
{
    done_t d = {0}, c = {0};

    b.keep = 1;
    cr_assert_eq(send_bytes(big, sizeof(big), 0, &d), FS_INPROGRESS);
    progress_until(&b.upcalls, 1);
    c.op.cb = on_done;
    cr_assert_eq(fs_tl_ofi_ops.ep_close(a.tl, a_to_b, 0, &c.op), FS_INPROGRESS);
    progress_n(100);
    cr_expect_eq(c.count, 0, "the rendezvous is still out");
    fs_tl_ofi_ops.release(b.tl, b.desc);
    progress_until(&c.count, 1);
    cr_expect_eq(d.count, 1);
    cr_expect_eq(c.count, 1);
}

/* Ids, not pointers, name rendezvous state on the wire: a clear-to-send or
 * a fragment naming none (it ended, or the id is forged) is dropped, and
 * the transport goes on. */
Test(ofi, messages_naming_no_rendezvous_are_dropped)
{
    fs_ofi_cts_t cts;
    fs_ofi_data_t data;
    uint8_t junk[40];
    const char msg[] = "after";
    done_t d = {0};

    memset(&cts, 0, sizeof(cts));
    cts.w.type = FS_OFI_CTS;
    cts.sid    = 0x500000003ull;
    cts.want   = 100;
    fs_ofi_rx_cts(a.tl, (const uint8_t *)&cts, sizeof(cts));
    fs_ofi_rx_cts(a.tl, (const uint8_t *)&cts, sizeof(cts) - 1);
    memset(&data, 0, sizeof(data));
    data.w.type = FS_OFI_DATA;
    data.rid    = 12345;
    memset(junk, 0, sizeof(junk));
    memcpy(junk, &data, sizeof(data));
    fs_ofi_rx_data(b.tl, junk, sizeof(junk));
    cr_expect_eq(a.tl->warned, 1, "only the malformed one is reported");
    cr_expect_eq(b.upcalls, 0);
    cr_assert_eq(send_bytes(msg, sizeof(msg), 0, &d), FS_INPROGRESS);
    progress_until(&b.upcalls, 1);
    cr_expect_str_eq((char *)b.data, msg);
}

/* Over a connection-based provider one side of each pair connects (ofi.c,
 * fs_ofi_connect): the side with the higher address holds its sends until
 * the other side's HELLO has arrived (its 0.5 s fallback is moved out of
 * reach here, so only the HELLO can free the send). */
Test(ofi_net, the_acceptor_sends_once_the_connectors_hello_arrived, .timeout = 30)
{
    side_t *acc, *con;
    fs_tl_ep_t *a_b, *b_a, *acc_ep;
    const void *addr;
    size_t len;
    const char msg[] = "held";
    done_t d = {0};

    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    start_prov(&a, "net");
    start_prov(&b, "net");
    cr_assert_eq(fs_tl_ofi_ops.address(b.tl, &addr, &len), FS_OK);
    cr_assert_eq(fs_tl_ofi_ops.ep_create(a.tl, addr, len, &b, &a_b), FS_OK);
    cr_assert_eq(fs_tl_ofi_ops.address(a.tl, &addr, &len), FS_OK);
    cr_assert_eq(fs_tl_ofi_ops.ep_create(b.tl, addr, len, &a, &b_a), FS_OK);
    cr_assert_neq(a_b->hold, b_a->hold, "exactly one side holds");
    acc    = a_b->hold ? &a : &b;
    con    = a_b->hold ? &b : &a;
    acc_ep = a_b->hold ? a_b : b_a;
    cr_expect(a_b->hold ? b_a->hello_sent : a_b->hello_sent, "the other side connected");
    acc_ep->hold_until += 100;      /* no fallback within the test: only the HELLO frees it */
    {
        fs_buf_t buf;
        static const uint32_t hdr[4] = {1, 2, 3, 4};

        fs_buf_set_contig(&buf, (void *)msg, sizeof(msg));
        d.op.cb = on_done;
        cr_assert_eq(fs_tl_ofi_ops.am_send(acc->tl, acc_ep, FS_AM_CTRL, hdr, sizeof(hdr),
                                           &buf, 0, &d.op), FS_INPROGRESS);
    }
    progress_until(&con->upcalls, 1);
    cr_assert_eq(con->upcalls, 1, "the held send left when the HELLO came");
    cr_expect_str_eq((char *)con->data, msg);
    cr_expect_eq(acc_ep->hello_seen, 1);
    fs_tl_ofi_ops.fini(a.tl);
    fs_tl_ofi_ops.fini(b.tl);
}
