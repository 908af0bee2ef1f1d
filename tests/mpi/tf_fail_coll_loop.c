/* tf_fail_coll_loop: a process dies in the middle of a collective
 * (MPI-FT 17.7): all ranks run MPI_Allreduce in a loop, small (eager) and
 * large (rendezvous) in turn, and the victim kills itself from inside
 * failstop after a fixed number of messages (pml_failstop_inject), so it
 * dies part-way through some Allreduce.  Every survivor gets
 * MPIX_ERR_RANK_FAIL_STOP from some Allreduce within the deadline, never a
 * wrong result before that (every successful result is checked), and from
 * then on MPI_COMM_WORLD is collectively inactive: the next Allreduce fails
 * at once.  Survivors still exchange messages among themselves.
 *
 * The victim is rank 1; 1:after=N counts its messages sent and received.
 * FS_TEST_NPS: 2 4
 * FS_TEST_OPTS: --mca pml_failstop_inject 1:after=151
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define NS 8          /* small Allreduce: eager */
#define NL 32768      /* large Allreduce (128 KiB): rendezvous */
#define MAXIT 2000    /* the victim is long dead by then */

static int val(int rank, int it, int i)
{
    return mt_ival(rank, it, (size_t)i) & 0xfffff;
}

/* One Allreduce of iteration it; its result is checked if it succeeded. */
static int one_allreduce(int it, int *in, int *out)
{
    int n = (it % 2) ? NL : NS, i, r, rc, want;

    for (i = 0; i < n; i++) {
        in[i] = val(mt_rank(), it, i);
        out[i] = -1;
    }
    rc = MPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != MPI_SUCCESS)
        return rc;
    for (i = 0; i < n; i++) {
        want = 0;
        for (r = 0; r < mt_size(); r++)
            want += val(r, it, i);
        mt_expect(MT_HERE, out[i] == want, "Allreduce iteration %d (%d ints)"
                  " element %d: %d, want %d", it, n, i, out[i], want);
    }
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int v = 1, it, rc = MPI_SUCCESS, active = -1, n = 0, i;
    int *in, *out, live[64];
    double t0;
    unsigned long long failed = 0;

    mt_init(&argc, &argv, "tf_fail_coll_loop");
    ft_check_class();
    mt_expect(MT_HERE, mt_size() <= 64, "at most 64 ranks");
    in = mt_malloc(sizeof(int) * NL);
    out = mt_malloc(sizeof(int) * NL);

    t0 = mt_now();
    ft_watchdog_arm(MT_HERE, "MPI_Allreduce loop while a process dies");
    for (it = 0; it < MAXIT; it++) {
        rc = one_allreduce(it, in, out);
        if (rc != MPI_SUCCESS)
            break;
        mt_expect(MT_HERE, mt_now() - t0 < FT_DEADLINE, "no failure "
                  "reported after %.0f s (%d iterations)", FT_DEADLINE, it);
    }
    ft_watchdog_disarm();
    mt_expect(MT_HERE, mt_rank() != v, "the victim survived %d iterations: "
              "pml_failstop_inject did not fire", it);
    mt_expect(MT_HERE, it < MAXIT, "no Allreduce failed in %d iterations",
              MAXIT);
    ft_expect_failed(MT_HERE, rc, "Allreduce when a process died in it");
    mt_expect(MT_HERE, it > 0, "the first Allreduce failed: the victim died "
              "before the loop (after=N too small)");

    /* the survivor knows now, and WORLD is collectively inactive */
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "rank %d not in the failed group", v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(MT_HERE, active == 0, "MPI_COMM_WORLD still active");
    ft_watchdog_arm(MT_HERE, "MPI_Allreduce after the failure");
    ft_expect_failed(MT_HERE, one_allreduce(it + 1, in, out),
                     "Allreduce after the failure");
    ft_watchdog_disarm();
    MT_CHECK(MPIX_Failstop_counter("peers_failed", &failed));
    mt_expect(MT_HERE, failed == 1, "peers_failed = %llu", failed);

    for (i = 0; i < mt_size(); i++)
        if (i != v)
            live[n++] = i;
    ft_survivors_exchange(live, n, 5);
    free(in);
    free(out);
    return ft_finish();
}
