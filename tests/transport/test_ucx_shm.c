/* The UCX transport's short lane (src/transport/ucx_shm.c) against UCX
 * itself: two transports in one process.  A small matching message with the
 * 8-byte header reaches the peer through the lane alone (draining the
 * lane's rings delivers it, header and payload intact, with no UCP
 * progress), with the short or the full header, and so does a medium one
 * its sender waits for; a larger or a nonblocking medium one, a control
 * message, a peer whose address names another node, and UCX_TLS without
 * shared memory all go by UCP. */
#include <criterion/criterion.h>

#include "transport/ucx_int.h"
#include "transport/ucx_pair.h"

#include <stdlib.h>
#include <string.h>

typedef struct side {
    fs_tl_t     *tl;
    unsigned     upcalls;
    unsigned     am_id;
    uint8_t      hdr[32];
    size_t       hdr_len;
    uint8_t      data[8192];
    size_t       len;
    unsigned     errors;
    unsigned     upcalls_at_error;
} side_t;

#define MEDIUM 4096u

static side_t a, b;
static fs_tl_ep_t *a_to_b;

static fs_status_t on_am(void *arg, unsigned am_id, const void *hdr, size_t hdr_len,
                         void *data, size_t len, const fs_tl_rx_t *rx)
{
    side_t *s = arg;

    ++s->upcalls;
    s->am_id   = am_id;
    s->hdr_len = hdr_len;
    memcpy(s->hdr, hdr, (hdr_len < sizeof(s->hdr)) ? hdr_len : sizeof(s->hdr));
    s->len = len;
    if (!(rx->flags & FS_TL_RX_RNDV)) {     /* else data is UCP's descriptor */
        memcpy(s->data, data, (len < sizeof(s->data)) ? len : sizeof(s->data));
    }
    return FS_OK;
}

static void on_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    side_t *s = arg;

    (void)ep_user; (void)row;
    s->upcalls_at_error = s->upcalls;
    ++s->errors;
}

static const fs_tl_upcalls_t upcalls = {.am_recv = on_am, .ep_error = on_ep_error};

static void on_send(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op; (void)length;
    cr_expect_eq(status, FS_OK);
}

static fs_tl_t *start(side_t *s, size_t shm_max)
{
    fs_tl_config_t cfg;
    fs_tl_t *tl = NULL;

    ucx_pair_config(&cfg, 64, MEDIUM);  /* the lane takes waited sends up to it */
    cfg.shm_max = shm_max;
    cr_assert_eq(fs_tl_ucx_ops.init(&cfg, &upcalls, s, &tl), FS_OK);
    return tl;
}

static void setup(void)
{
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    unsetenv("UCX_TLS");
    a.tl   = start(&a, 1024);
    b.tl   = start(&b, 1024);
    a_to_b = ucx_pair_connect(a.tl, b.tl, &b);
    ucx_pair_progress(a.tl, b.tl, 0.05);    /* UCP's wire-up */
}

/* Sends len bytes of a pattern with header hdr (hdr_len bytes); the
 * transport may keep the send in flight (ops stay valid for the test). */
static void send_flags(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id, const void *hdr,
                       size_t hdr_len, size_t len, unsigned flags)
{
    static uint8_t payload[8192];
    static fs_tl_op_t ops[256];
    static unsigned next;
    fs_tl_op_t *op = &ops[next++ % 256];
    fs_status_t st;
    fs_buf_t buf;
    size_t i;

    for (i = 0; i < len; ++i) {
        payload[i] = (uint8_t)(i * 7 + 3);
    }
    memset(&buf, 0, sizeof(buf));
    buf.ptr = payload;
    buf.len = len;
    memset(op, 0, sizeof(*op));
    op->cb = on_send;
    st = fs_tl_ucx_ops.am_send(tl, ep, am_id, hdr, hdr_len, &buf, flags, op);
    cr_assert((st == FS_OK) || (st == FS_INPROGRESS), "send: %d", st);
}

