/* The detector across hosts: what a job on several hosts (several network
 * stacks, detector.h's host op) adds to the protocol of detector.c.
 *   - timeouts: a process on another host gets timeout_remote before it is
 *     suspected (a link flap silences a link for longer than itself:
 *     docs/PARAMETERS.md);
 *   - the host check: a suspected process on another host makes its
 *     observer PROBE it and the rest of that host: if the host answers and
 *     it does not, it alone is failed; if nobody answers, the host is
 *     unreachable, and its processes are failed only once it has been
 *     silent for timeout_host (an outage shorter than that costs nothing),
 *     all at once, not one timeout per process;
 *   - the check (fs_det_check): the local engine's link to a process on
 *     another host broke as a death or an outage would break it; that
 *     process's host-mates are asked whether it exited (they can tell: it
 *     is a process of their kernel), and one that sees it gone fails it;
 *   - the partition rule: a process that loses at least half of the job at
 *     once ends itself (detector.h). */
#include "failure/detector_int.h"

#include <math.h>

int fs_det_remote(const fs_det_t *det, uint32_t rank)
{
    return (det->ops.host != NULL) &&
           (det->ops.host(det->arg, rank) != det->ops.host(det->arg, det->cfg.me));
}

/* The observed process p, on another host, has been silent for
 * timeout_remote: the host check starts.  p and the predecessors the ring
 * would watch next on p's host are PROBEd every period (fs_det_probe_step),
 * until p answers (it is alive: the check is over), another of them
 * answers and 3 periods pass (the host is reachable: those still silent,
 * hung or dead, are failed), or none has answered for timeout_host since p
 * was last heard (the host is gone, or cut off for longer than an outage
 * the job tolerates: all are failed). */
void fs_det_probe_host(fs_det_t *det, uint32_t p, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint64_t host;
    uint32_t r = p;

    if (det->nprobe > 0) {
        return;
    }
    ++det->stats.host_checks;
    host = det->ops.host(det->arg, p);
    det->probe[0]      = p;
    det->probe_ok[0]   = 0;
    det->nprobe        = 1;
    for (;;) {
        r = fs_det_walk(c->n, r, det->gone, -1);
        if ((r >= c->n) || (r == c->me) || (r == p) ||
            (det->ops.host(det->arg, r) != host) || (det->nprobe == FS_DET_PROBE_MAX)) {
            break;
        }
        det->probe[det->nprobe]    = r;
        det->probe_ok[det->nprobe] = 0;
        ++det->nprobe;
    }
    det->probe_since   = (det->last_beat_at > det->watch_at) ? det->last_beat_at
                                                              : det->watch_at;
    det->probe_mate_at = HUGE_VAL;
    det->probe_next    = now;
    fs_det_probe_step(det, now);
}

void fs_det_probe_answer(fs_det_t *det, uint32_t from, double now)
{
    uint32_t i;

    for (i = 0; i < det->nprobe; ++i) {
        if ((det->probe[i] == from) && !det->probe_ok[i]) {
            det->probe_ok[i] = 1;
            if ((i > 0) && (det->probe_mate_at == HUGE_VAL)) {
                det->probe_mate_at = now;
            }
        }
    }
}

void fs_det_probe_cancel(fs_det_t *det)
{
    det->nprobe = 0;
}

/* The check's verdict: every probed process that did not answer is failed.
 * The list is copied first: each failure repairs the ring, which may watch
 * one of them next and cancel the check. */
static void fs_det_probe_fail(fs_det_t *det, double now)
{
    uint32_t gone[FS_DET_PROBE_MAX];
    uint32_t i, k = 0, n = det->nprobe;

    for (i = 0; i < n; ++i) {
        if (!det->probe_ok[i]) {
            gone[k++] = det->probe[i];
        }
    }
    det->nprobe = 0;
    for (i = 0; (i < k) && !det->left; ++i) {
        if (!fs_det_bit(det->gone, gone[i])) {
            ++det->stats.suspicions;
            fs_det_learn(det, gone[i], FS_DET_CAUSE_TIMEOUT, det->cfg.n, now);
        }
    }
}

/* Once per period while the check runs. */
void fs_det_probe_step(fs_det_t *det, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint32_t i;

    if (det->probe_ok[0]) {
        /* the observed answered: alive (its beat restarted its timeout),
         * and the check is over; its host-mates have observers of their
         * own.  A check that went on would hold the next one off if it
         * fell silent again. */
        det->nprobe = 0;
        return;
    }
    if ((now - det->probe_mate_at >= 3.0 * c->period) ||
        ((det->probe_mate_at == HUGE_VAL) && (now - det->probe_since >= c->timeout_host))) {
        fs_det_probe_fail(det, now);
        return;
    }
    for (i = 0; i < det->nprobe; ++i) {
        if (!det->probe_ok[i]) {
            fs_det_send(det, det->probe[i], FS_DET_PROBE, det->probe[i]);
        }
    }
    det->probe_next = now + c->period;
}

/* The partition rule (detector.h), on learning one more failure. */
int fs_det_minority(fs_det_t *det, uint32_t rank, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint32_t alive, low;

    if (!det->stats.multi_host) {
        return 0;
    }
    if (now - det->last_loss_at > 2.0 * (c->timeout_host + c->period)) {
        /* a new period: the view is what was alive before this loss (rank
         * is already counted gone) */
        det->view_n = c->n - det->count - det->nleft + 1;
        for (low = 0; (low < c->n) && (low != rank) && fs_det_bit(det->gone, low); ++low) {
        }
        det->view_low = low;
        det->lost     = 0;
        det->low_lost = 0;
    }
    det->last_loss_at = now;
    det->lost        += 1;
    det->low_lost    |= rank == det->view_low;
    alive = det->view_n - det->lost;
    return (2 * alive < det->view_n) || ((2 * alive == det->view_n) && det->low_lost);
}

