/* tf_shrink_during.c: processes die during MPIX_Comm_shrink, the
 * agreement's coordinator among them.  Five ranks, a star
 * (pml_failstop_agree_star_max: 8): rank 0 coordinates; each agreement
 * costs it 16 messages, the others 4.  A first shrink is failure-free.  In
 * the second, pml_failstop_inject kills rank 0 after it sent its proposal
 * to two of the four others, and rank 3 right after it sent its
 * contribution.  Every survivor gets a communicator, the same one (size
 * and members compared with two agreements); a process that died after
 * the decision is a failed member of it, so shrinking again (at most
 * twice) gives exactly ranks 1, 2 and 4, whose collectives work.
 * FS_TEST_NPS: 5
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_inject 0:after=54,3:after=13
 */
#include "agreetest.h"

/* A mask of comm's members' world ranks, checked equal at every survivor. */
static int members_uniform(mt_loc at, MPI_Comm comm)
{
    int size, i, out[64], mask = 0, lo, hi;

    size = ft_world_ranks_of(comm, out);
    for (i = 0; i < size; i++)
        mask |= 1 << out[i];
    lo = mask;
    hi = ~mask;
    at_agree(at, comm, &lo);
    at_agree(at, comm, &hi);
    mt_expect(at, lo == mask && hi == ~mask, "shrunk members %#x here, AND %#x OR %#x", mask,
              lo, ~hi);
    return mask;
}

static MPI_Comm shrink(mt_loc at, MPI_Comm comm)
{
    MPI_Comm s;

    ft_watchdog_arm(at, "MPIX_Comm_shrink");
    MT_CHECK(MPIX_Comm_shrink(comm, &s));
    ft_watchdog_disarm();
    return s;
}

int main(int argc, char **argv)
{
    MPI_Comm s1, s2, s3;
    int mask, tries, x = 1, sum = 0, want = (1 << 1) | (1 << 2) | (1 << 4);

    mt_init(&argc, &argv, "tf_shrink_during");
    ft_check_class();
    s1 = shrink(MT_HERE, MPI_COMM_WORLD);             /* rank 0: 16, rank 3: 4 */
    mask = members_uniform(MT_HERE, s1);              /* two more on s1: 48 / 12 in all */
    mt_expect(MT_HERE, mask == 0x1f, "failure-free shrink gave %#x", mask);
    s2 = shrink(MT_HERE, s1);                         /* 0 and 3 die in it */
    mt_expect(MT_HERE, mt_rank() != 0 && mt_rank() != 3, "rank %d survived", mt_rank());
    mask = members_uniform(MT_HERE, s2);
    for (tries = 0; mask != want && tries < 2; tries++) {
        s3 = shrink(MT_HERE, s2);
        MT_CHECK(MPI_Comm_free(&s2));
        s2   = s3;
        mask = members_uniform(MT_HERE, s2);
    }
    mt_expect(MT_HERE, mask == want, "members %#x after %d more shrinks, want %#x", mask,
              tries, want);
    ft_watchdog_arm(MT_HERE, "collectives on the shrunk communicator");
    MT_CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, s2));
    MT_CHECK(MPI_Barrier(s2));
    ft_watchdog_disarm();
    mt_expect(MT_HERE, sum == 3, "allreduce over the survivors gave %d", sum);
    MT_CHECK(MPI_Comm_free(&s2));
    MT_CHECK(MPI_Comm_free(&s1));
    return ft_finish();
}
