/* tf_fail_anysrc: MPI_ANY_SOURCE per communicator (MPI-FT 17.6).
 *   - a new failure disables wildcard receives and probes on every
 *     communicator that contains the failed process, and only those: a
 *     pending wildcard receive ends with MPIX_ERR_RANK_FAIL_STOP, a new one
 *     ends with it at once, even with a matching message from a live process
 *     buffered (that message stays for specific receives and for wildcard
 *     receives after re-enabling);
 *   - MPIX_Comm_reenable_any_source re-enables them on that communicator
 *     only and returns the failed group; a later failure disables them again;
 *   - persistent wildcard receives follow the same rules;
 *   - every survivor, not only the one that talked to the dead process,
 *     sees its wildcards disabled.
 * Rank 0 receives; the last rank dies first, with 4 or more ranks the one
 * before it dies while rank 0 has a wildcard receive posted.
 * FS_TEST_NPS: 3 4
 * FS_TEST_FAULT: 1
 */
#include "faulttest.h"

enum { TAG_PENDING = 1, TAG_BUFFERED = 2, TAG_AFTER = 3, TAG_SUB = 4,
       TAG_SECOND = 5, TAG_GO = 6, TAG_DONE = 7 };

static int nfailed_in(MPI_Group g)
{
    int n = -1;

    MT_CHECK(MPI_Group_size(g, &n));
    MT_CHECK(MPI_Group_free(&g));
    return n;
}

/* A new wildcard receive or probe on comm ends at once with the class. */
static void expect_disabled(mt_loc at, MPI_Comm comm, int tag)
{
    double t0 = mt_now();
    int x, flag = 1;
    MPI_Status st;

    ft_expect_failed(at, MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, tag, comm,
                                  &st), "wildcard receive while disabled");
    ft_expect_failed(at, MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag,
                                    &st), "wildcard probe while disabled");
    mt_expect(at, mt_now() - t0 < FT_DEADLINE, "disabled wildcard waited");
}

