/* tf_shrink.c: MPIX_Comm_shrink and MPIX_Comm_ishrink.  Failure-free first:
 * a shrink of MPI_COMM_WORLD has every rank, in order, and collectives
 * work on it.  Then the last rank dies; the survivors, without
 * acknowledging, shrink MPI_COMM_WORLD (collectively inactive): a
 * communicator of the survivors in rank order, the same at all of them,
 * whose collectives work and whose failed group is empty; shrinking it
 * again (nonblocking) gives the same members; after a revoke of a
 * duplicate, its shrink works too.  Every shrunk communicator is freed.
 * FS_TEST_NPS: 3 5
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

/* newcomm holds exactly the first `want` world ranks, in order; an
 * allreduce and a barrier on it work. */
static void expect_members(mt_loc at, MPI_Comm newcomm, int want)
{
    MPI_Group g, w;
    int size, me, i, sum = 0, ranks[64], world[64];

    MT_CHECK(MPI_Comm_size(newcomm, &size));
    mt_expect(at, size == want, "shrunk communicator of %d, want %d", size, want);
    MT_CHECK(MPI_Comm_rank(newcomm, &me));
    mt_expect(at, me == mt_rank(), "rank %d in it, world rank %d", me, mt_rank());
    MT_CHECK(MPI_Comm_group(newcomm, &g));
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &w));
    for (i = 0; i < size && i < 64; i++)
        ranks[i] = i;
    MT_CHECK(MPI_Group_translate_ranks(g, size, ranks, w, world));
    for (i = 0; i < size && i < 64; i++)
        mt_expect(at, world[i] == i, "member %d is world rank %d", i, world[i]);
    MT_CHECK(MPI_Group_free(&g));
    MT_CHECK(MPI_Group_free(&w));
    ft_watchdog_arm(at, "collectives on the shrunk communicator");
    MT_CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, newcomm));
    MT_CHECK(MPI_Barrier(newcomm));
    ft_watchdog_disarm();
    mt_expect(at, sum == size * (size - 1) / 2, "allreduce %d", sum);
}

int main(int argc, char **argv)
{
    MPI_Comm s1, s2, dup, s3;
    MPI_Request rq;
    int n, v, i;

    mt_init(&argc, &argv, "tf_shrink");
    ft_check_class();
    n = mt_size();
    v = n - 1;
    for (i = 0; i < 3; i++) {
        MT_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s1));
        expect_members(MT_HERE, s1, n);
        MT_CHECK(MPI_Comm_free(&s1));
    }
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    ft_barrier_then_die(v);

    ft_watchdog_arm(MT_HERE, "MPIX_Comm_shrink after a failure");
    MT_CHECK(MPIX_Comm_shrink(MPI_COMM_WORLD, &s1));
    ft_watchdog_disarm();
    expect_members(MT_HERE, s1, n - 1);
    mt_expect(MT_HERE, ft_failed_count(s1) == 0, "the shrunk communicator has %d failed",
              ft_failed_count(s1));

    MT_CHECK(MPIX_Comm_ishrink(s1, &s2, &rq));
    ft_watchdog_arm(MT_HERE, "MPIX_Comm_ishrink");
    MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    ft_watchdog_disarm();
    expect_members(MT_HERE, s2, n - 1);

    if (mt_rank() == 0)
        MT_CHECK(MPIX_Comm_revoke(dup));
    ft_watchdog_arm(MT_HERE, "MPIX_Comm_shrink of a revoked communicator");
    MT_CHECK(MPIX_Comm_shrink(dup, &s3));
    ft_watchdog_disarm();
    expect_members(MT_HERE, s3, n - 1);

    MT_CHECK(MPI_Comm_free(&s3));
    MT_CHECK(MPI_Comm_free(&s2));
    MT_CHECK(MPI_Comm_free(&s1));
    MT_CHECK(MPI_Comm_free(&dup));
    return ft_finish();
}
