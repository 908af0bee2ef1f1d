/* t_revoke.c: MPIX_Comm_revoke without failures.  On a duplicate of
 * MPI_COMM_WORLD every rank posts a receive that nothing matches, the last
 * rank also a 1 MiB synchronous send to a rank that never receives it
 * (a standard send may complete before its receive, and then stays done);
 * rank 1 revokes.  At every rank: the pending operations end with
 * MPIX_ERR_REVOKED (the code is the class), MPIX_Comm_is_revoked says so,
 * new point-to-point operations and collectives fail the same way at once,
 * and what ULFM exempts works: MPIX_Comm_agree, MPIX_Comm_failure_ack,
 * MPI_Comm_free.  MPI_COMM_WORLD is untouched.
 * FS_TEST_NPS: 2 4 6
 */
#include "mpitest.h"
#include "failstop.h"

#define BIG (1 << 20)

static void expect_revoked(mt_loc at, int rc, const char *what)
{
    mt_expect(at, rc == MPIX_ERR_REVOKED, "%s: rc %d, want MPIX_ERR_REVOKED (%d)", what, rc,
              MPIX_ERR_REVOKED);
    mt_expect(at, mt_errclass(rc) == MPIX_ERR_REVOKED, "%s: class %d", what,
              mt_errclass(rc));
}

int main(int argc, char **argv)
{
    MPI_Comm dup;
    MPI_Request rq[2];
    MPI_Status st[2];
    int me, n, x = 0, flag = 0, k = 0, rc;
    char *big;
    double t0;

    mt_init(&argc, &argv, "t_revoke");
    me  = mt_rank();
    n   = mt_size();
    big = mt_zalloc(BIG);
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, mt_left(), 5, dup, &rq[k++]));
    if (me == n - 1)
        MT_CHECK(MPI_Issend(big, BIG, MPI_CHAR, 0, 6, dup, &rq[k++]));
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 1)
        MT_CHECK(MPIX_Comm_revoke(dup));
    t0 = mt_now();
    do {        /* the news arrives with progress */
        MT_CHECK(MPIX_Comm_is_revoked(dup, &flag));
        mt_expect(MT_HERE, mt_now() - t0 < 20, "not revoked after 20 s");
        if (!flag)      /* progress: a probe on another communicator */
            MT_CHECK(MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &x, MPI_STATUS_IGNORE));
    } while (!flag);
    rc = MPI_Waitall(k, rq, st);
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "Waitall rc %d", rc);
    expect_revoked(MT_HERE, st[0].MPI_ERROR, "pending receive");
    if (k == 2)
        expect_revoked(MT_HERE, st[1].MPI_ERROR, "pending synchronous send");
    /* Open MPI 4.1's MPI_Waitall leaves the requests that failed allocated
     * (req_wait.c); they hold the communicator until freed */
    for (rc = 0; rc < k; rc++) {
        if (rq[rc] != MPI_REQUEST_NULL)
            MT_CHECK(MPI_Request_free(&rq[rc]));
    }

    expect_revoked(MT_HERE, MPI_Send(&x, 1, MPI_INT, mt_right(), 7, dup), "new send");
    expect_revoked(MT_HERE, MPI_Recv(&x, 1, MPI_INT, mt_left(), 7, dup, st), "new receive");
    expect_revoked(MT_HERE, MPI_Iprobe(MPI_ANY_SOURCE, 7, dup, &flag, st), "probe");
    expect_revoked(MT_HERE, MPI_Barrier(dup), "barrier");
    expect_revoked(MT_HERE, MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, dup), "allreduce");

    flag = (me == 0) ? 2 : 3;
    MT_CHECK(MPIX_Comm_agree(dup, &flag));
    mt_expect(MT_HERE, flag == 2, "agreement on a revoked communicator: %#x", flag);
    MT_CHECK(MPIX_Comm_failure_ack(dup));
    MT_CHECK(MPI_Comm_free(&dup));
    MT_CHECK(MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    mt_expect(MT_HERE, x == n * (n - 1) / 2, "world allreduce %d", x);
    free(big);
    return mt_finish();
}