static void send_match(fs_tl_t *tl, fs_tl_ep_t *ep, unsigned am_id, const void *hdr,
                       size_t hdr_len, size_t len)
{
    send_flags(tl, ep, am_id, hdr, hdr_len, len, 0);
}

static void expect_payload(const side_t *s, size_t len)
{
    size_t i;

    cr_assert_eq(s->len, len);
    for (i = 0; i < len; ++i) {
        cr_assert_eq(s->data[i], (uint8_t)(i * 7 + 3), "byte %zu", i);
    }
}

/* Delivers what the receiver's lane holds, with no UCP progress at all. */
static void drain_lane_only(void)
{
    int i;

    for (i = 0; i < 100; ++i) {
        fs_ucx_shm_drain(b.tl);
    }
}

static void cleanup(void)
{
    fs_tl_op_t op = {0};

    ucx_pair_progress(a.tl, b.tl, 0.05);
    if (fs_tl_ucx_ops.ep_close(a.tl, a_to_b, 1, &op) == FS_INPROGRESS) {
        ucx_pair_progress(a.tl, b.tl, 0.1);
    }
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
}

TestSuite(ucx_shm, .init = setup, .fini = cleanup, .timeout = 30);

Test(ucx_shm, a_small_message_with_the_short_header_goes_by_the_lane)
{
    const uint8_t hdr[8] = {1, 2, 3, 4, 5, 6, 7, 8};

    /* inline in the ring's entry, then in its buffer, up to the lane's size */
    const size_t sizes[] = {16, FS_RING_BYTES - 8, FS_RING_BYTES - 7, 1024, 0};
    unsigned i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        memset(b.hdr, 0, sizeof(b.hdr));
        send_match(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), sizes[i]);
        drain_lane_only();
        cr_assert_eq(b.upcalls, i + 1, "the lane did not deliver %zu bytes", sizes[i]);
        cr_expect_eq(b.am_id, FS_AM_MATCH);
        cr_assert_eq(b.hdr_len, sizeof(hdr));
        cr_expect_eq(memcmp(b.hdr, hdr, sizeof(hdr)), 0);
        expect_payload(&b, sizes[i]);
    }
}

/* A receiver that does not poll fills its ring (64 entries here): the
 * messages that find it full go by UCP, none is lost. */
Test(ucx_shm, a_full_ring_sends_by_ucp)
{
    const uint8_t hdr[8] = {0};
    int i;

    for (i = 0; i < 200; ++i) {
        send_match(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), 8);
    }
    ucx_pair_progress(a.tl, b.tl, 0.2);
    cr_expect_eq(b.upcalls, 200, "%u of 200 delivered", b.upcalls);
}

Test(ucx_shm, reports_name_the_lane)
{
    char desc[256], lane[32];

    cr_assert_not_null(a.tl->shm.name);
    snprintf(lane, sizeof(lane), "%s/memory", a.tl->shm.name);
    cr_assert_eq(fs_tl_ucx_ops.ep_describe(a.tl, a_to_b, desc, sizeof(desc)), FS_OK);
    cr_expect(strstr(desc, lane) != NULL, "%s not in: %s", lane, desc);
}

/* What a peer sent by the lane before UCP reports it broken is delivered
 * before the report: the engine discards what arrives after (rule b). */
Test(ucx_shm, the_lane_is_emptied_before_an_endpoint_error_goes_up)
{
    const uint8_t hdr[8] = {0};
    fs_tl_ep_t *b_to_a = ucx_pair_connect(b.tl, a.tl, &a);
    fs_tl_op_t op      = {0};
    int i;

    ucx_pair_progress(a.tl, b.tl, 0.05);
    for (i = 0; i < 40; ++i) {      /* more than one progress call takes */
        send_match(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), 8);
    }
    fs_ucx_ep_err_cb(b_to_a, NULL, UCS_ERR_CONNECTION_RESET);
    cr_assert_eq(b.errors, 1);
    cr_expect_eq(b.upcalls_at_error, 40, "%u of 40 delivered before the error",
                 b.upcalls_at_error);
    if (fs_tl_ucx_ops.ep_close(b.tl, b_to_a, 1, &op) == FS_INPROGRESS) {
        ucx_pair_progress(a.tl, b.tl, 0.1);
    }
}

