/* tf_fail_finalize_stop: a process hangs while the others wait for it
 * inside MPI_Finalize.  Each survivor posts a receive from the victim,
 * frees it (MPI_Request_free), tells the victim and calls MPI_Finalize,
 * which must complete the freed receive first (MPI-4.0 11.2.2), so it waits
 * for the victim.  The victim then stops (SIGSTOP): no transport reports a
 * stopped process, only the heartbeat detector does.  MPI_Finalize's wait
 * runs inside failstop's engine, not in Open MPI's progress: unless the
 * engine applies the detector's verdicts there, MPI_Finalize returns only
 * when the waiter's fence has killed the victim (--fence-stopped), or
 * never.  Checked at every survivor: MPI_Finalize succeeds while the victim
 * is still stopped.
 * FS_TEST_NPS: 2 3
 * FS_TEST_RUN_OPTS: --fence-stopped 4000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 3
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    int me, n, v, i, x = -1, note, pid = (int)getpid(), rc;
    MPI_Request rq;

    mt_init(&argc, &argv, "tf_fail_finalize_stop");
    me = mt_rank();
    n = mt_size();
    v = n - 1;
    ft_check_class();
    MT_CHECK(MPI_Bcast(&pid, 1, MPI_INT, v, MPI_COMM_WORLD));
    if (me == v) {
        for (i = 0; i < n - 1; i++)
            MT_CHECK(MPI_Recv(&note, 1, MPI_INT, MPI_ANY_SOURCE, 7,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        usleep(200 * 1000);     /* the survivors are in MPI_Finalize */
        ft_stop();
        mt_fail(MT_HERE, "running again after its SIGSTOP");
    }
    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, v, 8, MPI_COMM_WORLD, &rq));
    MT_CHECK(MPI_Request_free(&rq));
    MT_CHECK(MPI_Send(&me, 1, MPI_INT, v, 7, MPI_COMM_WORLD));

    ft_watchdog_arm(MT_HERE, "MPI_Finalize waiting for a process that hung");
    rc = MPI_Finalize();
    ft_watchdog_disarm();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL tf_fail_finalize_stop rank %d: "
                "MPI_Finalize rc %d\n", me, rc);
        return 1;
    }
    if (!ft_is_stopped(pid)) {
        fprintf(stderr, "MPITEST FAIL tf_fail_finalize_stop rank %d: MPI_Finalize "
                "returned only after the stopped rank %d (pid %d) was killed: "
                "the detector's verdict was not applied inside it\n", me, v, pid);
        return 1;
    }
    if (x != -1) {
        fprintf(stderr, "MPITEST FAIL tf_fail_finalize_stop rank %d: the failed "
                "receive wrote %d\n", me, x);
        return 1;
    }
    printf("MPITEST OK tf_fail_finalize_stop rank %d/%d\n", me, n);
    fflush(stdout);
    return 0;
}
