/* tf_fail_waitall_mt.c: MPI_Waitall under MPI_THREAD_MULTIPLE on requests
 * that failed before the call (Open MPI 4.1's wait_all never returns then:
 * src/ompi/waitall.c).  The last rank dies; once the survivors know it,
 * each posts an Isend and an Irecv to it (both fail at once) and an
 * exchange with the next survivor, and waits for all four: the call
 * returns MPI_ERR_IN_STATUS, the statuses of the two to the dead rank hold
 * the class and the exchange's hold success (its requests freed; Open MPI
 * frees the failed ones too, ompi_errhandler_request_invoke); then the same
 * with statuses ignored, and with a failed persistent request (as in
 * single-threaded runs: MPI_SUCCESS, the error in its status, not freed).
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

static void post(int v, int next, int prev, int *out, int *in, MPI_Request *rq)
{
    MT_CHECK(MPI_Isend(&out[0], 1, MPI_INT, v, 3, MPI_COMM_WORLD, &rq[0]));
    MT_CHECK(MPI_Irecv(&in[0], 1, MPI_INT, v, 3, MPI_COMM_WORLD, &rq[1]));
    MT_CHECK(MPI_Isend(&out[1], 1, MPI_INT, next, 4, MPI_COMM_WORLD, &rq[2]));
    MT_CHECK(MPI_Irecv(&in[1], 1, MPI_INT, prev, 4, MPI_COMM_WORLD, &rq[3]));
}

int main(int argc, char **argv)
{
    MPI_Request rq[4], pq;
    MPI_Status st[4];
    int provided = 0, v, n, me, next, prev, out[2], in[2] = { -1, -1 }, rc, i;

    provided = mt_init_thread(&argc, &argv, "tf_fail_waitall_mt", MPI_THREAD_MULTIPLE);
    mt_expect(MT_HERE, provided == MPI_THREAD_MULTIPLE, "thread level %d", provided);
    ft_check_class();
    n = mt_size();
    me = mt_rank();
    v = n - 1;
    next = (me + 1) % (n - 1);
    prev = (me + n - 2) % (n - 1);
    out[0] = out[1] = me;
    ft_barrier_then_die(v);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);

    ft_watchdog_arm(MT_HERE, "MPI_Waitall with requests that failed before it");
    post(v, next, prev, out, in, rq);
    rc = MPI_Waitall(4, rq, st);
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "waitall rc %d", rc);
    for (i = 0; i < 2; i++) {
        mt_expect(MT_HERE, st[i].MPI_ERROR == MPIX_ERR_PROC_FAILED, "status %d: %d", i,
                  st[i].MPI_ERROR);
        if (rq[i] != MPI_REQUEST_NULL)
            MT_CHECK(MPI_Request_free(&rq[i]));
    }
    for (i = 2; i < 4; i++) {
        mt_expect(MT_HERE, st[i].MPI_ERROR == MPI_SUCCESS, "status %d: %d", i, st[i].MPI_ERROR);
        mt_expect(MT_HERE, rq[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    }
    mt_expect(MT_HERE, in[1] == prev, "exchange: %d from %d", in[1], prev);

    post(v, next, prev, out, in, rq);
    rc = MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
    mt_expect(MT_HERE, rc == MPI_ERR_IN_STATUS, "waitall (statuses ignored) rc %d", rc);
    for (i = 0; i < 2; i++)
        if (rq[i] != MPI_REQUEST_NULL)
            MT_CHECK(MPI_Request_free(&rq[i]));

    MT_CHECK(MPI_Send_init(&out[0], 1, MPI_INT, v, 5, MPI_COMM_WORLD, &pq));
    MT_CHECK(MPI_Start(&pq));
    rc = MPI_Waitall(1, &pq, st);       /* as single-threaded: docs/SEMANTICS.md */
    mt_expect(MT_HERE, rc == MPI_SUCCESS && st[0].MPI_ERROR == MPIX_ERR_PROC_FAILED,
              "persistent: rc %d status %d", rc, st[0].MPI_ERROR);
    mt_expect(MT_HERE, pq != MPI_REQUEST_NULL, "persistent request freed");
    MT_CHECK(MPI_Request_free(&pq));
    ft_watchdog_disarm();
    return ft_finish();
}
