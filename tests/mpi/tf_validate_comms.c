/* tf_validate_comms.c: communicator creation from a validated communicator
 * (MPI-FT 17.8.2).  Rank 1 dies; the survivors validate MPI_COMM_WORLD.
 * Then MPI_Comm_dup and MPI_Comm_create (a group with rank 1 in it) give
 * communicators that hold rank 1 as a recognized failure: collectives on
 * them are enabled and work over the survivors, checked; MPI_Comm_split
 * gives communicators of the alive processes only (rank 1 supplied
 * MPI_UNDEFINED), with every collective working; a duplicate of the
 * duplicate and MPI_Comm_create_group of the survivors' group work too.
 * An intercommunicator (17.8.3) between the even ranks and the odd ones
 * (rank 1 in them, recognized: their MPI_Comm_create keeps it) works across
 * the groups over the survivors: allreduce, bcast, gather (rank 1's
 * segment untouched).
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

/* Evens (A) and odds (B, the dead rank 1 in it) joined by
 * MPI_Intercomm_create on communicators holding rank 1 as recognized. */
static void check_intercomm(mt_loc at, int n, int me)
{
    MPI_Comm half, ic;
    MPI_Group world, mine;
    int ranks[SV_MAX], k = 0, i, in_a = (me % 2) == 0, want = 0, sum = -1, x;
    long s, r[SV_MAX];

    MT_CHECK(MPI_Comm_group(MPI_COMM_WORLD, &world));
    for (i = me % 2; i < n; i += 2)
        ranks[k++] = i;
    MT_CHECK(MPI_Group_incl(world, k, ranks, &mine));
    ft_watchdog_arm(at, "intercommunicator creation after validate");
    MT_CHECK(MPI_Comm_create(MPI_COMM_WORLD, mine, &half));    /* disjoint groups */
    /* B's leader is world 3, its local rank 1: world 1 is dead */
    MT_CHECK(MPI_Intercomm_create(half, in_a ? 0 : 1, MPI_COMM_WORLD, in_a ? 3 : 0, 21, &ic));
    for (i = in_a; i < n; i += 2)       /* the other group's alive ranks */
        want += (i != 1) ? i : 0;
    MT_CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ic));
    mt_expect(at, sum == want, "allreduce across: %d, want %d", sum, want);
    x = (me == 3) ? 33 : -1;            /* B's leader to A */
    MT_CHECK(MPI_Bcast(&x, 1, MPI_INT, in_a ? 1 : (me == 3 ? MPI_ROOT : MPI_PROC_NULL), ic));
    mt_expect(at, !in_a || x == 33, "bcast from B: %d", x);
    for (i = 0; i < SV_MAX; i++)
        r[i] = -7;
    s = 100L * me;                      /* A's rank 0 gathers from B */
    MT_CHECK(MPI_Gather(&s, 1, MPI_LONG, r, 1, MPI_LONG,
                        in_a ? (me == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, ic));
    ft_watchdog_disarm();
    for (i = 0; me == 0 && 2 * i + 1 < n; i++)
        mt_expect(at, r[i] == (i == 0 ? -7 : 100L * (2 * i + 1)), "gather segment %d: %ld",
                  i, r[i]);
    MT_CHECK(MPI_Comm_free(&ic));
    MT_CHECK(MPI_Comm_free(&half));
    MT_CHECK(MPI_Group_free(&mine));
    MT_CHECK(MPI_Group_free(&world));
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
    check_intercomm(MT_HERE, n, me);

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
