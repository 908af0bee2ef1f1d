/* tf_life_comm: death during communicator creation (lifetest.h,
 * life_comm; compare tf_fail_comm_create, where the failure comes before):
 * process 2 is killed inside MPI_Comm_split of MPI_COMM_WORLD once the
 * context id is agreed and the PML has the new communicator
 * (pml_failstop_inject 2:at=comm), while Open MPI's activation barrier
 * runs.  The survivors' split ends, without a hang or MPI_ERR_INTERN, with
 * the class or with a communicator whose failed group holds process 2 and
 * whose collectives end with the class.
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=comm
 * FS_TEST_FAULT: 1
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_comm(&argc, &argv, "tf_life_comm", 0);
}
