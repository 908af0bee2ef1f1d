/* tf_hb_exit: a process of this host that dies is found by its exit, not
 * by the heartbeat timeout (src/detector/pidwatch.h).  The timeouts and
 * UCX's keepalive are a minute here, so nothing but the exit can tell the
 * survivors within the test's deadline over a transport that reports no
 * dead peer by itself (UCX shared memory without keepalive, libfabric's
 * shm, tcp;ofi_rxm, udp;ofi_rxd).  Checked at every survivor:
 *  - rank 0, blocked in MPI_Recv from rank 1, gets MPIX_ERR_RANK_FAIL_STOP;
 *  - the others, which never exchange a message with rank 1, learn of the
 *    failure too, and rank 1 is the only member of the failed group;
 *  - survivors keep exchanging messages and finalize (their departures,
 *    seen as exits by their observers, are not failures).
 * FS_TEST_NPS: 4
 * FS_TEST_OPTS: --mca pml_failstop_hb_timeout_ms 60000 --mca pml_failstop_hb_timeout_remote_ms 60000 --mca pml_failstop_ucx_keepalive_ms 60000
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    const int v = 1;
    int me, n, i, x = -1, nlive = 0, live[64];
    MPI_Status st;

    mt_init(&argc, &argv, "tf_hb_exit");
    me = mt_rank();
    n = mt_size();
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_check_class();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == v)
        ft_die();
    if (me == 0) {
        ft_watchdog_arm(MT_HERE, "MPI_Recv from the dead rank");
        ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD, &st),
                         "MPI_Recv from the dead rank");
        ft_watchdog_disarm();
        mt_expect(MT_HERE, x == -1, "failed receive wrote %d", x);
    } else {
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    }
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1 &&
              ft_is_known_failed(MPI_COMM_WORLD, v),
              "failed group is not exactly {%d}", v);
    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, 5);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "another process was reported failed");
    return ft_finish();
}
