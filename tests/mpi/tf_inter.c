/* tf_inter.c: the recovery calls on an intercommunicator.  Group A is the
 * even world ranks, B the odd ones.
 *  1. MPIX_Comm_agree and _iagree: each group gets the AND of the other
 *     group's flags (A's AND is 5, B's 3: A gets 3, B gets 5).
 *  2. Revoke reaches both groups and ends a blocking rendezvous send whose
 *     receiver keeps it unmatched: A's rank 1 sends 1 MB to B's rank 1,
 *     which sees it with MPI_Iprobe, never receives it, and revokes; the
 *     send ends with MPIX_ERR_REVOKED (not when the receiver frees the
 *     communicator), and a barrier on the intercommunicator (which Open MPI
 *     runs partly on its local communicator) ends so at every process.
 *  3. The last world rank dies (in A at 5 ranks, in B at 6).
 *     MPIX_Comm_shrink gives an
 *     intercommunicator of both groups' survivors, in order, whose
 *     point-to-point and allreduce work.
 *  4. On a duplicate made before the death, a barrier fails at every
 *     survivor, none waiting (collectives are off, also the parts Open MPI
 *     runs on the local communicator, whose members may all be alive).
 *     Then every survivor loops on the barrier until world rank 0, after
 *     its first failure there, revokes it: every loop ends with
 *     MPIX_ERR_REVOKED (a loop that never waits must still let it in).
 *  5. MPIX_Comm_validate on a duplicate made before the death: the failed
 *     group is {victim} at every survivor, and collectives across the
 *     groups run over the survivors with checked results: allreduce,
 *     iallreduce, bcast both ways, allgather and alltoall (the victim's
 *     segments untouched), gather to each side's root, barrier.
 * FS_TEST_NPS: 5 6
 * FS_TEST_FAULT: 1
 * FS_TEST_REPEAT_MAX: 10
 */
#include "faulttest.h"

#define BIG (1 << 20)
#define UNTOUCHED (-7L)

static int in_a, lrank, lsize, rsize;
static int v_here, v_there;     /* the victim is in my group, in the other */

static void check_agree(MPI_Comm ic, int nonblocking)
{
    MPI_Request rq;
    int flag = 7;

    if (lrank == 0)
        flag = in_a ? 5 : 3;
    ft_watchdog_arm(MT_HERE, "agreement on an intercommunicator");
    if (nonblocking) {
        MT_CHECK(MPIX_Comm_iagree(ic, &flag, &rq));
        MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_CHECK(MPIX_Comm_agree(ic, &flag));
    }
    ft_watchdog_disarm();
    mt_expect(MT_HERE, flag == (in_a ? 3 : 5), "%s agree: %d, want the other group's AND %d",
              nonblocking ? "nonblocking" : "blocking", flag, in_a ? 3 : 5);
}

static void check_revoke(MPI_Comm ic)
{
    static char buf[BIG];
    MPI_Status st;
    int flag = 0, rc;

    ft_watchdog_arm(MT_HERE, "revoke of an intercommunicator");
    if (in_a && (lrank == 1)) {
        rc = MPI_Send(buf, BIG, MPI_CHAR, 1, 7, ic);
        mt_expect_class(MT_HERE, rc, MPIX_ERR_REVOKED, "blocking 1 MB send kept unmatched");
    } else if (!in_a && (lrank == 1)) {
        while (!flag)
            MT_CHECK(MPI_Iprobe(1, 7, ic, &flag, &st));
        MT_CHECK(MPIX_Comm_revoke(ic));
    }
    /* Open MPI runs an intercommunicator's barrier partly on its local
     * communicator: the revoke must end that part too */
    rc = MPI_Barrier(ic);
    mt_expect_class(MT_HERE, rc, MPIX_ERR_REVOKED, "barrier on a revoked intercommunicator");
    /* the receiver frees the communicator (which would release the send)
     * only once the send has ended: world 2 is A's rank 1, world 3 B's */
    if (in_a && (lrank == 1))
        MT_CHECK(MPI_Send(&flag, 1, MPI_INT, 3, 12, MPI_COMM_WORLD));
    else if (!in_a && (lrank == 1))
        MT_CHECK(MPI_Recv(&flag, 1, MPI_INT, 2, 12, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    ft_watchdog_disarm();
    MT_CHECK(MPIX_Comm_is_revoked(ic, &flag));
    mt_expect(MT_HERE, flag, "not revoked");
}

/* Both groups' world ranks, as seen here: mine[lsize], theirs[rsize]. */
static void world_ranks(MPI_Comm ic, int *mine, int *theirs)
{
    MPI_Group g;

    MT_CHECK(MPI_Comm_group(ic, &g));
    ft_group_ranks_in(g, MPI_COMM_WORLD, mine);
    MT_CHECK(MPI_Group_free(&g));
    MT_CHECK(MPI_Comm_remote_group(ic, &g));
    ft_group_ranks_in(g, MPI_COMM_WORLD, theirs);
    MT_CHECK(MPI_Group_free(&g));
}

/* The sum of the other group's alive world ranks, by allreduce (blocking
 * or not), and a message each way between the local rank 0s. */
static void check_talk(mt_loc at, MPI_Comm ic, int want, int nonblocking)
{
    MPI_Request rq;
    int me = mt_rank(), sum = -1, peer = -1, n;

    ft_watchdog_arm(at, "allreduce and point-to-point across the groups");
    if (nonblocking) {
        MT_CHECK(MPI_Iallreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ic, &rq));
        MT_CHECK(MPI_Wait(&rq, MPI_STATUS_IGNORE));
    } else {
        MT_CHECK(MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, ic));
    }
    MT_CHECK(MPI_Comm_rank(ic, &n));
    if (n == 0)
        MT_CHECK(MPI_Sendrecv(&me, 1, MPI_INT, 0, 5, &peer, 1, MPI_INT, 0, 5, ic,
                              MPI_STATUS_IGNORE));
    ft_watchdog_disarm();
    mt_expect(at, sum == want, "allreduce across: %d, want %d", sum, want);
    mt_expect(at, (n != 0) || (peer == (in_a ? 1 : 0)), "remote rank 0 is world %d", peer);
}

