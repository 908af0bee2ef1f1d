/* tf_fail_everyone: everyone learns (MPI-FT 17.3).  A survivor that never
 * communicated with the failed process, and whose own transport cannot
 * tell, still learns of the failure within the deadline, because a process
 * that learns of a failure tells all the others.
 *
 * The victim (the last rank) only ever talks to rank 0; ranks 1..N-2
 * ("bystanders") never name it in any operation except a probe, which
 * sends nothing, and never take part in a collective with it.  Bystanders
 * also switch UCX keepalive off for themselves (UCX_KEEPALIVE_INTERVAL=inf,
 * set before MPI_Init, which failstop respects): over shared memory
 * keepalive is how a transport notices a dead peer that nobody talks to, so
 * without failstop's failure notices a bystander would not learn at all.
 * Rank 0 learns from its own pending receive, then everyone must know: the
 * failed group and the counters (peers_failed 1, failure messages sent by
 * every survivor), and survivors go on exchanging messages.  (Over shared
 * memory a bystander can learn only from a notice; over TCP its own broken
 * connection may tell it too.)
 * FS_TEST_NPS: 4 8
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    const char *r_env = getenv("OMPI_COMM_WORLD_RANK");
    const char *n_env = getenv("OMPI_COMM_WORLD_SIZE");
    int v, me, n, buf[64], in[64], live[64], i, nlive = 0;
    MPI_Status st;
    MPI_Request rq;
    double t0;

    /* bystanders: no transport-level detection of a peer that is silent */
    if (r_env != NULL && n_env != NULL && atoi(r_env) != 0 &&
        atoi(r_env) != atoi(n_env) - 1)
        setenv("UCX_KEEPALIVE_INTERVAL", "inf", 1);

    mt_init(&argc, &argv, "tf_fail_everyone");
    me = mt_rank();
    n = mt_size();
    v = n - 1;
    mt_expect(MT_HERE, n >= 4 && n <= 64, "needs 4..64 ranks, got %d", n);
    mt_expect(MT_HERE, r_env != NULL && atoi(r_env) == me,
              "OMPI_COMM_WORLD_RANK not set to this rank before MPI_Init");
    ft_check_class();

    if (me == v) {
        /* the victim talks to rank 0 only, then dies */
        mt_fill(buf, sizeof buf, me, 0);
        MT_CHECK(MPI_Send(buf, 64, MPI_INT, 0, 1, MPI_COMM_WORLD));
        MT_CHECK(MPI_Recv(in, 64, MPI_INT, 0, 2, MPI_COMM_WORLD, &st));
        mt_verify(MT_HERE, in, sizeof in, 0, 1, "reply from rank 0");
        ft_die();
    }
    if (me == 0) {
        MT_CHECK(MPI_Recv(in, 64, MPI_INT, v, 1, MPI_COMM_WORLD, &st));
        mt_verify(MT_HERE, in, sizeof in, v, 0, "message from the victim");
        mt_fill(buf, sizeof buf, me, 1);
        MT_CHECK(MPI_Send(buf, 64, MPI_INT, v, 2, MPI_COMM_WORLD));
        /* rank 0 learns through its own receive */
        MT_CHECK(MPI_Irecv(in, 64, MPI_INT, v, 3, MPI_COMM_WORLD, &rq));
        ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &rq, &st, "receive "
                                               "from the dead victim"),
                         "receive from the dead victim");
    }
    /* bystanders only probe: the notice must reach them */
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    mt_expect(MT_HERE, ft_counter("peers_failed") == 1, "peers_failed = %llu",
              ft_counter("peers_failed"));
    /* whoever learns tells the others (the engine's notices, or with the
     * failure detector on, its FAILED messages): with three or more
     * survivors each one has at least one survivor to tell */
    t0 = mt_now();
    while (ft_counter("notices_sent") + ft_counter("hb_failed_sent") == 0) {
        /* the detector thread sends them: asynchronously, but in bounded time */
        if (mt_now() - t0 > FT_DEADLINE)
            mt_fail(MT_HERE, "no failure message sent after %.0f s "
                    "(notices_sent 0, hb_failed_sent 0)", FT_DEADLINE);
    }
    /* (whether a bystander received a notice is not checked: over TCP its
     * own connection to the victim breaks too, and it may be the one that
     * tells the others) */

    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, 9);
    mt_expect(MT_HERE, ft_counter("peers_failed") == 1, "peers_failed = %llu",
              ft_counter("peers_failed"));
    return ft_finish();
}
