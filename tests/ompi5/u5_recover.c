/* A ULFM program written against Open MPI 5's own API (mpi-ext.h, libmpi
 * only, no failstop header): the last rank dies, and the survivors
 *   1. get MPIX_ERR_PROC_FAILED from a receive naming it;
 *   2. find exactly it in MPIX_Comm_get_failed, and acknowledge it; then
 *      MPI_ANY_SOURCE works again (a ring of wildcard receives);
 *   3. agree (MPIX_Comm_agree: the AND of every survivor's flag, success
 *      once the failure is acknowledged; MPIX_Comm_iagree likewise);
 *   4. see rank 0's MPIX_Comm_revoke end a pending receive with
 *      MPIX_ERR_REVOKED, and MPIX_Comm_is_revoked say so;
 *   5. shrink the revoked MPI_COMM_WORLD (MPIX_Comm_shrink) and sum their
 *      ranks over the new communicator.
 * It runs over failstop (failstop-run) and over Open MPI 5's own ULFM
 * (ob1, --with-ft ulfm) alike: tests/ompi5/ulfm.sh. */
#include "mpitest.h"

#include <mpi-ext.h>
#include <signal.h>

#define LIMIT_S 30.0

static void recv_fails(int from)
{
    int x = 0;
    int rc = MPI_Recv(&x, 1, MPI_INT, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);

    mt_expect_class(MT_HERE, rc, MPIX_ERR_PROC_FAILED, "receive from the dead rank");
}

static void failed_is_victim(int victim)
{
    MPI_Group failed, world;
    int n = 0, zero = 0, r = MPI_UNDEFINED, acked = 0;

    MT_CHECK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
    MT_CHECK(MPI_Group_size(failed, &n));
    mt_expect(MT_HERE, n == 1, "get_failed: %d processes, expected 1", n);
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    MT_CHECK(MPI_Group_translate_ranks(failed, 1, &zero, world, &r));
    mt_expect(MT_HERE, r == victim, "get_failed names rank %d, expected %d", r, victim);
    MT_CHECK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, mt_size(), &acked));
    mt_expect(MT_HERE, acked == 1, "ack_failed acknowledged %d, expected 1", acked);
    MT_CHECK(MPI_Group_free(&failed));
    MT_CHECK(MPI_Group_free(&world));
}

/* acknowledged: MPI_ANY_SOURCE is on again (a ring over the survivors) */
static void anysource(int survivors)
{
    int next = (mt_rank() + 1) % survivors, prev = (mt_rank() + survivors - 1) % survivors;
    int x = -1, me = mt_rank();
    MPI_Request req;
    MPI_Status st;

    MT_CHECK(MPI_Sendrecv(&me, 1, MPI_INT, next, 3, &x, 1, MPI_INT, MPI_ANY_SOURCE, 3,
                          MPI_COMM_WORLD, &st));
    mt_expect(MT_HERE, (x == prev) && (st.MPI_SOURCE == prev), "wildcard receive: %d from %d, "
              "expected %d", x, st.MPI_SOURCE, prev);
    /* and a blocking one, which libmpi checks at entry */
    MT_CHECK(MPI_Isend(&me, 1, MPI_INT, next, 4, MPI_COMM_WORLD, &req));
    MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 4, MPI_COMM_WORLD, &st));
    mt_expect(MT_HERE, (x == prev) && (st.MPI_SOURCE == prev), "blocking wildcard receive: "
              "%d from %d, expected %d", x, st.MPI_SOURCE, prev);
    MT_CHECK(MPI_Wait(&req, MPI_STATUS_IGNORE));
}

static void agree(void)
{
    MPI_Request req;
    int flag = 1, iflag = (mt_rank() == 0) ? 0x6 : 0x3;

    MT_CHECK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    mt_expect(MT_HERE, flag == 1, "agree: flag %d, expected 1", flag);
    flag = (mt_rank() == 1) ? 0 : 1;
    MT_CHECK(MPIX_Comm_agree(MPI_COMM_WORLD, &flag));
    mt_expect(MT_HERE, flag == 0, "agree: flag %d, expected the AND 0", flag);
    MT_CHECK(MPIX_Comm_iagree(MPI_COMM_WORLD, &iflag, &req));
    mt_test_until(MT_HERE, &req, MPI_STATUS_IGNORE, LIMIT_S, "iagree");
    mt_expect(MT_HERE, iflag == 0x2, "iagree: flag %#x, expected the AND 0x2", iflag);
}

static void revoke(void)
{
    MPI_Request req;
    MPI_Status st;
    int x = 0, flag = 0, done = 0, rc;
    double end = mt_now() + LIMIT_S;

    if (mt_rank() == 0) {
        MT_CHECK(MPIX_Comm_revoke(MPI_COMM_WORLD));
    } else {
        MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, 0, 2, MPI_COMM_WORLD, &req));
        while (!done) {
            rc = MPI_Test(&req, &done, &st);
            if (rc != MPI_SUCCESS) {
                mt_expect_class(MT_HERE, rc, MPIX_ERR_REVOKED, "a receive on the revoked comm");
                break;
            }
            mt_expect(MT_HERE, !done, "a receive from rank 0 completed: nothing was sent");
            mt_expect(MT_HERE, mt_now() < end, "the revoke did not arrive in %.0f s", LIMIT_S);
        }
    }
    MT_CHECK(MPIX_Comm_is_revoked(MPI_COMM_WORLD, &flag));
    mt_expect(MT_HERE, flag == 1, "is_revoked: %d", flag);
    rc = MPI_Barrier(MPI_COMM_WORLD);
    mt_expect_class(MT_HERE, rc, MPIX_ERR_REVOKED, "a barrier on the revoked comm");
}

static void shrink(void)
{
    MPI_Comm shrunk;
    int n = 0, me = -1, sum = -1, expect = 0, i;

    MT_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
    MT_CHECK(MPI_Comm_set_errhandler(shrunk, MPI_ERRORS_RETURN));
    MT_CHECK(MPI_Comm_size(shrunk, &n));
    MT_CHECK(MPI_Comm_rank(shrunk, &me));
    mt_expect(MT_HERE, n == mt_size() - 1, "shrink: %d processes, expected %d", n,
              mt_size() - 1);
    mt_expect(MT_HERE, me == mt_rank(), "shrink: rank %d, expected %d", me, mt_rank());
    MT_CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, shrunk));
    for (i = 0; i < n; ++i) {
        expect += i;
    }
    mt_expect(MT_HERE, sum == expect, "allreduce over the shrunk comm: %d, expected %d",
              sum, expect);
    MT_CHECK(MPI_Comm_free(&shrunk));
}

int main(int argc, char **argv)
{
    int victim;

    mt_init(&argc, &argv, "u5_recover");
    mt_expect(MT_HERE, mt_size() >= 3, "needs 3 ranks or more");
    victim = mt_size() - 1;
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (mt_rank() == victim) {
        raise(SIGKILL);
    }
    recv_fails(victim);
    failed_is_victim(victim);
    anysource(victim);
    agree();
    revoke();
    shrink();
    return mt_finalize_ok();
}
