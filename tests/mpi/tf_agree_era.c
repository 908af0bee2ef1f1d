/* tf_agree_era.c: the hole in ERA (Open MPI's agreement): the coordinator
 * decides, tells one member and dies; that member decides and dies before
 * telling anyone.  Six ranks on a binomial tree (pml_failstop_agree_star_max
 * 0): rank 0's children are 1, 2 and 4.  After one failure-free agreement
 * (12 agreement messages at rank 0, 4 at rank 1), pml_failstop_inject kills
 * rank 0 right after its first DECIDE (to rank 1) and rank 1 right after it
 * handled that DECIDE.  Both decided rank 0's proposal, which every member
 * had accepted: the survivors must decide it too -- MPI_SUCCESS and every
 * rank's flag in the value -- not a second value without ranks 0 and 1.
 * FS_TEST_NPS: 6
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_agree_star_max 0 --mca pml_failstop_inject 0:after=21,1:after=8
 */
#include "agreetest.h"

int main(int argc, char **argv)
{
    int live[4] = { 2, 3, 4, 5 }, all = -1, flag, rc, r;

    mt_init(&argc, &argv, "tf_agree_era");
    ft_check_class();
    for (r = 0; r < mt_size(); r++)
        all &= at_flag(r);
    flag = at_flag(mt_rank());
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);
    mt_expect(MT_HERE, rc == MPI_SUCCESS && flag == all, "failure-free agreement: rc %d "
              "flag %#x", rc, flag);

    flag = at_flag(mt_rank());
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);   /* ranks 0 and 1 die in it */
    mt_expect(MT_HERE, mt_rank() > 1, "rank %d survived its agreement", mt_rank());
    mt_expect(MT_HERE, rc == MPI_SUCCESS && flag == all, "the survivors decided rc %d "
              "flag %#x, not what ranks 0 and 1 decided (MPI_SUCCESS, %#x)", rc, flag, all);
    at_expect_uniform(MT_HERE, live, 4, rc, flag);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, 0);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, 1);
    return ft_finish();
}
