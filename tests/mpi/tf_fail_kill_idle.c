/* tf_fail_kill_idle: a process killed from outside while it sleeps (not in
 * MPI) is detected (MPI-FT 17.3, 17.6): failstop-run --kill sends SIGKILL
 * to rank 1 at 1.5 s, while rank 1 sleeps in nanosleep and never calls MPI;
 * survivors blocked on it -- rank 0 in an MPI_ANY_SOURCE MPI_Recv, the
 * others in an MPI_Probe naming it -- get MPIX_ERR_RANK_FAIL_STOP, see it
 * (alone) in the failed group, and after acknowledging the failure use
 * MPI_ANY_SOURCE again among themselves.  The victim never prints OK: if
 * the kill does not come, it fails the test.  (tf_fail_kill: the same with
 * the victim computing.)
 *
 * A blocking call cannot be given a deadline, so a watchdog alarm turns a
 * hang into a failure naming the call.
 * FS_TEST_NPS: 4
 * FS_TEST_RUN_OPTS: --kill 1@1.5
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 10
 */
#include "faulttest.h"

#define KILL_AT 1.5   /* seconds after start, as in RUN_OPTS */

/* The victim sleeps until it is killed; it must not outlive the deadline. */
__attribute__((noreturn))
static void victim(double t0)
{
    for (;;) {
        mt_sleep_ms(10);
        if (mt_now() - t0 > KILL_AT + FT_DEADLINE)
            mt_fail(MT_HERE, "still alive %.0f s after the planned kill",
                    FT_DEADLINE);
    }
}

int main(int argc, char **argv)
{
    const int v = 1;
    int me, n, i, x = -1, nlive = 0, live[64], buf[8], in[8];
    MPI_Status st;
    MPI_Request rq;
    double t0;

    mt_init(&argc, &argv, "tf_fail_kill_idle");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_check_class();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = mt_now();
    if (me == v)
        victim(t0);

    if (me == 0) {
        ft_watchdog_arm(MT_HERE, "MPI_Recv(MPI_ANY_SOURCE) while a rank is killed");
        ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 1,
                                           MPI_COMM_WORLD, &st),
                         "ANY_SOURCE Recv when a rank is killed");
        ft_watchdog_disarm();
        mt_expect(MT_HERE, x == -1, "failed receive wrote %d", x);
    } else {
        ft_watchdog_arm(MT_HERE, "MPI_Probe naming the killed rank");
        ft_expect_failed(MT_HERE, MPI_Probe(v, 1, MPI_COMM_WORLD, &st),
                         "Probe naming the killed rank");
        ft_watchdog_disarm();
    }
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank %d not in the failed group", v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));

    /* survivors: acknowledged, MPI_ANY_SOURCE works again */
    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    if (nlive > 1) {
        int k, to, from;
        for (k = 0; live[k] != me; k++)
            ;
        to = live[(k + 1) % nlive];
        from = live[(k + nlive - 1) % nlive];
        mt_fill(buf, sizeof buf, me, 3);
        MT_CHECK(MPI_Irecv(in, 8, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD,
                           &rq));
        MT_CHECK(MPI_Send(buf, 8, MPI_INT, to, 3, MPI_COMM_WORLD));
        MT_CHECK(MPI_Wait(&rq, &st));
        mt_expect_status(MT_HERE, &st, from, 3, MPI_INT, 8);
        mt_verify(MT_HERE, in, sizeof in, from, 3, "ANY_SOURCE after ack");
    }
    ft_survivors_exchange(live, nlive, 2);
    return ft_finish();
}
