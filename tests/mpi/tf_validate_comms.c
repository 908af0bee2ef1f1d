/* tf_validate_comms.c: communicator creation from a validated communicator
 * (MPI-FT 17.8.2).  Rank 1 dies; the survivors validate MPI_COMM_WORLD.
 * Then MPI_Comm_dup and MPI_Comm_create (a group with rank 1 in it) give
 * communicators that hold rank 1 as a recognized failure: collectives on
 * them are enabled and work over the survivors, checked; MPI_Comm_split
 * gives communicators of the alive processes only (rank 1 supplied
 * MPI_UNDEFINED), with every collective working; a duplicate of the
 * duplicate and MPI_Comm_create_group of the survivors' group work too.
 * Then the last rank dies: the duplicate's collectives are off (a newer
 * failure) until it is validated ({1, last}), then work again.
 * FS_TEST_NPS: 4 5
 * FS_TEST_FAULT: 1
 */
#include "survtest.h"

/* comm holds exactly the world ranks want[0..k-1], in order. */
static void expect_world_ranks(mt_loc at, MPI_Comm comm, const int *want, int k)
{
    int size, i, out[SV_MAX];

    size = ft_world_ranks_of(comm, out);
    mt_expect(at, size == k, "communicator of %d, want %d", size, k);
    for (i = 0; i < size; i++)
        mt_expect(at, out[i] == want[i], "member %d is world rank %d, want %d", i, out[i],
                  want[i]);
}

/* comm (world order, rank 1 in it) holds rank 1 as a recognized failure. */
static void expect_carried(mt_loc at, MPI_Comm comm, const int *world_dead)
{
    int active = 0, n, dead[SV_MAX];

    MT_CHECK(MPIX_Comm_collectives_enabled(comm, &active));
    mt_expect(at, active, "collectives off on a communicator made after validate");
    MT_CHECK(MPI_Comm_size(comm, &n));
    memcpy(dead, world_dead, sizeof(int) * (size_t)n);
    mt_expect(at, ft_failed_count(comm) >= 1, "the failed rank 1 is not failed in it");
    sv_check_all(at, comm, dead);
}

int main(int argc, char **argv)
{
    MPI_Comm dup, dup2, created, split, grouped;
    MPI_Group world, some, live;
    int n, me, i, k, dead[SV_MAX] = { 0 }, ranks[SV_MAX], one[] = { 1, -1 }, two[3] = { 1, 0, -1 };
    int none[SV_MAX] = { 0 };

    mt_init(&argc, &argv, "tf_validate_comms");
    ft_check_class();
    n  = mt_size();
    me = mt_rank();
    two[1] = n - 1;
    ft_barrier_then_die(1);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, 1);
    sv_validate(MT_HERE, MPI_COMM_WORLD, 0, one, dead);

    ft_watchdog_arm(MT_HERE, "communicator creation after validate");
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (k = 0, i = 0; i < n - 1; i++)
        ranks[k++] = i;                           /* 0 .. n-2: rank 1 in it */
    MT_CHECK(MPI_Group_incl(world, k, ranks, &some));
    MT_CHECK(MPI_Comm_create(MPI_COMM_WORLD, some, &created));
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &split));
    ft_watchdog_disarm();

    expect_carried(MT_HERE, dup, dead);
    if (me < n - 1) {
        expect_world_ranks(MT_HERE, created, ranks, k);
        expect_carried(MT_HERE, created, dead);
    } else {
        mt_expect(MT_HERE, created == MPI_COMM_NULL, "outside the group, not MPI_COMM_NULL");
    }
    for (k = 0, i = n - 1; i >= 0; i--)           /* key n - rank: reversed */
        if (i % 2 == me % 2 && i != 1)
            ranks[k++] = i;
    expect_world_ranks(MT_HERE, split, ranks, k);
    mt_expect(MT_HERE, ft_failed_count(split) == 0, "split holds a failed process");
    sv_check_all(MT_HERE, split, none);

    ft_watchdog_arm(MT_HERE, "communicator creation from a derived one");
    MT_CHECK(MPI_Comm_dup(dup, &dup2));
    MT_CHECK(MPI_Group_excl(world, 1, one, &live));
    MT_CHECK(MPI_Comm_create_group(MPI_COMM_WORLD, live, 5, &grouped));
    ft_watchdog_disarm();
    expect_carried(MT_HERE, dup2, dead);
    for (k = 0, i = 0; i < n; i++)
        if (i != 1)
            ranks[k++] = i;
    expect_world_ranks(MT_HERE, grouped, ranks, k);
    sv_check_all(MT_HERE, grouped, none);

    /* a newer failure: off until the next validation */
    {
        int x = 1, y;
        sv_barrier_then_die(dup, n - 1, dead);
        ft_wait_failed(MT_HERE, dup, n - 1);
        ft_expect_failed(MT_HERE, MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, dup),
                         "allreduce on a duplicate after a newer failure");
        sv_validate(MT_HERE, dup, 1, two, dead);
        sv_check_all(MT_HERE, dup, dead);
    }
    MT_CHECK(MPI_Group_free(&live));
    MT_CHECK(MPI_Group_free(&some));
    MT_CHECK(MPI_Group_free(&world));
    MT_CHECK(MPI_Comm_free(&grouped));
    MT_CHECK(MPI_Comm_free(&dup2));
    MT_CHECK(MPI_Comm_free(&split));
    if (created != MPI_COMM_NULL)
        MT_CHECK(MPI_Comm_free(&created));
    MT_CHECK(MPI_Comm_free(&dup));
    return ft_finish();
}
