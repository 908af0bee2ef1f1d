/* The detector at scale (issue 10, item 8): n real fs_det_t, one per
 * simulated process, messages delivered in synchronous rounds (one round =
 * one network hop).  Some processes die at once; each one's observer
 * suspects it (the same path as a heartbeat timeout); the rounds until every
 * survivor knows every death must grow as log n, and per-process memory as
 * n bits.
 *
 * The tests run at a few thousand ranks.  `make bench-detector` sets
 * FS_DET_SCALE_N (e.g. "1000 10000 100000") and runs `report`, which prints
 * the table quoted in docs/DESIGN.md. */
#include "detector_test.h"
#include "detector/hb.h"

typedef struct sc_msg {
    uint32_t     to;
    uint32_t     len;
    fs_det_msg_t msg;
    uint8_t     *data;       /* SYNC only: malloc'd */
} sc_msg_t;

typedef struct sc_queue {
    sc_msg_t *m;
    size_t    len, cap;
} sc_queue_t;

typedef struct sc {
    uint32_t    n;
    fs_det_t  **det;
    uint8_t    *dead;
    sc_queue_t  q[2];        /* this round's, next round's */
    int         cur;
    uint64_t    sent, max_sent;
    uint32_t   *sent_by;
    uint32_t    excluded;
} sc_t;

typedef struct sc_proc {
    sc_t    *sc;
    uint32_t rank;
} sc_proc_t;

typedef struct sc_result {
    uint32_t rounds;
    double   msgs_per_failure;
    uint64_t max_sent;
    size_t   det_bytes, hb_bytes, addr_bytes;
} sc_result_t;

static void sc_send(void *arg, uint32_t to, const fs_det_msg_t *msg, const void *data,
                    size_t len)
{
    sc_proc_t *p   = arg;
    sc_t *sc       = p->sc;
    sc_queue_t *nq = &sc->q[!sc->cur];
    sc_msg_t *m;

    ++sc->sent;
    if (++sc->sent_by[p->rank] > sc->max_sent) {
        sc->max_sent = sc->sent_by[p->rank];
    }
    if (sc->dead[to]) {
        return;
    }
    if (nq->len == nq->cap) {
        nq->cap = nq->cap ? 2 * nq->cap : 4096;
        nq->m   = realloc(nq->m, nq->cap * sizeof(*nq->m));
        cr_assert_not_null(nq->m);
    }
    m       = &nq->m[nq->len++];
    m->to   = to;
    m->len  = (uint32_t)len;
    m->msg  = *msg;
    m->data = NULL;
    if (len != 0) {
        m->data = malloc(len);
        cr_assert_not_null(m->data);
        memcpy(m->data, data, len);
    }
}

static void sc_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    (void)arg;
    (void)rank;
    (void)cause;
}

static void sc_excluded(void *arg, uint32_t by)
{
    sc_proc_t *p = arg;

    (void)by;
    ++p->sc->excluded;
}

static const fs_det_ops_t sc_ops = {sc_send, sc_failed, sc_excluded};

static int sc_all_know(const sc_t *sc, uint32_t kills)
{
    uint32_t r;

    for (r = 0; r < sc->n; ++r) {
        if (!sc->dead[r] && (fs_det_failed_count(sc->det[r]) != kills)) {
            return 0;
        }
    }
    return 1;
}

/* Kills `kills` ranks spread over the ring at once; returns the rounds until
 * all survivors know all of them. */
