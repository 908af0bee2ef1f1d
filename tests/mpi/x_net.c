/* x_net: traffic between simulated hosts while their network misbehaves
 * (driven by tests/hosts/net.sh, issue 11).
 *
 * Usage: x_net SECONDS CUT
 *   CUT "-": nothing may fail (link flap shorter than the detector timeout,
 *   delay or loss below the tolerance); CUT "hN": every rank on host hN is
 *   expected to fail (its host crashed, or its link is cut); CUT "rN":
 *   rank N alone (killed).
 *
 * Every rank learns every rank's host, then (after a barrier) rank 0
 * writes $FS_NET_DIR/ready, the script's cue to act, and all ranks exchange
 * checked messages in rounds for SECONDS seconds: each round, every rank
 * sends to and receives from every live peer (tag 0; 64 B, and every 16th
 * round 256 KiB, rendezvous), and checks sender, round and every byte, so a
 * lost, duplicated, reordered or damaged message fails the test.  Ranks of
 * odd rank never talk to the CUT host's ranks: they must learn of their
 * failure from the detector alone.
 *
 * A failed operation must have the class MPI_ERR_RANK_FAIL_STOP and name a
 * rank on the CUT host (on the CUT host, cut off: a rank elsewhere); after
 * it, that peer is skipped.  At the end every
 * survivor waits (bounded) until its failed group is exactly the CUT host's
 * ranks, prints "X_NET rank R rounds K first-error T first-known T
 * all-known T" (CLOCK_REALTIME seconds, 0 if never: its first failed
 * operation; when its failed group first had a member, and all of them,
 * polled every millisecond while it waits) for the measurements,
 * finalizes and prints its OK
 * line.  A rank on the CUT host that reaches the end (it was cut off, not
 * killed) fails: it should have been excluded and ended itself. */
#include "faulttest.h"

#include <time.h>

#define XN_MAX   64
#define XN_SMALL 64
#define XN_LARGE (256 * 1024)

typedef struct xn {
    int    me, n, cut_me;
    int    cut[XN_MAX];      /* 1: rank on the CUT host */
    int    dead[XN_MAX];     /* 1: an operation with it failed */
    int    stop;             /* this round is the last (own clock or a peer's) */
    int    want;             /* ranks expected to fail */
    double first_error, first_known, all_known, polled;
    char  *out[XN_MAX], *in[XN_MAX];
} xn_t;

