/* tf_agree_before.c: agreements after a failure, and the acknowledgement
 * rule.  The last rank dies; the survivors agree at once, some of them
 * before they know of the failure: every one gets the failure class (the
 * failed rank is acknowledged by nobody), the same flag, made of every
 * survivor's contribution and not the dead rank's.  Then only rank 0
 * acknowledges: still the failure class everywhere (uniform: one survivor
 * not acknowledging is enough).  Once all acknowledged: MPI_SUCCESS.
 * Nonblocking (MPIX_Comm_iagree) for the last one.  The code returned
 * equals the class (rc == MPIX_ERR_PROC_FAILED), as ULFM programs compare.
 * FS_TEST_NPS: 3 5
 * FS_TEST_FAULT: 1
 */
#include "agreetest.h"

int main(int argc, char **argv)
{
    int me, n, v, live[8], nlive = 0, want = -1, flag, rc, r;
    MPI_Request rq;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_agree_before");
    ft_check_class();
    me = mt_rank();
    n  = mt_size();
    v  = n - 1;
    for (r = 0; r < v; r++) {
        live[nlive++] = r;
        want &= at_flag(r);
    }
    ft_barrier_then_die(v);

    flag = at_flag(me);
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);
    mt_expect(MT_HERE, rc == MPIX_ERR_PROC_FAILED, "nobody acknowledged rank %d: rc %d, "
              "want the class itself (%d)", v, rc, MPIX_ERR_PROC_FAILED);
    mt_expect(MT_HERE, flag == want, "agreed %#x, want %#x", flag, want);
    at_expect_uniform(MT_HERE, live, nlive, rc, flag);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);

    if (me == 0)
        MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = at_flag(me);
    rc = at_agree(MT_HERE, MPI_COMM_WORLD, &flag);
    mt_expect(MT_HERE, rc == MPIX_ERR_PROC_FAILED, "only rank 0 acknowledged: rc %d", rc);
    at_expect_uniform(MT_HERE, live, nlive, rc, flag);

    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    flag = at_flag(me);
    MT_CHECK(MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &rq));
    ft_watchdog_arm(MT_HERE, "MPI_Wait on MPIX_Comm_iagree");
    rc = MPI_Wait(&rq, &st);
    ft_watchdog_disarm();
    mt_expect(MT_HERE, rc == MPI_SUCCESS, "all acknowledged: rc %d", rc);
    mt_expect(MT_HERE, flag == want, "iagree agreed %#x, want %#x", flag, want);
    at_expect_uniform(MT_HERE, live, nlive, rc, flag);
    return ft_finish();
}
