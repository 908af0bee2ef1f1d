/* A discrete-event simulator of n heartbeat detectors
 * (src/failure/detector.c): fake clock, per-hop latency, kill/stop/leave.
 * Detection, propagation cost, anti-entropy when forwarders die, stop/resume
 * exclusion, self-stall, and a randomised property test (survivors end with
 * exactly the dead set). */
#include "detector_test.h"

/* ---- 3. the simulator --------------------------------------------------------- */

#define SIM_MAX 64

typedef struct sim sim_t;

typedef struct sim_msg {
    double       t;
    uint64_t     seq;
    uint32_t     to;
    fs_det_msg_t msg;
    uint8_t      data[SIM_MAX / 4];     /* SYNC: two bitmaps */
    size_t       len;
} sim_msg_t;

typedef struct sim_proc {
    sim_t         *sim;
    uint32_t       rank;
    fs_det_t      *det;
    int            started, dead, doomed, left, excluded, partitioned;
    double         start_at, doomed_at, stop_until, excluded_at;
    double         mute_until;   /* runs (not stopped) but sends nothing: a
                                    starved or hung detector thread */
    uint32_t       excluded_by;
    double         learned_at[SIM_MAX];  /* -1: not learned */
    fs_det_cause_t cause[SIM_MAX];
} sim_proc_t;

struct sim {
    uint32_t   n;
    double     now, lat, jitter;
    uint64_t   rng, seq;
    int        hold;        /* messages to a stopped process wait for it */
    sim_msg_t *heap;
    size_t     len, cap;
    uint32_t   false_failures, false_exclusions;
    char       first_false[128];
    /* on the first suspicion of trap_rank, kill trap_kill[] at once */
    uint32_t   trap_rank, trap_n, trap_kill[SIM_MAX];
    double     trap_at;
    /* messages of drop_type about drop_subject to drop_to are lost (the
     * first drop_max of them, if not 0) */
    uint32_t   drop_to, drop_subject, drop_max, dropped;
    uint8_t    drop_type;
    /* hosts: rank r on host r / per_host (0: all on one host); between
     * cut_from and cut_until host cut_host's link is down */
    uint32_t   per_host, cut_host;
    uint32_t   runnable_calls;
    double     cut_from, cut_until;
    sim_proc_t p[SIM_MAX];
};

static int sim_before(const sim_msg_t *a, const sim_msg_t *b)
{
    return (a->t < b->t) || ((a->t == b->t) && (a->seq < b->seq));
}

static void sim_push(sim_t *s, const sim_msg_t *m)
{
    size_t i;

    if (s->len == s->cap) {
        s->cap  = s->cap ? 2 * s->cap : 1024;
        s->heap = realloc(s->heap, s->cap * sizeof(*s->heap));
        cr_assert_not_null(s->heap);
    }
    i          = s->len++;
    s->heap[i] = *m;
    s->heap[i].seq = s->seq++;
    while ((i > 0) && sim_before(&s->heap[i], &s->heap[(i - 1) / 2])) {
        sim_msg_t tmp          = s->heap[i];
        s->heap[i]             = s->heap[(i - 1) / 2];
        s->heap[(i - 1) / 2]   = tmp;
        i                      = (i - 1) / 2;
    }
}

static sim_msg_t sim_pop(sim_t *s)
{
    sim_msg_t top = s->heap[0];
    size_t i = 0;

    s->heap[0] = s->heap[--s->len];
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        sim_msg_t tmp;

        if ((l < s->len) && sim_before(&s->heap[l], &s->heap[m])) m = l;
        if ((r < s->len) && sim_before(&s->heap[r], &s->heap[m])) m = r;
        if (m == i) break;
        tmp = s->heap[i]; s->heap[i] = s->heap[m]; s->heap[m] = tmp;
        i = m;
    }
    return top;
}

static void sim_send(void *arg, uint32_t to, const fs_det_msg_t *msg,
                     const void *data, size_t len)
{
    sim_proc_t *p = arg;
    sim_t *s      = p->sim;
    sim_msg_t m;

    cr_assert(!p->dead && (s->now >= p->stop_until), "%u sends while not running", p->rank);
    cr_assert_lt(to, s->n);
    cr_assert_leq(len, sizeof(m.data));
    if (s->now < p->mute_until) {
        return;
    }
    if ((to == s->drop_to) && (msg->type == s->drop_type) &&
        (msg->subject == s->drop_subject) &&
        ((s->drop_max == 0) || (s->dropped < s->drop_max))) {
        ++s->dropped;
        return;
    }
    if ((s->per_host > 0) && (s->now >= s->cut_from) && (s->now < s->cut_until) &&
        ((p->rank / s->per_host == s->cut_host) != (to / s->per_host == s->cut_host))) {
        return;     /* the link is down */
    }
    memset(&m, 0, sizeof(m));
    m.t   = s->now + s->lat + (s->jitter > 0 ? t_uniform(&s->rng, 0, s->jitter) : 0);
    m.to  = to;
    m.msg = *msg;
    m.len = len;
    if (len > 0) {
        memcpy(m.data, data, len);
    }
    sim_push(s, &m);
}

