/* tf_life_comm_stop: tf_life_comm with SIGSTOP: process 2 stops inside
 * MPI_Comm_split (at=comm).  The survivors' split and the collectives after
 * it end as in tf_life_comm, and the failure is known while process 2 is
 * still stopped: found by the heartbeat detector, before failstop-run's
 * waiter fences it (SIGKILL after 4 s).
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=comm:STOP
 * FS_TEST_RUN_OPTS: --fence-stopped 4000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 3
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_comm(&argc, &argv, "tf_life_comm_stop", 1);
}
