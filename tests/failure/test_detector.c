/* Unit tests of the heartbeat failure detector (src/failure/detector.c):
 *  1. fs_det_bmg: exact neighbour sets for small n, and its properties
 *     with random holes;
 *  2. one detector driven by hand (capture ops): each rule of detector.h.
 * The simulator of n detectors is in test_detector_sim.c. */
#include "detector_test.h"
/* ---- 1. fs_det_bmg ---------------------------------------------------------- */

static int t_cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

    return (x > y) - (x < y);
}

/* gone_list: ranks gone, terminated by T_ANY; expect: sorted, T_ANY-terminated */
static void t_bmg_is(uint32_t n, uint32_t me, const uint32_t *gone_list,
                     const uint32_t *expect)
{
    uint8_t gone[8]  = {0};
    uint32_t out[64], i, k, nexp = 0;

    for (i = 0; gone_list[i] != T_ANY; ++i) {
        t_bit_set(gone, gone_list[i], 1);
    }
    while (expect[nexp] != T_ANY) {
        ++nexp;
    }
    k = fs_det_bmg(n, me, gone, out, 64);
    qsort(out, k, sizeof(out[0]), t_cmp_u32);
    cr_assert_eq(k, nexp, "n=%u me=%u: %u neighbours, expected %u", n, me, k, nexp);
    for (i = 0; i < k; ++i) {
        cr_expect_eq(out[i], expect[i], "n=%u me=%u: neighbour %u is %u, expected %u",
                     n, me, i, out[i], expect[i]);
    }
}

#define L(...) ((const uint32_t[]){__VA_ARGS__, T_ANY})
#define NONE   ((const uint32_t[]){T_ANY})

Test(det_bmg, exact_sets_without_holes)
{
    t_bmg_is(1, 0, NONE, NONE);
    t_bmg_is(2, 0, NONE, L(1));
    t_bmg_is(2, 1, NONE, L(0));
    t_bmg_is(3, 0, NONE, L(1, 2));
    t_bmg_is(5, 0, NONE, L(1, 2, 3, 4));
    t_bmg_is(5, 2, NONE, L(0, 1, 3, 4));
    t_bmg_is(8, 0, NONE, L(1, 2, 4, 6, 7));
    t_bmg_is(8, 3, NONE, L(1, 2, 4, 5, 7));
    t_bmg_is(16, 0, NONE, L(1, 2, 4, 8, 12, 14, 15));
    t_bmg_is(16, 5, NONE, L(1, 3, 4, 6, 7, 9, 13));
    t_bmg_is(17, 0, NONE, L(1, 2, 4, 8, 9, 13, 15, 16));
    t_bmg_is(17, 16, NONE, L(0, 1, 3, 7, 8, 12, 14, 15));
}

Test(det_bmg, exact_sets_with_holes)
{
    t_bmg_is(2, 0, L(1), NONE);
    t_bmg_is(3, 0, L(1), L(2));
    t_bmg_is(5, 0, L(1), L(2, 3, 4));
    /* distance 1 walks past holes; farther holes are skipped */
    t_bmg_is(8, 0, L(1, 2), L(3, 4, 6, 7));
    t_bmg_is(8, 0, L(6, 7), L(1, 2, 4, 5));
    t_bmg_is(8, 3, L(0, 1, 2, 4, 5, 6, 7), NONE);
    t_bmg_is(16, 0, L(1, 8, 15), L(2, 4, 12, 14));
    t_bmg_is(17, 0, L(1, 2, 16), L(3, 4, 8, 9, 13, 15));
    /* a walk that comes back to me gives nothing, even at distance 1 */
    t_bmg_is(16, 5, L(0, 1, 2, 3, 4, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), NONE);
    t_bmg_is(16, 5, L(0, 1, 2, 3, 4, 6, 7, 8, 10, 11, 12, 13, 14, 15), L(9));
}

