/* tf_hb_stop: a hung process is detected (issue: failure detector; MPI-FT
 * 17.3).  failstop-run --kill sends SIGSTOP to rank 1 at 1.5 s: no transport
 * reports a stopped process (its sockets and shared memory stay open), so
 * only failstop's heartbeat detector can.  Checked at every survivor:
 *  - rank 0, blocked in MPI_Recv from rank 1, gets MPIX_ERR_RANK_FAIL_STOP;
 *  - the others, which never exchange a message with rank 1 and only probe
 *    for it, learn of the failure too (the detector tells everyone);
 *  - rank 1 is the only member of the failed group; survivors keep
 *    exchanging messages and finalize.
 *  - when a survivor learns of the failure, rank 1's process still exists
 *    and is stopped (state T in /proc): the failure was found while it was
 *    hung, not after it died (a transport would have reported a death).
 * The job must end although rank 1 never runs again: failstop-run's waiter
 * kills a rank that stays stopped (--fence-stopped, 4 s here), which the
 * harness counts as the planned death.  A blocking receive cannot be given a
 * deadline, so a watchdog alarm turns a hang into a failure naming it.
 * FS_TEST_NPS: 4
 * FS_TEST_RUN_OPTS: --kill 1@1.5:STOP --fence-stopped 4000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 2
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    const int v = 1;
    int me, x = -1, pid = (int)getpid(), vpid = 0;
    MPI_Status st;
    double t0;

    mt_init(&argc, &argv, "tf_hb_stop");
    me = mt_rank();
    ft_check_class();
    /* everyone runs on this node (the test launches locally) */
    MT_CHECK(MPI_Bcast(&pid, 1, MPI_INT, v, MPI_COMM_WORLD));
    vpid = pid;
    t0 = mt_now();
    if (me == v) {
        /* computes without MPI until stopped; must never get further */
        while (mt_now() - t0 < 1.5 + FT_DEADLINE) {
        }
        mt_fail(MT_HERE, "not stopped %.0f s after the planned SIGSTOP",
                FT_DEADLINE);
    }
    if (me == 0) {
        ft_watchdog_arm(MT_HERE, "MPI_Recv from the stopped rank");
        ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 1,
                                           MPI_COMM_WORLD, &st),
                         "MPI_Recv from the stopped rank");
        ft_watchdog_disarm();
        mt_expect(MT_HERE, x == -1, "failed receive wrote %d", x);
    } else {
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    }
    mt_expect(MT_HERE, ft_is_stopped(vpid), "rank %d (pid %d) is not stopped any "
              "more when its failure is known: found by its death, not its "
              "hang", v, vpid);
    ft_only_failed_then_exchange(v, 5);
    return ft_finish();
}
