/* tf_fail_flood: more sends outstanding to a peer than its shared-memory
 * FIFO has entries (pml_failstop_ucx_fifo_size, 128), and the peer dies
 * without reading any (MPI-FT 17.6).  Rank 0 posts NSEND MPI_Isend to rank
 * 1, eager (1 KiB) and rendezvous (64 KiB) alternating, then blocking
 * MPI_Sends of 64 KiB (pushed fragments: nine FIFO entries each,
 * pml_failstop_ucx_frag_max); the FIFO fills and UCX keeps the rest
 * pending, where a dead receiver would leave them forever.  Rank 1 dies
 * 0.2 s after the barrier.  Every rendezvous send must end with the class
 * (its data was never read), every eager or fragmented one with success
 * (UCX took it before the death) or the class, each within the deadline;
 * afterwards a send to rank 1 fails at once.  Other ranks only wait for
 * the failure to be known.
 * FS_TEST_NPS: 2 3
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 10
 */
#include "faulttest.h"

#define NSEND 600
#define NBLOCK 16
#define EAGER 1024
#define RNDV  (64 * 1024)

int main(int argc, char **argv)
{
    static MPI_Request rq[NSEND];
    static char ebuf[NSEND / 2][EAGER], rbuf[NSEND / 2][RNDV], fbuf[RNDV];
    const int v = 1;
    int me, i, rc, x = 0;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_fail_flood");
    me = mt_rank();
    ft_check_class();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == v) {
        mt_sleep_ms(200);
        ft_die();
    }
    if (me == 0) {
        for (i = 0; i < NSEND; i++) {
            char *b = (i & 1) ? rbuf[i / 2] : ebuf[i / 2];
            int len = (i & 1) ? RNDV : EAGER;

            memset(b, i, (size_t)len);
            MT_CHECK(MPI_Isend(b, len, MPI_CHAR, v, i, MPI_COMM_WORLD, &rq[i]));
        }
        for (i = 0; i < NBLOCK; i++) {
            rc = MPI_Send(fbuf, RNDV, MPI_CHAR, v, NSEND + i, MPI_COMM_WORLD);
            if (rc != MPI_SUCCESS)
                ft_expect_failed(MT_HERE, rc, "blocking (fragmented) send to a dead peer");
        }
        for (i = 0; i < NSEND; i++) {
            rc = ft_wait(MT_HERE, &rq[i], &st, "a send queued to a dying peer");
            if ((i & 1) || (rc != MPI_SUCCESS))
                ft_expect_failed(MT_HERE, rc, (i & 1) ? "rendezvous send to a dead peer"
                                                     : "eager send to a dead peer");
        }
        ft_expect_failed(MT_HERE, MPI_Send(&x, 1, MPI_INT, v, 1, MPI_COMM_WORLD),
                         "a send after the failure");
    } else {
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    }
    return ft_finish();
}
