/* tf_life_wireup_stop: tf_life_wireup with SIGSTOP: process 2 stops inside
 * MPI_Init, endpoints created and detector armed (pml_failstop_inject
 * 2:at=wireup:STOP).  The others wait in Open MPI's closing barrier of
 * MPI_Init, a runtime (PMIx) fence that no MPI-level verdict can end: a
 * stopped process holds it until failstop-run's waiter fences it (SIGKILL
 * after --fence-stopped, 3 s here); then their MPI_Init returns and their
 * first operations with it end with MPIX_ERR_RANK_FAIL_STOP, never
 * MPI_ERR_INTERN or a hang (ft_dead_peer_first_ops).  docs/SEMANTICS.md,
 * "Lifecycle".
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=wireup:STOP
 * FS_TEST_RUN_OPTS: --fence-stopped 3000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 3
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    mt_init(&argc, &argv, "tf_life_wireup_stop");
    ft_check_class();
    mt_expect(MT_HERE, mt_rank() != 2, "process 2 outlived its injected stop");
    ft_dead_peer_first_ops(2, 5);
    return ft_finish();
}
