/* Shared fixture of the engine tests: NENG engines in one process, joined
 * by the fake transport, each with a communicator CID over all of them. */
#ifndef FS_TEST_ENGINE_FIXTURE_H
#define FS_TEST_ENGINE_FIXTURE_H

#include <criterion/criterion.h>

#include <signal.h>

#include "proto/engine_int.h"
#include "fake_tl.h"

#define NENG 3
#define CID  5

typedef struct treq {
    union {
        fs_send_t s;
        fs_recv_t r;
    } u;
    int done;
    int idle;
} treq_t;

static fs_engine_t *eng[NENG];
static fs_ep_t *eps[NENG][NENG];     /* eps[i][j]: engine i's endpoint to j */
static fs_comm_t *comm[NENG];
static fs_params_t params;
static int peer_failed_calls, abort_calls, abort_code, excluded_calls;
static int peer_failed_at[NENG];     /* per engine (host_arg: its index) */
static fs_ep_t *peer_failed_reporter;

static void on_send(fs_send_t *s) { ((treq_t *)s)->done = 1; }
static void on_recv(fs_recv_t *r) { ((treq_t *)r)->done = 1; }
static void on_idle(fs_req_t *q)  { ((treq_t *)q)->idle = 1; }
static void on_peer_failed(void *arg, fs_ep_t *ep, fs_ep_t *reporter)
{
    (void)ep;
    ++peer_failed_calls;
    ++peer_failed_at[(intptr_t)arg];
    peer_failed_reporter = reporter;
}
static void on_abort(void *arg, fs_ep_t *from, int code)
{
    (void)arg; (void)from;
    ++abort_calls;
    abort_code = code;
}
static void on_excluded(void *arg, fs_ep_t *by) { (void)arg; (void)by; ++excluded_calls; }
static void on_inject(void *arg, int sig) { (void)arg; raise(sig); }
/* the failure detector's bound on a verdict (0: no detector) */
static double fate_verdict_at;
static double on_fate_deadline(void *arg, fs_ep_t *ep) { (void)arg; (void)ep; return fate_verdict_at; }
/* peers on another host (bit = peer id; 0: one host) and the detector
 * checks asked for them */
static unsigned remote_peers;
static int check_calls;
static int on_remote(void *arg, fs_ep_t *ep) { (void)arg; return (remote_peers >> ep->id) & 1; }
static void on_check(void *arg, fs_ep_t *ep) { (void)arg; (void)ep; ++check_calls; }
/* The host's poll (its detector's verdicts): a test sets on_poll_hook; it
 * gets the polling engine's index. */
static void (*on_poll_hook)(int i);
static void on_poll(void *arg)
{
    if (on_poll_hook != NULL) {
        on_poll_hook((int)(intptr_t)arg);
    }
}

static const fs_host_ops_t host = {
    .dt            = {NULL, NULL},
    .send_complete = on_send,
    .recv_complete = on_recv,
    .req_idle      = on_idle,
    .peer_failed   = on_peer_failed,
    .abort         = on_abort,
    .excluded      = on_excluded,
    .inject        = on_inject,
    .fate_deadline = on_fate_deadline,
    .remote        = on_remote,
    .check         = on_check,
    .poll          = on_poll,
};

static inline void make_comm(int i, uint32_t cid, fs_comm_t **c)
{
    cr_assert_eq(fs_comm_create(eng[i], cid, i, NENG, eps[i], 0, NULL, NULL, c), FS_OK);
}

/* the transport setup() gives the engines */
static const fs_tl_ops_t *setup_tl_ops = &fake_tl_ops;

static void setup(void)
{
    fs_engine_config_t cfg = {.params = &params, .host = &host, .tl_ops = setup_tl_ops,
                              .estimated_peers = NENG};
    const void *addr[NENG];
    size_t len;
    int i, j;

    fs_params_defaults(&params);
    peer_failed_calls = abort_calls = abort_code = excluded_calls = 0;
    memset(peer_failed_at, 0, sizeof(peer_failed_at));
    peer_failed_reporter = NULL;
    fate_verdict_at = 0;
    remote_peers = 0;
    check_calls  = 0;
    on_poll_hook = NULL;
    for (i = 0; i < NENG; ++i) {
        cfg.my_id    = (uint64_t)i;
        cfg.host_arg = (void *)(intptr_t)i;
        cr_assert_eq(fs_engine_create(&cfg, &eng[i]), FS_OK);
        fs_engine_address(eng[i], &addr[i], &len);
    }
    for (i = 0; i < NENG; ++i) {
        for (j = 0; j < NENG; ++j) {
            fs_status_t st = (i == j) ?
                fs_engine_ep_create_self(eng[i], (uint64_t)j, NULL, &eps[i][j]) :
                fs_engine_ep_create(eng[i], (uint64_t)j, NULL, addr[j], len, &eps[i][j]);
            cr_assert_eq(st, FS_OK);
        }
        make_comm(i, CID, &comm[i]);
    }
}

static void teardown(void)
{
    int i;

    for (i = 0; i < NENG; ++i) {
        cr_expect_eq(eng[i]->tl->violations, 0,
                     "engine %d broke the transport's descriptor contract", i);
    }

    /* all communicators first: a held message may complete a request of
     * another engine in this process */
    for (i = 0; i < NENG; ++i) {
        fs_comm_destroy(comm[i]);
    }
    fake_leaks = 0;
    for (i = 0; i < NENG; ++i) {
        fs_engine_destroy(eng[i]);
    }
    cr_expect_eq(fake_leaks, 0, "descriptors still held when the transports closed");
}


static inline void progress_all(void)
{
    unsigned n;
    int i;

    do {
        n = 0;
        for (i = 0; i < NENG; ++i) {
            n += fs_engine_progress(eng[i]);
        }
    } while (n > 0);
}

static inline fs_status_t send_msg(treq_t *t, int from, int to, int tag, void *buf, size_t len,
                            fs_send_mode_t mode)
{
    fs_status_t st;

    memset(t, 0xa5, sizeof(*t));      /* garbage, as on a caller's stack */
    fs_send_prepare(&t->u.s, comm[from], to, tag, mode);
    fs_buf_set_contig(&t->u.s.buf, buf, len);
    st = fs_send_start(&t->u.s);
    t->done = (st != FS_INPROGRESS);
    t->idle = 0;
    if (t->done) {
        cr_assert_eq(t->u.s.super.status, st, "a finished start records its status");
    }
    return st;
}

static inline fs_status_t recv_msg(treq_t *t, int at, int src, int tag, void *buf, size_t cap)
{
    fs_status_t st;

    memset(t, 0xa5, sizeof(*t));
    fs_recv_prepare(&t->u.r, comm[at], src, tag);
    fs_buf_set_contig(&t->u.r.buf, buf, cap);
    st = fs_recv_start(&t->u.r);
    t->done = (st != FS_INPROGRESS);
    t->idle = 0;
    if (t->done) {
        cr_assert_eq(t->u.r.super.status, st, "a finished start records its status");
    }
    return st;
}

static inline void fill(uint8_t *b, size_t n, int seed)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        b[i] = (uint8_t)(i * 31 + seed);
    }
}

static inline int check(const uint8_t *b, size_t n, int seed)
{
    size_t i;

    for (i = 0; i < n; ++i) {
        if (b[i] != (uint8_t)(i * 31 + seed)) {
            return 0;
        }
    }
    return 1;
}


#endif
