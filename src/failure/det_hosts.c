/* The detector across hosts: what a job on several hosts (several network
 * stacks, detector.h's host op) adds to the protocol of detector.c.
 *   - timeouts: a process on another host gets timeout_remote (a link flap
 *     silences a link for about a second: docs/PARAMETERS.md);
 *   - the host probe: a suspected process on another host makes its
 *     observer PROBE the rest of that host, so a crashed or cut-off host is
 *     known in one timeout and a probe, not one timeout per process;
 *   - the partition rule: a process that loses at least half of the job at
 *     once ends itself (detector.h). */
#include "failure/detector_int.h"

int fs_det_remote(const fs_det_t *det, uint32_t rank)
{
    return (det->ops.host != NULL) &&
           (det->ops.host(det->arg, rank) != det->ops.host(det->arg, det->cfg.me));
}

/* The observed process p, on another host, was just suspected: PROBE the
 * predecessors the ring would watch next while they are on p's host. */
void fs_det_probe_host(fs_det_t *det, uint32_t p, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint64_t host;
    uint32_t r = p;

    if ((det->nprobe > 0) || !fs_det_remote(det, p)) {
        return;
    }
    host = det->ops.host(det->arg, p);
    for (;;) {
        r = fs_det_walk(c->n, r, det->gone, -1);
        if ((r >= c->n) || (r == c->me) || (r == p) ||
            (det->ops.host(det->arg, r) != host) || (det->nprobe == FS_DET_PROBE_MAX)) {
            break;
        }
        det->probe[det->nprobe]    = r;
        det->probe_ok[det->nprobe] = 0;
        ++det->nprobe;
        fs_det_send(det, r, FS_DET_PROBE, r);
    }
    det->probe_deadline = now + 3.0 * c->period;
}

void fs_det_probe_answer(fs_det_t *det, uint32_t from)
{
    uint32_t i;

    for (i = 0; i < det->nprobe; ++i) {
        det->probe_ok[i] |= det->probe[i] == from;
    }
}

/* The partition rule (detector.h), on learning one more failure. */
int fs_det_minority(fs_det_t *det, uint32_t rank, double now)
{
    const fs_det_config_t *c = &det->cfg;
    uint32_t alive, low;

    if (!det->stats.multi_host) {
        return 0;
    }
    if (now - det->last_loss_at > 2.0 * (c->timeout_remote + c->period)) {
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

/* The probe's deadline: who did not answer is gone with its host. */
void fs_det_probe_end(fs_det_t *det, double now)
{
    uint32_t i, n = det->nprobe;

    det->nprobe = 0;
    for (i = 0; (i < n) && !det->left; ++i) {
        if (!det->probe_ok[i] && !fs_det_bit(det->gone, det->probe[i])) {
            ++det->stats.suspicions;
            fs_det_learn(det, det->probe[i], FS_DET_CAUSE_TIMEOUT, det->cfg.n, now);
        }
    }
}

double fs_det_timeout_of(const fs_det_t *det, uint32_t rank)
{
    if ((rank < det->cfg.n) && fs_det_remote(det, rank)) {
        return det->cfg.timeout_remote;
    }
    return det->cfg.timeout;
}