/* Rank 0's side of the first failure. */
static void first_failure(int v, MPI_Comm sub, MPI_Comm dupw)
{
    int x = -1, y = -1, z = -1;
    MPI_Request pend, pend_sub, pers;
    MPI_Status st;
    MPI_Group failed;

    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_PENDING,
                       MPI_COMM_WORLD, &pend));
    MT_CHECK(MPI_Irecv(&y, 1, MPI_INT, MPI_ANY_SOURCE, TAG_SUB, sub,
                       &pend_sub));
    MT_CHECK(MPI_Recv_init(&z, 1, MPI_INT, MPI_ANY_SOURCE, TAG_AFTER,
                           MPI_COMM_WORLD, &pers));
    ft_barrier_then_die(v);
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &pend, &st, "pending wildcard"),
                     "pending wildcard receive at the failure");
    mt_expect(MT_HERE, ft_is_known_failed(MPI_COMM_WORLD, v),
              "wildcard failed before the failure was known");
    /* rank 1 sent TAG_BUFFERED before the barrier: it is buffered here */
    expect_disabled(MT_HERE, MPI_COMM_WORLD, TAG_BUFFERED);
    expect_disabled(MT_HERE, dupw, TAG_BUFFERED);
    MT_CHECK(MPI_Start(&pers));
    ft_expect_failed(MT_HERE, MPI_Wait(&pers, &st), "persistent wildcard");
    /* MPI_Wait freed the failed persistent request (Open MPI 4.1) */
    if (pers != MPI_REQUEST_NULL)
        MT_CHECK(MPI_Request_free(&pers));
    /* the communicator without the failed process is untouched */
    MT_CHECK(MPI_Send(&x, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
    MT_CHECK(ft_wait(MT_HERE, &pend_sub, &st, "sub-communicator wildcard"));
    mt_expect(MT_HERE, y == 1001, "sub-communicator wildcard got %d", y);
    /* the buffered message stays for a specific receive */
    MT_CHECK(MPI_Recv(&x, 1, MPI_INT, 1, TAG_BUFFERED, MPI_COMM_WORLD, &st));
    mt_expect(MT_HERE, x == 1002, "buffered message %d", x);

    MT_CHECK(MPIX_Comm_reenable_any_source(MPI_COMM_WORLD, &failed));
    mt_expect(MT_HERE, nfailed_in(failed) == 1, "reenable: failed group size");
    MT_CHECK(MPI_Recv_init(&z, 1, MPI_INT, MPI_ANY_SOURCE, TAG_AFTER,
                           MPI_COMM_WORLD, &pers));
    MT_CHECK(MPI_Start(&pers));
    MT_CHECK(MPI_Send(&x, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
    MT_CHECK(MPI_Wait(&pers, &st));
    mt_expect(MT_HERE, z == 1003 && st.MPI_SOURCE == 1,
              "after reenable: got %d from %d", z, st.MPI_SOURCE);
    MT_CHECK(MPI_Request_free(&pers));
    /* re-enabling MPI_COMM_WORLD did not re-enable its duplicate */
    expect_disabled(MT_HERE, dupw, TAG_AFTER);
    MT_CHECK(MPIX_Comm_reenable_any_source(dupw, NULL));
    MT_CHECK(MPI_Send(&x, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
    MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_AFTER, dupw, &st));
    mt_expect(MT_HERE, x == 1004, "dup after reenable: got %d", x);
}

/* With four or more ranks: rank v2 dies while rank 0 waits on a wildcard. */
static void second_failure(int v2)
{
    int x = -1;
    MPI_Request pend;
    MPI_Status st;
    MPI_Group failed;

    MT_CHECK(MPI_Irecv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_SECOND,
                       MPI_COMM_WORLD, &pend));
    MT_CHECK(MPI_Send(&x, 0, MPI_INT, v2, TAG_GO, MPI_COMM_WORLD));
    ft_expect_failed(MT_HERE, ft_wait(MT_HERE, &pend, &st, "pending wildcard"),
                     "wildcard pending at the second failure");
    expect_disabled(MT_HERE, MPI_COMM_WORLD, TAG_SECOND);
    MT_CHECK(MPIX_Comm_reenable_any_source(MPI_COMM_WORLD, &failed));
    mt_expect(MT_HERE, nfailed_in(failed) == 2, "second reenable: group size");
    MT_CHECK(MPI_Send(&x, 0, MPI_INT, 1, TAG_GO, MPI_COMM_WORLD));
    MT_CHECK(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, TAG_SECOND,
                      MPI_COMM_WORLD, &st));
    mt_expect(MT_HERE, x == 1005 && st.MPI_SOURCE == 1, "got %d from %d", x,
              st.MPI_SOURCE);
}

/* Rank 1: feeds rank 0 when told; checks its own wildcards are disabled. */
static void helper(int v, int v2, MPI_Comm sub, MPI_Comm dupw)
{
    /* what each GO from rank 0 asks for, in first_failure/second_failure */
    const struct {
        int val, tag;
        MPI_Comm comm;
    } step[4] = {
        {1001, TAG_SUB, sub},
        {1003, TAG_AFTER, MPI_COMM_WORLD},
        {1004, TAG_AFTER, dupw},
        {1005, TAG_SECOND, MPI_COMM_WORLD},
    };
    int x = 1002, go, steps = (v2 > 0) ? 4 : 3, i;
    MPI_Status st;

    MT_CHECK(MPI_Send(&x, 1, MPI_INT, 0, TAG_BUFFERED, MPI_COMM_WORLD));
    ft_barrier_then_die(v);
    ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
    expect_disabled(MT_HERE, MPI_COMM_WORLD, TAG_PENDING);
    for (i = 0; i < steps; i++) {
        MT_CHECK(MPI_Recv(&go, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD, &st));
        x = step[i].val;
        MT_CHECK(MPI_Send(&x, 1, MPI_INT, 0, step[i].tag, step[i].comm));
    }
}

int main(int argc, char **argv)
{
    int me, n, v, v2 = -1, go, live[8], nlive = 0, i;
    MPI_Comm sub, dupw;
    MPI_Status st;

    mt_init(&argc, &argv, "tf_fail_anysrc");
    me = mt_rank();
    n = mt_size();
    v = n - 1;
    if (n >= 4)
        v2 = n - 2;
    MT_CHECK(MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me,
                            &sub));
    MT_CHECK(MPI_Comm_dup(MPI_COMM_WORLD, &dupw));
    if (me == 0) {
        first_failure(v, sub, dupw);
        if (v2 > 0)
            second_failure(v2);
        MT_CHECK(MPI_Send(&go, 0, MPI_INT, 1, TAG_DONE, MPI_COMM_WORLD));
    } else if (me == 1) {
        helper(v, v2, sub, dupw);
        MT_CHECK(MPI_Recv(&go, 0, MPI_INT, 0, TAG_DONE, MPI_COMM_WORLD, &st));
    } else {
        ft_barrier_then_die(v);
        if (me == v2) {
            MT_CHECK(MPI_Recv(&go, 0, MPI_INT, 0, TAG_GO, MPI_COMM_WORLD,
                              &st));
            ft_die();
        }
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v);
        expect_disabled(MT_HERE, MPI_COMM_WORLD, TAG_PENDING);
    }
    for (i = 0; i < n && nlive < 8; i++)
        if (i != v && i != v2)
            live[nlive++] = i;
    if (v2 > 0 && me != 0 && me != 1)
        ft_wait_failed(MT_HERE, MPI_COMM_WORLD, v2);
    ft_survivors_exchange(live, nlive, 12);
    if (sub != MPI_COMM_NULL)
        MT_CHECK(MPI_Comm_free(&sub));
    MT_CHECK(MPI_Comm_free(&dupw));
    return ft_finish();
}
