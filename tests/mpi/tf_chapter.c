/* tf_chapter.c: the chapter's examples 17.6, 17.7 and 17.8 (MPI-FT draft
 * 17.7.5), as written there (ret compared with the class itself; the
 * draft's MPI_Comm_compare of groups is MPI_Group_compare), on six ranks.
 * 17.6, barrier: rank 5 dies as the loop starts; the loop of barrier and
 * validate ends, at every survivor, once a validate finds no new failure.
 * 17.7, bcast in recovery blocks, over the validated MPI_COMM_WORLD (rank 5
 * recognized): ten blocks of six broadcasts, each block redone after a new
 * failure; every value is checked.  17.8, exscan: on the five alive ranks
 * (MPI_Comm_split of the validated MPI_COMM_WORLD: the failed rank supplies
 * MPI_UNDEFINED), with the outputs the chapter prints: 1 3 6 10; rank 2
 * dies: 1 3 7; rank 0 dies: 2 6 (the first alive process's buffer is
 * undefined).
 * FS_TEST_NPS: 6
 * FS_TEST_FAULT: 1
 */
#include "survtest.h"

/* One validate and the chapter's comparison: 1 if there is no new failure. */
static int validate_same(MPI_Comm comm, MPI_Group *grp, int *idx)
{
    int ret;

    ft_watchdog_arm(MT_HERE, "MPIX_Comm_validate");
    MT_CHECK(MPIX_Comm_validate(comm, &grp[*idx]));
    ft_watchdog_disarm();
    MT_CHECK(MPI_Group_compare(grp[(*idx + 1) % 2], grp[*idx], &ret));
    *idx = (*idx + 1) % 2;
    MT_CHECK(MPI_Group_free(&grp[*idx]));      /* the older one */
    return ret == MPI_IDENT;
}

static void example_17_6(MPI_Comm comm, MPI_Group *grp, int *idx)
{
    int ret, rounds = 0;

    if (mt_rank() == 5)
        ft_die();
    do {
        ft_watchdog_arm(MT_HERE, "MPI_Barrier");
        ret = MPI_Barrier(comm);
        ft_watchdog_disarm();
        if (ret == MPIX_ERR_RANK_FAIL_STOP)
            fprintf(stderr, "Some rank failed during barrier\n");
        else
            MT_CHECK(ret);
        ++rounds;
        mt_expect(MT_HERE, rounds < 10, "barrier loop did not settle");
    } while (!validate_same(comm, grp, idx));
}

static void example_17_7(MPI_Comm comm, MPI_Group *grp, int *idx)
{
    int offset, i, buffer, ret, size, redone = 0;

    MT_CHECK(MPI_Comm_size(comm, &size));
    for (offset = 0; offset < 10; ++offset) {
        for (i = 0; i < size; ++i) {
            buffer = (mt_rank() == 0) ? offset + i : -1;
            ret = MPI_Bcast(&buffer, 1, MPI_INT, 0, comm);
            if (ret == MPIX_ERR_RANK_FAIL_STOP) {
                fprintf(stderr, "Some rank failed during broadcast.\n");
                break;
            }
            MT_CHECK(ret);
            mt_expect(MT_HERE, buffer == offset + i, "bcast %d.%d gave %d", offset, i, buffer);
        }
        if (!validate_same(comm, grp, idx)) {
            --offset;                           /* redo the block */
            ++redone;
            mt_expect(MT_HERE, redone < 10, "bcast blocks redone %d times", redone);
        }
    }
}

/* The exscan loop of 17.8: until a validate finds no new failure. */
static int exscan_loop(MPI_Comm comm, MPI_Group *grp, int *idx)
{
    int rank, send_buffer, recv_buffer = -1, ret, rounds = 0;

    MT_CHECK(MPI_Comm_rank(comm, &rank));
    send_buffer = rank + 1;
    do {
        ft_watchdog_arm(MT_HERE, "MPI_Exscan");
        ret = MPI_Exscan(&send_buffer, &recv_buffer, 1, MPI_INT, MPI_SUM, comm);
        ft_watchdog_disarm();
        if (ret == MPIX_ERR_RANK_FAIL_STOP)
            fprintf(stderr, "Some rank failed during scan\n");
        else
            MT_CHECK(ret);
        ++rounds;
        mt_expect(MT_HERE, rounds < 10, "exscan loop did not settle");
    } while (!validate_same(comm, grp, idx));
    return recv_buffer;
}

static void example_17_8(MPI_Comm comm, MPI_Group *grp, int *idx)
{
    static const int want1[5] = { -1, 1, 3, 6, 10 }, want2[5] = { -1, 1, -1, 3, 7 };
    static const int want3[5] = { -1, -1, -1, 2, 6 };
    int rank, got;

    MT_CHECK(MPI_Comm_rank(comm, &rank));
    MT_CHECK(MPIX_Comm_validate(comm, &grp[0]));
    *idx = 1;
    got = exscan_loop(comm, grp, idx);
    mt_expect(MT_HERE, rank == 0 || got == want1[rank], "rank %d received %d, want %d", rank,
              got, want1[rank]);
    if (rank == 2)
        ft_die();                                 /* Rank 2 fails */
    got = exscan_loop(comm, grp, idx);
    mt_expect(MT_HERE, rank == 0 || got == want2[rank], "rank %d received %d, want %d", rank,
              got, want2[rank]);
    if (rank == 0)
        ft_die();                                 /* Rank 0 fails */
    got = exscan_loop(comm, grp, idx);
    mt_expect(MT_HERE, rank == 1 || got == want3[rank], "rank %d received %d, want %d", rank,
              got, want3[rank]);
    MT_CHECK(MPI_Group_free(&grp[(*idx + 1) % 2]));
}

int main(int argc, char **argv)
{
    MPI_Group grp[2];
    MPI_Comm five;
    int idx = 1;

    mt_init(&argc, &argv, "tf_chapter");
    ft_check_class();
    MT_CHECK(MPIX_Comm_validate(MPI_COMM_WORLD, &grp[0]));    /* a starting set */
    example_17_6(MPI_COMM_WORLD, grp, &idx);
    example_17_7(MPI_COMM_WORLD, grp, &idx);
    MT_CHECK(MPI_Group_free(&grp[(idx + 1) % 2]));
    ft_watchdog_arm(MT_HERE, "MPI_Comm_split of the validated MPI_COMM_WORLD");
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, 0, mt_rank(), &five));
    ft_watchdog_disarm();
    example_17_8(five, grp, &idx);
    MT_CHECK(MPI_Comm_free(&five));
    return ft_finish();
}