static void sim_kill(sim_t *s, uint32_t r)
{
    s->p[r].dead      = 1;
    s->p[r].doomed    = 1;
    s->p[r].doomed_at = s->now;
}

static void sim_failed(void *arg, uint32_t rank, fs_det_cause_t cause)
{
    sim_proc_t *p = arg;
    sim_t *s      = p->sim;
    uint32_t i;

    cr_assert_lt(p->learned_at[rank], 0, "%u told twice about %u", p->rank, rank);
    p->learned_at[rank] = s->now;
    p->cause[rank]      = cause;
    /* a doomed process's own view (a cut-off side) does not count */
    if (!p->doomed && !s->p[rank].doomed && !s->false_failures++) {
        snprintf(s->first_false, sizeof(s->first_false),
                 "%u marked live %u failed at %.3f (cause %d)", p->rank, rank, s->now, cause);
    }
    if ((cause == FS_DET_CAUSE_TIMEOUT) && (rank == s->trap_rank) && (s->trap_at < 0)) {
        s->trap_at = s->now;
        for (i = 0; i < s->trap_n; ++i) {
            sim_kill(s, s->trap_kill[i]);
        }
    }
}

static void sim_excluded(void *arg, uint32_t by)
{
    sim_proc_t *p = arg;

    if (!p->doomed) {
        ++p->sim->false_exclusions;
    }
    if (!p->excluded) {
        p->excluded    = 1;
        p->excluded_by = by;
        p->excluded_at = p->sim->now;
    }
    p->dead = 1;  /* it ends itself */
}

static uint64_t sim_host(void *arg, uint32_t rank)
{
    sim_proc_t *p = arg;

    return rank / p->sim->per_host;
}

static void sim_partitioned(void *arg, uint32_t lost, uint32_t view)
{
    sim_proc_t *p = arg;

    (void)lost;
    (void)view;
    if (!p->doomed) {
        ++p->sim->false_exclusions;
    }
    p->partitioned = 1;
    p->excluded_at = p->sim->now;
    p->dead        = 1;  /* it ends itself */
}

/* A process of the asked one's host sees it exited: it was killed, or it
 * ended (left, or ended itself). */
static int sim_exited(void *arg, uint32_t rank)
{
    sim_proc_t *p = arg;

    cr_assert_eq(sim_host(p, rank), sim_host(p, p->rank), "%u asked about %u, of "
                 "another host", p->rank, rank);
    return p->sim->p[rank].dead || p->sim->p[rank].left;
}

/* Its host sees it there and not stopped (a muted process runs). */
static int sim_runnable(void *arg, uint32_t rank)
{
    sim_proc_t *p = arg;
    const sim_proc_t *q = &p->sim->p[rank];

    if (p->sim->per_host > 0) {
        cr_assert_eq(sim_host(p, rank), sim_host(p, p->rank));
    }
    ++p->sim->runnable_calls;
    return !q->dead && !q->left && (p->sim->now >= q->stop_until);
}

static const fs_det_ops_t sim_ops = {sim_send, sim_failed, sim_excluded, NULL, NULL, NULL,
                                     sim_runnable};
static const fs_det_ops_t sim_ops_hosts = {sim_send, sim_failed, sim_excluded,
                                           sim_host, sim_partitioned, sim_exited,
                                           sim_runnable};

#define T_TIMEOUT_REMOTE (2.5 * T_TIMEOUT)
#define T_TIMEOUT_HOST   (4.5 * T_TIMEOUT)

/* per_host 0: one host; else per_host ranks per host, these remote and
 * host timeouts. */
static sim_t *sim_create_timeouts(uint32_t n, uint64_t seed, uint32_t per_host,
                                  double t_remote, double t_host)
{
    fs_det_config_t cfg = {n, 0, T_PERIOD, T_TIMEOUT, T_GRACE, T_JOB,
                           per_host ? t_remote : 0, per_host ? t_host : 0};
    sim_t *s            = calloc(1, sizeof(*s));
    uint32_t r, q;

    cr_assert_not_null(s);
    cr_assert_leq(n, SIM_MAX);
    s->n         = n;
    s->lat       = T_LAT;
    s->rng       = seed;
    s->trap_rank = n;
    s->trap_at   = -1;
    s->drop_to   = n;
    s->per_host  = per_host;
    s->cut_host  = n;
    for (r = 0; r < n; ++r) {
        s->p[r].sim  = s;
        s->p[r].rank = r;
        cfg.me       = r;
        for (q = 0; q < SIM_MAX; ++q) {
            s->p[r].learned_at[q] = -1;
        }
        cr_assert_eq(fs_det_create(&cfg, per_host ? &sim_ops_hosts : &sim_ops,
                                   &s->p[r], &s->p[r].det), FS_OK);
    }
    return s;
}

static sim_t *sim_create_hosts(uint32_t n, uint64_t seed, uint32_t per_host)
{
    return sim_create_timeouts(n, seed, per_host, T_TIMEOUT_REMOTE, T_TIMEOUT_HOST);
}

static sim_t *sim_create(uint32_t n, uint64_t seed)
{
    return sim_create_hosts(n, seed, 0);
}

