/* tf_fail_early: a process that dies right after MPI_Init, before anybody
 * contacted it (MPI-FT 17.3, 17.6).  Over shared memory the survivors' UCX
 * cannot even attach its segment (UCS_ERR_SHMEM_SEGMENT), an error that
 * names no cause: the survivors must still get MPIX_ERR_RANK_FAIL_STOP, not
 * MPI_ERR_INTERN, on every first path to it -- a 100 kB send (rank 0), a
 * receive (rank 1), a synchronous send (the others) -- and then from a
 * broadcast rooted at it, and keep talking among themselves.  Half a second
 * passes before they try, so that the process is gone.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

int main(int argc, char **argv)
{
    int v;

    mt_init(&argc, &argv, "tf_fail_early");
    v = mt_size() - 1;
    if (mt_rank() == v)
        ft_die();                       /* before any communication */
    mt_sleep_ms(500);
    ft_dead_peer_first_ops(v, 5);       /* faulttest.h */
    return ft_finish();
}
