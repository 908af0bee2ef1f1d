/* tf_hb_two: two failures at different times, a hang and a crash, both
 * reach every survivor, though no survivor ever exchanges a message with
 * either (issue: failure detector; MPI-FT 17.3).  Rank 3 stops itself
 * (SIGSTOP) 1.5 s after MPI_Init and a broadcast, rank 6 kills itself
 * (SIGKILL) at 4 s; both compute without MPI until then.  (Timed from
 * after MPI_Init, not from the job's start as failstop-run --kill would:
 * 8 ranks on 2 cores take up to 2 s in MPI_Init over OFI tcp;ofi_rxm,
 * and a kill before the address exchange ends the job.)  Every process
 * switches UCX keepalive off, so
 * over shared memory no transport notices even the crash: only the
 * heartbeat detector and its propagation can tell the survivors.  Checked
 * at every survivor, polling probes with a deadline: rank 3 is known failed
 * while it is still stopped, then rank 6 too; the failed group is exactly
 * {3, 6}; survivors keep exchanging messages and finalize.
 * FS_TEST_NPS: 8
 * FS_TEST_RUN_OPTS: --fence-stopped 6000
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 2
 */
#include "faulttest.h"

#define V1 3
#define V2 6

/* computes without MPI until `at` s after t0, then hangs (stop) or dies;
 * must not get further (a stopped one is killed by failstop-run's fence) */
__attribute__((noreturn))
static void victim(double t0, double at, int stop)
{
    volatile double x = 1.0;

    while (mt_now() - t0 < at)
        x = x * 1.0000001 + 1e-9;
    if (!stop)
        ft_die();
    ft_stop();
    mt_fail(MT_HERE, "running again after its SIGSTOP (x=%g)", x);
}

int main(int argc, char **argv)
{
    int me, n, i, nlive = 0, live[64], pid = (int)getpid(), v1pid;
    double t0;

    setenv("UCX_KEEPALIVE_INTERVAL", "inf", 1);
    mt_init(&argc, &argv, "tf_hb_two");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n == 8, "needs 8 ranks, got %d", n);
    ft_check_class();
    v1pid = pid;
    MT_CHECK(MPI_Bcast(&v1pid, 1, MPI_INT, V1, MPI_COMM_WORLD));
    t0 = mt_now();
    if (me == V1 || me == V2)
        victim(t0, me == V1 ? 1.5 : 4.0, me == V1);

    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, V1);
    mt_expect(MT_HERE, ft_is_stopped(v1pid), "rank %d known failed only after "
              "it stopped being stopped (found by its death, not its hang)",
              V1);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, V2);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 2 &&
              ft_is_known_failed(MPI_COMM_WORLD, V1) &&
              ft_is_known_failed(MPI_COMM_WORLD, V2),
              "failed group is not exactly {%d, %d}", V1, V2);
    for (i = 0; i < n; i++)
        if (i != V1 && i != V2)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, 5);
    return ft_finish();
}