static void sim_destroy(sim_t *s)
{
    uint32_t r;

    for (r = 0; r < s->n; ++r) {
        fs_det_destroy(s->p[r].det);
    }
    free(s->heap);
    free(s);
}

/* When p runs next: its start, or its next deadline once it is not stopped. */
static double sim_proc_time(const sim_t *s, const sim_proc_t *p)
{
    double t;

    if (p->dead) {
        return HUGE_VAL;
    }
    t = p->started ? fs_det_next_deadline(p->det) : p->start_at;
    if (t < p->stop_until) {
        t = p->stop_until;
    }
    return (t < s->now) ? s->now : t;
}

static void sim_deliver(sim_t *s)
{
    sim_msg_t m   = sim_pop(s);
    sim_proc_t *p = &s->p[m.to];

    if (p->dead) {
        return;
    }
    if (s->now < p->stop_until) {
        if (s->hold) {
            m.t = p->stop_until;
            sim_push(s, &m);
        }
        return;
    }
    fs_det_rx(p->det, &m.msg, m.len ? m.data : NULL, m.len, s->now);
}

static void sim_run(sim_t *s, double t_end)
{
    uint64_t iter;

    for (iter = 0;; ++iter) {
        double tp = HUGE_VAL, tm = s->len ? s->heap[0].t : HUGE_VAL;
        sim_proc_t *next = NULL;
        uint32_t r;

        cr_assert_lt(iter, 20000000, "simulation does not advance at %f", s->now);
        for (r = 0; r < s->n; ++r) {
            double t = sim_proc_time(s, &s->p[r]);

            if (t < tp) {
                tp   = t;
                next = &s->p[r];
            }
        }
        if (((tp < tm) ? tp : tm) > t_end) {
            break;
        }
        if (tp <= tm) {  /* a tick first: the worst case after a stall */
            s->now = tp;
            if (!next->started) {
                next->started = 1;
                fs_det_start(next->det, s->now);
            } else {
                fs_det_tick(next->det, s->now);
                cr_assert_gt(fs_det_next_deadline(next->det), s->now,
                             "%u would be woken again at once", next->rank);
            }
        } else {
            s->now = (tm > s->now) ? tm : s->now;
            sim_deliver(s);
        }
    }
    s->now = t_end;
}

/* Largest delay, over processes still running, between r's death and their
 * learning it; HUGE_VAL if one has not learned it. */
static double sim_learn_delay(const sim_t *s, uint32_t r)
{
    double worst = 0;
    uint32_t q;

    for (q = 0; q < s->n; ++q) {
        const sim_proc_t *p = &s->p[q];

        if ((q == r) || p->dead || p->left) {
            continue;
        }
        if (p->learned_at[r] < 0) {
            return HUGE_VAL;
        }
        if (p->learned_at[r] - s->p[r].doomed_at > worst) {
            worst = p->learned_at[r] - s->p[r].doomed_at;
        }
    }
    return worst;
}

/* Every running process knows exactly the doomed set; no false accusation. */
static void sim_check_exact(const sim_t *s, const char *what)
{
    uint32_t q, r;

    cr_assert_eq(s->false_failures, 0, "%s: %s", what, s->first_false);
    cr_assert_eq(s->false_exclusions, 0, "%s: a live process was excluded", what);
    for (q = 0; q < s->n; ++q) {
        const sim_proc_t *p = &s->p[q];
        uint32_t doomed = 0;

        if (p->dead || p->left) {
            continue;
        }
        for (r = 0; r < s->n; ++r) {
            if (r != q) {
                cr_assert_eq(fs_det_is_failed(p->det, r), s->p[r].doomed,
                             "%s: %u's view of %u", what, q, r);
                doomed += s->p[r].doomed;
            }
        }
        cr_assert_eq(fs_det_failed_count(p->det), doomed, "%s: count at %u", what, q);
    }
}

static uint64_t sim_sum(const sim_t *s, size_t off)
{
    uint64_t total = 0;
    uint32_t r;

    for (r = 0; r < s->n; ++r) {
        total += *(const uint64_t *)((const char *)fs_det_stats(s->p[r].det) + off);
    }
    return total;
}

#define SIM_SUM(_s, _field) sim_sum((_s), offsetof(fs_det_stats_t, _field))

/* propagation allowance: a few hops of flood, or a SYNC round on a ring edge */
#define T_PROP (0.02)

/* (a) */
Test(det_sim, no_failure_no_suspicion)
{
    sim_t *s = sim_create(8, 1);
    uint32_t r;

    sim_run(s, 100 * T_PERIOD + 0.05);
    sim_check_exact(s, "no failure");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    cr_expect_eq(SIM_SUM(s, failed_sent), 0);
    cr_expect_eq(SIM_SUM(s, syncs_sent), 0);
    cr_expect_eq(SIM_SUM(s, refused), 0);
    for (r = 0; r < 8; ++r) {
        const fs_det_stats_t *st = fs_det_stats(s->p[r].det);

        cr_expect_geq(st->beats_received, 100);
        cr_expect_leq(st->beats_sent, 102);
        cr_expect_lt(fabs(st->max_beat_gap - T_PERIOD), 1e-6);
        cr_expect_eq(st->max_self_late, 0);
        cr_expect_eq(fs_det_observer(s->p[r].det), (r + 1) % 8);
    }
    sim_destroy(s);
}

