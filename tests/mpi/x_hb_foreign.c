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
    int me, n, v[2] = {0, 0}, rounds = 0, most = 0;
    double t0;

    mt_init(&argc, &argv, "x_hb_foreign");
    me = mt_rank();
    n  = mt_size();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    t0 = mt_now();
    /* The ranks leave the loop together: each round sums whether anyone's
     * clock has run out.  Leaving on its own clock, one rank could start
     * the final Allreduce while the others ran one more round, and the
     * mismatched collectives sum its round count (seen: 245, 247). */
    while (v[1] == 0) {
        v[0] = me;
        v[1] = (mt_now() - t0 >= RUN_S);
        MT_CHECK(MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
        mt_expect(MT_HERE, v[0] == n * (n - 1) / 2, "Allreduce %d", v[0]);
        nanosleep(&nap, NULL);
        ++rounds;
    }
    MT_CHECK(MPI_Allreduce(&rounds, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
    mt_expect(MT_HERE, most == rounds, "%d rounds here, %d elsewhere", rounds, most);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 0 &&
              ft_counter("peers_failed") == 0, "a process was reported failed");
    printf("HB_FOREIGN rank %d dropped %llu\n", me, ft_counter("hb_foreign"));
    fflush(stdout);
    return mt_finish();
}
