/* tf_uniform.c: uniformly returning collectives
 * (pml_failstop_uniform_collectives=1, MPI-FT 17.7's advice to
 * implementors).  Four ranks; a failure-free allreduce, bcast and
 * allgather work with checked results.  Then an allreduce with a user
 * operation in which rank 3 dies the first time it combines: it has sent
 * its contribution, so the process it reached can finish, while the one
 * that waits for rank 3 cannot (without the option, Open MPI's recursive
 * doubling leaves ranks 0 and 2 with success and rank 1 with the class).
 * Every survivor must return the same: the failure class, compared with
 * two agreements.
 * FS_TEST_NPS: 4
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_uniform_collectives 1
 */
#include "agreetest.h"

static int armed;

static void sum_or_die(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    int i;

    (void)dt;
    if (armed && mt_rank() == 3)
        ft_die();
    for (i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

int main(int argc, char **argv)
{
    MPI_Op op;
    int x, sum = 0, all[4], rc, mine, lo, hi, i;

    mt_init(&argc, &argv, "tf_uniform");
    ft_check_class();
    MT_CHECK(MPI_Op_create(sum_or_die, 1, &op));
    x = mt_rank() + 1;
    ft_watchdog_arm(MT_HERE, "failure-free collectives");
    MT_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, op, MPI_COMM_WORLD));
    mt_expect(MT_HERE, sum == 10, "allreduce %d", sum);
    MT_CHECK(MPI_Bcast(&x, 1, MPI_INT, 2, MPI_COMM_WORLD));
    mt_expect(MT_HERE, x == 3, "bcast %d", x);
    x = mt_rank() + 1;
    MT_CHECK(MPI_Allgather(&x, 1, MPI_INT, all, 1, MPI_INT, MPI_COMM_WORLD));
    for (i = 0; i < 4; i++)
        mt_expect(MT_HERE, all[i] == i + 1, "allgather [%d] %d", i, all[i]);
    ft_watchdog_disarm();

    armed = 1;
    ft_watchdog_arm(MT_HERE, "the allreduce rank 3 dies in");
    rc = MPI_Allreduce(&x, &sum, 1, MPI_INT, op, MPI_COMM_WORLD);
    ft_watchdog_disarm();
    mine = mt_errclass(rc);
    lo   = mine;
    hi   = ~mine;
    at_agree(MT_HERE, MPI_COMM_WORLD, &lo);
    at_agree(MT_HERE, MPI_COMM_WORLD, &hi);
    mt_expect(MT_HERE, lo == mine && hi == ~mine,
              "not uniform: class %d here, AND %d, OR %d over the survivors", mine, lo, ~hi);
    ft_expect_failed(MT_HERE, rc, "the allreduce a process died in");
    MT_CHECK(MPI_Op_free(&op));
    return ft_finish();
}