double fs_det_timeout_of(const fs_det_t *det, uint32_t rank)
{
    if ((rank < det->cfg.n) && fs_det_remote(det, rank)) {
        return det->cfg.timeout_remote;
    }
    return det->cfg.timeout;
}

/* ---- fs_det_check: a broken link is a question for the peer's host ------ */

/* Ranks scanned for host-mates, before the ring's nearest: under a mapping
 * by node they are a host count apart, not neighbours. */
#define FS_DET_ASK_SCAN 4096u

static void fs_det_ask_mates(fs_det_t *det, fs_det_ask_t *ask)
{
    const fs_det_config_t *c = &det->cfg;
    uint64_t host = det->ops.host(det->arg, ask->rank);
    uint32_t k, r, limit = (c->n - 1 < FS_DET_ASK_SCAN) ? c->n - 1 : FS_DET_ASK_SCAN;

    ask->nmates = 0;
    for (k = 1; (k <= limit) && (ask->nmates < FS_DET_ASK_MATES); ++k) {
        r = (ask->rank + c->n - k) % c->n;
        if ((r != c->me) && !fs_det_bit(det->gone, r) &&
            (det->ops.host(det->arg, r) == host)) {
            ask->mates[ask->nmates++] = r;
        }
    }
}

void fs_det_check(fs_det_t *det, uint32_t rank, double now)
{
    const fs_det_config_t *c = &det->cfg;
    fs_det_ask_t *ask;
    uint32_t i;

    if (!det->started || det->left || (rank >= c->n) || (rank == c->me) ||
        fs_det_bit(det->gone, rank) || !fs_det_remote(det, rank)) {
        return;
    }
    for (i = 0; i < det->nasks; ++i) {
        if (det->asks[i].rank == rank) {
            return;
        }
    }
    if (det->nasks == FS_DET_ASK_MAX) {
        return;                     /* the ring decides, as for anyone */
    }
    ask       = &det->asks[det->nasks];
    ask->rank = rank;
    ask->at   = now + c->timeout_host + c->period;
    fs_det_ask_mates(det, ask);
    if (ask->nmates == 0) {
        return;                     /* alone on its host: only the ring can tell */
    }
    ++det->nasks;
    ++det->stats.asks;
    det->ask_next = now;
}

/* A host-mate of subject is asked whether it still runs.  What it answers
 * is an exit of its own host (pidfd), or nothing: a departure announced
 * before the exit (LEAVE) still wins, as for an exit its observer sees. */
void fs_det_ask_rx(fs_det_t *det, uint32_t subject, double now)
{
    fs_det_ask_t *exit;
    uint32_t i;

    if (!det->started || det->left || (subject == det->cfg.me) ||
        fs_det_bit(det->gone, subject) || (det->ops.exited == NULL) ||
        fs_det_remote(det, subject) || (det->nexits == FS_DET_ASK_MAX)) {
        return;
    }
    for (i = 0; i < det->nexits; ++i) {
        if (det->exits[i].rank == subject) {
            return;
        }
    }
    if (!fs_det_rate_ok(det, FS_DET_RATE_ASK, subject, now) ||
        !det->ops.exited(det->arg, subject)) {
        return;
    }
    exit         = &det->exits[det->nexits++];
    exit->rank   = subject;
    exit->nmates = 0;
    exit->at     = now + FS_DET_EXIT_PERIODS * det->cfg.period;
}

double fs_det_asks_deadline(const fs_det_t *det)
{
    double t = (det->nasks > 0) ? det->ask_next : HUGE_VAL;
    uint32_t i;

    for (i = 0; i < det->nexits; ++i) {
        if (det->exits[i].at < t) {
            t = det->exits[i].at;
        }
    }
    return t;
}

/* Exits found for others become failures (unless their departure came);
 * questions still open are sent again (datagrams get lost). */
void fs_det_asks_step(fs_det_t *det, double now)
{
    uint32_t i, k;

    for (i = 0; i < det->nexits;) {
        fs_det_ask_t exit = det->exits[i];

        if (exit.at > now) {
            ++i;
            continue;
        }
        det->exits[i] = det->exits[--det->nexits];
        if (!fs_det_bit(det->gone, exit.rank) && !det->left) {
            ++det->stats.suspicions;
            fs_det_learn(det, exit.rank, FS_DET_CAUSE_EXIT, det->cfg.n, now);
        }
    }
    if ((det->nasks == 0) || (now < det->ask_next)) {
        return;
    }
    for (i = 0; i < det->nasks;) {
        fs_det_ask_t *ask = &det->asks[i];

        if (fs_det_bit(det->gone, ask->rank) || (now >= ask->at)) {
            *ask = det->asks[--det->nasks];
            continue;
        }
        for (k = 0; k < ask->nmates; ++k) {
            if (!fs_det_bit(det->gone, ask->mates[k])) {
                fs_det_send(det, ask->mates[k], FS_DET_ASK, ask->rank);
            }
        }
        ++i;
    }
    det->ask_next = now + det->cfg.period;
}