/* (b) */
Test(det_sim, one_kill_detected_once_and_flooded_cheaply)
{
    static const uint32_t sizes[] = {3, 8, 13, 16, 32};
    size_t i;

    for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); ++i) {
        uint32_t n = sizes[i], f = n / 2, obs = (f + 1) % n;
        sim_t *s   = sim_create(n, 2);

        sim_run(s, 2.05);
        sim_kill(s, f);
        sim_run(s, 2.05 + T_TIMEOUT + T_PERIOD + T_PROP);
        cr_assert_leq(sim_learn_delay(s, f), T_TIMEOUT + T_PERIOD + T_PROP, "n=%u", n);
        cr_expect_eq(s->p[obs].cause[f], FS_DET_CAUSE_TIMEOUT);
        sim_run(s, 8.0);
        sim_check_exact(s, "one kill");
        cr_expect_eq(SIM_SUM(s, suspicions), 1, "n=%u", n);
        cr_expect_eq(fs_det_stats(s->p[obs].det)->suspicions, 1);
        cr_expect_leq(SIM_SUM(s, failed_sent), 2 * n * t_ceil_log2(n) + n,
                      "n=%u: %lu FAILED messages", n,
                      (unsigned long)SIM_SUM(s, failed_sent));
        cr_expect_eq(fs_det_observed(s->p[obs].det), (f + n - 1) % n);
        cr_expect_eq(fs_det_observer(s->p[(f + n - 1) % n].det), obs);
        sim_destroy(s);
    }
}

/* (c) */
Test(det_sim, two_kills_adjacent_and_apart)
{
    sim_t *s = sim_create(10, 3);

    sim_run(s, 2.05);
    sim_kill(s, 3);
    sim_kill(s, 4);
    sim_run(s, 2.05 + 2 * (T_TIMEOUT + T_PERIOD) + T_PROP);
    cr_expect_leq(sim_learn_delay(s, 3), 2 * (T_TIMEOUT + T_PERIOD) + T_PROP);
    cr_expect_leq(sim_learn_delay(s, 4), T_TIMEOUT + T_PERIOD + T_PROP);
    sim_run(s, 6.0);
    sim_check_exact(s, "adjacent");
    cr_expect_eq(SIM_SUM(s, suspicions), 2);
    cr_expect_eq(fs_det_stats(s->p[5].det)->suspicions, 2);
    cr_expect_eq(fs_det_observed(s->p[5].det), 2);
    sim_destroy(s);

    s = sim_create(10, 4);
    sim_run(s, 1.03);
    sim_kill(s, 2);
    sim_run(s, 1.77);
    sim_kill(s, 7);
    sim_run(s, 6.0);
    cr_expect_leq(sim_learn_delay(s, 2), T_TIMEOUT + T_PERIOD + T_PROP);
    cr_expect_leq(sim_learn_delay(s, 7), T_TIMEOUT + T_PERIOD + T_PROP);
    sim_check_exact(s, "apart");
    cr_expect_eq(SIM_SUM(s, suspicions), 2);
    sim_destroy(s);
}

/* (d) the observer's flood is lost: only anti-entropy can spread it */
Test(det_sim, forwarders_die_anti_entropy_delivers)
{
    const uint32_t n = 16, f = 5, obs = 6;
    sim_t *s         = sim_create(n, 5);
    uint8_t gone[SIM_MAX / 8] = {0};
    uint32_t r;

    t_bit_set(gone, f, 1);
    s->trap_n  = fs_det_bmg(n, obs, gone, s->trap_kill, SIM_MAX);
    cr_assert_geq(s->trap_n, 5);
    s->trap_rank = f;
    sim_run(s, 2.05);
    sim_kill(s, f);
    sim_run(s, 2.05 + T_TIMEOUT + T_PERIOD + T_PROP);
    cr_assert_geq(s->trap_at, 0, "the observer did not suspect");
    sim_run(s, s->trap_at + 3 * T_TIMEOUT + 4 * T_PERIOD);
    for (r = 0; r < n; ++r) {
        if (s->p[r].doomed) {
            cr_expect_lt(sim_learn_delay(s, r), HUGE_VAL, "%u not known everywhere", r);
        }
    }
    sim_check_exact(s, "forwarders die");
    cr_expect_gt(SIM_SUM(s, syncs_sent), 0, "nothing but SYNC could spread %u", f);
    sim_destroy(s);
}

