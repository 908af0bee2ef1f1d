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
 * FS_TEST_OPTS: --mca pml_failstop_hb_timeout_ms 60000 --mca pml_failstop_hb_timeout_remote_ms 60000 --mca pml_failstop_hb_timeout_host_ms 60000 --mca pml_failstop_ucx_keepalive_ms 60000
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    const int v = 1;
    int me, x = -1;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_hb_exit");
    me = mt_rank();
    ft_check_class();
    /* not a bare barrier: over TCP the victim's last barrier message may
     * still wait in UCX's send queue (a connection being made) when it
     * dies, and the others' barrier would rightly fail (seen once under
     * Open MPI 5) */
    ft_barrier_then_die(v);
    if (me == 0) {
        ft_watchdog_arm(MT_HERE, "MPI_Recv from the dead rank");
        ft_expect_failed(MT_HERE, MPI_Recv(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD, &st),
                         "MPI_Recv from the dead rank");
        ft_watchdog_disarm();
        mt_expect(MT_HERE, x == -1, "failed receive wrote %d", x);
    } else {
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    }
    ft_only_failed_then_exchange(v, 5);
    return ft_finish();
}