Test(det_bmg, properties_with_random_holes)
{
    static const uint32_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 64};
    uint64_t rng = 42;
    uint8_t gone[8];
    uint32_t out[64], s, me, trial, i, k;

    for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); ++s) {
        uint32_t n = sizes[s];

        for (trial = 0; trial < 50; ++trial) {
            uint32_t nlive = 1, succ = n, pred = n;

            me = (uint32_t)(t_rand(&rng) % n);
            for (i = 0; i < n; ++i) {
                t_bit_set(gone, i, (i != me) && (trial > 0) && ((t_rand(&rng) % 3) == 0));
                nlive += (i != me) && !t_bit(gone, i);
            }
            for (i = 1; (i < n) && (succ == n); ++i) {
                succ = t_bit(gone, (me + i) % n) ? n : (me + i) % n;
            }
            for (i = 1; (i < n) && (pred == n); ++i) {
                pred = t_bit(gone, (me + n - i) % n) ? n : (me + n - i) % n;
            }
            k = fs_det_bmg(n, me, gone, out, 64);
            cr_assert_leq(k, 2 * t_ceil_log2(n), "n=%u degree %u", n, k);
            cr_assert_leq(k, nlive - 1);
            for (i = 0; i < k; ++i) {
                cr_assert_lt(out[i], n);
                cr_assert_neq(out[i], me, "n=%u me=%u lists itself", n, me);
                cr_assert(!t_bit(gone, out[i]), "n=%u me=%u lists gone %u", n, me, out[i]);
            }
            qsort(out, k, sizeof(out[0]), t_cmp_u32);
            for (i = 1; i < k; ++i) {
                cr_assert_neq(out[i], out[i - 1], "n=%u me=%u: duplicate %u", n, me, out[i]);
            }
            /* the ring edges are always there: anti-entropy needs them */
            cr_assert((succ == n) || bsearch(&succ, out, k, sizeof(out[0]), t_cmp_u32));
            cr_assert((pred == n) || bsearch(&pred, out, k, sizeof(out[0]), t_cmp_u32));
        }
    }
    /* max is honoured */
    memset(gone, 0, sizeof(gone));
    cr_assert_eq(fs_det_bmg(16, 0, gone, out, 3), 3);
    cr_assert_eq(fs_det_bmg(16, 0, NULL, out, 64), 7);
}

Test(det_digest, distinct_and_xor)
{
    uint32_t i, j;

    for (i = 0; i < 2048; ++i) {
        cr_assert_neq(fs_det_digest_rank(i), 0);
        for (j = 0; j < i; ++j) {
            cr_assert_neq(fs_det_digest_rank(i), fs_det_digest_rank(j), "%u %u", i, j);
        }
    }
}

/* ---- 2. one detector, by hand ------------------------------------------------- */

typedef struct t_sent {
    uint32_t     to;
    fs_det_msg_t msg;
    uint8_t      data[16];
    size_t       len;
} t_sent_t;

typedef struct t_cap {
    t_sent_t       sent[512];
    size_t         nsent;
    uint32_t       failed[64];
    fs_det_cause_t cause[64];
    size_t         nfailed;
    uint32_t       excluded_by[16];
    size_t         nexcluded;
} t_cap_t;

static void t_cap_send(void *arg, uint32_t to, const fs_det_msg_t *msg,
                       const void *data, size_t len)
{
    t_cap_t *c = arg;

    cr_assert_lt(c->nsent, 512);
    cr_assert_leq(len, sizeof(c->sent[0].data));
    c->sent[c->nsent].to  = to;
    c->sent[c->nsent].msg = *msg;
    c->sent[c->nsent].len = len;
    if (len > 0) {
        memcpy(c->sent[c->nsent].data, data, len);
    }
    ++c->nsent;
}

static void t_cap_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    t_cap_t *c = arg;

    cr_assert_lt(c->nfailed, 64);
    c->cause[c->nfailed]    = cause;
    c->failed[c->nfailed++] = rank;
}

static void t_cap_excluded(void *arg, uint32_t by)
{
    t_cap_t *c = arg;

    cr_assert_lt(c->nexcluded, 16);
    c->excluded_by[c->nexcluded++] = by;
}

static const fs_det_ops_t t_cap_ops = {t_cap_send, t_cap_failed, t_cap_excluded};

/* messages of type sent to `to` (T_ANY: anyone) about subject (T_ANY: any) */
static size_t t_count(const t_cap_t *c, uint8_t type, uint32_t to, uint32_t subject)
{
    size_t i, k = 0;

    for (i = 0; i < c->nsent; ++i) {
        k += (c->sent[i].msg.type == type) && ((to == T_ANY) || (c->sent[i].to == to)) &&
             ((subject == T_ANY) || (c->sent[i].msg.subject == subject));
    }
    return k;
}

static fs_det_t *t_det(uint32_t n, uint32_t me, t_cap_t *c)
{
    fs_det_config_t cfg = {n, me, T_PERIOD, T_TIMEOUT, T_GRACE, T_JOB};
    fs_det_t *det       = NULL;

    memset(c, 0, sizeof(*c));
    cr_assert_eq(fs_det_create(&cfg, &t_cap_ops, c, &det), FS_OK);
    return det;
}

static void t_rx(fs_det_t *det, uint8_t type, uint32_t sender, uint32_t subject, double now)
{
    fs_det_msg_t m = t_msg(type, sender, subject, 0, 0);

    fs_det_rx(det, &m, NULL, 0, now);
}

