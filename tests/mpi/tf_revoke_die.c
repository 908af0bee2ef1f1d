/* tf_revoke_die.c: a revoke reaches every live member although those who
 * spread it die while doing so.  Six ranks; rank 0 revokes a duplicate of
 * MPI_COMM_WORLD at once and pml_failstop_inject kills it after its second
 * message (it told ranks 1 and 5 only); ranks 1 and 5 die after passing
 * the news to one rank each (2, and the dead 0).  Ranks 2, 3 and 4 must
 * all find the communicator revoked, their pending receive (from another
 * survivor) ended with MPIX_ERR_REVOKED, and then agree on the revoked
 * communicator (the failure class: nobody acknowledged the deaths) with
 * one outcome.
 * FS_TEST_NPS: 6
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_inject 0:after=30,1:after=15,5:after=9
 */
#include "agreetest.h"

int main(int argc, char **argv)
{
    int live[3] = { 2, 3, 4 }, me, x = 0, flag = 0, rc;
    MPI_Comm dup;
    MPI_Request rq = MPI_REQUEST_NULL;
    MPI_Status st;
    double t0;

    mt_init(&argc, &argv, "tf_revoke_die");
    ft_check_class();
    me = mt_rank();
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));     /* the dup is done everywhere */
    if (me == 0)
        MT_CHECK(MPIX_Comm_revoke(dup));
    if (me >= 2 && me <= 4) {
        /* from the next survivor: neither a failure nor a message ends it */
        rc = MPI_Irecv(&x, 1, MPI_INT, me == 4 ? 2 : me + 1, 5, dup, &rq);
        mt_expect(MT_HERE, rc == MPI_SUCCESS || rc == MPIX_ERR_REVOKED, "Irecv rc %d", rc);
    }
    t0 = mt_now();
    do {
        MT_CHECK(MPIX_Comm_is_revoked(dup, &flag));
        mt_expect(MT_HERE, mt_now() - t0 < FT_DEADLINE, "not revoked after %.0f s",
                  FT_DEADLINE);
        if (!flag)
            MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_SELF, &x, MPI_STATUS_IGNORE));
    } while (!flag);
    mt_expect(MT_HERE, me >= 2 && me <= 4, "rank %d should have died", me);
    if (rq != MPI_REQUEST_NULL) {
        rc = MPI_Wait(&rq, &st);
        mt_expect(MT_HERE, rc == MPIX_ERR_REVOKED, "pending receive: rc %d, want %d", rc,
                  MPIX_ERR_REVOKED);
        if (rq != MPI_REQUEST_NULL)
            MT_CHECK(MPI_Request_free(&rq));
    }
    flag = at_flag(me);
    rc = at_agree(MT_HERE, dup, &flag);
    mt_expect(MT_HERE, rc == MPIX_ERR_PROC_FAILED, "agreement on the revoked communicator "
              "after unacknowledged deaths: rc %d", rc);
    at_expect_uniform(MT_HERE, live, 3, rc, flag);
    MT_CHECK(MPI_Comm_free(&dup));
    return ft_finish();
}