/* (e) */
Test(det_sim, random_kills_survivors_agree_on_the_dead)
{
    uint64_t seed;

    for (seed = 0; seed < 300; ++seed) {
        uint64_t rng = seed * 7919 + 1;
        uint32_t n   = 2 + (uint32_t)(t_rand(&rng) % 31);
        uint32_t k   = (uint32_t)(t_rand(&rng) % n), i, r;
        double last  = 0.3, end;
        uint32_t who[SIM_MAX];
        sim_t *s = sim_create(n, seed);

        s->jitter = 0.0005;
        for (r = 0; r < n; ++r) {
            s->p[r].start_at = t_uniform(&rng, 0, 0.05);
            who[r]           = r;
        }
        /* k distinct victims in increasing time, a quarter of them together
         * with the previous one */
        for (i = 0; i < k; ++i) {
            uint32_t j = i + (uint32_t)(t_rand(&rng) % (n - i));

            r      = who[i];
            who[i] = who[j];
            who[j] = r;
            last  += (t_rand(&rng) % 4 == 0) ? 0 : t_uniform(&rng, 0, 2.7 / k);
            sim_run(s, last);
            sim_kill(s, who[i]);
        }
        end = last + k * (T_TIMEOUT + T_PERIOD) + T_TIMEOUT + 5 * T_PERIOD;
        sim_run(s, end);
        cr_assert_eq(s->false_failures, 0, "seed %lu n=%u: %s", (unsigned long)seed, n,
                     s->first_false);
        for (i = 0; i < k; ++i) {
            cr_assert_lt(sim_learn_delay(s, who[i]), HUGE_VAL,
                         "seed %lu n=%u k=%u: %u not learned by %.2f", (unsigned long)seed,
                         n, k, who[i], end);
        }
        sim_check_exact(s, "random kills");
        sim_destroy(s);
    }
}

/* (f) */
static void t_stop_resume(int hold)
{
    const uint32_t n = 8, p = 3;
    sim_t *s         = sim_create(n, 6);
    double resume    = 1.05 + 3 * T_TIMEOUT;
    uint32_t r;

    s->hold = hold;
    sim_run(s, 1.05);
    s->p[p].stop_until = resume;
    s->p[p].doomed     = 1;
    s->p[p].doomed_at  = 1.05;
    sim_run(s, resume - 0.01);
    cr_assert_lt(sim_learn_delay(s, p), T_TIMEOUT + T_PERIOD + T_PROP, "hold=%d", hold);
    sim_run(s, resume + 5 * T_PERIOD);
    cr_assert(s->p[p].excluded, "hold=%d: the resumed process was not excluded", hold);
    cr_expect_leq(s->p[p].excluded_at - resume, 3 * T_LAT + 1e-9, "hold=%d", hold);
    cr_expect_eq(fs_det_stats(s->p[p].det)->suspicions, 0, "hold=%d", hold);
    for (r = 0; r < n; ++r) {
        cr_expect_lt(s->p[p].learned_at[r], 0, "hold=%d: %u accused %u", hold, p, r);
    }
    if (!hold) {
        /* its first beat drew the answer */
        cr_expect_eq(s->p[p].excluded_by, p + 1);
        cr_expect_geq(fs_det_stats(s->p[p + 1].det)->refused, 1);
    }
    sim_run(s, resume + 3.0);
    sim_check_exact(s, "stop/resume");
    cr_expect_eq(SIM_SUM(s, suspicions), 1);
    sim_destroy(s);
}

Test(det_sim, stopped_then_resumed_is_excluded_messages_held)
{
    t_stop_resume(1);
}

Test(det_sim, stopped_then_resumed_is_excluded_messages_lost)
{
    t_stop_resume(0);
}

/* (g) the whole job stops (Ctrl-Z, VM pause) and resumes: nobody suspects */
Test(det_sim, whole_job_stall_suspects_nobody)
{
    sim_t *s = sim_create(8, 7);
    uint32_t r;

    s->hold = 1;
    sim_run(s, 1.05);
    for (r = 0; r < 8; ++r) {
        s->p[r].stop_until = 1.05 + 3 * T_TIMEOUT;
    }
    sim_run(s, 5.0);
    sim_check_exact(s, "whole-job stall");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    for (r = 0; r < 8; ++r) {
        cr_expect_gt(fs_det_stats(s->p[r].det)->max_self_late, T_TIMEOUT / 2);
    }
    sim_destroy(s);
}

/* (h) */
Test(det_sim, leave_then_silence_is_not_failure)
{
    const uint32_t n = 8, l = 3;
    sim_t *s         = sim_create(n, 8);

    sim_run(s, 1.05);
    fs_det_leave(s->p[l].det, s->now);
    s->p[l].left = 1;
    sim_run(s, 4.0);
    sim_check_exact(s, "leave");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    cr_expect_eq(fs_det_next_deadline(s->p[l].det), HUGE_VAL);
    cr_expect_eq(fs_det_observed(s->p[l + 1].det), l - 1);
    cr_expect_eq(fs_det_observer(s->p[l - 1].det), l + 1);
    /* a later failure elsewhere is still learned by all but the leaver */
    sim_kill(s, 6);
    sim_run(s, 4.0 + T_TIMEOUT + 4 * T_PERIOD);
    cr_expect_lt(sim_learn_delay(s, 6), T_TIMEOUT + 4 * T_PERIOD);
    cr_expect(!fs_det_is_failed(s->p[l].det, 6));
    sim_run(s, 8.0);
    sim_check_exact(s, "leave then kill");
    cr_expect_eq(SIM_SUM(s, suspicions), 1);
    cr_expect(!s->p[l].excluded);
    sim_destroy(s);
}

