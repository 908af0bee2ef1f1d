/* tf_life_bye: death during MPI_Finalize right after the departure was
 * announced (BYE sent to every peer; pml_failstop_inject 2:at=bye).  The
 * survivors' receive from it, sends to it and a broadcast rooted at it end
 * with the "left" outcome (MPI_ERR_OTHER, "already called MPI_Finalize":
 * leaving is not failing) or, if its link broke before its BYE was taken,
 * with MPIX_ERR_RANK_FAIL_STOP; never MPI_ERR_INTERN, never a hang.
 * FS_TEST_NPS: 3
 * FS_TEST_REPEAT_MAX: 10
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=bye
 * FS_TEST_FAULT: 1
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_finalize(&argc, &argv, "tf_life_bye", 0, 1);
}
