/* tf_fail_p2p: every point-to-point operation with a failed peer completes
 * with MPIX_ERR_RANK_FAIL_STOP (MPI-FT 17.6.1), pending or new, blocking,
 * nonblocking or persistent, probes, all send modes, eager or rendezvous;
 * nonblocking and persistent starts succeed and the error comes at
 * completion; survivors go on communicating.
 *
 * The last rank dies idle, after everyone posted a pending receive and a
 * pending rendezvous send naming it.
 * FS_TEST_NPS: 2 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define BIG (1 << 20) /* above every eager limit: rendezvous */

/* Operations started before the failure must complete with the class. */
static void check_pending(MPI_Request *rq, int n)
{
    MPI_Status st[4];
    int rc, i, flag = 0;
    double t0 = mt_now();

    do {    /* Waitall with a deadline */
        rc = MPI_Testall(n, rq, &flag, st);
        mt_expect(MT_HERE, mt_now() - t0 < FT_DEADLINE, "pending operations "
                  "not completed after %.0f s", FT_DEADLINE);
    } while (rc == MPI_SUCCESS && !flag);
    ft_expect_failed(MT_HERE, rc == MPI_ERR_IN_STATUS ? st[0].MPI_ERROR : rc,
                     "pending receive from the failed rank");
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "Testall rc %d, want "
              "MPI_ERR_IN_STATUS", rc);
    for (i = 0; i < n; i++)
        ft_expect_failed(MT_HERE, st[i].MPI_ERROR, "pending operation");
}

