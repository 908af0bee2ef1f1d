/* tf_fail_coll: a process failure makes every communicator containing it
 * collectively inactive (MPI-FT 17.7): every survivor's MPI_Barrier,
 * MPI_Allreduce and MPI_Bcast on MPI_COMM_WORLD end with
 * MPIX_ERR_RANK_FAIL_STOP instead of hanging -- at every survivor, and
 * including the first one, entered before the survivor has heard of the
 * failure -- and MPIX_Comm_collectives_enabled turns from 1 to 0 (also on a
 * duplicate of MPI_COMM_WORLD made before the failure).  A communicator made
 * before the failure without the failed rank keeps running collectives with
 * correct results and stays enabled.  (Communicator creation on an inactive
 * communicator: tf_fail_comm_create.)
 *
 * Rank 1 dies idle, once every survivor has left the last collective before
 * the failure, so that no collective can succeed anywhere; the survivors are
 * not contiguous in MPI_COMM_WORLD.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

#define NV 16   /* Allreduce/Bcast elements */

/* Survivors tell v (a standard send, complete locally) that they are past
 * the last collective before the failure; v dies once all did.  Without
 * this, a survivor still in that barrier when it learns of the failure may
 * rightly get the error (leave-early, 17.7). */
static void die_after_survivors(int v)
{
    int i, x = 0;

    if (mt_rank() != v) {
        MT_CHECK(MPI_Send(&x, 1, MPI_INT, v, 99, MPI_COMM_WORLD));
        return;
    }
    for (i = 0; i < mt_size() - 1; i++)
        MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE));
    ft_die();
}

static int coll_enabled(MPI_Comm comm)
{
    int a = -1;
    MT_CHECK(MPIX_Comm_collectives_enabled(comm, &a));
    return a;
}

/* Every collective on the inactive MPI_COMM_WORLD fails with the class. */
static void check_world_fails(int v)
{
    int in[NV], out[NV], i, me = mt_rank();

    /* the first one: this process may not know yet that v failed; it must
     * learn and fail, neither wait for v nor for a survivor that gave up */
    ft_watchdog_arm(MT_HERE, "first Barrier after the failure");
    ft_expect_failed(MT_HERE, MPI_Barrier(MPI_COMM_WORLD), "first Barrier");
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "Barrier failed but rank %d is not in the failed group", v);
    mt_expect(MT_HERE, ft_failed_count(MPI_COMM_WORLD) == 1,
              "failed group has %d members", ft_failed_count(MPI_COMM_WORLD));
    mt_expect(MT_HERE, coll_enabled(MPI_COMM_WORLD) == 0,
              "MPI_COMM_WORLD still collectively active after a failure");

    for (i = 0; i < NV; i++)
        in[i] = me * 100 + i;
    ft_expect_failed(MT_HERE, MPI_Allreduce(in, out, NV, MPI_INT, MPI_SUM,
                                            MPI_COMM_WORLD), "Allreduce");
    ft_expect_failed(MT_HERE, MPI_Bcast(in, NV, MPI_INT, 0, MPI_COMM_WORLD),
                     "Bcast from a survivor");
    ft_expect_failed(MT_HERE, MPI_Bcast(in, NV, MPI_INT, v, MPI_COMM_WORLD),
                     "Bcast from the failed rank");
    ft_expect_failed(MT_HERE, MPI_Barrier(MPI_COMM_WORLD), "second Barrier");
    ft_watchdog_disarm();
    mt_expect(MT_HERE, coll_enabled(MPI_COMM_WORLD) == 0,
              "MPI_COMM_WORLD collectively active again");
}

/* live: the survivors' communicator, made before the failure. */
static void check_live(MPI_Comm live, int v)
{
    int in[NV], out[NV], buf[NV], i, it, lr, ls, me = mt_rank(), want, root;

    MT_CHECK(MPI_Comm_rank(live, &lr));
    MT_CHECK(MPI_Comm_size(live, &ls));
    mt_expect(MT_HERE, ls == mt_size() - 1 && lr == (me < v ? me : me - 1),
              "live comm rank %d/%d", lr, ls);
    mt_expect(MT_HERE, coll_enabled(live) == 1,
              "communicator without the failed rank became inactive");
    mt_expect(MT_HERE, ft_failed_count(live) == 0,
              "communicator without the failed rank has %d failed members",
              ft_failed_count(live));
    for (it = 0; it < 3; it++) {
        MT_CHECK(MPI_Barrier(live));
        for (i = 0; i < NV; i++)
            in[i] = mt_ival(lr, it, (size_t)i) & 0xffff;
        MT_CHECK(MPI_Allreduce(in, out, NV, MPI_INT, MPI_SUM, live));
        for (i = 0; i < NV; i++) {
            want = 0;
            for (int r = 0; r < ls; r++)
                want += mt_ival(r, it, (size_t)i) & 0xffff;
            mt_expect(MT_HERE, out[i] == want, "live Allreduce it %d [%d]: "
                      "%d, want %d", it, i, out[i], want);
        }
        for (root = 0; root < ls; root++) {
            if (lr == root)
                mt_fill(buf, sizeof buf, root, it);
            else
                memset(buf, 0, sizeof buf);
            MT_CHECK(MPI_Bcast(buf, NV, MPI_INT, root, live));
            mt_verify(MT_HERE, buf, sizeof buf, root, it, "live Bcast");
        }
    }
    mt_expect(MT_HERE, coll_enabled(live) == 1,
              "communicator without the failed rank became inactive");
}

int main(int argc, char **argv)
{
    int v = 1, me;
    MPI_Comm live, dup;

    mt_init(&argc, &argv, "tf_fail_coll");
    me = mt_rank();
    ft_check_class();

    /* before the failure: everything enabled */
    mt_expect(MT_HERE, coll_enabled(MPI_COMM_WORLD) == 1,
              "MPI_COMM_WORLD inactive before any failure");
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == v ? MPI_UNDEFINED : 0, me,
                            &live));
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    mt_expect(MT_HERE, coll_enabled(dup) == 1, "fresh dup inactive");
    mt_expect(MT_HERE, (me == v) == (live == MPI_COMM_NULL),
              "split gave rank %d %s", me, live == MPI_COMM_NULL ? "nothing" :
              "a communicator");
    MT_CHECK(MPI_Barrier(MPI_COMM_WORLD));
    die_after_survivors(v);

    check_world_fails(v);
    mt_expect(MT_HERE, coll_enabled(dup) == 0,
              "duplicate of MPI_COMM_WORLD still collectively active");
    ft_watchdog_arm(MT_HERE, "collectives after the failure");
    ft_expect_failed(MT_HERE, MPI_Barrier(dup), "Barrier on the duplicate");
    check_live(live, v);
    ft_watchdog_disarm();
    MT_CHECK(MPI_Comm_free(&live));
    MT_CHECK(MPI_Comm_free(&dup));
    return ft_finish();
}
