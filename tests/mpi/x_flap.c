/* x_flap: traffic between simulated hosts while a link flaps (driven by
 * tests/hosts/flap.sh, issue 40).  Nothing may fail: every operation must
 * succeed, every payload arrive intact, in order and once.
 *
 * Usage: x_flap MODE SECONDS
 *   mix   rounds in which every rank exchanges with every other one (64 B,
 *         every 8th round 256 KiB: eager and rendezvous, both directions)
 *         and all take part in a checked MPI_Allreduce, 1 ms apart;
 *   rndv  64 MiB exchanges around a ring whose every edge crosses hosts
 *         (to rank + ranks-per-host), back to back;
 *   coll  checked MPI_Allreduce calls back to back (16 B to 1 MiB);
 *   fin   mix, then a barrier; each rank, out of it, writes
 *         $FS_NET_DIR/finalize.R (the script takes the link down once it
 *         has all of them), waits (at most 15 s) until $FS_NET_DIR/down
 *         exists and calls MPI_Finalize: every rank enters it while the
 *         link is down.  (A cue of rank 0 alone, 0.2 s before everyone
 *         entered, raced the barrier's last messages: a barrier done at
 *         rank 0 may still be in flight to others, and those left it only
 *         once the link was back: seen at 6 hosts in CI);
 *   reset point-to-point only (mix's sizes), SECONDS x 100 rounds: the
 *         script destroys the live TCP connections between two hosts (ss
 *         -K: a reset neither process asked for).  A pair whose link broke
 *         gets MPI_ERR_INTERN (a local break: nobody is blamed) and stops
 *         talking; every other pair goes on, every payload checked; at the
 *         end nobody is in any rank's failed group.  Prints
 *         "X_FLAP_RESET rank R broken K asks A" (K: peers whose link broke;
 *         A: processes whose host-mates its detector asked about them).
 * Rounds go on for SECONDS seconds of rank 0's clock (its decision travels
 * in the round's allreduce, so every rank ends at the same round).
 *
 * Once the first round is over rank 0 writes $FS_NET_DIR/ready, the
 * script's cue for the other modes.  Each rank prints, after
 * MPI_Finalize, "X_FLAP rank R rounds K init T0 T1 fin T2 T3 busy B"
 * (CLOCK_REALTIME seconds: MPI_Init's and MPI_Finalize's start and end;
 * B: 1 if a 64 MiB transfer (rndv) or an allreduce (coll) was in flight at
 * the time found in $FS_NET_DIR/down, 0 if not, - without that file), so
 * the script can check that the flap fell where the scenario says. */
#include "faulttest.h"

#include <time.h>
#include <unistd.h>

#define XF_MAX    64
#define XF_SMALL  64
#define XF_MEDIUM (256 * 1024)
#define XF_HUGE   ((size_t)64 << 20)
#define XF_VEC    (1 << 18)         /* ints of the largest allreduce: 1 MiB */
#define XF_SPANS  8192              /* in-flight intervals remembered */

typedef struct xf {
    int     me, n, per_host;
    int     stop;
    int     coll_busy;               /* coll: allreduces are the busy spans */
    double  t_init[2], t_fin[2];
    double  span[XF_SPANS][2];       /* busy intervals (wall clock) */
    int     nspan;
    char   *out[XF_MAX], *in[XF_MAX];
    char   *want;                    /* rndv: what the previous host's rank sends */
    int    *vec, *sum;
    int    *base, *base_sum;         /* allreduce: each rank's values and their sums */
    char    broken[XF_MAX];          /* reset: the link to that peer broke */
} xf_t;

static double xf_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void xf_cue(const char *name)
{
    const char *dir = getenv("FS_NET_DIR");
    char path[4096];
    FILE *f;

    if (dir == NULL)
        return;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    f = fopen(path, "w");
    if (f != NULL) {
        fprintf(f, "%.6f\n", xf_wall());
        fclose(f);
    }
}

/* Waits until $FS_NET_DIR/NAME exists, at most limit seconds (then on:
 * the script's own checks say what went wrong). */
static void xf_wait_cue(const char *name, double limit)
{
    const char *dir = getenv("FS_NET_DIR");
    char path[4096];
    double t0 = mt_now();

    if (dir == NULL)
        return;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    while (access(path, F_OK) != 0 && mt_now() - t0 < limit)
        mt_sleep_ms(5);
}

/* Ranks on this rank's host (by processor name): the ring of rndv then
 * crosses a host on every edge, whatever the host count. */