static sc_result_t sc_run(uint32_t n, uint32_t kills, uint64_t seed)
{
    fs_det_config_t cfg = {n, 0, T_PERIOD, T_TIMEOUT, T_GRACE, T_JOB};
    sc_proc_t *procs    = calloc(n, sizeof(*procs));
    sc_t sc;
    sc_result_t res;
    uint32_t r, k, obs;
    size_t i;

    memset(&sc, 0, sizeof(sc));
    memset(&res, 0, sizeof(res));
    sc.n       = n;
    sc.det     = calloc(n, sizeof(*sc.det));
    sc.dead    = calloc(n, 1);
    sc.sent_by = calloc(n, sizeof(*sc.sent_by));
    cr_assert(procs && sc.det && sc.dead && sc.sent_by);
    for (r = 0; r < n; ++r) {
        procs[r].sc   = &sc;
        procs[r].rank = r;
        cfg.me        = r;
        cr_assert_eq(fs_det_create(&cfg, &sc_ops, &procs[r], &sc.det[r]), FS_OK);
    }
    for (k = 0; k < kills; ++k) {
        do {
            r = (uint32_t)(t_rand(&seed) % n);
        } while (sc.dead[r]);
        sc.dead[r] = 1;
    }
    /* each victim's observer (nearest live successor) suspects it */
    for (r = 0; r < n; ++r) {
        if (sc.dead[r]) {
            for (obs = (r + 1) % n; sc.dead[obs]; obs = (obs + 1) % n) {
            }
            fs_det_report(sc.det[obs], r, 0.0);
        }
    }
    while (!sc_all_know(&sc, kills)) {
        sc_queue_t *q;

        cr_assert_lt(++res.rounds, 200, "n=%u: no agreement after 200 rounds", n);
        sc.cur = !sc.cur;
        q      = &sc.q[sc.cur];
        for (i = 0; i < q->len; ++i) {
            fs_det_rx(sc.det[q->m[i].to], &q->m[i].msg, q->m[i].data, q->m[i].len,
                      0.001 * res.rounds);
            free(q->m[i].data);
        }
        q->len = 0;
    }
    cr_expect_eq(sc.excluded, 0);
    res.msgs_per_failure = (double)sc.sent / kills;
    res.max_sent         = sc.max_sent;
    res.det_bytes        = fs_det_memory(sc.det[0]);
    fs_hb_memory(n, 8, &res.hb_bytes, &res.addr_bytes);
    for (r = 0; r < n; ++r) {
        fs_det_destroy(sc.det[r]);
    }
    for (k = 0; k < 2; ++k) {
        for (i = 0; i < sc.q[k].len; ++i) {
            free(sc.q[k].m[i].data);
        }
        free(sc.q[k].m);
    }
    free(sc.sent_by);
    free(sc.dead);
    free(sc.det);
    free(procs);
    return res;
}

static void sc_check(uint32_t n, uint32_t kills)
{
    sc_result_t res = sc_run(n, kills, 77 + n + kills);
    uint32_t lg     = t_ceil_log2(n);

    /* the flood crosses the binomial graph: about log2 n hops */
    cr_expect_leq(res.rounds, lg + 2, "n=%u kills=%u: %u rounds", n, kills, res.rounds);
    /* each process forwards each failure once to at most 2 log2 n */
    cr_expect_leq(res.msgs_per_failure, 2.0 * n * lg + 4.0 * n, "n=%u", n);
    /* a few bits per rank, whatever n */
    cr_expect_leq(res.det_bytes + res.hb_bytes, 40 * ((size_t)n / 8) + 65536,
                  "n=%u: %zu + %zu bytes", n, res.det_bytes, res.hb_bytes);
}

Test(det_scale, one_failure_known_everywhere_in_log_n_rounds)
{
    sc_check(1024, 1);
    sc_check(8192, 1);
}

Test(det_scale, many_simultaneous_failures_too)
{
    sc_check(4096, 16);
    sc_check(4096, 256);
}

/* FS_DET_SCALE_N="1000 10000 100000": the table for docs/DESIGN.md */
Test(det_scale, report, .timeout = 600)
{
    const char *list = getenv("FS_DET_SCALE_N");
    char buf[256], *tok, *save = NULL;

    snprintf(buf, sizeof(buf), "%s", list ? list : "2000");
    printf("| ranks | detector state per process | buffers per process | address copy per process"
           " | rounds to all-know (1 kill) | (16 kills) | messages per failure |\n"
           "|---:|---:|---:|---:|---:|---:|---:|\n");
    for (tok = strtok_r(buf, " ", &save); tok != NULL; tok = strtok_r(NULL, " ", &save)) {
        uint32_t n       = (uint32_t)strtoul(tok, NULL, 10);
        sc_result_t one  = sc_run(n, 1, 5);
        sc_result_t many = sc_run(n, 16, 6);

        printf("| %u | %.1f KiB | %.1f KiB | %.1f KiB | %u | %u | %.0f (%.1f n log2 n) |\n",
               n, one.det_bytes / 1024.0, one.hb_bytes / 1024.0, one.addr_bytes / 1024.0,
               one.rounds, many.rounds, one.msgs_per_failure,
               one.msgs_per_failure / (n * log2((double)n)));
        fflush(stdout);
    }
}
