/* tf_life_finalize: death during MPI_Finalize, before the departure is
 * announced (lifetest.h, life_finalize; pml_failstop_inject
 * 2:at=finalize): nobody was told that process 2 leaves, so it failed:
 * the survivors' receive from it, standard and synchronous sends to it and
 * a broadcast rooted at it end with MPIX_ERR_RANK_FAIL_STOP -- not the
 * "left" outcome, not MPI_ERR_INTERN, not a hang.
 * FS_TEST_NPS: 3
 * FS_TEST_OPTS: --mca pml_failstop_inject 2:at=finalize
 * FS_TEST_FAULT: 1
 */
#include "lifetest.h"

int main(int argc, char **argv)
{
    return life_finalize(&argc, &argv, "tf_life_finalize", 0, 0);
}
