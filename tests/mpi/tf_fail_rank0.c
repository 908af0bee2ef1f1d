/* tf_fail_rank0: the failure of rank 0 -- the usual root and leader -- is
 * handled like any other (MPI-FT 17.3-17.7): survivors' pending receives
 * naming it and pending MPI_ANY_SOURCE receives end with
 * MPIX_ERR_RANK_FAIL_STOP, it is the only member of the failed group,
 * collectives on MPI_COMM_WORLD (Barrier, Bcast from the dead root) fail,
 * a communicator made before the failure without rank 0 still runs
 * collectives with the new rank 0 (world rank 1) as root, and survivors
 * keep exchanging messages and finalize normally.
 *
 * Rank 0 dies idle, once every survivor has posted its pending receives.
 * FS_TEST_NPS: 3
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define NB 256

/* MPI_Waitall with a deadline (MPI_Testall polled for at most
 * FT_DEADLINE seconds); returns MPI_Testall's code once all completed or
 * one reported an error. */
static int waitall_bounded(mt_loc at, int n, MPI_Request *rq, MPI_Status *st,
                           const char *what)
{
    double t0 = mt_now();
    int flag = 0, rc;

    for (;;) {
        rc = MPI_Testall(n, rq, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(at, "%s: not complete after %.0f s", what, FT_DEADLINE);
    }
}

int main(int argc, char **argv)
{
    const int v = 0;
    int me, n, i, x = 0, y = 0, buf[NB], lr, ls, sum = 0, nlive = 0, rc;
    int live[64];
    MPI_Comm others;
    MPI_Request rq[2];
    MPI_Status st[2];
    unsigned long long failed = 0;

    mt_init(&argc, &argv, "tf_fail_rank0");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_check_class();
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == v ? MPI_UNDEFINED : 1, me,
                            &others));

    if (me != v) {
        MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD, &rq[0]));
        MT_CHECK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, 2, MPI_COMM_WORLD,
                           &rq[1]));
        /* tells rank 0 the receives are posted (eager: done at once) */
        MT_CHECK(MPI_Send(&me, 1, MPI_INT, v, 99, MPI_COMM_WORLD));
    } else {
        for (i = 1; i < n; i++)
            MT_CHECK(MPI_Recv(&x, 1, MPI_INT, i, 99, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        ft_die();
    }

    /* pending receives: named and wildcard */
    rc = waitall_bounded(MT_HERE, 2, rq, st, "pending receives");
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "Testall rc %d, want "
              "MPI_ERR_IN_STATUS", rc);
    ft_expect_failed(MT_HERE, st[0].MPI_ERROR, "pending receive from rank 0");
    ft_expect_failed(MT_HERE, st[1].MPI_ERROR, "pending ANY_SOURCE receive");
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank 0 is not in the failed group");
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    MT_CHECK(MPIX_Failstop_counter("peers_failed", &failed));
    mt_expect(MT_HERE, failed == 1, "peers_failed = %llu", failed);
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 3, MPI_COMM_WORLD,
                                       &st[0]), "new receive from rank 0");
    ft_expect_failed(MT_HERE, MPI_Send(&x, 1, MPI_INT, v, 3, MPI_COMM_WORLD),
                     "send to rank 0");

    /* collectives on MPI_COMM_WORLD, rooted at the dead rank or not */
    ft_expect_failed(MT_HERE, MPI_Bcast(buf, NB, MPI_INT, v, MPI_COMM_WORLD),
                     "Bcast from the dead rank 0");
    ft_expect_failed(MT_HERE, MPI_Barrier(MPI_COMM_WORLD), "Barrier");

    /* the communicator without rank 0: world rank 1 is its root */
    MT_CHECK(MPI_Comm_rank(others, &lr));
    MT_CHECK(MPI_Comm_size(others, &ls));
    mt_expect(MT_HERE, lr == me - 1 && ls == n - 1, "others: %d/%d", lr, ls);
    for (i = 0; i < 3; i++) {
        if (lr == 0)
            mt_fill(buf, sizeof buf, me, i);
        else
            memset(buf, 0, sizeof buf);
        MT_CHECK(MPI_Bcast(buf, NB, MPI_INT, 0, others));
        mt_verify(MT_HERE, buf, sizeof buf, 1, i, "Bcast from new rank 0");
        MT_CHECK(MPI_Reduce(&me, &sum, 1, MPI_INT, MPI_SUM, 0, others));
        mt_expect(MT_HERE, lr != 0 || sum == n * (n - 1) / 2,
                  "Reduce to new rank 0: %d, want %d", sum, n * (n - 1) / 2);
    }

    for (i = 1; i < n; i++)
        live[nlive++] = i;
    ft_survivors_exchange(live, nlive, 4);
    MT_CHECK(MPI_Comm_free(&others));
    return ft_finish();
}
