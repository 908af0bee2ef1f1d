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
 * The runtime's closing fence of MPI_Init used to wait for the dead process
 * for ever in 1 run in 10 to 40 (over TCP, the runtime deregistering it
 * before its PMIx server saw the connection drop); failstop-rank now holds
 * the dead rank's exit until the others have left MPI_Init, so every run must
 * end with the survivors' OK lines (0 held in 190 runs under load, 3 in 60
 * before; tests/tools/test_init_hold.sh tests the hold itself).
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=wireup
 * FS_TEST_FAULT: 1
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