Test(ucx_shm, larger_messages_and_control_go_by_ucp)
{
    const uint8_t hdr[16] = {9};

    send_match(a.tl, a_to_b, FS_AM_MATCH, hdr, 8, 1025);
    send_match(a.tl, a_to_b, FS_AM_CTRL, hdr, 8, 16);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 0, "%u went by the lane", b.upcalls);
    ucx_pair_progress(a.tl, b.tl, 0.1);
    cr_assert_eq(b.upcalls, 2, "UCP delivered %u of 2", b.upcalls);
}

/* Above the lane's size, a blocking send (its caller waits: FS_TL_SEND_WAITED)
 * up to ucx_frag_max still goes by the lane, in the ring's data area; a
 * nonblocking one keeps UCP's single-copy rendezvous, a larger one UCP. */
Test(ucx_shm, a_medium_message_goes_by_the_lane_only_if_its_sender_waits)
{
    const uint8_t hdr[8] = {7};

    send_flags(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), MEDIUM, FS_TL_SEND_WAITED);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 1, "the lane did not deliver a waited %u bytes", MEDIUM);
    expect_payload(&b, MEDIUM);
    send_flags(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), 3000, 0);
    send_flags(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), MEDIUM + 1, FS_TL_SEND_WAITED);
    send_flags(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), 3000,
               FS_TL_SEND_WAITED | FS_TL_SEND_RNDV);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 1, "%u more went by the lane", b.upcalls - 1);
    ucx_pair_progress(a.tl, b.tl, 0.2);
    cr_assert_eq(b.upcalls, 4, "UCP delivered %u of 3", b.upcalls - 1);
}

/* Every small matching message goes by the lane, whatever its header (the
 * full one: synchronous sends, large ranks): a process killed while writing
 * into UCX's shared FIFO stops that FIFO for good (shm_ring.h). */
Test(ucx_shm, a_matching_message_with_the_full_header_goes_by_the_lane)
{
    uint8_t hdr[24];
    unsigned i;

    for (i = 0; i < sizeof(hdr); ++i) {
        hdr[i] = (uint8_t)(0x40 + i);
    }
    send_match(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), 1000);
    drain_lane_only();
    cr_assert_eq(b.upcalls, 1, "the lane did not deliver it");
    cr_assert_eq(b.hdr_len, sizeof(hdr));
    cr_expect_eq(memcmp(b.hdr, hdr, sizeof(hdr)), 0);
    expect_payload(&b, 1000);
}

Test(ucx_shm, no_lane_to_a_peer_whose_address_names_another_node_or_size)
{
    const uint8_t hdr[8] = {0};
    fs_ucx_addr_hdr_t ahdr;
    const void *addr;
    uint8_t *copy;
    fs_tl_ep_t *ep = NULL;
    fs_tl_op_t op  = {0};
    size_t len;
    int which;

    cr_assert_eq(fs_tl_ucx_ops.address(b.tl, &addr, &len), FS_OK);
    copy = malloc(len);
    for (which = 0; which < 2; ++which) {
        memcpy(copy, addr, len);
        memcpy(&ahdr, copy, sizeof(ahdr));
        cr_assert_neq(ahdr.lane_len, 0, "b has no lane");
        if (which == 0) {
            ahdr.node ^= 1;
        } else {
            ahdr.max = 512;
        }
        memcpy(copy, &ahdr, sizeof(ahdr));
        cr_assert_eq(fs_tl_ucx_ops.ep_create(a.tl, copy, len, &b, &ep), FS_OK);
        ucx_pair_progress(a.tl, b.tl, 0.05);
        b.upcalls = 0;
        send_match(a.tl, ep, FS_AM_MATCH, hdr, sizeof(hdr), 8);
        drain_lane_only();
        cr_expect_eq(b.upcalls, 0, "case %d went by the lane", which);
        ucx_pair_progress(a.tl, b.tl, 0.1);
        cr_expect_eq(b.upcalls, 1, "case %d: UCP did not deliver it", which);
        if (fs_tl_ucx_ops.ep_close(a.tl, ep, 1, &op) == FS_INPROGRESS) {
            ucx_pair_progress(a.tl, b.tl, 0.1);
        }
    }
    free(copy);
}

