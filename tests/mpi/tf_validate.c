/* tf_validate.c: MPIX_Comm_validate and MPIX_Icomm_validate (MPI-FT
 * 17.7.4) with 0, 1 and 2 failures, and the collectives over the survivors
 * after each.  No failure: the failed group is empty.  Rank 1 dies: a
 * collective on MPI_COMM_WORLD fails (inactive); validate returns {1} at
 * every survivor and every collective, blocking and nonblocking, works
 * over the survivors with checked results (segments of rank 1 untouched);
 * a collective rooted at rank 1 is MPI_ERR_RANK.  Then the last rank dies:
 * collectives fail again (a newer failure), MPIX_Icomm_validate returns
 * {1, last} and the collectives work over the rest.
 * FS_TEST_NPS: 4 5
 * FS_TEST_FAULT: 1
 */
#include "survtest.h"

/* v's death is known here: collectives on MPI_COMM_WORLD are off. */
static void expect_inactive(int v)
{
    int x = 1, y, active = 1;

    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(MT_HERE, !active, "collectives still enabled after %d failed", v);
    ft_expect_failed(MT_HERE, MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
                     "allreduce on a communicator with an unrecognized failure");
}

int main(int argc, char **argv)
{
    int n, v2, x = 5, active = 0, dead[SV_MAX] = { 0 };
    int none[] = { -1 }, one[] = { 1, -1 }, two[3] = { 1, 0, -1 };

    mt_init(&argc, &argv, "tf_validate");
    ft_check_class();
    n  = mt_size();
    v2 = n - 1;
    two[1] = v2;

    sv_validate(MT_HERE, MPI_COMM_WORLD, 0, none, dead);
    sv_check_all(MT_HERE, MPI_COMM_WORLD, dead);

    sv_barrier_then_die(MPI_COMM_WORLD, 1, dead);
    expect_inactive(1);
    sv_validate(MT_HERE, MPI_COMM_WORLD, 0, one, dead);
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(MT_HERE, active, "collectives not enabled after validate");
    sv_check_all(MT_HERE, MPI_COMM_WORLD, dead);
    mt_expect_class(MT_HERE, MPI_Bcast(&x, 1, MPI_INT, 1, MPI_COMM_WORLD), MPI_ERR_RANK,
                    "bcast rooted at a recognized failed process");
    mt_expect_class(MT_HERE, MPI_Reduce(&x, &active, 1, MPI_INT, MPI_SUM, 1, MPI_COMM_WORLD),
                    MPI_ERR_RANK, "reduce rooted at a recognized failed process");

    sv_barrier_then_die(MPI_COMM_WORLD, v2, dead);
    expect_inactive(v2);
    sv_validate(MT_HERE, MPI_COMM_WORLD, 1, two, dead);
    sv_check_all(MT_HERE, MPI_COMM_WORLD, dead);
    return ft_finish();
}