/* The sum of the other group's alive world ranks. */
static int other_sum(int v)
{
    int r, sum = 0;

    for (r = in_a; r < mt_size(); r += 2)
        sum += (r != v) ? r : 0;
    return sum;
}

static void check_shrink(MPI_Comm ic, int v)
{
    MPI_Comm sc;
    int mine[64], theirs[64], ns, nr, i;

    ft_watchdog_arm(MT_HERE, "shrink of an intercommunicator");
    MT_CHECK(MPIX_Comm_shrink(ic, &sc));
    ft_watchdog_disarm();
    MT_CHECK(MPI_Comm_size(sc, &ns));
    MT_CHECK(MPI_Comm_remote_size(sc, &nr));
    mt_expect(MT_HERE, ns == lsize - v_here, "local size %d", ns);
    mt_expect(MT_HERE, nr == rsize - v_there, "remote size %d", nr);
    world_ranks(sc, mine, theirs);
    for (i = 0; i < ns; i++)
        mt_expect(MT_HERE, mine[i] == 2 * i + !in_a, "local %d is world %d", i, mine[i]);
    for (i = 0; i < nr; i++)
        mt_expect(MT_HERE, theirs[i] == 2 * i + in_a && theirs[i] != v, "remote %d is world %d",
                  i, theirs[i]);
    check_talk(MT_HERE, sc, other_sum(v), 0);
    MT_CHECK(MPI_Comm_free(&sc));
}

/* The segment of remote alive process j holds 100 * its world rank + add;
 * the victim's (remote rank vr, or -1) stays UNTOUCHED. */
static void expect_segments(mt_loc at, const long *got, const int *theirs, int vr, int add,
                            const char *what)
{
    int j;

    for (j = 0; j < rsize; j++) {
        long want = (j == vr) ? UNTOUCHED : 100L * theirs[j] + add;
        mt_expect(at, got[j] == want, "%s: segment %d holds %ld, want %ld", what, j, got[j], want);
    }
}

