/* tf_life_connect: death during first contact (lifetest.h, life_connect):
 * process 2 is killed right after failstop handed its first message, 100 kB
 * to rank 0, to UCX (pml_failstop_inject 2:at=connect), before any
 * progress on that connection.  Rank 0's receive of the message, the other
 * survivors' first contact with it and a broadcast rooted at it end with
 * MPIX_ERR_RANK_FAIL_STOP, never MPI_ERR_INTERN, never a hang (watchdog).
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=connect
 * FS_TEST_FAULT: 1
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_connect(&argc, &argv, "tf_life_connect", 0);
}