Test(det_unit, create_rejects_bad_config)
{
    static const fs_det_config_t bad[] = {
        {0, 0, T_PERIOD, T_TIMEOUT, 0}, {4, 4, T_PERIOD, T_TIMEOUT, 0},
        {4, 0, 0, T_TIMEOUT, 0},        {4, 0, T_PERIOD, 1.5 * T_PERIOD, 0},
        {4, 0, T_PERIOD, T_TIMEOUT, -1}, {4, 0, NAN, T_TIMEOUT, 0},
    };
    fs_det_ops_t no_send = t_cap_ops;
    fs_det_config_t good = {4, 0, T_PERIOD, T_TIMEOUT, 0};
    fs_det_t *det        = NULL;
    size_t i;

    for (i = 0; i < sizeof(bad) / sizeof(bad[0]); ++i) {
        cr_expect_eq(fs_det_create(&bad[i], &t_cap_ops, NULL, &det), FS_ERR_INVALID,
                     "config %zu", i);
    }
    no_send.send = NULL;
    cr_expect_eq(fs_det_create(&good, &no_send, NULL, &det), FS_ERR_INVALID);
    cr_expect_eq(fs_det_create(&good, &t_cap_ops, NULL, NULL), FS_ERR_INVALID);
    cr_assert_eq(fs_det_create(&good, &t_cap_ops, NULL, &det), FS_OK);
    fs_det_destroy(det);
    fs_det_destroy(NULL);
}

Test(det_unit, single_process_observes_nobody)
{
    t_cap_t c;
    fs_det_t *det = t_det(1, 0, &c);

    fs_det_start(det, 0);
    fs_det_tick(det, 100);
    cr_expect_eq(c.nsent, 0);
    cr_expect_eq(fs_det_observed(det), 1);
    cr_expect_eq(fs_det_observer(det), 1);
    cr_expect_eq(fs_det_next_deadline(det), HUGE_VAL);
    fs_det_destroy(det);
}

Test(det_unit, start_beats_then_suspects_after_timeout_plus_grace)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 0, &c);
    const double deadline = 10.0 + T_TIMEOUT + T_GRACE;
    double t;

    cr_expect_eq(fs_det_next_deadline(det), HUGE_VAL, "not started");
    fs_det_start(det, 10.0);
    cr_assert_eq(c.nsent, 1);
    cr_expect_eq(c.sent[0].to, 1);
    cr_expect_eq(c.sent[0].msg.type, FS_DET_BEAT);
    cr_expect_eq(c.sent[0].msg.sender, 0);
    cr_expect_eq(fs_det_observed(det), 7);
    cr_expect_eq(fs_det_observer(det), 1);
    /* tick at every deadline, the way the detector thread does */
    for (t = fs_det_next_deadline(det); t < deadline - 1e-9; t = fs_det_next_deadline(det)) {
        t_rx(det, FS_DET_BEAT, 6, 6, t);  /* beats of others do not count */
        fs_det_tick(det, t);
        cr_assert_eq(c.nfailed, 0, "suspected at %f", t);
    }
    cr_expect_lt(fabs(t - deadline), 1e-9);
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 1, T_ANY), 6, "a beat every period");
    c.nsent = 0;
    t = deadline;
    fs_det_tick(det, t);
    cr_assert_eq(c.nfailed, 1);
    cr_expect_eq(c.failed[0], 7);
    cr_expect_eq(c.cause[0], FS_DET_CAUSE_TIMEOUT);
    cr_expect_eq(fs_det_stats(det)->suspicions, 1);
    cr_expect_eq(fs_det_stats(det)->beats_received, 5);
    cr_expect(fs_det_is_failed(det, 7));
    cr_expect_eq(fs_det_failed_count(det), 1);
    /* flood: BMG of 0 with 7 gone = {1, 2, 4, 6}, plus 7 itself */
    cr_expect_eq(t_count(&c, FS_DET_FAILED, T_ANY, 7), 5);
    cr_expect_eq(t_count(&c, FS_DET_FAILED, 6, 7), 1);
    cr_expect_eq(t_count(&c, FS_DET_FAILED, 7, 7), 1);
    cr_expect_eq(fs_det_stats(det)->failed_sent, 5);
    /* ring repair: 6 is asked for beats and gets timeout + period */
    cr_expect_eq(fs_det_observed(det), 6);
    cr_expect_eq(t_count(&c, FS_DET_OBSERVE, 6, T_ANY), 1);
    cr_expect_geq(fs_det_next_deadline(det), t);
    fs_det_tick(det, t + T_TIMEOUT + T_PERIOD - 0.01);
    cr_expect(!fs_det_is_failed(det, 6));
    fs_det_destroy(det);
}

Test(det_unit, beats_carry_count_and_digest_and_reset_the_deadline)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 2, &c);
    fs_det_msg_t beat;
    double t;

    fs_det_start(det, 0);
    fs_det_report(det, 5, 0);
    fs_det_report(det, 6, 0);
    cr_expect_eq(c.nfailed, 2);
    cr_expect_eq(c.cause[0], FS_DET_CAUSE_REPORT);
    c.nsent = 0;
    beat    = t_msg(FS_DET_BEAT, 1, 1, 2, fs_det_digest_rank(5) ^ fs_det_digest_rank(6));
    /* the observed beats every period for a long time: never suspected */
    for (t = 0.05; t < 5.0; t += T_PERIOD) {
        fs_det_rx(det, &beat, NULL, 0, t);
        while (fs_det_next_deadline(det) <= t + T_PERIOD - 1e-9) {
            fs_det_tick(det, fs_det_next_deadline(det));
        }
    }
    cr_expect_eq(c.nfailed, 2);
    cr_expect_eq(fs_det_stats(det)->syncs_sent, 0, "digests agree");
    cr_expect_geq(fs_det_stats(det)->beats_received, 49);
    cr_expect_lt(fabs(fs_det_stats(det)->max_beat_gap - T_PERIOD), 1e-6);
    cr_assert_geq(t_count(&c, FS_DET_BEAT, 3, T_ANY), 45);
    cr_expect_eq(c.sent[0].msg.count, 2);
    cr_expect_eq(c.sent[0].msg.digest, fs_det_digest_rank(5) ^ fs_det_digest_rank(6));
    fs_det_destroy(det);
}

