/* tf_leave: leaving is not failing.  A process that calls MPI_Finalize and
 * exits normally, while the others go on, is never reported failed:
 *  - its messages sent before leaving are still delivered (payloads
 *    checked) after it left;
 *  - MPIX_Comm_group_failed stays empty, the peers_failed counter stays 0,
 *    peers_left becomes 1, MPI_COMM_WORLD stays collectively enabled --
 *    also after the process is gone and the transport saw it go;
 *  - MPI_ANY_SOURCE receives on MPI_COMM_WORLD keep working: one posted
 *    before the departure completes normally afterwards, new ones too;
 *  - a receive naming the departed process -- pending before it left, or
 *    new -- and a send to it end with an error of class MPI_ERR_OTHER
 *    ("already called MPI_Finalize"), never MPIX_ERR_RANK_FAIL_STOP.
 * Not a fault test: nobody dies, and every rank (the leaver right after its
 * own MPI_Finalize) prints its OK line.
 *
 * The leaver is the last rank.
 * FS_TEST_NPS: 3 4
 */
#include "faulttest.h"

#include <errno.h>

#define NSMALL 16
#define NMED 256     /* still eager: the leaver's send completes alone */

static void progress(MPI_Comm comm)
{
    int flag;
    MPI_Status st;
    MT_CHECK(MPI_Iprobe(0, 32766, comm, &flag, &st));
}

/* Asserts rc is the "peer left" error: class MPI_ERR_OTHER, not the
 * failure class. */
static void expect_left(mt_loc at, int rc, const char *what)
{
    char s[MPI_MAX_ERROR_STRING];
    int n = 0;

    mt_expect(at, mt_errclass(rc) != MPIX_ERR_RANK_FAIL_STOP,
              "%s: reported as a failure (rc %d)", what, rc);
    mt_expect_class(at, rc, MPI_ERR_OTHER, what);
    MT_CHECK(MPI_Error_string(rc, s, &n));
    mt_expect(at, strstr(s, "MPI_Finalize") != NULL,
              "%s: error string '%s' does not say the peer finalized", what, s);
}

static void expect_not_failed(mt_loc at, const char *when)
{
    int active = -1;

    mt_expect(at, ft_failed_count(MPI_COMM_WORLD) == 0,
              "%s: failed group has %d members", when,
              ft_failed_count(MPI_COMM_WORLD));
    mt_expect(at, ft_counter("peers_failed") == 0, "%s: peers_failed = %llu",
              when, ft_counter("peers_failed"));
    mt_expect(at, ft_counter("peers_left") == 1, "%s: peers_left = %llu", when,
              ft_counter("peers_left"));
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(at, active == 1, "%s: MPI_COMM_WORLD collectively inactive",
              when);
}

static void leaver(int n)
{
    int small[NSMALL], med[NMED], pid = (int)getpid(), i;

    mt_fill(small, sizeof small, mt_rank(), 1);
    mt_fill(med, sizeof med, mt_rank(), 2);
    MT_CHECK(MPI_Send(small, NSMALL, MPI_INT, 0, 1, MPI_COMM_WORLD));
    MT_CHECK(MPI_Send(med, NMED, MPI_INT, 0, 2, MPI_COMM_WORLD));
    for (i = 0; i < n - 1; i++)
        MT_CHECK(MPI_Send(&pid, 1, MPI_INT, i, 3, MPI_COMM_WORLD));
    mt_expect(MT_HERE, ft_counter("peers_failed") == 0, "leaver: peers_failed "
              "= %llu", ft_counter("peers_failed"));
}

/* Waits (bounded) until rank L's departure is seen, checking on the way
 * that it is never reported as a failure. */
static void wait_departure(MPI_Comm rest, int L)
{
    double t0 = mt_now();

    while (ft_counter("peers_left") < 1) {
        progress(rest);
        mt_expect(MT_HERE, ft_counter("peers_failed") == 0 &&
                  ft_failed_count(MPI_COMM_WORLD) == 0,
                  "rank %d's departure was reported as a failure", L);
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(MT_HERE, "rank %d's departure not seen after %.0f s", L,
                    FT_DEADLINE);
    }
    expect_not_failed(MT_HERE, "after the departure");
}

/* Waits (bounded) until L's process is gone (reaped), then gives the
 * transport time to see it: still no failure. */
static void wait_gone(MPI_Comm rest, int L, int pid)
{
    double t0 = mt_now();

    while (kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
        progress(rest);
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(MT_HERE, "process %d of rank %d still exists after %.0f "
                    "s", pid, L, FT_DEADLINE);
    }
    t0 = mt_now();
    while (mt_now() - t0 < 0.3)
        progress(rest);
    expect_not_failed(MT_HERE, "after the process exited");
}