static void check_new_ops(int v, char *big)
{
    int x = 1, flag = 1, rc;
    MPI_Request rq;
    MPI_Message msg;
    MPI_Status st;
    char bsend_buf[1024 + MPI_BSEND_OVERHEAD];
    void *detached;
    int dsize;

    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD,
                                       &st), "Recv");
    ft_expect_failed(MT_HERE, MPI_Send(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                     "Send eager");
    ft_expect_failed(MT_HERE, MPI_Send(big, BIG, MPI_CHAR, v, 1,
                                       MPI_COMM_WORLD), "Send rendezvous");
    ft_expect_failed(MT_HERE, MPI_Ssend(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                     "Ssend");
    ft_expect_failed(MT_HERE, MPI_Rsend(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                     "Rsend");
    MT_CHECK(MPI_Buffer_attach(bsend_buf, sizeof bsend_buf));
    ft_expect_failed(MT_HERE, MPI_Bsend(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                     "Bsend");
    MT_CHECK(MPI_Buffer_detach(&detached, &dsize));
    ft_expect_failed(MT_HERE, MPI_Sendrecv(&x, 1, MPI_INT, v, 1, &x, 1,
                                           MPI_INT, v, 1, MPI_COMM_WORLD, &st),
                     "Sendrecv");
    ft_expect_failed(MT_HERE, MPI_Probe(v, 1, MPI_COMM_WORLD, &st), "Probe");
    flag = 1;
    rc = MPI_Iprobe(v, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st);
    ft_expect_failed(MT_HERE, rc, "Iprobe");
    ft_expect_failed(MT_HERE, MPI_Mprobe(v, 1, MPI_COMM_WORLD, &msg, &st),
                     "Mprobe");
    ft_expect_failed(MT_HERE, MPI_Improbe(v, 1, MPI_COMM_WORLD, &flag, &msg,
                                          &st), "Improbe");

    /* nonblocking: the start succeeds, the completion fails */
    MT_CHECK(MPI_Isend(big, BIG, MPI_CHAR, v, 2, MPI_COMM_WORLD, &rq));
    ft_expect_failed(MT_HERE, MPI_Wait(&rq, &st), "Isend completion");
    mt_expect(MT_HERE, rq == MPI_REQUEST_NULL, "request not freed");
    MT_CHECK(MPI_Issend(&x, 1, MPI_INT, v, 2, MPI_COMM_WORLD, &rq));
    flag = 0;
    rc = MPI_Test(&rq, &flag, &st);
    ft_expect_failed(MT_HERE, rc, "Issend completion by Test");
    mt_expect(MT_HERE, flag, "Test failed but flag not set");
    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, v, 2, MPI_COMM_WORLD, &rq));
    ft_expect_failed(MT_HERE, MPI_Wait(&rq, &st), "Irecv completion");
    mt_expect(MT_HERE, st.MPI_SOURCE == v, "failed Irecv status source %d, "
              "want %d", st.MPI_SOURCE, v);
}

static void check_persistent(int v)
{
    int x = 0, y = 0, round, rc;
    MPI_Request rq[2];
    MPI_Status st[2];

    MT_CHECK(MPI_Send_init(&x, 1, MPI_INT, v, 3, MPI_COMM_WORLD, &rq[0]));
    MT_CHECK(MPI_Recv_init(&y, 1, MPI_INT, v, 3, MPI_COMM_WORLD, &rq[1]));
    /* Open MPI 4.1's MPI_Waitall returns MPI_SUCCESS when only persistent
     * requests failed (req_wait.c skips them before setting
     * MPI_ERR_IN_STATUS), so its statuses are what is checked there; the
     * requests stay allocated and can be started again */
    for (round = 0; round < 2; round++) {
        MT_CHECK(MPI_Startall(2, rq));
        rc = MPI_Waitall(2, rq, st);
        mt_expect(MT_HERE, rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS,
                  "persistent Waitall rc %d", rc);
        ft_expect_failed(MT_HERE, st[0].MPI_ERROR, "persistent send");
        ft_expect_failed(MT_HERE, st[1].MPI_ERROR, "persistent receive");
    }
    /* MPI_Wait returns the error itself; Open MPI 4.1 then frees the
     * request (errhandler_invoke.c), so the handle may be null after it */
    MT_CHECK(MPI_Start(&rq[0]));
    MT_CHECK(MPI_Start(&rq[1]));
    ft_expect_failed(MT_HERE, MPI_Wait(&rq[0], &st[0]), "persistent send");
    ft_expect_failed(MT_HERE, MPI_Wait(&rq[1], &st[1]), "persistent receive");
    for (round = 0; round < 2; round++) {
        if (rq[round] != MPI_REQUEST_NULL)
            MT_CHECK(MPI_Request_free(&rq[round]));
    }
}

/* Survivors exchange eager and rendezvous payloads around their ring. */
static void survivors_ring(int nlive, char *big, char *big_in)
{
    int me = mt_rank(), right = (me + 1) % nlive;
    int left = (me + nlive - 1) % nlive, it;
    MPI_Status st;

    for (it = 0; it < 3; it++) {
        mt_fill(big, BIG, me, it);
        MT_CHECK(MPI_Sendrecv(big, BIG, MPI_CHAR, right, 7, big_in, BIG,
                              MPI_CHAR, left, 7, MPI_COMM_WORLD, &st));
        mt_verify(MT_HERE, big_in, BIG, left, it, "survivor ring");
    }
}

int main(int argc, char **argv)
{
    int v, x = 0, me;
    char *big, *big_in;
    MPI_Request rq[4];

    mt_init(&argc, &argv, "tf_fail_p2p");
    me = mt_rank();
    v = mt_size() - 1;
    big = mt_zalloc(BIG);
    big_in = mt_zalloc(BIG);
    if (me != v) {
        ft_check_class();
        MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, v, 0, MPI_COMM_WORLD, &rq[0]));
        MT_CHECK(MPI_Irecv(big_in, BIG, MPI_CHAR, v, 0, MPI_COMM_WORLD,
                           &rq[1]));
        MT_CHECK(MPI_Isend(big, BIG, MPI_CHAR, v, 5, MPI_COMM_WORLD, &rq[2]));
    }
    ft_barrier_then_die(v);

    check_pending(rq, 3);
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank %d not in the failed group", v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    check_new_ops(v, big);
    check_persistent(v);
    if (v > 1)
        survivors_ring(v, big, big_in);
    free(big);
    free(big_in);
    return ft_finish();
}