Test(det_unit, mismatched_beat_draws_a_rate_limited_sync)
{
    t_cap_t c;
    fs_det_t *det = t_det(16, 0, &c);

    fs_det_start(det, 0);
    fs_det_report(det, 9, 0);
    c.nsent = 0;
    t_rx(det, FS_DET_BEAT, 15, 15, 0.01);  /* count 0: lacks 9 */
    cr_assert_eq(t_count(&c, FS_DET_SYNC, 15, T_ANY), 1);
    cr_assert_eq(c.sent[0].len, 4, "failed and left bitmaps");
    cr_expect_eq(c.sent[0].data[0], 0);
    cr_expect_eq(c.sent[0].data[1], 1u << 1, "bit 9");
    cr_expect_eq(c.sent[0].data[2] | c.sent[0].data[3], 0, "nobody left");
    cr_expect_eq(c.sent[0].msg.count, 1);
    t_rx(det, FS_DET_BEAT, 15, 15, 0.05);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, T_ANY, T_ANY), 1, "once per period");
    t_rx(det, FS_DET_BEAT, 3, 3, 0.06);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 3, T_ANY), 1, "per peer");
    t_rx(det, FS_DET_BEAT, 15, 15, 0.11);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 15, T_ANY), 2);
    cr_expect_eq(fs_det_stats(det)->syncs_sent, 3);
    fs_det_destroy(det);
}

Test(det_unit, sync_merges_floods_and_answers_what_the_sender_lacks)
{
    t_cap_t c;
    fs_det_t *det = t_det(16, 0, &c);
    uint8_t bits[4] = {0x08, 0x80, 0, 0};  /* 3 and 15 failed; nobody left */
    fs_det_msg_t m  = t_msg(FS_DET_SYNC, 8, 8, 2, 0);

    fs_det_start(det, 0);
    c.nsent = 0;
    fs_det_rx(det, &m, bits, 4, 0.5);
    cr_assert_eq(c.nfailed, 2);
    cr_expect_eq(c.failed[0], 3);
    cr_expect_eq(c.failed[1], 15);
    cr_expect_eq(c.cause[0], FS_DET_CAUSE_MESSAGE);
    cr_expect_eq(t_count(&c, FS_DET_FAILED, 8, T_ANY), 0, "not back to who told us");
    cr_expect_gt(t_count(&c, FS_DET_FAILED, T_ANY, 3), 1, "flooded");
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 8, T_ANY), 0, "it lacks nothing");
    cr_expect_eq(fs_det_observed(det), 14);
    /* now it lacks 15 */
    bits[1] = 0;
    fs_det_rx(det, &m, bits, 4, 0.7);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 8, T_ANY), 1);
    cr_expect_eq(c.nfailed, 2);
    /* a bitmap naming me is an exclusion */
    bits[0] = 0x01;
    fs_det_rx(det, &m, bits, 4, 0.8);
    cr_assert_eq(c.nexcluded, 1);
    cr_expect_eq(c.excluded_by[0], 8);
    fs_det_destroy(det);
}

Test(det_unit, failed_sender_is_refused_and_told_once_per_period)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 0, &c);

    fs_det_start(det, 0);
    fs_det_report(det, 3, 0);
    c.nsent = 0;
    t_rx(det, FS_DET_BEAT, 3, 3, 1.0);
    t_rx(det, FS_DET_FAILED, 3, 5, 1.01);
    t_rx(det, FS_DET_FAILED, 3, 0, 1.02);  /* FAILED(me) from an excluded rank */
    cr_expect_eq(fs_det_stats(det)->refused, 3);
    cr_expect_eq(c.nsent, 1);
    cr_expect_eq(t_count(&c, FS_DET_FAILED, 3, 3), 1);
    cr_expect(!fs_det_is_failed(det, 5), "an excluded rank accuses nobody");
    cr_expect_eq(c.nexcluded, 0);
    t_rx(det, FS_DET_BEAT, 3, 3, 1.11);
    cr_expect_eq(t_count(&c, FS_DET_FAILED, 3, 3), 2);
    fs_det_destroy(det);
}

