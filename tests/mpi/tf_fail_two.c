/* tf_fail_two: two processes fail, one after the other (MPI-FT 17.4, 17.6):
 *  - after the first failure survivors (and the second victim) see one
 *    failed process; MPI_ANY_SOURCE is disabled until acknowledged
 *    (MPIX_Comm_failure_ack), then works;
 *  - the second failure is a new failure: it disables MPI_ANY_SOURCE again
 *    (a pending wildcard receive posted after the acknowledgement ends with
 *    MPIX_ERR_RANK_FAIL_STOP), MPIX_Comm_failure_get_acked still holds only
 *    the first until the next acknowledgement, MPIX_Comm_group_failed holds
 *    both (count 2, exact ranks), MPIX_Comm_reenable_any_source returns both,
 *    and the peers_failed counter is 2;
 *  - pending receives naming the second victim end with the class;
 *  - the survivors keep exchanging messages (named and wildcard).
 *
 * Victims: rank 1, then the last rank; both die idle.
 * FS_TEST_NPS: 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

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

/* The failed (acked: acknowledged) group of MPI_COMM_WORLD is exactly
 * want[0..n-1] (ascending). */
static void expect_failed(mt_loc at, int acked, const int *want, int n,
                          const char *what)
{
    MPI_Group g, world;
    int size = -1, i, out;

    if (acked)
        MT_CHECK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &g));
    else
        MT_CHECK(MPIX_Comm_group_failed(MPI_COMM_WORLD, &g));
    MT_CHECK(MPI_Group_size(g, &size));
    mt_expect(at, size == n, "%s: %d members, want %d", what, size, n);
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (i = 0; i < n; i++) {
        MT_CHECK(MPI_Group_translate_ranks(g, 1, &i, world, &out));
        mt_expect(at, out == want[i], "%s: member %d is rank %d, want %d",
                  what, i, out, want[i]);
    }
    MT_CHECK(MPI_Group_free(&world));
    MT_CHECK(MPI_Group_free(&g));
}

/* Survivors (in live[0..n-1]) pass a payload around their ring, received
 * with MPI_ANY_SOURCE. */
static void anysource_ring(const int *live, int n, int it)
{
    int me = mt_rank(), k, buf[16], in[16], from, to;
    MPI_Request rq;
    MPI_Status st;

    for (k = 0; live[k] != me; k++)
        ;
    to = live[(k + 1) % n];
    from = live[(k + n - 1) % n];
    mt_fill(buf, sizeof buf, me, it);
    MT_CHECK(MPI_Irecv(in, 16, MPI_INT, MPI_ANY_SOURCE, it, MPI_COMM_WORLD,
                       &rq));
    MT_CHECK(MPI_Send(buf, 16, MPI_INT, to, it, MPI_COMM_WORLD));
    MT_CHECK(MPI_Wait(&rq, &st));
    mt_expect_status(MT_HERE, &st, from, it, MPI_INT, 16);
    mt_verify(MT_HERE, in, sizeof in, from, it, "ANY_SOURCE ring");
}

int main(int argc, char **argv)
{
    int me, n, i, x = 0, v[2], nlive = 0, live[64], rc;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Group g;

    mt_init(&argc, &argv, "tf_fail_two");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n >= 4 && n <= 64, "needs 4..64 ranks, got %d", n);
    v[0] = 1;
    v[1] = n - 1;
    ft_check_class();
    for (i = 0; i < n; i++)
        if (i != v[0] && i != v[1])
            live[nlive++] = i;

    /* ---- first failure ---------------------------------------------------- */
    ft_barrier_then_die(v[0]);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v[0]);
    expect_failed(MT_HERE, 0, v, 1, "failed group after the first failure");
    expect_failed(MT_HERE, 1, v, 0, "acked group before any ack");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5,
                                       MPI_COMM_WORLD, &st[0]),
                     "ANY_SOURCE receive before the ack");
    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    expect_failed(MT_HERE, 1, v, 1, "acked group after the first ack");
    mt_expect(MT_HERE, ft_counter("peers_failed") == 1, "peers_failed = %llu",
              ft_counter("peers_failed"));

    /* ---- second failure --------------------------------------------------- */
    if (me == v[1]) {
        /* dies once every survivor acknowledged and posted its receives */
        for (i = 0; i < nlive; i++)
            MT_CHECK(MPI_Recv(&x, 1, MPI_INT, live[i], 98, MPI_COMM_WORLD,
                              MPI_STATUS_IGNORE));
        ft_die();
    }
    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, v[1], 6, MPI_COMM_WORLD, &rq[0]));
    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD,
                       &rq[1]));
    MT_CHECK(MPI_Send(&me, 1, MPI_INT, v[1], 98, MPI_COMM_WORLD));
    rc = waitall_bounded(MT_HERE, 2, rq, st, "pending receives");
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "Testall rc %d", rc);
    ft_expect_failed(MT_HERE, st[0].MPI_ERROR, "pending receive from the "
                     "second victim");
    ft_expect_failed(MT_HERE, st[1].MPI_ERROR, "pending ANY_SOURCE receive "
                     "(the second failure disables it again)");
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v[1]),
              "second victim not in the failed group");
    expect_failed(MT_HERE, 0, v, 2, "failed group after the second failure");
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 2,
              "failed count %d", ft_failed_count(MPI_COMM_WORLD));
    expect_failed(MT_HERE, 1, v, 1, "acked group before the second ack");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 5,
                                       MPI_COMM_WORLD, &st[0]),
                     "ANY_SOURCE receive before the second ack");
    MT_CHECK(MPIX_Comm_reenable_any_source(MPI_COMM_WORLD, &g));
    MT_CHECK(MPI_Group_size(g, &i));
    mt_expect(MT_HERE, i == 2, "reenable_any_source returned %d members", i);
    MT_CHECK(MPI_Group_free(&g));
    expect_failed(MT_HERE, 1, v, 2, "acked group after the second ack");
    mt_expect(MT_HERE, ft_counter("peers_failed") == 2, "peers_failed = %llu",
              ft_counter("peers_failed"));
    for (i = 0; i < 2; i++) {
        ft_expect_failed(MT_HERE, MPI_Send(&x, 1, MPI_INT, v[i], 8,
                                           MPI_COMM_WORLD), "send to a victim");
        ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v[i], 8,
                                           MPI_COMM_WORLD, &st[0]),
                         "receive from a victim");
    }
    ft_expect_failed(MT_HERE, MPI_Barrier(MPI_COMM_WORLD), "Barrier");

    ft_survivors_exchange(live, nlive, 10);
    anysource_ring(live, nlive, 11);
    anysource_ring(live, nlive, 12);
    return ft_finish();
}
