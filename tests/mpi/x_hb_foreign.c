/* x_hb_foreign: a job that another one's stale detector (hb_foreign.py,
 * run by hb_foreign.sh) floods with datagrams: FAILED naming each rank,
 * SYNCs with every bit set, LEAVEs, wrong versions and junk (issue 10,
 * item 6).  The ranks keep running collectives for RUN_S seconds; nobody
 * may be failed, excluded or left.  Each rank prints its hb_foreign counter
 * (datagrams dropped as not of this job) for the script to check. */
#include "faulttest.h"

#include <time.h>

#define RUN_S 5.0

int main(int argc, char **argv)
{
    struct timespec nap = {0, 20 * 1000 * 1000};
    int me, n, x = 0, rounds = 0;
    double t0;

    mt_init(&argc, &argv, "x_hb_foreign");
    me = mt_rank();
    n  = mt_size();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = mt_now();
    while (mt_now() - t0 < RUN_S) {
        MT_CHECK(MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        mt_expect(MT_HERE, x == n * (n - 1) / 2, "Allreduce %d", x);
        nanosleep(&nap, NULL);
        ++rounds;
    }
    /* everyone leaves the loop after the same number of rounds */
    MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, &rounds, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 0 &&
              ft_counter("peers_failed") == 0, "a process was reported failed");
    printf("HB_FOREIGN rank %d dropped %llu\n", me, ft_counter("hb_foreign"));
    fflush(stdout);
    return mt_finish();
}
