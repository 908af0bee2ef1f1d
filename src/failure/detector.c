/* Heartbeat failure detector: the protocol state machine.  See detector.h
 * for the protocol; docs/notes/detector-study.md sections 2-3 for why.
 *
 * Everything is allocated in fs_det_create; the other calls only read and
 * write those arrays and call ops.  Times are the caller's (seconds, any
 * monotonic origin).
 *
 * Reliability, in short: the flood reaches every process the surviving BMG
 * connects; whatever it misses (a forwarder died, or views differed) shows
 * up as a digest mismatch on a ring edge within a period, and the SYNC that
 * follows makes the receiver learn, hence flood, again. */
#include "failure/detector_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- pure helpers ---------------------------------------------------------- */

static uint32_t fs_det_step(uint32_t n, uint32_t r, int dir)
{
    if (dir > 0) {
        return (r + 1 == n) ? 0 : r + 1;
    }
    return (r == 0) ? n - 1 : r - 1;
}

/* Ring distance from a to b going to successors. */
static uint64_t fs_det_dist(uint32_t n, uint32_t a, uint32_t b)
{
    return ((uint64_t)b + n - a) % n;
}

static int fs_det_contains(const uint32_t *set, uint32_t len, uint32_t r)
{
    uint32_t i;

    for (i = 0; i < len; ++i) {
        if (set[i] == r) {
            return 1;
        }
    }
    return 0;
}

/* Nearest live process from me in direction dir (me excluded), or n. */
uint32_t fs_det_walk(uint32_t n, uint32_t me, const uint8_t *gone, int dir)
{
    uint32_t r = fs_det_step(n, me, dir);

    while (r != me) {
        if ((gone == NULL) || !fs_det_bit(gone, r)) {
            return r;
        }
        r = fs_det_step(n, r, dir);
    }
    return n;
}

/* splitmix64 with state (kind, rank) + 1: every rank gets a well-mixed,
 * nonzero-looking word per set, so XORs of small sets rarely collide and a
 * rank failed here but left there never cancels out */