Test(ucx_shm, no_lane_when_ucx_tls_leaves_out_shared_memory)
{
    const uint8_t hdr[8] = {0};
    fs_tl_t *c;
    fs_tl_ep_t *ep;
    side_t sc;
    fs_tl_op_t op = {0};

    memset(&sc, 0, sizeof(sc));
    setenv("UCX_TLS", "tcp,self", 1);
    c = start(&sc, 1024);
    unsetenv("UCX_TLS");
    ep = ucx_pair_connect(c, b.tl, &b);
    ucx_pair_progress(c, b.tl, 0.1);
    send_match(c, ep, FS_AM_MATCH, hdr, sizeof(hdr), 8);
    drain_lane_only();
    cr_expect_eq(b.upcalls, 0, "it went by the lane");
    ucx_pair_progress(c, b.tl, 0.2);
    cr_expect_eq(b.upcalls, 1, "TCP did not deliver it");
    if (fs_tl_ucx_ops.ep_close(c, ep, 1, &op) == FS_INPROGRESS) {
        ucx_pair_progress(c, b.tl, 0.1);
    }
    fs_tl_ucx_ops.fini(c);
}

/* A receiver's rings share a fixed budget (4 MiB) once the node has many
 * processes (each may stream to it), so that its lane memory does not grow
 * with the node's size (issue 42), never below twice the lane's largest
 * payload (16 KiB); a collective's blocking send is eager up to
 * send_fast_local_max but at most half the area.  Per ring, when the
 * node's other processes are unknown, 1, 7, 15, 128, 200, 300 and 5000. */
Test(ucx_shm, the_data_area_per_ring_shrinks_with_the_processes_of_the_node)
{
    const size_t peers[] = {0, 1, 7, 15, 128, 200, 300, 5000};
    const size_t frag_max = 64u << 10, fast_max = 256u << 10;  /* more than some areas' half */
    const uint32_t want[] = {512u << 10, 512u << 10, 512u << 10, 256u << 10, 32u << 10,
                             16u << 10, 16u << 10, 16u << 10};
    unsigned i;

    for (i = 0; i < sizeof(peers) / sizeof(peers[0]); ++i) {
        fs_tl_config_t cfg;
        fs_tl_t *tl = NULL;
        side_t s;

        memset(&s, 0, sizeof(s));
        ucx_pair_config(&cfg, 64, frag_max);
        cfg.shm_max     = 1024;
        cfg.fast_max    = fast_max;
        cfg.local_peers = peers[i];
        cr_assert_eq(fs_tl_ucx_ops.init(&cfg, &upcalls, &s, &tl), FS_OK);
        cr_assert_not_null(tl->shm.rx.base, "no lane");
        cr_expect_eq(tl->shm.rx.addr.data_size, want[i], "%zu other processes: %u bytes",
                     peers[i], tl->shm.rx.addr.data_size);
        cr_expect_eq(tl->shm.max_waited, want[i] / 2, "%zu other processes: eager to %zu",
                     peers[i], tl->shm.max_waited);
        fs_tl_ucx_ops.fini(tl);
    }
}

/* Entries per ring: ucx_fifo_size while a receiver's rings fit 1 MiB of
 * entries, halved beyond, at least 16. */
Test(ucx_shm, the_entries_per_ring_shrink_with_the_processes_of_the_node)
{
    const size_t peers[] = {0, 1, 64, 127, 255, 5000};
    const unsigned want[] = {128, 128, 128, 64, 32, 16};
    unsigned i;

    for (i = 0; i < sizeof(peers) / sizeof(peers[0]); ++i) {
        cr_expect_eq(fs_ucx_shm_entries(peers[i], 128), want[i], "%zu other processes: %u",
                     peers[i], fs_ucx_shm_entries(peers[i], 128));
    }
}
