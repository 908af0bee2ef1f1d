/* tf_validate_during.c: processes die during MPIX_Comm_validate, the
 * coordinator among them.  Five ranks, a star (pml_failstop_agree_star_max:
 * 8): rank 0 coordinates; in each agreement it sends and receives 16
 * agreement messages, each other rank 4.  A first validation is
 * failure-free (with the two agreements that check its uniformity: three
 * agreements, 48 messages at rank 0, 12 at rank 3).  In the second,
 * pml_failstop_inject kills rank 0 after it sent its proposal to two of the
 * four others, and rank 3 right after it sent its contribution.  Every
 * survivor returns from it with the same failed group (the decision may
 * predate the deaths: then the deaths are newer failures and collectives
 * stay off until a later validation); validations are repeated until the
 * group is {0, 3} (at most 3 more), and then every collective works over
 * ranks 1, 2 and 4.
 * FS_TEST_NPS: 5
 * FS_TEST_FAULT: 1
 * FS_TEST_OPTS: --mca pml_failstop_inject 0:after=54,3:after=13
 */
#include "survtest.h"

int main(int argc, char **argv)
{
    int dead[SV_MAX] = { 0 }, mask, tries, want = (1 << 0) | (1 << 3);
    int none[] = { -1 };

    mt_init(&argc, &argv, "tf_validate_during");
    ft_check_class();
    sv_validate(MT_HERE, MPI_COMM_WORLD, 0, none, dead);       /* 3 agreements */

    mask = sv_validate_mask(MT_HERE, MPI_COMM_WORLD, 1, dead); /* 0 and 3 die in it */
    mt_expect(MT_HERE, mt_rank() != 0 && mt_rank() != 3, "rank %d survived", mt_rank());
    for (tries = 0; mask != want && tries < 3; tries++)
        mask = sv_validate_mask(MT_HERE, MPI_COMM_WORLD, 0, dead);
    mt_expect(MT_HERE, mask == want, "validate gave %#x after %d more, want %#x", mask, tries,
              want);
    sv_check_all(MT_HERE, MPI_COMM_WORLD, dead);
    return ft_finish();
}
