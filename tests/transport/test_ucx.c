/* The UCX transport against UCX itself (no Open MPI): two transports in one
 * process, joined over UCX's loopback TCP or shared memory, and the
 * descriptor contract of tl.h: a rendezvous the receiver drops inside its
 * own upcall (engine: malformed header, or a peer that is gone) is
 * acknowledged once and freed once. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>

#include "transport/tl.h"
#include "transport/ucx_pair.h"

#include <ucs/config/global_opts.h>
#include <ucs/debug/log_def.h>

#include <string.h>
#include <time.h>


typedef struct side {
    fs_tl_t     *tl;
    unsigned     upcalls;
    unsigned     rndv_upcalls;
    int          release_in_upcall;
} side_t;

static side_t a, b;
static fs_tl_ep_t *a_to_b;

static fs_status_t on_am(void *arg, unsigned am_id, const void *hdr, size_t hdr_len,
                         void *data, size_t len, const fs_tl_rx_t *rx)
{
    side_t *s = arg;

    (void)am_id; (void)hdr; (void)hdr_len; (void)data; (void)len;
    ++s->upcalls;
    s->rndv_upcalls += !!(rx->flags & FS_TL_RX_RNDV);
    if ((rx->flags & FS_TL_RX_RNDV) && s->release_in_upcall) {
        fs_tl_ucx_ops.release(s->tl, rx->desc);   /* drop it */
    }
    return FS_OK;
}

static void on_ep_error(void *arg, void *ep_user, const fs_fault_row_t *row)
{
    (void)arg; (void)ep_user; (void)row;
}

static const fs_tl_upcalls_t upcalls = {.am_recv = on_am, .ep_error = on_ep_error};

static unsigned send_done;
static fs_status_t send_status;

static void on_send(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op; (void)length;
    ++send_done;
    send_status = status;
}

static void setup(void)
{
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    send_done = 0;
    a.tl   = ucx_pair_start(&upcalls, &a, 1024, 0);
    b.tl   = ucx_pair_start(&upcalls, &b, 1024, 0);
    a_to_b = ucx_pair_connect(a.tl, b.tl, &b);
}

static void progress_for(double secs)
{
    ucx_pair_progress(a.tl, b.tl, secs);
}

/* What went to the redirected stdout (UCX's log) and stderr, in out. */
static void read_redirected(char *out, size_t size)
{
    size_t n;

    fflush(stdout);
    fflush(stderr);
    n = fread(out, 1, size - 1, cr_get_redirected_stdout());
    n += fread(out + n, 1, size - 1 - n, cr_get_redirected_stderr());
    out[n] = '\0';
}

TestSuite(ucx, .init = setup, .timeout = 30);

Test(ucx, a_rendezvous_dropped_in_its_upcall_is_acknowledged_and_freed_once)
{
    static uint8_t big[256 << 10];
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_buf_t buf;
    fs_tl_op_t op = {.cb = on_send};
    fs_status_t st;
    int i;

    cr_redirect_stdout();              /* UCX logs to stdout by default */
    cr_redirect_stderr();
    b.release_in_upcall = 1;
    fs_buf_set_contig(&buf, big, sizeof(big));
    for (i = 0; i < 20; ++i) {
        unsigned before = send_done;
        st = fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                                   FS_TL_SEND_RNDV, &op);
        if (st == FS_OK) {
            ++send_done;
        }
        while (send_done == before) {
            progress_for(0.001);
        }
        cr_assert_eq(send_status, FS_OK);
    }
    progress_for(0.2);                 /* a second acknowledgement would come now */
    cr_expect_eq(b.upcalls, 20);
    cr_expect_eq(send_done, 20, "each send completed once");
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    fflush(stdout);
    fflush(stderr);
    cr_expect_stdout_eq_str("", "UCX complained (a descriptor freed twice)");
    cr_expect_stderr_eq_str("", "UCX complained (a descriptor freed twice)");
}

/* A small message without flags travels eager: its data is here when it
 * arrives, so it outlives its sender (the dead-peer rules deliver it).
 * UCX 1.16's protocol selection took RNDV_SCHEME=get_zcopy for "every size
 * rendezvous" until ucx.c also set RNDV_THRESH (found under UCX 1.18). */
Test(ucx, a_small_message_is_eager)
{
    static uint8_t small[200];
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_buf_t buf;
    fs_tl_op_t op = {.cb = on_send};
    fs_status_t st;
    int i;

    b.release_in_upcall = 1;
    fs_buf_set_contig(&buf, small, sizeof(small));
    for (i = 0; i < 4; ++i) {
        unsigned before = send_done;
        st = fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf, 0,
                                   &op);
        if (st == FS_OK) {
            ++send_done;
        }
        while (send_done == before) {
            progress_for(0.001);
        }
    }
    progress_for(0.05);
    cr_expect_eq(b.upcalls, 4);
    cr_expect_eq(b.rndv_upcalls, 0, "%u of 4 small messages came as rendezvous",
                 b.rndv_upcalls);
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
}

/* UCX's own error lines about a socket that cannot reach its peer are
 * failstop's to report (src/transport/ucx.c, fs_ucx_log): once a transport
 * exists they go to failstop's debug log; other UCX errors still print. */