Test(det_unit, failed_me_excludes_and_learning_is_once)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 4, &c);

    fs_det_start(det, 0);
    t_rx(det, FS_DET_FAILED, 6, 2, 0.1);
    t_rx(det, FS_DET_FAILED, 7, 2, 0.1);
    fs_det_report(det, 2, 0.1);
    fs_det_report(det, 4, 0.1);   /* me: ignored */
    fs_det_report(det, 8, 0.1);   /* out of range: ignored */
    cr_expect_eq(c.nfailed, 1);
    cr_expect_eq(fs_det_failed_count(det), 1);
    cr_expect_eq(fs_det_stats(det)->failed_sent, t_count(&c, FS_DET_FAILED, T_ANY, 2));
    t_rx(det, FS_DET_FAILED, 5, 4, 0.2);
    cr_assert_eq(c.nexcluded, 1);
    cr_expect_eq(c.excluded_by[0], 5);
    cr_expect(!fs_det_is_failed(det, 4));
    fs_det_destroy(det);
}

/* (i) */
Test(det_unit, stale_observe_from_a_nearer_rank_is_ignored)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 0, &c);

    fs_det_start(det, 0);
    c.nsent = 0;
    t_rx(det, FS_DET_OBSERVE, 3, 3, 0.01);
    cr_expect_eq(fs_det_observer(det), 3);
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 3, T_ANY), 1, "a beat at once");
    t_rx(det, FS_DET_OBSERVE, 1, 1, 0.02);
    cr_expect_eq(fs_det_observer(det), 3, "nearer, live observer request is stale");
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 1, T_ANY), 0);
    t_rx(det, FS_DET_OBSERVE, 3, 3, 0.03);
    cr_expect_eq(fs_det_observer(det), 3, "same distance: accepted");
    fs_det_tick(det, fs_det_next_deadline(det));
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 1, T_ANY), 0);
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 3, T_ANY), 3);
    t_rx(det, FS_DET_OBSERVE, 5, 5, 0.2);
    cr_expect_eq(fs_det_observer(det), 5);
    /* the observer fails: nearest live successor, then any request is fine */
    fs_det_report(det, 5, 0.3);
    cr_expect_eq(fs_det_observer(det), 1);
    t_rx(det, FS_DET_OBSERVE, 2, 2, 0.4);
    cr_expect_eq(fs_det_observer(det), 2);
    fs_det_report(det, 2, 0.5);
    cr_expect_eq(fs_det_observer(det), 1);
    fs_det_destroy(det);
}

/* (j) */
Test(det_unit, malformed_messages_are_dropped)
{
    t_cap_t c;
    fs_det_t *det = t_det(16, 0, &c);
    uint8_t bits[5] = {0x08, 0, 0, 0, 0};
    fs_det_msg_t m;

    fs_det_start(det, 0);
    c.nsent = 0;
    t_rx(det, 0, 2, 3, 0.1);
    t_rx(det, 8, 2, 3, 0.1);      /* unknown type */
    t_rx(det, 0xff, 2, 3, 0.1);
    t_rx(det, FS_DET_FAILED, 0, 3, 0.1);    /* sender == me */
    t_rx(det, FS_DET_FAILED, 16, 3, 0.1);   /* sender >= n */
    t_rx(det, FS_DET_FAILED, 2, 16, 0.1);   /* subject >= n */
    t_rx(det, FS_DET_OBSERVE, 99, 99, 0.1);
    t_rx(det, FS_DET_LEAVE, 15, 0, 0.1);    /* LEAVE naming me */
    m = t_msg(FS_DET_SYNC, 2, 2, 1, 0);
    fs_det_rx(det, &m, bits, 2, 0.1);        /* short: the failed bitmap only */
    fs_det_rx(det, &m, bits, 5, 0.1);        /* long */
    fs_det_rx(det, &m, NULL, 4, 0.1);
    fs_det_rx(det, NULL, NULL, 0, 0.1);
    m = t_msg(FS_DET_BEAT, 0, 0, 7, 7);      /* a mismatched beat from me */
    fs_det_rx(det, &m, NULL, 0, 0.1);
    cr_expect_eq(c.nsent, 0);
    cr_expect_eq(c.nfailed, 0);
    cr_expect_eq(c.nexcluded, 0);
    cr_expect_eq(fs_det_observer(det), 1);
    cr_expect_eq(fs_det_observed(det), 15);
    cr_expect_eq(fs_det_stats(det)->beats_received, 0);
    /* the well-formed versions do act */
    cr_expect_eq(fs_det_stats(det)->malformed, 12);
    cr_expect_eq(fs_det_stats(det)->foreign, 0);
    m = t_msg(FS_DET_SYNC, 2, 2, 1, 0);
    fs_det_rx(det, &m, bits, 4, 0.1);
    cr_expect(fs_det_is_failed(det, 3));
    t_rx(det, FS_DET_LEAVE, 15, 15, 0.1);
    cr_expect_eq(fs_det_observed(det), 14);
    fs_det_destroy(det);
}