static void xf_hosts(xf_t *x)
{
    char *all = mt_host_names(), *mine = all + (size_t)x->me * MPI_MAX_PROCESSOR_NAME;
    int r;

    for (r = 0; r < x->n; r++)
        x->per_host += !strcmp(mine, all + (size_t)r * MPI_MAX_PROCESSOR_NAME);
    free(all);
    mt_expect(MT_HERE, x->per_host < x->n, "every rank on one host");
}

static void xf_busy(xf_t *x, double t0)
{
    if (x->nspan < XF_SPANS) {
        x->span[x->nspan][0] = t0;
        x->span[x->nspan][1] = xf_wall();
        x->nspan++;
    }
}

/* A checked allreduce of count ints whose element 0 carries the stop
 * flags (a sum: any rank's 1 stops everyone).  Element i of rank r is
 * base(r, i) + round, so the expected sums are computed once and the check
 * costs little next to the call (coll mode is busy inside the calls). */
static void xf_allreduce(xf_t *x, int round, int count, int stop)
{
    int i;
    double t0;

    for (i = 1; i < count; i++)
        x->vec[i] = x->base[i] + round;
    x->vec[0] = stop;
    t0 = xf_wall();
    ft_watchdog_arm(MT_HERE, "MPI_Allreduce");
    MT_CHECK(MPI_Allreduce(x->vec, x->sum, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    ft_watchdog_disarm();
    if (x->coll_busy)
        xf_busy(x, t0);
    for (i = 1; i < count; i++)
        if (x->sum[i] != x->base_sum[i] + x->n * round)
            mt_fail(MT_HERE, "allreduce round %d of %d ints: element %d is %d, "
                    "not %d", round, count, i, x->sum[i], x->base_sum[i] + x->n * round);
    mt_expect(MT_HERE, x->sum[0] >= 0 && x->sum[0] <= x->n, "stop sum %d", x->sum[0]);
    x->stop = x->sum[0] > 0;
}

static void xf_allreduce_init(xf_t *x)
{
    int i, r;

    x->base     = mt_malloc(XF_VEC * sizeof(int));
    x->base_sum = mt_malloc(XF_VEC * sizeof(int));
    for (i = 0; i < XF_VEC; i++) {
        x->base[i]     = mt_ival(x->me, 0, (size_t)i) & 0xffff;
        x->base_sum[i] = 0;
        for (r = 0; r < x->n; r++)
            x->base_sum[i] += mt_ival(r, 0, (size_t)i) & 0xffff;
    }
}

/* A receive from and a send to every other rank whose link did not break
 * (mix's and reset's sizes); peer[i]: the rank of a receive, -1 - rank of a
 * send.  Returns how many requests. */
static int xf_post(xf_t *x, int round, int len, MPI_Request *rq, int *peer)
{
    int k = 0, p;

    for (p = 0; p < x->n; p++) {
        if (p == x->me || x->broken[p])
            continue;
        mt_fill(x->out[p], (size_t)len, x->me * 1000 + p, round);
        MT_CHECK(MPI_Irecv(x->in[p], len, MPI_BYTE, p, 0, MPI_COMM_WORLD, &rq[k]));
        peer[k++] = p;
        MT_CHECK(MPI_Isend(x->out[p], len, MPI_BYTE, p, 0, MPI_COMM_WORLD, &rq[k]));
        peer[k++] = -1 - p;
    }
    return k;
}

/* Every rank with every other one, both directions. */
static void xf_mix_round(xf_t *x, int round, int stop)
{
    MPI_Request rq[2 * XF_MAX];
    int peer[2 * XF_MAX], k, i, p;
    int len = (round % 8 == 7) ? XF_MEDIUM : XF_SMALL;
    MPI_Status st;

    k = xf_post(x, round, len, rq, peer);
    for (i = 0; i < k; i++) {
        MT_CHECK(ft_wait(MT_HERE, &rq[i], &st, peer[i] >= 0 ? "receive" : "send"));
        if (peer[i] >= 0) {
            p = peer[i];
            mt_expect_status(MT_HERE, &st, p, 0, MPI_BYTE, len);
            mt_verify(MT_HERE, x->in[p], (size_t)len, p * 1000 + x->me, round, "payload");
        }
    }
    xf_allreduce(x, round, 64, stop);
}

/* reset: a pair's link may break (a local error, class MPI_ERR_INTERN);
 * anything else is a failure. */
static void xf_reset_wait(xf_t *x, MPI_Request *rq, int p, int len, int round, int recv)
{
    MPI_Status st;
    int rc, cls;

    rc = ft_wait(MT_HERE, rq, &st, recv ? "receive" : "send");
    if (rc != MPI_SUCCESS) {
        MPI_Error_class(rc, &cls);
        mt_expect(MT_HERE, cls == MPI_ERR_INTERN, "round %d: %s with rank %d: class %d, "
                  "not a local break (MPI_ERR_INTERN)", round, recv ? "receive" : "send",
                  p, cls);
        x->broken[p] = 1;
        return;
    }
    if (recv) {
        mt_expect_status(MT_HERE, &st, p, 0, MPI_BYTE, len);
        mt_verify(MT_HERE, x->in[p], (size_t)len, p * 1000 + x->me, round, "payload");
    }
}

static void xf_reset_round(xf_t *x, int round, int stop)
{
    MPI_Request rq[2 * XF_MAX];
    int peer[2 * XF_MAX], k, i, p;
    int len = (round % 8 == 7) ? XF_MEDIUM : XF_SMALL;

    (void)stop;
    k = xf_post(x, round, len, rq, peer);
    for (i = 0; i < k; i++) {
        p = peer[i] >= 0 ? peer[i] : -1 - peer[i];
        xf_reset_wait(x, &rq[i], p, len, round, peer[i] >= 0);
    }
}

/* A 64 MiB payload: the sender's fixed pattern (filled once: filling 64 MiB
 * per round would leave the transfers a small part of the time) with the
 * round and the sender in a word at every 64 KiB, so that a stale or
 * misdirected buffer still fails the check. */
#define XF_STAMP_STEP (64 * 1024)
static void xf_stamp(char *buf, int rank, int round)
{
    size_t off;
    uint64_t w = ((uint64_t)(uint32_t)round << 32) | (uint32_t)rank;

    for (off = 0; off < XF_HUGE; off += XF_STAMP_STEP)
        memcpy(buf + off, &w, sizeof(w));
}

/* 64 MiB to the next host's rank, from the previous host's. */
static void xf_rndv_round(xf_t *x, int round, int stop)
{
    int to = (x->me + x->per_host) % x->n, from = (x->me + x->n - x->per_host) % x->n;
    MPI_Request rq[2];
    MPI_Status st;
    double t0;

    xf_stamp(x->out[0], x->me, round);
    xf_stamp(x->want, from, round);
    memset(x->in[0], 0, XF_STAMP_STEP);
    t0 = xf_wall();
    MT_CHECK(MPI_Irecv(x->in[0], (int)XF_HUGE, MPI_BYTE, from, 1, MPI_COMM_WORLD, &rq[0]));
    MT_CHECK(MPI_Isend(x->out[0], (int)XF_HUGE, MPI_BYTE, to, 1, MPI_COMM_WORLD, &rq[1]));
    if (round == 1 && x->me == 0)
        xf_cue("ready");    /* the script's cue: a transfer is in flight */
    MT_CHECK(ft_wait(MT_HERE, &rq[0], &st, "64 MiB receive"));
    MT_CHECK(ft_wait(MT_HERE, &rq[1], MPI_STATUS_IGNORE, "64 MiB send"));
    xf_busy(x, t0);
    mt_expect_status(MT_HERE, &st, from, 1, MPI_BYTE, (int)XF_HUGE);
    if (memcmp(x->in[0], x->want, XF_HUGE) != 0) {
        size_t i = 0;

        while (x->in[0][i] == x->want[i])
            i++;
        mt_fail(MT_HERE, "64 MiB payload of round %d from rank %d: byte %zu is "
                "0x%02x, not 0x%02x%s", round, from, i, (unsigned char)x->in[0][i],
                (unsigned char)x->want[i],
                (i % XF_STAMP_STEP < 8) ? " (a round or sender stamp)" : "");
    }
    xf_allreduce(x, round, 2, stop);
}

static void xf_coll_round(xf_t *x, int round, int stop)
{
    static const int counts[] = {4, 256, 4096, XF_VEC};

    xf_allreduce(x, round, counts[round % 4], stop);
}

/* Whether a busy interval holds the time in $FS_NET_DIR/down: 1, 0, or -1
 * without that file. */
static int xf_busy_at_down(const xf_t *x)
{
    const char *dir = getenv("FS_NET_DIR");
    char path[4096];
    double t = 0;
    FILE *f;
    int i, ok;

    if (dir == NULL)
        return -1;
    snprintf(path, sizeof path, "%s/down", dir);
    f = fopen(path, "r");
    if (f == NULL)
        return -1;
    ok = fscanf(f, "%lf", &t) == 1;
    fclose(f);
    if (!ok)
        return -1;
    for (i = 0; i < x->nspan; i++)
        if (x->span[i][0] <= t && t <= x->span[i][1])
            return 1;
    return 0;
}

static void xf_alloc(xf_t *x, const char *mode)
{
    int p;

    x->vec = mt_malloc(XF_VEC * sizeof(int));
    x->sum = mt_malloc(XF_VEC * sizeof(int));
    xf_allreduce_init(x);
    if (!strcmp(mode, "rndv")) {
        int from = (x->me + x->n - x->per_host) % x->n;

        x->out[0] = mt_malloc(XF_HUGE);
        x->in[0]  = mt_malloc(XF_HUGE);
        x->want   = mt_malloc(XF_HUGE);
        mt_fill(x->out[0], XF_HUGE, x->me, 0);
        mt_fill(x->want, XF_HUGE, from, 0);
        return;
    }
    for (p = 0; p < x->n; p++) {
        x->out[p] = mt_malloc(XF_MEDIUM);
        x->in[p]  = mt_malloc(XF_MEDIUM);
    }
}

int main(int argc, char **argv)
{
    static xf_t x;
    void (*round_fn)(xf_t *, int, int) = xf_mix_round;
    double seconds, t0;
    int round = 0, busy = 0, p;
    const char *mode;

    x.t_init[0] = xf_wall();
    mt_init(&argc, &argv, "x_flap");
    x.t_init[1] = xf_wall();
    if (argc != 3)
        mt_fail(MT_HERE, "usage: x_flap mix|rndv|coll|fin|reset SECONDS");
    mode    = argv[1];
    seconds = atof(argv[2]);
    x.me    = mt_rank();
    x.n     = mt_size();
    mt_expect(MT_HERE, x.n <= XF_MAX, "at most %d ranks", XF_MAX);
    if (!strcmp(mode, "rndv")) {
        round_fn = xf_rndv_round;
    } else if (!strcmp(mode, "coll")) {
        round_fn    = xf_coll_round;
        x.coll_busy = 1;
    } else if (!strcmp(mode, "reset")) {
        round_fn = xf_reset_round;
        MT_CHECK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    } else if (strcmp(mode, "mix") && strcmp(mode, "fin")) {
        mt_fail(MT_HERE, "unknown mode %s", mode);
    }
    xf_hosts(&x);
    xf_alloc(&x, mode);
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    for (t0 = mt_now(); round_fn == xf_reset_round && round < (int)(seconds * 100); round++) {
        if (round == 1 && x.me == 0)
            xf_cue("ready");
        xf_reset_round(&x, round, 0);
        mt_sleep_ms(1);
    }
    if (round_fn == xf_reset_round) {
        for (p = 0; p < x.n; p++)
            busy += x.broken[p];
        mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 0, "%d process(es) in the "
                  "failed group: a broken link blamed somebody",
                  ft_failed_count(MPI_COMM_WORLD));
        {
            unsigned long long asks = 0;

            MT_CHECK(MPIX_Failstop_counter("hb_asks", &asks));
            printf("X_FLAP_RESET rank %d broken %d asks %llu\n", x.me, busy, asks);
        }
        x.stop = 1;
    }
    for (t0 = mt_now(); !x.stop; round++) {
        /* the cue once traffic runs: after the first round (rndv: once
         * the second round's transfer is in flight) */
        if (round == 1 && x.me == 0 && round_fn != xf_rndv_round)
            xf_cue("ready");
        round_fn(&x, round, x.me == 0 && mt_now() - t0 >= seconds);
        if (round_fn == xf_mix_round)
            mt_sleep_ms(1);
    }
    if (!strcmp(mode, "fin")) {
        char name[32];

        MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
        snprintf(name, sizeof name, "finalize.%d", x.me);
        xf_cue(name);
        xf_wait_cue("down", 15.0);
    }
    busy = xf_busy_at_down(&x);
    if (getenv("XF_SPANS") != NULL)
        for (p = 0; p < x.nspan; p++)
            fprintf(stderr, "span rank %d %.3f %.3f\n", x.me, x.span[p][0], x.span[p][1]);
    x.t_fin[0] = xf_wall();
    if (MPI_Finalize() != MPI_SUCCESS)
        mt_fail(MT_HERE, "MPI_Finalize failed");
    x.t_fin[1] = xf_wall();
    printf("X_FLAP rank %d rounds %d init %.6f %.6f fin %.6f %.6f busy %s\n", x.me,
           round, x.t_init[0], x.t_init[1], x.t_fin[0], x.t_fin[1],
           busy < 0 ? "-" : busy ? "1" : "0");
    printf("MPITEST OK x_flap rank %d/%d\n", x.me, x.n);
    for (p = 0; p < XF_MAX; p++) {
        free(x.out[p]);
        free(x.in[p]);
    }
    free(x.want);
    free(x.vec);
    free(x.sum);
    free(x.base);
    free(x.base_sum);
    return 0;
}
