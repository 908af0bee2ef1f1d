/* tf_life_comm_cid: tf_life_comm with the death earlier in the creation:
 * process 2 is killed at its first message, which is inside MPI_Comm_split
 * (the exchange of colours, before the context-id agreement;
 * pml_failstop_inject 2:after=1).  The survivors' split ends with
 * MPIX_ERR_RANK_FAIL_STOP (or, if it completed, a communicator with
 * process 2 failed), never MPI_ERR_INTERN or a hang.
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:after=1
 * FS_TEST_FAULT: 1
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_comm(&argc, &argv, "tf_life_comm_cid", 0);
}