Test(det_unit, leave_is_not_failure)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 4, &c);

    fs_det_start(det, 0);
    c.nsent = 0;
    t_rx(det, FS_DET_LEAVE, 3, 3, 0.05);
    t_rx(det, FS_DET_LEAVE, 5, 5, 0.05);
    cr_expect_eq(c.nfailed, 0);
    cr_expect_eq(fs_det_failed_count(det), 0);
    cr_expect(!fs_det_is_failed(det, 3));
    cr_expect_eq(fs_det_observed(det), 2);
    cr_expect_eq(fs_det_observer(det), 6);
    cr_expect_eq(t_count(&c, FS_DET_OBSERVE, 2, T_ANY), 1);
    /* a left rank is never learned failed, nor refused */
    fs_det_report(det, 3, 0.1);
    t_rx(det, FS_DET_FAILED, 6, 5, 0.1);
    t_rx(det, FS_DET_BEAT, 3, 3, 0.1);
    cr_expect_eq(c.nfailed, 0);
    cr_expect_eq(fs_det_stats(det)->refused, 0);
    fs_det_tick(det, 0.1);
    cr_expect_eq(t_count(&c, FS_DET_BEAT, 6, T_ANY), 1);
    /* the departed are in the anti-entropy set, apart from the failed */
    cr_expect_eq(c.sent[c.nsent - 1].msg.count, 2);
    cr_expect_neq(c.sent[c.nsent - 1].msg.digest,
                  fs_det_digest_rank(3) ^ fs_det_digest_rank(5));
    cr_expect(fs_det_is_left(det, 3) && fs_det_is_left(det, 5));
    fs_det_destroy(det);
}

Test(det_unit, a_departure_is_forwarded_once)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 4, &c);

    fs_det_start(det, 0);
    c.nsent = 0;
    /* 0 tells us that 1 left: forwarded to our other neighbours, not back */
    t_rx(det, FS_DET_LEAVE, 0, 1, 0.05);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 0, 1), 0);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 5, 1), 1);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 2, 1), 1);
    cr_expect_eq(c.nfailed, 0);
    c.nsent = 0;
    t_rx(det, FS_DET_LEAVE, 6, 1, 0.06);    /* again: nothing new */
    cr_expect_eq(c.nsent, 0);
    /* left wins: a rank held failed that others saw leave moves to the
     * left set (views converge), quietly: no flood, the host is not told
     * again */
    fs_det_report(det, 7, 0.07);
    cr_expect_eq(c.nfailed, 1);
    c.nsent = 0;
    t_rx(det, FS_DET_LEAVE, 5, 7, 0.08);
    cr_expect_eq(c.nsent, 0);
    cr_expect(!fs_det_is_failed(det, 7));
    cr_expect(fs_det_is_left(det, 7));
    cr_expect_eq(fs_det_failed_count(det), 0);
    cr_expect_eq(c.nfailed, 1);
    fs_det_destroy(det);
}

/* Item 6 of issue 10: a stale detector of another job on a reused port
 * (or junk) must not be able to act, least of all to exclude this process. */
Test(det_unit, foreign_messages_are_dropped_and_counted)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 4, &c);
    uint8_t bits[2] = {0x10, 0};            /* a SYNC naming me failed */
    fs_det_msg_t m;
    int i;

    fs_det_start(det, 0);
    c.nsent = 0;
    for (i = 0; i < 3; ++i) {
        m = t_msg(FS_DET_FAILED, 3, 4, 0, 0);  /* "you have failed" */
        if (i == 0) {
            m.magic ^= 1;
        } else if (i == 1) {
            m.version += 1;
        } else {
            m.job ^= 1;
        }
        fs_det_rx(det, &m, NULL, 0, 0.1);
        m.type = FS_DET_SYNC;
        fs_det_rx(det, &m, bits, sizeof(bits), 0.1);
        m.type    = FS_DET_FAILED;
        m.subject = 5;
        fs_det_rx(det, &m, NULL, 0, 0.1);
        m.type = FS_DET_LEAVE;
        fs_det_rx(det, &m, NULL, 0, 0.1);
    }
    cr_expect_eq(c.nexcluded, 0);
    cr_expect_eq(c.nfailed, 0);
    cr_expect_eq(c.nsent, 0);
    cr_expect(!fs_det_is_left(det, 5));
    cr_expect_eq(fs_det_stats(det)->foreign, 12);
    cr_expect_eq(fs_det_stats(det)->malformed, 0);
    /* ours does act */
    t_rx(det, FS_DET_FAILED, 3, 4, 0.2);
    cr_expect_eq(c.nexcluded, 1);
    fs_det_destroy(det);
}

/* Item 9 of issue 10: a LEAVE lost on every path is repaired by
 * anti-entropy (beat digest mismatch, then SYNC), not suspected later. */