static double xn_wall(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void xn_hosts(xn_t *x, const char *cut)
{
    char *all = mt_host_names();
    int r;

    for (r = 0; r < x->n; r++) {
        x->cut[r] = (cut[0] == 'r') ? (atoi(cut + 1) == r)
                                    : strcmp(cut, all + (size_t)r * MPI_MAX_PROCESSOR_NAME) == 0;
        x->want += x->cut[r];
    }
    x->cut_me = x->cut[x->me];
    free(all);
}

static void xn_ready(void)
{
    const char *dir = getenv("FS_NET_DIR");
    char path[4096];
    FILE *f;

    if (dir == NULL)
        return;
    snprintf(path, sizeof path, "%s/ready", dir);
    f = fopen(path, "w");
    if (f != NULL)
        fclose(f);
}

static int xn_talks(const xn_t *x, int p)
{
    /* symmetric, or one side would wait for a message never sent */
    return p != x->me && !x->dead[p] && !((x->me & 1) && x->cut[p]) &&
           !((p & 1) && x->cut[x->me]);
}

/* One operation with peer p ended with rc: success, or p's failure. */
static void xn_outcome(xn_t *x, int p, int rc, const char *what, int round)
{
    if (rc == MPI_SUCCESS)
        return;
    ft_expect_failed(MT_HERE, rc, what);
    /* seen from a cut-off host, the others fail, until it ends itself */
    mt_expect(MT_HERE, x->cut[p] != x->cut_me, "%s with rank %d failed in "
              "round %d, which is on the same side", what, p, round);
    if (x->first_error == 0)
        x->first_error = xn_wall();
    x->dead[p] = 1;
}

/* Every survivor exchanges with every other in every round, so a stop flag
 * set by one reaches all of them in the same round: they end together. */
/* When the failed group first grew, and reached the expected size. */
static void xn_poll_known(xn_t *x)
{
    int k;

    if ((x->want == 0) || (x->all_known > 0) || (mt_now() - x->polled < 1e-3))
        return;
    x->polled = mt_now();
    k = ft_failed_count(MPI_COMM_WORLD);
    if ((k > 0) && (x->first_known == 0))
        x->first_known = xn_wall();
    if (k >= x->want)
        x->all_known = xn_wall();
}

static void xn_poll_known_cb(void *x)
{
    xn_poll_known(x);
}

static void xn_round(xn_t *x, int round, int stop)
{
    MPI_Request rq[2 * XN_MAX];
    int peer[2 * XN_MAX], k = 0, i, p, rc;
    int len = (round % 16 == 15) ? XN_LARGE : XN_SMALL;
    MPI_Status st;

    for (p = 0; p < x->n; p++) {
        if (!xn_talks(x, p))
            continue;
        mt_fill(x->out[p], (size_t)len, x->me * 100003 + p, round);
        x->out[p][0] = (char)stop;
        MT_CHECK(MPI_Irecv(x->in[p], len, MPI_BYTE, p, 0, MPI_COMM_WORLD, &rq[k]));
        peer[k++] = p;
        MT_CHECK(MPI_Isend(x->out[p], len, MPI_BYTE, p, 0, MPI_COMM_WORLD, &rq[k]));
        peer[k++] = -1 - p;
    }
    for (i = 0; i < k; i++) {
        p = peer[i] >= 0 ? peer[i] : -1 - peer[i];
        /* watching what this process knows meanwhile */
        rc = ft_wait_each(MT_HERE, &rq[i], &st, peer[i] >= 0 ? "receive" : "send",
                          xn_poll_known_cb, x);
        xn_outcome(x, p, rc, peer[i] >= 0 ? "receive" : "send", round);
        if (rc == MPI_SUCCESS && peer[i] >= 0) {
            mt_expect_status(MT_HERE, &st, p, 0, MPI_BYTE, len);
            mt_expect(MT_HERE, x->in[p][0] == 0 || x->in[p][0] == 1,
                      "stop flag %d from rank %d", x->in[p][0], p);
            stop |= x->in[p][0];
            x->in[p][0] = (char)mt_byte(p * 100003 + x->me, round, 0);
            mt_verify(MT_HERE, x->in[p], (size_t)len, p * 100003 + x->me, round,
                      "payload");
        }
    }
    x->stop = stop;
}

/* Survivor's end: its failed group becomes exactly the CUT host's ranks. */
static void xn_settle(xn_t *x)
{
    int r;

    for (r = 0; r < x->n; r++)
        if (x->cut[r])
            ft_wait_failed(MT_HERE, MPI_COMM_WORLD, r);
    if (x->want > 0 && x->all_known == 0)
        x->all_known = xn_wall();
    if (x->want > 0 && x->first_known == 0)
        x->first_known = x->all_known;
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == x->want,
              "failed group has %d ranks, the cut ones %d",
              ft_failed_count(MPI_COMM_WORLD), x->want);
}

int main(int argc, char **argv)
{
    xn_t x = {0};
    double t0, seconds;
    int round = 0, p;

    mt_init(&argc, &argv, "x_net");
    if (argc != 3)
        mt_fail(MT_HERE, "usage: x_net SECONDS CUT|-");
    seconds = atof(argv[1]);
    x.me = mt_rank();
    x.n = mt_size();
    mt_expect(MT_HERE, x.n <= XN_MAX, "at most %d ranks", XN_MAX);
    xn_hosts(&x, argv[2]);
    for (p = 0; p < x.n; p++) {
        x.out[p] = mt_malloc(XN_LARGE);
        x.in[p] = mt_malloc(XN_LARGE);
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (x.me == 0)
        xn_ready();
    for (t0 = mt_now(); !x.stop; round++) {
        xn_round(&x, round, mt_now() - t0 >= seconds);
        xn_poll_known(&x);
        mt_sleep_ms(1);
    }
    mt_expect(MT_HERE, !x.cut_me, "rank %d on the cut host ran to the end "
              "(%d rounds): it was not excluded", x.me, round);
    xn_settle(&x);
    printf("X_NET rank %d rounds %d first-error %.6f first-known %.6f all-known %.6f\n",
           x.me, round, x.first_error, x.first_known, x.all_known);
    for (p = 0; p < x.n; p++) {
        free(x.out[p]);
        free(x.in[p]);
    }
    return ft_finish();
}