/* MPI_ANY_SOURCE still works among the L survivors (ring): the receive
 * pending since before the departure (*any_rq, into in), then new ones. */
static void wildcards_still_work(MPI_Request *any_rq, int *in, int L)
{
    int me = mt_rank(), to = (me + 1) % L, from = (me + L - 1) % L, it;
    int buf[NSMALL];
    MPI_Request rq;
    MPI_Status st;

    for (it = 7; it <= 9; it++) {
        if (it > 7)
            MT_CHECK(MPI_Irecv(in, NSMALL, MPI_INT, MPI_ANY_SOURCE, it,
                               MPI_COMM_WORLD, any_rq));
        mt_fill(buf, sizeof buf, me, it);
        MT_CHECK(MPI_Isend(buf, NSMALL, MPI_INT, to, it, MPI_COMM_WORLD, &rq));
        MT_CHECK(MPI_Wait(any_rq, &st));
        mt_expect_status(MT_HERE, &st, from, it, MPI_INT, NSMALL);
        mt_verify(MT_HERE, in, NSMALL * sizeof(int), from, it,
                  "MPI_ANY_SOURCE receive");
        MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    }
}

int main(int argc, char **argv)
{
    int me, n, L, x = 0, pid = 0, buf[NSMALL], in[NSMALL], med[NMED], rc;
    int pend_x = -1;
    MPI_Comm rest;
    MPI_Request any_rq, named_rq = MPI_REQUEST_NULL;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_leave");
    me = mt_rank();
    n = mt_size();
    L = n - 1;
    mt_expect(MT_HERE, n >= 3, "needs 3 ranks, got %d", n);
    ft_check_class();
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == L ? MPI_UNDEFINED : 0, me,
                            &rest));
    if (me != L) {
        /* pending before the departure: a wildcard receive (satisfied
         * later by a survivor) and, on rank 1, a receive naming L */
        MT_CHECK(MPI_Irecv(in, NSMALL, MPI_INT, MPI_ANY_SOURCE, 7,
                           MPI_COMM_WORLD, &any_rq));
        if (me == 1)
            MT_CHECK(MPI_Irecv(&pend_x, 1, MPI_INT, L, 8, MPI_COMM_WORLD,
                               &named_rq));
    }
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == L) {
        leaver(n);
        return ft_finish();     /* MPI_Finalize, then this rank's OK line */
    }

    /* the others: L's BYE must arrive, as a departure */
    MT_CHECK(MPI_Recv(&pid, 1, MPI_INT, L, 3, MPI_COMM_WORLD, &st));
    wait_departure(rest, L);

    /* the pending receive naming L ends, without blaming L */
    if (me == 1) {
        rc = ft_wait(MT_HERE, &named_rq, &st, "pending receive naming "
                          "the departed rank");
        expect_left(MT_HERE, rc, "pending receive naming the departed rank");
        mt_expect(MT_HERE, pend_x == -1, "failed receive wrote %d", pend_x);
    }

    /* L's messages sent before leaving are still delivered */
    if (me == 0) {
        MT_CHECK(MPI_Recv(buf, NSMALL, MPI_INT, L, 1, MPI_COMM_WORLD, &st));
        mt_verify(MT_HERE, buf, sizeof buf, L, 1, "small message of the "
                  "departed rank");
        MT_CHECK(MPI_Recv(med, NMED, MPI_INT, L, 2, MPI_COMM_WORLD, &st));
        mt_expect_status(MT_HERE, &st, L, 2, MPI_INT, NMED);
        mt_verify(MT_HERE, med, sizeof med, L, 2, "message of the departed "
                  "rank");
    }

    wait_gone(rest, L, pid);

    /* new operations naming L: a plain error, not a failure */
    expect_left(MT_HERE, MPI_Recv(&x, 1, MPI_INT, L, 4, MPI_COMM_WORLD, &st),
                "receive naming the departed rank");
    expect_left(MT_HERE, MPI_Send(&x, 1, MPI_INT, L, 4, MPI_COMM_WORLD),
                "send to the departed rank");

    wildcards_still_work(&any_rq, in, L);
    expect_not_failed(MT_HERE, "at the end");

    /* nothing left over; the survivors' communicator still synchronizes */
    MT_CHECK(MPI_Barrier(rest));
    MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &x, &st));
    mt_expect(MT_HERE, !x, "leftover message from %d tag %d", st.MPI_SOURCE,
              st.MPI_TAG);
    MT_CHECK(MPI_Barrier(rest));
    MT_CHECK(MPI_Comm_free(&rest));
    return ft_finish();
}