static void check_validated(MPI_Comm icv, int v)
{
    MPI_Group failed;
    long s[64], r[64];
    int mine[64], theirs[64], f[64], nf, j, vr = -1, x;
    int me = mt_rank(), lme;

    ft_watchdog_arm(MT_HERE, "validate of an intercommunicator");
    MT_CHECK(MPIX_Comm_validate(icv, &failed));
    ft_watchdog_disarm();
    nf = ft_group_ranks_in(failed, MPI_COMM_WORLD, f);
    mt_expect(MT_HERE, nf == 1 && f[0] == v, "failed group of %d, first %d", nf, f[0]);
    MT_CHECK(MPI_Group_free(&failed));
    world_ranks(icv, mine, theirs);
    for (j = 0; j < rsize; j++)
        vr = (theirs[j] == v) ? j : vr;
    MT_CHECK(MPI_Comm_rank(icv, &lme));
    check_talk(MT_HERE, icv, other_sum(v), 0);
    check_talk(MT_HERE, icv, other_sum(v), 1);

    ft_watchdog_arm(MT_HERE, "collectives across the groups over the survivors");
    x = in_a ? 77 : -1;       /* A's rank 0 to B */
    MT_CHECK(MPI_Bcast(&x, 1, MPI_INT, in_a ? (lme == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, icv));
    mt_expect(MT_HERE, in_a || x == 77, "bcast from A: %d", x);
    x = in_a ? -1 : 88;       /* B's rank 0 to A */
    MT_CHECK(MPI_Bcast(&x, 1, MPI_INT, in_a ? 0 : (lme == 0 ? MPI_ROOT : MPI_PROC_NULL), icv));
    mt_expect(MT_HERE, !in_a || x == 88, "bcast from B: %d", x);

    for (j = 0; j < 64; j++)
        r[j] = UNTOUCHED;
    s[0] = 100L * me;
    MT_CHECK(MPI_Allgather(s, 1, MPI_LONG, r, 1, MPI_LONG, icv));
    expect_segments(MT_HERE, r, theirs, vr, 0, "allgather");

    for (j = 0; j < 64; j++) {
        s[j] = 100L * me + j;     /* remote j gets 100 * me + j */
        r[j] = UNTOUCHED;
    }
    MT_CHECK(MPI_Alltoall(s, 1, MPI_LONG, r, 1, MPI_LONG, icv));
    expect_segments(MT_HERE, r, theirs, vr, lme, "alltoall");

    for (j = 0; j < 64; j++)
        r[j] = UNTOUCHED;
    s[0] = 100L * me;         /* gather to A's rank 0, then to B's */
    MT_CHECK(MPI_Gather(s, 1, MPI_LONG, in_a ? r : NULL, 1, MPI_LONG,
                        in_a ? (lme == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, icv));
    MT_CHECK(MPI_Gather(s, 1, MPI_LONG, in_a ? NULL : r, 1, MPI_LONG,
                        in_a ? 0 : (lme == 0 ? MPI_ROOT : MPI_PROC_NULL), icv));
    if (lme == 0)
        expect_segments(MT_HERE, r, theirs, vr, 0, "gather at the root");
    MT_CHECK(MPI_Barrier(icv));
    ft_watchdog_disarm();
}

static void check_error_loop(MPI_Comm icl, int v)
{
    int rc, failures = 0, live[64], nlive = 0, r;

    ft_watchdog_arm(MT_HERE, "a barrier with a dead member across the groups");
    ft_expect_failed(MT_HERE, MPI_Barrier(icl), "barrier with a dead member");
    ft_watchdog_disarm();
    for (r = 0; r < mt_size(); r++)
        if (r != v)
            live[nlive++] = r;
    ft_survivors_exchange(live, nlive, 13);     /* nobody revokes before */
    ft_watchdog_arm(MT_HERE, "barriers failing until a revoke arrives");
    do {
        rc = MPI_Barrier(icl);
        if (rc != MPIX_ERR_REVOKED) {
            mt_expect(MT_HERE, rc == MPIX_ERR_PROC_FAILED, "barrier: %d", rc);
            if ((mt_rank() == 0) && (failures++ == 0))
                MT_CHECK(MPIX_Comm_revoke(icl));
        }
    } while (rc != MPIX_ERR_REVOKED);
    ft_watchdog_disarm();
}

int main(int argc, char **argv)
{
    MPI_Comm half, ic, icr, icv, icl;
    int n, v;

    mt_init(&argc, &argv, "tf_inter");
    ft_check_class();
    n = mt_size();
    v = n - 1;
    mt_expect(MT_HERE, n >= 5 && n <= 64, "written for 5 to 64 ranks");
    in_a = (mt_rank() % 2) == 0;
    v_here  = (v % 2) == (mt_rank() % 2);
    v_there = !v_here;
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, !in_a, mt_rank(), &half));
    MT_CHECK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, in_a ? 1 : 0, 11, &ic));
    MT_CHECK(MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN));
    MT_CHECK(MPI_Comm_rank(ic, &lrank));
    MT_CHECK(MPI_Comm_size(ic, &lsize));
    MT_CHECK(MPI_Comm_remote_size(ic, &rsize));

    check_agree(ic, 0);
    check_agree(ic, 1);
    MT_CHECK(MPI_Comm_dup(ic, &icr));
    MT_CHECK(MPI_Comm_dup(ic, &icv));
    MT_CHECK(MPI_Comm_dup(ic, &icl));
    check_revoke(icr);
    MT_CHECK(MPI_Comm_free(&icr));

    ft_barrier_then_die(v);
    check_shrink(ic, v);
    check_error_loop(icl, v);
    MT_CHECK(MPI_Comm_free(&icl));
    check_validated(icv, v);
    MT_CHECK(MPI_Comm_free(&icv));
    MT_CHECK(MPI_Comm_free(&ic));
    MT_CHECK(MPI_Comm_free(&half));
    return ft_finish();
}
