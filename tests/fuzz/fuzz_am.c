/* libFuzzer target: the active messages a peer can send this engine (issue
 * 10: what comes from the network gets the right outcome, never a crash, a
 * hang or an exit).  Two engines joined by the fake transport share a
 * communicator; the input is a script of records, each one of:
 *   an active message "from engine 1" to engine 0: any AM id, any header
 *     bytes and length, any payload, eager or rendezvous;
 *   a receive posted on engine 0 (source 0, 1 or any; any tag);
 *   a probe; a cancel; progress.
 * Afterwards every posted receive is cancelled or completed and both engines
 * are destroyed: leaks and use-after-free show under ASan.  Corpus seeds:
 * tests/fuzz/corpus/am (tests/fuzz/seeds.py writes them). */
#include "proto/engine_int.h"
#include "../proto/fake_tl.h"
#include "common/fs_log.h"

#include <stdio.h>
#include <stdlib.h>

#define NREQ    4
#define BUF_LEN 9000

typedef struct fz_req {
    fs_recv_t r;
    int       posted, done;
    uint8_t   buf[BUF_LEN];
} fz_req_t;

static fs_params_t    fz_params;
static fs_engine_t   *fz_eng[2];
static fs_ep_t       *fz_eps[2][2];
static fs_comm_t     *fz_comm[2];
static fz_req_t       fz_reqs[NREQ];
static uint8_t        fz_rndv_src[BUF_LEN];   /* "the sender's buffer" */

static void on_send(fs_send_t *s) { (void)s; }
static void on_recv(fs_recv_t *r) { ((fz_req_t *)r)->done = 1; }
static void on_idle(fs_req_t *q)  { (void)q; }
static void on_peer_failed(void *arg, fs_ep_t *ep, fs_ep_t *reporter)
{
    (void)arg; (void)ep; (void)reporter;
}
/* a peer may legitimately ask us to end (MPI_Abort, exclusion); here the
 * process goes on, as the fuzzer must */
static void on_abort(void *arg, fs_ep_t *from, int code) { (void)arg; (void)from; (void)code; }
static void on_excluded(void *arg, fs_ep_t *by) { (void)arg; (void)by; }
static void on_inject(void *arg, int sig) { (void)arg; (void)sig; }

static const fs_host_ops_t fz_host = {
    .dt            = {NULL, NULL},
    .send_complete = on_send,
    .recv_complete = on_recv,
    .req_idle      = on_idle,
    .peer_failed   = on_peer_failed,
    .abort         = on_abort,
    .excluded      = on_excluded,
    .inject        = on_inject,
};

static void fz_setup(void)
{
    fs_engine_config_t cfg = {.params = &fz_params, .host = &fz_host,
                              .tl_ops = &fake_tl_ops, .estimated_peers = 2};
    const void *addr[2];
    size_t len[2];
    int i, j;

    fs_log_level = 0;                    /* errors only: malformed input warns */
    fs_params_defaults(&fz_params);
    fz_params.max_unexpected_mb = 1;     /* reach the budget's edge too */
    fz_params.cause_wait_ms     = 0;
    for (i = 0; i < 2; ++i) {
        cfg.my_id = (uint64_t)i;
        if ((fs_engine_create(&cfg, &fz_eng[i]) != FS_OK) ||
            (fs_engine_address(fz_eng[i], &addr[i], &len[i]) != FS_OK)) {
            abort();
        }
    }
    for (i = 0; i < 2; ++i) {
        for (j = 0; j < 2; ++j) {
            fs_status_t st = (i == j) ?
                fs_engine_ep_create_self(fz_eng[i], (uint64_t)j, NULL, &fz_eps[i][j]) :
                fs_engine_ep_create(fz_eng[i], (uint64_t)j, NULL, addr[j], len[j],
                                    &fz_eps[i][j]);
            if (st != FS_OK) {
                abort();
            }
        }
        if (fs_comm_create(fz_eng[i], 5, i, 2, fz_eps[i], 0, NULL, NULL,
                           &fz_comm[i]) != FS_OK) {
            abort();
        }
    }
}

/* Reads n bytes (zeros past the end). */
static void fz_take(const uint8_t **p, const uint8_t *end, void *out, size_t n)
{
    size_t have = (size_t)(end - *p) < n ? (size_t)(end - *p) : n;

    memcpy(out, *p, have);
    memset((uint8_t *)out + have, 0, n - have);
    *p += have;
}

static uint8_t fz_byte(const uint8_t **p, const uint8_t *end)
{
    uint8_t b;

    fz_take(p, end, &b, 1);
    return b;
}

