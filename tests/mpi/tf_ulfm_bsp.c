/* tf_ulfm_bsp.c: the revoke/shrink loop of a bulk-synchronous solver,
 * written as ULFM programs are.  Each of 20 steps is an allreduce on the
 * working communicator followed by MPIX_Comm_agree on its success; a step
 * that failed anywhere is redone after MPIX_Comm_revoke and
 * MPIX_Comm_shrink.  The last rank dies at step 7 and rank 1 at step 13,
 * before contributing.  Every survivor ends with the same sum:
 * 7n + 6(n-1) + 7(n-2), the live ranks of each step.
 * FS_TEST_NPS: 4 5
 * FS_TEST_FAULT: 1
 */
#include "agreetest.h"

#define STEPS 20

int main(int argc, char **argv)
{
    MPI_Comm comm, shrunk;
    long v = 1, s, sum = 0, want;
    int n, step = 0, flag, rc, redone = 0;

    mt_init(&argc, &argv, "tf_ulfm_bsp");
    ft_check_class();
    n    = mt_size();
    want = 7L * n + 6L * (n - 1) + 7L * (n - 2);
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
    while (step < STEPS) {
        if ((step == 7 && mt_rank() == n - 1) || (step == 13 && mt_rank() == 1))
            ft_die();
        ft_watchdog_arm(MT_HERE, "a step");
        rc = MPI_Allreduce(&v, &s, 1, MPI_LONG, MPI_SUM, comm);
        ft_watchdog_disarm();
        mt_expect(MT_HERE, rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED ||
                  rc == MPIX_ERR_REVOKED, "allreduce returned %d", rc);
        flag = (rc == MPI_SUCCESS);
        if (!flag)
            MT_CHECK(MPIX_Comm_revoke(comm));
        at_agree(MT_HERE, comm, &flag);
        if (!flag) {
            MT_CHECK(MPIX_Comm_revoke(comm));
            ft_watchdog_arm(MT_HERE, "MPIX_Comm_shrink");
            MT_CHECK(MPIX_Comm_shrink(comm, &shrunk));
            ft_watchdog_disarm();
            MT_CHECK(MPI_Comm_free(&comm));
            comm = shrunk;
            ++redone;
            mt_expect(MT_HERE, redone <= 6, "step %d redone %d times", step, redone);
            continue;
        }
        sum += s;
        ++step;
    }
    mt_expect(MT_HERE, sum == want, "sum %ld, want %ld", sum, want);
    MT_CHECK(MPI_Comm_size(comm, &rc));
    mt_expect(MT_HERE, rc == n - 2, "working communicator of %d, want %d", rc, n - 2);
    MT_CHECK(MPI_Comm_free(&comm));
    return ft_finish();
}
