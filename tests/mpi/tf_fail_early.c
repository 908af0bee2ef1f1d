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

enum { BIG = 100000, TAG = 5 };

int main(int argc, char **argv)
{
    static char buf[BIG];
    int me, n, v, i, nlive = 0, live[64];

    mt_init(&argc, &argv, "tf_fail_early");
    me = mt_rank();
    n  = mt_size();
    v  = n - 1;
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    if (me == v)
        ft_die();                       /* before any communication */
    mt_sleep_ms(500);

    ft_watchdog_arm(MT_HERE, "first operation with a process dead before first contact");
    if (me == 0) {
        ft_expect_failed(MT_HERE, MPI_Send(buf, BIG, MPI_CHAR, v, TAG, MPI_COMM_WORLD),
                         "100 kB send to a process dead before first contact");
    } else if (me == 1) {
        ft_expect_failed(MT_HERE, MPI_Recv(buf, BIG, MPI_CHAR, v, TAG, MPI_COMM_WORLD,
                                           MPI_STATUS_IGNORE),
                         "receive from a process dead before first contact");
    } else {
        ft_expect_failed(MT_HERE, MPI_Ssend(buf, 1, MPI_CHAR, v, TAG, MPI_COMM_WORLD),
                         "synchronous send to a process dead before first contact");
    }
    ft_expect_failed(MT_HERE, MPI_Bcast(buf, 10, MPI_CHAR, v, MPI_COMM_WORLD),
                     "broadcast rooted at a process dead before first contact");
    ft_watchdog_disarm();

    for (i = 0; i < n; i++)
        if (i != v)
            live[nlive++] = i;
    ft_survivors_exchange(live, nlive, TAG + 1);
    return ft_finish();
}