/* (i) issue 10 item 9: every copy of a LEAVE to the leaver's observer is
 * lost; anti-entropy tells it within a period, before the ring edge it
 * watches times out, so the departed rank is never suspected */
Test(det_sim, a_departure_lost_on_every_path_is_repaired)
{
    const uint32_t n = 8, l = 3;
    sim_t *s         = sim_create(n, 9);
    uint32_t r;

    s->drop_to      = l + 1;
    s->drop_type    = FS_DET_LEAVE;
    s->drop_subject = l;
    sim_run(s, 1.05);
    fs_det_leave(s->p[l].det, s->now);
    s->p[l].left = 1;
    sim_run(s, 4.0);
    sim_check_exact(s, "lost leave");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    for (r = 0; r < n; ++r) {
        if (r != l) {
            cr_expect(fs_det_is_left(s->p[r].det, l), "%u does not know %u left", r, l);
        }
    }
    cr_expect_eq(fs_det_observed(s->p[l + 1].det), l - 1);
    sim_destroy(s);
}

/* ---- across hosts ---------------------------------------------------------- */

/* A link down for longer than the local timeout but shorter than the remote
 * one (a flap: Linux makes it last about a second): nobody is suspected. */
Test(det_sim, a_flap_shorter_than_the_remote_timeout_suspects_nobody)
{
    sim_t *s = sim_create_hosts(6, 21, 2);
    uint32_t r;

    s->cut_host  = 2;
    s->cut_from  = 1.0;
    s->cut_until = 1.0 + T_TIMEOUT_REMOTE - 2 * T_PERIOD;
    cr_assert_gt(s->cut_until - s->cut_from, T_TIMEOUT + T_PERIOD);
    sim_run(s, 6.0);
    sim_check_exact(s, "flap");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    for (r = 0; r < 6; ++r) {
        cr_expect_eq(fs_det_stats(s->p[r].det)->multi_host, 1);
        cr_expect_eq(s->p[r].partitioned, 0);
    }
    sim_destroy(s);
}

/* An outage longer than the remote timeout but shorter than the host's (a
 * 2 s flap, which Linux makes up to 3 s of silence), on either side of the
 * ring, at 1 and 2 ranks a host: the observers on both sides suspect, probe
 * the silent host, and nobody answers until the link is back; then it
 * does, and nobody is failed.  Without the host check the remote timeout
 * was final: every host of a flapping link lost its ranks. */
static void t_outage(uint32_t n, uint32_t per_host, uint32_t cut, double len)
{
    sim_t *s = sim_create_hosts(n, 30 + n + cut, per_host);
    uint32_t r;

    s->cut_host  = cut;
    s->cut_from  = 1.0;
    s->cut_until = 1.0 + len;
    sim_run(s, 1.0 + len + 3 * T_TIMEOUT_HOST);
    sim_check_exact(s, "outage shorter than the host timeout");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    for (r = 0; r < n; ++r) {
        cr_expect(!s->p[r].partitioned && !s->p[r].dead, "%u ended", r);
    }
    sim_destroy(s);
}

Test(det_sim, an_outage_shorter_than_the_host_timeout_suspects_nobody)
{
    double len = T_TIMEOUT_HOST - 3 * T_PERIOD;

    cr_assert_gt(len, T_TIMEOUT_REMOTE + 3 * T_PERIOD);
    t_outage(6, 2, 2, len);
    t_outage(6, 2, 0, len);
    t_outage(6, 2, 1, len);
    t_outage(4, 1, 1, len);
    t_outage(9, 3, 1, len);
}

/* A process alone on its host, behind an outage long enough for its host
 * check, answers when the link is back: the check ends there, so that when
 * it dies soon after (before the check would have run out: a host timeout
 * much longer than the remote one), its observer suspects it again and
 * fails it.  A check that ran on held the next one off for ever. */
Test(det_sim, a_process_that_answered_its_host_check_is_watched_again)
{
    double t_host = 4 * T_TIMEOUT_REMOTE;
    sim_t *s      = sim_create_timeouts(4, 39, 1, T_TIMEOUT_REMOTE, t_host);
    double back   = 1.0 + T_TIMEOUT_REMOTE + 3 * T_PERIOD;

    s->cut_host  = 2;
    s->cut_from  = 1.0;
    s->cut_until = back;
    sim_run(s, back + 0.2);
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    sim_kill(s, 2);
    sim_run(s, back + 0.2 + t_host + 2 * T_TIMEOUT_REMOTE);
    sim_check_exact(s, "dead after its host check");
    cr_expect_leq(sim_learn_delay(s, 2), t_host + T_PERIOD + T_PROP, "known after %.3f s",
                  sim_learn_delay(s, 2));
    sim_destroy(s);
}

/* Five outages in a row, each past the remote timeout, 0.5 s apart: the
 * checks that end when a host answers leave nothing behind. */
Test(det_sim, repeated_outages_suspect_nobody)
{
    sim_t *s = sim_create_hosts(6, 37, 2);
    double t = 1.0, len = T_TIMEOUT_REMOTE + 2 * T_PERIOD;
    int i;

    for (i = 0; i < 5; ++i) {
        s->cut_host  = (uint32_t)(i % 3);
        s->cut_from  = t;
        s->cut_until = t + len;
        sim_run(s, t + len + 0.5);
        t += len + 0.5;
    }
    sim_run(s, t + 2 * T_TIMEOUT_HOST);
    sim_check_exact(s, "repeated outages");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    sim_destroy(s);
}

