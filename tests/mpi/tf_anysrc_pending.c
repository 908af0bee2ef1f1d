/* tf_anysrc_pending.c: ULFM's rule for pending wildcard receives
 * (pml_failstop_anysource_pending=1).  Rank 0 posts a nonblocking
 * MPI_ANY_SOURCE receive, then the last rank dies.  MPI_Wait and MPI_Test
 * on it return MPIX_ERR_PROC_FAILED_PENDING (the code is the class) and
 * leave it valid; a new nonblocking wildcard receive does the same; a
 * blocking wildcard receive and a wildcard probe get MPIX_ERR_PROC_FAILED.
 * After MPIX_Comm_failure_ack, rank 1 sends the messages both pending
 * receives wait for: they complete with them, data checked.  A pending
 * receive can be cancelled, and one can be freed.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_anysource_pending 1
 */
#include "faulttest.h"

static void expect_pending(mt_loc at, int rc, const char *what)
{
    mt_expect_class(at, rc, MPIX_ERR_PROC_FAILED_PENDING, what);
    mt_expect(at, rc == MPIX_ERR_PROC_FAILED_PENDING, "%s: code %d is not the class %d", what,
              rc, MPIX_ERR_PROC_FAILED_PENDING);
}

static void rank0(int v)
{
    MPI_Request rq1, rq2, rq3, rq4;
    MPI_Status st;
    int a = -1, b = -1, c, d, x, flag = 0, go = 1;

    MT_CHECK(MPI_Irecv(&a, 1, MPI_INT, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &rq1));
    ft_barrier_then_die(v);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    ft_watchdog_arm(MT_HERE, "waits on pending wildcard receives");
    expect_pending(MT_HERE, MPI_Wait(&rq1, &st), "MPI_Wait on a pending wildcard receive");
    mt_expect(MT_HERE, rq1 != MPI_REQUEST_NULL, "the pending receive was freed");
    expect_pending(MT_HERE, MPI_Test(&rq1, &flag, &st), "MPI_Test on it");
    MT_CHECK(MPI_Irecv(&b, 1, MPI_INT, MPI_ANY_SOURCE, 6, MPI_COMM_WORLD, &rq2));
    expect_pending(MT_HERE, MPI_Wait(&rq2, &st), "a wildcard receive posted while disabled");
    ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &st),
                     "a blocking wildcard receive");
    ft_expect_failed(MT_HERE, MPI_Iprobe(MPI_ANY_SOURCE, 9, MPI_COMM_WORLD, &flag, &st),
                     "a wildcard probe");
    MT_CHECK(MPI_Irecv(&c, 1, MPI_INT, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &rq3));
    MT_CHECK(MPI_Irecv(&d, 1, MPI_INT, MPI_ANY_SOURCE, 8, MPI_COMM_WORLD, &rq4));
    expect_pending(MT_HERE, MPI_Wait(&rq3, &st), "a third one");
    MT_CHECK(MPI_Cancel(&rq3));
    MT_CHECK(MPI_Wait(&rq3, &st));
    MT_CHECK(MPI_Test_cancelled(&st, &flag));
    mt_expect(MT_HERE, flag, "a cancelled pending receive is not cancelled");
    MT_CHECK(MPI_Request_free(&rq4));

    MT_CHECK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
    MT_CHECK(MPI_Send(&go, 1, MPI_INT, 1, 4, MPI_COMM_WORLD));
    MT_CHECK(MPI_Wait(&rq1, &st));
    mt_expect(MT_HERE, a == 105 && st.MPI_SOURCE == 1 && st.MPI_TAG == 5,
              "after the ack: %d from %d tag %d", a, st.MPI_SOURCE, st.MPI_TAG);
    MT_CHECK(MPI_Wait(&rq2, &st));
    mt_expect(MT_HERE, b == 106 && st.MPI_SOURCE == 1, "after the ack: %d from %d", b,
              st.MPI_SOURCE);
    ft_watchdog_disarm();
}

int main(int argc, char **argv)
{
    int n, go, m;

    mt_init(&argc, &argv, "tf_anysrc_pending");
    ft_check_class();
    n = mt_size();
    if (mt_rank() == 0) {
        rank0(n - 1);
    } else {
        ft_barrier_then_die(n - 1);
        if (mt_rank() == 1) {
            MT_CHECK(MPI_Recv(&go, 1, MPI_INT, 0, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            m = 105;
            MT_CHECK(MPI_Send(&m, 1, MPI_INT, 0, 5, MPI_COMM_WORLD));
            m = 106;
            MT_CHECK(MPI_Send(&m, 1, MPI_INT, 0, 6, MPI_COMM_WORLD));
        }
    }
    return ft_finish();
}