Test(det_unit, a_lost_departure_is_repaired_by_sync)
{
    t_cap_t c;
    fs_det_t *det = t_det(16, 4, &c);
    uint8_t bits[4] = {0, 0, 0x08, 0};       /* 3 left (second bitmap) */
    fs_det_msg_t m;

    fs_det_start(det, 0);
    c.nsent = 0;
    /* 5 knows that 3 left: its beat's count and digest say so */
    m = t_msg(FS_DET_BEAT, 5, 5, 1, 0);
    fs_det_rx(det, &m, NULL, 0, 0.1);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 5, T_ANY), 1, "mismatch: ask");
    m = t_msg(FS_DET_SYNC, 5, 5, 1, 0);
    fs_det_rx(det, &m, bits, sizeof(bits), 0.11);
    cr_expect(fs_det_is_left(det, 3));
    cr_expect_eq(fs_det_observed(det), 2, "the ring closes around it");
    cr_expect_eq(t_count(&c, FS_DET_OBSERVE, 2, T_ANY), 1);
    cr_expect_gt(t_count(&c, FS_DET_LEAVE, T_ANY, 3), 0, "flooded on");
    /* and the silence of 3 is never a failure */
    fs_det_tick(det, 5.0);
    cr_expect_eq(c.nfailed, 0);
    /* the reverse: mine has a departure the sender lacks: answer */
    c.nsent = 0;
    bits[2] = 0;
    fs_det_rx(det, &m, bits, sizeof(bits), 5.5);
    cr_expect_eq(t_count(&c, FS_DET_SYNC, 5, T_ANY), 1);
    cr_expect_eq(c.sent[c.nsent - 1].data[2], 0x08);
    fs_det_destroy(det);
}

/* Item 8 of issue 10: per-process state is O(n) bits, not O(n^2). */
Test(det_unit, memory_is_a_few_bits_per_rank)
{
    static const uint32_t sizes[] = {16, 1000, 100000, 1u << 22};
    t_cap_t *c = calloc(1, sizeof(*c));
    size_t i;

    cr_assert_not_null(c);
    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        fs_det_t *det = t_det(sizes[i], 0, c);
        size_t bytes  = fs_det_memory(det);

        cr_expect_leq(bytes, 3 * ((size_t)sizes[i] + 7) / 8 + 4096,
                      "n=%u: %zu bytes", sizes[i], bytes);
        cr_expect_eq(fs_det_sync_len(sizes[i]), 2 * (((size_t)sizes[i] + 7) / 8));
        fs_det_destroy(det);
    }
    free(c);
}

Test(det_unit, after_leave_nothing_happens)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 4, &c);

    fs_det_start(det, 0);
    c.nsent = 0;
    fs_det_leave(det, 0.05);
    /* flooded over the binomial graph of 4 among 8: 5, 3, 6, 2, 0 */
    cr_expect_eq(c.nsent, 5);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 5, 4), 1);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 3, 4), 1);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 0, 4), 1);
    cr_expect_eq(fs_det_next_deadline(det), HUGE_VAL);
    fs_det_tick(det, 100);
    t_rx(det, FS_DET_FAILED, 5, 4, 100);
    t_rx(det, FS_DET_OBSERVE, 6, 6, 100);
    fs_det_report(det, 2, 100);
    fs_det_leave(det, 100);
    cr_expect_eq(c.nsent, 5);
    cr_expect_eq(c.nexcluded, 0);
    cr_expect_eq(c.nfailed, 0);
    fs_det_destroy(det);
    /* two processes: observer and observed are the same, one LEAVE */
    det = t_det(2, 0, &c);
    fs_det_start(det, 0);
    fs_det_leave(det, 0.05);
    cr_expect_eq(t_count(&c, FS_DET_LEAVE, 1, 0), 1);
    fs_det_destroy(det);
}

/* (g), one detector: a late tick restarts the observed's timeout instead
 * of suspecting it; lateness below timeout / 2 does not. */
Test(det_unit, self_stall_suspects_nobody)
{
    t_cap_t c;
    fs_det_t *det = t_det(4, 0, &c);
    double t, resume;

    fs_det_start(det, 0);
    for (t = 0.05; t < 1.0; t += T_PERIOD) {
        t_rx(det, FS_DET_BEAT, 3, 3, t);
        while (fs_det_next_deadline(det) <= t) {
            fs_det_tick(det, fs_det_next_deadline(det));
        }
    }
    resume = 1.0 + 3 * T_TIMEOUT;   /* its clock jumps */
    fs_det_tick(det, resume);
    cr_expect(!fs_det_is_failed(det, 3), "suspected its observed after a self-stall");
    cr_expect_eq(fs_det_stats(det)->suspicions, 0);
    cr_expect_gt(fs_det_stats(det)->max_self_late, 2 * T_TIMEOUT);
    cr_expect_lt(fabs(fs_det_stats(det)->max_beat_gap - T_PERIOD), 1e-9,
                 "the stall is not a gap");
    /* still silent: suspected a full timeout later, not before */
    while (fs_det_next_deadline(det) < resume + T_TIMEOUT - 1e-9) {
        fs_det_tick(det, fs_det_next_deadline(det));
    }
    cr_expect(!fs_det_is_failed(det, 3));
    cr_expect_eq(fs_det_next_deadline(det), resume + T_TIMEOUT);
    fs_det_tick(det, resume + T_TIMEOUT);
    cr_expect(fs_det_is_failed(det, 3));
    fs_det_destroy(det);

    /* late by less than timeout / 2: an ordinary suspicion */
    det = t_det(4, 0, &c);
    fs_det_start(det, 0);
    for (t = fs_det_next_deadline(det); t < T_TIMEOUT + T_GRACE - 0.15;
         t = fs_det_next_deadline(det)) {
        fs_det_tick(det, t);
    }
    fs_det_tick(det, T_TIMEOUT + T_GRACE + 0.1 * T_TIMEOUT);
    cr_expect(fs_det_is_failed(det, 3));
    fs_det_destroy(det);
}