/* host cut's link goes down for good at t = 1 (its processes alive): the
 * others fail them; they find themselves on the minority side and end. */
static void t_partition(uint32_t n, uint32_t per_host, uint32_t cut)
{
    sim_t *s = sim_create_hosts(n, 22 + n, per_host);
    double bound = 1.0 + (n / 2 + 1) * (T_TIMEOUT_HOST + 2 * T_PERIOD) + T_PROP;
    uint32_t r;

    s->cut_host  = cut;
    s->cut_from  = 1.0;
    s->cut_until = HUGE_VAL;
    sim_run(s, 1.0);
    for (r = cut * per_host; r < (cut + 1) * per_host; ++r) {
        s->p[r].doomed    = 1;
        s->p[r].doomed_at = s->now;
    }
    sim_run(s, bound + 3.0);
    for (r = 0; r < n; ++r) {
        if (r / per_host == cut) {
            cr_expect(s->p[r].partitioned, "cut-off %u did not end itself", r);
            cr_expect_leq(s->p[r].excluded_at, bound, "%u ended late", r);
        } else {
            cr_expect(!s->p[r].partitioned && !s->p[r].dead, "%u ended", r);
            cr_expect_leq(sim_learn_delay(s, cut * per_host), bound - 1.0);
        }
    }
    sim_check_exact(s, "partition");
    sim_destroy(s);
}

Test(det_sim, a_cut_off_host_ends_itself_the_majority_goes_on)
{
    t_partition(6, 2, 2);
}

Test(det_sim, an_even_split_keeps_the_half_with_the_lowest_rank)
{
    t_partition(4, 2, 1);
}

/* On one host (no network to split) losing most processes at once is just
 * failures: the survivors carry on. */
Test(det_sim, one_host_survives_losing_a_majority)
{
    sim_t *s = sim_create(8, 23);
    uint32_t r;

    sim_run(s, 1.0);
    for (r = 2; r < 8; ++r) {
        sim_kill(s, r);
    }
    sim_run(s, 12.0);
    sim_check_exact(s, "majority lost on one host");
    cr_expect(!s->p[0].dead && !s->p[1].dead);
    cr_expect_eq(fs_det_stats(s->p[0].det)->multi_host, 0);
    sim_destroy(s);
}

/* A host crashes (all its processes at once): the observer of its last
 * rank suspects it after the remote timeout and probes the rest of the
 * host, which stays silent: all of them are failed when the host has been
 * silent for the host timeout, not one timeout per rank. */
Test(det_sim, a_crashed_host_is_found_in_one_host_timeout)
{
    sim_t *s = sim_create_hosts(12, 24, 4);
    double bound = T_TIMEOUT_HOST + 2 * T_PERIOD + T_PROP;
    uint32_t r;

    sim_run(s, 1.0);
    for (r = 4; r < 8; ++r) {
        sim_kill(s, r);
    }
    sim_run(s, 1.0 + 4 * (T_TIMEOUT_HOST + T_PERIOD));
    sim_check_exact(s, "host crash");
    for (r = 4; r < 8; ++r) {
        cr_expect_leq(sim_learn_delay(s, r), bound, "rank %u known after %.3f s", r,
                      sim_learn_delay(s, r));
        cr_expect_geq(sim_learn_delay(s, r), T_TIMEOUT_HOST, "rank %u known after %.3f s, "
                      "before its host could have come back", r, sim_learn_delay(s, r));
    }
    sim_destroy(s);
}

/* The same with one rank a host: nobody else can answer for it. */
Test(det_sim, a_crashed_host_of_one_rank_is_found_in_one_host_timeout)
{
    sim_t *s = sim_create_hosts(6, 26, 1);
    double bound = T_TIMEOUT_HOST + 2 * T_PERIOD + T_PROP;

    sim_run(s, 1.0);
    sim_kill(s, 3);
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_HOST + T_PERIOD));
    sim_check_exact(s, "one-rank host crash");
    cr_expect_leq(sim_learn_delay(s, 3), bound);
    sim_destroy(s);
}

/* One process of a remote host goes silent (hung, no transport report):
 * its host answers the probe, and only it is failed, at the remote
 * timeout and 3 periods, not the host's. */
Test(det_sim, a_probe_spares_the_live_processes_of_the_host)
{
    sim_t *s = sim_create_hosts(12, 25, 4);

    sim_run(s, 1.0);
    sim_kill(s, 7);      /* observed by 8, on the next host */
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_REMOTE + T_PERIOD));
    sim_check_exact(s, "one silent process");
    cr_expect_eq(SIM_SUM(s, suspicions), 1);
    cr_expect_leq(sim_learn_delay(s, 7), T_TIMEOUT_REMOTE + 5 * T_PERIOD + T_PROP,
                  "known after %.3f s", sim_learn_delay(s, 7));
    sim_destroy(s);
}

