/* tf_life_wireup: a process killed inside MPI_Init once failstop has
 * created its endpoints to every process (UCX wire-up started, the
 * detector armed) and before Open MPI's closing barrier
 * (pml_failstop_inject 2:at=wireup).  The others are in MPI_Init too; Open
 * MPI's runtime completes the barrier without the dead process, so their
 * MPI_Init returns, and their first operations with it -- a 100 kB send, a
 * receive, a synchronous send, a broadcast rooted at it -- end with
 * MPIX_ERR_RANK_FAIL_STOP (never MPI_ERR_INTERN, never a hang: a watchdog
 * alarm), then they keep talking among themselves (ft_dead_peer_first_ops,
 * shared with tf_fail_early).  tf_life_wireup_stop: the same with SIGSTOP.
 * FS_TEST_NPS: 3
 * Open MPI 4.1's closing fence of MPI_Init sometimes waits for the dead
 * process for ever (1 run in 10 to 40 here); then failstop-run ends the job
 * promptly, naming it, which is the other outcome accepted.
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=wireup
 * FS_TEST_FAULT: 1
 * FS_TEST_EXPECT: ok-or-abort
 * FS_TEST_EXPECT_OUTPUT: process 2 ended in MPI_Init and the others are still held
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "tf_life_wireup");
    ft_check_class();
    mt_expect(MT_HERE, mt_rank() != 2, "process 2 outlived its injected death");
    ft_dead_peer_first_ops(2, 5);
    return ft_finish();
}
