/* tf_fail_finalize: MPI_Finalize completes normally at every survivor in
 * the presence of a failure (MPI-FT 17.5.2), promptly, even when the
 * failed process left state behind in the survivor's MPI library:
 *  - operations with it that the survivor started and released with
 *    MPI_Request_free before the failure (a rendezvous-size send it never
 *    fetched, a receive it never satisfied); the survivor waits until it
 *    knows of the failure, which completes them, so they are complete
 *    before MPI_Finalize as MPI requires;
 *  - messages it sent that were never received: a small one buffered as
 *    unexpected and a rendezvous-size one whose payload can no longer be
 *    fetched;
 *  - a communicator containing it, not freed.
 * Survivors finalize at different moments (rank 0 first, at once; the
 * others after exchanging messages).  A watchdog alarm turns a hanging
 * MPI_Finalize into a failure naming it; MPI_Finalize must also return
 * within a few seconds (pml_failstop_finalize_timeout_ms is 3 s).
 *
 * The last rank dies idle.
 * FS_TEST_NPS: 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define BIG (1 << 20)   /* rendezvous */

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    int v, me, n, i, x = 0, rc, nlive = 0, live[64], small[8];
    char *big, *big_in;
    MPI_Request rq[2];
    MPI_Comm dup;
    double t0, took;

    mt_init(&argc, &argv, "tf_fail_finalize");
    me = mt_rank();
    n = mt_size();
    v = n - 1;
    mt_expect(MT_HERE, n <= 64, "at most 64 ranks");
    ft_check_class();
    big = mt_zalloc(BIG);
    big_in = mt_zalloc(BIG);
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));   /* never freed */

    if (me == v) {
        /* leaves a small unexpected message and an unfetched rendezvous
         * at every survivor, then dies once they released their
         * operations */
        mt_fill(small, sizeof small, me, 1);
        mt_fill(big, BIG, me, 2);
        for (i = 0; i < n - 1; i++) {
            MT_CHECK(MPI_Send(small, 8, MPI_INT, i, 1, MPI_COMM_WORLD));
            MT_CHECK(MPI_Isend(big, BIG, MPI_CHAR, i, 2, MPI_COMM_WORLD,
                               &rq[0]));
            MT_CHECK(MPI_Request_free(&rq[0]));
        }
        for (i = 0; i < n - 1; i++)
            MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99,
                              MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        ft_die();
    }

    /* operations with v, released before the failure */
    MT_CHECK(MPI_Isend(big, BIG, MPI_CHAR, v, 3, MPI_COMM_WORLD, &rq[0]));
    MT_CHECK(MPI_Irecv(big_in, BIG, MPI_CHAR, v, 4, MPI_COMM_WORLD, &rq[1]));
    MT_CHECK(MPI_Request_free(&rq[0]));
    MT_CHECK(MPI_Request_free(&rq[1]));
    /* v's messages have arrived (in order, the small one first) */
    MT_CHECK(MPI_Probe(v, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MT_CHECK(MPI_Send(&me, 1, MPI_INT, v, 99, MPI_COMM_WORLD));
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);

    if (me != 0) {
        for (i = 0; i < n; i++)
            if (i != v && i != 0)
                live[nlive++] = i;
        ft_survivors_exchange(live, nlive, 5);
    }
    free(big);
    free(big_in);

    ft_watchdog_arm(MT_HERE, "MPI_Finalize after a failure");
    t0 = wall();
    rc = MPI_Finalize();
    took = wall() - t0;
    ft_watchdog_disarm();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "MPITEST FAIL tf_fail_finalize rank %d: MPI_Finalize "
                "rc %d\n", me, rc);
        return 1;
    }
    if (took > 5.0) {
        fprintf(stderr, "MPITEST FAIL tf_fail_finalize rank %d: MPI_Finalize "
                "took %.1f s\n", me, took);
        return 1;
    }
    printf("MPITEST OK tf_fail_finalize rank %d/%d\n", me, n);
    fflush(stdout);
    return 0;
}
