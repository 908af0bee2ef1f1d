/* tf_hb_compute: no false suspicion (issue: failure detector).  Heartbeats
 * do not depend on the application calling MPI: rank 1 computes for 3.5 s
 * (more than 3 times the 1 s detector timeout) without any MPI call, while
 * the other ranks wait for it in MPI_Recv -- busy polling, so with 3 or more
 * ranks on 2 cores every core is saturated.  Then rank 1 sends its results.
 * Checked everywhere: the messages arrive intact, nobody is in any failed
 * group, and the peers_failed counter stays 0 -- also after a final
 * exchange among all ranks.
 * FS_TEST_NPS: 3 4
 */
#include "faulttest.h"

#define COMPUTE_S 3.5

int main(int argc, char **argv)
{
    int me, n, i, buf[64], x = 0;
    volatile double acc = 1.0;
    MPI_Status st;
    double t0;

    mt_init(&argc, &argv, "tf_hb_compute");
    me = mt_rank();
    n = mt_size();
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    if (me == 1) {
        t0 = mt_now();
        while (mt_now() - t0 < COMPUTE_S)
            acc = acc * 1.0000001 + 1e-9;
        for (i = 0; i < n; i++) {
            if (i == 1)
                continue;
            mt_fill(buf, sizeof buf, 1, i);
            MT_CHECK(MPI_Send(buf, 64, MPI_INT, i, 3, MPI_COMM_WORLD));
        }
    } else {
        MT_CHECK(MPI_Recv(buf, 64, MPI_INT, 1, 3, MPI_COMM_WORLD, &st));
        mt_verify(MT_HERE, buf, sizeof buf, 1, me, "result of the computing "
                  "rank");
    }
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 0 &&
              ft_counter("peers_failed") == 0,
              "a process was reported failed (acc %g)", acc);
    MT_CHECK(MPI_Allreduce(&me, &x, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
    mt_expect(MT_HERE, x == n * (n - 1) / 2, "Allreduce %d", x);
    mt_expect(MT_HERE, ft_counter("peers_failed") == 0,
              "a process was reported failed");
    return mt_finish();
}