Test(ucx, socket_errors_about_a_peer_are_not_printed_others_are)
{
    char out[4096] = "";

    cr_redirect_stdout();
    cr_redirect_stderr();
    ucs_log_dispatch("src/ucs/sys/sock.c", 325, "ucs_socket_connect", UCS_LOG_LEVEL_ERROR,
                     &ucs_global_opts.log_component,
                     "connect(fd=%d, dest_addr=%s) failed: %s", 34, "10.77.0.3:33933",
                     "Connection refused");
    ucs_log_dispatch("src/ucs/sys/sock.c", 1, "f", UCS_LOG_LEVEL_ERROR,
                     &ucs_global_opts.log_component, "recv(fd=%d) failed: %s", 35,
                     "Connection reset by peer");
    ucs_log_dispatch("src/uct/sm/mm/sysv/mm_sysv.c", 57, "uct_sysv_mem_attach",
                     UCS_LOG_LEVEL_ERROR, &ucs_global_opts.log_component,
                     "shmat(shmid=%d) failed: %m", 426442771);
    ucs_log_dispatch("src/uct/sm/mm/base/mm_ep.c", 171, "uct_mm_ep_t_init",
                     UCS_LOG_LEVEL_ERROR, &ucs_global_opts.log_component,
                     "mm ep failed to connect to remote FIFO id 0x%x: %s", 0x8004,
                     "Shared memory error");
    ucs_log_dispatch("src/uct/tcp/tcp_cm.c", 736, "uct_tcp_cm_conn_progress",
                     UCS_LOG_LEVEL_ERROR, &ucs_global_opts.log_component,
                     "tcp_ep %p: connection establishment for socket fd %d was "
                     "unsuccessful", (void *)out, 33);
    ucs_log_dispatch("src/uct/tcp/tcp_cm.c", 9, "f", UCS_LOG_LEVEL_ERROR,
                     &ucs_global_opts.log_component, "other %s", "tcp trouble");
    ucs_log_dispatch("src/ucs/sys/sock.c", 2, "f", UCS_LOG_LEVEL_ERROR,
                     &ucs_global_opts.log_component, "unrelated %s", "trouble");
    ucs_log_dispatch("src/uct/sm/mm/sysv/mm_sysv.c", 3, "f", UCS_LOG_LEVEL_ERROR,
                     &ucs_global_opts.log_component, "other %s", "shm trouble");
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    read_redirected(out, sizeof(out));
    cr_expect(strstr(out, "Connection refused") == NULL, "printed: %s", out);
    cr_expect(strstr(out, "Connection reset") == NULL, "printed: %s", out);
    cr_expect(strstr(out, "shmat") == NULL, "printed: %s", out);
    cr_expect(strstr(out, "remote FIFO") == NULL, "printed: %s", out);
    cr_expect(strstr(out, "connection establishment") == NULL, "printed: %s", out);
    cr_expect(strstr(out, "other tcp trouble") != NULL, "not printed: '%s'", out);
    cr_expect(strstr(out, "unrelated trouble") != NULL, "not printed: '%s'", out);
    cr_expect(strstr(out, "other shm trouble") != NULL, "not printed: '%s'", out);
}

/* failstop's UCX settings (ucx.c, fs_ucx_config) reach the transports:
 * UCX 1.17 changed how a transport's key is spelled, and UCX says
 * "invalid configuration" at worker creation for a key no transport took
 * (found with UCX 1.18, Open MPI 5's Debian: CMA's MEMORY_INVALIDATE and
 * TCP's CONN_NB were ignored). */
Test(ucx, every_setting_is_taken_by_a_transport)
{
    char out[4096] = "";
    side_t c;

    cr_redirect_stdout();           /* UCX's log goes to stdout */
    cr_redirect_stderr();
    memset(&c, 0, sizeof(c));
    c.tl = ucx_pair_start(&upcalls, &c, 1024, 0);
    fs_tl_ucx_ops.fini(c.tl);
    fs_tl_ucx_ops.fini(a.tl);
    fs_tl_ucx_ops.fini(b.tl);
    read_redirected(out, sizeof(out));
    cr_expect(strstr(out, "invalid configuration") == NULL, "UCX: %s", out);
}

/* A close the caller stopped waiting for (the departure's bounded drain, a
 * slow link) is still in flight when the transport ends: ucp_worker_destroy
 * completes it itself and asserts that its request was given back (UCX
 * 1.13, ucp_ep.c: "req->flags & UCP_REQUEST_FLAG_RELEASED"; found with
 * 500 ms of delay between hosts, tests/hosts/net.sh).  Here the close
 * flushes a rendezvous that b, never progressed, does not fetch. */
static unsigned close_done;

static void on_close(fs_tl_op_t *op, fs_status_t status, size_t length)
{
    (void)op; (void)status; (void)length;
    ++close_done;
}

Test(ucx, a_close_still_in_flight_at_the_end_is_given_back_to_ucx)
{
    static uint8_t big[1 << 20];
    uint32_t hdr[4] = {1, 2, 3, 4};
    fs_buf_t buf;
    fs_tl_op_t op = {.cb = on_send}, close_op = {.cb = on_close};
    fs_status_t st;
    int i;

    cr_redirect_stdout();
    fs_buf_set_contig(&buf, big, sizeof(big));
    st = fs_tl_ucx_ops.am_send(a.tl, a_to_b, FS_AM_MATCH, hdr, sizeof(hdr), &buf,
                               FS_TL_SEND_RNDV, &op);
    cr_assert_eq(st, FS_INPROGRESS, "a rendezvous waits for its receiver");
    for (i = 0; i < 100; ++i) {
        fs_tl_ucx_ops.progress(a.tl);  /* a only: b never fetches */
    }
    close_done = 0;
    st         = fs_tl_ucx_ops.ep_close(a.tl, a_to_b, 0, &close_op);
    cr_assert_eq(st, FS_INPROGRESS, "the close waits for the rendezvous");
    fs_tl_ucx_ops.fini(a.tl);
    cr_expect_eq(close_done, 0, "the caller's callback does not run after the end");
    fs_tl_ucx_ops.fini(b.tl);
}
