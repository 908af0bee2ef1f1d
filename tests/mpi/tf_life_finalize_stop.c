/* tf_life_finalize_stop: tf_life_finalize with SIGSTOP: process 2 stops in
 * MPI_Finalize before announcing its departure.  The survivors get
 * MPIX_ERR_RANK_FAIL_STOP from the heartbeat detector while it is still
 * stopped (/proc state T), before failstop-run's waiter fences it.
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=finalize:STOP
 * FS_TEST_RUN_OPTS: --fence-stopped 4000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 3
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_finalize(&argc, &argv, "tf_life_finalize_stop", 1, 0);
}
