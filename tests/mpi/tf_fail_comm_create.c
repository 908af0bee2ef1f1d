/* tf_fail_comm_create: communicator creation needs collectively active
 * parents (MPI-FT 17.8.2): after a failure, MPI_Comm_split and MPI_Comm_dup
 * of MPI_COMM_WORLD (collectively inactive) return MPIX_ERR_RANK_FAIL_STOP
 * at every survivor instead of hanging, while a communicator made before
 * the failure without the failed rank can still be duplicated and split,
 * and the new communicators work (checked collectives and messages).
 *
 * The last rank dies idle; survivors first wait until they know.  A
 * blocking MPI call cannot be given a deadline from outside, so a watchdog
 * alarm turns a hang of a creation call into a failure naming it.
 * FS_TEST_NPS: 3
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

/* ---- watchdog: a blocking call that hangs fails the test ---------------- */

/* ---- checks -------------------------------------------------------------- */

/* A working communicator: an Allreduce and a ring exchange, checked. */
static void check_works(MPI_Comm c, int expect_size, const char *what)
{
    int r, n, sum = 0, want, in = -1, it = 7;
    MPI_Status st;

    MT_CHECK(MPI_Comm_rank(c, &r));
    MT_CHECK(MPI_Comm_size(c, &n));
    mt_expect(MT_HERE, n == expect_size, "%s: size %d, want %d", what, n,
              expect_size);
    MT_CHECK(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c));
    want = n * (n - 1) / 2;
    mt_expect(MT_HERE, sum == want, "%s: Allreduce %d, want %d", what, sum,
              want);
    MT_CHECK(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % n, it, &in, 1, MPI_INT,
                          (r + n - 1) % n, it, c, &st));
    mt_expect(MT_HERE, in == (r + n - 1) % n, "%s: ring got %d from %d", what,
              in, (r + n - 1) % n);
}

int main(int argc, char **argv)
{
    int v, me, lr, active = -1;
    MPI_Comm live, c1 = MPI_COMM_NULL, c2 = MPI_COMM_NULL, c;

    mt_init(&argc, &argv, "tf_fail_comm_create");
    me = mt_rank();
    v = mt_size() - 1;
    ft_check_class();
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me == v ? MPI_UNDEFINED : 0, me,
                            &live));
    ft_barrier_then_die(v);

    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    MT_CHECK(MPIX_Comm_collectives_enabled(MPI_COMM_WORLD, &active));
    mt_expect(MT_HERE, active == 0, "MPI_COMM_WORLD still active");

    /* creation from the active communicator works after the failure */
    MT_CHECK(MPI_Comm_rank(live, &lr));
    ft_watchdog_arm(MT_HERE, "MPI_Comm_dup of an active communicator");
    MT_CHECK(MPI_Comm_dup(live, &c1));
    ft_watchdog_disarm();
    check_works(c1, v, "dup of the survivors' communicator");
    ft_watchdog_arm(MT_HERE, "MPI_Comm_split of an active communicator");
    MT_CHECK(MPI_Comm_split(live, lr % 2, -lr, &c2));
    ft_watchdog_disarm();
    check_works(c2, (v + 1 - lr % 2) / 2, "split of the survivors' "
                "communicator");
    MT_CHECK(MPIX_Comm_collectives_enabled(c1, &active));
    mt_expect(MT_HERE, active == 1, "new communicator inactive");

    /* creation from the inactive MPI_COMM_WORLD fails everywhere (the
     * output handle is undefined after an error: Open MPI 4.1 leaves a C
     * NULL pointer, not MPI_COMM_NULL, after a failed split) */
    ft_watchdog_arm(MT_HERE, "MPI_Comm_split of the inactive MPI_COMM_WORLD");
    ft_expect_failed(MT_HERE, MPI_Comm_split(MPI_COMM_WORLD, 0, me, &c),
                     "Comm_split of the inactive MPI_COMM_WORLD");
    ft_watchdog_disarm();
    ft_watchdog_arm(MT_HERE, "MPI_Comm_dup of the inactive MPI_COMM_WORLD");
#if OMPI_MAJOR_VERSION >= 5
    ft_expect_failed(MT_HERE, MPI_Comm_dup(MPI_COMM_WORLD, &c),
                     "Comm_dup of the inactive MPI_COMM_WORLD");
#else
    /* 4.1 turns the failed context-id agreement into MPI_ERR_INTERN
     * (lifetest.h, life_cid_intern); Open MPI 5 passes the class on */
    mt_expect_class(MT_HERE, MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_ERR_INTERN,
                    "Comm_dup of the inactive MPI_COMM_WORLD");
#endif
    ft_watchdog_disarm();

    /* the survivors' communicators are unaffected */
    check_works(live, v, "survivors' communicator after failed creations");
    MT_CHECK(MPI_Comm_free(&c1));
    MT_CHECK(MPI_Comm_free(&c2));
    MT_CHECK(MPI_Comm_free(&live));
    return ft_finish();
}
