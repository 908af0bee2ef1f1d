/* tf_agree_coord.c: the coordinator of an agreement dies in the middle of
 * it.  Four ranks, a star (pml_failstop_agree_star_max: 8): rank 0
 * coordinates.  A first agreement is failure-free (rank 0 sends and
 * receives 12 agreement messages); in the second, pml_failstop_inject kills
 * rank 0 right after it sent its proposal to two of the three others.  The
 * survivors must all return from it, with the same flag and the same
 * return (MPI_SUCCESS if rank 0's proposal was decided, else the failure
 * class: rank 0 is not acknowledged), each survivor's contribution in it.
 * Then, rank 0 acknowledged, a third agreement succeeds over the survivors.
 * FS_TEST_NPS: 4
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_inject 0:after=17
 */
#include "agreetest.h"

int main(int argc, char **argv)
{
    int live[3] = { 1, 2, 3 }, flag, rc;

    mt_init(&argc, &argv, "tf_agree_coord");
    ft_check_class();
    flag = at_flag(mt_rank());
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);
    mt_expect(MT_HERE, rc == MPI_SUCCESS && flag == (at_flag(0) & at_flag(1) & at_flag(2) &
                                                    at_flag(3)),
              "failure-free agreement: rc %d flag %#x", rc, flag);

    flag = at_flag(mt_rank());
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);   /* rank 0 dies in it */
    mt_expect(MT_HERE, mt_rank() != 0, "rank 0 survived its agreement");
    at_expect_uniform(MT_HERE, live, 3, rc, flag);
    mt_expect(MT_HERE, rc == MPI_SUCCESS ? !(flag & 1) : (flag & 1),
              "rc %d with flag %#x: success must mean rank 0's proposal, with its flag", rc,
              flag);

    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, 0);
    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = at_flag(mt_rank());
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);
    mt_expect(MT_HERE, rc == MPI_SUCCESS, "agreement after the acknowledgement: rc %d", rc);
    mt_expect(MT_HERE, flag == (at_flag(1) & at_flag(2) & at_flag(3)),
              "agreement after the acknowledgement: flag %#x", flag);
    at_expect_uniform(MT_HERE, live, 3, rc, flag);
    return ft_finish();
}