static void fz_inject_am(const uint8_t **p, const uint8_t *end)
{
    static const unsigned ids[] = {FS_AM_MATCH, FS_AM_CTRL, FS_AM_AGREE, 0, 77};
    fs_tl_t *tl = fz_eng[0]->tl;
    uint8_t sel = fz_byte(p, end), hdr[32];
    size_t hdr_len = fz_byte(p, end) % (sizeof(hdr) + 1);
    uint16_t len;
    fake_msg_t *m;

    fz_take(p, end, hdr, hdr_len);
    fz_take(p, end, &len, sizeof(len));
    len %= BUF_LEN;
    if (tl->ninbox == FAKE_MAX_MSGS) {
        return;
    }
    m            = fake_msg_new(hdr, hdr_len, len);
    m->am_id     = ids[sel % 5];
    m->sender_tl = fz_eng[1]->tl;
    m->rndv      = (sel >> 3) & 1;
    if (m->rndv) {
        fz_take(p, end, fz_rndv_src, len);
        m->data = fz_rndv_src;
    } else {
        m->data = malloc(len ? len : 1);
        fz_take(p, end, m->data, len);
    }
    tl->inbox[tl->ninbox++] = m;
}

static void fz_post(const uint8_t **p, const uint8_t *end)
{
    uint8_t s = fz_byte(p, end), t = fz_byte(p, end), k = fz_byte(p, end) % NREQ;
    int32_t src = (s % 3 == 2) ? FS_ANY_SOURCE : (int32_t)(s % 3);
    int32_t tag = (t == 0xff) ? FS_ANY_TAG : (int32_t)t - 8;
    fz_req_t *q = &fz_reqs[k];

    if (q->posted && !q->done) {
        return;
    }
    memset(&q->r, 0xa5, sizeof(q->r));
    fs_recv_prepare(&q->r, fz_comm[0], src, tag);
    fs_buf_set_contig(&q->r.buf, q->buf, (size_t)(s >> 2) * 64);
    q->posted = 1;
    q->done   = (fs_recv_start(&q->r) != FS_INPROGRESS);
}

static void fz_probe(const uint8_t **p, const uint8_t *end)
{
    uint8_t s = fz_byte(p, end), t = fz_byte(p, end);
    fs_probe_info_t info;
    fs_msg_t *msg = NULL;
    int found     = 0;
    fz_req_t *q   = &fz_reqs[s % NREQ];

    if (q->posted && !q->done) {
        (void)fs_probe(fz_comm[0], s & 1, (t == 0xff) ? FS_ANY_TAG : (int32_t)t - 8, 0,
                       &found, &info, NULL);
        return;
    }
    /* matched probe, then its receive */
    if ((fs_probe(fz_comm[0], FS_ANY_SOURCE, FS_ANY_TAG, 1, &found, &info, &msg) == FS_OK) &&
        found && (msg != NULL)) {
        memset(&q->r, 0xa5, sizeof(q->r));
        fs_recv_prepare(&q->r, fz_comm[0], FS_ANY_SOURCE, FS_ANY_TAG);
        fs_buf_set_contig(&q->r.buf, q->buf, BUF_LEN);
        q->posted = 1;
        q->done   = (fs_mrecv_start(&q->r, msg) != FS_INPROGRESS);
    }
}

static void fz_teardown(void)
{
    int i;

    for (i = 0; i < 4; ++i) {
        fs_engine_progress(fz_eng[0]);
        fs_engine_progress(fz_eng[1]);
    }
    for (i = 0; i < NREQ; ++i) {
        if (fz_reqs[i].posted && !fz_reqs[i].done) {
            (void)fs_recv_cancel(&fz_reqs[i].r);
        }
        if (fz_reqs[i].posted && !fz_reqs[i].done) {
            abort();      /* a posted receive can always be cancelled here */
        }
        fz_reqs[i].posted = 0;
    }
    for (i = 0; i < 2; ++i) {
        if (fz_eng[i]->tl->violations != 0) {
            fprintf(stderr, "fuzz_am: engine %d broke the descriptor contract\n", i);
            abort();       /* released in its upcall, yet said it keeps it */
        }
        fs_comm_destroy(fz_comm[i]);
    }
    for (i = 0; i < 2; ++i) {
        fs_tl_op_t op = {NULL, NULL, 0};
        fs_ep_t *peer = fz_eps[i][!i];

        /* what fs_engine_leave does in MPI_Finalize, minus the flush */
        if (peer->tl_ep != NULL) {
            fake_tl_ops.ep_close(fz_eng[i]->tl, peer->tl_ep, 1, &op);
            peer->tl_ep = NULL;
        }
        fs_engine_destroy(fz_eng[i]);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *p = data, *end = data + size;
    unsigned steps   = 0;

    fz_setup();
    while ((p < end) && (++steps < 256)) {
        switch (fz_byte(&p, end) % 5) {
        case 0:
        case 1:
            fz_inject_am(&p, end);
            break;
        case 2:
            fz_post(&p, end);
            break;
        case 3:
            fz_probe(&p, end);
            break;
        default:
            fs_engine_progress(fz_eng[0]);
            fs_engine_progress(fz_eng[1]);
            break;
        }
    }
    fz_teardown();
    return 0;
}