/* An exit of the observed process (its host says so) makes it suspected
 * FS_DET_EXIT_PERIODS periods later, whatever its timeout, with its own
 * cause and no probe of its host; an exit of anyone else means nothing
 * here (its own observer acts). */
Test(det_unit, an_exit_without_departure_is_a_failure_within_periods)
{
    const double exit_at = 0.5, due = exit_at + FS_DET_EXIT_PERIODS * T_PERIOD;
    t_cap_t c;
    fs_det_t *det = t_det(8, 0, &c);
    double t;

    fs_det_start(det, 0);
    t_rx(det, FS_DET_BEAT, 7, 7, 0.45);
    fs_det_exited(det, 6, exit_at);         /* not the observed: ignored */
    fs_det_exited(det, 7, exit_at);
    cr_expect_leq(fs_det_next_deadline(det), due);
    for (t = fs_det_next_deadline(det); t < due - 1e-9; t = fs_det_next_deadline(det)) {
        t_rx(det, FS_DET_BEAT, 7, 7, t);    /* sent before the exit */
        fs_det_tick(det, t);
    }
    cr_expect_eq(c.nfailed, 0, "failed before the departure could arrive");
    fs_det_tick(det, due);
    cr_assert_eq(c.nfailed, 1);
    cr_expect_eq(c.failed[0], 7);
    cr_expect_eq(c.cause[0], FS_DET_CAUSE_EXIT);
    cr_expect_eq(t_count(&c, FS_DET_PROBE, T_ANY, T_ANY), 0);
    /* the next observed starts clean: its exit flag went with 7 */
    cr_expect_eq(fs_det_observed(det), 6);
    cr_expect_geq(fs_det_next_deadline(det), due + T_PERIOD - 1e-9);
    fs_det_tick(det, due + T_TIMEOUT);
    cr_expect_eq(c.nfailed, 1, "6 suspected by 7's exit");
    fs_det_destroy(det);
}

/* Leaving is not failing: a departure that arrives after the exit was seen
 * (sent just before it, read just after) wins, and so does one repaired by
 * anti-entropy in the same window. */
Test(det_unit, a_departure_read_after_the_exit_is_not_a_failure)
{
    t_cap_t c;
    fs_det_t *det = t_det(8, 0, &c);
    uint8_t bits[2] = {0, 0x80};            /* SYNC of 8: failed none, left {7} */
    fs_det_msg_t m;

    fs_det_start(det, 0);
    fs_det_exited(det, 7, 0.5);
    t_rx(det, FS_DET_LEAVE, 7, 7, 0.5 + T_PERIOD);
    fs_det_tick(det, 0.5 + 3 * T_PERIOD);
    cr_expect_eq(c.nfailed, 0);
    cr_expect(fs_det_is_left(det, 7));
    cr_expect_eq(fs_det_observed(det), 6);
    fs_det_destroy(det);

    det = t_det(8, 0, &c);
    fs_det_start(det, 0);
    fs_det_exited(det, 7, 0.5);
    m = t_msg(FS_DET_SYNC, 1, 1, 1, 0);
    fs_det_rx(det, &m, bits, sizeof(bits), 0.5 + T_PERIOD);
    fs_det_tick(det, 0.5 + 3 * T_PERIOD);
    cr_expect_eq(c.nfailed, 0);
    cr_expect(fs_det_is_left(det, 7));
    fs_det_destroy(det);
}

/* A stall of this process after the exit does not give the exited process
 * a new timeout: the exit is a fact, not a silence. */
Test(det_unit, a_self_stall_does_not_undo_an_exit)
{
    t_cap_t c;
    fs_det_t *det = t_det(4, 0, &c);

    fs_det_start(det, 0);
    fs_det_exited(det, 3, 0.1);
    fs_det_tick(det, 0.1 + 3 * T_TIMEOUT);
    cr_assert_eq(c.nfailed, 1);
    cr_expect_eq(c.cause[0], FS_DET_CAUSE_EXIT);
    fs_det_destroy(det);
}
