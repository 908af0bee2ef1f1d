/* tf_fail_kill: a process killed from outside while it computes (not in
 * MPI) is detected (MPI-FT 17.3, 17.6): failstop-run --kill sends SIGKILL
 * to rank 1 at 1.5 s, while rank 1 is in a busy loop that never calls MPI;
 * survivors blocked in MPI_Recv from it get MPIX_ERR_RANK_FAIL_STOP, see it
 * (alone) in the failed group, keep exchanging messages and finalize.  The
 * victim never prints OK: if the kill does not come, it fails the test.
 * (tf_fail_kill_idle: the same with the victim asleep.)
 *
 * A blocking receive cannot be given a deadline, so a watchdog alarm turns
 * a hang into a failure naming the call.
 * FS_TEST_NPS: 3
 * FS_TEST_RUN_OPTS: --kill 1@1.5
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 10
 */
#include "faulttest.h"

#define KILL_AT 1.5   /* seconds after start, as in RUN_OPTS */

/* The victim computes until it is killed; it must not outlive the
 * deadline. */
__attribute__((noreturn))
static void victim(double t0)
{
    volatile double x = 1.0;
    unsigned long i;

    for (;;) {
        for (i = 0; i < 1000000; i++)
            x = x * 1.0000001 + 1e-9;
        if (mt_now() - t0 > KILL_AT + FT_DEADLINE)
            mt_fail(MT_HERE, "still alive %.0f s after the planned kill "
                    "(x=%g)", FT_DEADLINE, x);
    }
}

int main(int argc, char **argv)
{
    const int v = 1;
    int me, n, i, x = -1, nlive = 0, live[64];
    MPI_Status st;
    double t0;

    mt_init(&argc, &argv, "tf_fail_kill");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_check_class();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = mt_now();
    if (me == v)
        victim(t0);

    ft_watchdog_arm(MT_HERE, "MPI_Recv from the killed rank");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD,
                                       &st), "Recv from the killed rank");
    ft_watchdog_disarm();
    mt_expect(MT_HERE, x == -1, "failed receive wrote %d", x);
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank %d not in the failed group", v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, 2);
    return ft_finish();
}