/* fs_det_check (issue 40): an engine's link to a process on another host
 * broke.  Killed: a host-mate sees it exited and it is failed within a few
 * periods, long before the ring's remote timeout (its observer, 8, is on
 * the next host). */
Test(det_sim, a_checked_process_that_exited_is_failed_by_its_host)
{
    sim_t *s = sim_create_hosts(12, 27, 4);
    double bound = (FS_DET_EXIT_PERIODS + 2) * T_PERIOD + T_PROP;

    sim_run(s, 1.0);
    sim_kill(s, 7);
    fs_det_check(s->p[1].det, 7, s->now);
    sim_run(s, 1.0 + bound);
    cr_expect_leq(sim_learn_delay(s, 7), bound, "known after %.3f s", sim_learn_delay(s, 7));
    cr_expect_eq(s->p[1].cause[7], FS_DET_CAUSE_MESSAGE, "its host-mate decided");
    cr_expect_eq(SIM_SUM(s, asks), 1);
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_REMOTE + T_PERIOD));
    sim_check_exact(s, "a checked kill");
    cr_expect(SIM_SUM(s, suspicions) >= 1 && SIM_SUM(s, suspicions) <= FS_DET_ASK_MATES,
              "by the host-mates asked, nobody else: %llu",
              (unsigned long long)SIM_SUM(s, suspicions));
    sim_destroy(s);
}

/* The link broke under a live process (a forged reset, a middlebox): its
 * host-mates see it run, and nobody is failed, however long it is asked. */
Test(det_sim, a_checked_process_that_runs_is_not_failed)
{
    sim_t *s = sim_create_hosts(12, 28, 4);

    sim_run(s, 1.0);
    fs_det_check(s->p[1].det, 6, s->now);
    fs_det_check(s->p[9].det, 6, s->now);
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_HOST + T_PERIOD));
    sim_check_exact(s, "a checked live process");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    cr_expect_eq(SIM_SUM(s, asks), 2);
    sim_destroy(s);
}

/* A process that finalized and exited: its departure wins, as for an exit
 * its observer sees. */
Test(det_sim, a_checked_process_that_left_is_not_failed)
{
    sim_t *s = sim_create_hosts(12, 29, 4);

    sim_run(s, 1.0);
    fs_det_leave(s->p[5].det, s->now);
    s->p[5].left = 1;
    fs_det_check(s->p[0].det, 5, s->now);
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_HOST + T_PERIOD));
    sim_check_exact(s, "a checked departure");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    sim_destroy(s);
}

/* Alone on its host nobody can see it exit: the ring decides, in a host
 * timeout as for any crash (and a check asks nobody). */
Test(det_sim, a_checked_process_alone_on_its_host_is_left_to_the_ring)
{
    sim_t *s = sim_create_hosts(6, 30, 1);

    sim_run(s, 1.0);
    sim_kill(s, 3);
    fs_det_check(s->p[0].det, 3, s->now);
    sim_run(s, 1.0 + 3 * (T_TIMEOUT_HOST + T_PERIOD));
    sim_check_exact(s, "a checked lone process");
    cr_expect_eq(SIM_SUM(s, asks), 0);
    cr_expect_geq(sim_learn_delay(s, 3), T_TIMEOUT_HOST);
    sim_destroy(s);
}

/* A detector thread starved for longer than a timeout (1.3 of them: with
 * the beat phase its silence stays below two; an oversubscribed
 * node): its host sees the process there and not stopped, so it gets one
 * timeout more, and its beats coming back clear it. */
Test(det_sim, a_starved_process_its_host_sees_running_is_not_suspected)
{
    sim_t *s = sim_create(8, 31);

    sim_run(s, 1.0);
    s->p[3].mute_until = 1.0 + 1.3 * T_TIMEOUT;
    sim_run(s, 1.0 + 6 * T_TIMEOUT);
    sim_check_exact(s, "a starved process");
    cr_expect_eq(SIM_SUM(s, suspicions), 0);
    cr_expect_eq(SIM_SUM(s, extensions), 1);
    /* starved again later: a new extension (the beats cleared the last) */
    s->p[3].mute_until = s->now + 1.3 * T_TIMEOUT;
    sim_run(s, s->now + 6 * T_TIMEOUT);
    sim_check_exact(s, "starved twice");
    cr_expect_eq(SIM_SUM(s, extensions), 2);
    sim_destroy(s);
}

/* Silent and still there after the extra timeout: hung, and failed. */
Test(det_sim, a_hung_process_is_failed_after_one_timeout_more)
{
    sim_t *s = sim_create(8, 32);
    double d;

    sim_run(s, 1.0);
    s->p[3].mute_until = HUGE_VAL;
    s->p[3].doomed     = 1;
    s->p[3].doomed_at  = 1.0;
    sim_run(s, 1.0 + 6 * T_TIMEOUT);
    d = sim_learn_delay(s, 3);
    cr_expect_geq(d, 2 * T_TIMEOUT - T_PERIOD, "known after %.3f s", d);
    cr_expect_leq(d, 2 * T_TIMEOUT + T_PERIOD + T_PROP, "known after %.3f s", d);
    cr_expect_eq(SIM_SUM(s, extensions), 1);
    sim_destroy(s);
}