static uint64_t fs_det_digest_kind(uint32_t rank, uint32_t kind)
{
    uint64_t z = (((uint64_t)kind << 32) | rank) + 1 + 0x9e3779b97f4a7c15ull;

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t fs_det_digest_rank(uint32_t rank)
{
    return fs_det_digest_kind(rank, 0);
}

uint32_t fs_det_bmg(uint32_t n, uint32_t me, const uint8_t *gone, uint32_t *out,
                    uint32_t max)
{
    uint32_t count = 0;
    uint64_t step;
    int dir;

    for (step = 1; step < n; step <<= 1) {
        for (dir = 1; dir >= -1; dir -= 2) {
            uint64_t t = (dir > 0) ? ((uint64_t)me + step) % n :
                                     ((uint64_t)me + n - step) % n;
            uint32_t r = (uint32_t)t;

            if ((gone != NULL) && fs_det_bit(gone, r)) {
                /* only the ring edges are repaired: they carry anti-entropy */
                r = (step == 1) ? fs_det_walk(n, me, gone, dir) : n;
            }
            if ((r == n) || (r == me) || fs_det_contains(out, count, r)) {
                continue;
            }
            if (count == max) {
                return count;
            }
            out[count++] = r;
        }
    }
    return count;
}

/* ---- sending ----------------------------------------------------------------- */

void fs_det_send(fs_det_t *det, uint32_t to, uint8_t type, uint32_t subject)
{
    const void *data = NULL;
    size_t len       = 0;
    fs_det_msg_t msg;

    memset(&msg, 0, sizeof(msg));
    msg.magic   = FS_DET_MAGIC;
    msg.version = FS_DET_VERSION;
    msg.type    = type;
    msg.sender  = det->cfg.me;
    msg.subject = subject;
    msg.count   = det->count + det->nleft;
    msg.digest  = det->digest;
    msg.job     = det->cfg.job;
    switch (type) {
    case FS_DET_BEAT:
        ++det->stats.beats_sent;
        break;
    case FS_DET_FAILED:
        ++det->stats.failed_sent;
        break;
    case FS_DET_SYNC:
        data = det->sync;
        len  = 2 * det->nbytes;
        ++det->stats.syncs_sent;
        break;
    default:
        break;
    }
    det->ops.send(det->arg, to, &msg, data, len);
}

/* At most once per period per (peer, kind); a peer not in the table takes
 * the least recently used slot. */
int fs_det_rate_ok(fs_det_t *det, uint32_t kind, uint32_t rank, double now)
{
    fs_det_rate_t *slot = &det->rate[0];
    unsigned i;

    for (i = 0; i < FS_DET_RATE_SLOTS; ++i) {
        fs_det_rate_t *r = &det->rate[i];

        if ((r->rank == rank) && (r->kind == kind)) {
            slot = r;
            break;
        }
        if (r->last < slot->last) {
            slot = r;
        }
    }
    if ((slot->rank == rank) && (slot->kind == kind) &&
        (now - slot->last < det->cfg.period)) {
        return 0;
    }
    slot->rank = rank;
    slot->kind = kind;
    slot->last = now;
    return 1;
}

static void fs_det_sync_to(fs_det_t *det, uint32_t to, double now)
{
    if (fs_det_rate_ok(det, FS_DET_RATE_SYNC, to, now)) {
        fs_det_send(det, to, FS_DET_SYNC, det->cfg.me);
    }
}

/* ---- the ring ---------------------------------------------------------------- */

/* Watches r (n: nobody) and asks it for beats; it gets one period more than
 * a timeout for the OBSERVE to arrive and its first beat to come back. */
static void fs_det_watch(fs_det_t *det, uint32_t r, double now)
{
    fs_det_probe_cancel(det);       /* it was about the one watched so far */
    det->observed     = r;
    det->obs_exited   = 0;
    det->obs_extended = 0;
    det->watch_at     = now;
    det->last_beat_at = -HUGE_VAL;
    det->obs_timeout  = fs_det_timeout_of(det, r);
    if (r < det->cfg.n) {
        det->obs_deadline = now + det->obs_timeout + det->cfg.period;
        fs_det_send(det, r, FS_DET_OBSERVE, r);
    }
}

/* rank just became gone (failed or left): close the ring around it. */
static void fs_det_ring_repair(fs_det_t *det, uint32_t rank, double now)
{
    const fs_det_config_t *c = &det->cfg;

    if (rank == det->observed) {
        fs_det_watch(det, fs_det_walk(c->n, c->me, det->gone, -1), now);
    }
    if (rank == det->observer) {
        /* beats go there, on the usual schedule; its own OBSERVE will
         * confirm it.  Once n (nobody left), only an OBSERVE changes it,
         * and that beats at once */
        det->observer = fs_det_walk(c->n, c->me, det->gone, +1);
    }
}

/* ---- learning a failure -------------------------------------------------------- */

/* from: who told us (not told again), n if nobody. */
void fs_det_learn(fs_det_t *det, uint32_t rank, fs_det_cause_t cause,
                  uint32_t from, double now)
{
    uint32_t i, k;

    /* leaving is not failing; and a failure is learned once */
    if ((rank == det->cfg.me) || fs_det_bit(det->gone, rank)) {
        return;
    }
    fs_det_bit_set(det->gone, rank);
    fs_det_bit_set(det->bits, rank);
    det->count  += 1;
    det->digest ^= fs_det_digest_kind(rank, 0);

    k = fs_det_bmg(det->cfg.n, det->cfg.me, det->gone, det->nbr, det->max_nbr);
    for (i = 0; i < k; ++i) {
        if (det->nbr[i] != from) {
            fs_det_send(det, det->nbr[i], FS_DET_FAILED, rank);
        }
    }
    /* a live-but-suspected process learns that it is excluded */
    fs_det_send(det, rank, FS_DET_FAILED, rank);
    fs_det_ring_repair(det, rank, now);
    if (fs_det_minority(det, rank, now)) {
        /* cut off: the flood above still tells this side, which then finds
         * the same; the process ends, its detector quiet as if it had left */
        det->left = 1;
        det->ops.partitioned(det->arg, det->lost, det->view_n);
        return;
    }
    /* last: the host may publish the failure, and with it these counters */
    det->ops.failed(det->arg, rank, cause);
}

/* ---- receiving ------------------------------------------------------------------ */

/* Ours: magic, version and job; foreign messages are counted apart from
 * malformed ones, so that a stray job on a reused port shows up. */
static int fs_det_rx_valid(fs_det_t *det, const fs_det_msg_t *msg,
                           const void *data, size_t len)
{
    uint32_t n = det->cfg.n;

    if ((msg->magic != FS_DET_MAGIC) || (msg->version != FS_DET_VERSION) ||
        (msg->job != det->cfg.job)) {
        ++det->stats.foreign;
        return 0;
    }
    if ((msg->sender >= n) || (msg->sender == det->cfg.me) || (msg->subject >= n)) {
        goto malformed;
    }
    switch (msg->type) {
    case FS_DET_BEAT:
    case FS_DET_OBSERVE:
    case FS_DET_FAILED:
    case FS_DET_PROBE:
    case FS_DET_ASK:
        return 1;
    case FS_DET_LEAVE:
        if (msg->subject != det->cfg.me) {
            return 1;
        }
        goto malformed;
    case FS_DET_SYNC:
        if ((data != NULL) && (len == 2 * det->nbytes)) {
            return 1;
        }
        goto malformed;
    default:
        goto malformed;
    }

malformed:
    ++det->stats.malformed;
    return 0;
}

static void fs_det_rx_beat(fs_det_t *det, const fs_det_msg_t *msg, double now)
{
    uint32_t from = msg->sender;

    ++det->stats.beats_received;
    fs_det_probe_answer(det, from, now);
    if (from == det->observed) {
        if ((det->last_beat_at > -HUGE_VAL) &&
            (now - det->last_beat_at > det->stats.max_beat_gap)) {
            det->stats.max_beat_gap = now - det->last_beat_at;
        }
        det->last_beat_at = now;
        det->obs_extended = 0;
        if (!det->obs_exited) {     /* a beat sent before the exit */
            det->obs_deadline = now + det->obs_timeout;
        }
    }
    if ((msg->count != det->count + det->nleft) || (msg->digest != det->digest)) {
        fs_det_sync_to(det, from, now);
    }
}

static void fs_det_rx_observe(fs_det_t *det, uint32_t from, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint32_t cur             = det->observer;

    /* observers only move away: a nearer request than a live observer is stale */
    if ((cur < c->n) && !fs_det_bit(det->gone, cur) &&
        (fs_det_dist(c->n, c->me, from) < fs_det_dist(c->n, c->me, cur))) {
        return;
    }
    det->observer  = from;
    fs_det_send(det, from, FS_DET_BEAT, c->me);
    det->next_beat = now + c->period;
}

/* Sends LEAVE(subject) over the binomial graph, except to from. */
static void fs_det_flood_leave(fs_det_t *det, uint32_t subject, uint32_t from)
{
    uint32_t i, k;

    k = fs_det_bmg(det->cfg.n, det->cfg.me, det->gone, det->nbr, det->max_nbr);
    for (i = 0; i < k; ++i) {
        if ((det->nbr[i] != from) && (det->nbr[i] != subject)) {
            fs_det_send(det, det->nbr[i], FS_DET_LEAVE, subject);
        }
    }
}

/* subject finalized (told by itself, forwarded, or in a SYNC): everyone must
 * know, or a ring repaired across it later would wait for its beats and
 * suspect it.  Left wins over failed (see detector.h). */
static void fs_det_learn_left(fs_det_t *det, uint32_t subject, uint32_t from,
                              double now)
{
    if ((subject == det->cfg.me) || fs_det_bit(det->left_bits, subject)) {
        return;
    }
    fs_det_bit_set(det->left_bits, subject);
    det->nleft  += 1;
    det->digest ^= fs_det_digest_kind(subject, 1);
    if (fs_det_bit(det->bits, subject)) {
        /* already gone for the ring; only the sets change */
        fs_det_bit_clear(det->bits, subject);
        det->count  -= 1;
        det->digest ^= fs_det_digest_kind(subject, 0);
        return;
    }
    fs_det_bit_set(det->gone, subject);
    fs_det_flood_leave(det, subject, from);
    fs_det_ring_repair(det, subject, now);
}

static void fs_det_rx_sync(fs_det_t *det, uint32_t from, const uint8_t *theirs,
                           double now)
{
    const fs_det_config_t *c = &det->cfg;
    const uint8_t *their_left = theirs + det->nbytes;
    int lacks                 = 0;
    uint32_t r;
    size_t i;

    if (fs_det_bit(theirs, c->me)) {
        /* as final as FAILED(me) */
        det->ops.excluded(det->arg, from);
        return;
    }
    /* left first: a rank in both is left */
    for (r = 0; r < c->n; ++r) {
        if ((their_left[r >> 3] != 0) && fs_det_bit(their_left, r)) {
            fs_det_learn_left(det, r, from, now);
        }
    }
    for (r = 0; r < c->n; ++r) {
        if ((theirs[r >> 3] != 0) && fs_det_bit(theirs, r)) {
            fs_det_learn(det, r, FS_DET_CAUSE_MESSAGE, from, now);
        }
    }
    /* padding bits of mine are always 0, so bytes compare directly */
    for (i = 0; i < det->nbytes; ++i) {
        lacks |= (det->bits[i] & (uint8_t)~(theirs[i] | their_left[i])) != 0;
        lacks |= (det->left_bits[i] & (uint8_t)~their_left[i]) != 0;
    }
    if (lacks) {
        fs_det_sync_to(det, from, now);
    }
}

void fs_det_rx(fs_det_t *det, const fs_det_msg_t *msg, const void *data,
               size_t len, double now)
{
    uint32_t from;

    if (det->left || (msg == NULL) || !fs_det_rx_valid(det, msg, data, len)) {
        return;
    }
    from = msg->sender;
    if (fs_det_bit(det->bits, from)) {
        /* an excluded process must not act; tell it, without echoing a storm */
        ++det->stats.refused;
        if (fs_det_rate_ok(det, FS_DET_RATE_REFUSE, from, now)) {
            fs_det_send(det, from, FS_DET_FAILED, from);
        }
        return;
    }
    if (fs_det_bit(det->left_bits, from)) {
        return;  /* sends nothing after LEAVE; a late copy changes nothing */
    }
    switch (msg->type) {
    case FS_DET_BEAT:
        fs_det_rx_beat(det, msg, now);
        break;
    case FS_DET_OBSERVE:
        fs_det_rx_observe(det, from, now);
        break;
    case FS_DET_FAILED:
        if (msg->subject == det->cfg.me) {
            det->ops.excluded(det->arg, from);
        } else {
            fs_det_learn(det, msg->subject, FS_DET_CAUSE_MESSAGE, from, now);
        }
        break;
    case FS_DET_LEAVE:
        fs_det_learn_left(det, msg->subject, from, now);
        break;
    case FS_DET_SYNC:
        fs_det_rx_sync(det, from, data, now);
        break;
    case FS_DET_PROBE:
        if (fs_det_rate_ok(det, FS_DET_RATE_PROBE, from, now)) {
            fs_det_send(det, from, FS_DET_BEAT, det->cfg.me);
        }
        break;
    case FS_DET_ASK:
        fs_det_ask_rx(det, msg->subject, now);
        break;
    default:
        break;
    }
}

/* ---- time ------------------------------------------------------------------------ */

void fs_det_start(fs_det_t *det, double now)
{
    const fs_det_config_t *c = &det->cfg;

    if (det->started || det->left) {
        return;
    }
    det->started      = 1;
    det->obs_deadline = now + det->obs_timeout + c->grace;
    det->last_beat_at = -HUGE_VAL;
    det->watch_at     = now;
    if (det->observer < c->n) {
        fs_det_send(det, det->observer, FS_DET_BEAT, c->me);
    }
    det->next_beat = now + c->period;
}

double fs_det_next_deadline(const fs_det_t *det)
{
    double t = HUGE_VAL;

    if (!det->started || det->left) {
        return HUGE_VAL;
    }
    if (det->observer < det->cfg.n) {
        t = det->next_beat;
    }
    if ((det->observed < det->cfg.n) && (det->obs_deadline < t)) {
        t = det->obs_deadline;
    }
    if ((det->nprobe > 0) && (det->probe_next < t)) {
        t = det->probe_next;
    }
    if (fs_det_asks_deadline(det) < t) {
        t = fs_det_asks_deadline(det);
    }
    return t;
}

void fs_det_tick(fs_det_t *det, double now)
{
    const fs_det_config_t *c = &det->cfg;
    double late;

    if (!det->started || det->left) {
        return;
    }
    late = now - fs_det_next_deadline(det);
    if (late > det->stats.max_self_late) {
        det->stats.max_self_late = late;
    }
    if ((late > c->timeout / 2) && !det->obs_exited) {
        /* this process was stopped or starved: its observed's silence
         * proves nothing, give it a full timeout from now (an exit does
         * prove something), and start over any host check */
        fs_det_probe_cancel(det);
        det->obs_deadline = now + det->obs_timeout;
        det->last_beat_at = -HUGE_VAL;
        det->watch_at     = now;
    }
    if (now >= det->next_beat) {
        if (det->observer < c->n) {
            fs_det_send(det, det->observer, FS_DET_BEAT, c->me);
        }
        det->next_beat += c->period;
        if (det->next_beat <= now) {
            det->next_beat = now + c->period;
        }
    }
    /* >=, not >: a tick exactly at the deadline must act, or the caller
     * would be woken again for the same deadline */
    if ((det->nprobe > 0) && (now >= det->probe_next)) {
        fs_det_probe_step(det, now);
    }
    if (now >= fs_det_asks_deadline(det)) {
        fs_det_asks_step(det, now);
    }
    if ((det->observed < c->n) && (now >= det->obs_deadline) && !det->left) {
        uint32_t p = det->observed;

        if (det->obs_exited) {
            ++det->stats.suspicions;
            fs_det_learn(det, p, FS_DET_CAUSE_EXIT, c->n, now);
            return;     /* an exit says nothing about its host */
        }
        if (fs_det_remote(det, p)) {
            /* its host decides (det_hosts.c); the check drives from here */
            det->obs_deadline = HUGE_VAL;
            fs_det_probe_host(det, p, now);
            return;
        }
        if (!det->obs_extended && (det->ops.runnable != NULL) &&
            det->ops.runnable(det->arg, p)) {
            /* its host sees it there and not stopped: a starved detector
             * thread is not a failure; one timeout more tells a hang */
            det->obs_extended = 1;
            ++det->stats.extensions;
            det->obs_deadline = now + det->obs_timeout;
            return;
        }
        ++det->stats.suspicions;
        fs_det_learn(det, p, FS_DET_CAUSE_TIMEOUT, c->n, now);
    }
}

void fs_det_exited(fs_det_t *det, uint32_t rank, double now)
{
    double deadline = now + FS_DET_EXIT_PERIODS * det->cfg.period;

    if (!det->started || det->left || (rank != det->observed) || det->obs_exited) {
        return;
    }
    det->obs_exited = 1;
    if (deadline < det->obs_deadline) {
        det->obs_deadline = deadline;
    }
}

void fs_det_report(fs_det_t *det, uint32_t rank, double now)
{
    if (det->left || (rank >= det->cfg.n)) {
        return;
    }
    fs_det_learn(det, rank, FS_DET_CAUSE_REPORT, det->cfg.n, now);
}

void fs_det_leave(fs_det_t *det, double now)
{
    (void)now;
    if (det->left) {
        return;
    }
    /* the binomial graph includes observer and observed (distance 1) */
    fs_det_flood_leave(det, det->cfg.me, det->cfg.n);
    det->left = 1;
}

/* ---- queries ---------------------------------------------------------------------- */

int fs_det_is_failed(const fs_det_t *det, uint32_t rank)
{
    return (rank < det->cfg.n) && fs_det_bit(det->bits, rank);
}

int fs_det_is_left(const fs_det_t *det, uint32_t rank)
{
    return (rank < det->cfg.n) && fs_det_bit(det->left_bits, rank);
}

size_t fs_det_memory(const fs_det_t *det)
{
    return sizeof(*det) + 3 * det->nbytes + (det->max_nbr + 1) * sizeof(*det->nbr);
}

size_t fs_det_sync_len(uint32_t n)
{
    return 2 * (((size_t)n + 7) / 8);
}

uint32_t fs_det_failed_count(const fs_det_t *det)
{
    return det->count;
}

uint32_t fs_det_observed(const fs_det_t *det)
{
    return det->observed;
}

uint32_t fs_det_observer(const fs_det_t *det)
{
    return det->observer;
}

const fs_det_stats_t *fs_det_stats(const fs_det_t *det)
{
    return &det->stats;
}

/* ---- life cycle --------------------------------------------------------------------- */

static int fs_det_config_ok(const fs_det_config_t *c, const fs_det_ops_t *ops)
{
    /* written so that NaNs fail too */
    return (c->n >= 1) && (c->me < c->n) && (c->period > 0) &&
           (c->timeout >= 2 * c->period) && isfinite(c->timeout) &&
           ((c->timeout_remote == 0) ||
            ((c->timeout_remote >= c->timeout) && isfinite(c->timeout_remote))) &&
           ((c->timeout_host == 0) ||
            ((c->timeout_host >= c->timeout_remote) && (c->timeout_host >= c->timeout) &&
             isfinite(c->timeout_host))) &&
           ((ops->host == NULL) || (ops->partitioned != NULL)) &&
           (c->grace >= 0) && isfinite(c->grace) && (ops->send != NULL) &&
           (ops->failed != NULL) && (ops->excluded != NULL);
}

static void fs_det_init_state(fs_det_t *det)
{
    const fs_det_config_t *c = &det->cfg;
    unsigned i;

    for (i = 0; i < FS_DET_RATE_SLOTS; ++i) {
        det->rate[i].rank = c->n;
        det->rate[i].last = -HUGE_VAL;
    }
    /* the ring is known before start, so rx and report may come first */
    det->observed     = fs_det_walk(c->n, c->me, NULL, -1);
    det->observer     = fs_det_walk(c->n, c->me, NULL, +1);
    det->last_beat_at = -HUGE_VAL;
    det->last_loss_at = -HUGE_VAL;
    for (i = 0; (det->ops.host != NULL) && (i < c->n) && !det->stats.multi_host; ++i) {
        det->stats.multi_host = (i != c->me) && fs_det_remote(det, i);
    }
    det->obs_timeout  = fs_det_timeout_of(det, det->observed);
}

fs_status_t fs_det_create(const fs_det_config_t *config, const fs_det_ops_t *ops,
                          void *arg, fs_det_t **det_p)
{
    fs_det_t *det;
    uint64_t step;

    if ((config == NULL) || (ops == NULL) || (det_p == NULL) ||
        !fs_det_config_ok(config, ops)) {
        return FS_ERR_INVALID;
    }
    det = calloc(1, sizeof(*det));
    if (det == NULL) {
        goto err;
    }
    det->cfg    = *config;
    det->ops    = *ops;
    if (det->cfg.timeout_remote == 0) {
        det->cfg.timeout_remote = det->cfg.timeout;
    }
    if (det->cfg.timeout_host == 0) {
        det->cfg.timeout_host = det->cfg.timeout_remote;
    }
    det->arg    = arg;
    det->nbytes = ((size_t)config->n + 7) / 8;
    for (step = 1; step < config->n; step <<= 1) {
        det->max_nbr += 2;
    }
    /* one block: failed, left (together: the SYNC payload), gone */
    det->sync = calloc(3, det->nbytes);
    if (det->sync == NULL) {
        goto err_free_det;
    }
    det->bits      = det->sync;
    det->left_bits = det->sync + det->nbytes;
    det->gone      = det->sync + 2 * det->nbytes;
    det->nbr = calloc(det->max_nbr + 1, sizeof(*det->nbr));
    if (det->nbr == NULL) {
        goto err_free_sync;
    }
    fs_det_init_state(det);
    *det_p = det;
    return FS_OK;

err_free_sync:
    free(det->sync);
err_free_det:
    free(det);
err:
    return FS_ERR_NO_MEMORY;
}

void fs_det_destroy(fs_det_t *det)
{
    if (det == NULL) {
        return;
    }
    free(det->nbr);
    free(det->sync);
    free(det);
}
